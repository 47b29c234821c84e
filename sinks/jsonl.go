package sinks

import (
	"bufio"
	"encoding/base64"
	"fmt"
	"io"
	"math"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/evalflow/evalflow/table"
)

// jsonlWriter owns its buffer; it does not own w's destination.
type jsonlWriter struct {
	s      Schema
	keys   [][]byte // `"name":` per column, pre-encoded
	buf    *bufio.Writer
	line   []byte // reused encoding buffer
	err    error  // sticky I/O error
	closed bool
}

// NewJSONL returns a writer of JSON Lines to w: one object per row, keys
// in schema order, NULL as null. Values are encoded as JSON booleans,
// numbers and strings; a float64 NaN or ±Inf (which JSON cannot carry)
// becomes null, []byte becomes a standard base64 string, time.Time an
// RFC 3339 string in UTC with up to microsecond precision (the precision
// every sink keeps), and a TypeAny value the string table.Format renders.
//
// Output is buffered; Close flushes it but never closes w, so w may be
// os.Stdout.
func NewJSONL(w io.Writer, s Schema) (Writer, error) {
	if err := s.validate(); err != nil {
		return nil, err
	}
	keys := make([][]byte, len(s))
	for i, c := range s {
		keys[i] = append(appendJSONString(nil, c.Name), ':')
	}
	return &jsonlWriter{s: s, keys: keys, buf: bufio.NewWriterSize(w, 64<<10)}, nil
}

// Write implements Writer.
func (w *jsonlWriter) Write(row []any) error {
	if w.closed {
		return ErrClosed
	}
	if w.err != nil {
		return w.err
	}
	if err := w.s.checkRow(row); err != nil {
		return err
	}
	b := append(w.line[:0], '{')
	for i, v := range row {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, w.keys[i]...)
		b = appendJSONValue(b, w.s[i].Type, v)
	}
	b = append(b, '}', '\n')
	w.line = b
	if _, err := w.buf.Write(b); err != nil {
		w.err = fmt.Errorf("sinks: writing jsonl: %w", err)
	}
	return w.err
}

// Close implements Writer: it flushes buffered lines to the destination.
func (w *jsonlWriter) Close() error {
	if w.closed {
		return ErrClosed
	}
	w.closed = true
	if w.err != nil {
		return w.err
	}
	if err := w.buf.Flush(); err != nil {
		return fmt.Errorf("sinks: writing jsonl: %w", err)
	}
	return nil
}

func appendJSONValue(b []byte, t table.Type, v any) []byte {
	if v == nil {
		return append(b, "null"...)
	}
	switch t {
	case table.TypeBool:
		return strconv.AppendBool(b, v.(bool))
	case table.TypeInt:
		return strconv.AppendInt(b, v.(int64), 10)
	case table.TypeFloat:
		return appendJSONFloat(b, v.(float64))
	case table.TypeBytes:
		x := v.([]byte)
		b = append(b, '"')
		b = base64.StdEncoding.AppendEncode(b, x)
		return append(b, '"')
	case table.TypeTimestamp:
		t := time.UnixMicro(micros(v.(time.Time))).UTC()
		b = append(b, '"')
		b = t.AppendFormat(b, time.RFC3339Nano)
		return append(b, '"')
	}
	return appendJSONString(b, asString(v))
}

// AppendJSONString appends s as a JSON string the way the JSONL sink
// writes text: invalid UTF-8 becomes U+FFFD, U+2028 and U+2029 are
// escaped, HTML characters are left alone. It allocates only to grow b.
func AppendJSONString(b []byte, s string) []byte { return appendJSONString(b, s) }

// AppendJSONFloat appends a finite f as encoding/json writes it (shortest
// round-trip decimal, exponent form outside [1e-6, 1e21)); NaN and ±Inf,
// which JSON cannot hold, become null.
func AppendJSONFloat(b []byte, f float64) []byte { return appendJSONFloat(b, f) }

// appendJSONFloat writes f as encoding/json does (shortest round-trip
// decimal, exponent form outside [1e-6, 1e21)), and NaN and ±Inf as null.
func appendJSONFloat(b []byte, f float64) []byte {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return append(b, "null"...)
	}
	format := byte('f')
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, f, format, -1, 64)
	if format == 'e' {
		// 1e-07 → 1e-7, as encoding/json writes it.
		if n := len(b); n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b
}

const hexDigits = "0123456789abcdef"

// appendJSONString writes s as a JSON string. Invalid UTF-8 becomes U+FFFD;
// U+2028 and U+2029 are escaped so the line is also valid JavaScript. HTML
// characters are left alone.
func appendJSONString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

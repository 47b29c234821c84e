// Package dataset reads row files (JSONL, JSON, CSV, Parquet) as a stream of
// ordered fields, and maps them to items through a dataset block. The same
// reader serves replay prediction files, which may also be a Spider pred.txt
// or BIRD's predict_dev.json (formats Spider and Bird).
//
// JSONL, CSV, Parquet and Spider files are streamed: memory stays flat
// however large the file. A JSON file must hold one top-level array, which
// is streamed element by element with encoding/json's tokenizer; a BIRD
// predictions object is read whole.
//
// Benchmark files are read as they are (docs/formats.md): a format the
// dataset block does not set is decided from the extension and the
// content, and the id, gold and db fields it does not set fall back to
// Spider's and BIRD's names (Reader.Mapping says what was chosen).
package dataset

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/parquet-go/parquet-go"
)

// Row is one record with its fields in file order.
type Row struct {
	Line   int // 1-based line (JSONL, CSV) or element/row index (JSON, Parquet)
	Names  []string
	Values []any // string, float64/int64, bool, nil, []any, map[string]any
	// Err is set, with no fields, for a line that is not one JSON object
	// (invalid JSON, another value, two values on one line) or a CSV record
	// that cannot be read: the reader reports it and goes on, so nothing is
	// dropped silently. The message has no file or line (Line has it).
	Err string
	// Src is the row's JSON text (JSONL and JSON), for values that must be
	// written as they appear in the file.
	Src []byte
}

// Get returns the named field.
func (r Row) Get(name string) (any, bool) {
	for i, n := range r.Names {
		if n == name {
			return r.Values[i], true
		}
	}
	return nil, false
}

// ReadRows calls fn for every row of path in order. It stops at the first
// error from the file or from fn; errors name the file and line. format is
// one of PredictionFormats.
func ReadRows(path, format string, fn func(Row) error) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	switch format {
	case "jsonl":
		return readJSONL(f, path, fn)
	case "json":
		return readJSON(f, path, fn)
	case "csv":
		return readCSV(f, path, fn)
	case "parquet":
		return readParquet(f, path, fn)
	case Spider:
		return readSpider(f, path, fn)
	case Bird:
		return readBird(f, path, fn)
	}
	return fmt.Errorf("%s: unknown format %q", path, format)
}

// decodeObject decodes one JSON object with its fields in order. The fast
// one-pass decoder (fastobj.go) handles valid input; invalid input goes to
// the encoding/json token decoder, whose error messages users see.
func decodeObject(data []byte) (Row, error) { return decodeObjectFast(data) }

func decodeObjectSlow(data []byte) (Row, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	tok, err := dec.Token()
	if err != nil {
		return Row{}, err
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return Row{}, errors.New("expected a JSON object")
	}
	var r Row
	for dec.More() {
		kt, err := dec.Token()
		if err != nil {
			return Row{}, err
		}
		var v any
		if err := dec.Decode(&v); err != nil {
			return Row{}, err
		}
		r.Names = append(r.Names, kt.(string))
		r.Values = append(r.Values, normJSON(v))
	}
	if _, err := dec.Token(); err != nil { // the closing brace
		return Row{}, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return Row{}, errors.New("two JSON values on one line (one object per line)")
	}
	return r, nil
}

// normJSON turns json.Number into int64 when integral, else float64.
func normJSON(v any) any {
	switch x := v.(type) {
	case json.Number:
		if i, err := x.Int64(); err == nil {
			return i
		}
		f, _ := x.Float64()
		return f
	case []any:
		for i := range x {
			x[i] = normJSON(x[i])
		}
		return x
	case map[string]any:
		for k := range x {
			x[k] = normJSON(x[k])
		}
		return x
	}
	return v
}

func readJSONL(r io.Reader, path string, fn func(Row) error) error {
	lr := newLineReader(r)
	for {
		b, line, err := lr.next()
		if line == 1 {
			b = bytes.TrimPrefix(b, []byte("\ufeff")) // a byte-order mark some editors write
		}
		if b != nil {
			if t := bytes.TrimSpace(b); len(t) > 0 {
				row, derr := decodeObject(t)
				if derr != nil {
					msg := derr.Error()
					if errors.Is(derr, io.EOF) || errors.Is(derr, io.ErrUnexpectedEOF) {
						msg = "the line ends inside the object"
					}
					row = Row{Err: "not one JSON object: " + msg}
				}
				row.Line, row.Src = line, t
				if ferr := fn(row); ferr != nil {
					return ferr
				}
			}
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
	}
}

func readJSON(r io.Reader, path string, fn func(Row) error) error {
	dec := json.NewDecoder(bufio.NewReaderSize(r, 1<<16))
	tok, err := dec.Token()
	if err != nil {
		return fmt.Errorf("%s: %v", path, err)
	}
	if d, ok := tok.(json.Delim); !ok || d != '[' {
		return fmt.Errorf("%s: a JSON dataset must be an array of objects (use .jsonl for one object per line)", path)
	}
	n := 0
	for dec.More() {
		n++
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return fmt.Errorf("%s: element %d: %v", path, n, err)
		}
		row, err := decodeObject(raw)
		if err != nil {
			row = Row{Err: "element is not a JSON object: " + err.Error()}
		}
		row.Line, row.Src = n, raw
		if err := fn(row); err != nil {
			return err
		}
	}
	return nil
}

// readCSV reads a header row then records; every value is a string
// (an empty cell is an empty string, not NULL). A cell holding a JSON array
// (starting with '[') is decoded, so replay files may list samples.
func readCSV(r io.Reader, path string, fn func(Row) error) error {
	// CR-only and CRLF files have lines too: every line ending becomes \n
	// before the CSV reader sees it.
	cr := csv.NewReader(&crReader{r: bufio.NewReaderSize(r, 1<<16)})
	cr.FieldsPerRecord = 0
	header, err := cr.Read()
	if err != nil {
		return fmt.Errorf("%s: reading header: %v", path, err)
	}
	if len(header) > 0 {
		header[0] = strings.TrimPrefix(header[0], "\ufeff")
	}
	lastLine := -1
	for {
		rec, err := cr.Read()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			var pe *csv.ParseError
			if !errors.As(err, &pe) || pe.StartLine == lastLine {
				return fmt.Errorf("%s: %v", path, err)
			}
			lastLine = pe.StartLine
			if ferr := fn(Row{Line: pe.StartLine, Err: "unreadable CSV record: " + pe.Err.Error()}); ferr != nil {
				return ferr
			}
			continue
		}
		line, _ := cr.FieldPos(0)
		row := Row{Line: line, Names: header, Values: make([]any, len(rec))}
		for i, s := range rec {
			row.Values[i] = s
			if strings.HasPrefix(s, "[") {
				var v any
				d := json.NewDecoder(strings.NewReader(s))
				d.UseNumber()
				if d.Decode(&v) == nil {
					row.Values[i] = normJSON(v)
				}
			}
		}
		if err := fn(row); err != nil {
			return err
		}
	}
}

func readParquet(f *os.File, path string, fn func(Row) error) error {
	st, err := f.Stat()
	if err != nil {
		return err
	}
	pf, err := parquet.OpenFile(f, st.Size())
	if err != nil {
		return fmt.Errorf("%s: %v", path, err)
	}
	fields := pf.Schema().Fields()
	names := make([]string, len(fields))
	for i, fl := range fields {
		names[i] = fl.Name()
	}
	rd := parquet.NewReader(pf)
	defer rd.Close()
	n := 0
	for {
		m := map[string]any{}
		err := rd.Read(&m)
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("%s: row %d: %v", path, n+1, err)
		}
		n++
		row := Row{Line: n, Names: names, Values: make([]any, len(names))}
		for i, name := range names {
			row.Values[i] = normParquet(m[name])
		}
		if err := fn(row); err != nil {
			return err
		}
	}
}

func normParquet(v any) any {
	switch x := v.(type) {
	case int32:
		return int64(x)
	case int:
		return int64(x)
	case uint32:
		return int64(x)
	case uint64:
		return int64(x)
	case float32:
		return float64(x)
	case []byte:
		return string(x)
	case []any:
		for i := range x {
			x[i] = normParquet(x[i])
		}
		return x
	}
	return v
}

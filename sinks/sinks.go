// Package sinks streams result rows to files that pandas, DuckDB and Arrow
// read directly: Parquet, the Arrow IPC stream format and JSON Lines.
//
// The columns of a run are known when it is planned (pass-through dataset
// columns plus one column per metric), so a sink is opened with a Schema and
// then fed one row at a time:
//
//	w, err := sinks.Open("parquet", "results.parquet", schema)
//	if err != nil { ... }
//	defer w.Close() // the owner closes exactly once, also on error paths
//	for ... { if err := w.Write(row); err != nil { ... } }
//
// Every sink keeps its memory flat: Parquet flushes a row group and Arrow a
// record batch every WithRowGroupSize rows, JSONL writes through a small
// buffer. Close flushes what is left and finishes the file, so a run that is
// cancelled (Ctrl-C through its context) and then closes its sink leaves a
// valid file holding every row written so far. See docs/sinks.md for the
// type mapping and how to open the files.
package sinks

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/evalflow/evalflow/table"
)

// Column describes one output column. Every column is nullable. Doc is
// carried into the file's metadata (Parquet key-value metadata, Arrow field
// metadata) and may be empty.
type Column struct {
	Name string
	Type table.Type
	Doc  string
}

// Schema is the ordered list of columns every row is written in.
type Schema []Column

// Writer writes rows in Schema order.
//
// Write's row[i] is nil (NULL) or the Go type for Schema[i].Type: bool,
// int64, float64, string, []byte, time.Time (stored as a timestamp with
// microsecond precision in UTC); a TypeAny column accepts any value and
// stores it as the string table.Format renders, and a TypeNull column
// accepts only nil. A row with the wrong length or a value of the wrong Go
// type is rejected with an error naming the column, and nothing of it is
// written; the writer stays usable. An error from the underlying file or
// stream is sticky: every later Write returns it.
//
// Write does not keep row or anything it refers to after it returns.
//
// Writers are not safe for concurrent use. The owner calls Close exactly
// once, also after a Write error: it flushes buffered rows, finishes the
// file (Parquet footer, Arrow end-of-stream marker) and releases every
// buffer and, for writers that opened a file, the file itself. Write and
// Close after Close return ErrClosed.
type Writer interface {
	Write(row []any) error
	Close() error
}

// ErrClosed is returned by Write and Close on a writer that is closed.
var ErrClosed = errors.New("sinks: writer is closed")

// DefaultRowGroupSize is the number of rows per Parquet row group and per
// Arrow record batch when WithRowGroupSize is not given.
const DefaultRowGroupSize = 8192

// Option configures NewParquet, NewArrowIPC and Open. An option that does
// not apply to a format is ignored by it (JSONL takes none).
type Option func(*options)

type options struct {
	rowGroupSize int
	compression  string
	mem          memory.Allocator
}

func newOptions(opts []Option) options {
	o := options{rowGroupSize: DefaultRowGroupSize}
	for _, opt := range opts {
		opt(&o)
	}
	if o.rowGroupSize <= 0 {
		o.rowGroupSize = DefaultRowGroupSize
	}
	if o.mem == nil {
		o.mem = memory.DefaultAllocator
	}
	return o
}

// WithRowGroupSize sets how many rows a Parquet row group or an Arrow record
// batch holds; the sink flushes every n rows, which bounds its memory.
// n <= 0 means DefaultRowGroupSize.
func WithRowGroupSize(n int) Option {
	return func(o *options) { o.rowGroupSize = n }
}

// WithCompression names the compression codec: "zstd" (the Parquet
// default), "snappy" (Parquet only), "lz4" (Arrow only) or "none" (the
// Arrow default). An unknown or unsupported name makes the constructor fail.
func WithCompression(codec string) Option {
	return func(o *options) { o.compression = codec }
}

// WithAllocator sets the Arrow allocator NewArrowIPC builds its record
// batches with (memory.DefaultAllocator otherwise). Tests pass a
// memory.CheckedAllocator and assert it is empty after Close.
func WithAllocator(mem memory.Allocator) Option {
	return func(o *options) { o.mem = mem }
}

// Open creates a writer of the given kind: "parquet", "arrow" (Arrow IPC
// stream) or "jsonl". For "arrow" and "jsonl" a path of "-" writes to
// standard output, which Close flushes but does not close; otherwise Open
// creates (or truncates) the file at path and the writer's Close closes it.
// Parquet needs a real path.
func Open(kind, path string, s Schema, opts ...Option) (Writer, error) {
	k, ok := Lookup(kind)
	if !ok || k.PerItem {
		return nil, fmt.Errorf("sinks: unknown sink kind %q; want one of %s", kind, strings.Join(tableKinds(), ", "))
	}
	if path == "-" && !k.Stdout {
		return nil, fmt.Errorf(`sinks: %s cannot be written to standard output ("-"); give a file path or use kind "arrow"`, kind)
	}
	if k.OpenFile != nil && path != "-" {
		return k.OpenFile(path, s, opts...)
	}
	if err := s.validate(); err != nil {
		return nil, err
	}
	var out io.Writer = os.Stdout
	var f *os.File
	if path != "-" {
		var err error
		if f, err = os.Create(path); err != nil {
			return nil, fmt.Errorf("sinks: %w", err)
		}
		out = f
	}
	w, err := k.Open(out, s, opts...)
	if err != nil {
		if f != nil {
			f.Close()
			os.Remove(path)
		}
		return nil, err
	}
	if f == nil {
		return w, nil
	}
	return &fileWriter{Writer: w, f: f}, nil
}

// tableKinds lists the kinds that write rows.
func tableKinds() []string {
	var out []string
	for _, n := range KindNames() {
		if k, _ := Lookup(n); !k.PerItem {
			out = append(out, n)
		}
	}
	return out
}

// fileWriter makes the Writer returned by Open the owner of the file it
// created.
type fileWriter struct {
	Writer
	f *os.File
}

func (w *fileWriter) Close() error {
	err := w.Writer.Close()
	if errors.Is(err, ErrClosed) {
		return err
	}
	if cerr := w.f.Close(); cerr != nil && err == nil {
		err = fmt.Errorf("sinks: %w", cerr)
	}
	return err
}

// validate reports a schema no sink can write: no columns, an empty or
// repeated name, or an unknown type.
func (s Schema) validate() error {
	if len(s) == 0 {
		return errors.New("sinks: schema has no columns")
	}
	seen := make(map[string]bool, len(s))
	for i, c := range s {
		if c.Name == "" {
			return fmt.Errorf("sinks: column %d has no name", i)
		}
		if seen[c.Name] {
			return fmt.Errorf("sinks: column %q appears twice in the schema", c.Name)
		}
		seen[c.Name] = true
		if c.Type > table.TypeTimestamp {
			return fmt.Errorf("sinks: column %q has unknown type %s", c.Name, c.Type)
		}
	}
	return nil
}

// checkRow reports the first value in row whose Go type does not match its
// column, before a sink writes any of it.
func (s Schema) checkRow(row []any) error {
	if len(row) != len(s) {
		return fmt.Errorf("sinks: row has %d values, schema has %d columns", len(row), len(s))
	}
	for i, v := range row {
		if v == nil {
			continue
		}
		var ok bool
		switch s[i].Type {
		case table.TypeAny:
			ok = true
		case table.TypeNull:
			ok = false
		case table.TypeBool:
			_, ok = v.(bool)
		case table.TypeInt:
			_, ok = v.(int64)
		case table.TypeFloat:
			_, ok = v.(float64)
		case table.TypeString:
			_, ok = v.(string)
		case table.TypeBytes:
			_, ok = v.([]byte)
		case table.TypeTimestamp:
			_, ok = v.(time.Time)
		}
		if !ok {
			return fmt.Errorf("sinks: column %q (%s): got %T, want %s", s[i].Name, s[i].Type, v, goTypeOf(s[i].Type))
		}
	}
	return nil
}

func goTypeOf(t table.Type) string {
	switch t {
	case table.TypeNull:
		return "nil (a null column holds only NULL)"
	case table.TypeBool:
		return "bool or nil"
	case table.TypeInt:
		return "int64 or nil"
	case table.TypeFloat:
		return "float64 or nil"
	case table.TypeString:
		return "string or nil"
	case table.TypeBytes:
		return "[]byte or nil"
	case table.TypeTimestamp:
		return "time.Time or nil"
	}
	return "any value"
}

// micros is the stored form of a timestamp: microseconds since the Unix
// epoch, UTC. Sub-microsecond precision is truncated.
func micros(t time.Time) int64 { return t.UnixMicro() }

// asString renders a TypeAny (or TypeString) value as it is stored.
func asString(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	return table.Format(v)
}

package sinks

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"reflect"
	"strings"
	"time"
	"unsafe"

	kzstd "github.com/klauspost/compress/zstd"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/compress"
	"github.com/parquet-go/parquet-go/compress/snappy"
	"github.com/parquet-go/parquet-go/compress/zstd"
	"github.com/parquet-go/parquet-go/deprecated"
	"github.com/parquet-go/parquet-go/encoding"
	"github.com/parquet-go/parquet-go/format"

	"github.com/evalflow/evalflow/table"
)

// SchemaMetadataKey is the Parquet key-value metadata entry (and Arrow
// schema metadata entry) holding the evalflow Schema as JSON: a list of
// {"name", "type", "doc"} objects in column order. ReadParquetRows uses it
// to recover column types the file format cannot express (any, null) and
// the column docs.
const SchemaMetadataKey = "evalflow.schema"

type schemaJSON struct {
	Name string `json:"name"`
	Type string `json:"type"`
	Doc  string `json:"doc,omitempty"`
}

func (s Schema) metadata() string {
	cols := make([]schemaJSON, len(s))
	for i, c := range s {
		cols[i] = schemaJSON{Name: c.Name, Type: c.Type.String(), Doc: c.Doc}
	}
	b, err := json.Marshal(cols)
	if err != nil {
		panic(err) // strings only: cannot fail
	}
	return string(b)
}

// parquetWriter owns the file it created and the parquet-go writer on it.
//
// Rows are handed to parquet-go writeBatch at a time: each WriteRows call
// costs a call per column, whatever the number of rows. Until then a
// pending row holds the caller's values — strings, which cannot change,
// and copies of []byte values, which can.
type parquetWriter struct {
	s    Schema
	f    *os.File
	pw   *parquet.GenericWriter[any]
	rows []parquet.Row // reused; rows[:n] are pending
	n    int
	err  error // sticky I/O error
	// closed is set by Close.
	closed bool
}

// writeBatch is how many rows a parquetWriter gives parquet-go at once
// (parquet-go's own chunk: it cuts pages only between its calls).
const writeBatch = 64

// zstdCodec compresses every Parquet file the process writes. parquet-go's
// zstd.Codec keeps its encoders in a sync.Pool, which garbage collection
// empties, and a new encoder allocates its history window (16 MiB at
// parquet-go's level) on first use: a fresh codec per writer made one per
// column chunk, 0.5 GB allocated in a 100k-item run. This one keeps up to
// maxIdleZstd encoders for the process's life. The encoder options are
// parquet-go's, so the bytes are the same.
var zstdCodec = &pooledZstd{idle: make(chan *kzstd.Encoder, maxIdleZstd)}

const maxIdleZstd = 2

type pooledZstd struct {
	idle chan *kzstd.Encoder
	dec  zstd.Codec // decoding is parquet-go's
}

func (c *pooledZstd) String() string                            { return "ZSTD" }
func (c *pooledZstd) CompressionCodec() format.CompressionCodec { return format.Zstd }
func (c *pooledZstd) Decode(dst, src []byte) ([]byte, error)    { return c.dec.Decode(dst, src) }

func (c *pooledZstd) Encode(dst, src []byte) ([]byte, error) {
	var e *kzstd.Encoder
	select {
	case e = <-c.idle:
	default:
		var err error
		e, err = kzstd.NewWriter(nil,
			kzstd.WithEncoderConcurrency(zstd.DefaultConcurrency),
			kzstd.WithEncoderLevel(zstd.DefaultLevel),
			kzstd.WithZeroFrames(true),
			kzstd.WithEncoderCRC(false),
		)
		if err != nil {
			return nil, err
		}
	}
	out := e.EncodeAll(src, dst[:0])
	select {
	case c.idle <- e:
	default:
	}
	return out, nil
}

// NewParquet creates (or truncates) the Parquet file at path and returns a
// writer for rows of schema s. Columns are optional (nullable), named
// exactly as in s, in s's order, and typed as docs/sinks.md lists: BOOLEAN,
// INT64, DOUBLE, BYTE_ARRAY (STRING) and INT64 TIMESTAMP(MICROS, UTC).
//
// Rows are compressed with zstd unless WithCompression says "snappy" or
// "none", and a row group is flushed to the file every WithRowGroupSize
// rows, so memory stays flat. Close writes the footer and closes the file;
// only then is the file readable, so a run that is stopped must still call
// Close (a process killed without it leaves a file without a footer).
func NewParquet(path string, s Schema, opts ...Option) (Writer, error) {
	if err := s.validate(); err != nil {
		return nil, err
	}
	o := newOptions(opts)
	var codec compress.Codec
	switch o.compression {
	case "", "zstd":
		codec = zstdCodec
	case "snappy":
		codec = &snappy.Codec{}
	case "none":
	default:
		return nil, fmt.Errorf("sinks: parquet does not support compression %q; want zstd, snappy or none", o.compression)
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("sinks: %w", err)
	}
	wopts := []parquet.WriterOption{
		parquetSchema(s),
		parquet.MaxRowsPerRowGroup(int64(o.rowGroupSize)),
		parquet.KeyValueMetadata(SchemaMetadataKey, s.metadata()),
		// PLAIN byte arrays rather than parquet-go's default
		// DELTA_LENGTH_BYTE_ARRAY: every reader supports it, and zstd or
		// snappy compress it as well.
		parquet.DefaultEncodingFor(parquet.ByteArray, &parquet.Plain),
	}
	if codec != nil {
		wopts = append(wopts, parquet.Compression(codec))
	}
	cfg, err := parquet.NewWriterConfig(wopts...)
	if err != nil {
		f.Close()
		os.Remove(path)
		return nil, fmt.Errorf("sinks: parquet writer: %w", err)
	}
	rows := make([]parquet.Row, writeBatch)
	vals := make([]parquet.Value, writeBatch*len(s))
	for i := range rows {
		rows[i] = vals[i*len(s) : (i+1)*len(s) : (i+1)*len(s)]
	}
	return &parquetWriter{
		s:    s,
		f:    f,
		pw:   parquet.NewGenericWriter[any](f, cfg),
		rows: rows,
	}, nil
}

// Write implements Writer.
func (w *parquetWriter) Write(row []any) error {
	if w.closed {
		return ErrClosed
	}
	if w.err != nil {
		return w.err
	}
	if err := w.s.checkRow(row); err != nil {
		return err
	}
	r := w.rows[w.n]
	for i, v := range row {
		if b, ok := v.([]byte); ok {
			v = bytes.Clone(b) // the caller may reuse it once Write returns
		}
		r[i] = parquetValue(w.s[i].Type, v).Level(0, definitionLevel(v), i)
	}
	w.n++
	if w.n == len(w.rows) {
		return w.flushRows()
	}
	return nil
}

// RowGroupAppender is implemented by the Parquet writer NewParquet
// returns: it appends another Parquet file's rows without decoding them
// when it can.
type RowGroupAppender interface {
	// AppendFile appends every row of the Parquet file at path, which has
	// the writer's schema (a file NewParquet wrote with it), after the rows
	// written so far, and returns how many rows it appended. A row group
	// whose codec and encodings are the writer's (a file written with the
	// same compression) is copied verbatim: its compressed pages,
	// statistics and page index, no decoding and no compression; any other
	// is re-encoded. The rows are the same either way; the row groups keep
	// the source's sizes.
	AppendFile(path string) (int64, error)
}

// AppendFile implements RowGroupAppender.
func (w *parquetWriter) AppendFile(path string) (int64, error) {
	if w.closed {
		return 0, ErrClosed
	}
	if w.err != nil {
		return 0, w.err
	}
	if err := w.flushRows(); err != nil {
		return 0, err
	}
	f, err := os.Open(path)
	if err != nil {
		return 0, fmt.Errorf("sinks: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return 0, fmt.Errorf("sinks: %w", err)
	}
	pf, err := parquet.OpenFile(f, st.Size())
	if err != nil {
		return 0, fmt.Errorf("sinks: reading %s: %w", path, err)
	}
	s, _, err := fileSchema(pf)
	if err != nil {
		return 0, fmt.Errorf("sinks: reading %s: %w", path, err)
	}
	if !sameColumns(s, w.s) {
		return 0, fmt.Errorf("sinks: appending %s: its columns differ from the file being written", path)
	}
	var n int64
	for _, rg := range pf.RowGroups() {
		k, err := w.pw.WriteRowGroup(rg)
		n += k
		if err != nil {
			w.err = fmt.Errorf("sinks: appending %s: %w", path, err)
			return n, w.err
		}
	}
	return n, nil
}

// sameColumns reports whether a and b have the same column names and
// types, in the same order.
func sameColumns(a, b Schema) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Name != b[i].Name || a[i].Type != b[i].Type {
			return false
		}
	}
	return true
}

// flushRows hands the pending rows to parquet-go.
func (w *parquetWriter) flushRows() error {
	if w.n == 0 {
		return nil
	}
	_, err := w.pw.WriteRows(w.rows[:w.n])
	for _, r := range w.rows[:w.n] {
		clear(r) // drop references to the caller's strings and bytes
	}
	w.n = 0
	if err != nil {
		w.err = fmt.Errorf("sinks: writing parquet: %w", err)
		return w.err
	}
	return nil
}

// Close implements Writer: it flushes the last row group, writes the footer
// and closes the file, returning the first error.
func (w *parquetWriter) Close() error {
	if w.closed {
		return ErrClosed
	}
	w.closed = true
	err := w.err
	if err == nil {
		err = w.flushRows()
	}
	if cerr := w.pw.Close(); cerr != nil && err == nil {
		err = fmt.Errorf("sinks: finishing parquet file: %w", cerr)
	}
	if cerr := w.f.Close(); cerr != nil && err == nil {
		err = fmt.Errorf("sinks: %w", cerr)
	}
	w.pw = nil
	return err
}

func definitionLevel(v any) int {
	if v == nil {
		return 0
	}
	return 1
}

// parquetValue converts a checked value. parquet-go copies byte arrays into
// its column buffers during WriteRows, so a string is passed without a copy.
func parquetValue(t table.Type, v any) parquet.Value {
	if v == nil {
		return parquet.NullValue()
	}
	switch t {
	case table.TypeBool:
		return parquet.BooleanValue(v.(bool))
	case table.TypeInt:
		return parquet.Int64Value(v.(int64))
	case table.TypeFloat:
		return parquet.DoubleValue(v.(float64))
	case table.TypeBytes:
		return parquet.ByteArrayValue(v.([]byte))
	case table.TypeTimestamp:
		return parquet.Int64Value(micros(v.(time.Time)))
	}
	s := asString(v)
	return parquet.ByteArrayValue(unsafe.Slice(unsafe.StringData(s), len(s)))
}

// parquetSchema builds the file schema: a root group whose optional leaf
// fields keep the order of s (parquet.Group would sort them by name).
func parquetSchema(s Schema) *parquet.Schema {
	fields := make(orderedGroup, len(s))
	for i, c := range s {
		var leaf parquet.Node
		switch c.Type {
		case table.TypeBool:
			leaf = parquet.Leaf(parquet.BooleanType)
		case table.TypeInt:
			leaf = parquet.Leaf(parquet.Int64Type)
		case table.TypeFloat:
			leaf = parquet.Leaf(parquet.DoubleType)
		case table.TypeBytes:
			leaf = parquet.Leaf(parquet.ByteArrayType)
		case table.TypeTimestamp:
			leaf = parquet.Timestamp(parquet.Microsecond)
		default: // string, any, null
			leaf = parquet.String()
		}
		fields[i] = field{Node: parquet.Optional(leaf), name: c.Name}
	}
	return parquet.NewSchema("evalflow", fields)
}

// orderedGroup is a parquet group node whose fields keep their given order.
type orderedGroup []parquet.Field

func (g orderedGroup) ID() int                     { return 0 }
func (g orderedGroup) Type() parquet.Type          { return parquet.Group{}.Type() }
func (g orderedGroup) Optional() bool              { return false }
func (g orderedGroup) Repeated() bool              { return false }
func (g orderedGroup) Required() bool              { return true }
func (g orderedGroup) Leaf() bool                  { return false }
func (g orderedGroup) Fields() []parquet.Field     { return g }
func (g orderedGroup) Encoding() encoding.Encoding { return nil }
func (g orderedGroup) Compression() compress.Codec { return nil }
func (g orderedGroup) GoType() reflect.Type        { return reflect.TypeFor[map[string]any]() }
func (g orderedGroup) String() string              { return groupString(g) }

func groupString(g orderedGroup) string {
	var b strings.Builder
	b.WriteString("group {")
	for _, f := range g {
		fmt.Fprintf(&b, " %s %s;", f.Name(), f.Type())
	}
	b.WriteString(" }")
	return b.String()
}

// field is one named column of an orderedGroup.
type field struct {
	parquet.Node
	name string
}

func (f field) Name() string { return f.name }

// Value is used by parquet-go only when writing Go values (not rows);
// it looks the field up in a map[string]any.
func (f field) Value(base reflect.Value) reflect.Value {
	if base.Kind() == reflect.Interface {
		base = base.Elem()
	}
	if base.Kind() != reflect.Map {
		return reflect.Value{}
	}
	return base.MapIndex(reflect.ValueOf(f.name))
}

// ReadParquetRows reads a whole flat Parquet file: its schema and every row,
// each value in the form Writer.Write takes (nil, bool, int64, float64,
// string, []byte, time.Time in UTC). Files written by NewParquet come back
// with their original Schema, docs included, and TypeAny values as the
// strings they were stored as. Other flat files are read too: their
// column types are inferred from the Parquet types (INT32 widens to int64,
// FLOAT to float64, timestamps of any unit become time.Time).
//
// It holds the whole file in memory; it is meant for tests, resume and
// compare, not for large scans.
func ReadParquetRows(path string) (Schema, [][]any, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, fmt.Errorf("sinks: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, nil, fmt.Errorf("sinks: %w", err)
	}
	pf, err := parquet.OpenFile(f, st.Size())
	if err != nil {
		return nil, nil, fmt.Errorf("sinks: reading %s: %w", path, err)
	}
	s, readers, err := fileSchema(pf)
	if err != nil {
		return nil, nil, fmt.Errorf("sinks: reading %s: %w", path, err)
	}
	rows := make([][]any, 0, pf.NumRows())
	buf := make([]parquet.Row, 256)
	for _, rg := range pf.RowGroups() {
		rr := rg.Rows()
		for {
			n, err := rr.ReadRows(buf)
			for _, r := range buf[:n] {
				out := make([]any, len(s))
				for _, v := range r {
					if c := v.Column(); !v.IsNull() {
						out[c] = readers[c](v)
					}
				}
				rows = append(rows, out)
			}
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				rr.Close()
				return nil, nil, fmt.Errorf("sinks: reading %s: %w", path, err)
			}
		}
		if err := rr.Close(); err != nil {
			return nil, nil, fmt.Errorf("sinks: reading %s: %w", path, err)
		}
	}
	return s, rows, nil
}

// fileSchema maps the leaf columns of a flat file to a Schema and a
// converter per column.
func fileSchema(pf *parquet.File) (Schema, []func(parquet.Value) any, error) {
	fields := pf.Schema().Fields()
	s := make(Schema, len(fields))
	readers := make([]func(parquet.Value) any, len(fields))
	for i, fl := range fields {
		if !fl.Leaf() || fl.Repeated() {
			return nil, nil, fmt.Errorf("column %q is nested or repeated; only flat files are supported", fl.Name())
		}
		t, read, err := leafType(fl.Type())
		if err != nil {
			return nil, nil, fmt.Errorf("column %q: %w", fl.Name(), err)
		}
		s[i] = Column{Name: fl.Name(), Type: t}
		readers[i] = read
	}
	// Recover what Parquet cannot say (any, null, docs) from our metadata,
	// when it describes exactly these columns.
	if md, ok := pf.Lookup(SchemaMetadataKey); ok {
		var cols []schemaJSON
		if json.Unmarshal([]byte(md), &cols) == nil && sameNames(cols, s) {
			for i, c := range cols {
				t, ok := table.ParseType(c.Type)
				if ok && (t == table.TypeAny || t == table.TypeNull) && s[i].Type == table.TypeString {
					s[i].Type = t
				}
				s[i].Doc = c.Doc
			}
		}
	}
	return s, readers, nil
}

func sameNames(cols []schemaJSON, s Schema) bool {
	if len(cols) != len(s) {
		return false
	}
	for i, c := range cols {
		if c.Name != s[i].Name {
			return false
		}
	}
	return true
}

func leafType(t parquet.Type) (table.Type, func(parquet.Value) any, error) {
	lt := t.LogicalType()
	ct := t.ConvertedType()
	switch t.Kind() {
	case parquet.Boolean:
		return table.TypeBool, func(v parquet.Value) any { return v.Boolean() }, nil
	case parquet.Int32:
		return table.TypeInt, func(v parquet.Value) any { return int64(v.Int32()) }, nil
	case parquet.Int64:
		if lt != nil {
			if ts, ok := lt.Value.(*format.TimestampType); ok {
				unit := time.Microsecond
				switch ts.Unit.Value.(type) {
				case *format.MilliSeconds:
					unit = time.Millisecond
				case *format.NanoSeconds:
					unit = time.Nanosecond
				}
				return table.TypeTimestamp, timeReader(unit), nil
			}
		}
		if ct != nil && *ct == deprecated.TimestampMillis {
			return table.TypeTimestamp, timeReader(time.Millisecond), nil
		}
		if ct != nil && *ct == deprecated.TimestampMicros {
			return table.TypeTimestamp, timeReader(time.Microsecond), nil
		}
		return table.TypeInt, func(v parquet.Value) any { return v.Int64() }, nil
	case parquet.Float:
		return table.TypeFloat, func(v parquet.Value) any { return float64(v.Float()) }, nil
	case parquet.Double:
		return table.TypeFloat, func(v parquet.Value) any { return v.Double() }, nil
	case parquet.ByteArray:
		var isString bool
		if lt != nil {
			_, isString = lt.Value.(*format.StringType)
		}
		if isString || (ct != nil && *ct == deprecated.UTF8) {
			return table.TypeString, func(v parquet.Value) any { return string(v.ByteArray()) }, nil
		}
		return table.TypeBytes, func(v parquet.Value) any { return append([]byte{}, v.ByteArray()...) }, nil
	}
	return 0, nil, fmt.Errorf("parquet type %s is not supported", t)
}

func timeReader(unit time.Duration) func(parquet.Value) any {
	return func(v parquet.Value) any {
		n := v.Int64()
		switch unit {
		case time.Millisecond:
			return time.UnixMilli(n).UTC()
		case time.Nanosecond:
			return time.Unix(0, n).UTC()
		}
		return time.UnixMicro(n).UTC()
	}
}

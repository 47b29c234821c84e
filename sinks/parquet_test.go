package sinks_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/google/go-cmp/cmp"
	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/format"

	"github.com/evalflow/evalflow/sinks"
	"github.com/evalflow/evalflow/table"
)

// writeParquet writes rows to a new file in t's temp dir and closes it.
func writeParquet(t *testing.T, s sinks.Schema, rows [][]any, opts ...sinks.Option) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "out.parquet")
	w, err := sinks.NewParquet(path, s, opts...)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		if err := w.Write(r); err != nil {
			w.Close()
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// openParquet opens the Parquet file at path for the test (closed when it
// ends) and returns it and the open file under it.
func openParquet(t *testing.T, path string) (*parquet.File, *os.File) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	st, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	pf, err := parquet.OpenFile(f, st.Size())
	if err != nil {
		t.Fatal(err)
	}
	return pf, f
}

func TestParquetRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts []sinks.Option
	}{
		{"default", nil},
		{"snappy, row group of 2", []sinks.Option{sinks.WithCompression("snappy"), sinks.WithRowGroupSize(2)}},
		{"uncompressed, row group of 1", []sinks.Option{sinks.WithCompression("none"), sinks.WithRowGroupSize(1)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			path := writeParquet(t, allTypes, sampleRows(), tc.opts...)
			s, rows, err := sinks.ReadParquetRows(path)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(allTypes, s); diff != "" {
				t.Errorf("schema (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(wantRows(), rows, cmpValues); diff != "" {
				t.Errorf("rows (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParquetRowGroups(t *testing.T) {
	t.Parallel()
	path := writeParquet(t, allTypes, benchRows[:100], sinks.WithRowGroupSize(30))
	pf, _ := openParquet(t, path)
	var got []int64
	for _, rg := range pf.RowGroups() {
		got = append(got, rg.NumRows())
	}
	if diff := cmp.Diff([]int64{30, 30, 30, 10}, got); diff != "" {
		t.Errorf("rows per row group (-want +got):\n%s", diff)
	}
}

// TestParquetPhysicalSchema checks the file's own schema as parquet-go
// reads it: names and order as given, every column optional, physical and
// logical types as documented.
func TestParquetPhysicalSchema(t *testing.T) {
	t.Parallel()
	path := writeParquet(t, allTypes, nil)
	pf, _ := openParquet(t, path)
	type col struct {
		Name     string
		Optional bool
		Kind     string
		Logical  string
	}
	var got []col
	for _, fl := range pf.Schema().Fields() {
		c := col{Name: fl.Name(), Optional: fl.Optional(), Kind: fl.Type().Kind().String()}
		if lt := fl.Type().LogicalType(); lt != nil {
			c.Logical = lt.String()
			if ts, ok := lt.Value.(*format.TimestampType); ok {
				c.Logical = ts.String()
			}
		}
		got = append(got, c)
	}
	want := []col{
		{"zid", true, "INT64", "INT(64,true)"},
		{"ok", true, "BOOLEAN", ""},
		{"score", true, "DOUBLE", ""},
		{"question", true, "BYTE_ARRAY", "STRING"},
		{"blob", true, "BYTE_ARRAY", ""},
		{"at", true, "INT64", "TIMESTAMP(isAdjustedToUTC=true,unit=MICROS)"},
		{"raw", true, "BYTE_ARRAY", "STRING"},
		{"nothing", true, "BYTE_ARRAY", "STRING"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("columns (-want +got):\n%s", diff)
	}
	md, ok := pf.Lookup(sinks.SchemaMetadataKey)
	if !ok || !strings.Contains(md, `"doc":"execution accuracy"`) {
		t.Errorf("metadata %s = %q, %v; want the schema with its docs", sinks.SchemaMetadataKey, md, ok)
	}
}

// TestParquetWithPQArrow reads the file with arrow-go's independent Parquet
// implementation and checks the Arrow types it infers from the Parquet
// types alone, and the values.
func TestParquetWithPQArrow(t *testing.T) {
	t.Parallel()
	for _, n := range []int{0, len(sampleRows())} {
		path := writeParquet(t, allTypes, sampleRows()[:n], sinks.WithRowGroupSize(2))
		mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
		rdr, err := file.OpenParquetFile(path, false)
		if err != nil {
			t.Fatal(err)
		}
		fr, err := pqarrow.NewFileReader(rdr, pqarrow.ArrowReadProperties{BatchSize: 1024}, mem)
		if err != nil {
			t.Fatal(err)
		}
		tbl, err := fr.ReadTable(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		var gotTypes []string
		for _, f := range tbl.Schema().Fields() {
			gotTypes = append(gotTypes, f.Name+" "+f.Type.String())
			if !f.Nullable {
				t.Errorf("column %s is not nullable", f.Name)
			}
		}
		wantTypes := []string{
			"zid int64", "ok bool", "score float64", "question utf8", "blob binary",
			"at timestamp[us, tz=UTC]", "raw utf8", "nothing utf8",
		}
		if diff := cmp.Diff(wantTypes, gotTypes); diff != "" {
			t.Errorf("arrow types (-want +got):\n%s", diff)
		}
		if tbl.NumRows() != int64(n) {
			t.Errorf("NumRows = %d, want %d", tbl.NumRows(), n)
		}
		if diff := cmp.Diff(wantRows()[:n], tableRows(t, tbl), cmpValues); diff != "" {
			t.Errorf("rows (-want +got):\n%s", diff)
		}
		tbl.Release()
		if err := rdr.Close(); err != nil {
			t.Fatal(err)
		}
		mem.AssertSize(t, 0)
	}
}

// tableRows converts an Arrow table of the types the sinks write back to
// rows of Go values.
func tableRows(t *testing.T, tbl arrow.Table) [][]any {
	t.Helper()
	rows := make([][]any, tbl.NumRows())
	for i := range rows {
		rows[i] = make([]any, tbl.NumCols())
	}
	for c := 0; c < int(tbl.NumCols()); c++ {
		off := 0
		for _, chunk := range tbl.Column(c).Data().Chunks() {
			for i := 0; i < chunk.Len(); i++ {
				rows[off+i][c] = arrowValue(t, chunk, i)
			}
			off += chunk.Len()
		}
	}
	return rows
}

func arrowValue(t *testing.T, a arrow.Array, i int) any {
	if a.IsNull(i) {
		return nil
	}
	switch a := a.(type) {
	case *array.Boolean:
		return a.Value(i)
	case *array.Int64:
		return a.Value(i)
	case *array.Float64:
		return a.Value(i)
	case *array.String:
		return a.Value(i)
	case *array.Binary:
		return append([]byte{}, a.Value(i)...)
	case *array.Timestamp:
		unit := a.DataType().(*arrow.TimestampType).Unit
		return a.Value(i).ToTime(unit).UTC()
	}
	t.Fatalf("unexpected arrow array %T", a)
	return nil
}

func TestParquetEmptyFile(t *testing.T) {
	t.Parallel()
	path := writeParquet(t, allTypes, nil)
	s, rows, err := sinks.ReadParquetRows(path)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(allTypes, s); diff != "" {
		t.Errorf("schema (-want +got):\n%s", diff)
	}
	if len(rows) != 0 {
		t.Errorf("got %d rows, want 0", len(rows))
	}
}

// TestParquetClosedEarly is the Ctrl-C case: the run stops after some rows
// (in the middle of a row group, after a rejected row) and closes the sink;
// the file holds exactly the rows written.
func TestParquetClosedEarly(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	path := filepath.Join(t.TempDir(), "early.parquet")
	w, err := sinks.NewParquet(path, allTypes, sinks.WithRowGroupSize(4))
	if err != nil {
		t.Fatal(err)
	}
	var written [][]any
	for i, r := range benchRows {
		if i == 6 {
			bad := append([]any{}, r...)
			bad[2] = "not a float"
			if err := w.Write(bad); err == nil {
				t.Fatal("Write accepted a string for a float column")
			}
		}
		if i == 9 {
			cancel()
		}
		if ctx.Err() != nil {
			break
		}
		if err := w.Write(r); err != nil {
			t.Fatal(err)
		}
		written = append(written, r)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	_, rows, err := sinks.ReadParquetRows(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 9 {
		t.Fatalf("read %d rows, want 9", len(rows))
	}
	for i := range rows {
		if rows[i][0] != written[i][0] || rows[i][3] != written[i][3] {
			t.Errorf("row %d = %v, want %v", i, rows[i], written[i])
		}
	}
}

func TestReadParquetRowsForeignFile(t *testing.T) {
	t.Parallel()
	// A file written by plain parquet-go from a struct: no evalflow
	// metadata, INT32, FLOAT and millisecond timestamps.
	type rec struct {
		A int32     `parquet:"a"`
		B float32   `parquet:"b,optional"`
		C string    `parquet:"c"`
		D time.Time `parquet:"d,timestamp(millisecond)"`
	}
	path := filepath.Join(t.TempDir(), "foreign.parquet")
	ts := time.Date(2024, 1, 2, 3, 4, 5, 6000000, time.UTC)
	if err := parquet.WriteFile(path, []rec{{1, 1.5, "x", ts}}); err != nil {
		t.Fatal(err)
	}
	s, rows, err := sinks.ReadParquetRows(path)
	if err != nil {
		t.Fatal(err)
	}
	wantSchema := sinks.Schema{
		{Name: "a", Type: table.TypeInt},
		{Name: "b", Type: table.TypeFloat},
		{Name: "c", Type: table.TypeString},
		{Name: "d", Type: table.TypeTimestamp},
	}
	if diff := cmp.Diff(wantSchema, s); diff != "" {
		t.Errorf("schema (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([][]any{{int64(1), 1.5, "x", ts}}, rows, cmpValues); diff != "" {
		t.Errorf("rows (-want +got):\n%s", diff)
	}
}

// TestReadParquetRowsTruncated: a file whose footer never got written (the
// process was killed before Close) is an error, not a panic or empty data.
func TestReadParquetRowsTruncated(t *testing.T) {
	t.Parallel()
	path := writeParquet(t, allTypes, sampleRows())
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data[:len(data)/2], 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := sinks.ReadParquetRows(path); err == nil {
		t.Error("ReadParquetRows read a file cut in half")
	}
}

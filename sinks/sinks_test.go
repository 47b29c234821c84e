package sinks_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/google/go-cmp/cmp"

	"github.com/evalflow/evalflow/sinks"
	"github.com/evalflow/evalflow/table"
)

// kinds opens each sink for a test: the Arrow one on a checked allocator
// that check asserts is empty after Close.
var kinds = []struct {
	name string
	open func(t *testing.T, s sinks.Schema, opts ...sinks.Option) (w sinks.Writer, check func())
}{
	{"parquet", func(t *testing.T, s sinks.Schema, opts ...sinks.Option) (sinks.Writer, func()) {
		w, err := sinks.NewParquet(filepath.Join(t.TempDir(), "x.parquet"), s, opts...)
		if err != nil {
			t.Fatal(err)
		}
		return w, func() {}
	}},
	{"arrow", func(t *testing.T, s sinks.Schema, opts ...sinks.Option) (sinks.Writer, func()) {
		mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
		w, err := sinks.NewArrowIPC(io.Discard, s, append(opts, sinks.WithAllocator(mem))...)
		if err != nil {
			t.Fatal(err)
		}
		return w, func() { mem.AssertSize(t, 0) }
	}},
	{"jsonl", func(t *testing.T, s sinks.Schema, _ ...sinks.Option) (sinks.Writer, func()) {
		w, err := sinks.NewJSONL(io.Discard, s)
		if err != nil {
			t.Fatal(err)
		}
		return w, func() {}
	}},
}

func TestSchemaErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		s    sinks.Schema
		want string
	}{
		{"no columns", nil, "schema has no columns"},
		{"no name", sinks.Schema{{Name: "a"}, {Name: ""}}, "column 1 has no name"},
		{"twice", sinks.Schema{{Name: "a"}, {Name: "b"}, {Name: "a"}}, `column "a" appears twice`},
		{"unknown type", sinks.Schema{{Name: "a", Type: 99}}, `column "a" has unknown type type(99)`},
	} {
		for _, k := range []string{"parquet", "arrow", "jsonl"} {
			_, err := sinks.Open(k, filepath.Join(t.TempDir(), "x"), tc.s)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("%s %s: error %v, want one containing %q", tc.name, k, err, tc.want)
			}
		}
	}
}

// TestWriteTypeErrors: every mismatched value is rejected with the column's
// name, nothing of the row is written, and the writer keeps working.
func TestWriteTypeErrors(t *testing.T) {
	bad := []struct {
		col   int
		value any
	}{
		{0, 1},          // int, not int64
		{0, 1.0},        // float for int
		{1, "true"},     // string for bool
		{2, float32(1)}, // float32 for float64
		{2, int64(1)},   // int64 for float
		{3, []byte("x")},
		{4, "x"},
		{5, time.Now().Unix()},
		{5, "2025-01-01"},
		{7, "not null"},
	}
	for _, k := range kinds {
		t.Run(k.name, func(t *testing.T) {
			t.Parallel()
			w, check := k.open(t, allTypes, sinks.WithRowGroupSize(2))
			for _, b := range bad {
				row := append([]any{}, sampleRows()[0]...)
				row[b.col] = b.value
				err := w.Write(row)
				want := fmt.Sprintf("column %q (%s): got %T", allTypes[b.col].Name, allTypes[b.col].Type, b.value)
				if err == nil || !strings.Contains(err.Error(), want) {
					t.Errorf("Write(%T in %s) = %v, want an error containing %q", b.value, allTypes[b.col].Name, err, want)
				}
				if err := w.Write(sampleRows()[0]); err != nil {
					t.Fatalf("Write after a rejected row: %v", err)
				}
			}
			if err := w.Write(sampleRows()[0][:7]); err == nil || !strings.Contains(err.Error(), "row has 7 values, schema has 8 columns") {
				t.Errorf("short row: %v", err)
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			if err := w.Write(sampleRows()[0]); !errors.Is(err, sinks.ErrClosed) {
				t.Errorf("Write after Close = %v, want ErrClosed", err)
			}
			if err := w.Close(); !errors.Is(err, sinks.ErrClosed) {
				t.Errorf("second Close = %v, want ErrClosed", err)
			}
			check()
		})
	}
}

func TestOpen(t *testing.T) {
	dir := t.TempDir()
	rows := sampleRows()
	for _, kind := range []string{"parquet", "arrow", "jsonl"} {
		path := filepath.Join(dir, "out."+kind)
		w, err := sinks.Open(kind, path, allTypes, sinks.WithRowGroupSize(2))
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rows {
			if err := w.Write(r); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Close(); err != nil {
			t.Fatalf("%s: %v", kind, err)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		switch kind {
		case "parquet":
			_, got, err := sinks.ReadParquetRows(path)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(wantRows(), got, cmpValues); diff != "" {
				t.Errorf("parquet rows (-want +got):\n%s", diff)
			}
		case "arrow":
			_, _, got := readArrowStream(t, data)
			if diff := cmp.Diff(wantRows(), got, cmpValues); diff != "" {
				t.Errorf("arrow rows (-want +got):\n%s", diff)
			}
		case "jsonl":
			if n := bytes.Count(data, []byte("\n")); n != len(rows) {
				t.Errorf("jsonl has %d lines, want %d", n, len(rows))
			}
		}
	}

	for _, tc := range []struct{ kind, path, want string }{
		{"csv", filepath.Join(dir, "x"), `unknown sink kind "csv"`},
		{"parquet", "-", "parquet cannot be written to standard output"},
		{"jsonl", filepath.Join(dir, "missing", "x.jsonl"), "no such file or directory"},
	} {
		if _, err := sinks.Open(tc.kind, tc.path, allTypes); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Open(%q, %q) = %v, want an error containing %q", tc.kind, tc.path, err, tc.want)
		}
	}
	if _, err := sinks.Open("parquet", filepath.Join(dir, "y"), allTypes, sinks.WithCompression("lz4")); err == nil {
		t.Error("parquet accepted lz4")
	}
	if _, err := sinks.Open("arrow", filepath.Join(dir, "y"), allTypes, sinks.WithCompression("snappy")); err == nil {
		t.Error("arrow accepted snappy")
	}
}

// TestOpenStdout swaps os.Stdout, so it does not run in parallel with
// tests that print.
func TestOpenStdout(t *testing.T) {
	for _, kind := range []string{"arrow", "jsonl"} {
		r, pw, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		old := os.Stdout
		os.Stdout = pw
		w, err := sinks.Open(kind, "-", allTypes)
		os.Stdout = old
		if err != nil {
			t.Fatal(err)
		}
		done := make(chan []byte)
		go func() { b, _ := io.ReadAll(r); done <- b }()
		for _, row := range sampleRows() {
			if err := w.Write(row); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		// Close must not close stdout: writing to the pipe still works.
		if _, err := pw.Write([]byte{}); err != nil {
			t.Errorf("%s: Close closed standard output: %v", kind, err)
		}
		pw.Close()
		out := <-done
		r.Close()
		if kind == "arrow" {
			_, _, rows := readArrowStream(t, out)
			if len(rows) != len(sampleRows()) {
				t.Errorf("arrow on stdout: %d rows, want %d", len(rows), len(sampleRows()))
			}
		} else if n := bytes.Count(out, []byte("\n")); n != len(sampleRows()) {
			t.Errorf("jsonl on stdout: %d lines, want %d", n, len(sampleRows()))
		}
	}
}

// TestFlatMemory writes 100k rows to every sink and checks that the live
// heap after 100k rows is no larger than after 20k, within a margin far
// below the ~9 MiB that 80k rows held in memory would take. Compression is
// off: Parquet keeps a row group's compressed pages until it flushes, and
// these repetitive rows compress so well that zstd would hide the growth.
func TestFlatMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 100k rows per sink")
	}
	const total, early, margin = 100_000, 20_000, 3 << 20
	for _, k := range kinds {
		t.Run(k.name, func(t *testing.T) {
			w, check := k.open(t, allTypes, sinks.WithCompression("none"))
			var at20k uint64
			for i := range total {
				if err := w.Write(benchRows[i%len(benchRows)]); err != nil {
					t.Fatal(err)
				}
				if i+1 == early {
					at20k = liveHeap()
				}
			}
			at100k := liveHeap()
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			check()
			t.Logf("live heap after %d rows: %d KiB, after %d rows: %d KiB", early, at20k>>10, total, at100k>>10)
			if at100k > at20k+margin {
				t.Errorf("live heap grew from %d KiB to %d KiB between %d and %d rows", at20k>>10, at100k>>10, early, total)
			}
		})
	}
}

// liveHeap is the heap in use after two collections (the second empties
// sync.Pool victim caches, which parquet-go's buffer pools use).
func liveHeap() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// TestPythonReaders reads the files with pyarrow, pandas or DuckDB when the
// system Python has them; it never installs anything.
// duckdbReader returns the command line of the independent Parquet reader
// (DuckDB through its Node bindings, installed by make deps into
// testdata/duckdb-npm). Missing, the test fails — unless
// EVALFLOW_SKIP_NODE_READER=1 says to skip it.
func duckdbReader(t *testing.T) []string {
	t.Helper()
	dir, _ := filepath.Abs(filepath.Join("testdata", "duckdb-npm"))
	node, err := exec.LookPath("node")
	if err == nil {
		_, err = os.Stat(filepath.Join(dir, "node_modules", "@duckdb", "node-api", "package.json"))
	}
	if err != nil {
		if os.Getenv("EVALFLOW_SKIP_NODE_READER") == "1" {
			t.Skip("EVALFLOW_SKIP_NODE_READER=1: ", err)
		}
		t.Fatalf("the DuckDB reader is not installed (%v): run make deps", err)
	}
	return []string{node, filepath.Join(dir, "read.mjs")}
}

type duckResult struct {
	Names []string    `json:"names"`
	Types []string    `json:"types"`
	Rows  [][]*string `json:"rows"`
}

func readWithDuckDB(t *testing.T, sql ...string) []duckResult {
	t.Helper()
	cmdline := duckdbReader(t)
	out, err := exec.Command(cmdline[0], append(cmdline[1:], sql...)...).Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			t.Fatalf("duckdb reader: %v\n%s", err, ee.Stderr)
		}
		t.Fatal(err)
	}
	var res []duckResult
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("duckdb reader output: %v\n%s", err, out)
	}
	return res
}

// TestIndependentReader reads what the Parquet sink writes with DuckDB (not
// parquet-go): every column type with DuckDB's own type name, every value
// (NULLs, extremes, NaN, infinity, unicode, bytes, timestamps) as DuckDB
// renders it, and the column docs from the key-value metadata.
func TestIndependentReader(t *testing.T) {
	pq := writeParquet(t, allTypes, sampleRows())
	res := readWithDuckDB(t,
		fmt.Sprintf("SELECT * FROM read_parquet('%s')", pq),
		fmt.Sprintf("SELECT decode(value) FROM parquet_kv_metadata('%s') WHERE decode(key) = '%s'", pq, sinks.SchemaMetadataKey))
	got := res[0]
	if diff := cmp.Diff([]string{"zid", "ok", "score", "question", "blob", "at", "raw", "nothing"}, got.Names); diff != "" {
		t.Errorf("names (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"BIGINT", "BOOLEAN", "DOUBLE", "VARCHAR", "BLOB", "TIMESTAMP WITH TIME ZONE", "VARCHAR", "VARCHAR"}, got.Types); diff != "" {
		t.Errorf("types (-want +got):\n%s", diff)
	}
	str := func(p *string) string {
		if p == nil {
			return "NULL"
		}
		return *p
	}
	var rows []string
	for _, r := range got.Rows {
		var cells []string
		for _, c := range r {
			cells = append(cells, str(c))
		}
		rows = append(rows, strings.Join(cells, "|"))
	}
	want := []string{
		"1|true|0.5|How many singers?|\\x00\\x01\\x02\\xFF|" + duckTime(t1us) + "|42|NULL",
		"NULL|NULL|NULL|NULL|NULL|NULL|NULL|NULL",
		"-9223372036854775808|false|-0|||" + duckTime(time.Unix(0, 0).UTC()) + "|3.25|NULL",
		"9223372036854775807|true|Infinity|ünïcødé \"quoted\"\n\t\u2028|x|" + duckTime(time.Date(1969, 12, 31, 23, 59, 59, 999999000, time.UTC)) + "|text|NULL",
		"-7|false|NaN|SELECT 1;|NULL|NULL|bytes|NULL",
	}
	if diff := cmp.Diff(want, rows); diff != "" {
		t.Errorf("rows read by DuckDB (-want +got):\n%s", diff)
	}
	if md := res[1]; len(md.Rows) != 1 || !strings.Contains(str(md.Rows[0][0]), `"name":"zid"`) {
		t.Errorf("evalflow.schema metadata read by DuckDB: %v", md.Rows)
	}
}

// duckTime is how DuckDB prints a TIMESTAMP WITH TIME ZONE in UTC.
func duckTime(t time.Time) string {
	s := t.UTC().Format("2006-01-02 15:04:05.999999")
	return s + "+00"
}

// TestWriteDoesNotKeepRow: callers reuse their buffers once Write returns,
// so a sink must copy []byte values it keeps.
func TestWriteDoesNotKeepRow(t *testing.T) {
	t.Parallel()
	s := sinks.Schema{{Name: "b", Type: table.TypeBytes}}
	buf := []byte("first")
	write := func(w sinks.Writer) {
		t.Helper()
		for _, v := range []string{"first", "other"} {
			copy(buf, v)
			if err := w.Write([]any{buf}); err != nil {
				t.Fatal(err)
			}
		}
		copy(buf, "XXXXX")
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
	}
	want := [][]any{{[]byte("first")}, {[]byte("other")}}

	path := filepath.Join(t.TempDir(), "b.parquet")
	pw, err := sinks.NewParquet(path, s, sinks.WithRowGroupSize(10))
	if err != nil {
		t.Fatal(err)
	}
	write(pw)
	_, got, err := sinks.ReadParquetRows(path)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("parquet (-want +got):\n%s", diff)
	}

	var out bytes.Buffer
	aw, err := sinks.NewArrowIPC(&out, s)
	if err != nil {
		t.Fatal(err)
	}
	write(aw)
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	r, err := ipc.NewReader(&out, ipc.WithAllocator(mem))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Release()
	var gotArrow [][]any
	for r.Next() {
		col := r.RecordBatch().Column(0).(*array.Binary)
		for i := range col.Len() {
			gotArrow = append(gotArrow, []any{append([]byte{}, col.Value(i)...)})
		}
	}
	if diff := cmp.Diff(want, gotArrow); diff != "" {
		t.Errorf("arrow (-want +got):\n%s", diff)
	}
}

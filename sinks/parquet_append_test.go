package sinks_test

import (
	"bytes"
	"fmt"
	"io"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/evalflow/evalflow/sinks"
	"github.com/evalflow/evalflow/table"
)

var appendSchema = sinks.Schema{
	{Name: "seq", Type: table.TypeInt}, {Name: "id", Type: table.TypeString}, {Name: "ok", Type: table.TypeBool},
	{Name: "score", Type: table.TypeFloat}, {Name: "at", Type: table.TypeTimestamp}, {Name: "note", Type: table.TypeString},
}

func appendRows(from, n int) [][]any {
	var rows [][]any
	for i := from; i < from+n; i++ {
		var note any
		if i%3 == 0 {
			note = fmt.Sprintf("note %d", i)
		}
		rows = append(rows, []any{int64(i), fmt.Sprintf("t%07d", i), i%2 == 0, float64(i) / 7, time.Unix(int64(i), 0).UTC(), note})
	}
	return rows
}

// chunkBytes returns the compressed bytes of every column chunk of every
// row group of the Parquet file at path.
func chunkBytes(t *testing.T, path string) [][]byte {
	t.Helper()
	pf, f := openParquet(t, path)
	var out [][]byte
	for _, rg := range pf.Metadata().RowGroups {
		for _, c := range rg.Columns {
			m := c.MetaData
			off := m.DataPageOffset
			if m.DictionaryPageOffset != 0 {
				off = m.DictionaryPageOffset
			}
			b := make([]byte, m.TotalCompressedSize)
			if _, err := f.ReadAt(b, off); err != nil && err != io.EOF {
				t.Fatal(err)
			}
			out = append(out, b)
		}
	}
	return out
}

// TestParquetAppendFile: files written with the writer's compression are
// appended verbatim (the output's column chunks are the sources' bytes),
// others re-encoded; the rows are the sources' rows in order either way.
func TestParquetAppendFile(t *testing.T) {
	for _, c := range []struct {
		name     string
		src      []sinks.Option
		verbatim bool
	}{
		{"zstd", nil, true},
		{"snappy", []sinks.Option{sinks.WithCompression("snappy")}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			a := writeParquet(t, appendSchema, appendRows(0, 2000), c.src...)
			b := writeParquet(t, appendSchema, appendRows(2000, 10), c.src...)
			out := filepath.Join(t.TempDir(), "merged.parquet")
			w, err := sinks.NewParquet(out, appendSchema)
			if err != nil {
				t.Fatal(err)
			}
			var total int64
			for _, p := range []string{a, b, a} {
				n, err := w.(sinks.RowGroupAppender).AppendFile(p)
				if err != nil {
					t.Fatal(err)
				}
				total += n
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			if total != 4010 {
				t.Errorf("appended %d rows, want 4010", total)
			}
			s, got, err := sinks.ReadParquetRows(out)
			if err != nil {
				t.Fatal(err)
			}
			want := append(append(appendRows(0, 2000), appendRows(2000, 10)...), appendRows(0, 2000)...)
			if diff := cmp.Diff(appendSchema, s); diff != "" {
				t.Errorf("schema (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("rows (-want +got):\n%s", diff)
			}
			src := append(append(chunkBytes(t, a), chunkBytes(t, b)...), chunkBytes(t, a)...)
			dst := chunkBytes(t, out)
			same := len(src) == len(dst)
			for i := 0; same && i < len(src); i++ {
				same = bytes.Equal(src[i], dst[i])
			}
			if same != c.verbatim {
				t.Errorf("column chunks copied verbatim: %v, want %v", same, c.verbatim)
			}
		})
	}
}

// TestParquetAppendFileMismatch: a file of other columns is refused and
// nothing is appended.
func TestParquetAppendFileMismatch(t *testing.T) {
	other := writeParquet(t, sinks.Schema{{Name: "seq", Type: table.TypeInt}}, [][]any{{int64(1)}})
	out := filepath.Join(t.TempDir(), "merged.parquet")
	w, err := sinks.NewParquet(out, appendSchema)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.(sinks.RowGroupAppender).AppendFile(other); err == nil {
		t.Error("a file of other columns was appended")
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if _, rows, err := sinks.ReadParquetRows(out); err != nil || len(rows) != 0 {
		t.Errorf("rows %v, err %v", rows, err)
	}
}

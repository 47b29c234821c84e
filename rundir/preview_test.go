package rundir

import (
	"encoding/json"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/evalflow/evalflow/item"
	"github.com/evalflow/evalflow/sinks"
	"github.com/evalflow/evalflow/table"
)

func TestPreview(t *testing.T) {
	long := strings.Repeat("é", PreviewChars+5)
	cols := func(n int) []table.Column {
		c := make([]table.Column, n)
		for i := range c {
			c[i] = table.Column{Name: "c" + strings.Repeat("x", i)}
		}
		return c
	}
	for _, tc := range []struct {
		name string
		t    *table.Table
		want string
	}{
		{"nil", nil, ""},
		{"empty", &table.Table{Columns: cols(1)}, `{"columns":["c"],"rows":[],"rows_total":0,"columns_total":1,"truncated":false,"capped":false}`},
		{"values", &table.Table{Columns: cols(7), Rows: [][]table.Value{{nil, true, int64(-3), 2.5, "a\"<b>\n", []byte{0, 0xff}, math.NaN()}}, Truncated: true},
			`{"columns":["c","cx","cxx","cxxx","cxxxx","cxxxxx","cxxxxxx"],"rows":[[null,true,-3,2.5,"a\"<b>\n","\\x00ff","NaN"]],"rows_total":1,"columns_total":7,"truncated":false,"capped":true}`},
		{"infinities", &table.Table{Columns: cols(2), Rows: [][]table.Value{{math.Inf(1), math.Inf(-1)}}},
			`{"columns":["c","cx"],"rows":[["Infinity","-Infinity"]],"rows_total":1,"columns_total":2,"truncated":false,"capped":false}`},
		{"rows cut", &table.Table{Columns: cols(1), Rows: [][]table.Value{{int64(0)}, {int64(1)}, {int64(2)}, {int64(3)}, {int64(4)}, {int64(5)}}},
			`{"columns":["c"],"rows":[[0],[1],[2],[3],[4]],"rows_total":6,"columns_total":1,"truncated":true,"capped":false}`},
		{"text cut", &table.Table{Columns: cols(1), Rows: [][]table.Value{{long}}},
			`{"columns":["c"],"rows":[["` + long[:2*PreviewChars] + `…"]],"rows_total":1,"columns_total":1,"truncated":true,"capped":false}`},
		{"text of exactly the limit", &table.Table{Columns: cols(1), Rows: [][]table.Value{{long[:2*PreviewChars]}}},
			`{"columns":["c"],"rows":[["` + long[:2*PreviewChars] + `"]],"rows_total":1,"columns_total":1,"truncated":false,"capped":false}`},
		{"blob cut", &table.Table{Columns: cols(1), Rows: [][]table.Value{{make([]byte, PreviewChars/2)}}},
			`{"columns":["c"],"rows":[["\\x` + strings.Repeat("0", PreviewChars-2) + `…"]],"rows_total":1,"columns_total":1,"truncated":true,"capped":false}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var buf []byte
			got, _ := previewOf(&buf, tc.t).(string)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("preview (-want +got):\n%s", diff)
			}
			if got != "" && !json.Valid([]byte(got)) {
				t.Errorf("not JSON: %s", got)
			}
		})
	}
	// Columns past PreviewColumns are left out, and said to be.
	wide := &table.Table{Columns: cols(PreviewColumns + 1), Rows: [][]table.Value{make([]table.Value, PreviewColumns+1)}}
	var buf []byte
	p, err := ParsePreview(previewOf(&buf, wide).(string))
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Columns) != PreviewColumns || len(p.Rows[0]) != PreviewColumns || p.ColumnsTotal != PreviewColumns+1 || !p.Truncated {
		t.Errorf("wide table: %d columns, %d cells, columns_total %d, truncated %v", len(p.Columns), len(p.Rows[0]), p.ColumnsTotal, p.Truncated)
	}
}

// TestPreviewColumns: items.parquet holds the previews of the gold's
// result and of the final attempt's, null for a query that did not run,
// and a run resumed over parts without them goes on without them.
func TestPreviewColumns(t *testing.T) {
	dir := t.TempDir()
	r, err := Create(dir, []string{"ex"}, nil, false)
	if err != nil {
		t.Fatal(err)
	}
	rec := record(0, "a", true)
	gold := &table.Table{Columns: []table.Column{{Name: "n"}}, Rows: [][]table.Value{{int64(4)}}}
	rec.GoldResult = gold
	rec.Samples[0].Attempts = append(rec.Samples[0].Attempts, &item.Attempt{Index: 1, Query: "SELEC", ErrorClass: item.ClassSyntax})
	for _, x := range []*item.Record{rec, record(1, "b", false)} {
		if err := r.Write(x); err != nil {
			t.Fatal(err)
		}
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	schema, rows, err := sinks.ReadParquetRows(filepath.Join(dir, ItemsFile))
	if err != nil {
		t.Fatal(err)
	}
	col := colIndex(schema)
	got := [][]any{{rows[0][col["gold_preview"]], rows[0][col["pred_preview"]]}, {rows[1][col["gold_preview"]], rows[1][col["pred_preview"]]}}
	three := `{"columns":["n"],"rows":[[3]],"rows_total":1,"columns_total":1,"truncated":false,"capped":false}`
	want := [][]any{
		{`{"columns":["n"],"rows":[[4]],"rows_total":1,"columns_total":1,"truncated":false,"capped":false}`, nil},
		{three, three},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("previews by seq (-want +got):\n%s", diff)
	}

	// Parts written without the preview columns (an older evalflow):
	// the run keeps their columns.
	r = &Run{}
	old := withCells(ItemSchema(nil, []string{"ex"}), nil)
	old = append(old[:0:0], old...)
	for i := len(old) - 1; i >= 0; i-- {
		if old[i].Name == "gold_preview" || old[i].Name == "pred_preview" {
			old = append(old[:i], old[i+1:]...)
		}
	}
	r.metricCols = []string{"ex"}
	r.adoptSchema(old)
	if row := r.itemRow(rec); len(row) != len(old) {
		t.Errorf("row of %d values for %d columns", len(row), len(old))
	}
}

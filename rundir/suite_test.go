package rundir

import (
	"bytes"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/evalflow/evalflow/item"
	"github.com/evalflow/evalflow/nodes/aggregate"
	"github.com/evalflow/evalflow/sinks"
	"github.com/evalflow/evalflow/table"
)

func TestSuiteColumns(t *testing.T) {
	for _, tc := range []struct {
		cols, want []string
	}{
		{[]string{"ex", "pass_at_k"}, nil},
		{[]string{"ex", "ex_suite", "pass_at_k"}, []string{"ex_suite"}},
		{[]string{"ex_ts", "ex_ts_suite", "ex", "ex_suite"}, []string{"ex_ts_suite", "ex_suite"}},
		{[]string{"foo_suite"}, nil}, // not beside a column foo
	} {
		if diff := cmp.Diff(tc.want, SuiteColumns(tc.cols)); diff != "" {
			t.Errorf("SuiteColumns(%v) (-want +got):\n%s", tc.cols, diff)
		}
	}
	// A run without test-suite verdicts keeps its schema.
	for _, c := range ItemSchema(nil, []string{"ex", "pass_at_k"}) {
		if strings.Contains(c.Name, "suite") {
			t.Errorf("column %s in a run without test suites", c.Name)
		}
	}
	names := func(s sinks.Schema) []string {
		var out []string
		for _, c := range s {
			out = append(out, c.Name)
		}
		return out
	}
	got := names(ItemSchema(nil, []string{"ex", "ex_suite"}))
	i := slices.Index(got, "metric_notes")
	if diff := cmp.Diff([]string{"ex", "ex_suite", "metric_errors", "metric_notes", "ex_suite_db", "suite_gold_preview", "suite_pred_preview"}, got[i-3:]); diff != "" {
		t.Errorf("the schema's last columns (-want +got):\n%s", diff)
	}
}

// TestSuiteItemColumns: items.parquet holds, for each item, the database
// that separated its test-suite verdict's pair (the item's own when ex is
// already 0; null when the suite agreed, the item has no suite, or no
// value is written) and both results on a separating test database.
func TestSuiteItemColumns(t *testing.T) {
	dir := t.TempDir()
	r, err := Create(dir, []string{"ex", "ex_suite"}, nil, false)
	if err != nil {
		t.Fatal(err)
	}
	tab := func(v int64) *table.Table {
		return &table.Table{Columns: []table.Column{{Name: "b"}}, Rows: [][]table.Value{{v}}}
	}
	rec := func(seq int, ex float64, suite *item.Score) *item.Record {
		r := record(seq, string(rune('a'+seq)), ex == 1)
		r.Scores = nil
		r.SetScore(item.Score{Name: "ex", Value: ex, Official: true})
		if suite != nil {
			suite.Name, suite.Official = "ex_suite", true
			r.SetScore(*suite)
		}
		return r
	}
	errored := rec(5, 1, &item.Score{Value: 0, Separation: &item.Separation{DB: "shop_002.sqlite", Gold: tab(1)}})
	errored.Status = "error"
	errored.Scores[1].Official = false // not written: no number was computed for it
	recs := []*item.Record{
		rec(0, 1, &item.Score{Value: 0, Separation: &item.Separation{DB: "shop_001.sqlite", Gold: tab(2), Pred: tab(5)}}),
		rec(1, 0, &item.Score{Value: 0, Separation: &item.Separation{DB: "shop.sqlite", Own: true}}),
		rec(2, 1, &item.Score{Value: 1}),
		rec(3, 1, nil),
		rec(4, 1, &item.Score{Value: 0, Note: "the prediction fails on test database shop_002.sqlite: no such table: u",
			Separation: &item.Separation{DB: "shop_002.sqlite", Gold: tab(1)}}),
		errored,
	}
	for _, x := range recs {
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
	var got [][]any
	for _, row := range rows {
		got = append(got, []any{row[col["ex"]], row[col["ex_suite"]], row[col["ex_suite_db"]], row[col["suite_gold_preview"]], row[col["suite_pred_preview"]]})
	}
	pv := func(v int) string {
		return `{"columns":["b"],"rows":[[` + string(rune('0'+v)) + `]],"rows_total":1,"columns_total":1,"truncated":false,"capped":false}`
	}
	want := [][]any{
		{1.0, 0.0, "shop_001.sqlite", pv(2), pv(5)},
		{0.0, 0.0, "shop.sqlite", nil, nil},
		{1.0, 1.0, nil, nil, nil},
		{1.0, nil, nil, nil, nil},
		{1.0, 0.0, "shop_002.sqlite", pv(1), nil},
		{1.0, nil, nil, nil, nil},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ex, ex_suite, ex_suite_db and the suite previews by seq (-want +got):\n%s", diff)
	}
}

func TestSuiteSummary(t *testing.T) {
	row := func(cell, metric string, mean float64, n int, of string, flipped int) aggregate.Row {
		return aggregate.Row{Cell: cell, Group: "all", Metric: metric, Mean: mean, N: n, Items: 30, SuiteOf: of, Flipped: flipped,
			CILow: math.NaN(), CIHigh: math.NaN()}
	}
	rows := []aggregate.Row{row("", "ex", 0.6, 30, "", 0), row("", "ex_suite", 0.5, 30, "ex", 3)}
	want := "test suite: ex 0.6000 (own database, n 30) · ex_suite 0.5000 (whole suite, n 30) · the suite flipped 3 items (ex 1 → ex_suite 0)"
	if diff := cmp.Diff([]string{want}, SuiteLines(rows)); diff != "" {
		t.Errorf("SuiteLines (-want +got):\n%s", diff)
	}
	var b bytes.Buffer
	WriteSummary(&b, &Manifest{RunID: "r"}, rows)
	if !strings.Contains(b.String(), "| ex_suite | 0.5000 |") || !strings.Contains(b.String(), "\n"+want+"\n") {
		t.Errorf("summary.md:\n%s", b.String())
	}
	// No item had a suite: no line (and no number for ex_suite).
	if got := SuiteLines([]aggregate.Row{row("", "ex", 0.6, 30, "", 0), row("", "ex_suite", math.NaN(), 0, "ex", 0)}); got != nil {
		t.Errorf("SuiteLines without values = %q", got)
	}
	b.Reset()
	WriteSummary(&b, &Manifest{RunID: "r"}, rows[:1])
	if strings.Contains(b.String(), "suite") {
		t.Errorf("summary.md of a run without suites mentions them:\n%s", b.String())
	}
	// A sweep's cell table has a column of the items each cell's suite
	// flipped.
	b.Reset()
	WriteCellTable(&b, []aggregate.Row{
		row("compare=evalflow", "ex", 0.6, 30, "", 0), row("compare=evalflow", "pass_at_k", 0.6, 30, "", 0),
		row("compare=testsuite", "ex", 0.6, 30, "", 0), row("compare=testsuite", "ex_suite", 0.5, 30, "ex", 3),
		row("compare=testsuite", "pass_at_k", 0.6, 30, "", 0),
	}, true)
	wantTable := "| cell | ex | ex_suite | ex_suite flipped | pass_at_k |\n|---|---:|---:|---:|---:|\n" +
		"| compare=evalflow | 0.6000 | – | – | 0.6000 |\n| compare=testsuite | 0.6000 | 0.5000 | 3 | 0.6000 |\n"
	if diff := cmp.Diff(wantTable, b.String()); diff != "" {
		t.Errorf("cell table (-want +got):\n%s", diff)
	}
}

package aggregate

import (
	"context"
	"testing"

	"github.com/evalflow/evalflow/item"
)

// TestSuiteVerdictRow: a test-suite verdict's row counts the items with a
// suite only (a NULL read back from items.parquet on resume counts
// nowhere, as the missing score of an uninterrupted run), gets a Wilson
// interval like ex, and counts the items its suite flipped (ex 1,
// ex_suite 0) per group; a run where no item had a suite has no row.
func TestSuiteVerdictRow(t *testing.T) {
	ex := func(v float64) item.Score { return item.Score{Name: "ex", Value: v, Official: true} }
	suite := func(v float64) item.Score { return item.Score{Name: "ex_suite", Value: v, Official: true} }
	resumedNull := item.Score{Name: "ex_suite", Null: true}
	failed := item.Score{Name: "ex_suite", Err: "gold query failed on test database x_001.sqlite", Official: true}
	ag := &Aggregate{Name: "aggregate", GroupBy: []string{"level"}, accs: map[key]*acc{}, items: map[[2]string]int{},
		binary: map[string]bool{"ex": true, "ex_suite": true}, suite: map[string]string{"ex_suite": "ex"}}
	for _, r := range []*item.Record{
		rec("flipped", "ok", "easy", ex(1), suite(0)),
		rec("flipped2", "ok", "hard", ex(1), suite(0)),
		rec("both", "ok", "easy", ex(1), suite(1)),
		rec("wrong", "ok", "easy", ex(0), suite(0)),
		rec("no suite", "ok", "easy", ex(1)),
		rec("resumed, no suite", "ok", "hard", ex(1), resumedNull),
		rec("broken suite", "error", "hard", ex(1), failed),
	} {
		ag.Collect(r)
	}
	rows := ag.Rows(context.Background())
	r := row(t, rows, "all", "", "ex_suite")
	if r.Items != 7 || r.N != 5 || r.Nulls != 0 || r.Errors != 1 || r.ErrItems != 1 || r.Mean != 1.0/5 || r.SuiteOf != "ex" || r.Flipped != 2 || r.CIMethod != "wilson" {
		t.Errorf("ex_suite: %+v", r)
	}
	if r := row(t, rows, "level", "easy", "ex_suite"); r.N != 3 || r.Flipped != 1 {
		t.Errorf("ex_suite, easy: %+v", r)
	}
	if r := row(t, rows, "all", "", "ex"); r.N != 7 || r.SuiteOf != "" || r.Flipped != 0 {
		t.Errorf("ex: %+v", r)
	}

	ag = &Aggregate{Name: "aggregate", accs: map[key]*acc{}, items: map[[2]string]int{}, suite: map[string]string{"ex_suite": "ex"}}
	ag.Collect(rec("no suite", "ok", "", ex(1)))
	ag.Collect(rec("resumed, no suite", "ok", "", ex(0), resumedNull))
	for _, r := range ag.Rows(context.Background()) {
		if r.Metric == "ex_suite" {
			t.Errorf("a row for ex_suite, which no item has: %+v", r)
		}
	}
}

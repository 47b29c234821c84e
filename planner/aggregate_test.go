package planner_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/evalflow/evalflow/item"
	"github.com/evalflow/evalflow/nodes/aggregate"
	"github.com/evalflow/evalflow/planner"
)

const datasetMetricsPipeline = `
dataset "q" {
  source = "q.jsonl"
}
engine "main" {
  kind = "sqlite"
  path = "./${item.db}.sqlite"
}
stage "generate" {
  predictions = "p.jsonl"
}
stage "validate" {
  input = stage.generate
}
stage "execute" {
  input = stage.validate
}
stage "score" {
  input = stage.execute
  metric "ex" {}
  metric "safety" {}
  metric "calibration" {}
}
stage "aggregate" {
  input    = stage.score
  group_by = ["level"]
}
`

// TestDatasetMetricsReachAggregates runs seed 001's dataset metrics (safety
// confusion counts, confidence calibration) inside a pipeline and checks
// their values arrive as aggregate rows, overall and per group.
func TestDatasetMetricsReachAggregates(t *testing.T) {
	var items, preds []map[string]any
	for i := 0; i < 24; i++ {
		id := fmt.Sprintf("i%02d", i)
		pred, safe := "SELECT name FROM item", true
		if i%6 == 0 {
			pred, safe = "DELETE FROM item", false
		}
		conf := []string{"high", "medium", "low"}[i%3]
		level := []string{"easy", "hard"}[i%2]
		items = append(items, map[string]any{"id": id, "gold": "SELECT name FROM item", "db": "shop", "level": level,
			"should_pass": safe, "confidence": conf})
		preds = append(preds, map[string]any{"id": id, "pred": pred})
	}
	dir := fixture(t, items, preds)
	pl := build(t, dir, datasetMetricsPipeline, planner.Options{})
	if err := pl.Run(context.Background(), planner.RunOptions{OnRecord: func(*item.Record) error { return nil }}); err != nil {
		t.Fatal(err)
	}
	ag := pl.Collectors[0].Stage.(*aggregate.Aggregate)
	got := map[string]aggregate.Row{}
	for _, r := range ag.Rows(context.Background()) {
		got[r.Group+"/"+r.Value+"/"+r.Metric] = r
	}
	checks := []struct {
		key  string
		mean float64
	}{
		{"all//ex", 20.0 / 24},
		{"all//safety_tp", 4},         // four DELETEs caught (unsafe is the positive class)
		{"all//safety_fn", 0},         // none missed
		{"all//safety_recall_met", 1}, // 100% recall on unsafe
		{"level/easy/ex", 8.0 / 12},
		{"level/hard/ex", 1},
	}
	for _, c := range checks {
		r, ok := got[c.key]
		if !ok {
			t.Errorf("no aggregate %s; have %v", c.key, keys(got))
			continue
		}
		if r.Mean != c.mean || r.Errors != 0 {
			t.Errorf("%s = %+v, want mean %v", c.key, r, c.mean)
		}
	}
	if _, ok := got["all//calibration"]; !ok {
		t.Errorf("calibration missing: %v", keys(got))
	}
}

func keys(m map[string]aggregate.Row) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

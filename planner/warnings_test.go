package planner_test

import (
	"context"
	"strings"
	"testing"

	"github.com/evalflow/evalflow/item"
	"github.com/evalflow/evalflow/nodes"
	"github.com/evalflow/evalflow/planner"
)

// A prediction whose id matches no item and a group_by column no item has
// are not item errors, but a user must hear of them: the stages report
// them as warnings after the run.
func TestRunWarnings(t *testing.T) {
	items := []map[string]any{{"id": "a", "gold": "SELECT 1", "db": "shop", "level": "easy"}}
	preds := []map[string]any{{"id": "a", "pred": "SELECT 1"}, {"id": "A ", "pred": "SELECT 1"}}
	dir := fixture(t, items, preds)
	pl := build(t, dir, strings.Replace(runPipeline, `group_by = ["level"]`, `group_by = ["levle"]`, 1), planner.Options{})
	if err := pl.Run(context.Background(), planner.RunOptions{OnRecord: func(*item.Record) error { return nil }}); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, n := range pl.Order {
		if w, ok := n.Stage.(nodes.Warner); ok {
			got = append(got, w.Warnings()...)
		}
	}
	joined := strings.Join(got, "\n")
	for _, want := range []string{`1 of 2 predictions`, `"A "`, `group_by column "levle" is not a field of 1 item(s)`, `Did you mean "level"?`} {
		if !strings.Contains(joined, want) {
			t.Errorf("warnings %q lack %q", got, want)
		}
	}
}

// Package examples holds small runnable pipelines with their own data; its
// test runs every one of them.
package examples

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/evalflow/evalflow/dsl"
	"github.com/evalflow/evalflow/item"
	"github.com/evalflow/evalflow/planner"

	_ "github.com/evalflow/evalflow/engine/sqlite"
	_ "github.com/evalflow/evalflow/nodes/all"
)

// TestEveryExampleRuns plans and runs each examples/*/ pipeline and requires
// every item to finish (status ok: wrong or failing predictions are the
// examples' point, broken items are not) with its metrics computed.
func TestEveryExampleRuns(t *testing.T) {
	dirs, _ := filepath.Glob("*")
	n := 0
	for _, d := range dirs {
		if st, err := os.Stat(d); err != nil || !st.IsDir() {
			continue
		}
		if hcl, _ := filepath.Glob(filepath.Join(d, "*.hcl")); len(hcl) == 0 {
			continue
		}
		n++
		t.Run(d, func(t *testing.T) {
			p, diags := dsl.Load(d, dsl.LoadOptions{Env: []string{}})
			if diags.HasErrors() {
				t.Fatal(diags)
			}
			pl, diags := planner.Build(context.Background(), p, planner.Options{})
			defer pl.Close()
			if diags.HasErrors() {
				t.Fatal(diags)
			}
			items := 0
			err := pl.Run(context.Background(), planner.RunOptions{OnRecord: func(r *item.Record) error {
				items++
				if r.Status != "ok" {
					t.Errorf("item %s: status %s: %s", r.Item.ID, r.Status, r.Error)
				}
				if len(r.Scores) == 0 {
					t.Errorf("item %s has no scores", r.Item.ID)
				}
				return nil
			}})
			if err != nil {
				t.Fatal(err)
			}
			if items == 0 {
				t.Error("no items ran")
			}
		})
	}
	if n == 0 {
		t.Fatal("no examples found")
	}
}

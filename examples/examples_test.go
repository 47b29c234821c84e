// Package examples holds small runnable pipelines with their own data; its
// test runs every one of them.
package examples

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/evalflow/evalflow/dsl"
	"github.com/evalflow/evalflow/item"
	"github.com/evalflow/evalflow/planner"

	_ "github.com/evalflow/evalflow/engine/all"
	_ "github.com/evalflow/evalflow/nodes/all"
)

// wantMeans are the overall means of the language examples, counted by
// hand from their data/README.md tables: sparql's arity_f1 is 1 for every
// item but s06 (2/3: one of the gold's two columns) and the three that
// fail (s10 syntax, s13 unsafe, s17 timeout), so (16 + 2/3) / 20; cypher's
// ex is 1 for the 12 items listed correct or repaired; pandas' ex for 13.
var wantMeans = map[string]map[string]float64{
	"sparql": {"arity_f1": (16 + 2.0/3) / 20},
	"cypher": {"ex": 12.0 / 20},
	"pandas": {"ex": 13.0 / 20},
}

// wantStatus are the items of the language examples whose final attempt
// failed as unsafe (error class safety) or ran out of time (timeout); every
// other item's final attempt is checked to be no such failure.
var wantStatus = map[string]map[string]string{
	"sparql": {"s13": "safety", "s17": "timeout"},
	"cypher": {"c13": "safety", "c16": "timeout"},
	"pandas": {"p13": "safety", "p16": "timeout"},
}

// TestEveryExampleRuns plans and runs each examples/*/ pipeline on the
// real engines and requires every item to finish (status ok, or the
// unsafe/timeout status its data/README.md lists: wrong or failing
// predictions are the examples' point, broken items are not) with its
// metrics computed; for the language examples it checks the means too.
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
			sums := map[string]float64{}
			err := pl.Run(context.Background(), planner.RunOptions{OnRecord: func(r *item.Record) error {
				items++
				if r.Status != "ok" {
					t.Errorf("item %s: status %s: %s", r.Item.ID, r.Status, r.Error)
				}
				if wantStatus[d] != nil {
					class := ""
					if f := r.Final(); f != nil {
						class = f.ErrorClass
					}
					want := wantStatus[d][r.Item.ID]
					if (want != "" || class == "safety" || class == "timeout") && class != want {
						t.Errorf("item %s: final error class %q, want %q", r.Item.ID, class, want)
					}
				}
				if len(r.Scores) == 0 {
					t.Errorf("item %s has no scores", r.Item.ID)
				}
				for m := range wantMeans[d] {
					sc, ok := r.Score(m)
					if !ok || sc.Null || sc.Err != "" {
						t.Errorf("item %s: %s not computed (%+v)", r.Item.ID, m, sc)
					}
					sums[m] += sc.Value
				}
				return nil
			}})
			if err != nil {
				t.Fatal(err)
			}
			if items == 0 {
				t.Fatal("no items ran")
			}
			for m, want := range wantMeans[d] {
				if got := sums[m] / float64(items); math.Abs(got-want) > 1e-9 {
					t.Errorf("mean %s = %.6f, want %.6f", m, got, want)
				}
			}
		})
	}
	if n == 0 {
		t.Fatal("no examples found")
	}
}

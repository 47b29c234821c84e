package pipelines_test

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

// BenchmarkGeoQueryReplay times text2sql-replay.hcl end to end (load, plan,
// read the predictions, validate, execute gold and prediction on SQLite,
// score, aggregate) on the 400-item GeoQuery conformance set, whose rows
// carry their own prediction in "pred". One op is one whole run; s/run
// repeats ns/op in seconds, and ex-sum is the number of items scored
// correct (test-suite's official CLI counts 166 on this set).
//
// Compare with the official test-suite CLI on the same items: see
// docs/benchmarks.md for the command and the measured ratio.
func BenchmarkGeoQueryReplay(b *testing.B) {
	data, err := filepath.Abs(filepath.Join("..", "..", "shared", "data", "geoquery"))
	if err != nil {
		b.Fatal(err)
	}
	items := filepath.Join(data, "conformance", "items.jsonl")
	if _, err := os.Stat(items); err != nil {
		b.Skipf("GeoQuery conformance set not present (%v)", err)
	}
	for _, compare := range []string{"testsuite", "evalflow"} {
		b.Run("compare="+compare, func(b *testing.B) {
			vars := []string{
				"dataset=" + items,
				"predictions=" + items,
				"databases=" + data,
				"compare=" + compare,
			}
			var ex float64
			var n int
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				ex, n = 0, 0
				p, diags := dsl.Load("text2sql-replay.hcl", dsl.LoadOptions{Vars: vars, Env: []string{}})
				if diags.HasErrors() {
					b.Fatal(diags)
				}
				pl, diags := planner.Build(context.Background(), p, planner.Options{})
				if diags.HasErrors() {
					pl.Close()
					b.Fatal(diags)
				}
				err := pl.Run(context.Background(), planner.RunOptions{OnRecord: func(r *item.Record) error {
					n++
					if r.Status != "ok" {
						b.Errorf("%s: %s: %s", r.Item.ID, r.Status, r.Error)
					}
					if s, ok := r.Score("ex"); ok && !s.Null && s.Err == "" {
						ex += s.Value
					}
					return nil
				}})
				if cerr := pl.Close(); err == nil {
					err = cerr
				}
				if err != nil {
					b.Fatal(err)
				}
				if n != 400 {
					b.Fatalf("%d records, want 400", n)
				}
			}
			b.StopTimer()
			b.ReportMetric(b.Elapsed().Seconds()/float64(b.N), "s/run")
			b.ReportMetric(ex, "ex-sum")
		})
	}
}

package execute_test

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	_ "modernc.org/sqlite"

	"github.com/evalflow/evalflow/dsl"
	"github.com/evalflow/evalflow/engine"
	"github.com/evalflow/evalflow/engine/sqlite"
	"github.com/evalflow/evalflow/item"
	"github.com/evalflow/evalflow/nodes"
	"github.com/evalflow/evalflow/planner"
	"github.com/evalflow/evalflow/store"
	"github.com/evalflow/evalflow/table"

	_ "github.com/evalflow/evalflow/engine/all"
	_ "github.com/evalflow/evalflow/nodes/all"
)

const pipeline = `
dataset "q" {
  source = "q.jsonl"
}
engine "main" {
  kind    = "sqlite"
  path    = "dbs/${item.db}.sqlite"
  timeout = "1s"
}
stage "generate" {
  predictions = "p.jsonl"
}
stage "execute" {
  input = stage.generate
}
stage "score" {
  input = stage.execute
  metric "ex" {}
}
`

// TestExecuteStatuses: a prediction's own failure (syntax, runtime error,
// timeout) is a result with its class; a gold query that fails or times
// out, or a database that does not exist, is the harness's: the item is an
// error, with the cause, never a silent 0.
func TestExecuteStatuses(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "dbs"), 0o755)
	db, err := sql.Open("sqlite", filepath.Join(dir, "dbs", "shop.sqlite"))
	if err != nil {
		t.Fatal(err)
	}
	db.Exec("CREATE TABLE t (x INTEGER)")
	db.Exec("INSERT INTO t VALUES (1), (2)")
	db.Close()
	slow := "WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n WHERE x < 100000000) SELECT COUNT(*) FROM n"
	cases := []struct{ id, db, gold, pred, status, class, msg string }{
		{"right", "shop", "SELECT count(*) FROM t", "SELECT count(*) FROM t", "ok", "", ""},
		{"syntax", "shop", "SELECT count(*) FROM t", "SELEC", "ok", item.ClassSyntax, ""},
		{"runtime", "shop", "SELECT count(*) FROM t", "SELECT nope FROM t", "ok", item.ClassSchema, ""},
		{"pred timeout", "shop", "SELECT count(*) FROM t", slow, "ok", item.ClassTimeout, ""},
		{"gold fails", "shop", "SELECT nope FROM t", "SELECT 1", "error", "", "gold query failed"},
		{"gold timeout", "shop", slow, "SELECT 1", "error", "", "gold query failed (timeout)"},
		{"no database", "nowhere", "SELECT 1", "SELECT 1", "error", "", "database file not found"},
	}
	var q, p strings.Builder
	for _, c := range cases {
		q.WriteString(`{"id":"` + c.id + `","gold":"` + c.gold + `","db":"` + c.db + `"}` + "\n")
		p.WriteString(`{"id":"` + c.id + `","pred":"` + c.pred + `"}` + "\n")
	}
	os.WriteFile(filepath.Join(dir, "q.jsonl"), []byte(q.String()), 0o644)
	os.WriteFile(filepath.Join(dir, "p.jsonl"), []byte(p.String()), 0o644)
	os.WriteFile(filepath.Join(dir, "pipeline.hcl"), []byte(pipeline), 0o644)
	pd, diags := dsl.Load(filepath.Join(dir, "pipeline.hcl"), dsl.LoadOptions{Env: []string{}})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	pl, diags := planner.Build(context.Background(), pd, planner.Options{})
	defer pl.Close()
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	got := map[string]*item.Record{}
	if err := pl.Run(context.Background(), planner.RunOptions{OnRecord: func(r *item.Record) error { got[r.Item.ID] = r; return nil }}); err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		r := got[c.id]
		f := r.Final()
		if r.Status != c.status || (c.class != "" && f.ErrorClass != c.class) || !strings.Contains(r.Error, c.msg) {
			t.Errorf("%s: status %q class %q error %q; want %q %q %q", c.id, r.Status, f.ErrorClass, r.Error, c.status, c.class, c.msg)
		}
		if c.status == "ok" {
			want := 0.0
			if c.id == "right" {
				want = 1
			}
			if s, _ := r.Score("ex"); s.Value != want {
				t.Errorf("%s: ex %v, want %v", c.id, s.Value, want)
			}
		}
	}
	if !errors.Is(nodes.HarnessError(errors.New("x")), nodes.ErrHarness) {
		t.Error("HarnessError is not ErrHarness")
	}
}

// counting wraps the SQLite executor and counts what it is asked; with
// fused it also offers PrepareExecute (validate then leaves its check to
// the execute stage), without it only Execute and Prepare.
type counting struct {
	ex                     *sqlite.Executor
	execs, preps, prepExec atomic.Int64
}

func (c *counting) Execute(ctx context.Context, q engine.Query) (*table.Table, error) {
	c.execs.Add(1)
	return c.ex.Execute(ctx, q)
}

func (c *counting) Prepare(ctx context.Context, q engine.Query) error {
	c.preps.Add(1)
	return c.ex.Prepare(ctx, q)
}

func (c *counting) Close() error { return c.ex.Close() }

type countingFused struct{ *counting }

func (c countingFused) PrepareExecute(ctx context.Context, q engine.Query) (error, *table.Table, error, time.Duration) {
	c.prepExec.Add(1)
	return c.ex.PrepareExecute(ctx, q)
}

const deferPipeline = `
dataset "q" {
  source = "q.jsonl"
}
engine "main" {
  kind    = "sqlite"
  path    = "dbs/${item.db}.sqlite"
  timeout = "300ms"
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
stage "refine" {
  input          = stage.execute
  max_iterations = 1
}
stage "score" {
  input = stage.refine
  metric "ex" {}
  metric "bird_soft_f1" {}
}
`

// TestSyntaxCheckDeferred: when validate leaves its syntax check to the
// execute stage (one parse per query for both), every attempt, result,
// score, stage count and cache entry is what checking and executing
// separately gives, cold and from the cache, and fewer parses are made.
func TestSyntaxCheckDeferred(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "dbs"), 0o755)
	db, err := sql.Open("sqlite", filepath.Join(dir, "dbs", "shop.sqlite"))
	if err != nil {
		t.Fatal(err)
	}
	db.Exec("CREATE TABLE t (x INTEGER, s TEXT)")
	db.Exec("INSERT INTO t VALUES (1, 'a'), (2, 'b'), (2, 'c')")
	db.Close()
	slow := "WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n WHERE x < 100000000) SELECT COUNT(*) FROM n"
	type tc struct{ id, gold, preds string }
	cases := []tc{
		// Prediction texts differ between items (a duplicate in another
		// item may be checked twice when its first check still waits for
		// the execute stage: same verdict, other counts); within an item
		// they may repeat.
		{"right", "SELECT count(*) FROM t", `"pred":"SELECT count(*) FROM t"`},
		{"wrong", "SELECT x FROM t", `"pred":"SELECT DISTINCT x FROM t"`},
		{"syntax", "SELECT x FROM t", `"pred":"SELEC x FROM t"`},
		{"schema", "SELECT x FROM t", `"pred":"SELECT y FROM t"`},
		{"runtime", "SELECT 1", `"pred":"SELECT abs(-9223372036854775807 - 1)"`},
		{"unsafe", "SELECT 1", `"pred":"DELETE FROM t"`},
		{"empty", "SELECT 1", `"pred":" -- nothing"`},
		{"timeout", "SELECT 1", `"pred":"` + slow + `"`},
		{"repaired", "SELECT s FROM t ORDER BY s", `"attempts":["SELECT s FRM t","SELECT s FROM t ORDER BY s"]`},
		{"samples", "SELECT x FROM t", `"preds":["SELECT x, 1 FROM t","SELECT x, 1 FROM t","SELECT s FROM t"]`},
	}
	var q, p strings.Builder
	for _, c := range cases {
		q.WriteString(`{"id":"` + c.id + `","gold":"` + c.gold + `","db":"shop"}` + "\n")
		p.WriteString(`{"id":"` + c.id + `",` + c.preds + `}` + "\n")
	}
	os.WriteFile(filepath.Join(dir, "q.jsonl"), []byte(q.String()), 0o644)
	os.WriteFile(filepath.Join(dir, "p.jsonl"), []byte(p.String()), 0o644)
	os.WriteFile(filepath.Join(dir, "pipeline.hcl"), []byte(deferPipeline), 0o644)

	type attempt struct {
		Query, Class, Msg                  string
		Validated, Valid, Executed, Cached bool
		SyntaxValid, Safe                  *bool
		Result                             *table.Table
		Match                              *bool
	}
	type outcome struct {
		Status, Error string
		Gold          *table.Table
		Attempts      [][]attempt
		Scores        []item.Score
	}
	run := func(deferred bool, cache string) (map[string]outcome, []planner.StageStat, *counting) {
		t.Helper()
		c := &counting{}
		engines := &engine.Registry{}
		engines.Register("sqlite", func(_ context.Context, cfg engine.Config) (engine.Executor, error) {
			ex, err := sqlite.New(cfg)
			if err != nil {
				return nil, err
			}
			c.ex = ex
			if deferred {
				return countingFused{c}, nil
			}
			return c, nil
		})
		disk, err := store.Open(cache)
		if err != nil {
			t.Fatal(err)
		}
		defer disk.Close() // writes what waits, as evalflow run's end-of-run GC does
		pd, diags := dsl.Load(filepath.Join(dir, "pipeline.hcl"), dsl.LoadOptions{Env: []string{}})
		if diags.HasErrors() {
			t.Fatal(diags)
		}
		// One worker per stage: items reach each stage in dataset order, so
		// which of two equal gold queries runs first (the other is
		// answered by the cache) is the same in both runs.
		pl, diags := planner.Build(context.Background(), pd, planner.Options{Engines: engines, Results: nodes.NewResults(disk, "test"), Concurrency: 1})
		if diags.HasErrors() {
			t.Fatal(diags)
		}
		defer pl.Close()
		got := map[string]outcome{}
		err = pl.Run(context.Background(), planner.RunOptions{OnRecord: func(r *item.Record) error {
			o := outcome{Status: r.Status, Error: r.Error, Gold: r.GoldResult, Scores: r.Scores}
			for _, s := range r.Samples {
				var as []attempt
				for _, a := range s.Attempts {
					as = append(as, attempt{a.Query, a.ErrorClass, a.ErrorMessage, a.Validated, a.Valid, a.Executed, a.Cached, a.SyntaxValid, a.Safe, a.Result, a.Match})
				}
				o.Attempts = append(o.Attempts, as)
			}
			got[r.Item.ID] = o
			return nil
		}})
		if err != nil {
			t.Fatal(err)
		}
		return got, pl.Stats(), c
	}
	ignore := cmpopts.IgnoreFields(item.Score{}, "Note")
	for _, round := range []string{"cold", "warm"} {
		deferredCache, plainCache := filepath.Join(dir, "cache-deferred"), filepath.Join(dir, "cache-plain")
		got, gotStats, ca := run(true, deferredCache)
		want, wantStats, cp := run(false, plainCache)
		if diff := cmp.Diff(want, got, ignore, cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("%s: records (-separately +deferred):\n%s", round, diff)
		}
		if diff := cmp.Diff(wantStats, gotStats); diff != "" {
			t.Errorf("%s: stage counts (-separately +deferred):\n%s", round, diff)
		}
		t.Logf("%s: deferred: %d prepare+execute, %d prepare, %d execute; separately: %d prepare, %d execute",
			round, ca.prepExec.Load(), ca.preps.Load(), ca.execs.Load(), cp.preps.Load(), cp.execs.Load())
		if round == "cold" {
			// Each call parses once: PrepareExecute once for two.
			if deferred, sep := ca.prepExec.Load()+ca.preps.Load()+ca.execs.Load(), cp.preps.Load()+cp.execs.Load(); ca.prepExec.Load() == 0 || deferred >= sep {
				t.Errorf("cold: %d parses with the check left to execute, %d without", deferred, sep)
			}
		} else if ca.prepExec.Load() != 0 {
			t.Errorf("warm: %d queries run deferred; the cache answers them", ca.prepExec.Load())
		}
		// The two caches hold the same entries.
		a, _ := store.Open(deferredCache)
		pc, _ := store.Open(plainCache)
		sa, _ := a.Stats()
		sp, _ := pc.Stats()
		if sa.Entries != sp.Entries || sa.Entries == 0 {
			t.Errorf("%s: %d cache entries deferred, %d separately", round, sa.Entries, sp.Entries)
		}
		a.Close()
		pc.Close()
	}
}

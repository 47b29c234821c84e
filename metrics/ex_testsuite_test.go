package metrics_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/evalflow/evalflow/dsl"
	"github.com/evalflow/evalflow/item"
	"github.com/evalflow/evalflow/planner"
	"github.com/evalflow/evalflow/rundir"

	_ "github.com/evalflow/evalflow/engine/all"
	_ "github.com/evalflow/evalflow/nodes/all"
	_ "modernc.org/sqlite"
)

// tsCase is one prediction run through a replay pipeline (tsPipeline) on a
// real SQLite file. The want values under testsuite and
// testsuite_keep_distinct are what test-suite-sql-eval's eval_exec_match
// returns for the same (gold, pred, database) — checked by running it
// (evaluation.py's replace("value", "1") applied first) — except where
// noted.
type tsCase struct {
	id, gold, pred string
	// ex under evalflow, testsuite, testsuite_keep_distinct.
	evalflow, ts, tsKeep float64
	// class is the final attempt's error class, status items.parquet's
	// status: both the same under every profile.
	class, status string
}

var tsCases = []tsCase{
	// The raw prediction is a syntax error; test-suite's postprocess
	// glues '> =' and runs the result.
	{id: "spaced_ge", gold: "SELECT a FROM t WHERE a >= 2", pred: "SELECT a FROM t WHERE a > = 2",
		evalflow: 0, ts: 1, tsKeep: 1, class: item.ClassSyntax, status: "ok"},
	// "no such column: value" raw; evaluation.py's replace("value", "1")
	// makes it run.
	{id: "value_placeholder", gold: "SELECT a FROM t WHERE a = 1", pred: "SELECT a FROM t WHERE a = value",
		evalflow: 0, ts: 1, tsKeep: 1, class: item.ClassSchema, status: "ok"},
	// Refused as unsafe. remove_distinct keeps sqlparse's first statement,
	// "SELECT 1; ", which runs; with --keep_distinct sqlite3 refuses the
	// two statements before running either.
	{id: "select_then_drop", gold: "SELECT 1", pred: "SELECT 1; DROP TABLE t",
		evalflow: 0, ts: 1, tsKeep: 0, class: item.ClassSafety, status: "unsafe"},
	{id: "two_selects", gold: "SELECT 1", pred: "SELECT 1; SELECT 2",
		evalflow: 0, ts: 1, tsKeep: 0, class: item.ClassSafety, status: "unsafe"},
	// COUNT(DISTINCT a) = 2 runs fine; test-suite strips DISTINCT from it
	// (COUNT(a) = 3), so it matches the gold only under testsuite.
	{id: "count_distinct", gold: "SELECT COUNT(a) FROM t", pred: "SELECT COUNT(DISTINCT a) FROM t",
		evalflow: 0, ts: 1, tsKeep: 0, class: item.ClassNone, status: "ok"},
	// sqlparse's first statement of ";SELECT a FROM t" is ";", which
	// sqlite3 runs as no statement: an empty result, equal to the empty
	// gold. With --keep_distinct the SELECT runs (SQLite skips the empty
	// statement) and returns rows.
	{id: "leading_semicolon", gold: "SELECT a FROM t WHERE a > 5", pred: ";SELECT a FROM t",
		evalflow: 0, ts: 1, tsKeep: 0, class: item.ClassNone, status: "ok"},
	// A write is never executed, under any profile. Deviation: test-suite
	// would run the DELETE (an empty result, equal to the empty gold: 1)
	// and delete the rows.
	{id: "delete", gold: "SELECT a FROM t WHERE a > 5", pred: "DELETE FROM t",
		evalflow: 0, ts: 0, tsKeep: 0, class: item.ClassSafety, status: "unsafe"},
}

// tsPipeline is pipelines/text2sql-replay.hcl's chain (validate with its
// default checks: safety, and syntax on the engine), reduced to ex.
const tsPipeline = `
variable "compare" { type = string }

dataset "questions" { source = "items.jsonl" }

engine "main" {
  kind = "sqlite"
  path = "dbs/${item.db}/${item.db}.sqlite"
  root = "dbs"
}

stage "generate" {
  dataset     = dataset.questions
  source      = "replay"
  predictions = "preds.jsonl"
}

stage "validate" {
  input  = stage.generate
  engine = engine.main
}

stage "execute" {
  input  = stage.validate
  engine = engine.main
}

stage "score" {
  input = stage.execute
  metric "ex" { compare = var.compare }
}
`

func tsWriteJSONL(t *testing.T, path string, rows []map[string]string) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	enc := json.NewEncoder(f)
	for _, r := range rows {
		if err := enc.Encode(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// tsRows returns the rows of t in the database file, to show that no
// prediction wrote to it.
func tsRows(t *testing.T, path string) int {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var n int
	if err := db.QueryRow("SELECT COUNT(*) FROM t").Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestTestSuiteExecutionPath runs each case through a replay pipeline
// (validate, execute, score on engine "sqlite") under the three profiles:
// the attempt keeps what validate and execute recorded, and ex follows
// test-suite's execution path under the testsuite profiles only.
func TestTestSuiteExecutionPath(t *testing.T) {
	dir := t.TempDir()
	dbPath := filepath.Join(dir, "dbs", "toy", "toy.sqlite")
	if err := os.MkdirAll(filepath.Dir(dbPath), 0o755); err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite", dbPath)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"CREATE TABLE t (a INTEGER)", "INSERT INTO t VALUES (1), (1), (2)"} {
		if _, err := db.Exec(s); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()
	var items, preds []map[string]string
	for _, c := range tsCases {
		items = append(items, map[string]string{"id": c.id, "question": c.id, "gold": c.gold, "db": "toy"})
		preds = append(preds, map[string]string{"id": c.id, "pred": c.pred})
	}
	tsWriteJSONL(t, filepath.Join(dir, "items.jsonl"), items)
	tsWriteJSONL(t, filepath.Join(dir, "preds.jsonl"), preds)
	if err := os.WriteFile(filepath.Join(dir, "replay.hcl"), []byte(tsPipeline), 0o644); err != nil {
		t.Fatal(err)
	}

	for _, prof := range []struct {
		compare string
		want    func(tsCase) float64
	}{
		{"evalflow", func(c tsCase) float64 { return c.evalflow }},
		{"testsuite", func(c tsCase) float64 { return c.ts }},
		{"testsuite_keep_distinct", func(c tsCase) float64 { return c.tsKeep }},
	} {
		t.Run(prof.compare, func(t *testing.T) {
			p, diags := dsl.Load(filepath.Join(dir, "replay.hcl"), dsl.LoadOptions{Env: []string{}, Vars: []string{"compare=" + prof.compare}})
			if diags.HasErrors() {
				t.Fatal(diags)
			}
			pl, diags := planner.Build(context.Background(), p, planner.Options{})
			t.Cleanup(func() { pl.Close() })
			if diags.HasErrors() {
				t.Fatal(diags)
			}
			got := map[string]*item.Record{}
			if err := pl.Run(context.Background(), planner.RunOptions{OnRecord: func(r *item.Record) error {
				got[r.Item.ID] = r
				return nil
			}}); err != nil {
				t.Fatal(err)
			}
			for _, c := range tsCases {
				r := got[c.id]
				if r == nil {
					t.Errorf("%s: no record", c.id)
					continue
				}
				a := r.Final()
				if a.Query != c.pred || a.ErrorClass != c.class || rundir.ItemStatus(r) != c.status {
					t.Errorf("%s: attempt query %q, class %q, status %q; want %q, %q, %q",
						c.id, a.Query, a.ErrorClass, rundir.ItemStatus(r), c.pred, c.class, c.status)
				}
				s, ok := r.Score("ex")
				if !ok || s.Err != "" || s.Value != prof.want(c) {
					t.Errorf("%s: ex %+v, want %v", c.id, s, prof.want(c))
				}
				if s.Official != (prof.compare != "evalflow") {
					t.Errorf("%s: ex Official = %v under %s", c.id, s.Official, prof.compare)
				}
				// toy.sqlite is alone in its folder: no suite, no suite verdict.
				if s, ok := r.Score("ex_suite"); ok {
					t.Errorf("%s: ex_suite %+v for an item without a test suite", c.id, s)
				}
				if a.Match == nil || (*a.Match) != (prof.want(c) == 1) {
					t.Errorf("%s: attempt Match %v, want %v", c.id, a.Match, prof.want(c) == 1)
				}
			}
			if n := tsRows(t, dbPath); n != 3 {
				t.Errorf("table t has %d rows after the run, want 3: a prediction wrote", n)
			}
		})
	}
}

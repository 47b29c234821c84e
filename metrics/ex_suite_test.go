package metrics_test

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/evalflow/evalflow/dsl"
	"github.com/evalflow/evalflow/item"
	"github.com/evalflow/evalflow/planner"
)

// suiteDB writes a SQLite file at path built by stmts.
func suiteDB(t *testing.T, path string, stmts ...string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, s := range stmts {
		if _, err := db.Exec(s); err != nil {
			t.Fatalf("%s: %s: %v", path, s, err)
		}
	}
}

// suiteCase is one (gold, pred) pair run on a test suite.
type suiteCase struct {
	id, db, gold, pred string
	// ex under evalflow and under both testsuite profiles; status is the
	// item's status under the testsuite profiles (always ok under
	// evalflow), note what the testsuite score's note must contain.
	evalflow, ts float64
	status, note string
}

var suiteCases = []suiteCase{
	// Equal on the original, separated by shop_001 (b = 'y' also on a = 5).
	{id: "near_miss", db: "shop", gold: "SELECT b FROM t WHERE a = 2", pred: "SELECT b FROM t WHERE b = 'y'",
		evalflow: 1, ts: 0, status: "ok", note: "test database shop_001.sqlite separates the prediction from the gold"},
	// Equal everywhere.
	{id: "right", db: "shop", gold: "SELECT b FROM t WHERE a = 2", pred: "SELECT b FROM t WHERE a + 0 = 2",
		evalflow: 1, ts: 1, status: "ok"},
	// Wrong on the original already: no other database is consulted.
	{id: "wrong", db: "shop", gold: "SELECT b FROM t WHERE a = 2", pred: "SELECT b FROM t WHERE a = 3",
		evalflow: 0, ts: 0, status: "ok"},
	// Equal on the original, fails on shop_002 (it has no table u).
	{id: "pred_fails", db: "shop", gold: "SELECT COUNT(*) FROM t", pred: "SELECT COUNT(*) FROM t WHERE EXISTS (SELECT 1 FROM u)",
		evalflow: 1, ts: 0, status: "ok", note: "the prediction fails on test database shop_002.sqlite"},
	// The gold fails on shop_002: the harness cannot evaluate the item.
	{id: "gold_fails", db: "shop", gold: "SELECT c FROM u", pred: "SELECT c FROM u",
		evalflow: 1, ts: 0, status: "error"},
	// A folder with one database behaves as before the suites.
	{id: "solo_near_miss", db: "solo", gold: "SELECT b FROM t WHERE a = 2", pred: "SELECT b FROM t WHERE b = 'y'",
		evalflow: 1, ts: 1, status: "ok"},
}

// TestTestSuiteDatabases runs pairs through a replay pipeline on a suite
// of our own (dbs/shop: the original and two variants built with SQL;
// dbs/solo: one database): under the testsuite profiles a pair must agree
// on every *.sqlite* file of the item's folder, as test-suite's
// eval_exec_match requires; under evalflow only the item's own database
// counts. The testsuite values are what test-suite-sql-eval's
// eval_exec_match returned on the same files, with and without
// --keep_distinct (it raised its AssertionError on gold_fails, naming
// shop_002.sqlite).
func TestTestSuiteDatabases(t *testing.T) {
	dir := t.TempDir()
	orig := []string{"CREATE TABLE t (a INTEGER, b TEXT)", "INSERT INTO t VALUES (1, 'x'), (2, 'y'), (3, 'z')",
		"CREATE TABLE u (c INTEGER)", "INSERT INTO u VALUES (7)"}
	suiteDB(t, filepath.Join(dir, "dbs", "shop", "shop.sqlite"), orig...)
	suiteDB(t, filepath.Join(dir, "dbs", "shop", "shop_001.sqlite"),
		"CREATE TABLE t (a INTEGER, b TEXT)", "INSERT INTO t VALUES (2, 'y'), (5, 'y')",
		"CREATE TABLE u (c INTEGER)", "INSERT INTO u VALUES (8)")
	suiteDB(t, filepath.Join(dir, "dbs", "shop", "shop_002.sqlite"),
		"CREATE TABLE t (a INTEGER, b TEXT)", "INSERT INTO t VALUES (2, 'y'), (4, 'w')")
	suiteDB(t, filepath.Join(dir, "dbs", "solo", "solo.sqlite"), orig...)
	// Not test databases: their names do not contain ".sqlite".
	if err := os.WriteFile(filepath.Join(dir, "dbs", "shop", "schema.sql"), []byte("not a database"), 0o644); err != nil {
		t.Fatal(err)
	}
	var items, preds []map[string]string
	for _, c := range suiteCases {
		items = append(items, map[string]string{"id": c.id, "question": c.id, "gold": c.gold, "db": c.db})
		preds = append(preds, map[string]string{"id": c.id, "pred": c.pred})
	}
	tsWriteJSONL(t, filepath.Join(dir, "items.jsonl"), items)
	tsWriteJSONL(t, filepath.Join(dir, "preds.jsonl"), preds)
	if err := os.WriteFile(filepath.Join(dir, "replay.hcl"), []byte(tsPipeline), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, compare := range []string{"evalflow", "testsuite", "testsuite_keep_distinct"} {
		t.Run(compare, func(t *testing.T) {
			p, diags := dsl.Load(filepath.Join(dir, "replay.hcl"), dsl.LoadOptions{Env: []string{}, Vars: []string{"compare=" + compare}})
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
			for _, c := range suiteCases {
				r := got[c.id]
				if r == nil {
					t.Errorf("%s: no record", c.id)
					continue
				}
				want, status, note := c.ts, c.status, c.note
				if compare == "evalflow" {
					want, status, note = c.evalflow, "ok", ""
				}
				s, _ := r.Score("ex")
				if r.Status != status {
					t.Errorf("%s: status %q (%s), want %q", c.id, r.Status, r.Error, status)
				}
				if status == "error" {
					if !strings.Contains(r.Error, "gold query failed on test database shop_002.sqlite") || !strings.Contains(s.Err, "shop_002.sqlite") {
						t.Errorf("%s: error %q, ex %+v; want both to name shop_002.sqlite", c.id, r.Error, s)
					}
					continue
				}
				if s.Err != "" || s.Value != want {
					t.Errorf("%s: ex %+v, want %v", c.id, s, want)
				}
				if note == "" && s.Note != "" || !strings.Contains(s.Note, note) {
					t.Errorf("%s: note %q, want %q", c.id, s.Note, note)
				}
				if a := r.Final(); a.Match == nil || *a.Match != (want == 1) {
					t.Errorf("%s: attempt Match %v, want %v", c.id, a.Match, want == 1)
				}
			}
		})
	}
}

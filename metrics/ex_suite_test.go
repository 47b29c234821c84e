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
	"github.com/evalflow/evalflow/nodes"
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
	// ex (the item's own database) under every profile; exSuite is the
	// testsuite profiles' ex_suite (-1: none, the item has no suite),
	// test-suite-sql-eval's eval_exec_match on the folder; sepDB the
	// database ex_suite_db names; status the item's status under the
	// testsuite profiles (always ok under evalflow), note what ex_suite's
	// note must contain.
	ex, exSuite  float64
	sepDB        string
	status, note string
}

var suiteCases = []suiteCase{
	// Equal on the original, separated by shop_001 (b = 'y' also on a = 5).
	{id: "near_miss", db: "shop", gold: "SELECT b FROM t WHERE a = 2", pred: "SELECT b FROM t WHERE b = 'y'",
		ex: 1, exSuite: 0, sepDB: "shop_001.sqlite", status: "ok", note: "test database shop_001.sqlite separates the prediction from the gold"},
	// Equal everywhere.
	{id: "right", db: "shop", gold: "SELECT b FROM t WHERE a = 2", pred: "SELECT b FROM t WHERE a + 0 = 2",
		ex: 1, exSuite: 1, status: "ok"},
	// Wrong on the original already: no other database is consulted.
	{id: "wrong", db: "shop", gold: "SELECT b FROM t WHERE a = 2", pred: "SELECT b FROM t WHERE a = 3",
		ex: 0, exSuite: 0, sepDB: "shop.sqlite", status: "ok"},
	// Equal on the original, fails on shop_002 (it has no table u).
	{id: "pred_fails", db: "shop", gold: "SELECT COUNT(*) FROM t", pred: "SELECT COUNT(*) FROM t WHERE EXISTS (SELECT 1 FROM u)",
		ex: 1, exSuite: 0, sepDB: "shop_002.sqlite", status: "ok", note: "the prediction fails on test database shop_002.sqlite"},
	// The gold fails on shop_002: the harness cannot evaluate the item.
	{id: "gold_fails", db: "shop", gold: "SELECT c FROM u", pred: "SELECT c FROM u",
		ex: 1, exSuite: 0, status: "error"},
	// A folder with one database behaves as before the suites.
	{id: "solo_near_miss", db: "solo", gold: "SELECT b FROM t WHERE a = 2", pred: "SELECT b FROM t WHERE b = 'y'",
		ex: 1, exSuite: -1, status: "ok"},
}

// TestTestSuiteDatabases runs pairs through a replay pipeline on a suite
// of our own (dbs/shop: the original and two variants built with SQL;
// dbs/solo: one database). ex is the verdict on the item's own database
// under every profile; under the testsuite profiles ex_suite requires the
// pair to agree on every *.sqlite* file of the item's folder, as
// test-suite's eval_exec_match does, and names the first database that
// separates them. The ex_suite values are what test-suite-sql-eval's
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
				exSuite, status := c.exSuite, c.status
				if compare == "evalflow" {
					exSuite, status = -1, "ok"
				}
				if r.Status != status {
					t.Errorf("%s: status %q (%s), want %q", c.id, r.Status, r.Error, status)
				}
				ex, _ := r.Score("ex")
				if ex.Err != "" || ex.Value != c.ex || ex.Note != "" || ex.Separation != nil || ex.Official != (compare != "evalflow") {
					t.Errorf("%s: ex %+v, want %v", c.id, ex, c.ex)
				}
				if a := r.Final(); a.Match == nil || *a.Match != (c.ex == 1) {
					t.Errorf("%s: attempt Match %v, want ex's %v", c.id, a.Match, c.ex == 1)
				}
				s, ok := r.Score("ex_suite")
				switch {
				case exSuite == -1:
					if ok {
						t.Errorf("%s: ex_suite %+v, want none (no suite)", c.id, s)
					}
					continue
				case !ok:
					t.Errorf("%s: no ex_suite, want %v", c.id, exSuite)
					continue
				case !s.Official:
					t.Errorf("%s: ex_suite is not Official under %s", c.id, compare)
				}
				if status == "error" {
					if !strings.Contains(r.Error, "gold query failed on test database shop_002.sqlite") || !strings.Contains(s.Err, "shop_002.sqlite") || s.Value != 0 {
						t.Errorf("%s: error %q, ex_suite %+v; want both to name shop_002.sqlite", c.id, r.Error, s)
					}
					continue
				}
				if s.Err != "" || s.Value != exSuite {
					t.Errorf("%s: ex_suite %+v, want %v", c.id, s, exSuite)
				}
				if c.note == "" && s.Note != "" || !strings.Contains(s.Note, c.note) {
					t.Errorf("%s: ex_suite note %q, want %q", c.id, s.Note, c.note)
				}
				db := ""
				if s.Separation != nil {
					db = s.Separation.DB
					if own := db == c.db+".sqlite"; s.Separation.Own != own || !own && s.Separation.Gold == nil {
						t.Errorf("%s: separation %+v", c.id, s.Separation)
					}
				}
				if db != c.sepDB {
					t.Errorf("%s: separated by %q, want %q", c.id, db, c.sepDB)
				}
			}
		})
	}
}

// TestSuiteColumnsDeclared: a score stage declares the suite verdict's
// column (<as>_suite, 0/1 like ex) only for ex under a test-suite profile
// on an engine with the folder notion, so other pipelines' columns do not
// change; a column that would read as another's suite verdict is refused.
func TestSuiteColumnsDeclared(t *testing.T) {
	dir := t.TempDir()
	suiteDB(t, filepath.Join(dir, "dbs", "solo", "solo.sqlite"), "CREATE TABLE t (a INTEGER)")
	tsWriteJSONL(t, filepath.Join(dir, "items.jsonl"), []map[string]string{{"id": "1", "question": "q", "gold": "SELECT a FROM t", "db": "solo"}})
	tsWriteJSONL(t, filepath.Join(dir, "preds.jsonl"), []map[string]string{{"id": "1", "pred": "SELECT a FROM t"}})
	const head = `
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
stage "execute" {
  input  = stage.generate
  engine = engine.main
}
stage "score" {
  input = stage.execute
`
	for _, tc := range []struct {
		name, metrics string
		cols, binary  []string
		diag          string
	}{
		{"testsuite", `metric "ex" { compare = "testsuite" }`, []string{"ex", "ex_suite"}, []string{"ex", "ex_suite"}, ""},
		{"keep_distinct with as", `metric "ex" {
  as      = "ex_kd"
  compare = "testsuite_keep_distinct"
}
metric "bird_soft_f1" {}`, []string{"ex_kd", "ex_kd_suite", "bird_soft_f1"}, []string{"ex_kd", "ex_kd_suite"}, ""},
		{"evalflow", `metric "ex" {}`, []string{"ex"}, []string{"ex"}, ""},
		{"bird", `metric "ex" { compare = "bird" }`, []string{"ex"}, []string{"ex"}, ""},
		{"taken by another metric", `metric "ex" { compare = "testsuite" }
metric "bird_soft_f1" { as = "ex_suite" }`, nil, nil, `Duplicate metric column; Column "ex_suite" is already produced`},
		{"reserved", `metric "ex" {}
metric "bird_soft_f1" { as = "ex_suite" }`, nil, nil, `Reserved metric column; Column "ex_suite" is the name of the test-suite verdict of column "ex"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(dir, "p.hcl")
			if err := os.WriteFile(path, []byte(head+tc.metrics+"\n}\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			p, diags := dsl.Load(path, dsl.LoadOptions{Env: []string{}})
			if diags.HasErrors() {
				t.Fatal(diags)
			}
			pl, diags := planner.Build(context.Background(), p, planner.Options{})
			t.Cleanup(func() { pl.Close() })
			if tc.diag != "" {
				if !diags.HasErrors() || !strings.Contains(diags.Error(), tc.diag) {
					t.Fatalf("diagnostics %v, want %q", diags, tc.diag)
				}
				return
			}
			if diags.HasErrors() {
				t.Fatal(diags)
			}
			var cols, binary []string
			for _, n := range pl.Chain {
				if c, ok := n.Stage.(nodes.Columns); ok {
					cols = append(cols, c.MetricColumns()...)
				}
				if c, ok := n.Stage.(nodes.BinaryColumns); ok {
					binary = append(binary, c.BinaryColumns()...)
				}
			}
			if strings.Join(cols, ",") != strings.Join(tc.cols, ",") || strings.Join(binary, ",") != strings.Join(tc.binary, ",") {
				t.Errorf("columns %v (0/1: %v), want %v (%v)", cols, binary, tc.cols, tc.binary)
			}
		})
	}
}

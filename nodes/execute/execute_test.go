package execute_test

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	_ "modernc.org/sqlite"

	"github.com/evalflow/evalflow/dsl"
	"github.com/evalflow/evalflow/item"
	"github.com/evalflow/evalflow/nodes"
	"github.com/evalflow/evalflow/planner"

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

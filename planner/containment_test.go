package planner_test

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/evalflow/evalflow/dsl"
	"github.com/evalflow/evalflow/item"
	"github.com/evalflow/evalflow/nodes"
	"github.com/evalflow/evalflow/planner"
)

// sqliteDB creates a database whose one table answers "SELECT v FROM t".
func sqliteDB(t *testing.T, path, value string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, q := range []string{`CREATE TABLE t (v TEXT)`, `INSERT INTO t VALUES ('` + value + `')`} {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
}

const containPipeline = `
dataset "q" {
  source = "q.jsonl"
}
engine "main" {
  kind = "sqlite"
  path = "dbs/${item.db}.sqlite"
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
}
`

// TestContainment: a db value from data that leaves the engine's root — a
// relative climb, an absolute path, a symlink inside the root pointing out
// — makes the item an error naming the path and root, and the database
// outside is never queried; a symlink that stays inside is followed.
func TestContainment(t *testing.T) {
	dir := t.TempDir()
	sqliteDB(t, filepath.Join(dir, "dbs", "shop.sqlite"), "inside")
	sqliteDB(t, filepath.Join(dir, "secret", "secret.sqlite"), "SECRET")
	if err := os.Symlink(filepath.Join(dir, "secret", "secret.sqlite"), filepath.Join(dir, "dbs", "link.sqlite")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(dir, "dbs", "shop.sqlite"), filepath.Join(dir, "dbs", "alias.sqlite")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(dir, "secret"), filepath.Join(dir, "dbs", "sub")); err != nil {
		t.Fatal(err)
	}
	cases := []struct{ id, db string }{
		{"ok", "shop"},
		{"climb", "../secret/secret"},
		{"absolute", filepath.Join(dir, "secret", "secret")},
		{"link-out", "link"},
		{"dir-link-out", "sub/secret"},
		{"link-in", "alias"},
	}
	var items, preds []map[string]any
	for _, c := range cases {
		items = append(items, map[string]any{"id": c.id, "question": "?", "gold": "SELECT 'inside'", "db": c.db})
		preds = append(preds, map[string]any{"id": c.id, "pred": "SELECT v FROM t"})
	}
	writeJSONL(t, filepath.Join(dir, "q.jsonl"), items)
	writeJSONL(t, filepath.Join(dir, "p.jsonl"), preds)
	pl := build(t, dir, containPipeline, planner.Options{})
	got := map[string]*item.Record{}
	err := pl.Run(context.Background(), planner.RunOptions{OnRecord: func(r *item.Record) error {
		got[r.Item.ID] = r
		return nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	root, _ := filepath.EvalSymlinks(filepath.Join(dir, "dbs"))
	for _, c := range cases {
		r := got[c.id]
		inside := c.id == "ok" || c.id == "link-in"
		if inside {
			if r.Status != "ok" || r.Scores[0].Value != 1 {
				t.Errorf("%s: status %q ex %v (%s), want ok 1", c.id, r.Status, r.Scores, r.Error)
			}
			continue
		}
		// An absolute db lands under dbs/ through this template (not found
		// there): an error too, and the secret is not touched.
		want := "resolves outside its root " + root
		if c.id == "absolute" {
			want = "database file not found: " + root
		}
		if r.Status != "error" || !strings.Contains(r.Error, want) || !strings.Contains(r.Error, `item "`+c.id+`"`) {
			t.Errorf("%s: status %q error %q; want an error naming the root and the item", c.id, r.Status, r.Error)
		}
		for _, s := range r.Samples {
			for _, a := range s.Attempts {
				if a.Result != nil || a.Executed && a.ErrorClass == "" {
					t.Errorf("%s: the query ran against the database outside the root", c.id)
				}
			}
		}
		if r.GoldResult != nil {
			t.Errorf("%s: the gold ran outside the root", c.id)
		}
	}
}

// TestContainmentDeclaredRoot: with path = item.db and a declared root, an
// absolute path from data outside the root is refused.
func TestContainmentDeclaredRoot(t *testing.T) {
	dir := t.TempDir()
	sqliteDB(t, filepath.Join(dir, "dbs", "shop.sqlite"), "inside")
	sqliteDB(t, filepath.Join(dir, "secret", "secret.sqlite"), "SECRET")
	writeJSONL(t, filepath.Join(dir, "q.jsonl"), []map[string]any{
		{"id": "in", "gold": "SELECT 'inside'", "db": filepath.Join(dir, "dbs", "shop.sqlite")},
		{"id": "out", "gold": "SELECT 'inside'", "db": filepath.Join(dir, "secret", "secret.sqlite")},
	})
	writeJSONL(t, filepath.Join(dir, "p.jsonl"), []map[string]any{{"id": "in", "pred": "SELECT v FROM t"}, {"id": "out", "pred": "SELECT v FROM t"}})
	src := strings.Replace(containPipeline, `path = "dbs/${item.db}.sqlite"`, "path = item.db\n  root = \"dbs\"", 1)
	pl := build(t, dir, src, planner.Options{})
	got := map[string]*item.Record{}
	if err := pl.Run(context.Background(), planner.RunOptions{OnRecord: func(r *item.Record) error { got[r.Item.ID] = r; return nil }}); err != nil {
		t.Fatal(err)
	}
	if r := got["in"]; r.Status != "ok" || r.Scores[0].Value != 1 {
		t.Errorf("in: %q %v %s", r.Status, r.Scores, r.Error)
	}
	if r := got["out"]; r.Status != "error" || !strings.Contains(r.Error, "resolves outside its root") || r.Final().Result != nil {
		t.Errorf("out: %q %s", r.Status, r.Error)
	}
}

// TestContainmentNeedsARoot: a file engine whose path has no literal
// directory before its first item. reference, and no root attribute, is
// refused when planned, at the path expression's position.
func TestContainmentNeedsARoot(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct{ name, engine, want string }{
		{"bare", "  path = \"${item.db}.sqlite\"\n", "pipeline.hcl:7,10-"},
		{"conditional", "  path = item.db == \"\" ? \"x.sqlite\" : \"dbs/${item.db}.sqlite\"\n", "pipeline.hcl:7,10-"},
		{"no path", "", "pipeline.hcl:5,1-"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := "dataset \"q\" {\n  source = \"q.jsonl\"\n}\n\nengine \"main\" {\n  kind = \"sqlite\"\n" + tc.engine + "}\nstage \"generate\" {\n  predictions = \"p.jsonl\"\n}\nstage \"execute\" {\n  input = stage.generate\n}\nstage \"score\" {\n  input = stage.execute\n  metric \"ex\" {}\n}\n"
			os.WriteFile(filepath.Join(dir, "q.jsonl"), []byte(`{"id":"a","db":"x"}`+"\n"), 0o644)
			os.WriteFile(filepath.Join(dir, "p.jsonl"), []byte(`{"id":"a","pred":"SELECT 1"}`+"\n"), 0o644)
			path := filepath.Join(dir, "pipeline.hcl")
			os.WriteFile(path, []byte(src), 0o644)
			p, diags := dsl.Load(path, dsl.LoadOptions{Env: []string{}})
			if diags.HasErrors() {
				t.Fatal(diags)
			}
			pl, diags := planner.Build(context.Background(), p, planner.Options{})
			defer pl.Close()
			if !diags.HasErrors() || !strings.Contains(diags.Error(), tc.want) || !strings.Contains(diags.Error(), "root") {
				t.Errorf("diags = %v, want a positioned error (%s) asking for a root", diags, tc.want)
			}
			// A declared root makes it valid.
			os.WriteFile(path, []byte(strings.Replace(src, "  kind = \"sqlite\"\n", "  kind = \"sqlite\"\n  root = \"dbs\"\n", 1)), 0o644)
			p, _ = dsl.Load(path, dsl.LoadOptions{Env: []string{}})
			pl2, diags := planner.Build(context.Background(), p, planner.Options{})
			defer pl2.Close()
			if diags.HasErrors() {
				t.Errorf("with root declared: %v", diags)
			}
		})
	}
}

func TestHarnessErrorIs(t *testing.T) {
	err := nodes.HarnessError(errors.New("x"))
	if !errors.Is(err, nodes.ErrHarness) || err.Error() != "x" {
		t.Errorf("%v", err)
	}
}

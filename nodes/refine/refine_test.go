package refine_test

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"strings"
	"testing"

	_ "modernc.org/sqlite"

	"github.com/evalflow/evalflow/dsl"
	"github.com/evalflow/evalflow/item"
	"github.com/evalflow/evalflow/planner"

	_ "github.com/evalflow/evalflow/engine/all"
	_ "github.com/evalflow/evalflow/nodes/all"
)

// TestRefineWithReplayedAttempts: refine takes the next replayed attempt
// only while the latest one failed, at most max_iterations times, and every
// attempt stays recorded with its own error.
func TestRefineWithReplayedAttempts(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "dbs"), 0o755)
	db, _ := sql.Open("sqlite", filepath.Join(dir, "dbs", "shop.sqlite"))
	db.Exec("CREATE TABLE t (x INTEGER)")
	db.Exec("INSERT INTO t VALUES (1), (2)")
	db.Close()
	q := `{"id":"fixed","gold":"SELECT count(*) FROM t","db":"shop"}
{"id":"first","gold":"SELECT count(*) FROM t","db":"shop"}
{"id":"never","gold":"SELECT count(*) FROM t","db":"shop"}
{"id":"late","gold":"SELECT count(*) FROM t","db":"shop"}
`
	p := `{"id":"fixed","attempts":["SELEC", "SELECT count(*) FROM t", "SELECT 99"]}
{"id":"first","attempts":["SELECT count(*) FROM t", "SELECT 99"]}
{"id":"never","attempts":["SELEC", "SELECT nope FROM t"]}
{"id":"late","attempts":["SELEC", "SELEC", "SELEC", "SELECT count(*) FROM t"]}
`
	src := `
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
stage "refine" {
  input          = stage.execute
  max_iterations = 2
}
stage "score" {
  input = stage.refine
  metric "ex" {}
}
`
	for name, body := range map[string]string{"q.jsonl": q, "p.jsonl": p, "pipeline.hcl": src} {
		os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644)
	}
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
	for _, tc := range []struct {
		id      string
		classes []string // of each attempt, in order
		ex      float64
	}{
		{"fixed", []string{item.ClassSyntax, ""}, 1},                                // stops at the first success
		{"first", []string{""}, 1},                                                  // nothing to refine
		{"never", []string{item.ClassSyntax, item.ClassSchema}, 0},                  // runs out of attempts
		{"late", []string{item.ClassSyntax, item.ClassSyntax, item.ClassSyntax}, 0}, // max_iterations = 2
	} {
		r := got[tc.id]
		var classes []string
		for _, a := range r.Samples[0].Attempts {
			classes = append(classes, a.ErrorClass)
			if a.Failed() && a.ErrorMessage == "" {
				t.Errorf("%s: attempt %d failed without a message", tc.id, a.Index)
			}
		}
		if strings.Join(classes, ",") != strings.Join(tc.classes, ",") {
			t.Errorf("%s: attempts %q, want %q", tc.id, classes, tc.classes)
		}
		if s, _ := r.Score("ex"); s.Value != tc.ex || r.Status != "ok" {
			t.Errorf("%s: %s ex %v, want ok %v", tc.id, r.Status, s.Value, tc.ex)
		}
	}
}

package planner_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/evalflow/evalflow/dsl"
	. "github.com/evalflow/evalflow/planner"
)

func loadSrc(t *testing.T, dir, src string) *dsl.Pipeline {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, "pipeline.hcl"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	p, diags := dsl.Load(filepath.Join(dir, "pipeline.hcl"), dsl.LoadOptions{Env: []string{}})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	return p
}

const branchData = `
dataset "q" {
  source = "q.jsonl"
}
engine "db" {
  kind = "sqlite"
  path = "shop.sqlite"
}
`

func stageNames(pl *Plan) string {
	var out []string
	for _, n := range pl.Order {
		in := ""
		if n.Block.Input != nil {
			in = "<" + n.Block.Input.Name
		}
		out = append(out, n.Block.Name+in)
	}
	return strings.Join(out, " ")
}

// TestBranches: a pipeline with two generate stages runs each as a branch;
// a stage listing several inputs joins them, taking on each branch the
// input from that branch.
func TestBranches(t *testing.T) {
	tests := []struct {
		name   string
		stages string
		want   map[string]string // branch → stages in order with their input
	}{
		{"joined at validate", `
stage "a" {
  kind   = "generate"
  source = "replay"
  predictions = "p.jsonl"
}
stage "b" {
  kind   = "generate"
  source = "replay"
  predictions = "p.jsonl"
}
stage "validate" {
  input  = [stage.a, stage.b]
  engine = engine.db
}
stage "execute" {
  input  = stage.validate
  engine = engine.db
}
stage "score" {
  input   = stage.execute
  metrics = ["ex"]
}
`, map[string]string{"a": "a validate<a execute<validate score<execute", "b": "b validate<b execute<validate score<execute"}},
		{"separate chains joined at score", `
stage "a" {
  kind   = "generate"
  source = "replay"
  predictions = "p.jsonl"
}
stage "b" {
  kind   = "generate"
  source = "replay"
  predictions = "p.jsonl"
}
stage "exec_a" {
  kind   = "execute"
  input  = stage.a
  engine = engine.db
}
stage "exec_b" {
  kind   = "execute"
  input  = stage.b
  engine = engine.db
}
stage "score" {
  input   = [stage.exec_a, stage.exec_b]
  metrics = ["ex"]
}
stage "aggregate" {
  input = stage.score
}
`, map[string]string{"a": "a exec_a<a score<exec_a aggregate<score", "b": "b exec_b<b score<exec_b aggregate<score"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			writeJSONL(t, dir+"/q.jsonl", []map[string]any{{"id": "1", "question": "q", "gold": "SELECT 1", "db": "shop"}})
			writeJSONL(t, dir+"/p.jsonl", []map[string]any{{"id": "1", "pred": "SELECT 1"}})
			p := loadSrc(t, dir, branchData+tt.stages)
			if got := Branches(p, nil); strings.Join(got, ",") != "a,b" {
				t.Fatalf("branches %v", got)
			}
			if _, diags := Build(context.Background(), p, Options{}); !diags.HasErrors() || !strings.Contains(diags.Error(), "Several generate stages") {
				t.Errorf("without a branch: %v", diags)
			}
			for b, want := range tt.want {
				pl, diags := Build(context.Background(), p, Options{Branch: b})
				if diags.HasErrors() {
					t.Fatalf("branch %s: %v", b, diags)
				}
				if got := stageNames(pl); got != want {
					t.Errorf("branch %s: %s, want %s", b, got, want)
				}
				pl.Close()
			}
		})
	}
}

func TestBranchAmbiguousJoin(t *testing.T) {
	dir := t.TempDir()
	writeJSONL(t, dir+"/q.jsonl", []map[string]any{{"id": "1", "question": "q", "gold": "SELECT 1", "db": "shop"}})
	writeJSONL(t, dir+"/p.jsonl", []map[string]any{{"id": "1", "pred": "SELECT 1"}})
	p := loadSrc(t, dir, branchData+`
stage "a" {
  kind   = "generate"
  source = "replay"
  predictions = "p.jsonl"
}
stage "b" {
  kind   = "generate"
  source = "replay"
  predictions = "p.jsonl"
}
stage "v1" {
  kind   = "validate"
  input  = stage.a
  engine = engine.db
}
stage "v2" {
  kind   = "validate"
  input  = stage.a
  engine = engine.db
}
stage "execute" {
  input  = [stage.v1, stage.v2]
  engine = engine.db
}
`)
	_, diags := Build(context.Background(), p, Options{Branch: "a"})
	if !diags.HasErrors() || !strings.Contains(diags.Error(), "Ambiguous input") {
		t.Errorf("two inputs on one branch: %v", diags)
	}
}

// TestOneCauseOneDiagnostic: a generate stage that cannot be built (its
// predictions file is missing) is reported once, at its attribute; refine,
// which depends on it, adds no second, misleading error.
func TestOneCauseOneDiagnostic(t *testing.T) {
	dir := t.TempDir()
	writeJSONL(t, dir+"/q.jsonl", []map[string]any{{"id": "1", "question": "q", "gold": "SELECT 1", "db": "shop"}})
	p := loadSrc(t, dir, branchData+`
stage "generate" {
  source      = "replay"
  predictions = "missing.jsonl"
}
stage "validate" {
  input  = stage.generate
  engine = engine.db
}
stage "execute" {
  input  = stage.validate
  engine = engine.db
}
stage "refine" {
  input = stage.execute
}
`)
	_, diags := Build(context.Background(), p, Options{})
	if len(diags) != 1 || !strings.Contains(diags[0].Summary, "Cannot read predictions") || diags[0].Subject == nil {
		t.Errorf("diagnostics: %v; want only the missing predictions file, positioned", diags)
	}
}

package planner_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/hcl/v2"

	"github.com/evalflow/evalflow/dsl"
	"github.com/evalflow/evalflow/planner"
)

// planWithin loads and plans src (as a pipeline next to the quickstart's
// data), failing on a panic, a plan slower than limit, or an error
// diagnostic without a position.
func planWithin(t *testing.T, src []byte, limit time.Duration) {
	t.Helper()
	dir := t.TempDir()
	path := filepath.Join(dir, "pipeline.hcl")
	os.WriteFile(path, src, 0o644)
	os.WriteFile(filepath.Join(dir, "q.jsonl"), []byte(`{"id":"a","db":"shop"}`+"\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "p.jsonl"), []byte(`{"id":"a","pred":"SELECT 1"}`+"\n"), 0o644)
	type result struct {
		diags hcl.Diagnostics
		panic any
	}
	ch := make(chan result, 1)
	go func() {
		defer func() {
			if p := recover(); p != nil {
				ch <- result{panic: p}
			}
		}()
		p, d := dsl.Load(path, dsl.LoadOptions{Env: []string{}})
		if d.HasErrors() {
			ch <- result{diags: d}
			return
		}
		pl, d2 := planner.Build(context.Background(), p, planner.Options{})
		pl.Close()
		ch <- result{diags: append(d, d2...)}
	}()
	select {
	case r := <-ch:
		if r.panic != nil {
			t.Fatalf("panic planning:\n%s\n--\n%v", src, r.panic)
		}
		for _, d := range r.diags {
			if d.Severity == hcl.DiagError && (d.Subject == nil || d.Subject.Filename == "" || d.Subject.Start.Line < 1) {
				t.Errorf("diagnostic without a position: %s; %s\n%s", d.Summary, d.Detail, src)
			}
		}
	case <-time.After(limit):
		t.Fatalf("planning did not finish in %v:\n%s", limit, src)
	}
}

// planSeed is a small pipeline over local files (no servers to start).
const planSeed = `
dataset "q" {
  source = "q.jsonl"
}
engine "main" {
  kind    = "sqlite"
  path    = "./${item.db}.sqlite"
  timeout = "2s"
}
stage "generate" {
  predictions = "p.jsonl"
}
stage "validate" {
  input = stage.generate
}
stage "execute" {
  input       = stage.execute
  concurrency = 4
}
stage "score" {
  input = stage.execute
  metric "ex" {
    compare = "bird"
  }
}
stage "aggregate" {
  input    = stage.score
  group_by = ["db"]
}
sink "j" {
  kind  = "jsonl"
  table = "items"
  path  = "items.jsonl"
}
`

// TestMutatedPlans: mutations of a full pipeline plan without panics,
// hangs or unpositioned errors.
func TestMutatedPlans(t *testing.T) {
	src := strings.Replace(planSeed, "input       = stage.execute", "input       = stage.validate", 1)
	repl := []struct{ old, new string }{
		{"stage.validate", "stage.score"}, {"stage.execute", "stage.nope"}, {"= 4", "= 1e10"}, {"= 4", "= -1"},
		{"\"2s\"", "\"-2s\""}, {"\"bird\"", "\"nope\""}, {"[\"db\"]", "[1, {}]"}, {"\"jsonl\"", "\"csv\""},
		{"\"items\"", "\"nothing\""}, {"sqlite", "duckdb"}, {"generate\" {", "generate\" {\n  source = \"llm\""},
		{"dataset \"q\"", "dataset \"q\" {\n}\ndataset \"r\""}, {"metric \"ex\"", "metric \"nope\""},
		{"aggregate\" {", "aggregate\" {\n  input = stage.aggregate"}, {"p.jsonl", "/dev/zero"}, {"q.jsonl", "/dev/null"},
	}
	planWithin(t, []byte(src), 10*time.Second)
	for _, r := range repl {
		t.Run(r.old+"→"+r.new, func(t *testing.T) {
			planWithin(t, []byte(strings.Replace(src, r.old, r.new, 1)), 10*time.Second)
		})
	}
}

// FuzzPlan: arbitrary edits of a pipeline plan without panics or hangs.
func FuzzPlan(f *testing.F) {
	f.Add([]byte(planSeed))
	f.Fuzz(func(t *testing.T, src []byte) {
		planWithin(t, src, 10*time.Second)
	})
}

package planner_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/evalflow/evalflow/dsl"
	"github.com/evalflow/evalflow/engine"
	"github.com/evalflow/evalflow/engine/falkordb"
	"github.com/evalflow/evalflow/engine/sparql"
	"github.com/evalflow/evalflow/item"
	"github.com/evalflow/evalflow/planner"
	"github.com/evalflow/evalflow/table"
)

// pathExec is an executor located by name whose constructor records the
// options it was given.
type pathExec struct{}

func (pathExec) Execute(context.Context, engine.Query) (*table.Table, error) {
	return nil, &engine.Error{Class: item.ClassExecution, Msg: "not run"}
}
func (pathExec) LocatesByName() bool { return true }

// pathRegistry registers kind "paths" with one path option of each kind,
// and records the options of every executor built.
func pathRegistry(got *[]map[string]any) *engine.Registry {
	r := &engine.Registry{}
	r.Register("paths", func(_ context.Context, cfg engine.Config) (engine.Executor, error) {
		*got = append(*got, cfg.Options)
		return pathExec{}, nil
	},
		engine.PathOption{Name: "files", Kind: engine.DataPath},
		engine.PathOption{Name: "load", Kind: engine.DataPath},
		engine.PathOption{Name: "dir", Kind: engine.InstallPath},
		engine.PathOption{Name: "prog", Kind: engine.ProgramPath},
		engine.PathOption{Name: "tool", Kind: engine.ProgramPath},
	)
	return r
}

const pathPipeline = `
variable "extra" {
  type    = string
  default = ""
}
variable "cwdfile" {
  type    = string
  default = ""
}
dataset "q" {
  source = "q.jsonl"
}
engine "kg" {
  kind = "paths"
ROOT
  options = OPTIONS
}
stage "generate" {
  predictions = "p.jsonl"
}
stage "execute" {
  input  = stage.generate
  engine = engine.kg
}
`

func pathPipelineSrc(root, options string) string {
	return strings.NewReplacer("ROOT", root, "OPTIONS", options).Replace(pathPipeline)
}

// loadAt writes src as pipeline.hcl in dir and loads it with vars.
func loadAt(t *testing.T, dir, src string, vars ...string) *dsl.Pipeline {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, "pipeline.hcl"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	writeJSONL(t, filepath.Join(dir, "q.jsonl"), []map[string]any{{"id": "1", "gold": "x", "db": "g"}})
	writeJSONL(t, filepath.Join(dir, "p.jsonl"), []map[string]any{{"id": "1", "pred": "x"}})
	p, diags := dsl.Load(filepath.Join(dir, "pipeline.hcl"), dsl.LoadOptions{Env: []string{}, Vars: vars})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	return p
}

// TestEnginePathOptionsResolve: every path a kind declares in its options
// (a string, list elements, map values; -var values included) resolves
// against the pipeline's directory whatever directory evalflow runs from;
// fromcwd values resolve against the working directory; command names
// stay command names; other options and the block's own map are left as
// written.
func TestEnginePathOptionsResolve(t *testing.T) {
	pdir, cwd := t.TempDir(), t.TempDir()
	t.Chdir(cwd)
	cwd, _ = os.Getwd() // as fromcwd sees it
	var got []map[string]any
	opts := `{
    files = ["data/a.ttl", "/abs/b.ttl", var.extra, fromcwd(var.cwdfile)]
    load  = { g = "data/g.cypher", h = fromcwd("h.cypher") }
    dir   = "tools/ox"
    prog  = "node"
    tool  = "bin/python3"
    other = "kept/as/is"
  }`
	p := loadAt(t, pdir, pathPipelineSrc("", opts), "extra=data/from-var.ttl", "cwdfile=mine.ttl")
	pl, diags := planner.Build(context.Background(), p, planner.Options{Engines: pathRegistry(&got)})
	t.Cleanup(func() { pl.Close() })
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	want := []map[string]any{{
		"files": []any{filepath.Join(pdir, "data/a.ttl"), "/abs/b.ttl", filepath.Join(pdir, "data/from-var.ttl"), filepath.Join(cwd, "mine.ttl")},
		"load":  map[string]any{"g": filepath.Join(pdir, "data/g.cypher"), "h": filepath.Join(cwd, "h.cypher")},
		"dir":   filepath.Join(pdir, "tools/ox"),
		"prog":  "node",
		"tool":  filepath.Join(pdir, "bin/python3"),
		"other": "kept/as/is",
	}}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("options the engine saw (-want +got):\n%s", d)
	}
	if s := p.Engines[0].Options["files"].([]any)[0]; s != "data/a.ttl" {
		t.Errorf("the block's own options changed: files[0] = %v", s)
	}
}

// TestEnginePathOptionOutsideRoot: with a declared root, a data path in an
// option that resolves outside it (a climb, an absolute path, a symlink, a
// map entry, a -var value) stops the plan at the value's file:line:col
// before any engine is built; program and install paths are not held to
// the root.
func TestEnginePathOptionOutsideRoot(t *testing.T) {
	for _, tc := range []struct {
		name, options string
		vars          []string
		line, col     int // where the diagnostic points (line of pipeline.hcl)
	}{
		{name: "climb", options: `{ files = ["graphs/a.ttl", "../secret.ttl"] }`, line: 16, col: 40},
		{name: "absolute", options: `{ files = "/etc/passwd" }`, line: 16, col: 23},
		{name: "symlink", options: `{ files = ["graphs/link.ttl"] }`, line: 16, col: 24},
		{name: "map entry", options: `{ load = { g = "graphs/g.cypher", x = "secret/x.cypher" } }`, line: 16, col: 51},
		{name: "var", options: `{ files = [var.extra] }`, vars: []string{"extra=secret/s.ttl"}, line: 16, col: 24},
		{name: "computed", options: `merge({ files = [var.extra] }, {})`, vars: []string{"extra=secret/s.ttl"}, line: 16, col: 13},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.MkdirAll(filepath.Join(dir, "graphs"), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, "secret.ttl"), []byte("<a:s> <a:p> <a:o> .\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(filepath.Join(dir, "secret.ttl"), filepath.Join(dir, "graphs", "link.ttl")); err != nil {
				t.Fatal(err)
			}
			var got []map[string]any
			p := loadAt(t, dir, pathPipelineSrc(`  root = "graphs"`, tc.options), tc.vars...)
			pl, diags := planner.Build(context.Background(), p, planner.Options{Engines: pathRegistry(&got)})
			t.Cleanup(func() { pl.Close() })
			if !diags.HasErrors() {
				t.Fatalf("planned; want an error")
			}
			d := diags[0]
			if d.Summary != "Engine option path outside the engine's root" || !strings.Contains(d.Detail, "resolves outside its root") {
				t.Errorf("diagnostic: %s: %s", d.Summary, d.Detail)
			}
			if d.Subject == nil || d.Subject.Filename != filepath.Join(dir, "pipeline.hcl") || d.Subject.Start.Line != tc.line || d.Subject.Start.Column != tc.col {
				t.Errorf("diagnostic at %v, want pipeline.hcl:%d:%d", d.Subject, tc.line, tc.col)
			}
			if len(got) != 0 {
				t.Errorf("the engine was built with %v", got)
			}
		})
	}
	t.Run("programs and installs are not held to the root", func(t *testing.T) {
		var got []map[string]any
		p := loadAt(t, t.TempDir(), pathPipelineSrc(`  root = "graphs"`, `{ files = ["graphs/a.ttl"], dir = "/opt/ox", tool = "../bin/py" }`))
		pl, diags := planner.Build(context.Background(), p, planner.Options{Engines: pathRegistry(&got)})
		t.Cleanup(func() { pl.Close() })
		if diags.HasErrors() || len(got) != 1 {
			t.Fatalf("%v %v", diags, got)
		}
	})
}

// TestEnginePathOptionsRealEngines runs sparql (files) and falkordb (load)
// pipelines whose option paths are relative to the pipeline from another
// working directory: both find their data and answer every item.
func TestEnginePathOptionsRealEngines(t *testing.T) {
	skip := t.Skipf
	if os.Getenv("CI") != "" {
		skip = t.Fatalf
	}
	for _, tc := range []struct {
		kind, file, data, options, gold string
		need                            func() error
	}{
		{
			kind: "sparql", file: "data/g.ttl",
			data:    "<http://example.org/a> <http://example.org/p> \"one\" .\n",
			options: `{ files = ["data/g.ttl"] }`,
			gold:    "SELECT ?o WHERE { ?s <http://example.org/p> ?o }",
			need: func() error {
				if s := sparql.CheckSetup(); s.Node == "" || s.Dir == "" {
					return fmt.Errorf("node %q, Oxigraph package %q", s.Node, s.Dir)
				}
				return nil
			},
		},
		{
			kind: "falkordb", file: "data/g.cypher",
			data:    "CREATE (:P {v: 'one'})\n",
			options: `{ start = true, graph = "g", load = { g = "data/g.cypher" } }`,
			gold:    "MATCH (p:P) RETURN p.v",
			need: func() error {
				if _, err := falkordb.FindModule(""); err != nil {
					return err
				}
				_, err := falkordb.FindServer("")
				return err
			},
		},
	} {
		t.Run(tc.kind, func(t *testing.T) {
			if err := tc.need(); err != nil {
				skip("%s is not installed: %v", tc.kind, err)
			}
			dir := t.TempDir()
			if err := os.MkdirAll(filepath.Join(dir, "data"), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, tc.file), []byte(tc.data), 0o644); err != nil {
				t.Fatal(err)
			}
			src := fmt.Sprintf(`
dataset "q" {
  source = "q.jsonl"
}
engine "kg" {
  kind    = %q
  root    = "data"
  timeout = "20s"
  options = %s
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
`, tc.kind, tc.options)
			if err := os.WriteFile(filepath.Join(dir, "pipeline.hcl"), []byte(src), 0o644); err != nil {
				t.Fatal(err)
			}
			writeJSONL(t, filepath.Join(dir, "q.jsonl"), []map[string]any{{"id": "1", "gold": tc.gold}})
			writeJSONL(t, filepath.Join(dir, "p.jsonl"), []map[string]any{{"id": "1", "pred": tc.gold}})
			t.Chdir(t.TempDir())
			p, diags := dsl.Load(filepath.Join(dir, "pipeline.hcl"), dsl.LoadOptions{Env: []string{}})
			if diags.HasErrors() {
				t.Fatal(diags)
			}
			pl, diags := planner.Build(context.Background(), p, planner.Options{NoCache: true})
			t.Cleanup(func() { pl.Close() })
			if diags.HasErrors() {
				t.Fatal(diags)
			}
			if err := pl.Preflight(context.Background()); err != nil {
				t.Fatal(err)
			}
			var recs []*item.Record
			if err := pl.Run(context.Background(), planner.RunOptions{OnRecord: func(r *item.Record) error { recs = append(recs, r); return nil }}); err != nil {
				t.Fatal(err)
			}
			if len(recs) != 1 || recs[0].Status != "ok" || len(recs[0].Scores) == 0 || recs[0].Scores[0].Value != 1 {
				for _, r := range recs {
					t.Errorf("%s: %s %v %s (%s)", r.Item.ID, r.Status, r.Scores, r.Error, r.Final().ErrorMessage)
				}
				t.Fatalf("want one ok item scoring 1, got %d", len(recs))
			}
		})
	}
}

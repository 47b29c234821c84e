package planner_test

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/evalflow/evalflow/dsl"
	"github.com/evalflow/evalflow/planner"

	_ "github.com/evalflow/evalflow/engine/all"
)

// closedPort returns a local address nothing listens on.
func closedPort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

// TestPreflight: what a whole run depends on is checked before its first
// item, each failure naming the path or endpoint and the fix; a healthy
// pipeline passes.
func TestPreflight(t *testing.T) {
	repo, _ := filepath.Abs("..")
	dir := t.TempDir()
	ds := filepath.Join(dir, "q.jsonl")
	preds := filepath.Join(dir, "p.jsonl")
	os.WriteFile(ds, []byte(`{"id":"a","question":"?","gold":"SELECT 1","db":"shop"}`+"\n"), 0o644)
	os.WriteFile(preds, []byte(`{"id":"a","pred":"SELECT 1"}`+"\n"), 0o644)
	quick := filepath.Join(repo, "examples", "quickstart", "data")
	port := closedPort(t)
	cases := []struct {
		name, pipeline string
		vars           []string
		want           string // "" = passes
	}{
		{"healthy", "text2sql-replay.hcl", []string{"databases=" + quick}, ""},
		{"missing databases", "text2sql-replay.hcl", []string{"databases=" + filepath.Join(dir, "nope")}, "the databases directory " + filepath.Join(dir, "nope") + " does not exist"},
		{"postgres down", "text2sql-replay.hcl", []string{"engine=postgres", "dsn=postgres://u@" + port + "/x?sslmode=disable&connect_timeout=3"}, "postgres at 127.0.0.1"},
		{"sparql endpoint down", "text2sparql-replay.hcl", []string{"endpoint=http://" + port + "/sparql", "graph=x.ttl"}, "the SPARQL endpoint http://" + port + "/sparql cannot be reached"},
		{"model endpoint down", "text2sql-llm.hcl", []string{"databases=" + quick, "base_url=http://" + port + "/v1", "model=m"}, "model.generator: the endpoint http://" + port + "/v1 cannot be reached"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			vars := append([]string{"dataset=" + ds, "predictions=" + preds}, tc.vars...)
			p, diags := dsl.Load(filepath.Join(repo, "pipelines", tc.pipeline), dsl.LoadOptions{Vars: vars, Env: []string{}})
			if diags.HasErrors() {
				t.Fatal(diags)
			}
			pl, diags := planner.Build(context.Background(), p, planner.Options{})
			defer pl.Close()
			if diags.HasErrors() {
				t.Fatal(diags)
			}
			err := pl.Preflight(context.Background())
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("healthy pipeline: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("Preflight = %v, want it to say %q", err, tc.want)
			}
		})
	}
}

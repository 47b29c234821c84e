package sparql_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/evalflow/evalflow/engine"
	"github.com/evalflow/evalflow/engine/sparql"
)

// TestFirstUseInstall: with the package nowhere, Setup installs the pinned
// oxigraph with npm ci into the given directory, saying so on one line;
// a second executor finds it there and installs nothing, and queries run.
// It needs node, npm and the npm registry (scripts/install-test-deps.sh
// installs node and npm; CI=true makes their absence a failure).
func TestFirstUseInstall(t *testing.T) {
	if _, err := exec.LookPath("npm"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("npm is needed (CI=true): %v", err)
		}
		t.Skipf("npm not installed: %v", err)
	}
	dir := filepath.Join(t.TempDir(), "oxigraph-test")
	ttl := filepath.Join("testdata", "small.ttl")
	newExec := func(w *bytes.Buffer) *sparql.Executor {
		e, err := sparql.New(engine.Config{Options: map[string]any{"files": []any{ttl}}})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { e.Close() })
		sparql.InstallInto(e, dir, w)
		return e
	}
	var first bytes.Buffer
	e1 := newExec(&first)
	if err := e1.Setup(context.Background()); err != nil {
		t.Fatal(err)
	}
	want := "evalflow: installing the SPARQL engine (oxigraph@" + sparql.OxigraphVersion() + " from npm) into " + dir + "\n"
	if first.String() != want {
		t.Errorf("notice = %q, want %q", first.String(), want)
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "oxigraph", "package.json")); err != nil {
		t.Fatal(err)
	}
	if left, _ := filepath.Glob(dir + ".tmp-*"); len(left) > 0 {
		t.Errorf("temporary install directories left behind: %v", left)
	}
	var second bytes.Buffer
	e2 := newExec(&second)
	if err := e2.Ping(context.Background()); err != nil {
		t.Fatal(err)
	}
	if second.Len() != 0 {
		t.Errorf("second use printed %q: it reinstalled", second.String())
	}
	tb, err := e2.Execute(context.Background(), engine.Query{Text: "ASK { ?s ?p ?o }"})
	if err != nil {
		t.Fatal(err)
	}
	if tb.NumRows() != 1 {
		t.Errorf("ASK returned %d rows", tb.NumRows())
	}
}

// TestNoNode: without node on PATH the engine stops before any query with
// the command that installs Node.js and npm.
func TestNoNode(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	e, err := sparql.New(engine.Config{Options: map[string]any{"files": []any{filepath.Join("testdata", "small.ttl")}}})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	sparql.InstallInto(e, filepath.Join(t.TempDir(), "ox"), &bytes.Buffer{})
	err = e.Ping(context.Background())
	if err == nil || !strings.Contains(err.Error(), sparql.NodeInstall) {
		t.Fatalf("Ping = %v, want it to name %q", err, sparql.NodeInstall)
	}
}

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/evalflow/evalflow/engine/falkordb"
	"github.com/evalflow/evalflow/engine/pandas"
	"github.com/evalflow/evalflow/engine/sparql"
)

// TestMissingEngineStopsBeforeItems: an engine whose software is missing
// stops the run before its first item, exit 2, no items.parquet, printing
// the one command that installs it.
func TestMissingEngineStopsBeforeItems(t *testing.T) {
	repo, _ := filepath.Abs(filepath.Join("..", ".."))
	pandasDir := t.TempDir()
	// The pandas example with an interpreter that does not exist.
	src, err := os.ReadFile(filepath.Join(repo, "examples", "pandas", "pipeline.hcl"))
	if err != nil {
		t.Fatal(err)
	}
	hcl := strings.Replace(string(src), `path    = "data/bikes"`, `path    = "data/bikes"
  options = { python = "/nonexistent/python3" }`, 1)
	if hcl == string(src) {
		t.Fatal("could not rewrite the pandas example")
	}
	if err := os.WriteFile(filepath.Join(pandasDir, "pipeline.hcl"), []byte(hcl), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(repo, "examples", "pandas", "data"), filepath.Join(pandasDir, "data")); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, pipeline, want string
		env                  map[string]string
	}{
		// No node on PATH and an empty user cache directory.
		{"sparql", filepath.Join(repo, "examples", "sparql"), sparql.NodeInstall,
			map[string]string{"PATH": t.TempDir(), "XDG_CACHE_HOME": t.TempDir(), "EVALFLOW_OXIGRAPH_DIR": ""}},
		// No valkey-server or redis-server on PATH.
		{"cypher", filepath.Join(repo, "examples", "cypher"), falkordb.InstallCommand,
			map[string]string{"PATH": t.TempDir()}},
		{"pandas", pandasDir, pandas.InstallCommand, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			out := filepath.Join(t.TempDir(), "run")
			var stdout, stderr bytes.Buffer
			code := run(context.Background(), []string{"run", tc.pipeline, "-out", out}, &stdout, &stderr)
			if code != exitRun {
				t.Errorf("exit %d, want %d; stderr:\n%s", code, exitRun, stderr.String())
			}
			if !strings.Contains(stderr.String(), "`"+tc.want+"`") {
				t.Errorf("stderr does not name %q:\n%s", tc.want, stderr.String())
			}
			if _, err := os.Stat(filepath.Join(out, "items.parquet")); err == nil {
				t.Error("items.parquet was written")
			}
			if strings.Contains(stdout.String(), "complete") {
				t.Errorf("stdout says complete:\n%s", stdout.String())
			}
		})
	}
}

// TestDoctor: one line per engine kind and provider; a key in the
// environment makes its provider ready without being printed; exit 0.
func TestDoctor(t *testing.T) {
	const secret = "sk-test-do-not-print-0123456789"
	t.Setenv("OPENAI_API_KEY", secret)
	t.Setenv("ANTHROPIC_API_KEY", "")
	t.Setenv("GEMINI_API_KEY", "")
	t.Setenv("GOOGLE_API_KEY", "")
	var stdout, stderr bytes.Buffer
	if code := run(context.Background(), []string{"doctor", "-format", "json"}, &stdout, &stderr); code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	if strings.Contains(stdout.String(), secret) {
		t.Fatal("doctor printed the key")
	}
	var doc struct{ Checks []check }
	if err := json.Unmarshal(stdout.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	got := map[string]check{}
	for _, c := range doc.Checks {
		got[c.Kind+"/"+c.Name] = c
		if !c.Ready && c.Fix == "" {
			t.Errorf("%s/%s is not ready and names no fix", c.Kind, c.Name)
		}
	}
	for _, n := range []string{"engine/sqlite", "engine/duckdb", "engine/postgres", "engine/sparql", "engine/falkordb", "engine/neo4j", "engine/pandas",
		"provider/openai", "provider/anthropic", "provider/gemini", "provider/openai-compatible"} {
		if _, ok := got[n]; !ok {
			t.Errorf("no line for %s", n)
		}
	}
	if c := got["provider/openai"]; !c.Ready || c.Detail != "key in $OPENAI_API_KEY" {
		t.Errorf("openai: %+v", c)
	}
	if c := got["provider/anthropic"]; c.Ready || c.Fix != "export ANTHROPIC_API_KEY=…" {
		t.Errorf("anthropic: %+v", c)
	}
	if c := got["engine/sqlite"]; !c.Ready {
		t.Errorf("sqlite: %+v", c)
	}

	// Without node, the SPARQL line says what to install.
	t.Setenv("PATH", t.TempDir())
	stdout.Reset()
	if code := run(context.Background(), []string{"doctor"}, &stdout, &stderr); code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	var line string
	for _, l := range strings.Split(stdout.String(), "\n") {
		if strings.HasPrefix(l, "engine") && strings.Contains(l, "sparql") {
			line = l
		}
	}
	if !strings.Contains(line, "run: "+sparql.NodeInstall) {
		t.Errorf("sparql line without node: %q", line)
	}
}

package examples

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// polarsReader returns the command line of docs/output.md's polars code
// run by nodejs-polars (testdata/readers-npm, installed by make deps).
// Missing, the test fails — unless EVALFLOW_SKIP_NODE_READER=1 says to
// skip it outside CI.
func polarsReader(t *testing.T) []string {
	t.Helper()
	dir, _ := filepath.Abs(filepath.Join("testdata", "readers-npm"))
	node, err := exec.LookPath("node")
	if err == nil {
		_, err = os.Stat(filepath.Join(dir, "node_modules", "nodejs-polars", "package.json"))
	}
	if err != nil {
		if os.Getenv("EVALFLOW_SKIP_NODE_READER") == "1" && os.Getenv("CI") != "true" {
			t.Skip("EVALFLOW_SKIP_NODE_READER=1: ", err)
		}
		t.Fatalf("nodejs-polars is not installed (%v): run make deps", err)
	}
	return []string{node, filepath.Join(dir, "read.mjs")}
}

// docsPolarsLines returns the code lines of docs/output.md's polars block
// in "Reading the results" that compute something (not the import and the
// run variable).
func docsPolarsLines(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "docs", "output.md"))
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	i := strings.Index(doc, "## Reading the results")
	if i < 0 {
		t.Fatal(`docs/output.md has no "## Reading the results" section`)
	}
	doc = doc[i:]
	j := strings.Index(doc, "import polars as pl")
	if j < 0 {
		t.Fatal(`docs/output.md "Reading the results" has no polars block`)
	}
	block, _, _ := strings.Cut(doc[j:], "```")
	var lines []string
	for _, l := range strings.Split(block, "\n") {
		l = strings.TrimSpace(l)
		if l == "" || strings.HasPrefix(l, "import ") || strings.HasPrefix(l, "run = ") {
			continue
		}
		lines = append(lines, l)
	}
	return lines
}

// evalflowQuery runs `evalflow query -format json RUN SQL`.
func evalflowQuery(t *testing.T, bin, run, sql string) []map[string]any {
	t.Helper()
	out, err := exec.Command(bin, "query", "-format", "json", run, sql).Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			t.Fatalf("evalflow query %q: %v\n%s", sql, err, ee.Stderr)
		}
		t.Fatal(err)
	}
	var rows []map[string]any
	if err := json.Unmarshal(out, &rows); err != nil {
		t.Fatalf("evalflow query %q: %v\n%s", sql, err, out)
	}
	return rows
}

// TestOutputDocsPolars runs the quickstart with the real CLI, computes
// docs/output.md's polars examples with nodejs-polars (an independent
// Parquet reader: Rust, not parquet-go) and requires each result to equal
// evalflow's own: mean ex by difficulty, the wrong items and the attempts
// per item from `evalflow query` (embedded DuckDB), the overall means from
// manifest.json. read.mjs must carry every polars line of the docs as a
// comment above its translation, so the two cannot drift apart.
func TestOutputDocsPolars(t *testing.T) {
	reader := polarsReader(t)
	script, err := os.ReadFile(reader[1])
	if err != nil {
		t.Fatal(err)
	}
	lines := docsPolarsLines(t)
	if len(lines) < 4 {
		t.Fatalf("docs/output.md's polars block has %d computing lines, want 4 or more: %q", len(lines), lines)
	}
	for _, l := range lines {
		if !strings.Contains(string(script), "// "+l+"\n") {
			t.Errorf("docs/output.md's polars line is not translated in %s (a `// %s` comment above its translation): %s", reader[1], l, l)
		}
	}

	bin := buildEvalflow(t)
	run := filepath.Join(t.TempDir(), "run")
	cmd := exec.Command(bin, "run", "examples/quickstart", "-out", run)
	cmd.Dir = ".."
	cmd.Env = append(os.Environ(), "EVALFLOW_CACHE_DIR="+t.TempDir())
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("evalflow run examples/quickstart: %v\n%s", err, out)
	}

	var stderr bytes.Buffer
	pc := exec.Command(reader[0], reader[1], run)
	pc.Stderr = &stderr
	out, err := pc.Output()
	if err != nil {
		t.Fatalf("node read.mjs: %v\n%s", err, stderr.String())
	}
	var polars struct {
		ExByDifficulty  []map[string]any `json:"ex_by_difficulty"`
		Wrong           []map[string]any `json:"wrong"`
		AttemptsPerItem []map[string]any `json:"attempts_per_item"`
		Overall         []map[string]any `json:"overall"`
	}
	if err := json.Unmarshal(out, &polars); err != nil {
		t.Fatalf("read.mjs output: %v\n%s", err, out)
	}

	approx := cmpopts.EquateApprox(0, 1e-12)
	for _, c := range []struct {
		name string
		sql  string
		got  []map[string]any
	}{
		{"mean ex by difficulty", "SELECT difficulty, avg(ex) AS ex FROM items GROUP BY ALL ORDER BY difficulty", polars.ExByDifficulty},
		{"wrong items", "SELECT id, question, gold, prediction, error_class FROM items WHERE ex = 0 ORDER BY seq", polars.Wrong},
		{"attempts per item", "SELECT id, count(*) AS len FROM attempts GROUP BY id ORDER BY id", polars.AttemptsPerItem},
	} {
		want := evalflowQuery(t, bin, run, c.sql)
		if len(want) == 0 {
			t.Errorf("%s: evalflow query returned no rows", c.name)
		}
		if d := cmp.Diff(want, c.got, approx); d != "" {
			t.Errorf("%s: polars differs from evalflow query (-evalflow +polars):\n%s", c.name, d)
		}
	}

	b, err := os.ReadFile(filepath.Join(run, "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	var man struct {
		Metrics map[string]float64 `json:"metrics"`
	}
	if err := json.Unmarshal(b, &man); err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, r := range polars.Overall {
		m, _ := r["metric"].(string)
		v, ok := r["mean"].(float64)
		if !ok {
			t.Errorf("aggregates.parquet via polars: metric %q has mean %v", m, r["mean"])
			continue
		}
		got[m] = v
		lo, _ := r["ci_low"].(float64)
		hi, _ := r["ci_high"].(float64)
		if !(lo <= v && v <= hi) {
			t.Errorf("aggregates.parquet via polars: %s mean %v outside its CI [%v, %v]", m, v, lo, hi)
		}
	}
	if len(man.Metrics) == 0 {
		t.Fatal("manifest.json has no metrics")
	}
	if d := cmp.Diff(man.Metrics, got, approx); d != "" {
		t.Errorf("overall means: polars on aggregates.parquet differs from manifest.json (-manifest +polars):\n%s", d)
	}
}

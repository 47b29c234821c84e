package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/evalflow/evalflow/rundir"
)

// TestQueryAndShow: a run's results are readable with nothing but evalflow
// (the embedded DuckDB): query in three formats, show grouped, and both on
// a run that has not finished (its parts).
func TestQueryAndShow(t *testing.T) {
	bin := evalflowBinary(t)
	dir := t.TempDir()
	repo, _ := filepath.Abs(filepath.Join("..", ".."))
	if res := runBin(t, bin, dir, "run", filepath.Join(repo, "examples", "quickstart"), "-quiet", "-out", "r"); res.code != 0 {
		t.Fatalf("run: exit %d\n%s", res.code, res.stderr)
	}
	q := runBin(t, bin, dir, "query", "r", "SELECT count(*) AS n, sum(ex) AS right FROM items")
	if q.code != 0 || !strings.Contains(q.stdout, "30") || !strings.Contains(q.stdout, "18") {
		t.Errorf("query text: exit %d\n%s%s", q.code, q.stdout, q.stderr)
	}
	csvOut := runBin(t, bin, dir, "query", "-format", "csv", "r", "SELECT difficulty, count(*) AS n FROM items GROUP BY ALL ORDER BY 1")
	if csvOut.stdout != "difficulty,n\neasy,11\nhard,5\nmedium,14\n" {
		t.Errorf("query csv:\n%s%s", csvOut.stdout, csvOut.stderr)
	}
	js := runBin(t, bin, dir, "query", "-format", "json", "r", "SELECT metric, mean FROM aggregates WHERE group_by = 'all' ORDER BY metric")
	var rows []map[string]any
	if err := json.Unmarshal([]byte(js.stdout), &rows); err != nil || len(rows) != 2 || rows[0]["metric"] != "ex" || rows[0]["mean"] != 0.6 {
		t.Errorf("query json: %v %v\n%s", err, rows, js.stdout)
	}
	if bad := runBin(t, bin, dir, "query", "r", "SELECT nope FROM items"); bad.code != exitConfig {
		t.Errorf("a bad query: exit %d", bad.code)
	}
	if none := runBin(t, bin, dir, "query", "nowhere", "SELECT 1"); none.code != exitRun {
		t.Errorf("not a run directory: exit %d", none.code)
	}
	show := runBin(t, bin, dir, "show", "-by", "difficulty", "r")
	for _, want := range []string{"easy", "0.9091", "hard", "medium"} {
		if show.code != 0 || !strings.Contains(show.stdout, want) {
			t.Errorf("show -by difficulty lacks %q: exit %d\n%s%s", want, show.code, show.stdout, show.stderr)
		}
	}
	if bad := runBin(t, bin, dir, "show", "-by", "dificulty", "r"); bad.code != exitConfig || !strings.Contains(bad.stderr, `Did you mean "difficulty"?`) || bad.stdout != "" {
		t.Errorf("show -by a misspelt column: exit %d, want %d, the error and nothing on stdout\nstdout: %s\nstderr: %s", bad.code, exitConfig, bad.stdout, bad.stderr)
	}
	// A run that has not finished: its finished items are in parts/.
	parts := filepath.Join(dir, "r", rundir.PartsDir)
	os.MkdirAll(parts, 0o755)
	os.Rename(filepath.Join(dir, "r", rundir.ItemsFile), filepath.Join(parts, "items-G000-P000000.parquet"))
	os.Rename(filepath.Join(dir, "r", rundir.AttemptsFile), filepath.Join(parts, "attempts-G000-P000000.parquet"))
	p := runBin(t, bin, dir, "query", "r", "SELECT count(*) FROM items")
	if p.code != 0 || !strings.Contains(p.stdout, "30") || !strings.Contains(p.stderr, "has not finished") {
		t.Errorf("query over parts: exit %d\n%s%s", p.code, p.stdout, p.stderr)
	}
	if s := runBin(t, bin, dir, "show", "r"); s.code != 0 || !strings.Contains(s.stdout, "not finished") {
		t.Errorf("show over parts: exit %d\n%s%s", s.code, s.stdout, s.stderr)
	}
}

package main

import (
	"database/sql"
	"os"
	"path/filepath"
	"strings"
	"testing"

	_ "modernc.org/sqlite"

	"github.com/evalflow/evalflow/rundir"
)

// copyDir copies the quickstart (pipeline and data) so a test may edit it.
func copyQuickstart(t *testing.T, dst string) {
	t.Helper()
	src, _ := filepath.Abs(filepath.Join("..", "..", "examples", "quickstart"))
	err := filepath.Walk(src, func(p string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if info.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// stagesOf returns each stage's items, cached and computed counts.
func stagesOf(t *testing.T, dir string) map[string][3]int {
	t.Helper()
	out := map[string][3]int{}
	for _, s := range readManifest(t, dir).Stages {
		out[s.Name] = [3]int{s.Items, s.Cached, s.Computed}
	}
	return out
}

// TestStageCache: switching only the compare profile re-runs score and
// aggregate alone — validate, execute and refine are answered from the
// stage cache (no query runs) and attempts say so; editing the database
// misses; -refresh and -no-cache bypass it.
func TestStageCache(t *testing.T) {
	bin := evalflowBinary(t)
	dir := t.TempDir()
	qs := filepath.Join(dir, "qs")
	copyQuickstart(t, qs)
	cacheDir := filepath.Join(dir, "cache")
	t.Setenv("EVALFLOW_CACHE_DIR", cacheDir)
	run := func(out string, args ...string) cmdResult {
		t.Helper()
		res := runBin(t, bin, dir, append([]string{"run", qs, "-quiet", "-out", out}, args...)...)
		if res.code != 0 {
			t.Fatalf("%s: exit %d\n%s%s", out, res.code, res.stdout, res.stderr)
		}
		return res
	}
	run("first")
	st := stagesOf(t, filepath.Join(dir, "first"))
	if st["execute"] != [3]int{30, 0, 30} || st["validate"][1] != 0 {
		t.Fatalf("a cold cache answered something: %v", st)
	}
	// The quickstart's one timeout (q28) is never stored: it runs again.
	const timeouts = 1

	run("bird", "-var", "compare=bird")
	st = stagesOf(t, filepath.Join(dir, "bird"))
	for _, s := range []string{"validate", "execute", "refine"} {
		if st[s][1] == 0 || st[s][2] > timeouts {
			t.Errorf("after switching the compare profile, stage %s: %d items, %d from the cache, %d computed; want only the timeout computed", s, st[s][0], st[s][1], st[s][2])
		}
	}
	att := itemRows(t, filepath.Join(dir, "bird", rundir.AttemptsFile))
	for _, a := range att {
		if a["executed"] == true && a["cached"] != true && a["error_class"] != "timeout" {
			t.Errorf("attempt %v/%v executed but not marked cached", a["id"], a["attempt"])
		}
	}
	if first := itemRows(t, filepath.Join(dir, "first", rundir.AttemptsFile)); len(first) != len(att) {
		t.Errorf("attempts differ in number: %d then %d", len(first), len(att))
	} else {
		for i := range att {
			for _, col := range []string{"query", "rows", "error_class", "error_message", "valid", "executed", "syntax_valid"} {
				if first[i][col] != att[i][col] {
					t.Errorf("attempt %d %s: %v from the engine, %v from the cache", i, col, first[i][col], att[i][col])
				}
			}
		}
	}

	// -refresh execute: execute's queries run again; validate still hits.
	run("refresh", "-refresh", "execute")
	st = stagesOf(t, filepath.Join(dir, "refresh"))
	if st["execute"][1] != 0 || st["validate"][2] != 0 {
		t.Errorf("-refresh execute: %v", st)
	}
	if res := runBin(t, bin, dir, "run", qs, "-quiet", "-out", "bad", "-refresh", "exeucte"); res.code != exitConfig || !strings.Contains(res.stderr, `Did you mean "execute"?`) {
		t.Errorf("-refresh of an unknown stage: exit %d\n%s", res.code, res.stderr)
	}
	// -no-cache: nothing read.
	run("nocache", "-no-cache")
	st = stagesOf(t, filepath.Join(dir, "nocache"))
	for s, v := range st {
		if v[1] != 0 {
			t.Errorf("-no-cache: stage %s had %d items from a cache", s, v[1])
		}
	}

	// Editing the database: every query on it misses.
	db, err := sql.Open("sqlite", filepath.Join(qs, "data", "shop.sqlite"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec("UPDATE customers SET city = city || '.' WHERE id = 1"); err != nil {
		t.Fatal(err)
	}
	db.Close()
	run("edited")
	st = stagesOf(t, filepath.Join(dir, "edited"))
	if st["execute"][1] != 0 {
		t.Errorf("after editing the database, execute had %d items from the cache", st["execute"][1])
	}
	// An unrelated change (the engine timeout) still hits.
	run("timeout", "-var", "timeout=3s")
	st = stagesOf(t, filepath.Join(dir, "timeout"))
	if st["execute"][2] > timeouts {
		t.Errorf("changing only the timeout missed the cache: %v", st)
	}

	// The cache command sees the entries and explains one.
	res := runBin(t, bin, dir, "cache", "stats")
	if res.code != 0 || !strings.Contains(res.stdout, "stage cache") {
		t.Errorf("cache stats: %d %s%s", res.code, res.stdout, res.stderr)
	}
	if res := runBin(t, bin, dir, "cache", "gc", "-max-bytes", "1"); res.code != 0 || !strings.Contains(res.stdout, "removed") {
		t.Errorf("cache gc: %d %s%s", res.code, res.stdout, res.stderr)
	}
	if ss := runBin(t, bin, dir, "cache", "stats"); !strings.Contains(ss.stdout, "entries      0") {
		t.Errorf("after gc to 1 byte: %s", ss.stdout)
	}
}

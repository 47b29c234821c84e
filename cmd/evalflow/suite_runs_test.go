package main

import (
	"database/sql"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/evalflow/evalflow/rundir"
)

// suiteRunsData writes a tiny test suite (dbs/shop: the original and one
// variant, shop_001.sqlite, where b = 'y' is also on a = 5; dbs/solo: one
// database, no suite) and a replayed dataset over it.
func suiteRunsData(t *testing.T, dir string) {
	t.Helper()
	mk := func(path string, stmts ...string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		db, err := sql.Open("sqlite", "file:"+path)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		for _, s := range stmts {
			if _, err := db.Exec(s); err != nil {
				t.Fatalf("%s: %s: %v", path, s, err)
			}
		}
	}
	orig := []string{"CREATE TABLE t (a INTEGER, b TEXT)", "INSERT INTO t VALUES (1, 'x'), (2, 'y'), (3, 'z')"}
	mk(filepath.Join(dir, "dbs", "shop", "shop.sqlite"), orig...)
	mk(filepath.Join(dir, "dbs", "shop", "shop_001.sqlite"), "CREATE TABLE t (a INTEGER, b TEXT)", "INSERT INTO t VALUES (2, 'y'), (5, 'y')")
	mk(filepath.Join(dir, "dbs", "solo", "solo.sqlite"), orig...)
	writeFile(t, filepath.Join(dir, "q.jsonl"), []byte(`{"id": "near_miss", "question": "b of a = 2", "gold": "SELECT b FROM t WHERE a = 2", "db": "shop"}
{"id": "equivalent", "question": "b of a = 2", "gold": "SELECT b FROM t WHERE a = 2", "db": "shop"}
{"id": "wrong", "question": "b of a = 2", "gold": "SELECT b FROM t WHERE a = 2", "db": "shop"}
{"id": "no_suite", "question": "b of a = 2", "gold": "SELECT b FROM t WHERE a = 2", "db": "solo"}
`))
	writeFile(t, filepath.Join(dir, "p.jsonl"), []byte(`{"id": "near_miss", "pred": "SELECT b FROM t WHERE b = 'y'"}
{"id": "equivalent", "pred": "SELECT b FROM t WHERE a + 0 = 2"}
{"id": "wrong", "pred": "SELECT b FROM t WHERE a = 3"}
{"id": "no_suite", "pred": "SELECT b FROM t WHERE b = 'y'"}
`))
}

func suiteRunArgs(t *testing.T, compare, out string) []string {
	t.Helper()
	repo, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	return []string{"run", filepath.Join(repo, "pipelines", "text2sql-replay.hcl"),
		"-var", "dataset=q.jsonl", "-var", "predictions=p.jsonl", "-var", "databases=dbs",
		"-var", "compare=" + compare, "-quiet", "-out", out}
}

// TestSuiteRuns runs the curated replay pipeline under the testsuite
// profile over a suite of our own: ex is the verdict on each item's own
// database, ex_suite test-suite's over the whole folder (NULL for the item
// whose folder holds its database alone), ex_suite_db the first database
// that separated the pair, with both results there; ex_suite has its
// aggregate row with a Wilson interval, is in the manifest, the summary
// prints both side by side with the items the suite flipped, gates and
// compare read it, and the report shows the separating database.
func TestSuiteRuns(t *testing.T) {
	bin := evalflowBinary(t)
	dir := t.TempDir()
	suiteRunsData(t, dir)
	res := runBin(t, bin, dir, suiteRunArgs(t, "testsuite", "ts")...)
	if res.code != exitOK {
		t.Fatalf("exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	ts := filepath.Join(dir, "ts")

	pv := func(rows string, n int) string {
		return `{"columns":["b"],"rows":` + rows + `,"rows_total":` + itoa(n) + `,"columns_total":1,"truncated":false,"capped":false}`
	}
	got := map[string][]any{}
	for _, r := range itemRows(t, filepath.Join(ts, rundir.ItemsFile)) {
		got[r["id"].(string)] = []any{r["ex"], r["ex_suite"], r["ex_suite_db"], r["suite_gold_preview"], r["suite_pred_preview"]}
	}
	want := map[string][]any{
		"near_miss":  {1.0, 0.0, "shop_001.sqlite", pv(`[["y"]]`, 1), pv(`[["y"],["y"]]`, 2)},
		"equivalent": {1.0, 1.0, nil, nil, nil},
		"wrong":      {0.0, 0.0, "shop.sqlite", nil, nil},
		"no_suite":   {1.0, nil, nil, nil, nil},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ex, ex_suite, ex_suite_db, suite_gold_preview, suite_pred_preview (-want +got):\n%s", diff)
	}

	m := readManifest(t, ts)
	if v := m.Metrics["ex_suite"]; v == nil || math.Abs(*v-1.0/3) > 1e-12 {
		t.Errorf("manifest metrics: ex_suite %v, want 1/3 (over the 3 items with a suite)", v)
	}
	if v := m.Metrics["ex"]; v == nil || *v != 0.75 {
		t.Errorf("manifest metrics: ex %v, want 0.75", v)
	}
	if !strings.Contains(strings.Join(m.BinaryMetrics, ","), "ex_suite") {
		t.Errorf("binary_metrics %v lack ex_suite", m.BinaryMetrics)
	}
	found := false
	for _, r := range itemRows(t, filepath.Join(ts, rundir.AggregatesFile)) {
		if r["metric"] == "ex_suite" && r["group_by"] == "all" {
			found = true
			if r["n"] != int64(3) || r["items"] != int64(4) || r["nulls"] != int64(0) || r["ci_method"] != "wilson" {
				t.Errorf("aggregates row of ex_suite: %v", r)
			}
		}
	}
	if !found {
		t.Error("aggregates.parquet has no overall row for ex_suite")
	}
	summary, err := os.ReadFile(filepath.Join(ts, rundir.SummaryFile))
	if err != nil {
		t.Fatal(err)
	}
	line := "test suite: ex 0.7500 (own database, n 4) · ex_suite 0.3333 (whole suite, n 3) · the suite flipped 1 item (ex 1 → ex_suite 0)"
	if !strings.Contains(string(summary), line) {
		t.Errorf("summary.md does not say %q:\n%s", line, summary)
	}
	if !strings.Contains(res.stdout, "  "+line+"\n") {
		t.Errorf("the terminal summary does not say %q:\n%s", line, res.stdout)
	}
	if !strings.Contains(res.stdout, "  ex_suite                   0.3333") {
		t.Errorf("the summary has no ex_suite row:\n%s", res.stdout)
	}

	// The report shows the separating database and both results there.
	page, err := os.ReadFile(filepath.Join(ts, "report.html"))
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{`class="result suite-gold" data-suite-db="shop_001.sqlite"`, `class="result suite-pred" data-suite-db="shop_001.sqlite"`,
		`data-suite-db="shop.sqlite"`, "the item's own database <code>shop.sqlite</code> separates"} {
		if !strings.Contains(string(page), s) {
			t.Errorf("report.html lacks %s", s)
		}
	}

	// A gate on ex_suite: the run is complete, so its manifest answers.
	gate := runBin(t, bin, dir, append(suiteRunArgs(t, "testsuite", "ts"), "-fail-under", "ex_suite=0.8")...)
	if gate.code != exitGate || !strings.Contains(gate.stderr, "ex_suite = 0.3333 is below -fail-under ex_suite=0.8") {
		t.Errorf("-fail-under ex_suite=0.8: exit %d\n%s", gate.code, gate.stderr)
	}

	// compare pairs ex_suite where both runs have it.
	if r := runBin(t, bin, dir, suiteRunArgs(t, "testsuite_keep_distinct", "kd")...); r.code != exitOK {
		t.Fatalf("keep_distinct: exit %d\n%s", r.code, r.stderr)
	}
	cmpRes := runBin(t, bin, dir, "compare", "ts", "kd", "-format", "json")
	if cmpRes.code != exitOK {
		t.Fatalf("compare: exit %d\n%s", cmpRes.code, cmpRes.stderr)
	}
	var rows []map[string]any
	if err := json.Unmarshal([]byte(cmpRes.stdout), &rows); err != nil {
		t.Fatal(err)
	}
	found = false
	for _, r := range rows {
		if r["metric"] == "ex_suite" && r["group_by"] == nil {
			found = true
			if r["n_pairs"] != 3.0 {
				t.Errorf("compare's ex_suite row: %v, want 3 pairs", r)
			}
		}
	}
	if !found {
		t.Errorf("compare has no ex_suite row:\n%s", cmpRes.stdout)
	}
}

// TestSuiteRunsWithoutSuites: under evalflow's profile items.parquet keeps
// its columns; under testsuite on databases without suites ex_suite is
// NULL everywhere, and nothing about suites is printed.
func TestSuiteRunsWithoutSuites(t *testing.T) {
	bin := evalflowBinary(t)
	dir := t.TempDir()
	suiteRunsData(t, dir)
	if r := runBin(t, bin, dir, suiteRunArgs(t, "evalflow", "ef")...); r.code != exitOK {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	for _, r := range itemRows(t, filepath.Join(dir, "ef", rundir.ItemsFile)) {
		for c := range r {
			if strings.Contains(c, "suite") {
				t.Errorf("column %s under evalflow's profile", c)
			}
		}
	}
	// Only solo (no suite) is left.
	writeFile(t, filepath.Join(dir, "q.jsonl"), []byte(`{"id": "no_suite", "question": "b of a = 2", "gold": "SELECT b FROM t WHERE a = 2", "db": "solo"}`+"\n"))
	r := runBin(t, bin, dir, suiteRunArgs(t, "testsuite", "solo")...)
	if r.code != exitOK {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	for _, row := range itemRows(t, filepath.Join(dir, "solo", rundir.ItemsFile)) {
		if row["ex"] != 1.0 || row["ex_suite"] != nil || row["ex_suite_db"] != nil {
			t.Errorf("item without a suite: ex %v, ex_suite %v, ex_suite_db %v", row["ex"], row["ex_suite"], row["ex_suite_db"])
		}
	}
	summary, _ := os.ReadFile(filepath.Join(dir, "solo", rundir.SummaryFile))
	if strings.Contains(r.stdout, "suite") || strings.Contains(string(summary), "suite") {
		t.Errorf("a run without suites prints about them:\n%s\n%s", r.stdout, summary)
	}
	if m := readManifest(t, filepath.Join(dir, "solo")); m.Metrics["ex_suite"] != nil {
		t.Errorf("manifest has ex_suite = %v, computed for no item", *m.Metrics["ex_suite"])
	}
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

// TestSuiteRunReportInChromium renders the report of a run on test suites
// in Chromium: every hooked number (ex_suite's aggregate row and item
// values among them) agrees with the Parquet files, and the items the
// suite flipped follow the wrong ones, marked like them.
func TestSuiteRunReportInChromium(t *testing.T) {
	chromiumPath(t)
	bin := evalflowBinary(t)
	dir := t.TempDir()
	suiteRunsData(t, dir)
	// An absolute -out: the page names the run directory as given.
	ts := filepath.Join(dir, "ts")
	if r := runBin(t, bin, dir, suiteRunArgs(t, "testsuite", ts)...); r.code != exitOK {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	d := renderInChromium(t, filepath.Join(ts, "report.html"), "")
	checkNumbers(t, bin, d, []string{ts}, "aggregates", "item", "items_total", "items_wrong")
	// wrong (ex 0), then near_miss (flipped), then the right ones.
	if diff := cmp.Diff([][]bool{{true, true, false, false}}, d.Items); diff != "" {
		t.Errorf("items marked wrong, in page order (-want +got):\n%s", diff)
	}
	found := false
	for _, n := range d.Numbers {
		if strings.Contains(n.Key, `"ex_suite"`) {
			found = true
		}
	}
	if !found {
		t.Error("the page shows no ex_suite number")
	}
}

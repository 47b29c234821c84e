package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/evalflow/evalflow/rundir"
)

// TestSweepRun: a -sweep run writes one directory whose rows carry the
// cell and the swept variables, with a cell × metric aggregate and CI.
func TestSweepRun(t *testing.T) {
	bin := evalflowBinary(t)
	dir := t.TempDir()
	repo, _ := filepath.Abs(filepath.Join("..", ".."))
	qs := filepath.Join(repo, "examples", "quickstart")
	res := runBin(t, bin, dir, "run", qs, "-quiet", "-out", "sw", "-sweep", "compare=evalflow,bird", "-sweep", "max_iterations=0,2")
	if res.code != 0 {
		t.Fatalf("exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	cells := []string{"compare=evalflow,max_iterations=0", "compare=evalflow,max_iterations=2", "compare=bird,max_iterations=0", "compare=bird,max_iterations=2"}
	for _, c := range cells {
		if !strings.Contains(res.stdout, c) {
			t.Errorf("summary lacks cell %s:\n%s", c, res.stdout)
		}
	}
	m := readManifest(t, filepath.Join(dir, "sw"))
	if len(m.Cells) != 4 || m.Counts.Items != 120 {
		t.Fatalf("manifest: %d cells, %d items; want 4 cells of 30", len(m.Cells), m.Counts.Items)
	}
	for i, c := range m.Cells {
		if c.ID != cells[i] || c.Items != 30 || c.Metrics["ex"] == nil {
			t.Errorf("cell %d: %+v", i, c)
		}
	}
	rows := itemRows(t, filepath.Join(dir, "sw", rundir.ItemsFile))
	perCell := map[string]int{}
	for i, r := range rows {
		if r["seq"] != int64(i) {
			t.Fatalf("row %d has seq %v", i, r["seq"])
		}
		cell := r["cell"].(string)
		perCell[cell]++
		if want := fmt.Sprintf("compare=%v,max_iterations=%v", r["compare"], r["max_iterations"]); cell != want {
			t.Errorf("row %d: cell %q but compare=%v max_iterations=%v", i, cell, r["compare"], r["max_iterations"])
		}
		if _, isInt := r["max_iterations"].(int64); !isInt {
			t.Errorf("max_iterations column holds %T, want an integer", r["max_iterations"])
		}
	}
	for _, c := range cells {
		if perCell[c] != 30 {
			t.Errorf("cell %s: %d rows, want 30", c, perCell[c])
		}
	}
	// The refine depth changes results; the compare profile does not here.
	if *m.Cells[0].Metrics["ex"] == *m.Cells[1].Metrics["ex"] {
		t.Errorf("max_iterations 0 and 2 give the same ex %v: the cells did not get their values", *m.Cells[0].Metrics["ex"])
	}
	agg := itemRows(t, filepath.Join(dir, "sw", rundir.AggregatesFile))
	n := 0
	for _, r := range agg {
		if r["group_by"] != "all" || r["metric"] != "ex" {
			continue
		}
		n++
		lo, hi, mean := r["ci_low"].(float64), r["ci_high"].(float64), r["mean"].(float64)
		if r["ci_method"] != "wilson" || !(lo <= mean && mean <= hi) || lo < 0 || hi > 1 {
			t.Errorf("cell %v: ex %v CI [%v, %v] by %v; want a Wilson interval around the mean", r["cell"], mean, lo, hi, r["ci_method"])
		}
	}
	if n != 4 {
		t.Errorf("%d overall ex rows in aggregates, want one per cell", n)
	}
	attempts := itemRows(t, filepath.Join(dir, "sw", rundir.AttemptsFile))
	for _, a := range attempts {
		if a["cell"] == nil || a["compare"] == nil {
			t.Fatalf("attempt row without cell columns: %v", a)
		}
	}

	// export takes compare's selectors: name=value pairs in any order.
	exp := runBin(t, bin, dir, "export", "-format", "jsonl", "sw@max_iterations=2,compare=bird")
	if exp.code != 0 || strings.Count(exp.stdout, "\n") != 30 {
		t.Errorf("export of a cell by a reordered selector: exit %d, %d lines\n%s", exp.code, strings.Count(exp.stdout, "\n"), exp.stderr)
	}
	if bad := runBin(t, bin, dir, "export", "sw@compare=bird,compare=evalflow"); bad.code != exitConfig || !strings.Contains(bad.stderr, "given twice") {
		t.Errorf("a selector naming a variable twice: exit %d\n%s", bad.code, bad.stderr)
	}
	// A run that did not complete is not exported unless asked: the
	// official scorers pair lines by position.
	raw, _ := os.ReadFile(filepath.Join(dir, "sw", rundir.ManifestName))
	os.WriteFile(filepath.Join(dir, "sw", rundir.ManifestName), []byte(strings.Replace(string(raw), `"status": "complete"`, `"status": "cancelled"`, 1)), 0o644)
	if inc := runBin(t, bin, dir, "export", "sw@max_iterations=0,compare=evalflow"); inc.code != exitRun || !strings.Contains(inc.stderr, "not complete") {
		t.Errorf("export of a cancelled run: exit %d\n%s", inc.code, inc.stderr)
	}
	if inc := runBin(t, bin, dir, "export", "-partial", "sw@max_iterations=0,compare=evalflow"); inc.code != 0 {
		t.Errorf("export -partial: exit %d\n%s", inc.code, inc.stderr)
	}
}

// TestSweepKillNineThenResume: a sweep killed mid-run continues where it
// was, and the result equals an uninterrupted sweep.
func TestSweepKillNineThenResume(t *testing.T) {
	bin := evalflowBinary(t)
	dir := t.TempDir()
	const n = 10
	args := append(slowReplay(t, dir, n), "-sweep", "compare=evalflow,bird")

	ref := runBin(t, bin, dir, append(args, "-out", "ref")...)
	if ref.code != 0 {
		t.Fatalf("reference run: exit %d\n%s%s", ref.code, ref.stdout, ref.stderr)
	}
	cmd := exec.Command(bin, append(args, "-out", "crash")...)
	cmd.Dir = dir
	cmd.Env = withoutEvalflowVars(os.Environ())
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		// Wait for a part from each cell's lane: cells run side by side,
		// so both have finished items long before either is done.
		l0, _ := filepath.Glob(filepath.Join(dir, "crash", "parts", "items-G000-P*.parquet"))
		l1, _ := filepath.Glob(filepath.Join(dir, "crash", "parts", "items-G000-L001-*.parquet"))
		if len(l0) > 0 && len(l1) > 0 {
			break
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatal("no part was flushed within 60 s")
		}
		time.Sleep(20 * time.Millisecond)
	}
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	crash := filepath.Join(dir, "crash")
	partial := itemRows(t, filepath.Join(crash, "parts", "items-*.parquet"))
	if len(partial) == 0 || len(partial) >= 2*n {
		t.Fatalf("crashed sweep holds %d items, want some but not all of %d", len(partial), 2*n)
	}
	// The cells ran side by side (sharing one pool per stage): both had
	// finished items when the process died, neither was done.
	perCell := map[any]int{}
	for _, r := range partial {
		perCell[r["cell"]]++
	}
	if len(perCell) != 2 {
		t.Errorf("finished items by cell at the kill: %v; want both cells under way", perCell)
	}
	res := runBin(t, bin, dir, append(args, "-out", "crash")...)
	if res.code != 0 {
		t.Fatalf("resume: exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	for _, f := range []string{rundir.ItemsFile, rundir.AttemptsFile, rundir.AggregatesFile} {
		want := itemRows(t, filepath.Join(dir, "ref", f))
		got := itemRows(t, filepath.Join(crash, f))
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s after kill -9 and resume differs from an uninterrupted sweep (-want +got):\n%s", f, diff)
		}
	}
	if m := readManifest(t, crash); m.Kept != len(partial) || len(m.Cells) != 2 || m.Counts.Items != 2*n {
		t.Errorf("manifest: kept %d (want %d), %d cells, %d items", m.Kept, len(partial), len(m.Cells), m.Counts.Items)
	}
	// Another sweep on the same directory is refused, naming the cells.
	other := runBin(t, bin, dir, append(slowReplay(t, dir, n), "-sweep", "compare=evalflow,testsuite", "-out", "crash")...)
	if other.code != exitRun || !strings.Contains(other.stderr, "cells") {
		t.Errorf("other sweep on the directory: exit %d\n%s", other.code, other.stderr)
	}
}

// TestBranchRun: two generate stages (two "models") joined at validate run
// as two cells, branch=NAME; rows carry the branch and compare pairs them.
func TestBranchRun(t *testing.T) {
	bin := evalflowBinary(t)
	dir := t.TempDir()
	data, _ := filepath.Abs(filepath.Join("..", "..", "examples", "quickstart", "data"))
	var small strings.Builder
	for i := 1; i <= 30; i++ {
		pred := "SELECT 1"
		if i%2 == 0 {
			pred = "SELECT count(*) FROM customers"
		}
		fmt.Fprintf(&small, `{"id": "q%02d", "pred": %q}`+"\n", i, pred)
	}
	writeFile(t, filepath.Join(dir, "small.jsonl"), []byte(small.String()))
	writeFile(t, filepath.Join(dir, "pipeline.hcl"), []byte(fmt.Sprintf(`
dataset "questions" {
  source = %[1]q
}
engine "shop" {
  kind    = "sqlite"
  path    = "%[2]s/${item.db}.sqlite"
  root    = %[2]q
  timeout = "1s"
}
stage "large" {
  kind        = "generate"
  source      = "replay"
  predictions = %[3]q
}
stage "small" {
  kind        = "generate"
  source      = "replay"
  predictions = "small.jsonl"
}
stage "validate" {
  input  = [stage.large, stage.small]
  engine = engine.shop
}
stage "execute" {
  input  = stage.validate
  engine = engine.shop
}
stage "score" {
  input = stage.execute
  metric "ex" {}
}
stage "aggregate" {
  input = stage.score
}
`, filepath.Join(data, "questions.jsonl"), data, filepath.Join(data, "predictions.jsonl"))))
	res := runBin(t, bin, dir, "run", "pipeline.hcl", "-quiet", "-out", "r")
	if res.code != 0 {
		t.Fatalf("exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	m := readManifest(t, filepath.Join(dir, "r"))
	if len(m.Cells) != 2 || m.Cells[0].ID != "branch=large" || m.Cells[1].ID != "branch=small" || m.Counts.Items != 60 {
		t.Fatalf("cells %+v, items %d", m.Cells, m.Counts.Items)
	}
	rows := itemRows(t, filepath.Join(dir, "r", rundir.ItemsFile))
	for i, r := range rows {
		want := "large"
		if i >= 30 {
			want = "small"
		}
		if r["branch"] != want {
			t.Fatalf("row %d: branch %v, want %s", i, r["branch"], want)
		}
	}
	if rows[30]["prediction"] != "SELECT 1" || rows[0]["prediction"] == "SELECT 1" {
		t.Errorf("the branches did not get their own predictions: %v / %v", rows[0]["prediction"], rows[30]["prediction"])
	}
	cmp := runBin(t, bin, dir, "compare", "-format", "json", "r@branch=large", "r@branch=small")
	if cmp.code != 0 || !strings.Contains(cmp.stdout, `"n_pairs": 30`) {
		t.Errorf("compare the branches: exit %d\n%s%s", cmp.code, cmp.stdout, cmp.stderr)
	}
	plan := runBin(t, bin, dir, "plan", "pipeline.hcl")
	if plan.code != 0 || !strings.Contains(plan.stdout, "branch large:") || !strings.Contains(plan.stdout, "branch small:") {
		t.Errorf("plan of a branched pipeline: exit %d\n%s%s", plan.code, plan.stdout, plan.stderr)
	}
}

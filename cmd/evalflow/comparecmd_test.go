package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"github.com/evalflow/evalflow/stats"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/evalflow/evalflow/compare"
	"github.com/evalflow/evalflow/rundir"
	"github.com/evalflow/evalflow/sinks"
	"github.com/evalflow/evalflow/table"
)

// compareCmd runs `evalflow compare ARGS` in process.
func compareCmd(t *testing.T, args ...string) cmdResult {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := cmdCompare(context.Background(), args, &stdout, &stderr)
	return cmdResult{code: code, stdout: stdout.String(), stderr: stderr.String()}
}

// compareJSON runs compare with -format json and decodes its rows.
func compareJSON(t *testing.T, args ...string) []map[string]any {
	t.Helper()
	r := compareCmd(t, append(args, "-format", "json")...)
	if r.code != 0 {
		t.Fatalf("compare %q: exit %d\n%s", args, r.code, r.stderr)
	}
	var rows []map[string]any
	if err := json.Unmarshal([]byte(r.stdout), &rows); err != nil {
		t.Fatalf("compare %q: %v\n%s", args, err, r.stdout)
	}
	return rows
}

// findCompareRow returns the row of metric (and group; nil for the overall row).
func findCompareRow(t *testing.T, rows []map[string]any, metric string, group any) map[string]any {
	t.Helper()
	for _, r := range rows {
		if r["metric"] == metric && r["group"] == group {
			return r
		}
	}
	t.Fatalf("no row for metric %s group %v in %v", metric, group, rows)
	return nil
}

// quickstartPair runs the quickstart twice in a copy of it: A with the
// shipped predictions, B with the predictions of the first ten items A got
// right replaced by a wrong query and the first item A got wrong replaced
// by its gold query. The copy's dataset gets two more items: q31, whose
// gold query fails (status error on both sides), and q32, which A does not
// run (-limit 31), so B has one item A lacks.
type quickstartPair struct {
	a, b          string   // run directories
	worse, better []string // the ids B was made worse and better on
}

func makeQuickstartPair(t *testing.T) quickstartPair {
	t.Helper()
	bin := evalflowBinary(t)
	dir := t.TempDir()
	repo, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	qs := filepath.Join(dir, "qs")
	if err := os.CopyFS(qs, os.DirFS(filepath.Join(repo, "examples", "quickstart"))); err != nil {
		t.Fatal(err)
	}
	questions := filepath.Join(qs, "data", "questions.jsonl")
	preds := filepath.Join(qs, "data", "predictions.jsonl")
	appendString(t, questions,
		`{"id": "q31", "question": "broken gold", "gold": "SELECT * FROM no_such_table", "db": "shop", "difficulty": "hard"}`+"\n"+
			`{"id": "q32", "question": "How many customers?", "gold": "SELECT COUNT(*) FROM customers", "db": "shop", "difficulty": "easy"}`+"\n")
	appendString(t, preds, `{"id": "q31", "pred": "SELECT 1"}`+"\n"+`{"id": "q32", "pred": "SELECT COUNT(*) FROM customers"}`+"\n")

	common := []string{"run", "qs", "-quiet", "-max-errors", "1", "-var", "timeout=500ms"}
	p := quickstartPair{a: filepath.Join(dir, "A"), b: filepath.Join(dir, "B")}
	if r := runBin(t, bin, dir, append(common, "-limit", "31", "-out", "A")...); r.code != 0 {
		t.Fatalf("run A: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}

	// Choose the flips from what A scored.
	gold := map[string]string{}
	for _, line := range nonBlankLines(t, questions) {
		var q struct{ ID, Gold string }
		if err := json.Unmarshal([]byte(line), &q); err != nil {
			t.Fatal(err)
		}
		gold[q.ID] = q.Gold
	}
	for _, r := range itemRows(t, filepath.Join(p.a, "items.parquet")) {
		id := r["id"].(string)
		ex, _ := r["ex"].(float64)
		switch {
		case r["status"] != "ok" || id == "q31":
		case ex == 1 && len(p.worse) < 10:
			p.worse = append(p.worse, id)
		case ex == 0 && len(p.better) < 1:
			p.better = append(p.better, id)
		}
	}
	if len(p.worse) != 10 || len(p.better) != 1 {
		t.Fatalf("quickstart A: want 10 right and 1 wrong items to flip, got %v %v", p.worse, p.better)
	}
	var out bytes.Buffer
	for _, line := range nonBlankLines(t, preds) {
		var pr struct{ ID string }
		if err := json.Unmarshal([]byte(line), &pr); err != nil {
			t.Fatal(err)
		}
		switch {
		case slices.Contains(p.worse, pr.ID):
			fmt.Fprintf(&out, `{"id": %q, "pred": "SELECT 0"}`+"\n", pr.ID)
		case slices.Contains(p.better, pr.ID):
			fmt.Fprintf(&out, `{"id": %q, "pred": %q}`+"\n", pr.ID, gold[pr.ID])
		default:
			out.WriteString(line + "\n")
		}
	}
	writeFile(t, preds, out.Bytes())
	if r := runBin(t, bin, dir, append(common, "-out", "B")...); r.code != 0 {
		t.Fatalf("run B: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	return p
}

func appendString(t *testing.T, path, s string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(s); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

func nonBlankLines(t *testing.T, path string) []string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if strings.TrimSpace(sc.Text()) != "" {
			out = append(out, sc.Text())
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// handStats recomputes one metric's comparison from the two items.parquet
// files, independently of package compare: the usable pairs in A's order,
// the dropped count, and the flips.
type handStats struct {
	a, b          []float64
	dropped       int
	better, worse []string
}

func byHand(t *testing.T, dirA, dirB, metric string, inGroup func(map[string]any) bool) handStats {
	t.Helper()
	rowsB := map[string]map[string]any{}
	for _, r := range itemRows(t, filepath.Join(dirB, "items.parquet")) {
		rowsB[r["id"].(string)] = r
	}
	var h handStats
	for _, ra := range itemRows(t, filepath.Join(dirA, "items.parquet")) {
		rb, ok := rowsB[ra["id"].(string)]
		if !ok || (inGroup != nil && !inGroup(ra)) {
			continue
		}
		x, okA := ra[metric].(float64)
		y, okB := rb[metric].(float64)
		bad := func(s any) bool { return s == "error" || s == "cancelled" }
		if !okA || !okB || bad(ra["status"]) || bad(rb["status"]) {
			h.dropped++
			continue
		}
		h.a, h.b = append(h.a, x), append(h.b, y)
		switch {
		case y > x:
			h.better = append(h.better, ra["id"].(string))
		case y < x:
			h.worse = append(h.worse, ra["id"].(string))
		}
	}
	return h
}

func meanOf(xs []float64) float64 {
	var s float64
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}

func nearly(a, b float64) bool { return math.Abs(a-b) < 1e-12 }

func jsonStrings(v any) []string {
	out := []string{}
	for _, x := range v.([]any) {
		out = append(out, x.(string))
	}
	return out
}

// TestCompareQuickstart compares two real runs of the quickstart.
func TestCompareQuickstart(t *testing.T) {
	p := makeQuickstartPair(t)
	ma, mb := readManifest(t, p.a), readManifest(t, p.b)

	t.Run("json", func(t *testing.T) {
		rows := compareJSON(t, p.a, p.b)
		if len(rows) != 2 {
			t.Fatalf("want one row per metric (ex, pass_at_k), got %d", len(rows))
		}
		keys := []string{"a", "a_mean", "b", "b_mean", "ci_high", "ci_low", "diff", "flipped_better", "flipped_worse",
			"group", "group_by", "metric", "n_dropped", "n_only_a", "n_only_b", "n_pairs", "p_holm", "p_value", "significant", "test"}
		for _, r := range rows {
			var got []string
			for k := range r {
				got = append(got, k)
			}
			slices.Sort(got)
			if d := cmp.Diff(keys, got); d != "" {
				t.Errorf("keys (-want +got):\n%s", d)
			}
			if r["a"] != p.a || r["b"] != p.b || r["group"] != nil || r["group_by"] != nil {
				t.Errorf("labels and groups: %v", r)
			}
		}

		ex := findCompareRow(t, rows, "ex", nil)
		h := byHand(t, p.a, p.b, "ex", nil)
		if d := cmp.Diff(p.worse, h.worse); d != "" {
			t.Fatalf("the runs did not flip the items chosen (-chosen +observed):\n%s", d)
		}
		want := map[string]any{
			"n_pairs": float64(30), "n_dropped": float64(1), "n_only_a": float64(0), "n_only_b": float64(1),
			"test": "mcnemar_exact",
		}
		for k, v := range want {
			if ex[k] != v {
				t.Errorf("ex %s = %v, want %v", k, ex[k], v)
			}
		}
		if len(h.a) != 30 || h.dropped != 1 {
			t.Fatalf("by hand: %d pairs, %d dropped", len(h.a), h.dropped)
		}
		diffs := make([]float64, len(h.a))
		for i := range h.a {
			diffs[i] = h.b[i] - h.a[i]
		}
		for k, v := range map[string]float64{"a_mean": meanOf(h.a), "b_mean": meanOf(h.b), "diff": meanOf(diffs)} {
			if !nearly(ex[k].(float64), v) {
				t.Errorf("ex %s = %v, want %v", k, ex[k], v)
			}
		}
		if got := ex["diff"].(float64); !nearly(got, -9.0/30) {
			t.Errorf("ex diff = %v, want -9/30 (10 worse, 1 better)", got)
		}
		pEx := stats.McNemarExact(len(p.worse), len(p.better))
		if ex["p_value"].(float64) != pEx {
			t.Errorf("ex p_value = %v, want McNemarExact(10, 1) = %v", ex["p_value"], pEx)
		}
		lo, hi := stats.PairedBootstrapCI(h.a, h.b, compare.DefaultResamples, 1, 0.95)
		if ex["ci_low"].(float64) != lo || ex["ci_high"].(float64) != hi {
			t.Errorf("ex CI = [%v, %v], want [%v, %v]", ex["ci_low"], ex["ci_high"], lo, hi)
		}
		if d := cmp.Diff(p.worse, jsonStrings(ex["flipped_worse"])); d != "" {
			t.Errorf("flipped_worse (-want +got):\n%s", d)
		}
		if d := cmp.Diff(p.better, jsonStrings(ex["flipped_better"])); d != "" {
			t.Errorf("flipped_better (-want +got):\n%s", d)
		}

		pk := findCompareRow(t, rows, "pass_at_k", nil)
		hk := byHand(t, p.a, p.b, "pass_at_k", nil)
		if int(pk["n_pairs"].(float64)) != len(hk.a) || int(pk["n_dropped"].(float64)) != hk.dropped {
			t.Errorf("pass_at_k pairs %v dropped %v, want %d %d", pk["n_pairs"], pk["n_dropped"], len(hk.a), hk.dropped)
		}
		if !strings.HasPrefix(pk["test"].(string), "wilcoxon_") {
			t.Errorf("pass_at_k test = %v, want a Wilcoxon test (not declared 0/1)", pk["test"])
		}
		holm := stats.Holm([]float64{ex["p_value"].(float64), pk["p_value"].(float64)})
		if ex["p_holm"].(float64) != holm[0] || pk["p_holm"].(float64) != holm[1] {
			t.Errorf("p_holm = %v, %v; want Holm = %v", ex["p_holm"], pk["p_holm"], holm)
		}
		if ex["significant"] != (holm[0] < 0.05) || ex["significant"] != true {
			t.Errorf("ex significant = %v with p_holm %v", ex["significant"], holm[0])
		}
	})

	t.Run("metric_and_seed", func(t *testing.T) {
		rows := compareJSON(t, p.a, p.b, "-metric", "ex", "-ci-seed", "7", "-resamples", "500")
		if len(rows) != 1 || rows[0]["metric"] != "ex" {
			t.Fatalf("-metric ex: %v", rows)
		}
		h := byHand(t, p.a, p.b, "ex", nil)
		lo, hi := stats.PairedBootstrapCI(h.a, h.b, 500, 7, 0.95)
		if rows[0]["ci_low"].(float64) != lo || rows[0]["ci_high"].(float64) != hi {
			t.Errorf("CI with seed 7: [%v, %v], want [%v, %v]", rows[0]["ci_low"], rows[0]["ci_high"], lo, hi)
		}
		// One test: Holm leaves it alone.
		if rows[0]["p_holm"] != rows[0]["p_value"] {
			t.Errorf("a family of one: p_holm %v != p_value %v", rows[0]["p_holm"], rows[0]["p_value"])
		}
	})

	t.Run("by", func(t *testing.T) {
		for _, col := range []string{"db", "difficulty"} {
			rows := compareJSON(t, p.a, p.b, "-by", col)
			var ps []float64
			var groups []any
			for _, r := range rows {
				if pv, ok := r["p_value"].(float64); ok {
					ps = append(ps, pv)
					if r["significant"] != (r["p_holm"].(float64) < 0.05) {
						t.Errorf("-by %s %s/%v: significant %v with p_holm %v", col, r["metric"], r["group"], r["significant"], r["p_holm"])
					}
				}
				if r["metric"] == "ex" && r["group"] != nil {
					groups = append(groups, r["group"])
					if r["group_by"] != col {
						t.Errorf("-by %s: group_by = %v", col, r["group_by"])
					}
					g := r["group"]
					h := byHand(t, p.a, p.b, "ex", func(ra map[string]any) bool { return ra[col] == g })
					if int(r["n_pairs"].(float64)) != len(h.a) || int(r["n_dropped"].(float64)) != h.dropped {
						t.Errorf("-by %s group %v: pairs %v dropped %v, want %d %d", col, g, r["n_pairs"], r["n_dropped"], len(h.a), h.dropped)
					}
					if len(h.a) > 0 && !nearly(r["a_mean"].(float64), meanOf(h.a)) {
						t.Errorf("-by %s group %v: a_mean %v, want %v", col, g, r["a_mean"], meanOf(h.a))
					}
					if want := stats.McNemarExact(len(h.worse), len(h.better)); len(h.a) > 0 && r["p_value"].(float64) != want {
						t.Errorf("-by %s group %v: p %v, want %v", col, g, r["p_value"], want)
					}
				}
			}
			want := map[string][]any{"db": {"shop"}, "difficulty": {"easy", "hard", "medium"}}[col]
			if d := cmp.Diff(want, groups); d != "" {
				t.Errorf("-by %s groups (-want +got):\n%s", col, d)
			}
			if col == "difficulty" {
				// Eight rows dilute ex's p = 0.0117: not significant now.
				if r := findCompareRow(t, rows, "ex", nil); r["significant"] != false || r["p_value"].(float64) >= 0.05 {
					t.Errorf("-by difficulty, ex overall: p %v p_holm %v significant %v", r["p_value"], r["p_holm"], r["significant"])
				}
			}
			// Holm runs over every row of the invocation.
			holm := stats.Holm(ps)
			k := 0
			for _, r := range rows {
				if _, ok := r["p_value"].(float64); ok {
					if r["p_holm"].(float64) != holm[k] {
						t.Errorf("-by %s %s/%v: p_holm %v, want %v", col, r["metric"], r["group"], r["p_holm"], holm[k])
					}
					k++
				}
			}
		}
	})

	t.Run("text", func(t *testing.T) {
		r := compareCmd(t, p.a, p.b)
		if r.code != 0 {
			t.Fatalf("exit %d\n%s", r.code, r.stderr)
		}
		for _, want := range []string{
			"A: " + p.a + "  run " + ma.RunID + "  pipeline qs",
			"B: " + p.b + "  run " + mb.RunID + "  pipeline qs",
			"31 items paired by id; 0 only in A; 1 only in B (q32)",
			"exact McNemar test on the discordant pairs for the metrics declared 0/1 (ex)",
			"Wilcoxon signed-rank test on B − A (SciPy's defaults) for pass_at_k",
			"ex: 10 worse (1 → 0): " + strings.Join(p.worse, ", "),
			"ex: 1 better (0 → 1): " + p.better[0],
		} {
			if !strings.Contains(r.stdout, want) {
				t.Errorf("text output lacks %q:\n%s", want, r.stdout)
			}
		}
		// The table's columns line up: every row as wide as the header.
		lines := strings.Split(r.stdout, "\n")
		var head int
		for i, l := range lines {
			if strings.HasPrefix(l, "metric ") {
				head = i
			}
		}
		if !strings.HasPrefix(lines[head+1], "ex ") || !strings.HasSuffix(lines[head+1], "*") {
			t.Errorf("ex row: %q (want significant, marked *)", lines[head+1])
		}
		col := strings.Index(lines[head], "p_holm") + len("p_holm")
		for _, l := range lines[head+1 : head+3] {
			if len([]rune(l)) < col || []rune(l)[col-1] == ' ' {
				t.Errorf("p_holm column not right-aligned in %q (header %q)", l, lines[head])
			}
		}
	})

	t.Run("markdown", func(t *testing.T) {
		r := compareCmd(t, p.a, p.b, "-format", "markdown")
		if r.code != 0 {
			t.Fatalf("exit %d\n%s", r.code, r.stderr)
		}
		for _, want := range []string{
			"**A**: " + p.a,
			"| metric | pairs | dropped | A mean | B mean | diff | 95% CI | test | p | p_holm | sig |\n|---|---:|---:|---:|---:|---:|---|---|---:|---:|---|\n| ex | 30 | 1 |",
			"- ex: 10 worse (1 → 0): ",
		} {
			if !strings.Contains(r.stdout, want) {
				t.Errorf("markdown lacks %q:\n%s", want, r.stdout)
			}
		}
	})

	t.Run("gate", func(t *testing.T) {
		r := compareCmd(t, p.a, p.b, "-fail-if-worse", "ex", "-format", "json")
		if r.code != 3 {
			t.Fatalf("B worse on ex: exit %d, want 3\n%s", r.code, r.stderr)
		}
		if !strings.Contains(r.stderr, "B is worse on ex: diff -0.3000, p_holm ") {
			t.Errorf("gate message: %s", r.stderr)
		}
		if !strings.HasPrefix(r.stdout, "[") {
			t.Errorf("the comparison is still printed: %q", r.stdout)
		}
		// B → A is better on ex: the gate passes.
		if r := compareCmd(t, p.b, p.a, "-fail-if-worse", "ex"); r.code != 0 {
			t.Errorf("A better on ex: exit %d\n%s", r.code, r.stderr)
		}
		// Worse but not significant at a stricter alpha: passes.
		if r := compareCmd(t, p.a, p.b, "-fail-if-worse", "ex", "-alpha", "0.001"); r.code != 0 {
			t.Errorf("-alpha 0.001: exit %d\n%s", r.code, r.stderr)
		}
		// With -by any group counts: the overall row fails it anyway,
		// and the message names a group when a group fails.
		r = compareCmd(t, p.a, p.b, "-fail-if-worse", "ex", "-by", "db")
		if r.code != 3 || !strings.Contains(r.stderr, `B is worse on ex (db = "shop")`) {
			t.Errorf("-by db: exit %d\n%s", r.code, r.stderr)
		}
		r = compareCmd(t, p.a, p.b, "-fail-if-worse", "ex", "-metric", "pass_at_k")
		if r.code != 1 || !strings.Contains(r.stderr, "-fail-if-worse ex: ex is not among the compared metrics") {
			t.Errorf("gate on a metric not compared: exit %d\n%s", r.code, r.stderr)
		}
	})

	t.Run("warnings", func(t *testing.T) {
		r := compareCmd(t, p.a, p.a)
		if r.code != 0 || !strings.Contains(r.stderr, "warning: A and B are the same run") {
			t.Errorf("same run: exit %d\n%s", r.code, r.stderr)
		}
		if strings.Contains(compareCmd(t, p.a, p.b).stderr, "warning") {
			t.Errorf("A and B share the dataset: no warning expected")
		}
	})

	t.Run("argument_errors", func(t *testing.T) {
		for _, c := range []struct {
			name string
			args []string
			code int
			want string
		}{
			{"one run", []string{p.a}, 1, "want two runs"},
			{"format", []string{p.a, p.b, "-format", "xml"}, 1, "-format must be text, json, markdown"},
			{"alpha", []string{p.a, p.b, "-alpha", "1.5"}, 1, "-alpha must be between 0 and 1"},
			{"resamples", []string{p.a, p.b, "-resamples", "0"}, 1, "-resamples must be between 1"},
			{"unknown flag", []string{p.a, p.b, "-metrik", "ex"}, 1, "flag provided but not defined"},
			{"metric", []string{p.a, p.b, "-metric", "exx"}, 1, `-metric exx: unknown metric. Did you mean "ex"?`},
			{"by", []string{p.a, p.b, "-by", "dificulty"}, 1, `-by dificulty: A (` + p.a + `) has no column dificulty. Did you mean "difficulty"?`},
			{"by float", []string{p.a, p.b, "-by", "ex"}, 1, "-by ex: the column is float"},
			{"missing dir", []string{p.a, filepath.Join(p.a, "nope")}, 2, "no such run directory"},
			{"not a run", []string{p.a, filepath.Dir(p.a)}, 2, "is not a run directory (no manifest.json)"},
			{"cell of a plain run", []string{p.a, p.b + "@model=x"}, 1, "is not a sweep run"},
		} {
			t.Run(c.name, func(t *testing.T) {
				r := compareCmd(t, c.args...)
				if r.code != c.code || !strings.Contains(r.stderr, c.want) {
					t.Errorf("exit %d, want %d; stderr lacks %q:\n%s", r.code, c.code, c.want, r.stderr)
				}
			})
		}
	})
}

// writeSweepRun writes a run directory shaped like a sweep run's: a
// manifest listing cells and an items.parquet with a cell column. rows are
// (cell, id, status, ex, difficulty); ex < 0 means null.
func writeSweepRun(t *testing.T, dir string, cells []rundir.ManifestCell, rows [][5]any) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	m := map[string]any{"run_id": "20260101T000000Z-00000000", "status": "complete", "pipeline": "sweep.hcl",
		"dataset": map[string]any{"sha256": "abc"}, "cells": cells}
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, rundir.ManifestName), b)
	s := rundir.ItemSchema([]sinks.Column{{Name: "difficulty", Type: table.TypeString}}, []string{"ex"})
	s = append(sinks.Schema{{Name: "cell", Type: table.TypeString}}, s...)
	w, err := sinks.NewParquet(filepath.Join(dir, rundir.ItemsFile), s)
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range rows {
		row := make([]any, len(s))
		for j, c := range s {
			switch c.Name {
			case "cell":
				row[j] = r[0]
			case "seq":
				row[j] = int64(i)
			case "id":
				row[j] = r[1]
			case "status":
				row[j] = r[2]
			case "ex":
				if v := r[3].(float64); v >= 0 {
					row[j] = v
				}
			case "difficulty":
				row[j] = r[4]
			}
		}
		if err := w.Write(row); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

func sweepCells() []rundir.ManifestCell {
	var cells []rundir.ManifestCell
	for _, m := range []string{"a", "b"} {
		for _, p := range []string{"short", "long"} {
			cells = append(cells, rundir.ManifestCell{Index: len(cells), ID: "model=" + m + ",prompt=" + p,
				Variables: map[string]json.RawMessage{"model": json.RawMessage(`"` + m + `"`), "prompt": json.RawMessage(`"` + p + `"`)}})
		}
	}
	return cells
}

// TestCompareCells selects cells of a sweep run with RUN_DIR@CELL.
func TestCompareCells(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "sweep")
	cells := sweepCells()
	// Cell a/short: x1..x4 right; cell b/short: x1 wrong, x2 error; the
	// long cells are all wrong. Every cell has the same ids.
	var rows [][5]any
	for _, c := range cells {
		for i := 1; i <= 4; i++ {
			id := fmt.Sprintf("x%d", i)
			ex, status := 0.0, "ok"
			switch {
			case c.ID == "model=a,prompt=short":
				ex = 1
			case c.ID == "model=b,prompt=short" && i == 1:
				ex = 0
			case c.ID == "model=b,prompt=short" && i == 2:
				ex, status = -1, "error"
			case c.ID == "model=b,prompt=short":
				ex = 1
			}
			rows = append(rows, [5]any{c.ID, id, status, ex, "easy"})
		}
	}
	writeSweepRun(t, dir, cells, rows)

	rs := compareJSON(t, dir+"@model=a,prompt=short", dir+"@model=b,prompt=short")
	if len(rs) != 1 {
		t.Fatalf("rows: %v", rs)
	}
	r := rs[0]
	want := map[string]any{"a": dir + "@model=a,prompt=short", "b": dir + "@model=b,prompt=short",
		"n_pairs": float64(3), "n_dropped": float64(1), "n_only_a": float64(0), "n_only_b": float64(0),
		"a_mean": 1.0, "b_mean": 2.0 / 3, "test": "mcnemar_exact", "p_value": stats.McNemarExact(1, 0)}
	for k, v := range want {
		if r[k] != v {
			t.Errorf("%s = %v, want %v", k, r[k], v)
		}
	}
	if d := cmp.Diff([]string{"x1"}, jsonStrings(r["flipped_worse"])); d != "" {
		t.Errorf("flipped_worse (-want +got):\n%s", d)
	}

	// A subset of the pairs that names one cell, in any order, selects it.
	rs = compareJSON(t, dir+"@prompt=short,model=a", dir+"@model=a,prompt=long")
	if rs[0]["a"] != dir+"@model=a,prompt=short" || rs[0]["a_mean"] != 1.0 || rs[0]["b_mean"] != 0.0 {
		t.Errorf("subset selector: %v", rs[0])
	}

	text := compareCmd(t, dir+"@model=a,prompt=short", dir+"@model=b,prompt=short")
	if !strings.Contains(text.stdout, "cell model=a,prompt=short") || !strings.Contains(text.stdout, "pipeline sweep.hcl") {
		t.Errorf("text header names the cells:\n%s", text.stdout)
	}

	for _, c := range []struct {
		name, a string
		want    []string
	}{
		{"no cell", dir, []string{"is a sweep run of 4 cells; choose one with " + dir + "@CELL", dir + "@model=a,prompt=short\n", dir + "@model=b,prompt=long"}},
		{"several", dir + "@model=a", []string{"@model=a matches 2 cells", dir + "@model=a,prompt=short\n  " + dir + "@model=a,prompt=long"}},
		{"none", dir + "@model=c", []string{"@model=c matches no cell of " + dir, dir + "@model=b,prompt=short"}},
		{"unknown variable", dir + "@modle=a,prompt=long", []string{`the sweep has no variable "modle". Did you mean "model"? Swept: model, prompt`}},
		{"not pairs", dir + "@fast", []string{`"fast" is not name=value`}},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := compareCmd(t, c.a, dir+"@model=a,prompt=short")
			if r.code != 1 {
				t.Errorf("exit %d, want 1", r.code)
			}
			for _, w := range c.want {
				if !strings.Contains(r.stderr, w) {
					t.Errorf("stderr lacks %q:\n%s", w, r.stderr)
				}
			}
		})
	}
}

// TestCompareRunNotFinished: a run that has parts but no items.parquet
// yet exits 2 and says so.
func TestCompareRunNotFinished(t *testing.T) {
	done := filepath.Join(t.TempDir(), "done")
	writeSweepRun(t, done, sweepCells(), [][5]any{{"model=a,prompt=short", "x1", "ok", 1.0, "easy"}})
	running := filepath.Join(t.TempDir(), "running")
	if err := os.MkdirAll(filepath.Join(running, rundir.PartsDir), 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(running, rundir.ManifestName), []byte(`{"run_id": "r", "status": "running"}`))
	writeFile(t, filepath.Join(running, rundir.PartsDir, "items-G000-P000000.parquet"), nil)
	r := compareCmd(t, done+"@model=a,prompt=short", running)
	if r.code != 2 || !strings.Contains(r.stderr, "run not finished: "+running+" has no items.parquet yet") {
		t.Errorf("exit %d\n%s", r.code, r.stderr)
	}
	// A manifest without items.parquet or parts: not finished either way,
	// but nothing to wait for.
	empty := filepath.Join(t.TempDir(), "empty")
	if err := os.MkdirAll(empty, 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(empty, rundir.ManifestName), []byte(`{"run_id": "e", "status": "failed"}`))
	r = compareCmd(t, empty, running)
	if r.code != 2 || !strings.Contains(r.stderr, empty+" has no items.parquet (manifest status \"failed\")") {
		t.Errorf("no items: exit %d\n%s", r.code, r.stderr)
	}
}

// TestCompareSweepRun compares two cells of a real sweep run of the
// quickstart: refine off (max_iterations=0) against on (2).
func TestCompareSweepRun(t *testing.T) {
	bin := evalflowBinary(t)
	dir := t.TempDir()
	repo, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	r := runBin(t, bin, dir, "run", filepath.Join(repo, "examples", "quickstart"), "-quiet", "-out", "S",
		"-sweep", "max_iterations=0,2", "-var", "timeout=500ms")
	if r.code != 0 {
		t.Fatalf("sweep run: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	s := filepath.Join(dir, "S")
	rows := compareJSON(t, s+"@max_iterations=0", s+"@max_iterations=2", "-metric", "ex")
	ex := rows[0]
	if ex["a"] != s+"@max_iterations=0" || ex["b"] != s+"@max_iterations=2" {
		t.Errorf("labels: %v %v", ex["a"], ex["b"])
	}
	// By hand: the cells' rows of items.parquet, paired by id.
	cellRows := map[string]map[string]map[string]any{}
	for _, row := range itemRows(t, filepath.Join(s, "items.parquet")) {
		c := row["cell"].(string)
		if cellRows[c] == nil {
			cellRows[c] = map[string]map[string]any{}
		}
		cellRows[c][row["id"].(string)] = row
	}
	off, on := cellRows["max_iterations=0"], cellRows["max_iterations=2"]
	if len(off) != 30 || len(on) != 30 {
		t.Fatalf("cells: %d and %d items", len(off), len(on))
	}
	var better, worse int
	var sumA, sumB float64
	for id, ra := range off {
		x, y := ra["ex"].(float64), on[id]["ex"].(float64)
		sumA, sumB = sumA+x, sumB+y
		if y > x {
			better++
		} else if y < x {
			worse++
		}
	}
	if better == 0 {
		t.Fatalf("refine fixed nothing: the fixture does not exercise the test")
	}
	if ex["n_pairs"] != float64(30) || !nearly(ex["a_mean"].(float64), sumA/30) || !nearly(ex["b_mean"].(float64), sumB/30) {
		t.Errorf("ex: %v", ex)
	}
	if ex["p_value"] != stats.McNemarExact(worse, better) || len(jsonStrings(ex["flipped_better"])) != better {
		t.Errorf("p %v flips %v; want McNemarExact(%d, %d)", ex["p_value"], ex["flipped_better"], worse, better)
	}

	if r := compareCmd(t, s, s+"@max_iterations=2"); r.code != 1 || !strings.Contains(r.stderr, "is a sweep run of 2 cells; choose one with "+s+"@CELL:\n  "+s+"@max_iterations=0\n") {
		t.Errorf("no cell: exit %d\n%s", r.code, r.stderr)
	}
	if r := compareCmd(t, s+"@max_iterations=1", s+"@max_iterations=2"); r.code != 1 || !strings.Contains(r.stderr, "matches no cell") {
		t.Errorf("no such cell: exit %d\n%s", r.code, r.stderr)
	}
}

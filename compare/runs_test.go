package compare

import (
	"context"
	"encoding/json"
	"errors"
	"github.com/evalflow/evalflow/stats"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/evalflow/evalflow/rundir"
	"github.com/evalflow/evalflow/sinks"
	"github.com/evalflow/evalflow/table"
)

// testSchema is items.parquet's layout with a pass-through int column
// "level" and the metric columns ex (declared 0/1) and score (not a
// registered metric).
var testSchema = rundir.ItemSchema([]sinks.Column{{Name: "level", Type: table.TypeInt}}, []string{"ex", "score"})

// item is one test row; nil metric values are null.
type item struct {
	id, db, status string
	level          any // int64 or nil
	ex, score      any // float64 or nil
	cell           string
}

func writeRun(t *testing.T, dir string, man map[string]any, items []item) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if man == nil {
		man = map[string]any{}
	}
	if _, ok := man["status"]; !ok {
		man["status"] = "complete"
	}
	b, err := json.Marshal(man)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, rundir.ManifestName), b, 0o644); err != nil {
		t.Fatal(err)
	}
	s := testSchema
	_, sweep := man["cells"]
	if sweep {
		s = append(sinks.Schema{{Name: "cell", Type: table.TypeString}}, s...)
	}
	w, err := sinks.NewParquet(filepath.Join(dir, rundir.ItemsFile), s)
	if err != nil {
		t.Fatal(err)
	}
	for i, it := range items {
		status := it.status
		if status == "" {
			status = "ok"
		}
		row := make([]any, len(s))
		for j, c := range s {
			row[j] = map[string]any{"cell": it.cell, "seq": int64(i), "id": it.id, "db": it.db, "level": it.level,
				"status": status, "duration_ms": 1.0, "ex": it.ex, "score": it.score}[c.Name]
		}
		if err := w.Write(row); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

func open(t *testing.T, spec string) *Run {
	t.Helper()
	r, err := OpenRun(spec)
	if err != nil {
		t.Fatalf("OpenRun(%s): %v", spec, err)
	}
	return r
}

func TestDeclaredBinary(t *testing.T) {
	for name, want := range map[string]bool{
		"ex": true, "kg_valid_at_1": true, "pass_within_k": true,
		"pass_at_k": false, "refinement_gain": false, "bird_soft_f1": false, "no_such_metric": false,
	} {
		if got := DeclaredBinary(name); got != want {
			t.Errorf("DeclaredBinary(%q) = %v, want %v", name, got, want)
		}
	}
}

func TestOpenRunErrors(t *testing.T) {
	root := t.TempDir()
	file := filepath.Join(root, "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	noManifest := filepath.Join(root, "nomanifest")
	os.Mkdir(noManifest, 0o755)
	badManifest := filepath.Join(root, "badmanifest")
	os.Mkdir(badManifest, 0o755)
	os.WriteFile(filepath.Join(badManifest, rundir.ManifestName), []byte("{"), 0o644)
	running := filepath.Join(root, "running")
	os.MkdirAll(filepath.Join(running, rundir.PartsDir), 0o755)
	os.WriteFile(filepath.Join(running, rundir.ManifestName), []byte(`{"status":"running"}`), 0o644)
	os.WriteFile(filepath.Join(running, rundir.PartsDir, "items-G000-P000000.parquet"), nil, 0o644)
	noItems := filepath.Join(root, "noitems")
	os.Mkdir(noItems, 0o755)
	os.WriteFile(filepath.Join(noItems, rundir.ManifestName), []byte(`{"status":"failed"}`), 0o644)
	notItems := filepath.Join(root, "notitems")
	os.Mkdir(notItems, 0o755)
	os.WriteFile(filepath.Join(notItems, rundir.ManifestName), []byte(`{}`), 0o644)
	w, err := sinks.NewParquet(filepath.Join(notItems, rundir.ItemsFile), sinks.Schema{{Name: "x", Type: table.TypeInt}})
	if err != nil {
		t.Fatal(err)
	}
	w.Close()
	sweepNoCell := filepath.Join(root, "sweepnocell")
	writeRun(t, sweepNoCell, nil, []item{{id: "a"}})
	os.WriteFile(filepath.Join(sweepNoCell, rundir.ManifestName), []byte(`{"cells":[{"index":0,"id":"m=a"}]}`), 0o644)
	plain := filepath.Join(root, "plain")
	writeRun(t, plain, nil, []item{{id: "a"}})

	for _, c := range []struct {
		spec, want string
		arg        bool // an *ArgError, not a *RunError
	}{
		{filepath.Join(root, "missing"), "no such run directory", false},
		{file, "is not a run directory (it is a file)", false},
		{noManifest, "is not a run directory (no manifest.json)", false},
		{badManifest, "manifest.json: unexpected end of JSON input", false},
		{running, `run not finished: ` + running + ` has no items.parquet yet (manifest status "running", 1 part files in parts/)`, false},
		{noItems, `has no items.parquet (manifest status "failed")`, false},
		{notItems, "is not an evalflow items file (no id column)", false},
		{sweepNoCell, `lists 1 sweep cells but ` + filepath.Join(sweepNoCell, rundir.ItemsFile) + ` has no string column "cell"`, false},
		{plain + "@m=a", "is not a sweep run (its manifest lists no cells); drop @m=a", true},
		{filepath.Join(root, "missing") + "@m=a", "no such run directory", false},
	} {
		_, err := OpenRun(c.spec)
		var re *RunError
		var ae *ArgError
		switch {
		case err == nil:
			t.Errorf("OpenRun(%s): no error", c.spec)
		case !strings.Contains(err.Error(), c.want):
			t.Errorf("OpenRun(%s) = %v, want %q", c.spec, err, c.want)
		case c.arg && !errors.As(err, &ae), !c.arg && !errors.As(err, &re):
			t.Errorf("OpenRun(%s): error type %T", c.spec, err)
		}
	}
}

func TestSelectCell(t *testing.T) {
	cells := []rundir.ManifestCell{
		{Index: 0, ID: "model=a,t=0", Variables: map[string]json.RawMessage{"model": json.RawMessage(`"a"`), "t": json.RawMessage(`0`)}},
		{Index: 1, ID: "model=a,t=0.7", Variables: map[string]json.RawMessage{"model": json.RawMessage(`"a"`), "t": json.RawMessage(`0.7`)}},
		{Index: 2, ID: "model=b,t=0.7", Variables: map[string]json.RawMessage{"model": json.RawMessage(`"b"`), "t": json.RawMessage(`0.7`)}},
		{Index: 3, ID: "model=c,t=1"}, // no variables: the id's pairs
	}
	for _, c := range []struct {
		sel, want, err string
	}{
		{sel: "model=a,t=0.7", want: "model=a,t=0.7"},
		{sel: "t=0.7,model=b", want: "model=b,t=0.7"},
		{sel: "t=0", want: "model=a,t=0"},
		{sel: "model=c", want: "model=c,t=1"},
		{sel: " model = b , t=0.7", want: "model=b,t=0.7"},
		{sel: "model=a", err: "R@model=a matches 2 cells; add name=value pairs to choose one:\n  R@model=a,t=0\n  R@model=a,t=0.7"},
		{sel: "model=z", err: "R@model=z matches no cell of R; its cells:\n  R@model=a,t=0\n  R@model=a,t=0.7\n  R@model=b,t=0.7\n  R@model=c,t=1"},
		{sel: "modl=a", err: `R@modl=a: the sweep has no variable "modl". Did you mean "model"? Swept: model, t`},
		{sel: "a", err: `R@a: "a" is not name=value`},
	} {
		got, err := selectCell("R", c.sel, cells)
		if c.err != "" {
			if err == nil || !strings.HasPrefix(err.Error(), c.err) {
				t.Errorf("selectCell(%q) error = %v, want %q", c.sel, err, c.err)
			}
			continue
		}
		if err != nil || got.ID != c.want {
			t.Errorf("selectCell(%q) = %q, %v; want %q", c.sel, got.ID, err, c.want)
		}
	}
}

func TestMetricColumns(t *testing.T) {
	if d := cmp.Diff([]string{"ex", "score"}, metricColumns(testSchema)); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
}

func f(v float64) any { return v }

// pairFixture: A and B over ids a..i.
//
//	id  A (status ex score)      B (status ex score)
//	a   ok 1 0.5                 ok 0 0.25     worse on both
//	b   ok 0 0.5                 ok 1 1        better on both
//	c   ok 1 1                   ok 1 1        same
//	d   ok 1 0.2                 error 0 0.2   dropped: error in B
//	e   cancelled 0 0            ok 1 1        dropped: cancelled in A
//	f   ok 1 null                ok 0 0.9      ex worse; score dropped (null)
//	g   ok 0 0.1                 (missing)     only in A
//	h   (missing)                ok 1 1        only in B
//	i   ok 1 0.3                 ok 0 0.6      ex worse; score better
func pairFixture(t *testing.T) (a, b *Run) {
	t.Helper()
	root := t.TempDir()
	lv := func(n int64) any { return n }
	writeRun(t, filepath.Join(root, "A"), map[string]any{"run_id": "ra", "pipeline": "p.hcl", "dataset": map[string]any{"sha256": "s1"}}, []item{
		{id: "a", level: lv(10), ex: f(1), score: f(0.5)},
		{id: "b", level: lv(2), ex: f(0), score: f(0.5)},
		{id: "c", level: lv(2), ex: f(1), score: f(1)},
		{id: "d", level: lv(10), ex: f(1), score: f(0.2)},
		{id: "e", level: lv(2), status: "cancelled", ex: f(0), score: f(0)},
		{id: "f", level: nil, ex: f(1)},
		{id: "g", level: lv(2), ex: f(0), score: f(0.1)},
		{id: "i", level: lv(10), ex: f(1), score: f(0.3)},
	})
	writeRun(t, filepath.Join(root, "B"), map[string]any{"run_id": "rb", "pipeline": "p.hcl", "dataset": map[string]any{"sha256": "s1"}}, []item{
		{id: "h", level: lv(2), ex: f(1), score: f(1)},
		{id: "i", level: lv(1), ex: f(0), score: f(0.6)},
		{id: "a", level: lv(1), ex: f(0), score: f(0.25)},
		{id: "b", level: lv(1), ex: f(1), score: f(1)},
		{id: "c", level: lv(1), ex: f(1), score: f(1)},
		{id: "d", level: lv(1), status: "error", ex: f(0), score: f(0.2)}, // official profiles score errors
		{id: "e", level: lv(1), ex: f(1), score: f(1)},
		{id: "f", level: lv(1), ex: f(0), score: f(0.9)},
	})
	return open(t, filepath.Join(root, "A")), open(t, filepath.Join(root, "B"))
}

// nanEq makes cmp treat NaN as equal to NaN.
var nanEq = cmp.Comparer(func(x, y float64) bool { return x == y || math.IsNaN(x) && math.IsNaN(y) })

func TestCompare(t *testing.T) {
	a, b := pairFixture(t)
	res, err := Compare(context.Background(), a, b, Options{Seed: 3, Resamples: 200})
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]string{"g"}, res.OnlyA); d != "" {
		t.Errorf("OnlyA (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]string{"h"}, res.OnlyB); d != "" {
		t.Errorf("OnlyB (-want +got):\n%s", d)
	}
	if res.Paired != 7 || len(res.Warnings) != 0 || len(res.Rows) != 2 {
		t.Fatalf("paired %d, warnings %q, %d rows", res.Paired, res.Warnings, len(res.Rows))
	}

	// ex pairs (A order): a 1→0, b 0→1, c 1→1, f 1→0, i 1→0.
	exA, exB := []float64{1, 0, 1, 1, 1}, []float64{0, 1, 1, 0, 0}
	exLo, exHi := stats.PairedBootstrapCI(exA, exB, 200, 3, 0.95)
	// score pairs: a .5→.25, b .5→1, c 1→1, i .3→.6.
	scA, scB := []float64{0.5, 0.5, 1, 0.3}, []float64{0.25, 1, 1, 0.6}
	scLo, scHi := stats.PairedBootstrapCI(scA, scB, 200, 3, 0.95)
	scP, scMethod := stats.Wilcoxon([]float64{-0.25, 0.5, 0, 0.3})
	exP := stats.McNemarExact(3, 1)
	holm := stats.Holm([]float64{exP, scP})
	want := []Row{{
		Metric: "ex", Binary: true, NPairs: 5, NDropped: 2, NOnlyA: 1, NOnlyB: 1,
		AMean: 0.8, BMean: 0.4, Diff: -0.4, CILow: exLo, CIHigh: exHi,
		Test: "mcnemar_exact", P: exP, PHolm: holm[0], Significant: holm[0] < 0.05,
		Better: []Flip{{"b", 0, 1}}, Worse: []Flip{{"a", 1, 0}, {"f", 1, 0}, {"i", 1, 0}},
	}, {
		Metric: "score", NPairs: 4, NDropped: 3, NOnlyA: 1, NOnlyB: 1,
		AMean: 2.3 / 4, BMean: 2.85 / 4, Diff: (-0.25 + 0.5 + 0 + 0.30000000000000004) / 4, CILow: scLo, CIHigh: scHi,
		Test: "wilcoxon_" + scMethod, P: scP, PHolm: holm[1], Significant: holm[1] < 0.05,
		Better: []Flip{{"b", 0.5, 1}, {"i", 0.3, 0.6}}, Worse: []Flip{{"a", 0.5, 0.25}},
	}}
	if scMethod != stats.MethodNormal {
		t.Errorf("a zero difference: Wilcoxon method %q, want normal (SciPy 1.10 drops zeros)", scMethod)
	}
	approx := cmp.Comparer(func(x, y float64) bool {
		return x == y || math.IsNaN(x) && math.IsNaN(y) || math.Abs(x-y) < 1e-12
	})
	if d := cmp.Diff(want, res.Rows, approx); d != "" {
		t.Errorf("rows (-want +got):\n%s", d)
	}

	// Significance is on p_holm: at alpha 0.5 score's raw p (0.285) is
	// below it, its p_holm (0.57) is not.
	res, err = Compare(context.Background(), a, b, Options{Resamples: 50, Alpha: 0.5})
	if err != nil {
		t.Fatal(err)
	}
	if r := res.Rows[1]; !(r.P < 0.5) || r.PHolm < 0.5 || r.Significant {
		t.Errorf("score at alpha 0.5: p %v, p_holm %v, significant %v", r.P, r.PHolm, r.Significant)
	}

	// The same, -metric selected, with a gate on each.
	res, err = Compare(context.Background(), a, b, Options{Metrics: []string{"score", "ex"}, Resamples: 50, Alpha: 0.7, FailIfWorse: []string{"ex", "score"}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Rows[0].Metric != "score" || res.Rows[1].Metric != "ex" {
		t.Errorf("-metric order: %s, %s", res.Rows[0].Metric, res.Rows[1].Metric)
	}
	if !res.Rows[0].Significant || !res.Rows[1].Significant {
		t.Errorf("at alpha 0.7 both rows are significant: %v %v", res.Rows[0].PHolm, res.Rows[1].PHolm)
	}
	if len(res.Failures) != 1 || res.Failures[0].Metric != "ex" {
		// p_holm: ex 0.625, score 0.57; both significant at 0.7.
		t.Errorf("gate at alpha 0.7: failures %+v, want ex only (score's diff is positive)", res.Failures)
	}
}

func TestCompareBy(t *testing.T) {
	a, b := pairFixture(t)
	res, err := Compare(context.Background(), a, b, Options{Metrics: []string{"ex"}, By: "level", Resamples: 50})
	if err != nil {
		t.Fatal(err)
	}
	type g struct {
		Grouped             bool
		Group               string
		Pairs, Drop, OA, OB int
		Worse               int
	}
	var got []g
	var ps []float64
	for _, r := range res.Rows {
		got = append(got, g{r.Grouped, r.Group, r.NPairs, r.NDropped, r.NOnlyA, r.NOnlyB, len(r.Worse)})
		if !math.IsNaN(r.P) {
			ps = append(ps, r.P)
		}
		if r.Grouped && r.GroupBy != "level" {
			t.Errorf("GroupBy = %q", r.GroupBy)
		}
	}
	// Groups by A's level: 2 (b c e g), 10 (a d i), null (f); numeric
	// order, null last. B-only h has B's level 2.
	want := []g{
		{false, "", 5, 2, 1, 1, 3},
		{true, "2", 2, 1, 1, 1, 0},
		{true, "10", 2, 1, 0, 0, 2},
		{true, "", 1, 0, 0, 0, 1},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("groups (-want +got):\n%s", d)
	}
	holm := stats.Holm(ps)
	for i, r := range res.Rows {
		if r.PHolm != holm[i] {
			t.Errorf("row %d: p_holm %v, want Holm over all %d rows %v", i, r.PHolm, len(ps), holm[i])
		}
	}

	for _, c := range []struct{ by, want string }{
		{"levle", `-by levle: A (` + a.Dir + `) has no column levle. Did you mean "level"?`},
		{"score", "-by score: the column is float"},
	} {
		_, err := Compare(context.Background(), a, b, Options{By: c.by})
		var ae *ArgError
		if !errors.As(err, &ae) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("-by %s: %v, want an ArgError %q", c.by, err, c.want)
		}
	}
}

func TestCompareArgErrors(t *testing.T) {
	a, b := pairFixture(t)
	for _, c := range []struct {
		o    Options
		want string
	}{
		{Options{Metrics: []string{"scor"}}, `-metric scor: unknown metric. Did you mean "score"? The runs' metrics: ex, score`},
		{Options{Metrics: []string{"zzzzzz"}}, `-metric zzzzzz: unknown metric. The runs' metrics: ex, score`},
		{Options{FailIfWorse: []string{"exx"}}, `-fail-if-worse exx: exx is not among the compared metrics (ex, score). Did you mean "ex"?`},
		{Options{Alpha: 2}, "-alpha 2"},
		{Options{Resamples: -1}, "-resamples -1"},
	} {
		_, err := Compare(context.Background(), a, b, c.o)
		var ae *ArgError
		if !errors.As(err, &ae) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want an ArgError %q", c.o, err, c.want)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Compare(ctx, a, b, Options{}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled context: %v", err)
	}
}

// TestCompareBinaryMetrics: a column the manifest lists in binary_metrics
// (a metric renamed with `as`) is compared with McNemar.
func TestCompareBinaryMetrics(t *testing.T) {
	root := t.TempDir()
	for _, d := range []string{"A", "B"} {
		m := map[string]any{}
		if d == "A" {
			m["binary_metrics"] = []string{"ex", "score"}
		}
		writeRun(t, filepath.Join(root, d), m, []item{{id: "x", ex: f(1), score: f(1)}, {id: "y", ex: f(1), score: f(0)}})
	}
	res, err := Compare(context.Background(), open(t, filepath.Join(root, "A")), open(t, filepath.Join(root, "B")), Options{Resamples: 10})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res.Rows {
		if r.Test != "mcnemar_exact" || !r.Binary {
			t.Errorf("%s: test %s", r.Metric, r.Test)
		}
	}
}

func TestCompareWarnings(t *testing.T) {
	root := t.TempDir()
	writeRun(t, filepath.Join(root, "A"), map[string]any{"dataset": map[string]any{"sha256": "1111111111111111"}}, []item{
		{id: "x", ex: f(1), score: f(1)}, {id: "y", ex: f(0.5), score: f(0)}, {id: "x", ex: f(0), score: f(0)},
	})
	writeRun(t, filepath.Join(root, "B"), map[string]any{"status": "cancelled", "dataset": map[string]any{"sha256": "2222222222222222"}}, []item{
		{id: "x", ex: f(0), score: f(1)}, {id: "y", ex: f(1), score: f(1)},
	})
	a, b := open(t, filepath.Join(root, "A")), open(t, filepath.Join(root, "B"))
	res, err := Compare(context.Background(), a, b, Options{Resamples: 10})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"A and B ran on different datasets (dataset sha256 111111111111… and 222222222222…): only items with the same id are paired",
		filepath.Join(root, "B") + `: the run's status is "cancelled", not "complete"`,
		filepath.Join(root, "A") + ": 1 rows repeat an id already seen; the first row of each id is used",
		"ex is declared 0/1 but has other values; it is compared with the Wilcoxon signed-rank test",
	}
	if d := cmp.Diff(want, res.Warnings); d != "" {
		t.Errorf("warnings (-want +got):\n%s", d)
	}
	if res.Rows[0].Test != "wilcoxon_exact" || res.Rows[0].Binary {
		t.Errorf("ex with a 0.5: test %s", res.Rows[0].Test)
	}

	res, err = Compare(context.Background(), a, a, Options{Resamples: 10})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(res.Warnings[0], "A and B are the same run") {
		t.Errorf("same run: %q", res.Warnings)
	}
}

func TestCompareCells(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "S")
	cells := []map[string]any{
		{"index": 0, "id": "m=a", "variables": map[string]any{"m": "a"}},
		{"index": 1, "id": "m=b", "variables": map[string]any{"m": "b"}},
	}
	writeRun(t, dir, map[string]any{"cells": cells}, []item{
		{cell: "m=a", id: "x", ex: f(1), score: f(1)},
		{cell: "m=a", id: "y", ex: f(1), score: f(1)},
		{cell: "m=b", id: "x", ex: f(0), score: f(0)},
		{cell: "m=b", id: "z", ex: f(0), score: f(0)},
	})
	_, err := OpenRun(dir)
	var ae *ArgError
	if !errors.As(err, &ae) || !strings.Contains(err.Error(), "is a sweep run of 2 cells; choose one with "+dir+"@CELL:\n  "+dir+"@m=a\n  "+dir+"@m=b") {
		t.Errorf("no @CELL: %v", err)
	}
	a, b := open(t, dir+"@m=a"), open(t, dir+"@m=b")
	if a.Label() != dir+"@m=a" || a.Cell != "m=a" {
		t.Errorf("label %q cell %q", a.Label(), a.Cell)
	}
	res, err := Compare(context.Background(), a, b, Options{Metrics: []string{"ex"}, Resamples: 10})
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]string{"y"}, res.OnlyA); d != "" {
		t.Errorf("OnlyA (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]string{"z"}, res.OnlyB); d != "" {
		t.Errorf("OnlyB (-want +got):\n%s", d)
	}
	if r := res.Rows[0]; r.NPairs != 1 || r.AMean != 1 || r.BMean != 0 || len(res.Warnings) != 0 {
		t.Errorf("cell rows: %+v, warnings %q", r, res.Warnings)
	}
	// A directory whose name holds an "@" is taken whole.
	at := filepath.Join(t.TempDir(), "run@v2")
	writeRun(t, at, nil, []item{{id: "x", ex: f(1)}})
	if r := open(t, at); r.Dir != at || r.Cell != "" {
		t.Errorf("dir with @: %+v", r)
	}
}

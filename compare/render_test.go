package compare

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func renderFixture() *Result {
	nan := math.NaN()
	var worse []Flip
	for i := range 23 {
		worse = append(worse, Flip{ID: fmt.Sprintf("w%02d", i), A: 1, B: 0})
	}
	return &Result{
		A:     &Run{Dir: "runs/a", RunID: "ra", Pipeline: "p.hcl"},
		B:     &Run{Dir: "runs/s", RunID: "rb", Pipeline: "p.hcl", Cell: "model=x"},
		Alpha: 0.05, Seed: 1, Resamples: 100, By: "db",
		Paired: 30, OnlyB: []string{"n1"},
		Rows: []Row{
			{Metric: "ex", Binary: true, NPairs: 30, NDropped: 1, AMean: 0.9, BMean: 0.1, Diff: -0.8, CILow: -0.9, CIHigh: -0.7,
				Test: "mcnemar_exact", P: 1e-6, PHolm: 2e-6, Significant: true, Better: []Flip{}, Worse: worse},
			{Metric: "ex", Grouped: true, GroupBy: "db", Group: "a|b", Binary: true, AMean: nan, BMean: nan, Diff: nan,
				CILow: nan, CIHigh: nan, Test: "none", P: nan, PHolm: nan, Better: []Flip{}, Worse: []Flip{}},
			{Metric: "f1", NPairs: 3, AMean: 0.5, BMean: 0.6, Diff: 0.1, CILow: 0, CIHigh: 0.2,
				Test: "wilcoxon_exact", P: 0.25, PHolm: 0.5, Better: []Flip{{"q1", 0.2, 0.5}}, Worse: []Flip{}},
		},
	}
}

func TestWriteJSON(t *testing.T) {
	var b bytes.Buffer
	if err := Write(&b, renderFixture(), "json"); err != nil {
		t.Fatal(err)
	}
	var rows []map[string]any
	if err := json.Unmarshal(b.Bytes(), &rows); err != nil {
		t.Fatalf("%v\n%s", err, b.String())
	}
	if len(rows) != 3 {
		t.Fatalf("%d rows", len(rows))
	}
	if rows[0]["group"] != nil || rows[0]["group_by"] != nil || rows[0]["a"] != "runs/a" || rows[0]["b"] != "runs/s@model=x" {
		t.Errorf("overall row: %v", rows[0])
	}
	if len(rows[0]["flipped_worse"].([]any)) != 23 {
		t.Errorf("JSON lists every flip: %v", rows[0]["flipped_worse"])
	}
	g := rows[1]
	for _, k := range []string{"a_mean", "b_mean", "diff", "ci_low", "ci_high", "p_value", "p_holm"} {
		if v, ok := g[k]; !ok || v != nil {
			t.Errorf("undefined %s = %v (present %v), want null", k, v, ok)
		}
	}
	if g["group"] != "a|b" || g["group_by"] != "db" {
		t.Errorf("group row: %v", g)
	}
	if d := cmp.Diff([]any{"q1"}, rows[2]["flipped_better"]); d != "" {
		t.Errorf("flipped_better (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]any{}, rows[2]["flipped_worse"]); d != "" {
		t.Errorf("no flips is [], not null (-want +got):\n%s", d)
	}
}

func TestWriteText(t *testing.T) {
	var b bytes.Buffer
	if err := Write(&b, renderFixture(), "text"); err != nil {
		t.Fatal(err)
	}
	want := `A: runs/a  run ra  pipeline p.hcl
B: runs/s  run rb  pipeline p.hcl  cell model=x
30 items paired by id; 0 only in A; 1 only in B (n1)

metric  db     pairs  dropped  A mean  B mean     diff  95% CI              test                  p   p_holm
ex      (all)     30        1  0.9000  0.1000  -0.8000  [-0.9000, -0.7000]  mcnemar_exact   <0.0001  <0.0001  *
ex      a|b        0        0     n/a     n/a      n/a  n/a                 none                n/a      n/a
f1      (all)      3        0  0.5000  0.6000  +0.1000  [+0.0000, +0.2000]  wilcoxon_exact   0.2500   0.5000

p: two-sided, exact McNemar test on the discordant pairs for the metrics declared 0/1 (ex); Wilcoxon signed-rank test on B − A (SciPy's defaults) for f1; p_holm: Holm-adjusted over the 2 p-values above; * marks p_holm < 0.05.
diff = mean of B − A over the pairs; CI: 95% paired percentile bootstrap, 100 resamples, seed 1. A pair with status error or cancelled on either side, or a null value, is dropped.

changed items (A → B):
  ex: 23 worse (1 → 0): w00, w01, w02, w03, w04, w05, w06, w07, w08, w09, w10, w11, w12, w13, w14, w15, w16, w17, w18, w19, … and 3 more
  f1: 1 better: q1 (+0.3000)
`
	if d := cmp.Diff(want, b.String()); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
}

func TestWriteMarkdown(t *testing.T) {
	var b bytes.Buffer
	if err := Write(&b, renderFixture(), "markdown"); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"**A**: runs/a  run ra  pipeline p.hcl  \n**B**: runs/s  run rb  pipeline p.hcl  cell model=x  \n",
		"| metric | db | pairs | dropped | A mean | B mean | diff | 95% CI | test | p | p_holm | sig |\n|---|---|---:|---:|---:|---:|---:|---|---|---:|---:|---|\n",
		"| ex | (all) | 30 | 1 | 0.9000 | 0.1000 | -0.8000 | [-0.9000, -0.7000] | mcnemar_exact | <0.0001 | <0.0001 | * |\n",
		`| ex | a\|b | 0 | 0 | n/a |`,
		"- f1: 1 better: q1 (+0.3000)\n",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("markdown lacks %q:\n%s", want, b.String())
		}
	}
	if err := Write(&b, renderFixture(), "xml"); err == nil {
		t.Error("unknown format: no error")
	}
}

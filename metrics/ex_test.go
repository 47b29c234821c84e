package metrics

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/evalflow/evalflow/item"
	"github.com/evalflow/evalflow/table"
)

// exT builds a table from rows; the column count comes from the first row
// (or cols when given and there are no rows).
func exT(rows ...[]table.Value) *table.Table {
	t := &table.Table{Rows: rows}
	if len(rows) > 0 {
		for i := range rows[0] {
			t.Columns = append(t.Columns, table.Column{Name: fmt.Sprintf("c%d", i)})
		}
	}
	return t
}

// exTenth and exFifth are variables so that their sum is computed in
// float64 (a constant 0.1+0.2 is exactly 0.3).
var exTenth, exFifth = 0.1, 0.2

func r(vs ...table.Value) []table.Value { return vs }

func TestCompareTables(t *testing.T) {
	bag := CompareOptions{Semantics: Bag, Permute: true}
	bagOrdered := CompareOptions{Semantics: Bag, Ordered: true, Permute: true}
	set := CompareOptions{Semantics: Set}
	ts := CompareOptions{Semantics: Bag, Permute: true, PythonQuickReject: true}
	tests := []struct {
		name       string
		gold, pred *table.Table
		o          CompareOptions
		want       bool
	}{
		{"both empty, different columns", &table.Table{Columns: []table.Column{{Name: "a"}}}, &table.Table{Columns: []table.Column{{Name: "a"}, {Name: "b"}}}, bag, true},
		{"nil tables", nil, nil, bag, true},
		{"gold empty pred not", exT(), exT(r(int64(1))), bag, false},
		{"int equals float", exT(r(int64(1))), exT(r(1.0)), bag, true},
		{"string is not int", exT(r(int64(1))), exT(r("1")), bag, false},
		{"null equals null", exT(r(nil, "a")), exT(r(nil, "a")), bag, true},
		{"null is not empty string", exT(r(nil)), exT(r("")), bag, false},
		{"text is not bytes", exT(r("a")), exT(r([]byte("a"))), bag, false},
		{"bool is int", exT(r(true)), exT(r(int64(1))), bag, true},
		{"exact floats", exT(r(0.3)), exT(r(exTenth + exFifth)), bag, false},
		{"negative zero", exT(r(0.0)), exT(r(math.Copysign(0, -1))), bag, true},
		{"big int vs float", exT(r(int64(1<<53 + 1))), exT(r(float64(1 << 53))), bag, false},
		{"row order ignored", exT(r(int64(1)), r(int64(2))), exT(r(int64(2)), r(int64(1))), bag, true},
		{"row order matters", exT(r(int64(1)), r(int64(2))), exT(r(int64(2)), r(int64(1))), bagOrdered, false},
		{"bag counts duplicates", exT(r(int64(1)), r(int64(1)), r(int64(2))), exT(r(int64(1)), r(int64(2)), r(int64(2))), bag, false},
		{"bag duplicate row", exT(r(int64(1))), exT(r(int64(1)), r(int64(1))), bag, false},
		{"set ignores duplicates", exT(r(int64(1))), exT(r(int64(1)), r(int64(1))), set, true},
		{"set column order matters", exT(r("a", int64(1))), exT(r(int64(1), "a")), set, false},
		{"permuted columns", exT(r("a", int64(1)), r("b", int64(2))), exT(r(int64(1), "a"), r(int64(2), "b")), bag, true},
		{"permuted columns ordered", exT(r("a", int64(1)), r("b", int64(2))), exT(r(int64(1), "a"), r(int64(2), "b")), bagOrdered, true},
		{"permutation must be consistent", exT(r("a", "x"), r("b", "y")), exT(r("x", "b"), r("y", "a")), bag, false},
		{"no permutation without Permute", exT(r("a", int64(1))), exT(r(int64(1), "a")), CompareOptions{}, false},
		{"extra column", exT(r("a")), exT(r("a", "b")), bag, false},
		{"duplicated column", exT(r("a")), exT(r("a", "a")), bag, false},
		{"identical columns", exT(r("a", "a", "b"), r("c", "c", "d")), exT(r("b", "a", "a"), r("d", "c", "c")), bag, true},
		{"same column multisets, rows differ", exT(r("a", "x"), r("b", "y")), exT(r("a", "y"), r("b", "x")), bag, false},
		// quick_rej sorts (1, 1.5) as (1.5, 1) but (1.0, 1.5) as (1.0, 1.5).
		{"testsuite quick_rej int/float quirk", exT(r(int64(1), 1.5)), exT(r(1.0, 1.5)), ts, false},
		{"without quick_rej", exT(r(int64(1), 1.5)), exT(r(1.0, 1.5)), bag, true},
		{"tolerance", exT(r(0.3, "a")), exT(r(exTenth+exFifth, "a")), CompareOptions{Tolerance: Tolerance{Abs: 1e-9}}, true},
		{"tolerance too small", exT(r(1.0)), exT(r(1.1)), CompareOptions{Tolerance: Tolerance{Rel: 0.01}}, false},
		{"tolerance relative", exT(r(100.0)), exT(r(100.5)), CompareOptions{Tolerance: Tolerance{Rel: 0.01}}, true},
		{"tolerance needs matching", exT(r(1.0000001, "b"), r(1.0, "a")), exT(r(1.0, "b"), r(1.0000001, "a")), CompareOptions{Tolerance: Tolerance{Abs: 1e-6}}, true},
		{"tolerance with permutation", exT(r("a", 2.0), r("b", 3.0)), exT(r(3.0000001, "b"), r(2.0, "a")), CompareOptions{Permute: true, Tolerance: Tolerance{Abs: 1e-6}}, true},
		{"tolerance ints exact", exT(r(int64(1))), exT(r(int64(2))), CompareOptions{Tolerance: Tolerance{Abs: 5}}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := CompareTables(tt.gold, tt.pred, tt.o); got.Match != tt.want {
				t.Errorf("CompareTables = %+v, want match %v", got, tt.want)
			}
		})
	}
}

// TestCompareTablesPermutationBound: many distinct columns with equal value
// multisets defeat signature pruning; the search stops at the bound.
func TestCompareTablesPermutationBound(t *testing.T) {
	const ncol = 9
	gold, pred := &table.Table{}, &table.Table{}
	for c := 0; c < ncol; c++ {
		gold.Columns = append(gold.Columns, table.Column{})
		pred.Columns = append(pred.Columns, table.Column{})
	}
	// Column c holds a rotation of 0..ncol-1, so every column has the same
	// multiset; the prediction swaps two cells of column 0, which keeps the
	// multisets and breaks the rows.
	for rr := 0; rr < ncol; rr++ {
		g, p := make([]table.Value, ncol), make([]table.Value, ncol)
		for c := 0; c < ncol; c++ {
			g[c] = int64((rr + c) % ncol)
			p[c] = g[c]
		}
		gold.Rows, pred.Rows = append(gold.Rows, g), append(pred.Rows, p)
	}
	pred.Rows[0][0], pred.Rows[1][0] = pred.Rows[1][0], pred.Rows[0][0]
	if got := CompareTables(gold, pred, CompareOptions{Permute: true, MaxPermutations: 1 << 20}); got.Match || got.Reason != "rows differ" {
		t.Errorf("exhaustive search: got %+v, want rows differ", got)
	}
	got := CompareTables(gold, pred, CompareOptions{Permute: true, MaxPermutations: 50})
	if got.Match || !strings.Contains(got.Reason, "stopped after 50") {
		t.Errorf("got %+v, want the bound to stop the search", got)
	}
}

// TestCompareTablesBruteForce checks the pruned search against trying every
// permutation on small random tables.
func TestCompareTablesBruteForce(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	perms := func(n int) [][]int {
		var out [][]int
		var rec func(p []int, used []bool)
		rec = func(p []int, used []bool) {
			if len(p) == n {
				out = append(out, append([]int(nil), p...))
				return
			}
			for j := 0; j < n; j++ {
				if !used[j] {
					used[j] = true
					rec(append(p, j), used)
					used[j] = false
				}
			}
		}
		rec(nil, make([]bool, n))
		return out
	}
	vals := []table.Value{int64(1), 1.0, int64(2), "a", nil}
	for iter := 0; iter < 3000; iter++ {
		ncol, nrow := 1+rng.Intn(4), 1+rng.Intn(4)
		gold, pred := &table.Table{}, &table.Table{}
		for rr := 0; rr < nrow; rr++ {
			g := make([]table.Value, ncol)
			for c := range g {
				g[c] = vals[rng.Intn(len(vals))]
			}
			gold.Rows = append(gold.Rows, g)
		}
		// pred: a shuffled, column-permuted copy, sometimes perturbed.
		cp := rng.Perm(ncol)
		for _, rr := range rng.Perm(nrow) {
			p := make([]table.Value, ncol)
			for c := range p {
				p[c] = gold.Rows[rr][cp[c]]
			}
			pred.Rows = append(pred.Rows, p)
		}
		if rng.Intn(2) == 0 {
			pred.Rows[rng.Intn(nrow)][rng.Intn(ncol)] = vals[rng.Intn(len(vals))]
		}
		for _, o := range []CompareOptions{{Permute: true}, {Permute: true, Ordered: true}, {Permute: true, Semantics: Set}} {
			want := false
			for _, p := range perms(ncol) {
				pt := &table.Table{}
				for _, row := range pred.Rows {
					nr := make([]table.Value, ncol)
					for i, j := range p {
						nr[i] = row[j]
					}
					pt.Rows = append(pt.Rows, nr)
				}
				oo := o
				oo.Permute = false
				if CompareTables(gold, pt, oo).Match {
					want = true
					break
				}
			}
			if got := CompareTables(gold, pred, o); got.Match != want {
				t.Fatalf("options %+v gold %v pred %v: got %+v, brute force %v", o, gold.Rows, pred.Rows, got, want)
			}
		}
	}
}

func TestPyFloatRepr(t *testing.T) {
	for f, want := range map[float64]string{
		1: "1.0", 1.5: "1.5", -2: "-2.0", 0.0001: "0.0001", 0.00001: "1e-05", 1.5e-7: "1.5e-07",
		1e15: "1000000000000000.0", 1e16: "1e+16", 1.2345678901234568e+17: "1.2345678901234568e+17",
		123.456: "123.456", math.Inf(1): "inf",
	} {
		if got := pyFloatRepr(f); got != want {
			t.Errorf("pyFloatRepr(%v) = %q, want %q", f, got, want)
		}
	}
	if got := pyFloatRepr(exTenth + exFifth); got != "0.30000000000000004" {
		t.Errorf("pyFloatRepr(0.1+0.2) = %q", got)
	}
	if got, want := pyBytesRepr([]byte("a'\x00\xff\n")), `b"a'\x00\xff\n"`; got != want {
		t.Errorf("pyBytesRepr = %q, want %q", got, want)
	}
}

func TestSoftF1(t *testing.T) {
	tests := []struct {
		name       string
		gold, pred *table.Table
		want       float64
	}{
		{"both empty", exT(), exT(), 1},
		{"pred empty", exT(r(int64(1))), exT(), 0},
		{"gold empty", exT(), exT(r(int64(1))), 0},
		{"equal", exT(r("a", int64(1))), exT(r("a", int64(1))), 1},
		{"column order ignored", exT(r("a", int64(1))), exT(r(int64(1), "a")), 1},
		// duplicated column: 2 matches / gold len 1 → tp 2, fp 0, fn 0.
		{"duplicated column", exT(r("a")), exT(r("a", "a")), 1},
		// extra column: match 1/1, pred_only 1/1 → P = 1/2, R = 1.
		{"extra column", exT(r("a")), exT(r("a", "b")), 2 * 0.5 * 1 / 1.5},
		// positional pairing: swapped rows share nothing.
		{"row order matters", exT(r("a"), r("b")), exT(r("b"), r("a")), 0},
		{"duplicates dropped", exT(r("a")), exT(r("a"), r("a")), 1},
		{"1 and 1.0 dedupe", exT(r(int64(1))), exT(r(1.0), r(int64(1))), 1},
		// extra pred row: tp 1, fp 1 → P 0.5, R 1.
		{"extra pred row", exT(r("a")), exT(r("a"), r("b")), 2 * 0.5 / 1.5},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := SoftF1(tt.gold, tt.pred); got != tt.want {
				t.Errorf("SoftF1 = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestProfiles(t *testing.T) {
	if diff := cmp.Diff([]string{"bird", "evalflow", "testsuite", "testsuite_keep_distinct"}, ProfileNames()); diff != "" {
		t.Errorf("ProfileNames (-want +got):\n%s", diff)
	}
	g := "SELECT COUNT( DISTINCT a ) FROM t WHERE b > = 1 AND c IN (SELECT c FROM u ORDER BY c)"
	exec, order := ProfileTestSuite.PrepareGold(g)
	if want := "SELECT COUNT(  a ) FROM t WHERE b >= 1 AND c IN (SELECT c FROM u ORDER BY c)"; exec != want || order != want {
		t.Errorf("PrepareGold = %q, %q; want %q", exec, order, want)
	}
	if !ProfileTestSuite.Ordered(order) || ProfileEvalflow.Ordered(order) || ProfileBIRD.Ordered("SELECT a FROM t ORDER BY a") {
		t.Error("order rules: testsuite substring, evalflow top-level, bird never")
	}
	if got := ProfileTestSuite.PreparePred("SELECT values FROM t"); got != "SELECT 1s FROM t" {
		t.Errorf("test-suite's replace('value', '1') = %q", got)
	}
	if got := ProfileEvalflow.PreparePred("SELECT DISTINCT a FROM t"); got != "SELECT DISTINCT a FROM t" {
		t.Errorf("evalflow rewrote %q", got)
	}
}

// exRecord builds a record with the given attempt results per sample.
func exRecord(gold *table.Table, samples ...[]*item.Attempt) *item.Record {
	rec := &item.Record{Item: item.Item{ID: "x", Gold: "SELECT a FROM t"}, GoldDone: true, GoldResult: gold}
	for i, atts := range samples {
		for j, a := range atts {
			a.Sample, a.Index = i, j
		}
		rec.Samples = append(rec.Samples, &item.Sample{Index: i, Attempts: atts})
	}
	return rec
}

func exAttempt(q string, res *table.Table) *item.Attempt {
	return &item.Attempt{Query: q, Executed: true, Validated: true, Valid: true, Result: res}
}

func exFailedAttempt(class string) *item.Attempt {
	a := &item.Attempt{Query: "SELECT", Validated: true}
	a.SetError(class, "boom")
	return a
}

func TestEXMetric(t *testing.T) {
	ctx := context.Background()
	one, two := exT(r(int64(1))), exT(r(int64(2)))
	ex := exNewMetric(t, "ex", nil)

	rec := exRecord(one,
		[]*item.Attempt{exAttempt("SELECT 2", two), exFailedAttempt(item.ClassSyntax), exAttempt("SELECT 1", one)},
		[]*item.Attempt{exFailedAttempt(item.ClassSafety), {Query: "not run"}},
	)
	if got, want := ex.Score(ctx, Input{Record: rec}), (item.Score{Name: "ex", Value: 1}); got != want {
		t.Errorf("score = %+v, want %+v", got, want)
	}
	var matches []any
	for _, s := range rec.Samples {
		for _, a := range s.Attempts {
			if a.Match == nil {
				matches = append(matches, nil)
			} else {
				matches = append(matches, *a.Match)
			}
		}
	}
	if diff := cmp.Diff([]any{false, false, true, false, nil}, matches); diff != "" {
		t.Errorf("Attempt.Match (-want +got):\n%s", diff)
	}

	gf := exRecord(nil, []*item.Attempt{exAttempt("SELECT 1", one)})
	gf.GoldError = "no such table: t"
	if got := ex.Score(ctx, Input{Record: gf}); got.Err != "gold query failed: no such table: t" || *gf.Samples[0].Attempts[0].Match {
		t.Errorf("gold failure: %+v", got)
	}
	if got := ex.Score(ctx, Input{Record: exRecord(one)}); got.Err == "" {
		t.Errorf("no attempt: want an error, got %+v", got)
	}

	// testsuite re-executes the DISTINCT-stripped queries.
	ts := exNewMetric(t, "ex", Options{"compare": "testsuite"})
	dup := exT(r(int64(1)), r(int64(1)))
	rec = exRecord(one, []*item.Attempt{exAttempt("SELECT DISTINCT a FROM t", one)})
	rec.Item.Gold = "SELECT DISTINCT a FROM t"
	var ran []string
	exec := func(_ context.Context, q string) (*table.Table, error) {
		ran = append(ran, q)
		if q == "SELECT  a FROM t" {
			return dup, nil
		}
		return nil, errors.New("unexpected query " + q)
	}
	if got := ts.Score(ctx, Input{Record: rec, Exec: exec}); got.Value != 1 || got.Err != "" {
		t.Errorf("testsuite score = %+v", got)
	}
	if diff := cmp.Diff([]string{"SELECT  a FROM t", "SELECT  a FROM t"}, ran); diff != "" {
		t.Errorf("re-executed (-want +got):\n%s", diff)
	}
	if got := ts.Score(ctx, Input{Record: rec}); !strings.Contains(got.Err, "needs an engine") {
		t.Errorf("testsuite without engine: %+v", got)
	}

	// Overrides and option errors.
	for _, o := range []Options{{"compare": "spider"}, {"compare": "bird_soft_f1"}, {"semantics": "list"}, {"order": "sometimes"}, {"float_tolerance": -1.0}, {"permutations": "yes"}} {
		if d, _ := Default.Lookup("ex"); d.NewItem != nil {
			if _, err := d.NewItem(o); err == nil {
				t.Errorf("options %v: want an error", o)
			}
		}
	}
	setEx := exNewMetric(t, "ex", Options{"semantics": "set", "permutations": false, "order": "always", "float_tolerance": 1e-6})
	rec = exRecord(exT(r(1.0), r(2.0)), []*item.Attempt{exAttempt("q", exT(r(1.0000001), r(1.0), r(2.0)))})
	if got := setEx.Score(ctx, Input{Record: rec}); got.Value != 0 {
		t.Errorf("ordered set with tolerance: %+v (1.0000001 and 1.0 are distinct rows)", got)
	}
}

// TestEXTestSuiteTrailingBreak: remove_distinct drops the line break after
// a final ';', which changes the text but not what it runs: the execute
// stage's results are reused, not run again. A text that changed more is
// run.
func TestEXTestSuiteTrailingBreak(t *testing.T) {
	ctx := context.Background()
	one := exT(r(int64(1)))
	ts := exNewMetric(t, "ex", Options{"compare": "testsuite"})
	var ran []string
	exec := func(_ context.Context, q string) (*table.Table, error) {
		ran = append(ran, q)
		return one, nil
	}
	rec := exRecord(one, []*item.Attempt{exAttempt("SELECT a FROM t;\r\n", one)})
	rec.Item.Gold = "SELECT a FROM t ;\n\n"
	if got := ts.Score(ctx, Input{Record: rec, Exec: exec}); got.Value != 1 || got.Err != "" {
		t.Errorf("score = %+v", got)
	}
	if len(ran) != 0 {
		t.Errorf("ran %q: the texts differ from what the execute stage ran only in their final line breaks", ran)
	}
	rec = exRecord(one, []*item.Attempt{exAttempt("SELECT a FROM t;\n-- c", one)})
	rec.Item.Gold = "SELECT a FROM t"
	if got := ts.Score(ctx, Input{Record: rec, Exec: exec}); got.Value != 1 || got.Err != "" {
		t.Errorf("score = %+v", got)
	}
	if diff := cmp.Diff([]string{"SELECT a FROM t;"}, ran); diff != "" {
		t.Errorf("ran (-want +got):\n%s", diff)
	}
}

// TestPyOneStatement pins when Python's sqlite3 (CPython 3.11, measured)
// refuses a text as several statements.
func TestPyOneStatement(t *testing.T) {
	for q, refused := range map[string]bool{
		"SELECT 1; DROP TABLE t": true,
		"SELECT 1;;":             true,
		";SELECT 1; SELECT 2":    true,
		"SELECT 1; -- x":         false,
		"SELECT 1; /* x */ ":     false,
		"SELECT 1;\n":            false,
		"SELECT 1 -- c\n; ":      false,
		";SELECT 1":              false,
		"; ;SELECT 1":            false,
		";;":                     false,
		"":                       false,
		"SELECT ';' FROM t":      false,
	} {
		if err := pyOneStatement(q); (err != nil) != refused {
			t.Errorf("pyOneStatement(%q) = %v, want refused %v", q, err, refused)
		}
	}
}

// TestEXTestSuiteAttempts: under a testsuite profile an attempt validate
// refused is still run as test-suite would run it, and needs the engine to
// be; an attempt without a query scores 0 without running anything.
func TestEXTestSuiteAttempts(t *testing.T) {
	ctx := context.Background()
	one := exT(r(int64(1)))
	ts := exNewMetric(t, "ex", Options{"compare": "testsuite"})
	refused := func() *item.Attempt {
		a := &item.Attempt{Query: "SELECT a FROM t WHERE a > = 1", Validated: true}
		a.SetError(item.ClassSyntax, "near \"=\": syntax error")
		return a
	}
	var ran []string
	exec := func(_ context.Context, q string) (*table.Table, error) {
		ran = append(ran, q)
		return one, nil
	}
	rec := exRecord(one, []*item.Attempt{refused()})
	if got := ts.Score(ctx, Input{Record: rec, Exec: exec}); got.Value != 1 || got.Err != "" {
		t.Errorf("refused raw, runnable after postprocess: %+v", got)
	}
	if diff := cmp.Diff([]string{"SELECT a FROM t WHERE a >= 1"}, ran); diff != "" {
		t.Errorf("ran (-want +got):\n%s", diff)
	}
	if got := ts.Score(ctx, Input{Record: exRecord(one, []*item.Attempt{refused()})}); !strings.Contains(got.Err, "needs an engine") {
		t.Errorf("without engine: %+v", got)
	}
	if got := exNewMetric(t, "ex", nil).Score(ctx, Input{Record: exRecord(one, []*item.Attempt{refused()}), Exec: exec}); got.Value != 0 || got.Err != "" {
		t.Errorf("evalflow profile scores the refused attempt: %+v", got)
	}
	ran = nil
	gen := &item.Attempt{}
	gen.SetError(item.ClassGeneration, "no query in the reply")
	for _, a := range []*item.Attempt{gen, exAttempt("  ", nil)} {
		rec := exRecord(exT(), []*item.Attempt{a})
		if got := ts.Score(ctx, Input{Record: rec, Exec: exec}); got.Value != 0 || got.Err != "" || *a.Match {
			t.Errorf("no query (%q): %+v", a.ErrorClass, got)
		}
	}
	if len(ran) != 0 {
		t.Errorf("ran %q for attempts without a query", ran)
	}
}

func TestPassMetrics(t *testing.T) {
	ctx := context.Background()
	yes, no := true, false
	att := func(m *bool) *item.Attempt { return &item.Attempt{Executed: true, Match: m} }
	rec := exRecord(nil,
		[]*item.Attempt{att(&no), att(&yes)},
		[]*item.Attempt{att(&no)},
		[]*item.Attempt{att(&yes)},
	)
	rec.GoldResult = exT()
	tests := []struct {
		metric string
		o      Options
		rec    *item.Record
		want   item.Score
	}{
		{"pass_at_1", nil, rec, item.Score{Name: "pass_at_1", Value: PassAtK(3, 2, 1)}},
		{"pass_at_k", Options{"k": 2.0}, rec, item.Score{Name: "pass_at_k", Value: PassAtK(3, 2, 2)}},
		{"pass_at_k", Options{"k": 4.0}, rec, item.Score{Name: "pass_at_k", Null: true}},
		{"pass_within_k", Options{"k": 1.0}, rec, item.Score{Name: "pass_within_k", Value: 0}},
		{"pass_within_k", nil, rec, item.Score{Name: "pass_within_k", Value: 1}},
		{"pass_at_1", nil, exRecord(exT(), []*item.Attempt{att(nil)}), item.Score{Name: "pass_at_1", Err: "pass_at_1 needs the ex metric listed before it in the same score stage (no attempt has a match verdict)"}},
		{"pass_within_k", nil, exRecord(exT(), []*item.Attempt{att(nil)}), item.Score{Name: "pass_within_k", Err: "pass_within_k needs the ex metric listed before it in the same score stage (no attempt has a match verdict)"}},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.metric, tt.o), func(t *testing.T) {
			got := exNewMetric(t, tt.metric, tt.o).Score(ctx, Input{Record: tt.rec})
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

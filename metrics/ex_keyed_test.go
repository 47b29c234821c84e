package metrics

import (
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/evalflow/evalflow/table"
)

// TestKeyedMatchesCellKeys: every cell and row of a keyed table is the
// key exValueKey gives it (a row: its cells' keys in order), for rows of
// any width, empty ones included, before and after dedupe.
func TestKeyedMatchesCellKeys(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	for round := range 300 {
		tab := &table.Table{}
		// Up to dedupeScan rows dedupe compares them pairwise, beyond
		// through a map: both.
		for range rng.IntN([]int{12, 60}[round%2]) {
			row := make([]table.Value, rng.IntN(4)) // ragged on purpose
			for j := range row {
				row[j] = randomValue(rng)
			}
			tab.Rows = append(tab.Rows, row)
		}
		k := exKeyRows(tab)
		check := func(k *exKeyed, rows [][]table.Value) {
			t.Helper()
			if len(k.rows) != len(rows) {
				t.Fatalf("round %d: %d rows keyed, want %d", round, len(k.rows), len(rows))
			}
			for r, row := range rows {
				var whole []byte
				for j, v := range row {
					want := string(exValueKey(nil, v))
					if got := k.cell(r, j); got != want {
						t.Fatalf("round %d: cell (%d, %d) = %q, want %q", round, r, j, got, want)
					}
					whole = append(whole, want...)
				}
				if got := k.row(r); got != string(whole) {
					t.Fatalf("round %d: row %d = %q, want %q", round, r, got, whole)
				}
			}
		}
		check(&k, tab.Rows)
		// dedupe keeps the first of every row whose cells are all equal.
		want, _ := distinctReference(tab.Rows)
		d := k.dedupe()
		check(&d, want)
	}
	if k := exKeyRows(nil); len(k.rows) != 0 {
		t.Fatalf("a nil table keyed %d rows", len(k.rows))
	}
}

func randomValue(rng *rand.Rand) table.Value {
	switch rng.IntN(7) {
	case 0:
		return nil
	case 1:
		return int64(rng.IntN(3))
	case 2:
		return float64(rng.IntN(3)) // 1.0 keys as 1
	case 3:
		return rng.Float64()
	case 4:
		return []string{"", "a", "ab", "1"}[rng.IntN(4)]
	case 5:
		return []byte{byte(rng.IntN(2))}
	}
	return rng.IntN(2) == 0
}

// TestCompareShapeReasons: under bag semantics the row and column counts
// decide before any key is built, with the reasons the full comparison
// gives; under set semantics duplicates go first, so [1, 1] matches [1].
func TestCompareShapeReasons(t *testing.T) {
	one := func(rows ...[]table.Value) *table.Table { return &table.Table{Rows: rows} }
	r := func(v ...table.Value) []table.Value { return v }
	for _, c := range []struct {
		name       string
		gold, pred *table.Table
		o          CompareOptions
		match      bool
		reason     string
	}{
		{"rows bag", one(r(int64(1)), r(int64(1))), one(r(int64(1))), CompareOptions{}, false, "row counts differ: gold 2, prediction 1"},
		{"rows set", one(r(int64(1)), r(int64(1))), one(r(1.0)), CompareOptions{Semantics: Set}, true, ""},
		{"rows set differ", one(r(int64(1)), r(int64(2))), one(r(int64(1))), CompareOptions{Semantics: Set}, false, "row counts differ: gold 2, prediction 1"},
		{"columns bag", one(r(int64(1), "a")), one(r(int64(1))), CompareOptions{Permute: true}, false, "column counts differ: gold 2, prediction 1"},
		{"columns set", one(r(int64(1), "a")), one(r(int64(1))), CompareOptions{Semantics: Set}, false, "column counts differ: gold 2, prediction 1"},
		{"empty pred", one(r(int64(1))), one(), CompareOptions{}, false, "row counts differ: gold 1, prediction 0"},
		{"nil gold", nil, one(r(int64(1))), CompareOptions{}, false, "row counts differ: gold 0, prediction 1"},
		{"both empty", one(), nil, CompareOptions{}, true, "both results are empty"},
		// Not tables (no engine gives rows of different lengths): said,
		// never read across rows or a panic.
		{"ragged gold", one(r(int64(1)), r(int64(2), int64(3))), one(r(int64(1)), r(int64(2), int64(3))), CompareOptions{}, false, "the gold result's row 2 has 2 values, its first row 1"},
		{"ragged pred", one(r(int64(1), int64(2)), r(int64(3), int64(4))), one(r(int64(1), int64(2)), r(int64(3))), CompareOptions{Permute: true, Ordered: true}, false, "the prediction result's row 2 has 1 values, its first row 2"},
		{"ragged empty rows", one(r(), r()), one(r(), r(int64(1))), CompareOptions{Semantics: Set}, false, "the prediction result's row 2 has 1 values, its first row 0"},
	} {
		v := CompareTables(c.gold, c.pred, c.o)
		if v.Match != c.match || v.Reason != c.reason {
			t.Errorf("%s: %+v, want match %v reason %q", c.name, v, c.match, c.reason)
		}
	}
}

// BenchmarkEXRowCountsDiffer: the most common mismatch of real
// predictions, decided by the counts alone.
func BenchmarkEXRowCountsDiffer(b *testing.B) {
	gold, pred := exBenchTables()
	pred = &table.Table{Columns: pred.Columns, Rows: pred.Rows[:999]}
	o := ProfileTestSuite.CompareOptions("SELECT a, b, c FROM t", Tolerance{})
	for b.Loop() {
		if CompareTables(gold, pred, o).Match {
			b.Fatal("match")
		}
	}
}

// TestCompareJoined: compareJoined(a1, a2, b1, b2) is
// strings.Compare(a1+a2, b1+b2), prefixes and empty parts included.
func TestCompareJoined(t *testing.T) {
	parts := []string{"", "a", "ab", "a!", "a<", "<class 'int'>", "<class 'str'>", "1", "10", "1.0", "b"}
	for _, a1 := range parts {
		for _, a2 := range parts {
			for _, b1 := range parts {
				for _, b2 := range parts {
					if got, want := compareJoined(a1, a2, b1, b2), strings.Compare(a1+a2, b1+b2); got != want {
						t.Fatalf("compareJoined(%q, %q, %q, %q) = %d, want %d", a1, a2, b1, b2, got, want)
					}
				}
			}
		}
	}
}

// distinctReference de-duplicates rows as evalflow first did, a string
// a cell and the row's strings joined: the first of every row whose
// cells are all equal, with its cells' keys.
func distinctReference(rows [][]table.Value) (kept [][]table.Value, keys [][]string) {
	seen := map[string]bool{}
	for _, row := range rows {
		var k []string
		for _, v := range row {
			k = append(k, string(exValueKey(nil, v)))
		}
		if j := strings.Join(k, ""); !seen[j] {
			seen[j] = true
			kept, keys = append(kept, row), append(keys, k)
		}
	}
	return kept, keys
}

// softF1Reference is BIRD's calculate_f1_score as evalflow first wrote
// it: a string a cell, rows joined to de-duplicate them.
func softF1Reference(gold, pred *table.Table) float64 {
	if len(gold.Rows) == 0 && len(pred.Rows) == 0 {
		return 1
	}
	_, g := distinctReference(gold.Rows)
	_, p := distinctReference(pred.Rows)
	in := func(v string, row []string) bool { return slices.Contains(row, v) }
	var tp, fp, fn float64
	for i := 0; i < max(len(g), len(p)); i++ {
		switch {
		case i >= len(p):
			fn++
		case i >= len(g):
			fp++
		default:
			var m, pOnly, tOnly int
			for _, v := range p[i] {
				if in(v, g[i]) {
					m++
				} else {
					pOnly++
				}
			}
			for _, v := range g[i] {
				if !in(v, p[i]) {
					tOnly++
				}
			}
			n := float64(len(g[i]))
			tp, fp, fn = tp+float64(m)/n, fp+float64(pOnly)/n, fn+float64(tOnly)/n
		}
	}
	var prec, rec float64
	if tp+fp > 0 {
		prec = tp / (tp + fp)
	}
	if tp+fn > 0 {
		rec = tp / (tp + fn)
	}
	if prec+rec == 0 {
		return 0
	}
	return 2 * prec * rec / (prec + rec)
}

// TestSoftF1MatchesReference: SoftF1 on keyed rows gives what the
// string-a-cell reference gives, on random results with repeated rows
// (both de-duplication paths) and values equal across types (1, 1.0).
func TestSoftF1MatchesReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	random := func() *table.Table {
		tab := &table.Table{}
		w := 1 + rng.IntN(3)
		for range rng.IntN([]int{10, 50}[rng.IntN(2)]) {
			row := make([]table.Value, w)
			for j := range row {
				row[j] = []table.Value{int64(1), 1.0, int64(2), "a", "1", nil}[rng.IntN(6)]
			}
			tab.Rows = append(tab.Rows, row)
		}
		return tab
	}
	for round := range 2000 {
		g, p := random(), random()
		if rng.IntN(4) == 0 {
			p = g
		}
		// The sums run in a different order only if the code changed:
		// the values must be equal, not close.
		if got, want := SoftF1(g, p), softF1Reference(g, p); got != want {
			t.Fatalf("round %d: SoftF1 = %v, reference %v\ngold %v\npred %v", round, got, want, g.Rows, p.Rows)
		}
	}
}

// pyFloatReprReference is pyFloatRepr as it was first written, with
// strings: the reference appendPyFloatRepr must agree with.
func pyFloatReprReference(f float64) string {
	switch {
	case math.IsNaN(f):
		return "nan"
	case math.IsInf(f, 1):
		return "inf"
	case math.IsInf(f, -1):
		return "-inf"
	}
	s := strconv.FormatFloat(f, 'e', -1, 64)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	mant, expStr, _ := strings.Cut(s, "e")
	exp, _ := strconv.Atoi(expStr)
	digits := strings.Replace(mant, ".", "", 1)
	var out string
	if exp >= -4 && exp < 16 {
		if exp >= 0 {
			for len(digits) < exp+1 {
				digits += "0"
			}
			frac := digits[exp+1:]
			if frac == "" {
				frac = "0"
			}
			out = digits[:exp+1] + "." + frac
		} else {
			out = "0." + strings.Repeat("0", -exp-1) + digits
		}
	} else {
		m := digits[:1]
		if len(digits) > 1 {
			m += "." + digits[1:]
		}
		sign := "+"
		if exp < 0 {
			sign, exp = "-", -exp
		}
		e := strconv.Itoa(exp)
		if len(e) < 2 {
			e = "0" + e
		}
		out = m + "e" + sign + e
	}
	if neg {
		out = "-" + out
	}
	return out
}

// TestPyFloatReprMatchesReference: every kind of float — random bits
// (subnormals, NaNs, infinities, extremes), whole numbers, decimals at
// every exponent around the fixed/scientific boundaries — reads as the
// reference writes it, also appended after other bytes.
func TestPyFloatReprMatchesReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(31, 32))
	check := func(f float64) {
		t.Helper()
		want := pyFloatReprReference(f)
		if got := pyFloatRepr(f); got != want {
			t.Fatalf("pyFloatRepr(%v) = %q, reference %q", f, got, want)
		}
		if got := string(appendPyFloatRepr([]byte("x"), f)); got != "x"+want {
			t.Fatalf("appendPyFloatRepr(x, %v) = %q", f, got)
		}
	}
	for _, f := range []float64{0, math.Copysign(0, -1), 1, -1, 0.1, 1e-4, 1e-5, 9.999e-5, 1e15, 1e16, 9999999999999998, 1e22, 5e-324, math.MaxFloat64, math.NaN(), math.Inf(1), math.Inf(-1)} {
		check(f)
	}
	for range 100_000 {
		check(math.Float64frombits(rng.Uint64()))
		check(float64(rng.Int64N(1<<53)) * math.Pow(10, float64(rng.IntN(40)-20)))
		check(math.Round(rng.NormFloat64()*1e6) / math.Pow(10, float64(rng.IntN(12))))
	}
}

// TestResultKeys: comparisons and soft F1 through one record's shared
// keys give what they give alone, whichever asks first (keyed or
// de-duplicated), from several goroutines at once, and a nil
// *ResultKeys keys every time.
func TestResultKeys(t *testing.T) {
	rng := rand.New(rand.NewPCG(41, 42))
	random := func() *table.Table {
		tab := &table.Table{}
		for range rng.IntN(30) {
			tab.Rows = append(tab.Rows, []table.Value{int64(rng.IntN(3)), []string{"a", "b"}[rng.IntN(2)]})
		}
		return tab
	}
	for round := range 200 {
		g, p := random(), random()
		if round%3 == 0 {
			p = &table.Table{Rows: slices.Clone(g.Rows)}
		}
		rk := &ResultKeys{}
		var nilKeys *ResultKeys
		done := make(chan struct{})
		for range 3 {
			go func() {
				defer func() { done <- struct{}{} }()
				for _, o := range []CompareOptions{{Semantics: Set}, {}, {Permute: true, PythonQuickReject: true}} {
					if got, want := compareTables(rk, g, p, o), CompareTables(g, p, o); got != want {
						t.Errorf("round %d, %+v: with shared keys %+v, alone %+v", round, o, got, want)
					}
					if got, want := compareTables(nilKeys, g, p, o), CompareTables(g, p, o); got != want {
						t.Errorf("round %d, %+v: with nil keys %+v, alone %+v", round, o, got, want)
					}
				}
				if got, want := softF1(rk, g, p), SoftF1(g, p); got != want {
					t.Errorf("round %d: soft F1 with shared keys %v, alone %v", round, got, want)
				}
			}()
		}
		for range 3 {
			<-done
		}
	}
}

// TestQuickRejectOtherTypes: a value outside the table's normal forms (a
// Go int, which table.Normalize would have made an int64) takes quick_rej's
// str path, where its str ties with the text "1" and the stable sort keeps
// the rows' own orders: rejected, as the reference rejects it.
func TestQuickRejectOtherTypes(t *testing.T) {
	gold := [][]table.Value{{1, "1"}}
	pred := [][]table.Value{{"1", 1}}
	want := sameRowKeys(unorderedRowsReference(gold), unorderedRowsReference(pred), false)
	if got := exQuickReject(gold, pred, false); got != want || got {
		t.Fatalf("exQuickReject = %v, reference %v (want false)", got, want)
	}
}

package stats

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// vectors mirrors testdata/scipy_vectors.json, written by
// testdata/gen_scipy_vectors.py (see that script for what each field is).
type vectors struct {
	GeneratedBy struct {
		Command string `json:"command"`
		Python  string `json:"python"`
		Scipy   string `json:"scipy"`
		Numpy   string `json:"numpy"`
	} `json:"generated_by"`
	McNemar []struct {
		B               int      `json:"b"`
		C               int      `json:"c"`
		PValue          float64  `json:"pvalue"`
		BinomtestPValue *float64 `json:"binomtest_pvalue"`
	} `json:"mcnemar"`
	Wilcoxon []struct {
		Name        string    `json:"name"`
		Diffs       []float64 `json:"diffs"`
		ScipyPValue *float64  `json:"scipy_pvalue"`
		ScipyMethod *string   `json:"scipy_method"`
		ScipyResult string    `json:"scipy_result"`
		PValue      float64   `json:"pvalue"`
		Method      string    `json:"method"`
	} `json:"wilcoxon"`
	Bootstrap []struct {
		Name      string    `json:"name"`
		Kind      string    `json:"kind"`
		A         []float64 `json:"a"`
		B         []float64 `json:"b"`
		Level     float64   `json:"level"`
		Resamples int       `json:"resamples"`
		Lo        float64   `json:"lo"`
		Hi        float64   `json:"hi"`
	} `json:"bootstrap"`
	Percentile []struct {
		X     []float64 `json:"x"`
		Q     []float64 `json:"q"`
		Value []float64 `json:"value"`
	} `json:"percentile"`
	Holm []struct {
		P        []float64 `json:"p"`
		Adjusted []float64 `json:"adjusted"`
	} `json:"holm"`
	Wilson []struct {
		Successes int      `json:"successes"`
		N         int      `json:"n"`
		Level     float64  `json:"level"`
		Lo        *float64 `json:"lo"`
		Hi        *float64 `json:"hi"`
	} `json:"wilson"`
}

func loadVectors(t *testing.T) *vectors {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", "scipy_vectors.json"))
	if err != nil {
		t.Fatal(err)
	}
	var v vectors
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatalf("decoding scipy_vectors.json: %v", err)
	}
	return &v
}

func TestVectorsProvenance(t *testing.T) {
	v := loadVectors(t)
	// The package pins SciPy 1.10.1's wilcoxon rules; vectors from another
	// SciPy would test something else.
	if v.GeneratedBy.Scipy != "1.10.1" {
		t.Errorf("vectors generated with scipy %q, want 1.10.1", v.GeneratedBy.Scipy)
	}
	if v.GeneratedBy.Command == "" {
		t.Error("generated_by.command is empty")
	}
	for name, n := range map[string]int{
		"mcnemar": len(v.McNemar), "wilcoxon": len(v.Wilcoxon),
		"bootstrap": len(v.Bootstrap), "percentile": len(v.Percentile),
		"holm": len(v.Holm), "wilson": len(v.Wilson),
	} {
		if n < 5 {
			t.Errorf("only %d %s vectors", n, name)
		}
	}
}

func TestMcNemarExactScipy(t *testing.T) {
	for _, tc := range loadVectors(t).McNemar {
		t.Run(fmt.Sprintf("b=%d,c=%d", tc.B, tc.C), func(t *testing.T) {
			got := McNemarExact(tc.B, tc.C)
			if math.Abs(got-tc.PValue) > 1e-9 {
				t.Errorf("McNemarExact = %.17g, scipy %.17g (abs diff %g)", got, tc.PValue, math.Abs(got-tc.PValue))
			}
			if tc.PValue > 0 && math.Abs(got-tc.PValue) > 1e-9*tc.PValue {
				t.Errorf("McNemarExact = %.17g, scipy %.17g (rel diff %g)", got, tc.PValue, math.Abs(got-tc.PValue)/tc.PValue)
			}
			if tc.PValue == 0 && got > 1e-300 {
				t.Errorf("McNemarExact = %g, scipy underflows to 0", got)
			}
			if tc.BinomtestPValue != nil && math.Abs(got-*tc.BinomtestPValue) > 1e-9 {
				t.Errorf("McNemarExact = %.17g, scipy binomtest %.17g", got, *tc.BinomtestPValue)
			}
			if sym := McNemarExact(tc.C, tc.B); sym != got {
				t.Errorf("not symmetric: (b,c) %v, (c,b) %v", got, sym)
			}
		})
	}
}

func TestWilcoxonScipy(t *testing.T) {
	for _, tc := range loadVectors(t).Wilcoxon {
		t.Run(tc.Name, func(t *testing.T) {
			// Where SciPy answers, the expectation must be SciPy's own
			// answer; the JSON's "pvalue"/"method" differ only where SciPy
			// raises (documented in the package doc).
			if tc.ScipyPValue != nil {
				if *tc.ScipyPValue != tc.PValue {
					t.Fatalf("vector expects %v but scipy said %v", tc.PValue, *tc.ScipyPValue)
				}
				want := map[string]string{"exact": MethodExact, "approx": MethodNormal}[*tc.ScipyMethod]
				if want != tc.Method {
					t.Fatalf("vector expects method %q but scipy used %q", tc.Method, *tc.ScipyMethod)
				}
			} else if tc.ScipyResult == "" {
				t.Fatal("vector without a scipy p-value does not record what scipy did")
			}
			p, method := Wilcoxon(tc.Diffs)
			if math.Abs(p-tc.PValue) > 1e-9 {
				t.Errorf("Wilcoxon p = %.17g, want %.17g (abs diff %g)", p, tc.PValue, math.Abs(p-tc.PValue))
			}
			if method != tc.Method {
				t.Errorf("Wilcoxon method = %q, want %q", method, tc.Method)
			}
		})
	}
}

func TestWilcoxonEdgeCases(t *testing.T) {
	tests := []struct {
		name       string
		diffs      []float64
		wantP      float64 // NaN means want NaN
		wantMethod string
	}{
		{"nil", nil, 1, MethodNone},
		{"empty", []float64{}, 1, MethodNone},
		{"all zero", []float64{0, 0, 0}, 1, MethodNone},
		{"negative zero", []float64{math.Copysign(0, -1), 0}, 1, MethodNone},
		{"nan", []float64{1, math.NaN(), 2}, math.NaN(), MethodNone},
		// 1..5 all positive: R+ = 15, P(R+ >= 15) = 1/32, p = 2/32.
		{"all positive n=5", []float64{1, 2, 3, 4, 5}, 0.0625, MethodExact},
		// n = 4, R+ = 5 = floor(4*5/4): the centre, p = 1 by SciPy's rule.
		{"centre n=4", []float64{1, -2, -3, 4}, 1, MethodExact},
		// The same values with one zero added switch to the normal path on
		// the five non-zero ones: T = 0, mean 7.5, variance 5·6·11/24.
		{"zero forces normal", []float64{1, 2, 3, 4, 5, 0}, 2 * normCDF(-7.5/math.Sqrt(5*6*11/24.0)), MethodNormal},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p, method := Wilcoxon(tc.diffs)
			if math.IsNaN(tc.wantP) {
				if !math.IsNaN(p) {
					t.Errorf("p = %v, want NaN", p)
				}
			} else if math.Abs(p-tc.wantP) > 1e-12 {
				t.Errorf("p = %.17g, want %.17g", p, tc.wantP)
			}
			if method != tc.wantMethod {
				t.Errorf("method = %q, want %q", method, tc.wantMethod)
			}
		})
	}
}

// normCDF is the standard normal CDF from the standard library only, to keep
// the hand-computed expectation above independent of gonum.
func normCDF(x float64) float64 { return 0.5 * math.Erfc(-x/math.Sqrt2) }

func TestSignedRankCounts(t *testing.T) {
	// Brute force over all 2^n sign patterns for small n.
	for n := 0; n <= 12; n++ {
		want := make([]uint64, n*(n+1)/2+1)
		for mask := 0; mask < 1<<n; mask++ {
			s := 0
			for k := 1; k <= n; k++ {
				if mask&(1<<(k-1)) != 0 {
					s += k
				}
			}
			want[s]++
		}
		got := signedRankCounts(n)
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("n=%d: got %v, want %v", n, got, want)
		}
	}
	// Largest n the exact path uses: total 2^50, symmetric.
	c := signedRankCounts(wilcoxonExactMaxN)
	var total uint64
	for s, v := range c {
		total += v
		if v != c[len(c)-1-s] {
			t.Fatalf("n=50 not symmetric at s=%d", s)
		}
	}
	if total != 1<<wilcoxonExactMaxN {
		t.Errorf("n=50 total %d, want 2^50", total)
	}
}

func TestAverageRanks(t *testing.T) {
	ranks, ties := averageRanks([]float64{3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5})
	// Sorted: 1 1 2 3 3 4 5 5 5 6 9 -> ranks 1.5 1.5 3 4.5 4.5 6 8 8 8 10 11.
	want := []float64{4.5, 1.5, 6, 1.5, 8, 11, 3, 10, 8, 4.5, 8}
	if fmt.Sprint(ranks) != fmt.Sprint(want) {
		t.Errorf("ranks = %v, want %v", ranks, want)
	}
	if fmt.Sprint(ties) != fmt.Sprint([]int{2, 2, 3}) {
		t.Errorf("tie groups = %v, want [2 2 3]", ties)
	}
}

func TestPercentileNumpy(t *testing.T) {
	for i, tc := range loadVectors(t).Percentile {
		sorted := append([]float64(nil), tc.X...)
		slices.Sort(sorted)
		for j, q := range tc.Q {
			got := percentileLinear(sorted, q)
			if got != tc.Value[j] {
				t.Errorf("case %d (n=%d) q=%v: got %.17g, numpy %.17g", i, len(tc.X), q, got, tc.Value[j])
			}
		}
	}
}

func TestBootstrapScipy(t *testing.T) {
	const seed = 20240611
	for _, tc := range loadVectors(t).Bootstrap {
		t.Run(tc.Name, func(t *testing.T) {
			var lo, hi float64
			switch tc.Kind {
			case "paired":
				lo, hi = PairedBootstrapCI(tc.A, tc.B, tc.Resamples, seed, tc.Level)
			case "single":
				lo, hi = BootstrapMeanCI(tc.A, tc.Resamples, seed, tc.Level)
			default:
				t.Fatalf("unknown kind %q", tc.Kind)
			}
			if math.Abs(lo-tc.Lo) > 0.01 || math.Abs(hi-tc.Hi) > 0.01 {
				t.Errorf("CI = [%.6f, %.6f], scipy [%.6f, %.6f]", lo, hi, tc.Lo, tc.Hi)
			}
			if !(lo <= hi) {
				t.Errorf("lo %v > hi %v", lo, hi)
			}
		})
	}
}

func TestBootstrapDeterministic(t *testing.T) {
	a := []float64{0.1, 0.7, 0.9, 0.2, 0.8, 0.55, 0.6, 0.3, 0.95, 0.05, 0.4, 0.75}
	b := []float64{0.3, 0.8, 0.85, 0.5, 0.6, 0.95, 0.7, 0.6, 1.0, 0.45, 0.45, 0.65}
	lo1, hi1 := PairedBootstrapCI(a, b, 2000, 7, 0.95)
	lo2, hi2 := PairedBootstrapCI(a, b, 2000, 7, 0.95)
	if lo1 != lo2 || hi1 != hi2 {
		t.Errorf("same seed gave [%v, %v] and [%v, %v]", lo1, hi1, lo2, hi2)
	}
	differs := false
	for s := uint64(8); s < 16 && !differs; s++ {
		lo3, hi3 := PairedBootstrapCI(a, b, 2000, s, 0.95)
		differs = lo3 != lo1 || hi3 != hi1
	}
	if !differs {
		t.Error("seed has no effect on the interval")
	}
	// A 95% interval must hold the sample's own mean(b − a).
	var m float64
	for i := range a {
		m += (b[i] - a[i]) / float64(len(a))
	}
	if !(lo1 < m && m < hi1) {
		t.Errorf("interval [%v, %v] misses the sample mean %v", lo1, hi1, m)
	}
	// A constant sample has a degenerate interval at its value.
	if lo, hi := BootstrapMeanCI([]float64{0.25, 0.25, 0.25}, 100, 1, 0.9); lo != 0.25 || hi != 0.25 {
		t.Errorf("constant sample: [%v, %v], want [0.25, 0.25]", lo, hi)
	}
	for name, f := range map[string]func() (float64, float64){
		"paired empty": func() (float64, float64) { return PairedBootstrapCI(nil, nil, 10, 1, 0.95) },
		"single empty": func() (float64, float64) { return BootstrapMeanCI(nil, 10, 1, 0.95) },
	} {
		if lo, hi := f(); !math.IsNaN(lo) || !math.IsNaN(hi) {
			t.Errorf("%s: [%v, %v], want NaN, NaN", name, lo, hi)
		}
	}
}

func TestHolm(t *testing.T) {
	for i, tc := range loadVectors(t).Holm {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			got := Holm(tc.P)
			if got == nil || len(got) != len(tc.Adjusted) {
				t.Fatalf("Holm(%v) = %v, want %v", tc.P, got, tc.Adjusted)
			}
			for j := range got {
				if math.Abs(got[j]-tc.Adjusted[j]) > 1e-12 {
					t.Errorf("Holm(%v)[%d] = %.17g, want %.17g", tc.P, j, got[j], tc.Adjusted[j])
				}
			}
		})
	}
}

func TestWilson(t *testing.T) {
	for _, tc := range loadVectors(t).Wilson {
		t.Run(fmt.Sprintf("%d/%d@%v", tc.Successes, tc.N, tc.Level), func(t *testing.T) {
			lo, hi := Wilson(tc.Successes, tc.N, tc.Level)
			if tc.Lo == nil || tc.Hi == nil {
				if !math.IsNaN(lo) || !math.IsNaN(hi) {
					t.Errorf("Wilson = [%v, %v], want NaN, NaN", lo, hi)
				}
				return
			}
			if math.Abs(lo-*tc.Lo) > 1e-12 || math.Abs(hi-*tc.Hi) > 1e-12 {
				t.Errorf("Wilson = [%.17g, %.17g], want [%.17g, %.17g]", lo, hi, *tc.Lo, *tc.Hi)
			}
		})
	}
}

func TestPanics(t *testing.T) {
	tests := map[string]func(){
		"mcnemar negative":       func() { McNemarExact(-1, 3) },
		"paired length mismatch": func() { PairedBootstrapCI([]float64{1}, []float64{1, 2}, 10, 1, 0.95) },
		"bootstrap resamples 0":  func() { BootstrapMeanCI([]float64{1}, 0, 1, 0.95) },
		"bootstrap level 1":      func() { BootstrapMeanCI([]float64{1}, 10, 1, 1) },
		"bootstrap level 95":     func() { BootstrapMeanCI([]float64{1}, 10, 1, 95) },
		"wilson too many":        func() { Wilson(11, 10, 0.95) },
		"wilson negative":        func() { Wilson(-1, 10, 0.95) },
		"wilson level 0":         func() { Wilson(1, 10, 0) },
		"holm above one":         func() { Holm([]float64{0.5, 1.5}) },
		"holm nan":               func() { Holm([]float64{math.NaN()}) },
	}
	for name, f := range tests {
		t.Run(name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Error("did not panic")
				}
			}()
			f()
		})
	}
}

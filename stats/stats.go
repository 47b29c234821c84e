// Package stats holds the paired statistics used to compare two evaluation
// runs item by item: significance tests on paired outcomes, bootstrap and
// Wilson confidence intervals, and Holm's multiple-comparison adjustment.
//
// Each function follows a named reference implementation, and
// stats/testdata/scipy_vectors.json (written by
// stats/testdata/gen_scipy_vectors.py with Debian 12's Python 3.11.2,
// SciPy 1.10.1 and NumPy 1.24.2) pins the results against it:
//
//   - [McNemarExact]: the exact (binomial) McNemar test on the discordant
//     counts, p = min(1, 2·P(X ≤ min(b, c))) with X ~ Binomial(b+c, 1/2),
//     i.e. min(1, 2*scipy.stats.binom.cdf(min(b,c), b+c, 0.5)). No mid-p.
//     Because Binomial(n, 1/2) is symmetric this equals
//     scipy.stats.binomtest(min(b,c), b+c, 0.5).pvalue. The CDF comes from
//     gonum's distuv.Binomial.
//   - [Wilcoxon]: scipy.stats.wilcoxon(d) with every default of SciPy 1.10.1
//     (zero_method="wilcox", correction=False, alternative="two-sided",
//     method="auto"). The exact null distribution of the signed-rank
//     statistic is computed here by a small dynamic programme, because gonum
//     has no signed-rank distribution; the normal tail uses gonum's
//     distuv.Normal.
//   - [PairedBootstrapCI], [BootstrapMeanCI]: percentile bootstrap intervals
//     for a mean, like scipy.stats.bootstrap(method="percentile") (with
//     paired=True for the paired case), whose endpoints are
//     numpy.percentile's default "linear" interpolation of the sorted
//     bootstrap means. The resampling stream is Go's math/rand/v2 PCG, so the
//     endpoints agree with SciPy's up to Monte-Carlo error, not bit for bit.
//     Hand-written: gonum has no bootstrap.
//   - [Wilson]: the Wilson score interval without continuity correction
//     (the textbook formula; the same as statsmodels' proportion_confint
//     method="wilson"). The normal quantile comes from gonum.
//   - [Holm]: Holm's step-down adjusted p-values, the algorithm of
//     statsmodels' multipletests(method="holm"). Hand-written: gonum has no
//     multiple-comparison adjustments, and the algorithm is a sort and a
//     running maximum.
//
// Known differences from SciPy 1.10.1's wilcoxon, all on inputs SciPy does
// not answer: an empty slice or a slice of zeros only returns p = 1 with
// method "none" (SciPy returns NaN for an empty input and raises ValueError
// when every difference is zero).
//
// SciPy 1.10.1 behaviours that are reproduced on purpose, because the goal is
// to give the numbers a reader re-running SciPy on Debian 12 would get:
//
//   - The exact path is taken when len(d) <= 50, counting zeros, and there
//     are no zero differences. Ties among the non-zero |d| do not switch it
//     off: SciPy 1.10.1 then uses the no-ties exact distribution with the
//     half-integer rank sum truncated by int(). Later SciPy releases changed
//     the "auto" rule for ties and zeros (scipy/scipy gh-21567), so newer
//     SciPy versions can give different p-values on tied data.
//   - With zero differences, the zeros are dropped and the normal
//     approximation (with the tie correction of the variance and no
//     continuity correction) is used, even for very small samples.
//
// Invalid arguments that are programming errors (negative counts,
// mismatched lengths, a level outside (0, 1), p-values outside [0, 1])
// panic; empty data yields NaN intervals as documented per function.
//
// Dependency: gonum.org/v1/gonum v0.17.0 (the newest version, which the Go
// module proxy served).
package stats

import (
	"fmt"
	"math"
	"sort"

	"gonum.org/v1/gonum/stat/distuv"
)

// Method names returned by [Wilcoxon].
const (
	// MethodExact means the p-value comes from the exact null distribution
	// of the signed-rank statistic (SciPy's method="exact").
	MethodExact = "exact"
	// MethodNormal means the p-value comes from the normal approximation
	// with tie correction (SciPy's method="approx").
	MethodNormal = "normal"
	// MethodNone means no test was run: no non-zero difference, or a NaN.
	MethodNone = "none"
)

// wilcoxonExactMaxN is SciPy 1.10.1's threshold for method="auto": exact when
// len(d) <= 50 (and no zeros), normal approximation otherwise.
const wilcoxonExactMaxN = 50

// McNemarExact returns the two-sided exact McNemar p-value for b and c, the
// two discordant counts of a paired 2×2 table (b: pairs where only the first
// system is right, c: pairs where only the second is). It is
// min(1, 2·P(X ≤ min(b, c))) for X ~ Binomial(b+c, 1/2), without mid-p, and
// 1 when b+c == 0. It panics if b or c is negative.
func McNemarExact(b, c int) float64 {
	if b < 0 || c < 0 {
		panic(fmt.Sprintf("compare: McNemarExact: negative count b=%d c=%d", b, c))
	}
	n := b + c
	if n == 0 {
		return 1
	}
	k := min(b, c)
	p := 2 * distuv.Binomial{N: float64(n), P: 0.5}.CDF(float64(k))
	return math.Min(1, p)
}

// Wilcoxon runs the two-sided Wilcoxon signed-rank test on paired differences
// exactly as scipy.stats.wilcoxon(diffs) does with SciPy 1.10.1's defaults,
// and reports which null distribution it used:
//
//   - "exact" when len(diffs) <= 50 and no difference is zero: the p-value is
//     2·min(P(R+ ≤ r), P(R+ ≥ r)) under the no-ties null distribution of the
//     positive rank sum R+, capped at 1, and exactly 1 when r is the centre
//     floor(n(n+1)/4). With tied |d| the average ranks can make r a
//     half-integer; like SciPy 1.10.1 it is truncated toward zero.
//   - "normal" otherwise: zero differences are dropped, T = min(R+, R−) of
//     the remaining n, z = (T − n(n+1)/4) / σ with σ² = (n(n+1)(2n+1) −
//     ½·Σ t(t²−1))/24 over the tie groups t, and p = 2·Φ(−|z|). No
//     continuity correction.
//   - "none" with p = 1 when there is no non-zero difference (an empty slice
//     or all zeros; SciPy returns NaN or raises), and with p = NaN when any
//     difference is NaN (SciPy's default nan_policy="propagate").
func Wilcoxon(diffs []float64) (p float64, method string) {
	nonzero := make([]float64, 0, len(diffs))
	for _, d := range diffs {
		if math.IsNaN(d) {
			return math.NaN(), MethodNone
		}
		if d != 0 {
			nonzero = append(nonzero, d)
		}
	}
	n := len(nonzero)
	if n == 0 {
		return 1, MethodNone
	}

	abs := make([]float64, n)
	for i, d := range nonzero {
		abs[i] = math.Abs(d)
	}
	ranks, tieGroups := averageRanks(abs)
	var rPlus, rMinus float64
	for i, d := range nonzero {
		if d > 0 {
			rPlus += ranks[i]
		} else {
			rMinus += ranks[i]
		}
	}

	if len(diffs) <= wilcoxonExactMaxN && n == len(diffs) {
		return wilcoxonExactP(n, rPlus), MethodExact
	}

	nf := float64(n)
	mean := nf * (nf + 1) * 0.25
	variance := nf * (nf + 1) * (2*nf + 1)
	var tieSum int64
	for _, t := range tieGroups {
		t := int64(t)
		tieSum += t * (t*t - 1)
	}
	variance -= 0.5 * float64(tieSum)
	se := math.Sqrt(variance / 24)
	z := (math.Min(rPlus, rMinus) - mean) / se
	return 2 * distuv.UnitNormal.CDF(-math.Abs(z)), MethodNormal
}

// wilcoxonExactP is SciPy 1.10.1's exact two-sided p-value for the positive
// rank sum rPlus among n untied, non-zero differences.
func wilcoxonExactP(n int, rPlus float64) float64 {
	counts := signedRankCounts(n)
	r := int(rPlus) // SciPy: r_plus = int(r_plus), truncation toward zero.
	if r == (len(counts)-1)/2 {
		return 1
	}
	var less, greater uint64
	for s, c := range counts {
		if s <= r {
			less += c
		}
		if s >= r {
			greater += c
		}
	}
	// Every count is below 2^n <= 2^50, so these conversions and the scaling
	// by 2^-n are exact, like SciPy's float64 pmf sums.
	p := 2 * math.Ldexp(float64(min(less, greater)), -n)
	return math.Min(1, p)
}

// signedRankCounts returns, for s = 0..n(n+1)/2, the number of subsets of
// {1, ..., n} whose sum is s: the null distribution of the positive rank sum
// R+ times 2^n. Each rank k enters a subset or not, so the counts follow the
// recurrence c_k(s) = c_{k−1}(s) + c_{k−1}(s−k), run in place from the top.
// gonum offers no signed-rank distribution, hence this DP; uint64 is exact
// for every n this package uses (n <= 50).
func signedRankCounts(n int) []uint64 {
	maxSum := n * (n + 1) / 2
	c := make([]uint64, maxSum+1)
	c[0] = 1
	for k := 1; k <= n; k++ {
		top := k * (k + 1) / 2
		for s := top; s >= k; s-- {
			c[s] += c[s-k]
		}
	}
	return c
}

// averageRanks returns the 1-based ranks of x with ties given their average
// rank (scipy.stats.rankdata's "average"), and the sizes of the tie groups
// with more than one member (scipy.stats.find_repeats on the ranks).
func averageRanks(x []float64) (ranks []float64, tieGroups []int) {
	n := len(x)
	order := make([]int, n)
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(i, j int) bool { return x[order[i]] < x[order[j]] })
	ranks = make([]float64, n)
	for i := 0; i < n; {
		j := i + 1
		for j < n && x[order[j]] == x[order[i]] {
			j++
		}
		// Positions i..j-1 hold ranks i+1..j; their average is (i+1+j)/2.
		r := float64(i+1+j) / 2
		for k := i; k < j; k++ {
			ranks[order[k]] = r
		}
		if j-i > 1 {
			tieGroups = append(tieGroups, j-i)
		}
		i = j
	}
	return ranks, tieGroups
}

// PairedBootstrapCI returns the percentile bootstrap confidence interval, at
// confidence level (for example 0.95), for mean(b − a) over the pairs
// (a[i], b[i]). Each of the resamples draws len(a) pair indices with
// replacement, so a pair's two values always travel together, like
// scipy.stats.bootstrap((a, b), paired=True, method="percentile").
//
// The random stream is math/rand/v2's PCG seeded with (seed, seed), so the
// same inputs and seed give the same interval on every platform. The
// endpoints are numpy.percentile's default linear interpolation at
// 100·(1−level)/2 and 100·(1+level)/2 of the sorted bootstrap means.
//
// It returns NaN, NaN for empty inputs, and panics if the lengths differ,
// resamples < 1, or level is not in (0, 1).
func PairedBootstrapCI(a, b []float64, resamples int, seed uint64, level float64) (lo, hi float64) {
	if len(a) != len(b) {
		panic(fmt.Sprintf("compare: PairedBootstrapCI: len(a)=%d != len(b)=%d", len(a), len(b)))
	}
	d := make([]float64, len(a))
	for i := range a {
		d[i] = b[i] - a[i]
	}
	return bootstrapMeanCI("PairedBootstrapCI", d, resamples, seed, level)
}

// BootstrapMeanCI returns the percentile bootstrap confidence interval for
// the mean of x, with the same resampling, seeding and percentile rule as
// [PairedBootstrapCI] (scipy.stats.bootstrap((x,), np.mean,
// method="percentile")). It returns NaN, NaN for an empty x and panics if
// resamples < 1 or level is not in (0, 1).
func BootstrapMeanCI(x []float64, resamples int, seed uint64, level float64) (lo, hi float64) {
	return bootstrapMeanCI("BootstrapMeanCI", x, resamples, seed, level)
}

func bootstrapMeanCI(fn string, x []float64, resamples int, seed uint64, level float64) (lo, hi float64) {
	if resamples < 1 {
		panic(fmt.Sprintf("compare: %s: resamples=%d, want >= 1", fn, resamples))
	}
	checkLevel(fn, level)
	n := len(x)
	if n == 0 {
		return math.NaN(), math.NaN()
	}
	return percentileCI(bootstrapMeans(x, resamples, seed), level) // bootstrap.go: the same means as one PCG stream, faster
}

// percentileLinear is numpy.percentile(sorted, q) with NumPy's default
// method "linear" (Hyndman & Fan type 7), including NumPy 1.24's two-sided
// lerp. sorted must be ascending and non-empty; q is in [0, 100].
func percentileLinear(sorted []float64, q float64) float64 {
	n := len(sorted)
	v := float64(n-1) * (q / 100)
	if v >= float64(n-1) {
		return sorted[n-1]
	}
	if v < 0 {
		return sorted[0]
	}
	prev := math.Floor(v)
	i := int(prev)
	a, b := sorted[i], sorted[i+1]
	t := v - prev
	diff := b - a
	if t >= 0.5 {
		return b - diff*(1-t)
	}
	return a + diff*t
}

// Wilson returns the Wilson score interval, without continuity correction,
// for successes out of n trials at confidence level (for example 0.95):
//
//	(p̂ + z²/2n ± z·sqrt(p̂(1−p̂)/n + z²/4n²)) / (1 + z²/n)
//
// with p̂ = successes/n and z the (1+level)/2 standard normal quantile, the
// endpoints clamped to [0, 1] against rounding. It returns NaN, NaN when
// n == 0 and panics if successes is outside [0, n] or level is not in (0, 1).
func Wilson(successes, n int, level float64) (lo, hi float64) {
	checkLevel("Wilson", level)
	if n < 0 || successes < 0 || successes > n {
		panic(fmt.Sprintf("compare: Wilson: successes=%d n=%d, want 0 <= successes <= n", successes, n))
	}
	if n == 0 {
		return math.NaN(), math.NaN()
	}
	z := distuv.UnitNormal.Quantile(1 - (1-level)/2)
	nf := float64(n)
	phat := float64(successes) / nf
	z2 := z * z
	denom := 1 + z2/nf
	center := phat + z2/(2*nf)
	half := z * math.Sqrt(phat*(1-phat)/nf+z2/(4*nf*nf))
	lo = (center - half) / denom
	hi = (center + half) / denom
	return math.Max(0, lo), math.Min(1, hi)
}

// Holm returns Holm's step-down adjusted p-values, in the order of p: sort
// ascending, multiply the i-th smallest (0-based) by len(p)−i, take the
// running maximum so the adjusted values are monotone in the raw ones, and
// cap at 1 — the same as statsmodels' multipletests(p, method="holm")[1].
// Equal raw p-values get equal adjusted values. It returns an empty, non-nil
// slice for an empty p and panics if a p-value is NaN or outside [0, 1].
func Holm(p []float64) []float64 {
	m := len(p)
	for i, v := range p {
		if !(v >= 0 && v <= 1) {
			panic(fmt.Sprintf("compare: Holm: p[%d]=%v, want a p-value in [0, 1]", i, v))
		}
	}
	order := make([]int, m)
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(i, j int) bool { return p[order[i]] < p[order[j]] })
	adj := make([]float64, m)
	running := 0.0
	for rank, i := range order {
		running = math.Max(running, float64(m-rank)*p[i])
		adj[i] = math.Min(1, running)
	}
	return adj
}

func checkLevel(fn string, level float64) {
	if !(level > 0 && level < 1) {
		panic(fmt.Sprintf("compare: %s: level=%v, want 0 < level < 1", fn, level))
	}
}

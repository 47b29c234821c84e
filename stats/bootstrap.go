package stats

import (
	"math"
	"math/bits"
	"math/rand/v2"
	"runtime"
	"sync"
)

// The bootstrap's resampling is defined by the reference loop in
// bootstrapMeansRef: resample r sums x[rng.IntN(n)] over n draws, in draw
// order, from one math/rand/v2 PCG stream seeded (seed, seed), and divides
// by n. Every interval evalflow prints (aggregates.parquet ci_low/ci_high,
// the report, compare) comes from it, so a faster path must give the same
// means bit for bit: the same draws, added in the same order.
//
// bootstrapMeans does so in four ways, each exact:
//
//   - A sample whose values are all the same float64 (same bits) has the
//     same sum in every resample, whatever the draws: it is computed once.
//   - The PCG (a 128-bit LCG with a DXSM output) is inlined rather than
//     called through rand.Source, and IntN's reduction (Lemire's multiply;
//     a mask for a power of two) is done in place.
//   - The stream is cut into blocks of whole resamples, each started from
//     the LCG state jumped ahead by the draws before it (a jump of k steps
//     is O(log k)), and the blocks run interleaved (four per goroutine,
//     for instruction-level parallelism) and on every processor.
//   - A large sample made of long runs of equal values — the sorted
//     values a metric takes over a big run (aggregate.CI sorts them) — is
//     read through a table of its runs (runTable) instead of the sample
//     itself: x[i] is the value of the run holding i, the same float64,
//     but from a few kilobytes that stay in cache instead of 8 bytes per
//     item. Above a few hundred thousand items the random reads of x[i]
//     otherwise miss every cache, and the capped number of draws
//     (aggregate.BootstrapWork) took ten times longer per draw at 10⁶
//     items than at 10⁵.
//
// A jump assumes every resample takes exactly n draws. IntN draws again
// only when the low half of its product falls below 2⁶⁴ mod n (less than n
// of 2⁶⁴ values: about 5e-14 per draw at n = 10⁶); the fast path watches
// for lo < n, the superset, and if it ever happens the whole computation is
// redone by the reference loop, so the result never depends on luck.

// pcgMul and pcgInc are math/rand/v2's PCG multiplier and increment
// (128-bit; hi, lo halves).
const (
	pcgMulHi = 2549297995355413924
	pcgMulLo = 4865540595714422341
	pcgIncHi = 6364136223846793005
	pcgIncLo = 1442695040888963407
	dxsmMul  = 0xda942042e4dd58b5
)

// fastDrawsPerWorker is the least work (draws) worth a goroutine of its own.
const fastDrawsPerWorker = 1 << 21

// runTableMinN is the smallest sample read through a runTable (below it
// the sample fits in a core's cache anyway); runTableMinRun is the least
// mean run length worth one.
const (
	runTableMinN   = 1 << 16
	runTableMinRun = 16
)

// bootstrapMeans returns the resample means, as bootstrapMeansRef does.
func bootstrapMeans(x []float64, resamples int, seed uint64) []float64 {
	n := len(x)
	means := make([]float64, resamples)
	if constant(x) {
		var sum float64
		for _, v := range x {
			sum += v
		}
		m := sum / float64(n)
		for r := range means {
			means[r] = m
		}
		return means
	}
	if !fastMeans(x, means, seed, runtime.GOMAXPROCS(0)) {
		return bootstrapMeansRef(x, resamples, seed)
	}
	return means
}

// bootstrapMeansRef is the definition: one math/rand/v2 stream, resample
// after resample.
func bootstrapMeansRef(x []float64, resamples int, seed uint64) []float64 {
	n := len(x)
	rng := rand.New(rand.NewPCG(seed, seed))
	means := make([]float64, resamples)
	for r := range means {
		var sum float64
		for range n {
			sum += x[rng.IntN(n)]
		}
		means[r] = sum / float64(n)
	}
	return means
}

// constant reports whether every value of x has the same bits (so -0 and
// +0, whose sums differ in sign, are not the same).
func constant(x []float64) bool {
	if len(x) == 0 {
		return false
	}
	b := math.Float64bits(x[0])
	for _, v := range x[1:] {
		if math.Float64bits(v) != b {
			return false
		}
	}
	return true
}

// fastMeans fills means with up to procs goroutines; false when some draw
// may have needed IntN's rejection step (then means is garbage).
func fastMeans(x, means []float64, seed uint64, procs int) bool {
	n := uint64(len(x))
	resamples := len(means)
	workers := 1
	if draws := uint64(resamples) * n; procs > 1 && draws >= 2*fastDrawsPerWorker {
		workers = int(min(uint64(procs), draws/fastDrawsPerWorker, uint64(resamples)))
	}
	start := pcg{hi: seed, lo: seed}
	rt := newRunTable(x)
	if workers == 1 {
		return meansRange(x, rt, means, 0, resamples, start)
	}
	ok := make([]bool, workers)
	var wg sync.WaitGroup
	for w := range workers {
		a, b := resamples*w/workers, resamples*(w+1)/workers
		wg.Add(1)
		go func() {
			defer wg.Done()
			ok[w] = meansRange(x, rt, means, a, b, start)
		}()
	}
	wg.Wait()
	for _, k := range ok {
		if !k {
			return false
		}
	}
	return true
}

// meansRange computes means[a:b], resample r starting from start advanced by
// r·n steps: four interleaved blocks, then what is left one by one; through
// rt when it is not nil.
func meansRange(x []float64, rt *runTable, means []float64, a, b int, start pcg) bool {
	n := uint64(len(x))
	q := (b - a) / 4
	ok := true
	if q > 0 {
		p0 := start.jumped(uint64(a) * n)
		p1 := start.jumped(uint64(a+q) * n)
		p2 := start.jumped(uint64(a+2*q) * n)
		p3 := start.jumped(uint64(a+3*q) * n)
		o0, o1, o2, o3 := means[a:a+q], means[a+q:a+2*q], means[a+2*q:a+3*q], means[a+3*q:a+4*q]
		if rt != nil {
			ok = rt.means4(o0, o1, o2, o3, &p0, &p1, &p2, &p3)
		} else {
			ok = means4(x, o0, o1, o2, o3, &p0, &p1, &p2, &p3)
		}
	}
	if rest := a + 4*q; ok && rest < b {
		p := start.jumped(uint64(rest) * n)
		if rt != nil {
			ok = rt.means1(means[rest:b], &p)
		} else {
			ok = means1(x, means[rest:b], &p)
		}
	}
	return ok
}

// runTable reads a sample through its runs of equal values (same bits):
// vals[k] is run k's value and end[k] the index just past it; start[b] is
// the run holding index b<<shift. at(i) starts from its bucket's run and
// steps past the runs that end at or before i — none or one on average,
// since a bucket is no longer than a mean run.
type runTable struct {
	n     uint64
	shift uint
	start []uint32
	end   []uint32
	vals  []float64
}

// newRunTable returns x's run table, or nil when reading x directly is as
// good: a small sample, or short runs (an unsorted sample has runs of one).
func newRunTable(x []float64) *runTable {
	n := len(x)
	if n < runTableMinN || uint64(n) > 1<<32-1 {
		return nil
	}
	runs := 1
	for i := 1; i < n; i++ {
		if math.Float64bits(x[i]) != math.Float64bits(x[i-1]) {
			runs++
			if runs > n/runTableMinRun {
				return nil
			}
		}
	}
	t := &runTable{n: uint64(n), end: make([]uint32, 0, runs), vals: make([]float64, 0, runs)}
	for i := 1; i <= n; i++ {
		if i == n || math.Float64bits(x[i]) != math.Float64bits(x[i-1]) {
			t.end = append(t.end, uint32(i))
			t.vals = append(t.vals, x[i-1])
		}
	}
	for 1<<(t.shift+1) <= n/runs {
		t.shift++
	}
	t.start = make([]uint32, (n-1)>>t.shift+1)
	k := uint32(0)
	for b := range t.start {
		i := uint32(b << t.shift)
		for t.end[k] <= i {
			k++
		}
		t.start[b] = k
	}
	return t
}

// at is x[i].
func (t *runTable) at(i uint64) float64 {
	k := t.start[i>>t.shift]
	for uint64(t.end[k]) <= i {
		k++
	}
	return t.vals[k]
}

// means1 is means1 through the table.
func (t *runTable) means1(out []float64, p *pcg) bool {
	n := t.n
	fn := float64(n)
	if n&(n-1) == 0 {
		mask := n - 1
		for r := range out {
			var sum float64
			for range n {
				sum += t.at(p.next() & mask)
			}
			out[r] = sum / fn
		}
		return true
	}
	for r := range out {
		var sum float64
		for range n {
			hi, lo := bits.Mul64(p.next(), n)
			if lo < n {
				return false
			}
			sum += t.at(hi)
		}
		out[r] = sum / fn
	}
	return true
}

// means4 is means4 through the table.
func (t *runTable) means4(o0, o1, o2, o3 []float64, p0, p1, p2, p3 *pcg) bool {
	n := t.n
	if n&(n-1) == 0 {
		return t.means1(o0, p0) && t.means1(o1, p1) && t.means1(o2, p2) && t.means1(o3, p3)
	}
	fn := float64(n)
	s0, s1, s2, s3 := *p0, *p1, *p2, *p3
	for r := range o0 {
		var a0, a1, a2, a3 float64
		for range n {
			h0, l0 := bits.Mul64(s0.next(), n)
			h1, l1 := bits.Mul64(s1.next(), n)
			h2, l2 := bits.Mul64(s2.next(), n)
			h3, l3 := bits.Mul64(s3.next(), n)
			if l0 < n || l1 < n || l2 < n || l3 < n {
				return false
			}
			a0 += t.at(h0)
			a1 += t.at(h1)
			a2 += t.at(h2)
			a3 += t.at(h3)
		}
		o0[r], o1[r], o2[r], o3[r] = a0/fn, a1/fn, a2/fn, a3/fn
	}
	*p0, *p1, *p2, *p3 = s0, s1, s2, s3
	return true
}

// pcg is math/rand/v2's PCG: a 128-bit LCG state.
type pcg struct{ hi, lo uint64 }

// jumped returns the state k steps on: the LCG's k-fold composition,
// s → A·s + C, built by squaring (Brown, "Random number generation with
// arbitrary strides", 1994), all mod 2¹²⁸.
func (p pcg) jumped(k uint64) pcg {
	accMul, accAdd := u128{0, 1}, u128{0, 0}
	curMul, curAdd := u128{pcgMulHi, pcgMulLo}, u128{pcgIncHi, pcgIncLo}
	for k > 0 {
		if k&1 != 0 {
			accMul = accMul.mul(curMul)
			accAdd = accAdd.mul(curMul).add(curAdd)
		}
		curAdd = curMul.add(u128{0, 1}).mul(curAdd)
		curMul = curMul.mul(curMul)
		k >>= 1
	}
	s := accMul.mul(u128{p.hi, p.lo}).add(accAdd)
	return pcg{s.hi, s.lo}
}

type u128 struct{ hi, lo uint64 }

func (a u128) mul(b u128) u128 {
	hi, lo := bits.Mul64(a.lo, b.lo)
	hi += a.hi*b.lo + a.lo*b.hi
	return u128{hi, lo}
}

func (a u128) add(b u128) u128 {
	lo, c := bits.Add64(a.lo, b.lo, 0)
	hi, _ := bits.Add64(a.hi, b.hi, c)
	return u128{hi, lo}
}

// next is PCG.Uint64: step the LCG, then DXSM.
func (p *pcg) next() uint64 {
	hi, lo := bits.Mul64(p.lo, pcgMulLo)
	hi += p.hi*pcgMulLo + p.lo*pcgMulHi
	lo, c := bits.Add64(lo, pcgIncLo, 0)
	hi, _ = bits.Add64(hi, pcgIncHi, c)
	p.lo, p.hi = lo, hi
	hi ^= hi >> 32
	hi *= dxsmMul
	hi ^= hi >> 48
	hi *= lo | 1
	return hi
}

// means1 computes resamples one after another from p.
func means1(x, out []float64, p *pcg) bool {
	n := uint64(len(x))
	fn := float64(len(x))
	if n&(n-1) == 0 {
		mask := n - 1
		for r := range out {
			var sum float64
			for range n {
				sum += x[p.next()&mask]
			}
			out[r] = sum / fn
		}
		return true
	}
	for r := range out {
		var sum float64
		for range n {
			hi, lo := bits.Mul64(p.next(), n)
			if lo < n {
				return false
			}
			sum += x[hi]
		}
		out[r] = sum / fn
	}
	return true
}

// means4 computes four blocks of resamples of equal length side by side,
// block i from pi: four independent dependency chains per iteration.
func means4(x, o0, o1, o2, o3 []float64, p0, p1, p2, p3 *pcg) bool {
	n := uint64(len(x))
	if n&(n-1) == 0 {
		// A power of two: IntN masks, never draws again.
		return means1(x, o0, p0) && means1(x, o1, p1) && means1(x, o2, p2) && means1(x, o3, p3)
	}
	fn := float64(len(x))
	s0, s1, s2, s3 := *p0, *p1, *p2, *p3
	for r := range o0 {
		var a0, a1, a2, a3 float64
		for range n {
			h0, l0 := bits.Mul64(s0.next(), n)
			h1, l1 := bits.Mul64(s1.next(), n)
			h2, l2 := bits.Mul64(s2.next(), n)
			h3, l3 := bits.Mul64(s3.next(), n)
			if l0 < n || l1 < n || l2 < n || l3 < n {
				return false
			}
			a0 += x[h0]
			a1 += x[h1]
			a2 += x[h2]
			a3 += x[h3]
		}
		o0[r], o1[r], o2[r], o3[r] = a0/fn, a1/fn, a2/fn, a3/fn
	}
	*p0, *p1, *p2, *p3 = s0, s1, s2, s3
	return true
}

package stats

import (
	"fmt"
	"math/bits"
	"runtime"
	"slices"
	"sync"
)

// Two samples of the same size bootstrapped with the same seed are
// resampled by the same draws: resample r of each sums the values at the
// same indices, in the same order. A run's aggregate stage asks for
// several such intervals (every metric that is not 0/1 over the same
// items, one seed), and the draws — the PCG step and IntN's reduction —
// are most of a bootstrap's work, so bootstrapMeansPair computes two
// samples' means from one stream of draws. Each sample's means are still
// bootstrapMeansRef's, bit for bit (TestBootstrapMeansPairExact).

// BootstrapMeanCIs returns BootstrapMeanCI(xs[i], resamples, seed, level)
// for every i, drawing once for each pair of samples of the same length.
func BootstrapMeanCIs(xs [][]float64, resamples int, seed uint64, level float64) (lo, hi []float64) {
	if resamples < 1 {
		panic(fmt.Sprintf("compare: BootstrapMeanCIs: resamples=%d, want >= 1", resamples))
	}
	checkLevel("BootstrapMeanCIs", level)
	lo, hi = make([]float64, len(xs)), make([]float64, len(xs))
	byLen := map[int][]int{}
	var lens []int
	for i, x := range xs {
		if _, ok := byLen[len(x)]; !ok {
			lens = append(lens, len(x))
		}
		byLen[len(x)] = append(byLen[len(x)], i)
	}
	for _, n := range lens {
		idx := byLen[n]
		for len(idx) >= 2 && n > 0 {
			i, j := idx[0], idx[1]
			idx = idx[2:]
			mx, my := bootstrapMeansPair(xs[i], xs[j], resamples, seed)
			lo[i], hi[i] = percentileCI(mx, level)
			lo[j], hi[j] = percentileCI(my, level)
		}
		for _, i := range idx {
			lo[i], hi[i] = BootstrapMeanCI(xs[i], resamples, seed, level)
		}
	}
	return lo, hi
}

// percentileCI sorts means and reads the percentile interval at level off
// them.
func percentileCI(means []float64, level float64) (lo, hi float64) {
	slices.Sort(means)
	alpha := (1 - level) / 2
	return percentileLinear(means, alpha*100), percentileLinear(means, (1-alpha)*100)
}

// bootstrapMeansPair returns bootstrapMeans(x, …) and bootstrapMeans(y, …)
// for len(x) == len(y), from one stream of draws where it can.
func bootstrapMeansPair(x, y []float64, resamples int, seed uint64) (mx, my []float64) {
	n := uint64(len(x))
	if n == 0 || n&(n-1) == 0 || n >= runTableMinN || constant(x) || constant(y) {
		// Each alone has a cheaper path (a mask, one sum) or may have one
		// (a run table, for a large sample of long runs).
		return bootstrapMeans(x, resamples, seed), bootstrapMeans(y, resamples, seed)
	}
	mx, my = make([]float64, resamples), make([]float64, resamples)
	if !fastMeansPair(x, y, mx, my, seed, runtime.GOMAXPROCS(0)) {
		return bootstrapMeansRef(x, resamples, seed), bootstrapMeansRef(y, resamples, seed)
	}
	return mx, my
}

// fastMeansPair is fastMeans for two samples of one length (not a power
// of two, below runTableMinN).
func fastMeansPair(x, y, mx, my []float64, seed uint64, procs int) bool {
	n := uint64(len(x))
	resamples := len(mx)
	workers := 1
	if draws := uint64(resamples) * n; procs > 1 && draws >= 2*fastDrawsPerWorker {
		workers = int(min(uint64(procs), draws/fastDrawsPerWorker, uint64(resamples)))
	}
	start := pcg{hi: seed, lo: seed}
	if workers == 1 {
		return meansRangePair(x, y, mx, my, 0, resamples, start)
	}
	ok := make([]bool, workers)
	var wg sync.WaitGroup
	for w := range workers {
		a, b := resamples*w/workers, resamples*(w+1)/workers
		wg.Add(1)
		go func() {
			defer wg.Done()
			ok[w] = meansRangePair(x, y, mx, my, a, b, start)
		}()
	}
	wg.Wait()
	return !slices.Contains(ok, false)
}

// meansRangePair is meansRange for two samples.
func meansRangePair(x, y, mx, my []float64, a, b int, start pcg) bool {
	n := uint64(len(x))
	q := (b - a) / 4
	ok := true
	if q > 0 {
		ps := [4]pcg{start.jumped(uint64(a) * n), start.jumped(uint64(a+q) * n), start.jumped(uint64(a+2*q) * n), start.jumped(uint64(a+3*q) * n)}
		ok = means4Pair(x, y, mx[a:a+4*q], my[a:a+4*q], q, &ps)
	}
	if rest := a + 4*q; ok && rest < b {
		p := start.jumped(uint64(rest) * n)
		ok = means1Pair(x, y, mx[rest:b], my[rest:b], &p)
	}
	return ok
}

// means1Pair is means1 for two samples.
func means1Pair(x, y, ox, oy []float64, p *pcg) bool {
	n := uint64(len(x))
	y = y[:len(x)]
	fn := float64(len(x))
	for r := range ox {
		var sx, sy float64
		for range n {
			hi, lo := bits.Mul64(p.next(), n)
			if lo < n {
				return false
			}
			sx += x[hi]
			sy += y[hi]
		}
		ox[r], oy[r] = sx/fn, sy/fn
	}
	return true
}

// means4Pair is means4 for two samples: ox and oy hold four blocks of q
// resamples, block i drawn from ps[i].
func means4Pair(x, y, ox, oy []float64, q int, ps *[4]pcg) bool {
	n := uint64(len(x))
	y = y[:len(x)]
	fn := float64(len(x))
	s0, s1, s2, s3 := ps[0], ps[1], ps[2], ps[3]
	for r := range q {
		var a0, a1, a2, a3, b0, b1, b2, b3 float64
		for range n {
			h0, l0 := bits.Mul64(s0.next(), n)
			h1, l1 := bits.Mul64(s1.next(), n)
			h2, l2 := bits.Mul64(s2.next(), n)
			h3, l3 := bits.Mul64(s3.next(), n)
			if l0 < n || l1 < n || l2 < n || l3 < n {
				return false
			}
			a0 += x[h0]
			b0 += y[h0]
			a1 += x[h1]
			b1 += y[h1]
			a2 += x[h2]
			b2 += y[h2]
			a3 += x[h3]
			b3 += y[h3]
		}
		ox[r], ox[q+r], ox[2*q+r], ox[3*q+r] = a0/fn, a1/fn, a2/fn, a3/fn
		oy[r], oy[q+r], oy[2*q+r], oy[3*q+r] = b0/fn, b1/fn, b2/fn, b3/fn
	}
	ps[0], ps[1], ps[2], ps[3] = s0, s1, s2, s3
	return true
}

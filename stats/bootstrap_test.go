package stats

import (
	"fmt"
	"math"
	"math/bits"
	"math/rand/v2"
	"slices"
	"testing"
)

// The fast bootstrap must give the reference loop's means bit for bit.
func TestBootstrapMeansExact(t *testing.T) {
	src := rand.New(rand.NewPCG(3, 4))
	sample := func(n int, kind string) []float64 {
		x := make([]float64, n)
		for i := range x {
			switch kind {
			case "uniform":
				x[i] = src.Float64()
			case "binary":
				x[i] = float64(src.IntN(2))
			case "sorted-ties":
				x[i] = float64(i*7/n) / 7
			case "wide":
				x[i] = math.Ldexp(src.NormFloat64(), src.IntN(200)-100)
			}
		}
		return x
	}
	for _, n := range []int{1, 2, 3, 4, 5, 7, 8, 16, 63, 64, 100, 1000, 1024, 4099} {
		for _, kind := range []string{"uniform", "binary", "sorted-ties", "wide"} {
			x := sample(n, kind)
			for _, resamples := range []int{1, 3, 4, 5, 9, 200} {
				for _, seed := range []uint64{0, 1, 20240611} {
					want := bootstrapMeansRef(x, resamples, seed)
					for _, procs := range []int{1, 2, 3, 8} {
						got := make([]float64, resamples)
						if !fastMeans(x, got, seed, procs) {
							continue // the reference is used: nothing to compare
						}
						for r := range want {
							if math.Float64bits(got[r]) != math.Float64bits(want[r]) {
								t.Fatalf("n=%d %s resamples=%d seed=%d procs=%d: mean %d = %v, want %v", n, kind, resamples, seed, procs, r, got[r], want[r])
							}
						}
					}
					got := bootstrapMeans(x, resamples, seed)
					for r := range want {
						if math.Float64bits(got[r]) != math.Float64bits(want[r]) {
							t.Fatalf("bootstrapMeans n=%d %s resamples=%d seed=%d: mean %d = %v, want %v", n, kind, resamples, seed, r, got[r], want[r])
						}
					}
				}
			}
		}
	}
}

// Work large enough for several goroutines, as a 100k-item run has.
func TestBootstrapMeansExactParallel(t *testing.T) {
	if testing.Short() {
		t.Skip("large")
	}
	x := make([]float64, 30011)
	src := rand.New(rand.NewPCG(5, 6))
	for i := range x {
		x[i] = src.Float64()
	}
	const resamples, seed = 301, 99
	want := bootstrapMeansRef(x, resamples, seed)
	got := make([]float64, resamples)
	if !fastMeans(x, got, seed, 4) {
		t.Fatal("fast path refused")
	}
	for r := range want {
		if math.Float64bits(got[r]) != math.Float64bits(want[r]) {
			t.Fatalf("mean %d = %v, want %v", r, got[r], want[r])
		}
	}
}

// Constant samples take the shortcut; -0 and +0 are not the same value.
func TestBootstrapMeansConstant(t *testing.T) {
	for _, x := range [][]float64{
		{0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1},
		{1, 1, 1},
		{math.Copysign(0, -1), math.Copysign(0, -1)},
		{0, math.Copysign(0, -1), 0},
		{math.MaxFloat64, math.MaxFloat64, math.MaxFloat64},
		{math.Inf(1), math.Inf(1)},
	} {
		want := bootstrapMeansRef(x, 50, 7)
		got := bootstrapMeans(x, 50, 7)
		for r := range want {
			if math.Float64bits(got[r]) != math.Float64bits(want[r]) {
				t.Fatalf("%v: mean %d = %v, want %v", x, r, got[r], want[r])
			}
		}
		lo1, hi1 := BootstrapMeanCI(x, 50, 7, 0.95)
		lo2, hi2 := refCI(x, 50, 7, 0.95)
		if !sameBits(lo1, lo2) || !sameBits(hi1, hi2) {
			t.Errorf("%v: CI [%v, %v], reference [%v, %v]", x, lo1, hi1, lo2, hi2)
		}
	}
}

func sameBits(a, b float64) bool {
	return math.Float64bits(a) == math.Float64bits(b) || (math.IsNaN(a) && math.IsNaN(b))
}

func refCI(x []float64, resamples int, seed uint64, level float64) (lo, hi float64) {
	means := bootstrapMeansRef(x, resamples, seed)
	sortFloats(means)
	alpha := (1 - level) / 2
	return percentileLinear(means, alpha*100), percentileLinear(means, (1-alpha)*100)
}

func sortFloats(x []float64) {
	for i := 1; i < len(x); i++ {
		for j := i; j > 0 && x[j] < x[j-1]; j-- {
			x[j], x[j-1] = x[j-1], x[j]
		}
	}
}

// The inlined generator is math/rand/v2's PCG, and a jump of k equals k
// steps.
func TestPCGJump(t *testing.T) {
	for _, seed := range []uint64{0, 1, 42, math.MaxUint64} {
		ref := rand.NewPCG(seed, seed)
		p := pcg{seed, seed}
		start := p
		for k := uint64(1); k <= 3000; k++ {
			if got, want := p.next(), ref.Uint64(); got != want {
				t.Fatalf("seed %d step %d: %#x, want %#x", seed, k, got, want)
			}
			if k%97 == 0 || k < 5 {
				if j := start.jumped(k); j != p {
					t.Fatalf("seed %d: jump %d = %v, stepping gives %v", seed, k, j, p)
				}
			}
		}
	}
}

// A draw IntN would repeat (here: an output of 0, whose product's low half
// is 0 < n) makes the fast path give up, so the reference decides.
func TestFastMeansGivesUp(t *testing.T) {
	// The state whose next step has hi = 0 outputs 0: s = (s' − c)·a⁻¹.
	inv := u128{0, 1}
	a := u128{pcgMulHi, pcgMulLo}
	for range 7 { // Newton: inv = inv·(2 − a·inv), doubling correct bits
		inv = inv.mul(u128{0, 2}.sub(a.mul(inv)))
	}
	if a.mul(inv) != (u128{0, 1}) {
		t.Fatal("no inverse")
	}
	target := u128{0, 12345}
	s := target.sub(u128{pcgIncHi, pcgIncLo}).mul(inv)
	p := pcg{s.hi, s.lo}
	q := p
	if v := q.next(); v != 0 {
		t.Fatalf("crafted state outputs %#x, want 0", v)
	}
	x := []float64{1, 2, 3}
	if means1(x, make([]float64, 1), &p) {
		t.Error("means1 went on past a draw IntN would repeat")
	}
}

func (a u128) sub(b u128) u128 {
	lo, c := bits.Sub64(a.lo, b.lo, 0)
	hi, _ := bits.Sub64(a.hi, b.hi, c)
	return u128{hi, lo}
}

// BenchmarkBootstrapMeanCI is the aggregate stage's and the report's
// interval at the sizes a large run has (2000 resamples, capped at 2e8
// draws), over sorted values (aggregate.CI sorts them): distinct values,
// and a metric that takes 1000 values.
//
//	go test -run '^$' -bench BootstrapMeanCI ./stats
func BenchmarkBootstrapMeanCI(b *testing.B) {
	for _, n := range []int{1000, 100_000, 1_000_000} {
		for _, distinct := range []int{0, 1000} {
			x := make([]float64, n)
			src := rand.New(rand.NewPCG(1, 2))
			for i := range x {
				if distinct > 0 {
					x[i] = float64(src.IntN(distinct)) / float64(distinct)
				} else {
					x[i] = src.Float64()
				}
			}
			slices.Sort(x)
			resamples := min(2000, 200_000_000/n)
			name := fmt.Sprintf("n=%d/values=%d", n, distinct)
			if distinct == 0 {
				name = fmt.Sprintf("n=%d/values=all", n)
			}
			b.Run(name+"/fast", func(b *testing.B) {
				for b.Loop() {
					BootstrapMeanCI(x, resamples, 1, 0.95)
				}
			})
			b.Run(name+"/reference", func(b *testing.B) {
				for b.Loop() {
					refCI(x, resamples, 1, 0.95)
				}
			})
		}
	}
}

// runSamples are large sorted samples with runs of equal values: what a
// metric's values look like at a million items, sorted by aggregate.CI.
func runSamples() map[string][]float64 {
	src := rand.New(rand.NewPCG(7, 8))
	out := map[string][]float64{}
	for _, n := range []int{70001, 1 << 17} {
		few := make([]float64, n)
		for i := range few {
			few[i] = float64(src.IntN(50)) / 49
		}
		sortFloatsFast(few)
		out[fmt.Sprintf("n=%d 50 values", n)] = few
		// Uneven: one run of half the sample, then runs of 1 to 40.
		uneven := make([]float64, n)
		v, left := 0.0, 0
		for i := range uneven {
			if i >= n/2 && left == 0 {
				v, left = v+1, 1+src.IntN(40)
			}
			if i >= n/2 {
				left--
			}
			uneven[i] = v
		}
		out[fmt.Sprintf("n=%d uneven", n)] = uneven
		// Signed zeros are different values.
		zeros := make([]float64, n)
		for i := range zeros {
			if i%1000 < 500 {
				zeros[i] = math.Copysign(0, -1)
			}
		}
		out[fmt.Sprintf("n=%d signed zeros", n)] = zeros
	}
	return out
}

func sortFloatsFast(x []float64) {
	slices.Sort(x)
}

// The run table reads every index as the sample does, and the means through
// it are the reference's.
func TestBootstrapRunTableExact(t *testing.T) {
	for name, x := range runSamples() {
		rt := newRunTable(x)
		if rt == nil {
			t.Fatalf("%s: no run table", name)
		}
		for i := range x {
			if got := rt.at(uint64(i)); math.Float64bits(got) != math.Float64bits(x[i]) {
				t.Fatalf("%s: at(%d) = %v, x[%d] = %v", name, i, got, i, x[i])
			}
		}
		const resamples, seed = 9, 3
		want := bootstrapMeansRef(x, resamples, seed)
		for _, procs := range []int{1, 2} {
			got := make([]float64, resamples)
			if !fastMeans(x, got, seed, procs) {
				t.Fatalf("%s: fast path refused", name)
			}
			for r := range want {
				if math.Float64bits(got[r]) != math.Float64bits(want[r]) {
					t.Fatalf("%s procs=%d: mean %d = %v, want %v", name, procs, r, got[r], want[r])
				}
			}
		}
	}
	// Short runs or a small sample: read directly.
	x := make([]float64, 1<<17)
	for i := range x {
		x[i] = float64(i)
	}
	if newRunTable(x) != nil || newRunTable(make([]float64, 1000)) != nil {
		t.Error("a run table for distinct values or a small sample")
	}
}

package stats

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// Two samples drawn together give each one's reference means bit for bit,
// on every path (four blocks, the rest one by one, several goroutines).
// (The fallback when a draw may need IntN's rejection step — the
// reference loop for both — is not reached at these sizes.)
func TestBootstrapMeansPairExact(t *testing.T) {
	src := rand.New(rand.NewPCG(5, 6))
	for _, n := range []int{3, 5, 7, 100, 1000, 4099} {
		x, y := make([]float64, n), make([]float64, n)
		for i := range x {
			x[i] = src.Float64()
			y[i] = math.Ldexp(src.NormFloat64(), src.IntN(60)-30)
		}
		for _, resamples := range []int{1, 3, 4, 5, 9, 203} {
			for _, seed := range []uint64{0, 1, 20240611} {
				wx, wy := bootstrapMeansRef(x, resamples, seed), bootstrapMeansRef(y, resamples, seed)
				for _, procs := range []int{1, 2, 3} {
					gx, gy := make([]float64, resamples), make([]float64, resamples)
					if !fastMeansPair(x, y, gx, gy, seed, procs) {
						continue
					}
					sameMeans(t, gx, wx, "x", n, resamples, seed)
					sameMeans(t, gy, wy, "y", n, resamples, seed)
				}
				gx, gy := bootstrapMeansPair(x, y, resamples, seed)
				sameMeans(t, gx, wx, "pair x", n, resamples, seed)
				sameMeans(t, gy, wy, "pair y", n, resamples, seed)
			}
		}
	}
}

func sameMeans(t *testing.T, got, want []float64, what string, n, resamples int, seed uint64) {
	t.Helper()
	for r := range want {
		if math.Float64bits(got[r]) != math.Float64bits(want[r]) {
			t.Fatalf("%s n=%d resamples=%d seed=%d: mean %d = %v, want %v", what, n, resamples, seed, r, got[r], want[r])
		}
	}
}

// BootstrapMeanCIs is BootstrapMeanCI for each sample, whatever their
// lengths, kinds (constant, a power of two, one alone of its length) and
// order.
func TestBootstrapMeanCIs(t *testing.T) {
	src := rand.New(rand.NewPCG(7, 8))
	sample := func(n int) []float64 {
		x := make([]float64, n)
		for i := range x {
			x[i] = float64(src.IntN(5)) / 4
		}
		slices.Sort(x)
		return x
	}
	constant := []float64{0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5}
	xs := [][]float64{sample(300), sample(7), sample(300), constant, sample(64), sample(64), sample(7), sample(300), nil, sample(1)}
	for _, seed := range []uint64{1, 99} {
		lo, hi := BootstrapMeanCIs(xs, 500, seed, 0.95)
		for i, x := range xs {
			wl, wh := BootstrapMeanCI(x, 500, seed, 0.95)
			if !sameBits(lo[i], wl) || !sameBits(hi[i], wh) {
				t.Errorf("seed %d sample %d (n=%d): [%v, %v], want [%v, %v]", seed, i, len(x), lo[i], hi[i], wl, wh)
			}
		}
	}
}

// A scoring run's two intervals that are not 0/1 (8,000 items, 2,000
// resamples): one after the other against drawn together.
func BenchmarkBootstrapPair(b *testing.B) {
	src := rand.New(rand.NewPCG(9, 10))
	x, y := make([]float64, 8000), make([]float64, 8000)
	for i := range x {
		x[i], y[i] = src.Float64(), float64(src.IntN(2))
	}
	slices.Sort(x)
	slices.Sort(y)
	b.Run("separate", func(b *testing.B) {
		for b.Loop() {
			BootstrapMeanCI(x, 2000, 1, 0.95)
			BootstrapMeanCI(y, 2000, 1, 0.95)
		}
	})
	b.Run("together", func(b *testing.B) {
		for b.Loop() {
			BootstrapMeanCIs([][]float64{x, y}, 2000, 1, 0.95)
		}
	})
}

package generate

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

func TestPredStoreRoundTrip(t *testing.T) {
	s := newPredStore()
	want := map[string][][]string{
		"a":  {{"SELECT 1"}},
		"b":  {{"SELECT 2", "SELECT 3"}, {"", "x"}},
		"":   {{}},
		"é☃": {{"SELECT 'ünï'"}},
	}
	for i, id := range []string{"a", "b", "", "é☃"} {
		s.add(id, want[id], i+1)
	}
	if err := s.seal(); err != nil {
		t.Fatal(err)
	}
	for id, w := range want {
		i := s.lookup(id)
		if i < 0 {
			t.Fatalf("%q not found", id)
		}
		got := s.samples(i)
		if len(got) != len(w) {
			t.Fatalf("%q: %v, want %v", id, got, w)
		}
		for j := range w {
			if !slices.Equal(got[j], w[j]) {
				t.Errorf("%q sample %d: %v, want %v", id, j, got[j], w[j])
			}
		}
	}
	if s.lookup("c") >= 0 {
		t.Error("an absent id was found")
	}
	s.markUsed(s.lookup("b"))
	if u := s.unused(); len(u) != 3 || slices.Contains(u, "b") {
		t.Errorf("unused = %q", u)
	}
}

// TestPredStoreCollision gives every id the same hash: lookups must still
// find each id's own predictions, before and after seal, and duplicates
// are still refused.
func TestPredStoreCollision(t *testing.T) {
	s := newPredStore()
	s.hash = func(string) uint64 { return 42 }
	for i := range 50 {
		id := fmt.Sprintf("id%d", i)
		s.add(id, [][]string{{"q" + id}}, i+1)
	}
	if err := s.seal(); err != nil {
		t.Fatal(err)
	}
	for _, when := range []string{"sealed"} {
		for i := range 50 {
			id := fmt.Sprintf("id%d", i)
			j := s.lookup(id)
			if j < 0 || s.samples(j)[0][0] != "q"+id {
				t.Fatalf("%s: %s: entry %d", when, id, j)
			}
		}
		if s.lookup("id50") >= 0 {
			t.Errorf("%s: an absent id was found", when)
		}
	}
}

func TestPredStoreSealedLookup(t *testing.T) {
	s := newPredStore()
	for i := range 1000 {
		s.add(fmt.Sprintf("id%d", i), [][]string{{fmt.Sprint(i)}}, i+1)
	}
	if err := s.seal(); err != nil {
		t.Fatal(err)
	}
	for i := range 1000 {
		j := s.lookup(fmt.Sprintf("id%d", i))
		if j < 0 || s.samples(j)[0][0] != fmt.Sprint(i) {
			t.Fatalf("id%d: %d", i, j)
		}
	}
	if s.lookup("id1000") >= 0 {
		t.Error("absent id found")
	}
}

func TestPredStoreDuplicate(t *testing.T) {
	for _, collide := range []bool{false, true} {
		s := newPredStore()
		if collide {
			s.hash = func(string) uint64 { return 7 }
		}
		s.add("a", nil, 1)
		s.add("b", nil, 2)
		s.add("a", nil, 5)
		err := s.seal()
		if err == nil || err.Error() != `duplicate prediction for id "a" at line 5 (first at line 1)` {
			t.Errorf("collide=%v: %v", collide, err)
		}
	}
}

// TestPredStoreSearch holds the interpolation search to a binary search on
// uniform, clustered and repeated hashes, for present and absent ones.
func TestPredStoreSearch(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	gens := map[string]func() uint64{
		"uniform":   r.Uint64,
		"small":     func() uint64 { return r.Uint64N(50) },
		"clustered": func() uint64 { return r.Uint64N(4)<<62 | r.Uint64N(1000) },
		"skewed":    func() uint64 { x := r.Uint64N(1 << 20); return x * x * x },
	}
	for name, gen := range gens {
		for _, n := range []int{0, 1, 2, 33, 100, 5000} {
			s := &predStore{}
			for i := range n {
				s.index = append(s.index, hashEntry{gen(), uint32(i)})
			}
			slices.SortFunc(s.index, func(a, b hashEntry) int { return cmp.Compare(a.h, b.h) })
			probes := []uint64{0, 1, ^uint64(0)}
			for range 300 {
				probes = append(probes, gen())
			}
			for _, e := range s.index {
				probes = append(probes, e.h, e.h+1, e.h-1)
			}
			for _, h := range probes {
				want, _ := slices.BinarySearchFunc(s.index, h, func(e hashEntry, h uint64) int { return cmp.Compare(e.h, h) })
				if got := s.search(h); got != want {
					t.Fatalf("%s n=%d: search(%d) = %d, want %d", name, n, h, got, want)
				}
			}
		}
	}
}

package generate

import (
	"fmt"
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
	for _, id := range []string{"a", "b", "", "é☃"} {
		if !s.add(id, want[id]) {
			t.Fatalf("add %q refused", id)
		}
	}
	if s.add("a", nil) {
		t.Error("a duplicate id was accepted")
	}
	s.seal()
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
		if !s.add(id, [][]string{{"q" + id}}) {
			t.Fatalf("%s refused", id)
		}
	}
	if s.add("id7", nil) {
		t.Error("a duplicate under a shared hash was accepted")
	}
	for _, when := range []string{"building", "sealed"} {
		if when == "sealed" {
			s.seal()
		}
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
		s.add(fmt.Sprintf("id%d", i), [][]string{{fmt.Sprint(i)}})
	}
	s.seal()
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

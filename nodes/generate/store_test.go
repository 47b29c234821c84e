package generate

import (
	"fmt"
	"hash/maphash"
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

// TestPredStoreCollision forces every id onto one hash bucket: lookups
// must still find each id's own predictions (the overflow map).
func TestPredStoreCollision(t *testing.T) {
	s := newPredStore()
	// A store whose index already holds every hash the next ids will
	// have, pointing at another entry, is what a collision looks like.
	for i := range 50 {
		id := fmt.Sprintf("id%d", i)
		if !s.add(id, [][]string{{"q" + id}}) {
			t.Fatal("refused")
		}
	}
	s2 := newPredStore()
	s2.seed = s.seed
	s2.add("first", [][]string{{"q-first"}})
	for i := range 50 {
		s2.index[maphash.String(s2.seed, fmt.Sprintf("id%d", i))] = 0 // every id collides with "first"
	}
	for i := range 50 {
		id := fmt.Sprintf("id%d", i)
		s2.add(id, [][]string{{"q" + id}})
	}
	for i := range 50 {
		id := fmt.Sprintf("id%d", i)
		j := s2.lookup(id)
		if j < 0 || s2.samples(j)[0][0] != "q"+id {
			t.Fatalf("%s: entry %d", id, j)
		}
	}
	if j := s2.lookup("first"); j != 0 || s2.samples(0)[0][0] != "q-first" {
		t.Errorf("first: %d", j)
	}
}

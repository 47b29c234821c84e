package generate

import (
	"cmp"
	"encoding/binary"
	"fmt"
	"hash/maphash"
	"slices"
	"sync"
)

// predStore holds a replay file's predictions compactly: every entry (id,
// then samples of attempts) encoded into one byte arena, found through a
// sorted index of 64-bit id hashes. A map[string][][]string costs about
// 200 bytes per prediction in headers and map overhead; this costs the
// bytes themselves plus about 20, so a million-prediction file fits the
// run's memory budget. A hash collision cannot mis-assign a prediction:
// lookups compare the stored id of every entry with the same hash.
//
// Entries are added while the file is read, then seal sorts the index and
// finds duplicate ids (adjacent equal hashes with equal ids); lookups come
// after seal.
type predStore struct {
	hash    func(string) uint64 // maphash with a per-store seed; tests force collisions
	arena   []byte
	offsets []uint32    // entry i starts at arena[offsets[i]] (uint64 if the arena outgrows 4 GiB: see add)
	big     []uint64    // offsets when the arena is larger than 4 GiB
	index   []hashEntry // sorted by hash after seal
	lines   []uint32    // file line of each entry, until seal
	sealed  bool

	mu   sync.Mutex
	used []uint64 // bitset over entries some item asked for
}

type hashEntry struct {
	h uint64
	i uint32
}

func newPredStore() *predStore {
	seed := maphash.MakeSeed()
	return &predStore{hash: func(id string) uint64 { return maphash.String(seed, id) }}
}

// seal sorts the index and reports the first duplicate id as
// "duplicate prediction for id X at line N (first at line M)".
func (s *predStore) seal() error {
	// Entries were appended in i order, so sorting by (h, i) is the stable
	// sort by h, without the stable sort's cost.
	slices.SortFunc(s.index, func(a, b hashEntry) int {
		if c := cmp.Compare(a.h, b.h); c != 0 {
			return c
		}
		return cmp.Compare(a.i, b.i)
	})
	var dup error
	for k := 0; k < len(s.index) && dup == nil; k++ {
		for m := k + 1; m < len(s.index) && s.index[m].h == s.index[k].h; m++ {
			a, b := int(s.index[k].i), int(s.index[m].i)
			if s.id(a) == s.id(b) {
				first, second := min(a, b), max(a, b)
				dup = &dupError{id: s.id(a), line: int(s.lines[second]), first: int(s.lines[first])}
				break
			}
		}
	}
	s.lines, s.sealed = nil, true
	return dup
}

type dupError struct {
	id          string
	line, first int
}

func (e *dupError) Error() string {
	return fmt.Sprintf("duplicate prediction for id %q at line %d (first at line %d)", e.id, e.line, e.first)
}

func (s *predStore) Len() int { return len(s.offsets) + len(s.big) }

func (s *predStore) offset(i int) int {
	if s.big != nil {
		return int(s.big[i])
	}
	return int(s.offsets[i])
}

// lookup returns the entry index of id, or -1.
func (s *predStore) lookup(id string) int {
	h := s.hash(id)
	k := s.search(h)
	for ; k < len(s.index) && s.index[k].h == h; k++ {
		if i := int(s.index[k].i); s.id(i) == id {
			return i
		}
	}
	return -1
}

// search returns the first position of the index whose hash is at least
// h (len(index) when none is). The hashes of a real store are uniform, so
// a few interpolation steps narrow the range to a handful of entries
// before the binary search — about three cache misses in a large index
// instead of twenty; any other distribution (tests force collisions)
// still ends in the binary search, on the range that holds the answer.
func (s *predStore) search(h uint64) int {
	lo, hi := 0, len(s.index) // the answer is in [lo, hi]
	for step := 0; step < 4 && hi-lo > 32; step++ {
		a, b := s.index[lo].h, s.index[hi-1].h
		if h <= a {
			return lo
		}
		if h > b {
			return hi
		}
		// a < h <= b, so b > a.
		p := lo + int(float64(h-a)/float64(b-a)*float64(hi-1-lo))
		p = min(max(p, lo), hi-1)
		if s.index[p].h < h {
			lo = p + 1
		} else {
			hi = p
		}
	}
	k, _ := slices.BinarySearchFunc(s.index[lo:hi], h, func(e hashEntry, h uint64) int { return cmp.Compare(e.h, h) })
	return lo + k
}

// add stores id's samples, read from line; duplicates are found by seal.
func (s *predStore) add(id string, samples [][]string, line int) {
	i := uint32(s.Len())
	off := len(s.arena)
	if s.big == nil && uint64(off) > uint64(^uint32(0)) {
		s.big = make([]uint64, len(s.offsets))
		for j, o := range s.offsets {
			s.big[j] = uint64(o)
		}
		s.offsets = nil
	}
	if s.big != nil {
		s.big = append(s.big, uint64(off))
	} else {
		s.offsets = append(s.offsets, uint32(off))
	}
	s.putString(id)
	s.arena = binary.AppendUvarint(s.arena, uint64(len(samples)))
	for _, atts := range samples {
		s.arena = binary.AppendUvarint(s.arena, uint64(len(atts)))
		for _, q := range atts {
			s.putString(q)
		}
	}
	s.index = append(s.index, hashEntry{s.hash(id), i})
	s.lines = append(s.lines, uint32(line))
}

func (s *predStore) putString(x string) {
	s.arena = binary.AppendUvarint(s.arena, uint64(len(x)))
	s.arena = append(s.arena, x...)
}

func (s *predStore) getString(p int) (string, int) {
	n, k := binary.Uvarint(s.arena[p:])
	p += k
	return string(s.arena[p : p+int(n)]), p + int(n)
}

func (s *predStore) id(i int) string {
	id, _ := s.getString(s.offset(i))
	return id
}

// samples decodes entry i's samples.
func (s *predStore) samples(i int) [][]string {
	_, p := s.getString(s.offset(i))
	ns, k := binary.Uvarint(s.arena[p:])
	p += k
	out := make([][]string, ns)
	for j := range out {
		na, k := binary.Uvarint(s.arena[p:])
		p += k
		atts := make([]string, na)
		for a := range atts {
			atts[a], p = s.getString(p)
		}
		out[j] = atts
	}
	return out
}

// markUsed records that an item asked for entry i.
func (s *predStore) markUsed(i int) {
	s.mu.Lock()
	for i/64 >= len(s.used) {
		s.used = append(s.used, 0)
	}
	s.used[i/64] |= 1 << (i % 64)
	s.mu.Unlock()
}

// unused returns the ids of entries no item asked for.
func (s *predStore) unused() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for i := range s.Len() {
		if i/64 < len(s.used) && s.used[i/64]&(1<<(i%64)) != 0 {
			continue
		}
		out = append(out, s.id(i))
	}
	return out
}

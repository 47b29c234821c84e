package generate

import (
	"cmp"
	"encoding/binary"
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
// Entries are added while the file is read (add checks duplicates through
// a map that seal drops) and looked up after seal.
type predStore struct {
	hash     func(string) uint64 // maphash with a per-store seed; tests force collisions
	arena    []byte
	offsets  []uint32           // entry i starts at arena[offsets[i]] (uint64 if the arena outgrows 4 GiB: see add)
	big      []uint64           // offsets when the arena is larger than 4 GiB
	building map[uint64][]int32 // while adding: hash → entries
	index    []hashEntry        // after seal: sorted by hash

	mu   sync.Mutex
	used []uint64 // bitset over entries some item asked for
}

type hashEntry struct {
	h uint64
	i uint32
}

func newPredStore() *predStore {
	seed := maphash.MakeSeed()
	return &predStore{hash: func(id string) uint64 { return maphash.String(seed, id) }, building: map[uint64][]int32{}}
}

// seal builds the sorted index and drops the build map.
func (s *predStore) seal() {
	s.index = make([]hashEntry, 0, s.Len())
	for h, is := range s.building {
		for _, i := range is {
			s.index = append(s.index, hashEntry{h, uint32(i)})
		}
	}
	slices.SortFunc(s.index, func(a, b hashEntry) int { return cmp.Compare(a.h, b.h) })
	s.building = nil
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
	if s.building != nil {
		for _, i := range s.building[h] {
			if s.id(int(i)) == id {
				return int(i)
			}
		}
		return -1
	}
	k, _ := slices.BinarySearchFunc(s.index, h, func(e hashEntry, h uint64) int { return cmp.Compare(e.h, h) })
	for ; k < len(s.index) && s.index[k].h == h; k++ {
		if i := int(s.index[k].i); s.id(i) == id {
			return i
		}
	}
	return -1
}

// add stores id's samples; it reports false when id is already there.
func (s *predStore) add(id string, samples [][]string) bool {
	if s.lookup(id) >= 0 {
		return false
	}
	i := int32(s.Len())
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
	h := s.hash(id)
	s.building[h] = append(s.building[h], i)
	return true
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

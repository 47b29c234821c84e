package generate

import (
	"encoding/binary"
	"hash/maphash"
	"sync"
)

// predStore holds a replay file's predictions compactly: every entry (id,
// then samples of attempts) encoded into one byte arena, found through a
// map from a 64-bit hash of the id to its offset. A map[string][][]string
// costs about 200 bytes per prediction in headers and map overhead; this
// costs the bytes themselves plus about 40, so a million-prediction file
// fits the run's memory budget. A hash collision cannot mis-assign a
// prediction: lookups compare the stored id, and colliding ids go to a
// small overflow map.
type predStore struct {
	seed     maphash.Seed
	arena    []byte
	offsets  []uint32 // entry i starts at arena[offsets[i]] (uint64 if the arena outgrows 4 GiB: see add)
	big      []uint64 // offsets when the arena is larger than 4 GiB
	index    map[uint64]int32
	overflow map[string]int32

	mu   sync.Mutex
	used []uint64 // bitset over entries some item asked for
}

func newPredStore() *predStore {
	return &predStore{seed: maphash.MakeSeed(), index: map[uint64]int32{}}
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
	h := maphash.String(s.seed, id)
	if i, ok := s.index[h]; ok && s.id(int(i)) == id {
		return int(i)
	}
	if i, ok := s.overflow[id]; ok {
		return int(i)
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
	h := maphash.String(s.seed, id)
	if _, taken := s.index[h]; taken {
		if s.overflow == nil {
			s.overflow = map[string]int32{}
		}
		s.overflow[id] = i
	} else {
		s.index[h] = i
	}
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

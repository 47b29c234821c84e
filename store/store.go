// Package store is evalflow's local content-addressed store: immutable
// values under keys that are hashes of everything that determines them
// (model responses, query results). It backs the LLM response cache
// (package cache) and the stage cache (nodes.Results).
//
// A store is a directory of append-only segment files (segment.go): each
// process appends the values it stores to a segment of its own, one record
// with a length and a CRC-32C per value, each value written with one
// write(2) (or, for a buffered store, batches of them: Buffer) and no
// fsync — the durability of a run directory's parts, which are renamed
// into place without fsync either: a written value survives the process
// being killed at any moment, not a power loss; a record torn by either is
// detected by its checksum or length and ignored, never served. Several evalflow
// processes share one store with no lock on the hot path: each writes only
// its own segment (holding an flock on it while it does) and reads
// everyone's. Two writers of one key write equivalent values (the key is a
// hash of the inputs); the newest record wins.
//
// Each Store keeps an in-memory index, key → record, built on first use by
// scanning the segments' record headers and brought up to date, at most
// once a second, when a lookup misses — so values another process stores
// are found within a second, and a miss costs no system call.
//
// The store is size-bounded: GC drops the least recently used values (a
// read of a value written more than an hour ago writes it again, which
// refreshes it) until the store's files are under the bound, deleting
// segments that hold no survivor and rewriting those that hold some.
//
// A store written by an older evalflow (one file per value, DIR/ab/abc…)
// is read too: such values are served, moved into a segment when read,
// counted by Stats, trimmed by GC and removed by Clear.
package store

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// touchEvery is how old a value's record may get before a read writes it
// again (the LRU clock of GC).
const touchEvery = time.Hour

// refreshEvery is how often, at most, a miss makes the index look for
// records other processes appended.
const refreshEvery = time.Second

// flushEvery is how long at most a stored value waits in memory before it
// is written (and so found by other processes, and kept if this one is
// killed); flushBytes of waiting records are written at once. One write(2)
// per batch instead of one per value.
const (
	flushEvery = 50 * time.Millisecond
	flushBytes = 64 << 10
)

// Store is one directory of values. Safe for concurrent use, also across
// processes. Close releases its files. By default every Put is in the file
// when it returns, so a Store that is never closed loses nothing; a
// buffered Store (Buffer) writes its values in batches and loses at most
// those of its last flushEvery.
type Store struct {
	dir                string
	hits, misses, puts atomic.Int64
	written            atomic.Int64 // bytes written by this process

	refreshMu sync.Mutex // one refresh at a time; held across the scan's I/O

	mu          sync.RWMutex // guards idx, segs, loaded, lastRefresh, segment.scanned
	idx         map[string]loc
	segs        map[string]*segment
	loaded      bool // the directory has been scanned once
	lastRefresh time.Time

	wmu  sync.Mutex // guards w, wseg, woff, pend, flushed, timer; taken before mu
	w    *os.File   // this process's segment, flocked; nil until the first write
	wseg *segment
	woff int64 // the segment's end, pend included
	// pend holds the records appended since the last flush: they belong
	// at offset flushed of the segment, and are served from here until
	// then. timer flushes them flushEvery after the first one.
	pend     []byte
	flushed  int64
	timer    *time.Timer
	buffered bool

	gcMu sync.Mutex // one GC, Clear at a time
}

// loc is where the index found a key's newest record.
type loc struct {
	seg    *segment // nil: a file of the old layout (DIR/ab/KEY)
	off    int64
	valLen uint32
	ts     int64
	del    bool // the newest record removes the key
}

// Open opens (creating) the store in dir. It reads nothing yet.
func Open(dir string) (*Store, error) {
	if dir == "" {
		return nil, errors.New("store: no directory")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("store: %w", err)
	}
	return &Store{dir: dir, idx: map[string]loc{}, segs: map[string]*segment{}}, nil
}

// Dir is the store's directory.
func (s *Store) Dir() string { return s.dir }

// Buffer makes s write the values it stores in batches: a Put returns
// once the value is in memory (served by s at once), and the values are
// written with one write(2) per flushBytes of them, flushEvery after the
// first of a batch at the latest, and by Flush, Close, GC and Clear. Other
// processes find a value once it is written; a process killed before then
// loses it (a cache only recomputes it). Fit for a cache whose entries
// are cheap to recompute and many (the stage cache), not for one whose
// entries cost money (model responses). Removals are always written at
// once.
func (s *Store) Buffer() {
	s.wmu.Lock()
	s.buffered = true
	s.wmu.Unlock()
}

// Flush writes the values stored so far that are still waiting to be
// written (see Buffer).
func (s *Store) Flush() error {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	return s.flush()
}

// flush writes pend. A failed write ends this segment (readers stop at a
// torn record, so it takes no more) and forgets the records it held.
// Called with wmu held.
func (s *Store) flush() error {
	if s.timer != nil {
		s.timer.Stop()
		s.timer = nil
	}
	if len(s.pend) == 0 || s.w == nil {
		return nil
	}
	n, err := s.w.Write(s.pend)
	if err != nil {
		g, from := s.wseg, s.flushed+int64(n)
		s.pend = s.pend[:0]
		s.closeWriter()
		s.mu.Lock()
		for k, l := range s.idx {
			if l.seg == g && l.off >= from {
				delete(s.idx, k)
			}
		}
		s.mu.Unlock()
		return fmt.Errorf("store: %w", err)
	}
	s.flushed += int64(n)
	if cap(s.pend) > 4*flushBytes {
		s.pend = nil // after a huge value
	} else {
		s.pend = s.pend[:0]
	}
	return nil
}

// pending returns the value of l's record if it is still waiting in pend;
// in is false when the record is in the file.
func (s *Store) pending(key string, l loc) (v []byte, in bool) {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if l.seg == nil || l.seg != s.wseg || l.off < s.flushed {
		return nil, false
	}
	b := s.pend[l.off-s.flushed:]
	if int64(len(b)) < recordSize(len(key), int(l.valLen)) {
		return nil, true
	}
	b = b[:recordSize(len(key), int(l.valLen))]
	if string(b[hdrSize:hdrSize+len(key)]) != key {
		return nil, true
	}
	return append([]byte(nil), b[hdrSize+len(key):]...), true
}

// Close writes what is waiting, closes this process's segment and every
// file the store holds open. The Store stays usable: a later Put starts a
// new segment.
func (s *Store) Close() error {
	s.wmu.Lock()
	err := s.closeWriter()
	s.wmu.Unlock()
	s.mu.RLock()
	for _, g := range s.segs {
		g.close()
	}
	s.mu.RUnlock()
	return err
}

func validKey(key string) bool {
	if len(key) < 8 || len(key) > 128 {
		return false
	}
	for i := 0; i < len(key); i++ {
		if c := key[i]; !(c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

// legacyPath is where the old layout kept key's value.
func (s *Store) legacyPath(key string) string { return filepath.Join(s.dir, key[:2], key) }

// Get returns the value stored under key. A record that fails its checksum
// is a miss.
func (s *Store) Get(key string) ([]byte, bool) {
	if !validKey(key) {
		s.misses.Add(1)
		return nil, false
	}
	s.ensureLoaded()
	for try := 0; ; try++ {
		s.mu.RLock()
		l, ok := s.idx[key]
		s.mu.RUnlock()
		if ok && !l.del {
			if v, ok := s.read(key, l); ok {
				s.hits.Add(1)
				return v, true
			}
		}
		if try > 0 || !s.refresh(false) {
			s.misses.Add(1)
			return nil, false
		}
	}
}

// read returns l's value, refreshing an old record; a record that cannot
// be read leaves the index.
func (s *Store) read(key string, l loc) ([]byte, bool) {
	if l.seg == nil {
		b, err := os.ReadFile(s.legacyPath(key))
		if err != nil {
			s.forget(key, l)
			return nil, false
		}
		// Move it into this process's segment (written before the old
		// file goes).
		if s.append(kindPut, key, b, time.Now().UnixNano()) == nil && s.Flush() == nil {
			os.Remove(s.legacyPath(key))
		}
		return b, true
	}
	v, in := s.pending(key, l)
	var err error
	if !in {
		var f *os.File
		if f, err = l.seg.file(s.dir); err == nil {
			v, err = readRecord(f, l.off, key, l.valLen)
		}
	} else if v == nil {
		err = errGone
	}
	if err != nil {
		s.forget(key, l)
		return nil, false
	}
	if now := time.Now().UnixNano(); now-l.ts > int64(touchEvery) {
		s.append(kindPut, key, v, now)
	}
	return v, true
}

// forget drops key from the index if it still points at l.
func (s *Store) forget(key string, l loc) {
	s.mu.Lock()
	if cur, ok := s.idx[key]; ok && cur.seg == l.seg && cur.off == l.off {
		delete(s.idx, key)
	}
	s.mu.Unlock()
}

// Remove deletes key's value (a reader found it corrupt): a removal record
// hides every older record of the key, in this process and others.
func (s *Store) Remove(key string) {
	if !validKey(key) {
		return
	}
	s.ensureLoaded()
	s.mu.RLock()
	l, ok := s.idx[key]
	s.mu.RUnlock()
	if ok && l.seg == nil {
		os.Remove(s.legacyPath(key))
		s.forget(key, l)
		return
	}
	// A removal is written at once: other processes must stop serving
	// the value.
	s.append(kindDel, key, nil, time.Now().UnixNano())
	s.Flush()
}

// Put stores value under key, replacing any value there: written when
// Put returns, or within flushEvery for a buffered Store (Buffer).
func (s *Store) Put(key string, value []byte) error {
	if !validKey(key) {
		return fmt.Errorf("store: invalid key %q", key)
	}
	if err := s.append(kindPut, key, value, time.Now().UnixNano()); err != nil {
		return err
	}
	s.puts.Add(1)
	s.written.Add(int64(len(value)))
	return nil
}

// append adds one record to this process's segment (to pend, written by
// flush) and indexes it.
func (s *Store) append(kind uint8, key string, value []byte, ts int64) error {
	size := recordSize(len(key), len(value))
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if s.w != nil && s.woff > int64(len(segMagic)) && s.woff+size > segmentBytes {
		s.closeWriter()
	}
	if s.w == nil {
		if err := s.openWriter(); err != nil {
			return err
		}
	}
	off := s.woff
	s.pend = appendRecord(s.pend, kind, key, value, ts)
	s.woff += size
	s.mu.Lock()
	if cur, ok := s.idx[key]; !ok || ts >= cur.ts {
		s.idx[key] = loc{seg: s.wseg, off: off, valLen: uint32(len(value)), ts: ts, del: kind == kindDel}
	}
	s.wseg.scanned = max(s.wseg.scanned, s.woff)
	s.mu.Unlock()
	if !s.buffered || len(s.pend) >= flushBytes {
		return s.flush()
	}
	if s.timer == nil {
		s.timer = time.AfterFunc(flushEvery, func() { s.Flush() })
	}
	return nil
}

// openWriter starts this process's next segment: written and locked
// under a temporary name, then renamed, so no segment is ever seen without
// its magic or unlocked while its writer lives. Called with wmu held.
func (s *Store) openWriter() error {
	name := newSegmentName(time.Now().UnixNano())
	p := filepath.Join(s.dir, name)
	f, err := os.OpenFile(p+".tmp", os.O_WRONLY|os.O_CREATE|os.O_EXCL|os.O_APPEND, 0o644)
	if errors.Is(err, fs.ErrNotExist) {
		// The directory went (removed from a shell): make it again.
		if err = os.MkdirAll(s.dir, 0o755); err == nil {
			f, err = os.OpenFile(p+".tmp", os.O_WRONLY|os.O_CREATE|os.O_EXCL|os.O_APPEND, 0o644)
		}
	}
	if err != nil {
		return fmt.Errorf("store: %w", err)
	}
	if !tryLock(f) {
		f.Close()
		os.Remove(p + ".tmp")
		return fmt.Errorf("store: cannot lock new segment %s", name)
	}
	if _, err := f.Write([]byte(segMagic)); err != nil {
		f.Close()
		os.Remove(p + ".tmp")
		return fmt.Errorf("store: %w", err)
	}
	if err := os.Rename(p+".tmp", p); err != nil {
		f.Close()
		os.Remove(p + ".tmp")
		return fmt.Errorf("store: %w", err)
	}
	g := &segment{name: name, scanned: int64(len(segMagic))}
	s.w, s.wseg, s.woff, s.flushed = f, g, int64(len(segMagic)), int64(len(segMagic))
	s.mu.Lock()
	s.segs[name] = g
	s.mu.Unlock()
	return nil
}

// closeWriter closes this process's segment (which releases its lock).
// Called with wmu held.
func (s *Store) closeWriter() error {
	if s.w == nil {
		return nil
	}
	ferr := s.flush()
	if s.w == nil {
		return ferr // the flush failed and closed it
	}
	err := s.w.Close()
	s.w, s.wseg, s.woff, s.flushed = nil, nil, 0, 0
	return err
}

// ensureLoaded scans the directory once.
func (s *Store) ensureLoaded() {
	s.mu.RLock()
	loaded := s.loaded
	s.mu.RUnlock()
	if !loaded {
		s.refresh(true)
	}
}

// refresh brings the index up to date with the directory: new segments,
// records appended to others' segments, segments removed. Unless force, it
// does so at most once every refreshEvery and not while another refresh
// runs; it reports whether it looked.
func (s *Store) refresh(force bool) bool {
	if force {
		s.refreshMu.Lock()
	} else if !s.refreshMu.TryLock() {
		return false
	}
	defer s.refreshMu.Unlock()
	s.mu.RLock()
	first, due := !s.loaded, time.Since(s.lastRefresh) >= refreshEvery
	s.mu.RUnlock()
	if !force && !first && !due {
		return false
	}
	entries, err := os.ReadDir(s.dir)
	if err != nil {
		return false
	}
	type found struct {
		g    *segment
		recs []scanned
		end  int64
	}
	var scans []found
	present := map[string]bool{}
	var legacy []string
	for _, e := range entries {
		name := e.Name()
		if first && e.IsDir() && len(name) == 2 {
			legacy = append(legacy, legacyKeys(filepath.Join(s.dir, name))...)
			continue
		}
		if !isSegmentName(name) {
			continue
		}
		present[name] = true
		info, err := e.Info()
		if err != nil {
			continue
		}
		s.mu.Lock()
		g := s.segs[name]
		if g == nil {
			g = &segment{name: name}
			s.segs[name] = g
		}
		from := g.scanned
		s.mu.Unlock()
		if from == 0 {
			from = int64(len(segMagic))
		}
		if info.Size() <= from {
			continue
		}
		f, err := g.file(s.dir)
		if err != nil {
			continue
		}
		fd := found{g: g}
		fd.end = scanSegment(f, from, info.Size(), func(r scanned) { fd.recs = append(fd.recs, r) })
		scans = append(scans, fd)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, k := range legacy {
		if _, ok := s.idx[k]; !ok {
			s.idx[k] = loc{}
		}
	}
	// Oldest segments first, so that of two records with one time the
	// later segment's wins, as in GC.
	sort.Slice(scans, func(i, j int) bool { return scans[i].g.name < scans[j].g.name })
	for _, fd := range scans {
		for _, r := range fd.recs {
			if cur, ok := s.idx[r.key]; !ok || r.hdr.ts >= cur.ts {
				s.idx[r.key] = loc{seg: fd.g, off: r.off, valLen: r.hdr.valLen, ts: r.hdr.ts, del: r.hdr.kind == kindDel}
			}
		}
		fd.g.scanned = max(fd.g.scanned, fd.end)
	}
	var gone map[*segment]bool
	for name, g := range s.segs {
		if !present[name] && (s.wseg == nil || g != s.wseg) {
			if gone == nil {
				gone = map[*segment]bool{}
			}
			gone[g] = true
			g.close()
			delete(s.segs, name)
		}
	}
	if gone != nil {
		for k, l := range s.idx {
			if l.seg != nil && gone[l.seg] {
				delete(s.idx, k)
			}
		}
	}
	s.loaded, s.lastRefresh = true, time.Now()
	return true
}

// legacyKeys lists the values of the old layout in one fan-out directory.
func legacyKeys(dir string) []string {
	entries, _ := os.ReadDir(dir)
	var out []string
	for _, e := range entries {
		if name := e.Name(); !e.IsDir() && validKey(name) && strings.HasPrefix(name, filepath.Base(dir)) {
			out = append(out, name)
		}
	}
	return out
}

// reset forgets the index (after GC or Clear rewrote the directory).
func (s *Store) reset() {
	s.mu.Lock()
	for name, g := range s.segs {
		if s.wseg == nil || g != s.wseg {
			g.close()
			delete(s.segs, name)
		}
	}
	s.idx = map[string]loc{}
	if s.wseg != nil {
		s.wseg.scanned = 0 // scanned again, with the others
	}
	s.loaded = false
	s.mu.Unlock()
}

// Info is one stored value's key, size and last use.
type Info struct {
	Key     string
	Size    int64
	ModTime time.Time
}

// Walk calls fn for every value, in no particular order, after writing
// what waits and bringing the index up to date.
func (s *Store) Walk(fn func(Info) error) error {
	s.Flush()
	s.refresh(true)
	s.mu.RLock()
	infos := make([]Info, 0, len(s.idx))
	var legacy []int
	for k, l := range s.idx {
		if l.del {
			continue
		}
		if l.seg == nil {
			legacy = append(legacy, len(infos))
		}
		infos = append(infos, Info{Key: k, Size: int64(l.valLen), ModTime: time.Unix(0, l.ts)})
	}
	s.mu.RUnlock()
	for _, i := range legacy {
		fi, err := os.Stat(s.legacyPath(infos[i].Key))
		if err != nil {
			infos[i].Key = "" // removed meanwhile
			continue
		}
		infos[i].Size, infos[i].ModTime = fi.Size(), fi.ModTime()
	}
	for _, i := range infos {
		if i.Key == "" {
			continue
		}
		if err := fn(i); err != nil {
			return err
		}
	}
	return nil
}

// Stats sums a store.
type Stats struct {
	Dir     string
	Entries int
	Bytes   int64 // the values' bytes
	Oldest  time.Time
	Newest  time.Time
	// The files: segments, and the bytes of every file of the store (with
	// record headers, records superseded and not yet compacted, and files
	// of the old layout).
	Segments  int
	DiskBytes int64
	// This process's reads and writes.
	Hits, Misses, Puts int64
}

// Stats walks the store.
func (s *Store) Stats() (Stats, error) {
	st := Stats{Dir: s.dir, Hits: s.hits.Load(), Misses: s.misses.Load(), Puts: s.puts.Load()}
	err := s.Walk(func(i Info) error {
		st.Entries++
		st.Bytes += i.Size
		if st.Oldest.IsZero() || i.ModTime.Before(st.Oldest) {
			st.Oldest = i.ModTime
		}
		if i.ModTime.After(st.Newest) {
			st.Newest = i.ModTime
		}
		return nil
	})
	files, _ := s.files()
	for _, f := range files {
		if f.legacy == "" {
			st.Segments++
		}
		st.DiskBytes += f.size
	}
	return st, err
}

// Written is how many bytes of values this process stored.
func (s *Store) Written() int64 { return s.written.Load() }

// Find returns the key equal to key or the one key starting with it (a
// prefix of at least 8 characters).
func (s *Store) Find(key string) (string, error) {
	s.refresh(true)
	s.mu.RLock()
	defer s.mu.RUnlock()
	if l, ok := s.idx[key]; ok && !l.del {
		return key, nil
	}
	if len(key) < 8 {
		return "", fmt.Errorf("no entry %q (give the full key or a prefix of at least 8 characters)", key)
	}
	var match []string
	for k, l := range s.idx {
		if !l.del && strings.HasPrefix(k, key) {
			match = append(match, k)
		}
	}
	switch len(match) {
	case 0:
		return "", fmt.Errorf("no entry %q", key)
	case 1:
		return match[0], nil
	}
	return "", fmt.Errorf("prefix %q matches %d entries; give more characters", key, len(match))
}

// Root is evalflow's cache directory: $EVALFLOW_CACHE_DIR when set, else
// the user cache directory's evalflow, else .evalflow-cache in the working
// directory. The LLM cache lives in ROOT/llm, the stage cache in
// ROOT/stages.
func Root() string {
	if d := os.Getenv("EVALFLOW_CACHE_DIR"); d != "" {
		return d
	}
	if d, err := os.UserCacheDir(); err == nil {
		return filepath.Join(d, "evalflow")
	}
	return ".evalflow-cache"
}

// DefaultMaxBytes bounds each store unless EVALFLOW_CACHE_MAX_BYTES says
// otherwise.
const DefaultMaxBytes = 2 << 30

// MaxBytes is the size bound: EVALFLOW_CACHE_MAX_BYTES (bytes, or with a
// K/M/G suffix) or DefaultMaxBytes.
func MaxBytes() int64 {
	v := strings.TrimSpace(os.Getenv("EVALFLOW_CACHE_MAX_BYTES"))
	if v == "" {
		return DefaultMaxBytes
	}
	mult := int64(1)
	switch strings.ToUpper(v[len(v)-1:]) {
	case "K":
		mult = 1 << 10
	case "M":
		mult = 1 << 20
	case "G":
		mult = 1 << 30
	}
	if mult > 1 {
		v = v[:len(v)-1]
	}
	var n int64
	if _, err := fmt.Sscan(v, &n); err != nil || n <= 0 {
		return DefaultMaxBytes
	}
	return n * mult
}

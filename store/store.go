// Package store is evalflow's local content-addressed store: immutable
// values under keys that are hashes of everything that determines them
// (model responses, query results). It backs the LLM response cache
// (package cache) and the stage cache (nodes.Results).
//
// A store is a directory of files, one per value, fanned out by the key's
// first two characters (DIR/ab/abcdef…). A value is written to a temporary
// file and renamed into place, so readers never see a partial value and
// several evalflow processes can share one store with no lock: two writers
// of one key write the same bytes and the last rename wins. (The LLM cache
// used a bbolt file before; bbolt holds an exclusive lock, so a second
// process fell back to a memory cache. No embedded database in Go gives
// multi-process writers without a server, and a value per file needs none:
// this package is that much, written by hand.)
//
// The store is size-bounded: GC removes the least recently used values
// (a read refreshes a value's modification time at most once an hour)
// until the store is under its bound. A read that finds a corrupt value
// removes it and reports a miss.
package store

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync/atomic"
	"time"
)

// touchEvery is how stale a value's modification time may get before a
// read refreshes it (the LRU clock of GC).
const touchEvery = time.Hour

// Store is one directory of values. Safe for concurrent use, also across
// processes.
type Store struct {
	dir                string
	hits, misses, puts atomic.Int64
	written            atomic.Int64 // bytes written by this process
}

// Open opens (creating) the store in dir.
func Open(dir string) (*Store, error) {
	if dir == "" {
		return nil, errors.New("store: no directory")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("store: %w", err)
	}
	return &Store{dir: dir}, nil
}

// Dir is the store's directory.
func (s *Store) Dir() string { return s.dir }

func validKey(key string) bool {
	if len(key) < 8 || len(key) > 128 {
		return false
	}
	for _, c := range key {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

func (s *Store) path(key string) string { return filepath.Join(s.dir, key[:2], key) }

// Get returns the value stored under key.
func (s *Store) Get(key string) ([]byte, bool) {
	if !validKey(key) {
		s.misses.Add(1)
		return nil, false
	}
	p := s.path(key)
	b, err := os.ReadFile(p)
	if err != nil {
		s.misses.Add(1)
		return nil, false
	}
	s.hits.Add(1)
	if st, err := os.Stat(p); err == nil && time.Since(st.ModTime()) > touchEvery {
		now := time.Now()
		os.Chtimes(p, now, now)
	}
	return b, true
}

// Remove deletes key's value (a reader found it corrupt).
func (s *Store) Remove(key string) {
	if validKey(key) {
		os.Remove(s.path(key))
	}
}

// Put stores value under key, replacing any value there.
func (s *Store) Put(key string, value []byte) error {
	if !validKey(key) {
		return fmt.Errorf("store: invalid key %q", key)
	}
	p := s.path(key)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return fmt.Errorf("store: %w", err)
	}
	var rnd [8]byte
	rand.Read(rnd[:])
	tmp := p + ".tmp-" + hex.EncodeToString(rnd[:])
	if err := os.WriteFile(tmp, value, 0o644); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("store: %w", err)
	}
	if err := os.Rename(tmp, p); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("store: %w", err)
	}
	s.puts.Add(1)
	s.written.Add(int64(len(value)))
	return nil
}

// Info is one stored value's key, size and last use.
type Info struct {
	Key     string
	Size    int64
	ModTime time.Time
}

// Walk calls fn for every value (temporary files of writers in progress
// are skipped), in no particular order.
func (s *Store) Walk(fn func(Info) error) error {
	err := filepath.WalkDir(s.dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		if d.IsDir() {
			return nil
		}
		name := d.Name()
		if strings.Contains(name, ".tmp-") || !validKey(name) {
			return nil
		}
		fi, err := d.Info()
		if err != nil {
			return nil // removed meanwhile
		}
		return fn(Info{Key: name, Size: fi.Size(), ModTime: fi.ModTime()})
	})
	return err
}

// Stats sums a store.
type Stats struct {
	Dir     string
	Entries int
	Bytes   int64
	Oldest  time.Time
	Newest  time.Time
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
	return st, err
}

// Clear removes every value and returns how many there were.
func (s *Store) Clear() (int, error) {
	n := 0
	var keys []string
	err := s.Walk(func(i Info) error { keys = append(keys, i.Key); return nil })
	for _, k := range keys {
		if os.Remove(s.path(k)) == nil {
			n++
		}
	}
	return n, err
}

// GC removes the least recently used values until the store holds at most
// maxBytes; it returns how many values and bytes it removed.
func (s *Store) GC(maxBytes int64) (removed int, freed int64, err error) {
	var all []Info
	var total int64
	if err := s.Walk(func(i Info) error { all = append(all, i); total += i.Size; return nil }); err != nil {
		return 0, 0, err
	}
	if total <= maxBytes {
		return 0, 0, nil
	}
	sort.Slice(all, func(i, j int) bool { return all[i].ModTime.Before(all[j].ModTime) })
	for _, i := range all {
		if total <= maxBytes {
			break
		}
		if os.Remove(s.path(i.Key)) == nil {
			removed++
			freed += i.Size
			total -= i.Size
		}
	}
	return removed, freed, nil
}

// Written is how many bytes this process stored.
func (s *Store) Written() int64 { return s.written.Load() }

// Find returns the key equal to key or the one key starting with it (a
// prefix of at least 8 characters).
func (s *Store) Find(key string) (string, error) {
	if validKey(key) {
		if _, err := os.Stat(s.path(key)); err == nil {
			return key, nil
		}
	}
	if len(key) < 8 {
		return "", fmt.Errorf("no entry %q (give the full key or a prefix of at least 8 characters)", key)
	}
	var match []string
	entries, _ := os.ReadDir(filepath.Join(s.dir, key[:2]))
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), key) && !strings.Contains(e.Name(), ".tmp-") {
			match = append(match, e.Name())
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

// Package cache is evalflow's content-addressed response store: model
// completions and judge verdicts keyed by the SHA-256 of everything that
// determines them (provider, base URL, model, the full request, the sample
// index), so a re-run of the same pipeline makes no model call and a
// changed prompt or parameter never hits a stale entry.
//
// On disk it is a directory of package store (one file per entry, written
// by rename), so several evalflow processes share it safely. Only
// successful responses are stored — errors never are — and no credential
// is ever part of a key or an entry.
package cache

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/evalflow/evalflow/store"
)

// Entry is one cached response with the material its key was computed from,
// so `evalflow cache explain KEY` can say what was asked.
type Entry struct {
	Key      string          `json:"key"`
	Kind     string          `json:"kind"` // "completion" or a judge name
	Provider string          `json:"provider"`
	BaseURL  string          `json:"base_url"`
	Model    string          `json:"model"`
	Request  json.RawMessage `json:"request"`
	Response json.RawMessage `json:"response"`
	Created  time.Time       `json:"created"`
}

// Key returns the content address of material: the hex SHA-256 of its JSON
// encoding (encoding/json sorts map keys and keeps struct field order, so
// equal material gives equal keys).
func Key(material any) (string, error) {
	b, err := json.Marshal(material)
	if err != nil {
		return "", fmt.Errorf("cache key: %w", err)
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:]), nil
}

// Store is a response store, on disk or in memory. Safe for concurrent
// use. The zero value is not usable; call Open or Memory.
type Store struct {
	disk *store.Store // nil for a memory store

	mu  sync.RWMutex
	mem map[string][]byte

	hits, misses, puts atomic.Int64
}

// Memory returns a store that lives as long as the process.
func Memory() *Store { return &Store{mem: map[string][]byte{}} }

// Open opens (creating as needed) the store directory at path.
func Open(path string) (*Store, error) {
	d, err := store.Open(path)
	if err != nil {
		return nil, fmt.Errorf("cache %s: %w", path, err)
	}
	return &Store{disk: d}, nil
}

// Path is the store's directory, "" for a memory store.
func (s *Store) Path() string {
	if s.disk == nil {
		return ""
	}
	return s.disk.Dir()
}

// Disk is the underlying directory store (nil for a memory store).
func (s *Store) Disk() *store.Store { return s.disk }

// Close does nothing: every entry is on disk once Put returns.
func (s *Store) Close() error { return nil }

// Get returns the entry stored under key.
func (s *Store) Get(key string) (*Entry, bool, error) {
	var raw []byte
	if s.disk == nil {
		s.mu.RLock()
		raw = s.mem[key]
		s.mu.RUnlock()
	} else if b, ok := s.disk.Get(key); ok {
		raw = b
	}
	if raw == nil {
		s.misses.Add(1)
		return nil, false, nil
	}
	var e Entry
	if err := json.Unmarshal(raw, &e); err != nil {
		s.misses.Add(1)
		if s.disk != nil {
			s.disk.Remove(key)
		}
		return nil, false, fmt.Errorf("cache entry %s is corrupt (removed): %w", key, err)
	}
	s.hits.Add(1)
	return &e, true, nil
}

// Put stores e under e.Key (replacing any entry there).
func (s *Store) Put(e *Entry) error {
	if e.Key == "" {
		return errors.New("cache put: empty key")
	}
	if e.Created.IsZero() {
		e.Created = time.Now().UTC()
	}
	raw, err := json.Marshal(e)
	if err != nil {
		return fmt.Errorf("cache put: %w", err)
	}
	s.puts.Add(1)
	if s.disk == nil {
		s.mu.Lock()
		s.mem[e.Key] = raw
		s.mu.Unlock()
		return nil
	}
	return s.disk.Put(e.Key, raw)
}

// Stats summarises a store.
type Stats struct {
	Path    string         `json:"path"`
	Entries int            `json:"entries"`
	Bytes   int64          `json:"bytes"`           // stored entry bytes
	ByModel map[string]int `json:"by_model"`        // "provider model" → entries
	Oldest  time.Time      `json:"oldest,omitzero"` // oldest entry
	Newest  time.Time      `json:"newest,omitzero"` // newest entry
	Hits    int64          `json:"hits"`            // this process
	Misses  int64          `json:"misses"`          // this process
	Puts    int64          `json:"puts"`            // this process
}

// Stats walks the store.
func (s *Store) Stats() (Stats, error) {
	st := Stats{Path: s.Path(), ByModel: map[string]int{}, Hits: s.hits.Load(), Misses: s.misses.Load(), Puts: s.puts.Load()}
	err := s.each(func(k string, v []byte) error {
		st.Entries++
		st.Bytes += int64(len(v))
		var e Entry
		if json.Unmarshal(v, &e) == nil {
			st.ByModel[e.Provider+" "+e.Model]++
			if st.Oldest.IsZero() || e.Created.Before(st.Oldest) {
				st.Oldest = e.Created
			}
			if e.Created.After(st.Newest) {
				st.Newest = e.Created
			}
		}
		return nil
	})
	return st, err
}

// Keys returns every key, sorted.
func (s *Store) Keys() ([]string, error) {
	var out []string
	err := s.each(func(k string, _ []byte) error { out = append(out, k); return nil })
	sort.Strings(out)
	return out, err
}

func (s *Store) each(fn func(k string, v []byte) error) error {
	if s.disk == nil {
		s.mu.RLock()
		defer s.mu.RUnlock()
		for k, v := range s.mem {
			if err := fn(k, v); err != nil {
				return err
			}
		}
		return nil
	}
	return s.disk.Walk(func(i store.Info) error {
		if v, ok := s.disk.Get(i.Key); ok {
			return fn(i.Key, v)
		}
		return nil
	})
}

// Clear removes every entry and returns how many there were.
func (s *Store) Clear() (int, error) {
	if s.disk == nil {
		s.mu.Lock()
		n := len(s.mem)
		s.mem = map[string][]byte{}
		s.mu.Unlock()
		return n, nil
	}
	return s.disk.Clear()
}

// Find returns the entry whose key is key or starts with key (a prefix of
// at least 8 hex digits that matches exactly one entry).
func (s *Store) Find(key string) (*Entry, error) {
	if e, ok, err := s.Get(key); err != nil || ok {
		return e, err
	}
	if len(key) < 8 {
		return nil, fmt.Errorf("no entry %q (give the full key or a prefix of at least 8 characters)", key)
	}
	if s.disk != nil {
		k, err := s.disk.Find(key)
		if err != nil {
			return nil, err
		}
		e, _, err := s.Get(k)
		return e, err
	}
	var match []string
	_ = s.each(func(k string, _ []byte) error {
		if len(k) >= len(key) && k[:len(key)] == key {
			match = append(match, k)
		}
		return nil
	})
	switch len(match) {
	case 0:
		return nil, fmt.Errorf("no entry %q", key)
	case 1:
		e, _, err := s.Get(match[0])
		return e, err
	}
	return nil, fmt.Errorf("prefix %q matches %d entries; give more characters", key, len(match))
}

// DefaultPath is where evalflow keeps its LLM cache: the llm directory of
// store.Root() ($EVALFLOW_CACHE_DIR, else the user cache directory's
// evalflow).
func DefaultPath() string { return filepath.Join(store.Root(), "llm") }

// Stores opens each store once for its owner — one run, built in main and
// passed down — and hands the same *Store to every caller naming the same
// path ("" for a memory store).
type Stores struct {
	mu sync.Mutex
	m  map[string]*Store
}

// NewStores returns an empty set of stores.
func NewStores() *Stores { return &Stores{m: map[string]*Store{}} }

// Open returns the store for path, opening it on first use.
func (ss *Stores) Open(path string) (*Store, error) {
	if path != "" {
		if abs, err := filepath.Abs(path); err == nil {
			path = abs
		}
	}
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if s, ok := ss.m[path]; ok {
		return s, nil
	}
	var s *Store
	if path == "" {
		s = Memory()
	} else {
		var err error
		if s, err = Open(path); err != nil {
			return nil, err
		}
	}
	if ss.m == nil {
		ss.m = map[string]*Store{}
	}
	ss.m[path] = s
	return s, nil
}

// Close closes every store opened through ss.
func (ss *Stores) Close() error {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	var errs []error
	for k, s := range ss.m {
		errs = append(errs, s.Close())
		delete(ss.m, k)
	}
	return errors.Join(errs...)
}

// Package cache is evalflow's content-addressed response store: model
// completions and judge verdicts keyed by the SHA-256 of everything that
// determines them (provider, base URL, model, the full request, the sample
// index), so a re-run of the same pipeline makes no model call and a
// changed prompt or parameter never hits a stale entry.
//
// On disk it is one bbolt file (go.etcd.io/bbolt), an embedded B+tree with
// ACID transactions; concurrent writers are coalesced with bbolt's Batch.
// bbolt locks the file for one process at a time: a second evalflow
// process opening the same file waits up to OpenTimeout and then gets an
// error (callers fall back to a memory store). Only successful responses
// are stored — errors never are — and no credential is ever part of a key
// or an entry.
package cache

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	bolt "go.etcd.io/bbolt"
)

var bucketName = []byte("responses")

// OpenTimeout is how long Open waits for another process's lock.
var OpenTimeout = 5 * time.Second

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
	path string
	db   *bolt.DB // nil for a memory store

	mu  sync.RWMutex
	mem map[string][]byte

	hits, misses, puts atomic.Int64
}

// Memory returns a store that lives as long as the process.
func Memory() *Store { return &Store{mem: map[string][]byte{}} }

// Open opens (creating as needed) the store file at path. The caller closes
// it.
func Open(path string) (*Store, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("cache: %w", err)
	}
	db, err := bolt.Open(path, 0o644, &bolt.Options{Timeout: OpenTimeout})
	if err != nil {
		if errors.Is(err, bolt.ErrTimeout) {
			return nil, fmt.Errorf("cache %s is locked by another evalflow process (waited %s)", path, OpenTimeout)
		}
		return nil, fmt.Errorf("cache %s: %w", path, err)
	}
	if err := db.Update(func(tx *bolt.Tx) error {
		_, err := tx.CreateBucketIfNotExists(bucketName)
		return err
	}); err != nil {
		db.Close()
		return nil, fmt.Errorf("cache %s: %w", path, err)
	}
	return &Store{path: path, db: db}, nil
}

// Path is the store's file, "" for a memory store.
func (s *Store) Path() string { return s.path }

// Close releases the file; a memory store's Close does nothing.
func (s *Store) Close() error {
	if s.db == nil {
		return nil
	}
	return s.db.Close()
}

// Get returns the entry stored under key.
func (s *Store) Get(key string) (*Entry, bool, error) {
	var raw []byte
	if s.db == nil {
		s.mu.RLock()
		raw = s.mem[key]
		s.mu.RUnlock()
	} else if err := s.db.View(func(tx *bolt.Tx) error {
		if v := tx.Bucket(bucketName).Get([]byte(key)); v != nil {
			raw = bytes.Clone(v)
		}
		return nil
	}); err != nil {
		return nil, false, fmt.Errorf("cache get: %w", err)
	}
	if raw == nil {
		s.misses.Add(1)
		return nil, false, nil
	}
	var e Entry
	if err := json.Unmarshal(raw, &e); err != nil {
		s.misses.Add(1)
		return nil, false, fmt.Errorf("cache entry %s is corrupt: %w", key, err)
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
	if s.db == nil {
		s.mu.Lock()
		s.mem[e.Key] = raw
		s.mu.Unlock()
		return nil
	}
	return s.db.Batch(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketName).Put([]byte(e.Key), raw)
	})
}

// Stats summarises a store.
type Stats struct {
	Path    string         `json:"path"`
	Entries int            `json:"entries"`
	Bytes   int64          `json:"bytes"`               // stored entry bytes
	ByModel map[string]int `json:"by_model"`            // "provider model" → entries
	Oldest  time.Time      `json:"oldest,omitzero"`     // oldest entry
	Newest  time.Time      `json:"newest,omitzero"`     // newest entry
	Hits    int64          `json:"hits"`                // this process
	Misses  int64          `json:"misses"`              // this process
	Puts    int64          `json:"puts"`                // this process
	File    int64          `json:"file_bytes,omitzero"` // size of the file on disk
}

// Stats walks the store.
func (s *Store) Stats() (Stats, error) {
	st := Stats{Path: s.path, ByModel: map[string]int{}, Hits: s.hits.Load(), Misses: s.misses.Load(), Puts: s.puts.Load()}
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
	if fi, err := os.Stat(s.path); err == nil && s.path != "" {
		st.File = fi.Size()
	}
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
	if s.db == nil {
		s.mu.RLock()
		defer s.mu.RUnlock()
		for k, v := range s.mem {
			if err := fn(k, v); err != nil {
				return err
			}
		}
		return nil
	}
	return s.db.View(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketName).ForEach(func(k, v []byte) error { return fn(string(k), v) })
	})
}

// Clear removes every entry and returns how many there were.
func (s *Store) Clear() (int, error) {
	if s.db == nil {
		s.mu.Lock()
		n := len(s.mem)
		s.mem = map[string][]byte{}
		s.mu.Unlock()
		return n, nil
	}
	n := 0
	err := s.db.Update(func(tx *bolt.Tx) error {
		n = tx.Bucket(bucketName).Stats().KeyN
		if err := tx.DeleteBucket(bucketName); err != nil {
			return err
		}
		_, err := tx.CreateBucket(bucketName)
		return err
	})
	return n, err
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

// DefaultPath is where evalflow keeps its cache: $EVALFLOW_CACHE_DIR/llm.bolt
// when set, else the user cache directory's evalflow/llm.bolt, else
// .evalflow-cache/llm.bolt in the working directory.
func DefaultPath() string {
	if d := os.Getenv("EVALFLOW_CACHE_DIR"); d != "" {
		return filepath.Join(d, "llm.bolt")
	}
	if d, err := os.UserCacheDir(); err == nil {
		return filepath.Join(d, "evalflow", "llm.bolt")
	}
	return filepath.Join(".evalflow-cache", "llm.bolt")
}

// Stores opens each store once for its owner — one run, built in main and
// passed down — and hands the same *Store to every caller naming the same
// path ("" for a memory store). A bbolt file is locked by the process that
// opened it; a second evalflow process on the same file gets an error from
// Open, and its callers fall back to a memory store (llm.Client says so).
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

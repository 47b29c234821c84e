package engine

import (
	"container/list"
	"database/sql"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/evalflow/evalflow/item"
)

// FileDBs is a bounded, reference-counted cache of *sql.DB handles keyed by
// a database file's absolute path, shared by the file-based SQL engines
// (sqlite, duckdb): each item names its database file, a run touches a few
// of them many times, and at most Max stay open (least recently used closed
// first; one still in use is closed by its last Release).
//
// Open is called under the cache's lock, so two opens of one path never
// race (DuckDB's instance cache needs that). The zero value is not usable:
// set Name, Max and Open. Safe for concurrent use.
type FileDBs struct {
	Name string // engine name for messages ("sqlite")
	Max  int
	Open func(abs string) (*sql.DB, error)

	mu     sync.Mutex
	closed bool
	dbs    map[string]*FileDB
	lru    list.List
}

// FileDB is one cached database; DB is valid until the matching Release.
type FileDB struct {
	Path    string
	DB      *sql.DB
	refs    int
	evicted bool
	elem    *list.Element
}

// Len reports how many databases are open.
func (c *FileDBs) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.dbs)
}

// Acquire returns the open database for path, opening it if needed. A path
// that does not exist or is a directory is an execution error naming it;
// nothing is created. The caller must Release the handle.
func (c *FileDBs) Acquire(path string) (*FileDB, error) {
	if path == "" {
		return nil, &Error{Class: item.ClassExecution, Msg: c.Name + ": no database given", Unavailable: true}
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, &Error{Class: item.ClassExecution, Msg: err.Error(), Err: err}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil, &Error{Class: item.ClassExecution, Msg: c.Name + ": executor is closed"}
	}
	if c.dbs == nil {
		c.dbs = map[string]*FileDB{}
	}
	if h, ok := c.dbs[abs]; ok {
		h.refs++
		c.lru.MoveToFront(h.elem)
		return h, nil
	}
	// Stat under the lock is a cheap syscall and keeps the cache simple.
	st, err := os.Stat(abs)
	if err != nil {
		msg := "database file not found: " + abs
		if !errors.Is(err, fs.ErrNotExist) {
			msg = "cannot open database file " + abs + ": " + err.Error()
		}
		return nil, &Error{Class: item.ClassExecution, Msg: msg, Err: err, Unavailable: true}
	}
	if st.IsDir() {
		return nil, &Error{Class: item.ClassExecution, Msg: "database path is a directory: " + abs, Unavailable: true}
	}
	db, err := c.Open(abs)
	if err != nil {
		var ee *Error
		if errors.As(err, &ee) {
			return nil, err
		}
		return nil, &Error{Class: item.ClassExecution, Msg: "cannot open database file " + abs + ": " + err.Error(), Err: err, Unavailable: true}
	}
	h := &FileDB{Path: abs, DB: db, refs: 1}
	h.elem = c.lru.PushFront(h)
	c.dbs[abs] = h
	for len(c.dbs) > c.Max && c.Max > 0 {
		old := c.lru.Remove(c.lru.Back()).(*FileDB)
		delete(c.dbs, old.Path)
		old.evicted = true
		if old.refs == 0 {
			old.DB.Close()
		}
	}
	return h, nil
}

// Release gives back a handle from Acquire.
func (c *FileDBs) Release(h *FileDB) {
	c.mu.Lock()
	h.refs--
	closeIt := h.evicted && h.refs == 0
	c.mu.Unlock()
	if closeIt {
		h.DB.Close()
	}
}

// Close closes every cached database. Queries still running finish first
// (sql.DB.Close waits for them); later Acquires fail with an execution
// error.
func (c *FileDBs) Close() error {
	c.mu.Lock()
	c.closed = true
	hs := make([]*FileDB, 0, len(c.dbs))
	for _, h := range c.dbs {
		hs = append(hs, h)
	}
	c.dbs = map[string]*FileDB{}
	c.lru.Init()
	c.mu.Unlock()
	var errs []error
	for _, h := range hs {
		errs = append(errs, h.DB.Close())
	}
	return errors.Join(errs...)
}

// suiteMarkers maps the engine kinds whose databases are single files to
// the substring test-suite's rule looks for in a file's base name: its
// exec_eval.py takes every file of dirname(db) whose name contains
// '.sqlite' as a test database. DuckDB suites (evalflow suite build
// -engine duckdb) follow the same rule with '.duckdb'.
var suiteMarkers = map[string]string{"sqlite": ".sqlite", "duckdb": ".duckdb"}

// SuiteMarker returns the substring that makes a file a test database for
// an engine kind, and false for kinds without the folder notion (server
// engines, directories of files, graphs).
func SuiteMarker(kind string) (string, bool) {
	m, ok := suiteMarkers[kind]
	return m, ok
}

// SuiteFiles lists the other test databases of the database file db under
// test-suite's rule: every entry of db's directory, as written (symlinks
// not followed), whose base name contains marker, except db itself,
// sorted by name. Entries are not filtered further, exactly as test-suite
// does not: a directory, a "-journal" or ".wal" file or anything else whose
// name holds the marker is listed and fails when opened. An unreadable
// directory is an execution error (Unavailable).
//
// Only a folder named after its database is a suite — <db>/<db>.sqlite,
// the layout of test-suite's databases and of `evalflow suite build`. A
// database file in a folder it shares with others under other names (the
// flat <db>.sqlite layout evalflow also reads) is one database: SuiteFiles
// returns nothing for it, where test-suite would run every other database
// of the folder and fail on their schemas.
func SuiteFiles(db, marker string) ([]string, error) {
	dir, self := filepath.Split(db)
	if dir == "" {
		dir = "."
	}
	stem, _, _ := strings.Cut(self, ".")
	if filepath.Base(filepath.Clean(dir)) != stem {
		return nil, nil
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, &Error{Class: item.ClassExecution, Unavailable: true, Err: err,
			Msg: "listing the test databases beside " + db + ": " + err.Error()}
	}
	var out []string
	for _, e := range ents { // os.ReadDir sorts by name
		if n := e.Name(); n != self && strings.Contains(n, marker) {
			out = append(out, filepath.Join(dir, n))
		}
	}
	return out, nil
}

package nodes

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/evalflow/evalflow/dsl"
	"github.com/evalflow/evalflow/engine"
	"github.com/evalflow/evalflow/item"
	"github.com/evalflow/evalflow/store"
	"github.com/evalflow/evalflow/table"
)

// TestResultKeys: a change to anything a query's result depends on misses
// the cache; a change to anything else hits.
func TestResultKeys(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "a.sqlite")
	os.WriteFile(db, []byte("database one"), 0o644)
	disk, err := store.Open(filepath.Join(dir, "cache"))
	if err != nil {
		t.Fatal(err)
	}
	r := NewResults(disk, "v1")
	base := func() (*Engine, engine.Query) {
		e := &Engine{Block: &dsl.Engine{Name: "main", Kind: "sqlite", MaxRows: 100, ReadOnly: true,
			Options: map[string]any{"pragma": "x", "dsn": "postgres://u:secret@h/db", "password": "hunter2"}}}
		return e, engine.Query{Text: "SELECT 1", DB: db, MaxRows: 100, Timeout: time.Second, Root: dir}
	}
	e0, q0 := base()
	k0, mat := r.key(e0, "execute", q0)
	if string(mat) == "" || containsAny(string(mat), "secret", "hunter2") {
		t.Errorf("key material holds a credential: %s", mat)
	}
	misses := map[string]func(e *Engine, q *engine.Query, r **Results){
		"query text":      func(e *Engine, q *engine.Query, _ **Results) { q.Text = "SELECT 2" },
		"row cap":         func(e *Engine, q *engine.Query, _ **Results) { q.MaxRows = 5 },
		"engine kind":     func(e *Engine, q *engine.Query, _ **Results) { e.Block.Kind = "duckdb" },
		"engine option":   func(e *Engine, q *engine.Query, _ **Results) { e.Block.Options["pragma"] = "y" },
		"read_only":       func(e *Engine, q *engine.Query, _ **Results) { e.Block.ReadOnly = false },
		"server identity": func(e *Engine, q *engine.Query, _ **Results) { e.Block.Options["dsn"] = "postgres://u:secret@other/db" },
		"evalflow version": func(e *Engine, q *engine.Query, rr **Results) {
			*rr = NewResults(disk, "v2")
		},
		"another database file": func(e *Engine, q *engine.Query, _ **Results) {
			other := filepath.Join(dir, "b.sqlite")
			os.WriteFile(other, []byte("database two"), 0o644)
			q.DB = other
		},
	}
	for name, change := range misses {
		e, q := base()
		rr := r
		change(e, &q, &rr)
		if k, _ := rr.key(e, "execute", q); k == k0 {
			t.Errorf("changing the %s still hits the cache", name)
		}
	}
	if k, _ := r.key(e0, "prepare", q0); k == k0 {
		t.Error("a syntax check and an execution share a key")
	}
	hits := map[string]func(e *Engine, q *engine.Query){
		"timeout":           func(e *Engine, q *engine.Query) { q.Timeout = time.Minute },
		"engine name":       func(e *Engine, q *engine.Query) { e.Block.Name = "other" },
		"root":              func(e *Engine, q *engine.Query) { q.Root = "/elsewhere" },
		"password only":     func(e *Engine, q *engine.Query) { e.Block.Options["password"] = "changed" },
		"dsn password only": func(e *Engine, q *engine.Query) { e.Block.Options["dsn"] = "postgres://u:rotated@h/db" },
		"same bytes, new copy": func(e *Engine, q *engine.Query) {
			cp := filepath.Join(dir, "copy.sqlite")
			os.WriteFile(cp, []byte("database one"), 0o644)
			q.DB = cp
		},
	}
	for name, change := range hits {
		e, q := base()
		change(e, &q)
		if k, _ := r.key(e, "execute", q); k != k0 {
			t.Errorf("changing only the %s misses the cache", name)
		}
	}
	// The database's content, rewritten in place: a miss for the next run
	// (a new Results) and, within this run, for a writable engine (whose
	// own queries may write it). A read-only engine's run keeps the
	// identity it first computed (dbIdentity: a database changing under a
	// run is not supported).
	ew, qw := base()
	ew.Block.ReadOnly = false
	kw0, _ := r.key(ew, "execute", qw)
	time.Sleep(10 * time.Millisecond)
	os.WriteFile(db, []byte("database one, edited"), 0o644)
	if k, _ := NewResults(disk, "v1").key(e0, "execute", q0); k == k0 {
		t.Error("editing the database in place still hits the cache in the next run")
	}
	if k, _ := r.key(ew, "execute", qw); k == kw0 {
		t.Error("editing the database in place still hits the cache of a writable engine")
	}
	if k, _ := r.key(e0, "execute", q0); k != k0 {
		t.Error("a read-only engine's run re-keyed its database within the run")
	}
}

func containsAny(s string, subs ...string) bool {
	for _, x := range subs {
		if len(x) > 0 && len(s) >= len(x) {
			for i := 0; i+len(x) <= len(s); i++ {
				if s[i:i+len(x)] == x {
					return true
				}
			}
		}
	}
	return false
}

// TestResultsCached: a result and a deterministic error are served again;
// a timeout and an unreachable engine are not stored; -refresh re-runs and
// -no-cache neither reads nor writes.
func TestResultsCached(t *testing.T) {
	dir := t.TempDir()
	disk, _ := store.Open(dir)
	r := NewResults(disk, "v1")
	e := &Engine{Block: &dsl.Engine{Name: "main", Kind: "sqlite"}}
	q := engine.Query{Text: "SELECT 1", DB: "shop"}
	calls := 0
	ok := func() (*table.Table, error) {
		calls++
		return &table.Table{Columns: []table.Column{{Name: "x", Type: table.TypeInt}}, Rows: [][]table.Value{{int64(1)}}}, nil
	}
	ctx := context.Background()
	if _, _, hit := r.cached(ctx, e, "execute", q, ok); hit || calls != 1 {
		t.Fatalf("first call: hit %v, calls %d", hit, calls)
	}
	res, err, hit := r.cached(ctx, e, "execute", q, ok)
	if !hit || calls != 1 || err != nil || res.Rows[0][0] != int64(1) {
		t.Fatalf("second call: hit %v calls %d err %v res %v", hit, calls, err, res)
	}
	tally := &store.Tally{Refresh: true}
	if _, _, hit := r.cached(store.WithTally(ctx, tally), e, "execute", q, ok); hit || calls != 2 || tally.Calls.Load() != 1 || tally.Hits.Load() != 0 {
		t.Errorf("-refresh: hit %v calls %d tally %d/%d", hit, calls, tally.Hits.Load(), tally.Calls.Load())
	}
	off := &store.Tally{Off: true}
	q2 := engine.Query{Text: "SELECT 2", DB: "shop"}
	r.cached(store.WithTally(ctx, off), e, "execute", q2, ok)
	if _, _, hit := r.cached(ctx, e, "execute", q2, ok); hit {
		t.Error("-no-cache stored a result")
	}

	for name, fail := range map[string]error{
		"syntax error": &engine.Error{Class: item.ClassSyntax, Msg: "near FROM"},
	} {
		qf := engine.Query{Text: "SELEC " + name, DB: "shop"}
		r.cached(ctx, e, "execute", qf, func() (*table.Table, error) { return nil, fail })
		_, err, hit := r.cached(ctx, e, "execute", qf, ok)
		if !hit || engine.ClassOf(err) != item.ClassSyntax || err.Error() != "near FROM" {
			t.Errorf("%s: hit %v err %v", name, hit, err)
		}
	}
	for name, fail := range map[string]error{
		"timeout":     &engine.Error{Class: item.ClassTimeout, Msg: "interrupted", Err: context.DeadlineExceeded},
		"unavailable": &engine.Error{Class: item.ClassExecution, Msg: "server down", Unavailable: true},
		"harness":     HarnessError(errors.New("database missing")),
	} {
		qf := engine.Query{Text: "SELECT 3 -- " + name, DB: "shop"}
		r.cached(ctx, e, "execute", qf, func() (*table.Table, error) { return nil, fail })
		if _, _, hit := r.cached(ctx, e, "execute", qf, ok); hit {
			t.Errorf("a %s was stored and served again", name)
		}
	}
}

package nodes

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
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

// TestResultsEntryLayouts: entries are written in the binary layout and
// read back exactly (a table, an error, an empty table); entries of the
// first layout (JSON) are still served and explained; a corrupt entry is
// a miss and is removed.
func TestResultsEntryLayouts(t *testing.T) {
	disk, _ := store.Open(t.TempDir())
	r := NewResults(disk, "v1")
	e := &Engine{Block: &dsl.Engine{Name: "main", Kind: "sqlite"}}
	tab := &table.Table{Columns: []table.Column{{Name: "x", Type: table.TypeAny}, {Name: "y", Type: table.TypeString}},
		Rows: [][]table.Value{{int64(1), "a"}, {2.5, nil}, {[]byte{}, "é"}}, Truncated: true}
	for name, c := range map[string]struct {
		res *table.Table
		err error
	}{
		"table":       {res: tab},
		"empty table": {res: &table.Table{}},
		"error":       {err: &engine.Error{Class: item.ClassSchema, Msg: "no such table: t"}},
	} {
		q := engine.Query{Text: "SELECT " + name, DB: "shop"}
		key, mat := r.key(e, "execute", q)
		class := engine.ClassOf(c.err)
		r.put(key, mat, c.res, class, c.err)
		raw, _ := disk.Get(key)
		if len(raw) == 0 || raw[0] != entryV2 {
			t.Fatalf("%s: not the binary layout: %q", name, raw)
		}
		res, err, ok := r.get(key)
		if !ok {
			t.Fatalf("%s: miss", name)
		}
		if c.err != nil {
			if engine.ClassOf(err) != class || err.Error() != c.err.Error() || res != nil {
				t.Errorf("%s: %v %v", name, res, err)
			}
		} else if err != nil || !reflect.DeepEqual(res, c.res) && !(len(c.res.Rows) == 0 && len(res.Rows) == 0) {
			t.Errorf("%s: %+v %v, want %+v", name, res, err, c.res)
		}
		if x, err := r.Explain(key); err != nil || !strings.Contains(string(x), `"material"`) {
			t.Errorf("%s: explain: %s %v", name, x, err)
		}
	}

	// The first layout: JSON with the table base64-encoded.
	q := engine.Query{Text: "SELECT old", DB: "shop"}
	key, mat := r.key(e, "execute", q)
	b, _ := tab.MarshalBinary()
	old, _ := json.Marshal(resultEntry{Material: mat, Table: b, Created: time.Now().UTC()})
	disk.Put(key, old)
	if res, err, ok := r.get(key); !ok || err != nil || !reflect.DeepEqual(res, tab) {
		t.Errorf("first layout: %v %v %v", ok, res, err)
	}
	if x, err := r.Explain(key); err != nil || !strings.Contains(string(x), `"rows": 3`) {
		t.Errorf("first layout, explain: %s %v", x, err)
	}
	qe := engine.Query{Text: "SELECT old error", DB: "shop"}
	key, mat = r.key(e, "execute", qe)
	old, _ = json.Marshal(resultEntry{Material: mat, Class: item.ClassSyntax, Msg: "near x", Created: time.Now().UTC()})
	disk.Put(key, old)
	if _, err, ok := r.get(key); !ok || engine.ClassOf(err) != item.ClassSyntax || err.Error() != "near x" {
		t.Errorf("first layout, error: %v %v", ok, err)
	}

	// Corrupt: cut short.
	qc := engine.Query{Text: "SELECT cut", DB: "shop"}
	key, mat = r.key(e, "execute", qc)
	r.put(key, mat, tab, item.ClassNone, nil)
	raw, _ := disk.Get(key)
	disk.Put(key, raw[:len(raw)-3])
	if _, _, ok := r.get(key); ok {
		t.Error("a cut entry was served")
	}
	if _, ok := disk.Get(key); ok {
		t.Error("a cut entry was not removed")
	}
}

// TestMaterialJSON: the key material is json.Marshal's bytes, so keys of
// caches written before stay valid.
func TestMaterialJSON(t *testing.T) {
	strs := []string{"", "SELECT 1", `SELECT "a" FROM t WHERE b = 'c\d'`, "a<b>&c", "tab\there\nnl", "é ü 中文", "\xff\xfe bad utf-8",
		"\u2028\u2029", "\x7f del", "sha256:" + strings.Repeat("ab", 32), "name:/tmp/x y.sqlite"}
	opts := []map[string]any{nil, {}, {"immutable": true}, {"dsn": "postgres://u@h/db", "max_databases": 3.0, "list": []any{"a", 1}}}
	for i, q := range strs {
		for j, o := range opts {
			m := material{V: 1, Evalflow: strs[(i+1)%len(strs)], Op: "execute", Kind: strs[(i+j)%len(strs)], Options: o,
				ReadOnly: j%2 == 0, DB: strs[(i+2)%len(strs)], Query: q, MaxRows: i*1000 - 3}
			want, _ := json.Marshal(m)
			if got := m.appendJSON(nil); string(got) != string(want) {
				t.Errorf("material %d/%d:\n got %s\nwant %s", i, j, got, want)
			}
		}
	}
	bad := material{V: 1, Options: map[string]any{"f": func() {}}}
	want, _ := json.Marshal(bad)
	if got := bad.appendJSON(nil); string(got) != string(want) {
		t.Errorf("unencodable options: %q, want %q", got, want)
	}
}

// TestResultsHot: a hit read again is served from memory (the disk is read
// once), as an independent table each time, and still counts as a hit.
func TestResultsHot(t *testing.T) {
	disk, _ := store.Open(t.TempDir())
	r := NewResults(disk, "v1")
	e := &Engine{Block: &dsl.Engine{Name: "main", Kind: "sqlite"}}
	ctx := context.Background()
	tab := &table.Table{Columns: []table.Column{{Name: "x", Type: table.TypeAny}}, Rows: [][]table.Value{{int64(1)}}}
	q := engine.Query{Text: "SELECT 1", DB: "shop"}
	runs := 0
	run := func() (*table.Table, error) { runs++; return tab, nil }
	if _, _, hit := r.cached(ctx, e, "execute", q, run); hit {
		t.Fatal("first call hit")
	}
	var got []*table.Table
	for range 3 {
		res, err, hit := r.cached(ctx, e, "execute", q, run)
		if !hit || err != nil || !reflect.DeepEqual(res, tab) {
			t.Fatalf("hit %v err %v res %+v", hit, err, res)
		}
		got = append(got, res)
	}
	if runs != 1 {
		t.Errorf("ran %d times, want 1", runs)
	}
	got[0].Rows[0][0] = int64(9)
	if got[1].Rows[0][0] != int64(1) {
		t.Error("hits share one table")
	}
	st, _ := disk.Stats()
	if st.Hits != 1 {
		t.Errorf("disk hits %d, want 1 (later hits from memory)", st.Hits)
	}
}

package nodes

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"

	"github.com/evalflow/evalflow/dsl"
	"github.com/evalflow/evalflow/engine"
	"github.com/evalflow/evalflow/item"
	"github.com/evalflow/evalflow/store"
)

// TestLocateMemo: Locate checks each distinct path once per run, keeps
// refusing paths outside the root (by name or through a symlink) however
// often they come and after other paths were accepted, and never
// remembers a refusal.
func TestLocateMemo(t *testing.T) {
	root := t.TempDir()
	dbs := filepath.Join(root, "dbs")
	writeFiles(t, map[string]string{
		filepath.Join(dbs, "a.sqlite"):        "a",
		filepath.Join(dbs, "b.sqlite"):        "b",
		filepath.Join(root, "outside.sqlite"): "outside",
	})
	if err := os.Symlink(filepath.Join(root, "outside.sqlite"), filepath.Join(dbs, "link.sqlite")); err != nil {
		t.Fatal(err)
	}
	e := suiteEngine(t, "sqlite", dbs, dbs+"/${item.db}.sqlite", &suiteExec{})
	var wg sync.WaitGroup
	errs := make(chan error, 1000)
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < 50; i++ {
				for _, db := range []string{"a", "b", "../outside", "link", "new"} {
					it := &item.Item{ID: fmt.Sprint(g, "-", i), DB: db}
					p, err := e.Locate(it)
					switch db {
					case "../outside", "link":
						if err == nil || !strings.Contains(err.Error(), "outside its root") || !strings.Contains(err.Error(), it.ID) {
							errs <- fmt.Errorf("%s: located %q, err %v; want a refusal naming item %s", db, p, err, it.ID)
						}
					default:
						if err != nil || p != filepath.Join(dbs, db+".sqlite") {
							errs <- fmt.Errorf("%s: %q, %v", db, p, err)
						}
					}
				}
			}
		}(g)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	var memo []string
	e.contained.paths.Range(func(k, _ any) bool { memo = append(memo, filepath.Base(k.(string))); return true })
	if len(memo) != 3 || int(e.contained.n.Load()) != 3 {
		t.Errorf("memoized %v (count %d), want a, b and new only", memo, e.contained.n.Load())
	}
	// A copy of the engine (score's per-item copy) shares the memo.
	cp := *e
	cp.Results = nil
	if _, err := cp.Locate(&item.Item{ID: "c", DB: "a"}); err != nil || e.contained.n.Load() != 3 {
		t.Errorf("copy: %v, count %d", err, e.contained.n.Load())
	}
	if _, err := cp.Locate(&item.Item{ID: "c", DB: "link"}); err == nil {
		t.Error("copy accepted a link out of the root")
	}
	// A link that pointed inside and now points outside is only re-checked
	// in a new run (documented); a new engine refuses it.
	if err := os.Remove(filepath.Join(dbs, "new.sqlite")); err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(root, "outside.sqlite"), filepath.Join(dbs, "new.sqlite")); err != nil {
		t.Fatal(err)
	}
	e2 := suiteEngine(t, "sqlite", dbs, dbs+"/${item.db}.sqlite", &suiteExec{})
	if _, err := e2.Locate(&item.Item{ID: "x", DB: "new"}); err == nil {
		t.Error("a new run accepted a link out of the root")
	}
	// RunAt and TestDBs go through the same memo and still refuse.
	if o := e2.RunAt(t.Context(), &item.Item{ID: "y"}, filepath.Join(dbs, "link.sqlite"), "SELECT 1"); o.Err == nil {
		t.Error("RunAt ran on a link out of the root")
	}
}

// TestLocatePathMemo: the path expression is evaluated once per tuple of
// the item fields it reads, fileexists included (its verdict is the
// run's: the data tree must not change during a run); a path that does
// not exist, or is refused, is evaluated and checked again every time;
// expressions that read the whole item or a file's content, or call a
// function evalflow does not know, are not memoized.
func TestLocatePathMemo(t *testing.T) {
	root := t.TempDir()
	dbs := filepath.Join(root, "dbs")
	writeFiles(t, map[string]string{
		filepath.Join(dbs, "a.sqlite"):        "a",
		filepath.Join(root, "outside.sqlite"): "outside",
	})
	expr := func(s string) hcl.Expression {
		e, d := hclsyntax.ParseExpression([]byte(s), "test.hcl", hcl.InitialPos)
		if d.HasErrors() {
			t.Fatal(d)
		}
		return e
	}
	newEngine := func(path string) *Engine {
		t.Helper()
		e := NewEngine(&dsl.Engine{Name: "main", Kind: "sqlite", Path: expr(path), Root: expr(`"` + dbs + `"`)}, &suiteExec{}, &dsl.Pipeline{Dir: root})
		if e.RootDiags.HasErrors() {
			t.Fatal(e.RootDiags)
		}
		e.ctx = &hcl.EvalContext{Functions: dsl.Functions(root)}
		return e
	}
	// text2sql-replay.hcl's shape: <db>/<db>.sqlite if it exists, else <db>.sqlite.
	replay := `fileexists("` + dbs + `/${item.db}/${item.db}.sqlite") ? "` + dbs + `/${item.db}/${item.db}.sqlite" : "` + dbs + `/${item.db}.sqlite"`
	e := newEngine(replay)
	if e.located == nil || !cmp.Equal(e.located.fields, []string{"db"}) {
		t.Fatalf("replay path: memo %+v, want one on db", e.located)
	}
	locate := func(e *Engine, id, db string) (string, error) { return e.Locate(&item.Item{ID: id, DB: db}) }
	if p, err := locate(e, "1", "a"); err != nil || p != filepath.Join(dbs, "a.sqlite") {
		t.Fatalf("a: %q %v", p, err)
	}
	// The folder layout appears mid-run: this run keeps its first verdict
	// (documented), a new one sees it.
	writeFiles(t, map[string]string{filepath.Join(dbs, "a", "a.sqlite"): "a2"})
	if p, _ := locate(e, "2", "a"); p != filepath.Join(dbs, "a.sqlite") {
		t.Errorf("a, same run: %q", p)
	}
	if p, _ := locate(newEngine(replay), "3", "a"); p != filepath.Join(dbs, "a", "a.sqlite") {
		t.Errorf("a, next run: %q", p)
	}
	// A database that does not exist yet is looked for again.
	if p, err := locate(e, "4", "b"); err != nil || p != filepath.Join(dbs, "b.sqlite") {
		t.Fatalf("b missing: %q %v", p, err)
	}
	writeFiles(t, map[string]string{filepath.Join(dbs, "b", "b.sqlite"): "b"})
	if p, _ := locate(e, "5", "b"); p != filepath.Join(dbs, "b", "b.sqlite") {
		t.Errorf("b created mid-run: %q", p)
	}
	// Refusals are never remembered and always name their item.
	for i := 0; i < 3; i++ {
		id := fmt.Sprint("out", i)
		if _, err := locate(e, id, "../outside"); err == nil || !strings.Contains(err.Error(), "outside its root") || !strings.Contains(err.Error(), id) {
			t.Errorf("../outside, try %d: %v", i, err)
		}
	}
	if n := e.located.n.Load(); n != 2 {
		t.Errorf("%d paths memoized, want 2 (a and b)", n)
	}

	// Which expressions are memoized, and on what.
	for _, tt := range []struct {
		path   string
		fields []string // nil: not memoized
	}{
		{`"` + dbs + `/${item.db}.sqlite"`, []string{"db"}},
		{`"` + dbs + `/${item["db"]}/${item.split}.sqlite"`, []string{"db", "split"}},
		{`"` + dbs + `/x.sqlite"`, []string{}},
		{`"` + dbs + `/${lower(item.db)}.sqlite"`, []string{"db"}},
		{`"` + dbs + `/${jsonencode(item)}.sqlite"`, nil},
		{`"` + dbs + `/${item[item.db]}.sqlite"`, nil},
		{`"` + dbs + `/${file("list.txt")}/${item.db}.sqlite"`, nil},
		{`"` + dbs + `/${nosuch(item.db)}.sqlite"`, nil},
	} {
		m := newPathMemo(expr(tt.path))
		switch {
		case tt.fields == nil && m != nil:
			t.Errorf("%s: memoized on %v", tt.path, m.fields)
		case tt.fields != nil && (m == nil || !cmp.Equal(tt.fields, m.fields, cmpopts.EquateEmpty())):
			t.Errorf("%s: memo %+v, want on %v", tt.path, m, tt.fields)
		}
	}

	// Two fields, typed pass-through values: equal keys only for equal values.
	m := newPathMemo(expr(`"${item.db}/${item.split}"`))
	keys := map[string]string{}
	for _, it := range []*item.Item{
		{DB: "a", Fields: []item.Field{{Name: "split", Value: "1"}}},
		{DB: "a", Fields: []item.Field{{Name: "split", Value: int64(1)}}},
		{DB: "a", Fields: []item.Field{{Name: "split", Value: 1.5}}},
		{DB: "a", Fields: []item.Field{{Name: "split", Value: nil}}},
		{DB: "a", Fields: []item.Field{{Name: "split", Value: true}}},
		{DB: "a1", Fields: []item.Field{{Name: "split", Value: ""}}},
		{DB: "a", Fields: []item.Field{{Name: "split", Value: "1"}, {Name: "split", Value: "2"}}},
	} {
		k, ok := m.key(it)
		if !ok {
			t.Fatalf("%+v: no key", it)
		}
		if prev, dup := keys[k]; dup && prev != fmt.Sprint(it.DB, it.Fields[0].Value) {
			t.Errorf("%+v and %s share key %q", it, prev, k)
		}
		keys[k] = fmt.Sprint(it.DB, it.Fields[0].Value)
	}
	if len(keys) != 6 {
		t.Errorf("%d distinct keys, want 6 (the duplicate field reads its first value)", len(keys))
	}
	if _, ok := m.key(&item.Item{DB: "a"}); ok {
		t.Error("an item without the field has a key")
	}
}

// TestDBIdentityMemo: a read-only engine's database is hashed once per
// run, however many queries ask at once; a path that does not exist yet
// is not remembered.
func TestDBIdentityMemo(t *testing.T) {
	dir := t.TempDir()
	disk, err := store.Open(filepath.Join(dir, "cache"))
	if err != nil {
		t.Fatal(err)
	}
	r := NewResults(disk, "v1")
	db := filepath.Join(dir, "a.sqlite")
	if got := r.dbIdentity(db, true); got != "name:"+db {
		t.Fatalf("missing file: %q", got)
	}
	os.WriteFile(db, []byte("content"), 0o644)
	want := "sha256:" + store.HashFile(db)
	var wg sync.WaitGroup
	got := make([]string, 32)
	for i := range got {
		wg.Add(1)
		go func(i int) { defer wg.Done(); got[i] = r.dbIdentity(db, true) }(i)
	}
	wg.Wait()
	for i, g := range got {
		if g != want {
			t.Fatalf("query %d: %q, want %q (a file created during the run is seen)", i, g, want)
		}
	}
	sub := filepath.Join(dir, "tree")
	os.MkdirAll(sub, 0o755)
	os.WriteFile(filepath.Join(sub, "x.csv"), []byte("x"), 0o644)
	if g := r.dbIdentity(sub, true); !strings.HasPrefix(g, "tree:") {
		t.Errorf("directory: %q", g)
	}
	n := 0
	r.ids.Range(func(_, _ any) bool { n++; return true })
	if n != 2 {
		t.Errorf("%d identities memoized, want 2 (the file and the tree)", n)
	}
	// Removing the file: the run keeps its identity (not supported, see
	// dbIdentity); a writable engine's query sees the change.
	os.Remove(db)
	if g := r.dbIdentity(db, true); g != want {
		t.Errorf("read-only, removed mid-run: %q", g)
	}
	if g := r.dbIdentity(db, false); g != "name:"+db {
		t.Errorf("writable, removed mid-run: %q", g)
	}
}

// BenchmarkLocate: Locate on a template path, 20 distinct databases, with
// the containment memo (as NewEngine builds it) and without (nil memo:
// every query resolves its path, as before the memo).
func BenchmarkLocate(b *testing.B) {
	root := b.TempDir()
	dbs := filepath.Join(root, "data", "geo", "dbs")
	items := make([]*item.Item, 20)
	for i := range items {
		name := fmt.Sprintf("db%02d", i)
		p := filepath.Join(dbs, name, name+".sqlite")
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, []byte(name), 0o644)
		items[i] = &item.Item{ID: fmt.Sprint(i), DB: name}
	}
	for _, memo := range []bool{false, true} {
		b.Run(fmt.Sprintf("memo=%v", memo), func(b *testing.B) {
			e := suiteEngine(b, "sqlite", dbs, dbs+"/${item.db}/${item.db}.sqlite", &suiteExec{})
			if !memo {
				e.contained = nil
			}
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				if _, err := e.Locate(items[i%len(items)]); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkKey: the stage cache key of a query on a read-only engine's
// database (memoized identity) and a writable one's (a stat per query).
func BenchmarkKey(b *testing.B) {
	dir := b.TempDir()
	db := filepath.Join(dir, "a.sqlite")
	os.WriteFile(db, make([]byte, 1<<16), 0o644)
	disk, err := store.Open(filepath.Join(dir, "cache"))
	if err != nil {
		b.Fatal(err)
	}
	r := NewResults(disk, "v1")
	for _, ro := range []bool{false, true} {
		b.Run(fmt.Sprintf("read_only=%v", ro), func(b *testing.B) {
			e := &Engine{Block: &dsl.Engine{Name: "main", Kind: "sqlite", MaxRows: 100, ReadOnly: ro}}
			q := engine.Query{Text: "SELECT 1", DB: db, MaxRows: 100}
			b.ReportAllocs()
			for b.Loop() {
				r.key(e, "execute", q)
			}
		})
	}
}

package nodes

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

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

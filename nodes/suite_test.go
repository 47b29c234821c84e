package nodes

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"

	"github.com/evalflow/evalflow/dsl"
	"github.com/evalflow/evalflow/engine"
	"github.com/evalflow/evalflow/item"
	"github.com/evalflow/evalflow/store"
	"github.com/evalflow/evalflow/table"
)

// suiteExec records the databases it is asked to run on and answers with
// one row naming the file's content.
type suiteExec struct {
	mu  sync.Mutex
	dbs []string
}

func (x *suiteExec) Execute(_ context.Context, q engine.Query) (*table.Table, error) {
	x.mu.Lock()
	x.dbs = append(x.dbs, filepath.Base(q.DB))
	x.mu.Unlock()
	b, err := os.ReadFile(q.DB)
	if err != nil {
		return nil, &engine.Error{Class: item.ClassExecution, Msg: err.Error(), Unavailable: true}
	}
	return &table.Table{Columns: []table.Column{{Name: "c", Type: table.TypeString}}, Rows: [][]table.Value{{string(b)}}}, nil
}

type byName struct{ suiteExec }

func (*byName) LocatesByName() bool { return true }

func suiteEngine(t testing.TB, kind, root, path string, ex engine.Executor) *Engine {
	t.Helper()
	expr := func(s string) hcl.Expression {
		e, d := hclsyntax.ParseTemplate([]byte(s), "test.hcl", hcl.InitialPos)
		if d.HasErrors() {
			t.Fatal(d)
		}
		return e
	}
	b := &dsl.Engine{Name: "main", Kind: kind, Path: expr(path), Root: expr(root), MaxRows: 10}
	e := NewEngine(b, ex, &dsl.Pipeline{Dir: root})
	if e.RootDiags.HasErrors() {
		t.Fatal(e.RootDiags)
	}
	return e
}

func writeFiles(t *testing.T, files map[string]string) {
	t.Helper()
	for p, body := range files {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestTestDBs: test-suite's rule lists every other file of the item's
// folder whose name contains the kind's marker, sorted; engines without
// the folder notion list nothing; a sibling escaping the root is a harness
// error.
func TestTestDBs(t *testing.T) {
	root := t.TempDir()
	dbs := filepath.Join(root, "dbs")
	writeFiles(t, map[string]string{
		filepath.Join(dbs, "shop", "shop.sqlite"):         "original",
		filepath.Join(dbs, "shop", "shop_002.sqlite"):     "two",
		filepath.Join(dbs, "shop", "shop_001.sqlite"):     "one",
		filepath.Join(dbs, "shop", "shop.sqlite-journal"): "journal",
		filepath.Join(dbs, "shop", "schema.sql"):          "CREATE TABLE t (a)",
		filepath.Join(dbs, "shop", "notes.json"):          "{}",
		filepath.Join(dbs, "solo", "solo.sqlite"):         "solo",
		filepath.Join(dbs, "duck", "duck.duckdb"):         "d",
		filepath.Join(dbs, "duck", "duck_001.duckdb"):     "d1",
		filepath.Join(dbs, "duck", "duck_001.sqlite"):     "s1",
		filepath.Join(root, "outside.sqlite"):             "outside",
	})
	sqlite := suiteEngine(t, "sqlite", dbs, dbs+"/${item.db}/${item.db}.sqlite", &suiteExec{})
	for _, tc := range []struct {
		name string
		e    *Engine
		db   string
		want []string
		ok   bool
	}{
		{"suite", sqlite, "shop", []string{"shop.sqlite-journal", "shop_001.sqlite", "shop_002.sqlite"}, true},
		{"one database", sqlite, "solo", nil, true},
		{"duckdb", suiteEngine(t, "duckdb", dbs, dbs+"/${item.db}/${item.db}.duckdb", &suiteExec{}), "duck", []string{"duck_001.duckdb"}, true},
		{"kind without marker", suiteEngine(t, "pandas", dbs, dbs+"/${item.db}", &suiteExec{}), "shop", nil, false},
		{"server engine", suiteEngine(t, "sqlite", dbs, "${item.db}", &byName{}), "shop", nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok, err := tc.e.TestDBs(&item.Item{ID: "1", DB: tc.db})
			if err != nil || ok != tc.ok {
				t.Fatalf("ok %v, err %v; want ok %v", ok, err, tc.ok)
			}
			var names []string
			for _, p := range got {
				if filepath.Dir(p) != filepath.Join(dbs, tc.db) {
					t.Errorf("%s is not beside the item's database", p)
				}
				names = append(names, filepath.Base(p))
			}
			if diff := cmp.Diff(tc.want, names); diff != "" {
				t.Errorf("test databases (-want +got):\n%s", diff)
			}
		})
	}
	t.Run("sibling outside the root", func(t *testing.T) {
		if err := os.Symlink(filepath.Join(root, "outside.sqlite"), filepath.Join(dbs, "solo", "solo_001.sqlite")); err != nil {
			t.Skip(err)
		}
		defer os.Remove(filepath.Join(dbs, "solo", "solo_001.sqlite"))
		_, _, err := sqlite.TestDBs(&item.Item{ID: "1", DB: "solo"})
		if !errors.Is(err, ErrHarness) || !strings.Contains(err.Error(), "outside its root") {
			t.Errorf("err = %v, want a harness error naming the root", err)
		}
	})
	t.Run("unreadable folder", func(t *testing.T) {
		_, _, err := sqlite.TestDBs(&item.Item{ID: "1", DB: "missing"})
		if !errors.Is(err, ErrHarness) {
			t.Errorf("err = %v, want a harness error", err)
		}
	})
}

// TestRunAt: a query runs on the named test database through the same
// engine, its result is cached under that file's content (a copy with the
// same bytes hits, another file misses), and a path outside the root runs
// nothing.
func TestRunAt(t *testing.T) {
	root := t.TempDir()
	dbs := filepath.Join(root, "dbs")
	shop := filepath.Join(dbs, "shop")
	writeFiles(t, map[string]string{
		filepath.Join(shop, "shop.sqlite"):     "original",
		filepath.Join(shop, "shop_001.sqlite"): "one",
		filepath.Join(shop, "shop_002.sqlite"): "original",
		filepath.Join(root, "outside.sqlite"):  "outside",
	})
	ex := &suiteExec{}
	e := suiteEngine(t, "sqlite", dbs, dbs+"/${item.db}/${item.db}.sqlite", ex)
	disk, err := store.Open(filepath.Join(root, "cache"))
	if err != nil {
		t.Fatal(err)
	}
	e.Results = NewResults(disk, "v1")
	it := &item.Item{ID: "1", DB: "shop"}
	ctx := context.Background()
	type run struct {
		db     string
		value  string
		cached bool
	}
	var got []run
	for _, db := range []string{"shop.sqlite", "shop_001.sqlite", "shop_002.sqlite", "shop_001.sqlite"} {
		o := e.RunAt(ctx, it, filepath.Join(shop, db), "SELECT c")
		if o.Err != nil {
			t.Fatalf("%s: %v", db, o.Err)
		}
		got = append(got, run{db, o.Result.Rows[0][0].(string), o.Cached})
	}
	want := []run{{"shop.sqlite", "original", false}, {"shop_001.sqlite", "one", false}, {"shop_002.sqlite", "original", true}, {"shop_001.sqlite", "one", true}}
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(run{})); diff != "" {
		t.Errorf("runs (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"shop.sqlite", "shop_001.sqlite"}, ex.dbs); diff != "" {
		t.Errorf("executed on (-want +got):\n%s", diff)
	}
	o := e.RunAt(ctx, it, filepath.Join(root, "outside.sqlite"), "SELECT c")
	if !errors.Is(o.Err, ErrHarness) || len(ex.dbs) != 2 {
		t.Errorf("outside the root: err %v, executed on %v", o.Err, ex.dbs)
	}
	o = e.RunAt(ctx, it, filepath.Join(shop, "gone.sqlite"), "SELECT c")
	if !errors.Is(o.Err, ErrHarness) {
		t.Errorf("a missing test database: err %v, want a harness error", o.Err)
	}
}

package suite

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/evalflow/evalflow/engine"
	"github.com/evalflow/evalflow/engine/sqlite"
	"github.com/evalflow/evalflow/metrics"
)

// ownDDL is a small schema of our own with a foreign key, UNIQUE columns,
// a composite UNIQUE and NOT NULL columns. Its data are chosen so that the
// near-misses below give the gold's result on it.
const ownDDL = `
CREATE TABLE dept (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, budget REAL);
CREATE TABLE emp (
  id INTEGER PRIMARY KEY,
  name TEXT NOT NULL,
  dept_id INTEGER NOT NULL REFERENCES dept(id),
  salary INTEGER,
  bonus INTEGER,
  email TEXT UNIQUE,
  UNIQUE (name, dept_id)
);
INSERT INTO dept VALUES (1, 'sales', 100.5), (2, 'it', 200.25), (3, 'hr', 50);
INSERT INTO emp VALUES
  (1, 'ann', 1, 40000, 40000, 'ann@x'),
  (2, 'bob', 2, 60000, 60000, 'bob@x'),
  (3, 'cid', 3, 70000, 70000, 'cid@x');
`

// ownDB writes the schema and data to a new SQLite file.
func ownDB(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "own.sqlite")
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, s := range strings.Split(ownDDL, ";") {
		if strings.TrimSpace(s) == "" {
			continue
		}
		if _, err := db.Exec(s); err != nil {
			t.Fatal(err)
		}
	}
	return path
}

// nearMisses: the gold, a wrong query that equals it on the original data.
var nearMisses = []struct{ name, gold, miss string }{
	{"> vs >= at a boundary", "SELECT name FROM emp WHERE salary > 50000", "SELECT name FROM emp WHERE salary >= 50000"},
	{"missing DISTINCT", "SELECT DISTINCT dept_id FROM emp", "SELECT dept_id FROM emp"},
	{"wrong column with equal values", "SELECT sum(salary) FROM emp", "SELECT sum(bonus) FROM emp"},
}

func ownGolds() []Gold {
	var golds []Gold
	for i, nm := range nearMisses {
		golds = append(golds, Gold{Text: nm.gold, IDs: []string{string(rune('a' + i))}})
	}
	return golds
}

func TestReadSQLite(t *testing.T) {
	db, err := sql.Open("sqlite", "file:"+ownDB(t)+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	s, err := ReadSQLite(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	s.DDL = nil
	want := &Schema{Tables: []*Table{
		{Name: "dept", PrimaryKey: []string{"id"}, Unique: [][]string{{"name"}}, Columns: []*Column{
			{Name: "id", DeclType: "INTEGER", Kind: KindInt, NotNull: true},
			{Name: "name", DeclType: "TEXT", Kind: KindText, NotNull: true},
			{Name: "budget", DeclType: "REAL", Kind: KindFloat},
		}},
		{Name: "emp", PrimaryKey: []string{"id"}, Unique: [][]string{{"email"}, {"name", "dept_id"}},
			ForeignKeys: []ForeignKey{{Columns: []string{"dept_id"}, RefTable: "dept", RefColumns: []string{"id"}}},
			Columns: []*Column{
				{Name: "id", DeclType: "INTEGER", Kind: KindInt, NotNull: true},
				{Name: "name", DeclType: "TEXT", Kind: KindText, NotNull: true},
				{Name: "dept_id", DeclType: "INTEGER", Kind: KindInt, NotNull: true},
				{Name: "salary", DeclType: "INTEGER", Kind: KindInt},
				{Name: "bonus", DeclType: "INTEGER", Kind: KindInt},
				{Name: "email", DeclType: "TEXT", Kind: KindText},
			}},
	}}
	if d := cmp.Diff(want, s); d != "" {
		t.Errorf("schema (-want +got):\n%s", d)
	}
}

// TestNeighbours: the mutations the issue lists appear, on the AST.
func TestNeighbours(t *testing.T) {
	db, err := sql.Open("sqlite", "file:"+ownDB(t)+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	s, err := ReadSQLite(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct{ gold, want string }{
		{"SELECT name FROM emp WHERE salary > 50000", `SELECT "name" FROM "emp" WHERE "salary">=50000`},
		{"SELECT name FROM emp WHERE salary > 50000", `SELECT "name" FROM "emp" WHERE "salary">50001`},
		{"SELECT name FROM emp WHERE salary > 50000", `SELECT "name" FROM "emp" WHERE "bonus">50000`},
		{"SELECT DISTINCT dept_id FROM emp", `SELECT "dept_id" FROM "emp"`},
		{"SELECT max(salary) FROM emp", `SELECT MIN("salary") FROM "emp"`},
		{"SELECT name FROM emp ORDER BY salary DESC LIMIT 1", `SELECT "name" FROM "emp" ORDER BY "salary" LIMIT 1`},
		{"SELECT name FROM emp ORDER BY salary DESC LIMIT 1", `SELECT "name" FROM "emp" ORDER BY "salary" DESC`},
		{"SELECT name FROM emp WHERE name LIKE 'a%' AND salary > 1", `SELECT "name" FROM "emp" WHERE "name" NOT LIKE 'a%' AND "salary">1`},
		{"SELECT name FROM emp WHERE name LIKE 'a%' AND salary > 1", `SELECT "name" FROM "emp" WHERE "name" LIKE 'a%'`},
		{"SELECT name FROM emp WHERE name = 'ann'", `SELECT "name" FROM "emp" WHERE "name"='%ann%'`},
		{"SELECT name FROM emp WHERE dept_id IN (1, 2)", `SELECT "name" FROM "emp" WHERE "dept_id" NOT IN (1,2)`},
		{"SELECT budget * 2 FROM dept WHERE budget > 1.5", `SELECT "budget"+2 FROM "dept" WHERE "budget">1.5`},
		{"SELECT budget * 2 FROM dept WHERE budget > 1.5", `SELECT "budget"*2 FROM "dept" WHERE "budget">1.501e+00`},
		{"SELECT e.name FROM emp AS e JOIN dept AS d ON e.dept_id = d.id", `SELECT "e"."name" FROM "emp" AS "e" JOIN "dept" AS "d"`},
		{"SELECT name FROM emp WHERE salary > 1 OR bonus > 2", `SELECT "name" FROM "emp" WHERE "salary">1 AND "bonus">2`},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			cands, err := Neighbours(tt.gold, s, rand.New(rand.NewPCG(1, 2)))
			if err != nil {
				t.Fatal(err)
			}
			var texts []string
			for _, c := range cands {
				if c.Text == tt.want {
					return
				}
				texts = append(texts, c.Text)
			}
			t.Errorf("%s: no neighbour %s among\n%s", tt.gold, tt.want, strings.Join(texts, "\n"))
		})
	}
}

// TestOwnSuite: the near-misses give the gold's result on the original
// but the suite separates each; the kept databases respect the schema;
// the same seed gives byte-identical files.
func TestOwnSuite(t *testing.T) {
	orig := ownDB(t)
	ctx := context.Background()
	ex, err := sqlite.New(engine.Config{Timeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer ex.Close()
	differ := func(path, gold, miss string) bool {
		p := metrics.ProfileTestSuiteKeepDistinct
		g, err := ex.Execute(ctx, engine.Query{Text: gold, DB: path})
		if err != nil {
			t.Fatalf("gold fails on %s: %v", path, err)
		}
		m, err := ex.Execute(ctx, engine.Query{Text: miss, DB: path})
		return err != nil || !metrics.CompareTables(g, m, p.CompareOptions(gold, metrics.Tolerance{})).Match
	}
	for _, nm := range nearMisses {
		if differ(orig, nm.gold, nm.miss) {
			t.Fatalf("%s: the original already separates the pair", nm.name)
		}
	}
	o := DefaultOptions()
	o.Seed = 7
	o.Samples = 60
	dirs := []string{filepath.Join(t.TempDir(), "a"), filepath.Join(t.TempDir(), "b")}
	var reps []*DBReport
	for _, dir := range dirs {
		rep, err := Build(ctx, "own", orig, dir, ownGolds(), o)
		if err != nil {
			t.Fatal(err)
		}
		reps = append(reps, rep)
	}
	rep := reps[0]
	t.Logf("neighbours %d, separated %d (by the original %d), unseparated %d, sampled %d, kept %d",
		rep.Neighbours, rep.Separated, rep.SeparatedByOriginal, len(rep.Unseparated), rep.Sampled, len(rep.Kept))
	if len(rep.Kept) == 0 {
		t.Fatal("no database kept")
	}
	checkSuite(t, dirs[0], "own", ownGolds(), rep)
	for _, nm := range nearMisses {
		sep := false
		for _, k := range rep.Kept {
			if differ(filepath.Join(dirs[0], k.File), nm.gold, nm.miss) {
				sep = true
			}
		}
		if !sep {
			t.Errorf("%s: no kept database separates %q from %q", nm.name, nm.gold, nm.miss)
		}
	}
	// Determinism: the same files, byte for byte, and the same report
	// apart from elapsed times.
	for _, name := range append([]string{"own.sqlite"}, keptFiles(rep)...) {
		a, err1 := os.ReadFile(filepath.Join(dirs[0], name))
		b, err2 := os.ReadFile(filepath.Join(dirs[1], name))
		if err1 != nil || err2 != nil || !bytes.Equal(a, b) {
			t.Errorf("%s differs between two builds with the same seed (%v, %v)", name, err1, err2)
		}
	}
	ja, _ := json.Marshal(reps[0])
	jb, _ := json.Marshal(reps[1])
	elapsed := regexp.MustCompile(`"elapsed":"[^"]*"`)
	if d := cmp.Diff(string(elapsed.ReplaceAll(ja, nil)), string(elapsed.ReplaceAll(jb, nil))); d != "" {
		t.Errorf("reports differ (-first +second):\n%s", d)
	}
	entries, _ := os.ReadDir(dirs[0])
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".sample") {
			t.Errorf("temporary file left behind: %s", e.Name())
		}
	}
	// A different seed draws different databases.
	o.Seed = 8
	dir := filepath.Join(t.TempDir(), "c")
	rep2, err := Build(ctx, "own", orig, dir, ownGolds(), o)
	if err != nil {
		t.Fatal(err)
	}
	a, _ := os.ReadFile(filepath.Join(dirs[0], "own_001.sqlite"))
	b, _ := os.ReadFile(filepath.Join(dir, "own_001.sqlite"))
	if len(rep2.Kept) > 0 && bytes.Equal(a, b) {
		t.Error("seeds 7 and 8 gave the same first database")
	}
}

func keptFiles(r *DBReport) []string {
	var out []string
	for _, k := range r.Kept {
		out = append(out, k.File)
	}
	return out
}

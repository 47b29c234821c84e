package suite

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	_ "github.com/duckdb/duckdb-go/v2" // the "duckdb" driver
)

// TestDuckDB reads a DuckDB schema (PRIMARY KEY, UNIQUE, FOREIGN KEY, NOT
// NULL) and builds a suite in DuckDB files on which the gold runs.
func TestDuckDB(t *testing.T) {
	path := filepath.Join(t.TempDir(), "own.duckdb")
	db, err := sql.Open("duckdb", path)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{
		`CREATE TABLE dept (id INTEGER PRIMARY KEY, name VARCHAR NOT NULL UNIQUE)`,
		`CREATE TABLE emp (id INTEGER PRIMARY KEY, dept_id INTEGER NOT NULL REFERENCES dept(id), salary INTEGER)`,
		`INSERT INTO dept VALUES (1, 'sales'), (2, 'it')`,
		`INSERT INTO emp VALUES (1, 1, 40000), (2, 2, 60000)`,
	} {
		if _, err := db.Exec(s); err != nil {
			t.Fatal(err)
		}
	}
	ctx := context.Background()
	s, err := ReadDuckDB(ctx, db)
	db.Close()
	if err != nil {
		t.Fatal(err)
	}
	want := []*Table{
		{Name: "dept", PrimaryKey: []string{"id"}, Unique: [][]string{{"name"}}, Columns: []*Column{
			{Name: "id", DeclType: "INTEGER", Kind: KindInt, NotNull: true},
			{Name: "name", DeclType: "VARCHAR", Kind: KindText, NotNull: true},
		}},
		{Name: "emp", PrimaryKey: []string{"id"},
			ForeignKeys: []ForeignKey{{Columns: []string{"dept_id"}, RefTable: "dept", RefColumns: []string{"id"}}},
			Columns: []*Column{
				{Name: "id", DeclType: "INTEGER", Kind: KindInt, NotNull: true},
				{Name: "dept_id", DeclType: "INTEGER", Kind: KindInt, NotNull: true},
				{Name: "salary", DeclType: "INTEGER", Kind: KindInt},
			}},
	}
	if d := cmp.Diff(want, s.Tables); d != "" {
		t.Errorf("schema (-want +got):\n%s", d)
	}
	o := DefaultOptions()
	o.Engine, o.Samples = DuckDB, 30
	gold := Gold{Text: "SELECT d.name FROM emp AS e JOIN dept AS d ON e.dept_id = d.id WHERE e.salary > 50000", IDs: []string{"q"}}
	dir := t.TempDir()
	rep, err := Build(ctx, "own", path, dir, []Gold{gold}, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("neighbours %d, separated %d (by the original %d), kept %d", rep.Neighbours, rep.Separated, rep.SeparatedByOriginal, len(rep.Kept))
	if len(rep.Kept) == 0 || rep.Separated <= rep.SeparatedByOriginal {
		t.Fatalf("the DuckDB suite separates nothing new: %+v", rep)
	}
	for _, k := range rep.Kept {
		h, err := sql.Open("duckdb", filepath.Join(dir, k.File)+"?access_mode=READ_ONLY")
		if err != nil {
			t.Fatal(err)
		}
		var orphans int
		if err := h.QueryRow(`SELECT count(*) FROM emp WHERE dept_id NOT IN (SELECT id FROM dept)`).Scan(&orphans); err != nil || orphans != 0 {
			t.Errorf("%s: %d rows break the foreign key (%v)", k.File, orphans, err)
		}
		if err := h.QueryRow(gold.Text).Scan(new(string)); err != nil && err != sql.ErrNoRows {
			t.Errorf("%s: gold fails: %v", k.File, err)
		}
		h.Close()
	}
}

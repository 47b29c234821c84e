package duckdb

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/evalflow/evalflow/engine"
	"github.com/evalflow/evalflow/item"
	"github.com/evalflow/evalflow/table"
)

// makeDB writes a database file in t.TempDir() with a writable connection
// (the executor itself never writes) and returns its path.
func makeDB(t testing.TB, stmts ...string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "test.duckdb")
	db, err := sql.Open("duckdb", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, s := range stmts {
		if _, err := db.Exec(s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
	return path
}

func newExec(t testing.TB, cfg engine.Config) *Executor {
	t.Helper()
	e, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := e.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return e
}

func col(name string, t table.Type) table.Column { return table.Column{Name: name, Type: t} }

func TestExecuteTypes(t *testing.T) {
	path := makeDB(t,
		`CREATE TABLE t (id INTEGER, i BIGINT, s SMALLINT, f FLOAT, d DOUBLE, dec DECIMAL(10,2), v VARCHAR, b BLOB,
			ok BOOLEAN, day DATE, tod TIME, ts TIMESTAMP, tz TIMESTAMPTZ, u UUID, iv INTERVAL, l INTEGER[],
			st STRUCT(a INTEGER, b VARCHAR), m MAP(VARCHAR, INTEGER), h HUGEINT)`,
		`INSERT INTO t VALUES (1, 9007199254740993, -3, 1.1, 2.5, 12.34, 'x', '\x01\x02'::BLOB, true,
			DATE '2024-01-02', TIME '10:30:00.25', TIMESTAMP '2024-01-02 10:30:00', TIMESTAMPTZ '2024-01-02 10:30:00.5+02',
			'0e5a0f40-9c0b-4f7a-8a37-51c9ae0d6f0b', INTERVAL '1 year 2 months 3 days 4 hours', [1, NULL, 3],
			{'a': 1, 'b': 'q'}, MAP {'k': 2, 'a': 1}, 170141183460469231731687303715884105727)`,
		`INSERT INTO t (id) VALUES (2)`,
		`INSERT INTO t (id, v, b, l) VALUES (3, '', ''::BLOB, [])`,
	)
	e := newExec(t, engine.Config{})
	got, err := e.Execute(context.Background(), engine.Query{Text: "SELECT * EXCLUDE (h) FROM t ORDER BY id", DB: path})
	if err != nil {
		t.Fatal(err)
	}
	want := &table.Table{
		Columns: []table.Column{
			col("id", table.TypeInt), col("i", table.TypeInt), col("s", table.TypeInt), col("f", table.TypeFloat),
			col("d", table.TypeFloat), col("dec", table.TypeFloat), col("v", table.TypeString), col("b", table.TypeBytes),
			col("ok", table.TypeBool), col("day", table.TypeString), col("tod", table.TypeString), col("ts", table.TypeString),
			col("tz", table.TypeString), col("u", table.TypeString), col("iv", table.TypeString), col("l", table.TypeString),
			col("st", table.TypeString), col("m", table.TypeString),
		},
		Rows: [][]table.Value{
			{int64(1), int64(9007199254740993), int64(-3), 1.1, 2.5, 12.34, "x", []byte{1, 2}, true,
				"2024-01-02", "10:30:00.25", "2024-01-02 10:30:00", "2024-01-02 08:30:00.5+00",
				"0e5a0f40-9c0b-4f7a-8a37-51c9ae0d6f0b", "1 year 2 months 3 days 04:00:00", "[1,null,3]",
				`{"a":1,"b":"q"}`, `{"k":2,"a":1}`},
			{int64(2), nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil},
			// An empty string and an empty blob are values, not NULL.
			{int64(3), nil, nil, nil, nil, nil, "", []byte{}, nil, nil, nil, nil, nil, nil, nil, "[]", nil, nil},
		},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got)\n%s", diff)
	}

	// HUGEINT: int64 while it fits (SUM of BIGINT is a HUGEINT), float64 for
	// the whole column when a value does not.
	got, err = e.Execute(context.Background(), engine.Query{Text: "SELECT sum(i) AS s FROM t", DB: path})
	if err != nil {
		t.Fatal(err)
	}
	want = &table.Table{Columns: []table.Column{col("s", table.TypeInt)}, Rows: [][]table.Value{{int64(9007199254740993)}}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("sum: (-want +got)\n%s", diff)
	}
	got, err = e.Execute(context.Background(), engine.Query{Text: "SELECT h FROM t WHERE id <= 2 ORDER BY id DESC", DB: path})
	if err != nil {
		t.Fatal(err)
	}
	want = &table.Table{Columns: []table.Column{col("h", table.TypeFloat)}, Rows: [][]table.Value{{nil}, {1.7014118346046923e38}}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("hugeint: (-want +got)\n%s", diff)
	}
}

func TestEmptyResult(t *testing.T) {
	path := makeDB(t, `CREATE TABLE t (a INTEGER, b VARCHAR)`)
	e := newExec(t, engine.Config{})
	got, err := e.Execute(context.Background(), engine.Query{Text: "SELECT a, b AS bee FROM t", DB: path})
	if err != nil {
		t.Fatal(err)
	}
	want := &table.Table{Columns: []table.Column{col("a", table.TypeInt), col("bee", table.TypeString)}, Rows: [][]table.Value{}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got)\n%s", diff)
	}
}

func TestMaxRows(t *testing.T) {
	path := makeDB(t, `CREATE TABLE t (a INTEGER)`, `INSERT INTO t VALUES (1), (2), (3)`)
	e := newExec(t, engine.Config{MaxRows: 2})
	for _, tc := range []struct {
		name      string
		maxRows   int
		rows      int
		truncated bool
	}{
		{"config default", 0, 2, true},
		{"query cap", 1, 1, true},
		{"exact", 3, 3, false},
		{"above", 10, 3, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := e.Execute(context.Background(), engine.Query{Text: "SELECT a FROM t", DB: path, MaxRows: tc.maxRows})
			if err != nil {
				t.Fatal(err)
			}
			if got.NumRows() != tc.rows || got.Truncated != tc.truncated {
				t.Errorf("rows=%d truncated=%v, want %d %v", got.NumRows(), got.Truncated, tc.rows, tc.truncated)
			}
		})
	}
}

func TestMissingFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "nope.duckdb")
	e := newExec(t, engine.Config{})
	_, err := e.Execute(context.Background(), engine.Query{Text: "SELECT 1", DB: path})
	if err == nil || !strings.Contains(err.Error(), "database file not found: "+path) {
		t.Fatalf("err = %v", err)
	}
	if engine.ClassOf(err) != item.ClassExecution {
		t.Errorf("class = %q", engine.ClassOf(err))
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the missing file was created: %v", err)
	}
	if err := e.Prepare(context.Background(), engine.Query{Text: "SELECT 1", DB: path}); err == nil {
		t.Error("Prepare on a missing file succeeded")
	}
	if _, err := e.Describe(context.Background(), path); err == nil {
		t.Error("Describe on a missing file succeeded")
	}
	if _, err := e.Execute(context.Background(), engine.Query{Text: "SELECT 1", DB: "we?ird.duckdb"}); err == nil {
		t.Error("a path with '?' was accepted")
	}
}

func TestErrorClasses(t *testing.T) {
	path := makeDB(t, `CREATE TABLE t (a INTEGER)`, `INSERT INTO t VALUES (1)`)
	before, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "out.csv")
	e := newExec(t, engine.Config{})
	for _, tc := range []struct {
		query, class, msg string
	}{
		{"SELEC a FROM t", item.ClassSyntax, `syntax error at or near "SELEC"`},
		{"SELECT a FROM t WHERE", item.ClassSyntax, "syntax error at end of input"},
		{"SELECT a FROM t WHERE a = 'x", item.ClassSyntax, "unterminated quoted string"},
		{"SELECT a FROM nosuch", item.ClassSchema, "Table with name nosuch does not exist"},
		{"SELECT b FROM t", item.ClassSchema, `Referenced column "b" not found`},
		{`SELECT a FROM t WHERE a = "arizona"`, item.ClassSchema, `Referenced column "arizona" not found`},
		{"SELECT nosuchfn(a) FROM t", item.ClassExecution, "nosuchfn does not exist"},
		{"SELECT CAST('x' AS INTEGER)", item.ClassExecution, "Could not convert string 'x' to INT32"},
		{"DELETE FROM t", item.ClassSafety, "read-only mode"},
		{"DROP TABLE t", item.ClassSafety, "read-only mode"},
		{"INSERT INTO t VALUES (2)", item.ClassSafety, "read-only mode"},
		{"CREATE TABLE u (x INTEGER)", item.ClassSafety, "read-only mode"},
		{"COPY t TO '" + out + "'", item.ClassSafety, "disabled by configuration"},
		{"SELECT * FROM read_csv('" + out + "')", item.ClassSafety, "disabled by configuration"},
		{"SET enable_external_access = true", item.ClassSafety, "configuration has been locked"},
		{"SET access_mode = 'READ_WRITE'", item.ClassSafety, "configuration has been locked"},
	} {
		t.Run(tc.query, func(t *testing.T) {
			_, err := e.Execute(context.Background(), engine.Query{Text: tc.query, DB: path})
			if err == nil {
				t.Fatal("no error")
			}
			if got := engine.ClassOf(err); got != tc.class {
				t.Errorf("class = %q, want %q (%v)", got, tc.class, err)
			}
			if !strings.Contains(err.Error(), tc.msg) {
				t.Errorf("message %q does not contain %q", err, tc.msg)
			}
		})
	}
	after, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if string(before) != string(after) {
		t.Error("the database file changed")
	}
	if _, err := os.Stat(out); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("COPY TO wrote a file: %v", err)
	}
	got, err := e.Execute(context.Background(), engine.Query{Text: "SELECT count(*) FROM t", DB: path})
	if err != nil || got.Rows[0][0] != int64(1) {
		t.Errorf("after errors: %v %v", got, err)
	}
}

// slow takes minutes: a cross join of two large ranges that DuckDB cannot
// short-cut.
const slow = "SELECT count(*) FROM range(100000000) a(x), range(1000000) b(y) WHERE (x * y) % 7919 = 1"

func TestTimeout(t *testing.T) {
	path := makeDB(t, `CREATE TABLE t (a INTEGER)`, `INSERT INTO t VALUES (1)`)
	// MaxOpen 1: the query after the timeout must get a working connection
	// from the same pool.
	e := newExec(t, engine.Config{MaxOpen: 1})
	for i := 0; i < 2; i++ {
		start := time.Now()
		_, err := e.Execute(context.Background(), engine.Query{Text: slow, DB: path, Timeout: 200 * time.Millisecond})
		took := time.Since(start)
		if engine.ClassOf(err) != item.ClassTimeout {
			t.Fatalf("class = %q (%v), want timeout", engine.ClassOf(err), err)
		}
		if took > 1200*time.Millisecond {
			t.Errorf("took %v, want about 200ms", took)
		}
		t.Logf("interrupted after %v: %v", took, err)
		got, err := e.Execute(context.Background(), engine.Query{Text: "SELECT a FROM t", DB: path})
		if err != nil || got.NumRows() != 1 {
			t.Fatalf("connection not reusable: %v %v", got, err)
		}
	}
}

func TestCallerCancel(t *testing.T) {
	path := makeDB(t, `CREATE TABLE t (a INTEGER)`)
	e := newExec(t, engine.Config{})
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	start := time.Now()
	_, err := e.Execute(ctx, engine.Query{Text: slow, DB: path})
	if engine.ClassOf(err) != item.ClassCancelled {
		t.Errorf("class = %q (%v), want cancelled", engine.ClassOf(err), err)
	}
	if took := time.Since(start); took > 1200*time.Millisecond {
		t.Errorf("took %v", took)
	}
}

func TestPrepare(t *testing.T) {
	path := makeDB(t, `CREATE TABLE t (a INTEGER)`)
	e := newExec(t, engine.Config{})
	for _, tc := range []struct{ query, class string }{
		{"SELECT a FROM t", item.ClassNone},
		{slow, item.ClassNone}, // prepared, never run
		{"SELECT a FROM", item.ClassSyntax},
		{"SELECT b FROM t", item.ClassSchema},
		{"SELECT a FROM u", item.ClassSchema},
		{"", item.ClassSyntax},
	} {
		t.Run(tc.query, func(t *testing.T) {
			start := time.Now()
			err := e.Prepare(context.Background(), engine.Query{Text: tc.query, DB: path})
			if got := engine.ClassOf(err); got != tc.class {
				t.Errorf("class = %q (%v), want %q", got, err, tc.class)
			}
			if d := time.Since(start); d > time.Second {
				t.Errorf("prepare took %v", d)
			}
		})
	}
}

func TestDescribe(t *testing.T) {
	path := makeDB(t,
		`CREATE TABLE a (id INTEGER PRIMARY KEY, name VARCHAR NOT NULL)`,
		`CREATE TABLE b (x INTEGER, y INTEGER, note VARCHAR, PRIMARY KEY (x, y))`,
		`CREATE TABLE c (id INTEGER PRIMARY KEY, a_id INTEGER REFERENCES a(id), bx INTEGER, b_y INTEGER, amount DECIMAL(10,2),
			FOREIGN KEY (bx, b_y) REFERENCES b (x, y))`,
		`CREATE VIEW v AS SELECT id, name FROM a`,
		`CREATE SCHEMA s`,
		`CREATE TABLE s.d (ts TIMESTAMP)`,
	)
	e := newExec(t, engine.Config{})
	got, err := e.Describe(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	want := &engine.Schema{Tables: []engine.TableInfo{
		{Name: "a", Columns: []engine.ColumnInfo{
			{Name: "id", DeclType: "INTEGER", Type: table.TypeInt, PrimaryKey: true, NotNull: true},
			{Name: "name", DeclType: "VARCHAR", Type: table.TypeString, NotNull: true},
		}},
		{Name: "b", Columns: []engine.ColumnInfo{
			{Name: "x", DeclType: "INTEGER", Type: table.TypeInt, PrimaryKey: true, NotNull: true},
			{Name: "y", DeclType: "INTEGER", Type: table.TypeInt, PrimaryKey: true, NotNull: true},
			{Name: "note", DeclType: "VARCHAR", Type: table.TypeString},
		}},
		{Name: "c", Columns: []engine.ColumnInfo{
			{Name: "id", DeclType: "INTEGER", Type: table.TypeInt, PrimaryKey: true, NotNull: true},
			{Name: "a_id", DeclType: "INTEGER", Type: table.TypeInt},
			{Name: "bx", DeclType: "INTEGER", Type: table.TypeInt},
			{Name: "b_y", DeclType: "INTEGER", Type: table.TypeInt},
			{Name: "amount", DeclType: "DECIMAL(10,2)", Type: table.TypeFloat},
		}, ForeignKeys: []engine.ForeignKey{
			{Columns: []string{"a_id"}, RefTable: "a", RefColumns: []string{"id"}},
			{Columns: []string{"bx", "b_y"}, RefTable: "b", RefColumns: []string{"x", "y"}},
		}},
		{Name: "v", View: true, Columns: []engine.ColumnInfo{
			{Name: "id", DeclType: "INTEGER", Type: table.TypeInt},
			{Name: "name", DeclType: "VARCHAR", Type: table.TypeString},
		}},
		{Name: "s.d", Columns: []engine.ColumnInfo{
			{Name: "ts", DeclType: "TIMESTAMP", Type: table.TypeString},
		}},
	}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got)\n%s", diff)
	}
}

func TestConcurrentAndEviction(t *testing.T) {
	paths := make([]string, 3)
	for i := range paths {
		paths[i] = makeDB(t, `CREATE TABLE t (a INTEGER)`, `INSERT INTO t VALUES (1), (2), (3)`)
	}
	// One open database at a time forces eviction while others are in use.
	e := newExec(t, engine.Config{MaxOpen: 2, Options: map[string]any{"max_databases": 1.0, "threads": 1}})
	var wg sync.WaitGroup
	errs := make(chan error, 60)
	for g := 0; g < 6; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 10; i++ {
				got, err := e.Execute(context.Background(), engine.Query{Text: "SELECT sum(a) FROM t", DB: paths[(g+i)%len(paths)]})
				if err == nil && got.Rows[0][0] != int64(6) {
					err = errors.New("wrong sum")
				}
				if err != nil {
					errs <- err
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	n := e.dbs.Len()
	if n > 1 {
		t.Errorf("%d databases open, want at most 1", n)
	}
}

func TestOptions(t *testing.T) {
	for _, opts := range []map[string]any{
		{"nosuch": 1}, {"external_access": "yes"}, {"max_databases": 0}, {"threads": 1.5}, {"memory_limit": 5},
	} {
		if _, err := New(engine.Config{Options: opts}); err == nil {
			t.Errorf("New(%v) succeeded", opts)
		}
	}
	csv := filepath.Join(t.TempDir(), "in.csv")
	if err := os.WriteFile(csv, []byte("a,b\n1,x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	path := makeDB(t, `CREATE TABLE t (a INTEGER)`)
	e := newExec(t, engine.Config{Options: map[string]any{"external_access": true, "threads": 2, "memory_limit": "256MB"}})
	got, err := e.Execute(context.Background(), engine.Query{
		Text: "SELECT current_setting('threads') AS th, current_setting('memory_limit') AS ml, b FROM read_csv('" + csv + "')", DB: path})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([][]table.Value{{int64(2), "244.1 MiB", "x"}}, got.Rows); diff != "" {
		t.Errorf("(-want +got)\n%s", diff)
	}
}

func TestConnectionStateDoesNotLeak(t *testing.T) {
	path := makeDB(t, `CREATE TABLE t (a VARCHAR)`, `INSERT INTO t VALUES ('a')`, `CREATE SCHEMA s`, `CREATE TABLE s.t (a VARCHAR)`)
	// One connection: if a state-changing statement's connection were
	// reused, the next query would see the change.
	e := newExec(t, engine.Config{MaxOpen: 1})
	ctx := context.Background()
	for _, stmt := range []string{"USE s", "SELECT 1; USE s", "SET VARIABLE x = 1"} {
		if _, err := e.Execute(ctx, engine.Query{Text: stmt, DB: path}); err != nil {
			t.Logf("%s: %v", stmt, err)
		}
		got, err := e.Execute(ctx, engine.Query{Text: "SELECT count(*), getvariable('x') FROM t", DB: path})
		if err != nil || got.Rows[0][0] != int64(1) || got.Rows[0][1] != nil {
			t.Errorf("after %q: %v %v", stmt, got, err)
		}
	}
}

func TestEmptyQuery(t *testing.T) {
	path := makeDB(t, `CREATE TABLE t (a VARCHAR)`)
	e := newExec(t, engine.Config{})
	for _, q := range []string{"", "  ", "-- nothing", "/* x */ ;"} {
		_, err := e.Execute(context.Background(), engine.Query{Text: q, DB: path})
		if engine.ClassOf(err) != item.ClassSyntax {
			t.Errorf("Execute(%q) = %v, want a syntax error", q, err)
		}
	}
}

func TestRegistered(t *testing.T) {
	x, err := engine.New(context.Background(), Kind, engine.Config{})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := x.(engine.Preparer); !ok {
		t.Error("not a Preparer")
	}
	if _, ok := x.(engine.Describer); !ok {
		t.Error("not a Describer")
	}
	c, ok := x.(interface{ Close() error })
	if !ok {
		t.Fatal("not a Closer")
	}
	c.Close()
}

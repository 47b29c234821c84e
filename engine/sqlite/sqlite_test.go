package sqlite

import (
	"bufio"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"modernc.org/libc"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/evalflow/evalflow/engine"
	"github.com/evalflow/evalflow/internal/shareddata"
	"github.com/evalflow/evalflow/item"
	"github.com/evalflow/evalflow/table"
)

// makeDB writes a database file in t.TempDir() with a writable connection
// (the executor itself never writes) and returns its path.
func makeDB(t testing.TB, stmts ...string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "test.sqlite")
	db, err := sql.Open("sqlite", path)
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

// openDB opens path with the driver alone, without the executor (read and
// write, SQLite's defaults); closed when the test ends.
func openDB(t testing.TB, path string) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// openConn is one connection of openDB(path), closed when the test ends.
func openConn(t testing.TB, path string) *sql.Conn {
	t.Helper()
	conn, err := openDB(t, path).Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

// holdWriteLock takes path's exclusive lock (BEGIN EXCLUSIVE) as another
// process's writer would; the returned pool's one connection holds it
// until COMMIT.
func holdWriteLock(t testing.TB, path string) *sql.DB {
	t.Helper()
	w := openDB(t, path)
	w.SetMaxOpenConns(1)
	if _, err := w.Exec(`BEGIN EXCLUSIVE`); err != nil {
		t.Fatal(err)
	}
	return w
}

func col(name string, t table.Type) table.Column { return table.Column{Name: name, Type: t} }

var typesDB = []string{
	`CREATE TABLE t (i INTEGER, r REAL, s TEXT, b BLOB, n NUMERIC, v VARCHAR(10), d DATE, dt DATETIME, u)`,
	`INSERT INTO t VALUES (1, 1.5, 'a', x'0102', 10, 'x', '2024-01-02', '2024-01-02 10:30:00', 'u')`,
	`INSERT INTO t VALUES (NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL)`,
	`INSERT INTO t VALUES (2, 2.0, CAST(x'ff61' AS TEXT), x'', 2.5, 'y', '2024-02-29', '2024-02-29 00:00:00', 3)`,
}

func TestExecuteTypes(t *testing.T) {
	path := makeDB(t, typesDB...)
	e := newExec(t, engine.Config{})
	got, err := e.Execute(context.Background(), engine.Query{Text: "SELECT * FROM t ORDER BY rowid", DB: path})
	if err != nil {
		t.Fatal(err)
	}
	want := &table.Table{
		Columns: []table.Column{
			col("i", table.TypeInt), col("r", table.TypeFloat), col("s", table.TypeString), col("b", table.TypeBytes),
			col("n", table.TypeAny), col("v", table.TypeString), col("d", table.TypeAny), col("dt", table.TypeAny), col("u", table.TypeAny),
		},
		Rows: [][]table.Value{
			{int64(1), 1.5, "a", []byte{1, 2}, int64(10), "x", "2024-01-02", "2024-01-02 10:30:00", "u"},
			{nil, nil, nil, nil, nil, nil, nil, nil, nil},
			// Invalid UTF-8 is kept byte for byte; an empty blob is an empty
			// (non-nil) byte slice.
			{int64(2), 2.0, "\xffa", []byte{}, 2.5, "y", "2024-02-29", "2024-02-29 00:00:00", int64(3)},
		},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got)\n%s", diff)
	}
}

func TestTypeContradicted(t *testing.T) {
	// SQLite lets an INTEGER column hold text; the column type must then not
	// claim int.
	path := makeDB(t, `CREATE TABLE t (e INTEGER)`, `INSERT INTO t VALUES (1), ('high')`)
	e := newExec(t, engine.Config{})
	got, err := e.Execute(context.Background(), engine.Query{Text: "SELECT e FROM t ORDER BY rowid", DB: path})
	if err != nil {
		t.Fatal(err)
	}
	want := &table.Table{Columns: []table.Column{col("e", table.TypeAny)}, Rows: [][]table.Value{{int64(1)}, {"high"}}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got)\n%s", diff)
	}
}

func TestTypeOf(t *testing.T) {
	for decl, want := range map[string]table.Type{
		"INTEGER": table.TypeInt, "int": table.TypeInt, "BIGINT": table.TypeInt, "REAL": table.TypeFloat,
		"DOUBLE PRECISION": table.TypeFloat, "FLOAT": table.TypeFloat, "TEXT": table.TypeString,
		"VARCHAR(255)": table.TypeString, "CLOB": table.TypeString, "BLOB": table.TypeBytes,
		"": table.TypeAny, "NUMERIC": table.TypeAny, "DECIMAL(10,2)": table.TypeAny, "DATE": table.TypeAny,
		"BOOLEAN": table.TypeAny,
	} {
		if got := TypeOf(decl); got != want {
			t.Errorf("TypeOf(%q) = %v, want %v", decl, got, want)
		}
	}
}

func TestEmptyResult(t *testing.T) {
	path := makeDB(t, `CREATE TABLE t (a INTEGER, b TEXT)`)
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
	// An endless result is cut too.
	got, err := e.Execute(context.Background(), engine.Query{
		Text: "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c) SELECT x FROM c", DB: path, MaxRows: 5})
	if err != nil || got.NumRows() != 5 || !got.Truncated {
		t.Errorf("endless: %v rows=%d truncated=%v", err, got.NumRows(), got.Truncated)
	}
}

func TestMissingFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "nope.sqlite")
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
}

func TestErrorClasses(t *testing.T) {
	path := makeDB(t, `CREATE TABLE t (a INTEGER)`, `INSERT INTO t VALUES (1)`)
	before, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	e := newExec(t, engine.Config{})
	for _, tc := range []struct {
		query, class, msg string
	}{
		{"SELEC a FROM t", item.ClassSyntax, `near "SELEC": syntax error`},
		{"SELECT a FROM t WHERE", item.ClassSyntax, "incomplete input"},
		{"SELECT a FROM t WHERE a = 'x", item.ClassSyntax, "unrecognized token"},
		{"SELECT a FROM nosuch", item.ClassSchema, "no such table: nosuch"},
		{"SELECT b FROM t", item.ClassSchema, "no such column: b"},
		{"SELECT nosuchfn(a) FROM t", item.ClassExecution, "no such function: nosuchfn"},
		{"SELECT abs(-9223372036854775807 - 1)", item.ClassExecution, "integer overflow"},
		{"DELETE FROM t", item.ClassSafety, "refused before running"},
		{"DROP TABLE t", item.ClassSafety, "refused before running"},
		{"INSERT INTO t VALUES (2)", item.ClassSafety, "refused before running"},
		{"CREATE TABLE u (x)", item.ClassSafety, "refused before running"},
		{"ATTACH DATABASE 'evil.sqlite' AS evil", item.ClassSafety, "refused before running"},
		{"VACUUM INTO 'copy.sqlite'", item.ClassSafety, "refused before running"},
		{"PRAGMA query_only = 0; DELETE FROM t", item.ClassSafety, "refused before running"},
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
	got, err := e.Execute(context.Background(), engine.Query{Text: "SELECT count(*) FROM t", DB: path})
	if err != nil || got.Rows[0][0] != int64(1) {
		t.Errorf("after errors: %v %v", got, err)
	}
}

// slow is a query that needs about 1e9 VM steps before its only row.
const slow = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c WHERE x < 1000000000) SELECT count(*) FROM c"

// slowLater returns its first row at once and its second never: the
// interrupt must reach a step inside rows.Next, not only the first one.
const slowLater = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c) SELECT x FROM c WHERE x = 1 OR x > 1e15"

func TestTimeout(t *testing.T) {
	path := makeDB(t, `CREATE TABLE t (a INTEGER)`, `INSERT INTO t VALUES (1)`)
	// MaxOpen 1: the query after the timeout must get a working connection
	// from the same pool.
	e := newExec(t, engine.Config{MaxOpen: 1})
	for _, tc := range []struct{ name, query string }{{"first step", slow}, {"later step", slowLater}} {
		t.Run(tc.name, func(t *testing.T) {
			start := time.Now()
			_, err := e.Execute(context.Background(), engine.Query{Text: tc.query, DB: path, Timeout: 200 * time.Millisecond})
			took := time.Since(start)
			if engine.ClassOf(err) != item.ClassTimeout {
				t.Fatalf("class = %q (%v), want timeout", engine.ClassOf(err), err)
			}
			if took > time.Second {
				t.Errorf("took %v, want about 200ms", took)
			}
			t.Logf("interrupted after %v: %v", took, err)
			got, err := e.Execute(context.Background(), engine.Query{Text: "SELECT a FROM t", DB: path})
			if err != nil || got.NumRows() != 1 {
				t.Fatalf("connection not reusable: %v %v", got, err)
			}
		})
	}
}

func TestCallerCancel(t *testing.T) {
	path := makeDB(t, `CREATE TABLE t (a INTEGER)`)
	e := newExec(t, engine.Config{})
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	start := time.Now()
	_, err := e.Execute(ctx, engine.Query{Text: slowLater, DB: path})
	if engine.ClassOf(err) != item.ClassCancelled {
		t.Errorf("class = %q (%v), want cancelled", engine.ClassOf(err), err)
	}
	if took := time.Since(start); took > time.Second {
		t.Errorf("took %v", took)
	}
}

func TestInterruptHandle(t *testing.T) {
	// Pins the driver detail interrupt.go depends on.
	path := makeDB(t, `CREATE TABLE t (a INTEGER)`)
	conn := openConn(t, path)
	var h uintptr
	if err := conn.Raw(func(dc any) error { h = handleOf(dc); return nil }); err != nil {
		t.Fatal(err)
	}
	if h == 0 {
		t.Fatal("cannot read the sqlite3* handle of a modernc.org/sqlite connection; see interrupt.go")
	}
	if handleOf(nil) != 0 || handleOf(42) != 0 || handleOf(&struct{ db string }{}) != 0 {
		t.Error("handleOf accepted a value that is not a driver connection")
	}
}

// TestInterruptBeforeStep: a context that ends before the statement
// starts stepping (SQLite drops an interrupt that arrives while none of
// the connection's statements runs) still stops it: watch interrupts
// again until stopped. With one interrupt, the query below runs for
// minutes.
func TestInterruptBeforeStep(t *testing.T) {
	path := makeDB(t, `CREATE TABLE t (a INTEGER)`)
	conn := openConn(t, path)
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // ended before anything runs: the first interrupt is lost
	var h uintptr
	_ = conn.Raw(func(dc any) error { h = handleOf(dc); return nil })
	stop, armed := watch(ctx, conn)
	if !armed {
		t.Fatal("watch could not arm")
	}
	defer stop()                      // before conn.Close, also when the test fails
	time.Sleep(20 * time.Millisecond) // the first interrupts land on an idle connection
	start := time.Now()
	done := make(chan error, 1)
	go func() {
		var n int64
		done <- conn.QueryRowContext(context.Background(), slow).Scan(&n)
	}()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "interrupt") {
			t.Errorf("err = %v, want SQLite's interrupted", err)
		}
		t.Logf("stopped after %v: %v", time.Since(start), err)
	case <-time.After(20 * time.Second):
		// Stop it by hand so the test fails instead of hanging.
		tls := libc.NewTLS()
		for len(done) == 0 {
			sqlite3.Xsqlite3_interrupt(tls, h)
			time.Sleep(10 * time.Millisecond)
		}
		tls.Close()
		t.Fatal("the query was not interrupted within 20 s")
	}
	stop()
	stop() // a second stop does nothing (and does not block)
	// The connection works again once stopped.
	var one int
	if err := conn.QueryRowContext(context.Background(), "SELECT 1").Scan(&one); err != nil || one != 1 {
		t.Fatalf("after stop: %v %d", err, one)
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
		`CREATE TABLE a (id INTEGER PRIMARY KEY, name TEXT NOT NULL)`,
		`CREATE TABLE b (x INT, y INT, note, PRIMARY KEY (x, y))`,
		`CREATE TABLE c (id INTEGER PRIMARY KEY, a_id INTEGER REFERENCES a(id), bx INT, by INT, a2 INTEGER REFERENCES a,
			FOREIGN KEY (bx, by) REFERENCES b (x, y))`,
		`CREATE VIEW v AS SELECT id, name FROM a`,
		`CREATE INDEX ix ON c(a_id)`,
	)
	e := newExec(t, engine.Config{})
	got, err := e.Describe(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	want := &engine.Schema{Tables: []engine.TableInfo{
		{Name: "a", Columns: []engine.ColumnInfo{
			{Name: "id", DeclType: "INTEGER", Type: table.TypeInt, PrimaryKey: true},
			{Name: "name", DeclType: "TEXT", Type: table.TypeString, NotNull: true},
		}},
		{Name: "b", Columns: []engine.ColumnInfo{
			{Name: "x", DeclType: "INT", Type: table.TypeInt, PrimaryKey: true},
			{Name: "y", DeclType: "INT", Type: table.TypeInt, PrimaryKey: true},
			{Name: "note", Type: table.TypeAny},
		}},
		{Name: "c", Columns: []engine.ColumnInfo{
			{Name: "id", DeclType: "INTEGER", Type: table.TypeInt, PrimaryKey: true},
			{Name: "a_id", DeclType: "INTEGER", Type: table.TypeInt},
			{Name: "bx", DeclType: "INT", Type: table.TypeInt},
			{Name: "by", DeclType: "INT", Type: table.TypeInt},
			{Name: "a2", DeclType: "INTEGER", Type: table.TypeInt},
		}, ForeignKeys: []engine.ForeignKey{
			// SQLite lists foreign keys last declared first.
			{Columns: []string{"bx", "by"}, RefTable: "b", RefColumns: []string{"x", "y"}},
			{Columns: []string{"a2"}, RefTable: "a", RefColumns: []string{"id"}},
			{Columns: []string{"a_id"}, RefTable: "a", RefColumns: []string{"id"}},
		}},
		{Name: "v", View: true, Columns: []engine.ColumnInfo{
			{Name: "id", DeclType: "INTEGER", Type: table.TypeInt},
			{Name: "name", DeclType: "TEXT", Type: table.TypeString},
		}},
	}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got)\n%s", diff)
	}
	if tb, ok := got.Table("A"); !ok || tb.Name != "a" {
		t.Errorf("Table(%q) = %v, %v", "A", tb, ok)
	}
}

func TestConcurrentAndEviction(t *testing.T) {
	paths := make([]string, 3)
	for i := range paths {
		paths[i] = makeDB(t, `CREATE TABLE t (a INTEGER)`, `INSERT INTO t VALUES (1), (2), (3)`)
	}
	// One cached database at a time forces eviction while others are in use.
	e := newExec(t, engine.Config{MaxOpen: 2, Options: map[string]any{"max_databases": 1.0}})
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
		t.Errorf("%d databases cached, want at most 1", n)
	}
}

func TestOptions(t *testing.T) {
	for _, opts := range []map[string]any{
		{"nosuch": 1}, {"immutable": "yes"}, {"max_databases": 0}, {"max_databases": 1.5},
	} {
		if _, err := New(engine.Config{Options: opts}); err == nil {
			t.Errorf("New(%v) succeeded", opts)
		}
	}
	path := makeDB(t, `CREATE TABLE t (a INTEGER)`, `INSERT INTO t VALUES (7)`)
	e := newExec(t, engine.Config{Options: map[string]any{"immutable": true, "max_databases": 2}})
	got, err := e.Execute(context.Background(), engine.Query{Text: "SELECT a FROM t", DB: path})
	if err != nil || got.Rows[0][0] != int64(7) {
		t.Errorf("immutable: %v %v", got, err)
	}
}

func TestPathNeedsEscaping(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "we?ird #dir%20")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	src := makeDB(t, `CREATE TABLE t (a INTEGER)`, `INSERT INTO t VALUES (5)`)
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "db.sqlite")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	e := newExec(t, engine.Config{})
	got, err := e.Execute(context.Background(), engine.Query{Text: "SELECT a FROM t", DB: path})
	if err != nil || got.Rows[0][0] != int64(5) {
		t.Errorf("%v %v", got, err)
	}
}

func TestRegistered(t *testing.T) {
	found := false
	for _, n := range engine.Names() {
		found = found || n == Kind
	}
	if !found {
		t.Fatalf("kind %q not in %v", Kind, engine.Names())
	}
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

// sharedData returns ../shared/data/rel (shareddata.Dir).
func sharedData(t *testing.T, rel string) string { return shareddata.Dir(t, rel) }

func TestGeoQuery(t *testing.T) {
	path := sharedData(t, "geoquery/geography.sqlite")
	e := newExec(t, engine.Config{})
	ctx := context.Background()

	// Golds use double-quoted string literals; SQLite's DQS fallback treats
	// "arizona" as a string since no column has that name. A bare column
	// keeps its declared spelling, not the query's.
	got, err := e.Execute(ctx, engine.Query{Text: `SELECT STATE_NAME FROM STATE WHERE STATE_NAME = "arizona"`, DB: path})
	if err != nil {
		t.Fatal(err)
	}
	want := &table.Table{Columns: []table.Column{col("state_name", table.TypeString)}, Rows: [][]table.Value{{"arizona"}}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got)\n%s", diff)
	}

	s, err := e.Describe(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tb := range s.Tables {
		names = append(names, tb.Name)
	}
	for _, n := range []string{"state", "city", "border_info", "highlow", "lake", "mountain", "river"} {
		if _, ok := s.Table(n); !ok {
			t.Errorf("Describe: no table %q in %v", n, names)
		}
	}

	// Every conformance gold runs and returns the row count recorded by the
	// official tooling (Python's sqlite3).
	f, err := os.Open(sharedData(t, "geoquery/conformance/items.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	n := 0
	for sc.Scan() {
		var it struct {
			ID       string `json:"id"`
			Gold     string `json:"gold"`
			GoldRows int    `json:"gold_rows"`
		}
		if err := json.Unmarshal(sc.Bytes(), &it); err != nil {
			t.Fatal(err)
		}
		got, err := e.Execute(ctx, engine.Query{Text: it.Gold, DB: path})
		if err != nil {
			t.Errorf("%s: %v", it.ID, err)
			continue
		}
		if got.NumRows() != it.GoldRows {
			t.Errorf("%s: %d rows, want %d", it.ID, got.NumRows(), it.GoldRows)
		}
		n++
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	t.Logf("%d golds executed", n)
}

func TestConnectionStateDoesNotLeak(t *testing.T) {
	path := makeDB(t, `CREATE TABLE t (a TEXT)`, `INSERT INTO t VALUES ('a')`)
	// One connection: if a state-changing statement's connection were
	// reused, the next query would see the change.
	e := newExec(t, engine.Config{MaxOpen: 1})
	ctx := context.Background()
	for _, stmt := range []string{
		"PRAGMA case_sensitive_like = 1",
		"SELECT 1; PRAGMA case_sensitive_like = 1",
		"BEGIN",
	} {
		if _, err := e.Execute(ctx, engine.Query{Text: stmt, DB: path}); err != nil {
			t.Logf("%s: %v", stmt, err)
		}
		got, err := e.Execute(ctx, engine.Query{Text: "SELECT count(*) FROM t WHERE a LIKE 'A'", DB: path})
		if err != nil || got.Rows[0][0] != int64(1) {
			t.Errorf("after %q: %v %v", stmt, got, err)
		}
	}
}

func TestEmptyQuery(t *testing.T) {
	path := makeDB(t, `CREATE TABLE t (a TEXT)`)
	e := newExec(t, engine.Config{})
	for _, q := range []string{"", "  ", "-- nothing", "/* x */ ;"} {
		_, err := e.Execute(context.Background(), engine.Query{Text: q, DB: path})
		if engine.ClassOf(err) != item.ClassSyntax {
			t.Errorf("Execute(%q) = %v, want a syntax error", q, err)
		}
		if err := e.Prepare(context.Background(), engine.Query{Text: q, DB: path}); engine.ClassOf(err) != item.ClassSyntax {
			t.Errorf("Prepare(%q) = %v, want a syntax error", q, err)
		}
	}
}

// TestPrepareExecute: PrepareExecute gives exactly what Prepare, then
// (when it passes) Execute, give for every kind of text — a result, a
// syntax or schema error at the check, an error while running, a refused
// write, empty text, a script, a parameter left unbound, a trailing
// comment — and is interrupted by its timeout and by the caller.
func TestPrepareExecute(t *testing.T) {
	path := makeDB(t, append(typesDB, `CREATE TABLE u (a INTEGER)`, `INSERT INTO u VALUES (1), (2), (2)`)...)
	e := newExec(t, engine.Config{MaxRows: 2})
	ctx := context.Background()
	for _, text := range []string{
		"SELECT * FROM t",
		"SELECT a FROM u ORDER BY a",
		"SELECT DISTINCT a FROM u",
		"SELECT a FROM u WHERE a = 9",
		"SELECT a FROM u; -- done",
		"SELECT a FROM u;;",
		"/* c */ SELECT a FROM u",
		"SELECT a FROM u WHERE a = ?",
		"SELECT a FROM u WHERE a = :x",
		"SELEC a FROM u",
		"SELECT a FROM",
		"SELECT b FROM u",
		"SELECT a FROM nosuch",
		"SELECT nosuchfn(a) FROM u",
		"SELECT abs(-9223372036854775807 - 1)",
		"DELETE FROM u",
		"DELET FROM u",
		"PRAGMA query_only = 0; DELETE FROM u",
		"SELECT 1; SELECT 2",
		"",
		" ; -- nothing",
	} {
		t.Run(text, func(t *testing.T) {
			q := engine.Query{Text: text, DB: path}
			wantPrep := e.Prepare(ctx, q)
			var wantRes *table.Table
			var wantErr error
			if wantPrep == nil {
				wantRes, wantErr = e.Execute(ctx, q)
			}
			prep, res, err, took := e.PrepareExecute(ctx, q)
			if fmt.Sprint(prep) != fmt.Sprint(wantPrep) || engine.ClassOf(prep) != engine.ClassOf(wantPrep) {
				t.Errorf("check: %v (%s), want %v (%s)", prep, engine.ClassOf(prep), wantPrep, engine.ClassOf(wantPrep))
			}
			if fmt.Sprint(err) != fmt.Sprint(wantErr) || engine.ClassOf(err) != engine.ClassOf(wantErr) {
				t.Errorf("run: %v (%s), want %v (%s)", err, engine.ClassOf(err), wantErr, engine.ClassOf(wantErr))
			}
			if diff := cmp.Diff(wantRes, res); diff != "" {
				t.Errorf("result (-want +got):\n%s", diff)
			}
			if prep != nil && (res != nil || err != nil || took != 0) {
				t.Errorf("a failed check ran the query: %v %v %v", res, err, took)
			}
		})
	}
	missing := filepath.Join(t.TempDir(), "missing.sqlite")
	if prep, _, _, _ := e.PrepareExecute(ctx, engine.Query{Text: "SELECT 1", DB: missing}); !engine.Unavailable(prep) {
		t.Errorf("missing database: %v", prep)
	}
	// The timeout and a cancellation interrupt the run, as Execute's.
	start := time.Now()
	prep, _, err, _ := e.PrepareExecute(ctx, engine.Query{Text: slowLater, DB: path, Timeout: 200 * time.Millisecond})
	if prep != nil || engine.ClassOf(err) != item.ClassTimeout || time.Since(start) > time.Second {
		t.Errorf("timeout: %v %v after %v", prep, err, time.Since(start))
	}
	cctx, cancel := context.WithCancel(ctx)
	time.AfterFunc(100*time.Millisecond, cancel)
	if prep, _, err, _ := e.PrepareExecute(cctx, engine.Query{Text: slowLater, DB: path}); prep != nil || engine.ClassOf(err) != item.ClassCancelled {
		t.Errorf("cancel: %v %v", prep, err)
	}
	if got, err := e.Execute(ctx, engine.Query{Text: "SELECT count(*) FROM u", DB: path}); err != nil || got.Rows[0][0] != int64(3) {
		t.Errorf("afterwards: %v %v", got, err)
	}
}

// TestReadLockHeld: a rollback-journal database is read under one held
// shared lock (locking_mode EXCLUSIVE): a writer cannot commit while the
// executor has the file open, so a run reads one state of it, and can
// once the executor closes.
func TestReadLockHeld(t *testing.T) {
	path := makeDB(t, `CREATE TABLE t (x INTEGER)`, `INSERT INTO t VALUES (1)`)
	if !rollbackJournal(path) {
		t.Fatal("a new database should be in rollback-journal mode")
	}
	e, err := New(engine.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	q := engine.Query{Text: `SELECT x FROM t`, DB: path}
	if _, err := e.Execute(context.Background(), q); err != nil {
		t.Fatal(err)
	}
	w, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if _, err := w.Exec(`INSERT INTO t VALUES (2)`); err == nil || !strings.Contains(err.Error(), "locked") {
		t.Fatalf("a write while the executor holds the file: err = %v, want database is locked", err)
	}
	got, err := e.Execute(context.Background(), q)
	if err != nil || len(got.Rows) != 1 {
		t.Fatalf("after the refused write: %v rows, err %v", got, err)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Exec(`INSERT INTO t VALUES (2)`); err != nil {
		t.Fatalf("a write after Close: %v", err)
	}
}

// TestWALDatabase: a database in WAL mode keeps SQLite's normal locking,
// so the executor's connections read it side by side.
func TestWALDatabase(t *testing.T) {
	path := makeDB(t, `PRAGMA journal_mode=WAL`, `CREATE TABLE t (x INTEGER)`, `INSERT INTO t VALUES (1), (2)`)
	if rollbackJournal(path) {
		t.Fatal("the WAL database was taken for a rollback-journal one")
	}
	e := newExec(t, engine.Config{MaxOpen: 4})
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got, err := e.Execute(context.Background(), engine.Query{Text: `SELECT x FROM t, (SELECT 1 FROM t)`, DB: path})
			if err == nil && len(got.Rows) != 4 {
				err = fmt.Errorf("%d rows, want 4", len(got.Rows))
			}
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
}

// TestTimeoutDuringLockWait: a query whose own timeout (or a caller's
// deadline, or a cancel) ends while it waits for a lock another
// connection holds stops then, not at the end of the executor's busy wait
// (5 s here): SQLite's busy wait ignores interrupts, so such a query keeps
// the driver's context-aware busy handler (Executor.dctx).
func TestTimeoutDuringLockWait(t *testing.T) {
	path := makeDB(t, `CREATE TABLE t (x INTEGER)`, `INSERT INTO t VALUES (1)`)
	w := holdWriteLock(t, path)
	defer w.Exec(`COMMIT`)
	e := newExec(t, engine.Config{Timeout: 10 * time.Second}) // busy wait 5 s
	q := engine.Query{Text: `SELECT x FROM t`, DB: path, Timeout: 200 * time.Millisecond}
	for _, tc := range []struct {
		name string
		run  func(ctx context.Context, q engine.Query) error
	}{
		{"Execute", func(ctx context.Context, q engine.Query) error { _, err := e.Execute(ctx, q); return err }},
		{"PrepareExecute", func(ctx context.Context, q engine.Query) error {
			perr, _, err, _ := e.PrepareExecute(ctx, q)
			return errors.Join(perr, err)
		}},
	} {
		t.Run(tc.name+"/query timeout", func(t *testing.T) {
			start := time.Now()
			err := tc.run(context.Background(), q)
			if took := time.Since(start); took > 2*time.Second {
				t.Errorf("returned after %v, want about the 200ms timeout", took)
			}
			if engine.ClassOf(err) != item.ClassTimeout {
				t.Errorf("class = %q (%v), want timeout", engine.ClassOf(err), err)
			}
		})
		t.Run(tc.name+"/caller deadline", func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
			defer cancel()
			start := time.Now()
			err := tc.run(ctx, engine.Query{Text: q.Text, DB: q.DB})
			if took := time.Since(start); took > 2*time.Second {
				t.Errorf("returned after %v, want about the caller's 200ms", took)
			}
			if err == nil {
				t.Error("no error")
			}
		})
	}
}

// TestLockedOutIsHarnessError: a query that cannot get its lock (another
// process holds the file for writing past the busy wait) fails as the
// harness's failure (engine.Unavailable, not a timeout: the busy wait ends
// first), after waiting for the lock, and runs
// once the writer is done.
func TestLockedOutIsHarnessError(t *testing.T) {
	path := makeDB(t, `CREATE TABLE t (x INTEGER)`, `INSERT INTO t VALUES (1)`)
	w := holdWriteLock(t, path)
	e := newExec(t, engine.Config{Timeout: 4 * time.Second})
	q := engine.Query{Text: `SELECT x FROM t`, DB: path}
	start := time.Now()
	_, err := e.Execute(context.Background(), q)
	took := time.Since(start)
	var ee *engine.Error
	if !errors.As(err, &ee) || !engine.Unavailable(err) || ee.Class != item.ClassExecution || !strings.Contains(ee.Msg, "locked") {
		t.Fatalf("locked out: err = %#v, want an Unavailable execution error saying the database is locked", err)
	}
	if took < 1900*time.Millisecond {
		t.Errorf("locked out after %v, want it to wait the busy wait of 2s (half the 4s timeout) first", took)
	}
	if _, err := w.Exec(`COMMIT`); err != nil {
		t.Fatal(err)
	}
	if got, err := e.Execute(context.Background(), q); err != nil || len(got.Rows) != 1 {
		t.Fatalf("after the writer committed: %v, %v", got, err)
	}
}

// TestDSN: the held lock only for a rollback-journal database file, never
// with immutable (which takes no locks at all), and a busy wait below the
// query timeout.
func TestDSN(t *testing.T) {
	rollback := makeDB(t, `CREATE TABLE t (x INTEGER)`)
	dir := t.TempDir()
	short := filepath.Join(dir, "short.sqlite")
	notDB := filepath.Join(dir, "text.sqlite")
	empty := filepath.Join(dir, "empty.sqlite")
	os.WriteFile(short, []byte("SQLite format 3"), 0o644)
	os.WriteFile(notDB, []byte(strings.Repeat("not a database ", 10)), 0o644)
	os.WriteFile(empty, nil, 0o644)
	e := newExec(t, engine.Config{Timeout: 3 * time.Second})
	imm := newExec(t, engine.Config{Options: map[string]any{"immutable": true}})
	const held = "locking_mode(EXCLUSIVE)"
	for _, c := range []struct {
		e    *Executor
		path string
		held bool
	}{{e, rollback, true}, {e, short, false}, {e, notDB, false}, {e, empty, false}, {e, filepath.Join(dir, "missing"), false}, {imm, rollback, false}} {
		d := c.e.dsn(c.path)
		if strings.Contains(d, held) != c.held {
			t.Errorf("%s: %s, held lock %v", c.path, d, c.held)
		}
		if c.e == imm && !strings.Contains(d, "immutable=1") {
			t.Errorf("immutable: %s", d)
		}
	}
	if d := e.dsn(rollback); !strings.Contains(d, "busy_timeout(1500)") {
		t.Errorf("3s timeout: %s, want a busy wait of 1500 ms", d)
	}
	if d := imm.dsn(rollback); !strings.Contains(d, "busy_timeout(5000)") {
		t.Errorf("default timeout: %s, want the 5000 ms cap", d)
	}
}

// TestEvictionReleasesLock: a database closed to make room for another
// (max_databases) gives up its held read lock, so a run over many
// databases holds at most max_databases of them.
func TestEvictionReleasesLock(t *testing.T) {
	a := makeDB(t, `CREATE TABLE t (x INTEGER)`)
	b := makeDB(t, `CREATE TABLE t (x INTEGER)`)
	e := newExec(t, engine.Config{Options: map[string]any{"max_databases": 1}})
	if _, err := e.Execute(context.Background(), engine.Query{Text: `SELECT x FROM t`, DB: a}); err != nil {
		t.Fatal(err)
	}
	w, err := sql.Open("sqlite", a)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if _, err := w.Exec(`INSERT INTO t VALUES (1)`); err == nil {
		t.Fatal("a write while the executor holds the database succeeded")
	}
	if _, err := e.Execute(context.Background(), engine.Query{Text: `SELECT x FROM t`, DB: b}); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Exec(`INSERT INTO t VALUES (1)`); err != nil {
		t.Fatalf("a write after the database was evicted: %v", err)
	}
}

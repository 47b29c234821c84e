package postgres

import (
	"context"
	"errors"
	"math"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/evalflow/evalflow/engine"
	"github.com/evalflow/evalflow/item"
	"github.com/evalflow/evalflow/table"
)

func col(name string, t table.Type) table.Column { return table.Column{Name: name, Type: t} }

func TestExecuteTypes(t *testing.T) {
	db := makeDB(t,
		`CREATE TABLE t (id int4, s int2, i int8, f4 float4, f8 float8, n numeric(10,2), nn numeric, v varchar(10), c char(3),
			tx text, b bytea, ok bool, d date, ts timestamp, tz timestamptz, j json, jb jsonb, u uuid, a int4[], iv interval)`,
		`INSERT INTO t VALUES (1, -3, 9007199254740993, 1.1, 2.5, 12.34, 'NaN', 'x', 'ab', 'é', '\x0102', true,
			'2024-01-02', '2024-01-02 10:30:00', '2024-01-02 10:30:00.5+02', '{"b": 1, "a": [1, 2]}', '{"b": 1, "a": [1, 2]}',
			'0e5a0f40-9c0b-4f7a-8a37-51c9ae0d6f0b', '{1,NULL,3}', '1 year 2 mons 3 days 04:00:00')`,
		`INSERT INTO t (id) VALUES (2)`,
		`INSERT INTO t (id, tx, b) VALUES (3, '', '')`,
	)
	e := newExec(t, engine.Config{})
	got, err := e.Execute(context.Background(), engine.Query{Text: "SELECT * FROM t ORDER BY id", DB: db})
	if err != nil {
		t.Fatal(err)
	}
	want := &table.Table{
		Columns: []table.Column{
			col("id", table.TypeInt), col("s", table.TypeInt), col("i", table.TypeInt), col("f4", table.TypeFloat),
			col("f8", table.TypeFloat), col("n", table.TypeFloat), col("nn", table.TypeFloat), col("v", table.TypeString),
			col("c", table.TypeString), col("tx", table.TypeString), col("b", table.TypeBytes), col("ok", table.TypeBool),
			col("d", table.TypeString), col("ts", table.TypeString), col("tz", table.TypeString), col("j", table.TypeString),
			col("jb", table.TypeString), col("u", table.TypeString), col("a", table.TypeString), col("iv", table.TypeString),
		},
		Rows: [][]table.Value{
			{int64(1), int64(-3), int64(9007199254740993), 1.1, 2.5, 12.34, math.NaN(), "x", "ab ", "é", []byte{1, 2}, true,
				"2024-01-02", "2024-01-02 10:30:00", "2024-01-02 08:30:00.5+00", `{"b": 1, "a": [1, 2]}`, `{"a": [1, 2], "b": 1}`,
				"0e5a0f40-9c0b-4f7a-8a37-51c9ae0d6f0b", "{1,NULL,3}", "1 year 2 mons 3 days 04:00:00"},
			{int64(2), nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil},
			// An empty string and an empty bytea are values, not NULL.
			{int64(3), nil, nil, nil, nil, nil, nil, nil, nil, "", []byte{}, nil, nil, nil, nil, nil, nil, nil, nil, nil},
		},
	}
	if diff := cmp.Diff(want, got, cmpopts.EquateNaNs()); diff != "" {
		t.Errorf("(-want +got)\n%s", diff)
	}

	// Aggregates: count is int8, sum of int8 and avg are numeric (float64).
	got, err = e.Execute(context.Background(), engine.Query{Text: "SELECT count(*) AS n, sum(i) AS s, avg(s) AS a FROM t", DB: db})
	if err != nil {
		t.Fatal(err)
	}
	want = &table.Table{
		Columns: []table.Column{col("n", table.TypeInt), col("s", table.TypeFloat), col("a", table.TypeFloat)},
		Rows:    [][]table.Value{{int64(3), 9007199254740992.0, -3.0}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("aggregates (-want +got)\n%s", diff)
	}
}

func TestEmptyResult(t *testing.T) {
	db := makeDB(t, `CREATE TABLE t (a int, b text)`)
	e := newExec(t, engine.Config{})
	got, err := e.Execute(context.Background(), engine.Query{Text: "SELECT a, b AS bee FROM t", DB: db})
	if err != nil {
		t.Fatal(err)
	}
	want := &table.Table{Columns: []table.Column{col("a", table.TypeInt), col("bee", table.TypeString)}, Rows: [][]table.Value{}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got)\n%s", diff)
	}
}

func TestMaxRows(t *testing.T) {
	db := makeDB(t, `CREATE TABLE t (a int)`, `INSERT INTO t VALUES (1), (2), (3)`)
	e := newExec(t, engine.Config{MaxRows: 2, MaxOpen: 1})
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
			got, err := e.Execute(context.Background(), engine.Query{Text: "SELECT a FROM t ORDER BY a", DB: db, MaxRows: tc.maxRows})
			if err != nil {
				t.Fatal(err)
			}
			if got.NumRows() != tc.rows || got.Truncated != tc.truncated {
				t.Errorf("rows=%d truncated=%v, want %d %v", got.NumRows(), got.Truncated, tc.rows, tc.truncated)
			}
		})
	}
	// A huge result is cut without reading it to the end. (A set-returning
	// function in the select list streams; in FROM it would be materialised
	// first.)
	start := time.Now()
	got, err := e.Execute(context.Background(), engine.Query{
		Text: "SELECT generate_series(1, 1000000000) AS x", DB: db, MaxRows: 5, Timeout: 20 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if got.NumRows() != 5 || !got.Truncated {
		t.Errorf("huge: rows=%d truncated=%v", got.NumRows(), got.Truncated)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("cutting a huge result took %v", d)
	}
	// The single connection was replaced and works.
	if got, err := e.Execute(context.Background(), engine.Query{Text: "SELECT 1", DB: db}); err != nil || got.NumRows() != 1 {
		t.Errorf("after a cut: %v %v", got, err)
	}
}

func TestMissingDatabase(t *testing.T) {
	needServer(t)
	e := newExec(t, engine.Config{})
	_, err := e.Execute(context.Background(), engine.Query{Text: "SELECT 1", DB: "nosuchdb"})
	if err == nil || !strings.Contains(err.Error(), `database "nosuchdb" does not exist`) {
		t.Fatalf("err = %v", err)
	}
	if engine.ClassOf(err) != item.ClassExecution {
		t.Errorf("class = %q", engine.ClassOf(err))
	}
	if err := e.Prepare(context.Background(), engine.Query{Text: "SELECT 1", DB: "nosuchdb"}); err == nil {
		t.Error("Prepare on a missing database succeeded")
	}
	if _, err := e.Describe(context.Background(), "nosuchdb"); err == nil {
		t.Error("Describe on a missing database succeeded")
	}
	_, err = e.Execute(context.Background(), engine.Query{Text: "SELECT 1", DB: "/pipelines/geography"})
	if err == nil || !strings.Contains(err.Error(), "not a database name") {
		t.Errorf("a file path as database: %v", err)
	}
}

func TestErrorClasses(t *testing.T) {
	db := makeDB(t, `CREATE TABLE t (a int)`, `INSERT INTO t VALUES (1)`, `CREATE SEQUENCE seq`)
	e := newExec(t, engine.Config{MaxOpen: 1})
	for _, tc := range []struct {
		query, class, msg string
	}{
		{"SELEC a FROM t", item.ClassSyntax, `syntax error at or near "SELEC" (SQLSTATE 42601)`},
		{"SELECT a FROM t WHERE", item.ClassSyntax, "syntax error at end of input"},
		{"SELECT a FROM t WHERE a = 'x", item.ClassSyntax, "unterminated quoted string"},
		{"SELECT a FROM nosuch", item.ClassSchema, `relation "nosuch" does not exist (SQLSTATE 42P01)`},
		{"SELECT b FROM t", item.ClassSchema, `column "b" does not exist (SQLSTATE 42703)`},
		{`SELECT a FROM t WHERE a = "arizona"`, item.ClassSchema, `column "arizona" does not exist`},
		{"SELECT a FROM t x, t y", item.ClassSchema, `column reference "a" is ambiguous`},
		{"SELECT nosuchfn(a) FROM t", item.ClassExecution, "function nosuchfn(integer) does not exist (SQLSTATE 42883)"},
		{"SELECT 1/0", item.ClassExecution, "division by zero (SQLSTATE 22012)"},
		{"DELETE FROM t", item.ClassSafety, "refused before running: DELETE"},
		{"DROP TABLE t", item.ClassSafety, "refused before running: DROP"},
		{"INSERT INTO t VALUES (2)", item.ClassSafety, "refused before running: INSERT"},
		{"CREATE TABLE u (x int)", item.ClassSafety, "refused before running: CREATE"},
		{"WITH d AS (DELETE FROM t RETURNING a) SELECT * FROM d", item.ClassSafety, "refused before running"},
		// COPY … TO a server file or PROGRAM passes a READ ONLY transaction for a
		// superuser: refused before it is sent.
		{"COPY t TO '/tmp/evalflow-never.csv'", item.ClassSafety, "refused before running"},
		{"COPY (SELECT 1) TO PROGRAM 'true'", item.ClassSafety, "refused before running"},
		{"LOCK TABLE t IN ACCESS EXCLUSIVE MODE", item.ClassSafety, "refused before running"},
		{"SELECT nextval('seq')", item.ClassSafety, "cannot execute nextval() in a read-only transaction"},
		{"SELECT a FROM t FOR UPDATE", item.ClassSafety, "read-only transaction"},
		// One statement only: the server refuses a script before running
		// any of it, so COMMIT cannot end the read-only transaction.
		{"SELECT 1; DELETE FROM t", item.ClassSyntax, "cannot insert multiple commands into a prepared statement"},
		{"COMMIT; DELETE FROM t", item.ClassSyntax, "cannot insert multiple commands into a prepared statement"},
	} {
		t.Run(tc.query, func(t *testing.T) {
			_, err := e.Execute(context.Background(), engine.Query{Text: tc.query, DB: db})
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
	// COMMIT alone ends the transaction early but writes nothing; the next
	// query on the one connection still runs read-only.
	if _, err := e.Execute(context.Background(), engine.Query{Text: "COMMIT", DB: db}); err != nil {
		t.Logf("COMMIT: %v", err)
	}
	got, err := e.Execute(context.Background(), engine.Query{Text: "SELECT count(*), current_setting('transaction_read_only') FROM t", DB: db})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([][]table.Value{{int64(1), "on"}}, got.Rows); diff != "" {
		t.Errorf("after errors (-want +got)\n%s", diff)
	}
}

func TestTimeout(t *testing.T) {
	db := makeDB(t, `CREATE TABLE t (a int)`, `INSERT INTO t VALUES (1)`)
	// MaxOpen 1: the query after the timeout must get a working connection
	// from the same pool.
	e := newExec(t, engine.Config{MaxOpen: 1})
	for _, q := range []string{"SELECT pg_sleep(30)", "SELECT count(*) FROM generate_series(1, 1000000000) a, generate_series(1, 1000) b"} {
		t.Run(q, func(t *testing.T) {
			start := time.Now()
			_, err := e.Execute(context.Background(), engine.Query{Text: q, DB: db, Timeout: 200 * time.Millisecond})
			took := time.Since(start)
			if engine.ClassOf(err) != item.ClassTimeout {
				t.Fatalf("class = %q (%v), want timeout", engine.ClassOf(err), err)
			}
			if !strings.Contains(err.Error(), "canceling statement due to statement timeout (SQLSTATE 57014)") {
				t.Errorf("not the server's statement_timeout: %v", err)
			}
			if took > time.Second {
				t.Errorf("took %v, want about 200ms", took)
			}
			t.Logf("interrupted after %v: %v", took, err)
			got, err := e.Execute(context.Background(), engine.Query{Text: "SELECT a FROM t", DB: db})
			if err != nil || got.NumRows() != 1 {
				t.Fatalf("connection not reusable: %v %v", got, err)
			}
		})
	}
}

func TestCallerCancel(t *testing.T) {
	db := makeDB(t, `CREATE TABLE t (a int)`)
	e := newExec(t, engine.Config{MaxOpen: 1})
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	start := time.Now()
	_, err := e.Execute(ctx, engine.Query{Text: "SELECT pg_sleep(30)", DB: db})
	if engine.ClassOf(err) != item.ClassCancelled {
		t.Errorf("class = %q (%v), want cancelled", engine.ClassOf(err), err)
	}
	if took := time.Since(start); took > time.Second {
		t.Errorf("took %v", took)
	}
	if got, err := e.Execute(context.Background(), engine.Query{Text: "SELECT 1", DB: db}); err != nil || got.NumRows() != 1 {
		t.Errorf("after a cancel: %v %v", got, err)
	}
}

func TestPrepare(t *testing.T) {
	db := makeDB(t, `CREATE TABLE t (a int)`)
	e := newExec(t, engine.Config{})
	for _, tc := range []struct{ query, class string }{
		{"SELECT a FROM t", item.ClassNone},
		{"SELECT pg_sleep(30)", item.ClassNone}, // prepared, never run
		{"SELECT a FROM", item.ClassSyntax},
		{"SELECT b FROM t", item.ClassSchema},
		{"SELECT a FROM u", item.ClassSchema},
		{"", item.ClassSyntax},
	} {
		t.Run(tc.query, func(t *testing.T) {
			start := time.Now()
			err := e.Prepare(context.Background(), engine.Query{Text: tc.query, DB: db})
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
	db := makeDB(t,
		`CREATE TABLE a (id integer PRIMARY KEY, name text NOT NULL)`,
		`CREATE TABLE b (x int, y int, note varchar(20), PRIMARY KEY (x, y))`,
		`CREATE TABLE c (id serial PRIMARY KEY, a_id int REFERENCES a(id), bx int, b_y int, amount numeric(10,2),
			FOREIGN KEY (bx, b_y) REFERENCES b (x, y))`,
		`CREATE VIEW v AS SELECT id, name FROM a`,
		`CREATE SCHEMA s`,
		`CREATE TABLE s.d (ts timestamptz, dropped int)`,
		`ALTER TABLE s.d DROP COLUMN dropped`,
	)
	e := newExec(t, engine.Config{})
	got, err := e.Describe(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	want := &engine.Schema{Tables: []engine.TableInfo{
		{Name: "a", Columns: []engine.ColumnInfo{
			{Name: "id", DeclType: "integer", Type: table.TypeInt, PrimaryKey: true, NotNull: true},
			{Name: "name", DeclType: "text", Type: table.TypeString, NotNull: true},
		}},
		{Name: "b", Columns: []engine.ColumnInfo{
			{Name: "x", DeclType: "integer", Type: table.TypeInt, PrimaryKey: true, NotNull: true},
			{Name: "y", DeclType: "integer", Type: table.TypeInt, PrimaryKey: true, NotNull: true},
			{Name: "note", DeclType: "character varying(20)", Type: table.TypeString},
		}},
		{Name: "c", Columns: []engine.ColumnInfo{
			{Name: "id", DeclType: "integer", Type: table.TypeInt, PrimaryKey: true, NotNull: true},
			{Name: "a_id", DeclType: "integer", Type: table.TypeInt},
			{Name: "bx", DeclType: "integer", Type: table.TypeInt},
			{Name: "b_y", DeclType: "integer", Type: table.TypeInt},
			{Name: "amount", DeclType: "numeric(10,2)", Type: table.TypeFloat},
		}, ForeignKeys: []engine.ForeignKey{
			{Columns: []string{"a_id"}, RefTable: "a", RefColumns: []string{"id"}},
			{Columns: []string{"bx", "b_y"}, RefTable: "b", RefColumns: []string{"x", "y"}},
		}},
		{Name: "v", View: true, Columns: []engine.ColumnInfo{
			{Name: "id", DeclType: "integer", Type: table.TypeInt},
			{Name: "name", DeclType: "text", Type: table.TypeString},
		}},
		{Name: "s.d", Columns: []engine.ColumnInfo{
			{Name: "ts", DeclType: "timestamp with time zone", Type: table.TypeString},
		}},
	}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got)\n%s", diff)
	}
}

func TestConcurrentAndEviction(t *testing.T) {
	dbs := make([]string, 3)
	for i := range dbs {
		dbs[i] = makeDB(t, `CREATE TABLE t (a int)`, `INSERT INTO t VALUES (1), (2), (3)`)
	}
	// One pool at a time forces eviction while others are in use.
	e := newExec(t, engine.Config{MaxOpen: 2, Options: map[string]any{"max_databases": 1.0}})
	var wg sync.WaitGroup
	errs := make(chan error, 60)
	for g := 0; g < 6; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 10; i++ {
				got, err := e.Execute(context.Background(), engine.Query{Text: "SELECT sum(a)::int8 FROM t", DB: dbs[(g+i)%len(dbs)]})
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
	e.mu.Lock()
	n := len(e.pools)
	e.mu.Unlock()
	if n > 1 {
		t.Errorf("%d pools open, want at most 1", n)
	}
}

func TestOptions(t *testing.T) {
	for _, opts := range []map[string]any{
		{"nosuch": 1}, {"dsn": 5}, {"max_databases": 0}, {"dsn": "host=x port=notaport"},
	} {
		if _, err := New(engine.Config{Options: opts}); err == nil {
			t.Errorf("New(%v) succeeded", opts)
		}
	}
	// An empty Query.DB uses the DSN's own database.
	e := newExec(t, engine.Config{})
	got, err := e.Execute(context.Background(), engine.Query{Text: "SELECT current_database()"})
	if err != nil || got.Rows[0][0] != "postgres" {
		t.Errorf("%v %v", got, err)
	}
}

func TestConnectionStateDoesNotLeak(t *testing.T) {
	db := makeDB(t, `CREATE TABLE t (a text)`, `INSERT INTO t VALUES ('a')`, `CREATE SCHEMA s`, `CREATE TABLE s.t (a text)`)
	// One connection: state a query leaves behind would reach the next.
	e := newExec(t, engine.Config{MaxOpen: 1})
	ctx := context.Background()
	for _, stmt := range []string{
		"SET search_path = s",
		"SELECT set_config('search_path', 's', false)",
		"PREPARE p AS SELECT 1",
		"SELECT pg_advisory_lock(1)",
	} {
		if _, err := e.Execute(ctx, engine.Query{Text: stmt, DB: db}); err != nil {
			t.Logf("%s: %v", stmt, err)
		}
		got, err := e.Execute(ctx, engine.Query{Text: "SELECT count(*), (SELECT count(*) FROM pg_prepared_statements) FROM t", DB: db})
		if err != nil || got.Rows[0][0] != int64(1) || got.Rows[0][1] != int64(0) {
			t.Errorf("after %q: %v %v", stmt, got, err)
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

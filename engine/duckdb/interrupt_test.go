package duckdb

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"
	"time"

	"github.com/evalflow/evalflow/engine"
)

// TestInterruptHandle pins the driver internal evalflow reads to interrupt a
// query at its deadline: a driver upgrade that moves it fails here.
func TestInterruptHandle(t *testing.T) {
	db, err := sql.Open("duckdb", "")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	conn, err := db.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if interruptHandle(conn) == nil {
		t.Fatal("cannot reach the driver's DuckDB connection handle (duckdb.Conn.conn)")
	}
}

// TestTimeoutHoldsWithin10Percent: with evalflow interrupting at the
// deadline, a 1 s timeout returns within 10%, not up to 500 ms late.
func TestTimeoutHoldsWithin10Percent(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.duckdb")
	db, err := sql.Open("duckdb", path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`CREATE TABLE n AS SELECT range AS i FROM range(3000)`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	e, err := New(engine.Config{MaxOpen: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	// Open the database first: what is timed is the query and its
	// interrupt, not opening the file (slow on a loaded machine).
	if _, err := e.Execute(context.Background(), engine.Query{DB: path, Text: `SELECT 1`}); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3; i++ {
		start := time.Now()
		_, err = e.Execute(context.Background(), engine.Query{DB: path, Timeout: time.Second,
			Text: `SELECT count(*) FROM n a, n b, n c WHERE a.i + b.i + c.i = -1`})
		took := time.Since(start)
		if engine.ClassOf(err) != "timeout" {
			t.Fatalf("err = %v, want a timeout", err)
		}
		if took > 1100*time.Millisecond || took < time.Second {
			t.Errorf("timeout 1s held for %v", took)
		}
		res, err := e.Execute(context.Background(), engine.Query{DB: path, Text: `SELECT count(*) FROM n`})
		if err != nil || res.Rows[0][0] != int64(3000) {
			t.Fatalf("next query on the same pool: %v %v", res, err)
		}
	}
}

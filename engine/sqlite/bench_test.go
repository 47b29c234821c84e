package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"sync"
	"testing"

	"github.com/evalflow/evalflow/engine"
)

// benchDB has a 10,000-row table of an int, a float and a short string.
func benchDB(b *testing.B) string {
	return makeDB(b,
		`CREATE TABLE t (id INTEGER PRIMARY KEY, x REAL, s TEXT)`,
		`WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM c WHERE i < 10000)
		 INSERT INTO t SELECT i, i * 0.5, 'name-' || i FROM c`)
}

// BenchmarkTransfer10k reads all 10,000 rows per op; rows/s is reported.
func BenchmarkTransfer10k(b *testing.B) {
	path := benchDB(b)
	e := newExec(b, engine.Config{})
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		t, err := e.Execute(ctx, engine.Query{Text: "SELECT id, x, s FROM t", DB: path})
		if err != nil || t.NumRows() != 10000 {
			b.Fatal(err, t.NumRows())
		}
	}
	b.ReportMetric(float64(b.N)*10000/b.Elapsed().Seconds(), "rows/s")
}

// BenchmarkSmallQueries2 runs point queries from 2 goroutines sharing one
// executor (MaxOpen 2); queries/s is reported.
func BenchmarkSmallQueries2(b *testing.B) {
	path := benchDB(b)
	e := newExec(b, engine.Config{MaxOpen: 2})
	ctx := context.Background()
	b.ResetTimer()
	var wg sync.WaitGroup
	per := b.N/2 + 1
	for g := 0; g < 2; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < per; i++ {
				q := fmt.Sprintf("SELECT s FROM t WHERE id = %d", 1+(i*7919+g)%10000)
				if _, err := e.Execute(ctx, engine.Query{Text: q, DB: path}); err != nil {
					b.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	b.ReportMetric(float64(2*per)/b.Elapsed().Seconds(), "queries/s")
}

// BenchmarkPointQuery: one point query per op through Execute, through
// PrepareExecute, and as the raw floor runs it (one connection, no
// timeout, rows scanned into any): the difference is Execute's own cost.
func BenchmarkPointQuery(b *testing.B) {
	path := benchDB(b)
	ctx := context.Background()
	q := func(i int) string { return fmt.Sprintf("SELECT s, x FROM t WHERE id = %d", 1+(i*7919)%10000) }
	b.Run("Execute", func(b *testing.B) {
		e := newExec(b, engine.Config{})
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			if _, err := e.Execute(ctx, engine.Query{Text: q(i), DB: path}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("PrepareExecute", func(b *testing.B) {
		e := newExec(b, engine.Config{})
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			if perr, _, err, _ := e.PrepareExecute(ctx, engine.Query{Text: q(i), DB: path}); perr != nil || err != nil {
				b.Fatal(perr, err)
			}
		}
	})
	b.Run("raw", func(b *testing.B) {
		e := newExec(b, engine.Config{})
		db, err := sql.Open("sqlite", e.dsn(path))
		if err != nil {
			b.Fatal(err)
		}
		defer db.Close()
		db.SetMaxOpenConns(1)
		conn, err := db.Conn(ctx)
		if err != nil {
			b.Fatal(err)
		}
		defer conn.Close()
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			rows, err := conn.QueryContext(ctx, q(i))
			if err != nil {
				b.Fatal(err)
			}
			cols, _ := rows.Columns()
			vals := make([]any, len(cols))
			ptrs := make([]any, len(cols))
			for j := range vals {
				ptrs[j] = &vals[j]
			}
			for rows.Next() {
				rows.Scan(ptrs...)
			}
			rows.Close()
		}
	})
}

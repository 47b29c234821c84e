package duckdb

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/evalflow/evalflow/engine"
	"github.com/evalflow/evalflow/item"
)

// TestRunawayQueryReturnsAtDeadline: a query DuckDB cannot interrupt
// quickly (one giant list value) still returns its timeout at the
// deadline, and queries on the same database beside it get their own,
// correct results.
func TestRunawayQueryReturnsAtDeadline(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a runaway query")
	}
	path := makeDB(t, "CREATE TABLE t(x INTEGER)", "INSERT INTO t VALUES (1), (2), (3)")
	ex := newExec(t, engine.Config{})
	var wg sync.WaitGroup
	for i := 0; i < 3; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			time.Sleep(200 * time.Millisecond)
			res, err := ex.Execute(context.Background(), engine.Query{Text: "SELECT sum(x) FROM t", DB: path, Timeout: 10 * time.Second})
			if err != nil || len(res.Rows) != 1 || res.Rows[0][0] != int64(6) && res.Rows[0][0] != 6.0 {
				t.Errorf("a normal query beside the runaway: %v %v", res, err)
			}
		}()
	}
	start := time.Now()
	_, err := ex.Execute(context.Background(), engine.Query{Text: "SELECT list(range(30000000))", DB: path, Timeout: time.Second})
	took := time.Since(start)
	wg.Wait()
	if engine.ClassOf(err) != item.ClassTimeout {
		t.Fatalf("runaway: %v (class %s), want a timeout", err, engine.ClassOf(err))
	}
	if took > 2500*time.Millisecond {
		t.Errorf("the 1 s timeout returned after %v", took)
	}
}

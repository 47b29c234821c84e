package falkordb

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/evalflow/evalflow/engine"
	"github.com/evalflow/evalflow/item"
)

// TestRunawayCannotChangeOtherResults: a query FalkorDB cannot stop (one
// UNWIND of 10^9) is abandoned after its timeout while the server keeps
// running it. Queries of other items meanwhile either return their right
// answer or a harness error (Unavailable) — never a timeout that would
// score as their own failure, never a wrong or empty result.
func TestRunawayCannotChangeOtherResults(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a runaway query on a private server")
	}
	needServer(t)
	module := filepath.Join(repoRoot(), "engine", "cypher", "falkordb-npm", "node_modules", "@falkordblite", "linux-x64", "bin", "falkordb.so")
	e, err := New(engine.Config{MaxOpen: 4, Options: map[string]any{"start": true, "module": module, "load": map[string]any{"films": moviesFile()}}})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	ctx := context.Background()
	done := make(chan error, 1)
	go func() {
		_, err := e.Execute(ctx, engine.Query{Text: "UNWIND range(1, 1000000000) AS x RETURN count(x)", DB: "films", Timeout: 300 * time.Millisecond})
		done <- err
	}()
	var ok, harness int
	stop := time.After(3 * time.Second)
loop:
	for {
		select {
		case <-stop:
			break loop
		default:
		}
		res, err := e.Execute(ctx, engine.Query{Text: "MATCH (p:Person) RETURN count(p)", DB: "films", Timeout: 300 * time.Millisecond})
		switch {
		case err == nil:
			if len(res.Rows) != 1 || res.Rows[0][0] != int64(56) {
				t.Fatalf("a query beside the runaway returned %v, want 56", res.Rows)
			}
			ok++
		case engine.Unavailable(err):
			harness++
		default:
			t.Fatalf("a query beside the runaway failed as a verdict on itself: %v (class %s)", err, engine.ClassOf(err))
		}
	}
	if err := <-done; engine.ClassOf(err) != item.ClassTimeout {
		t.Errorf("the runaway: %v, want its own timeout", err)
	}
	t.Logf("beside the runaway: %d right answers, %d harness errors", ok, harness)
}

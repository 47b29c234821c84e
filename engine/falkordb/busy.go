package falkordb

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/evalflow/evalflow/engine"
	"github.com/evalflow/evalflow/item"
)

// busy tracks queries the client abandoned while the server may still be
// running them (FalkorDB cannot stop a query stuck inside one
// expression). While one is live, the server's worker threads are taken,
// so another query that times out may have been starved rather than slow:
// its timeout is not a verdict on it. Such timeouts are reported as
// harness errors (engine.Error.Unavailable): the item is an `error`,
// retried by the next run, never a silent 0.
type busy struct {
	live atomic.Int64
	// until is the unix-nano time before which the server counts as busy
	// even with no live abandoned query (the last one just drained).
	until atomic.Int64
}

// abandoned records an abandoned query and watches the server until it
// answers a trivial query promptly again.
func (e *Executor) abandoned(graph string) {
	e.busy.live.Add(1)
	go func() {
		defer func() {
			e.busy.until.Store(time.Now().Add(time.Second).UnixNano())
			e.busy.live.Add(-1)
		}()
		deadline := time.Now().Add(10 * time.Minute)
		for time.Now().Before(deadline) {
			ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
			err := e.client.Do(ctx, "GRAPH.RO_QUERY", graph, "RETURN 1", "--compact").Err()
			cancel()
			if err == nil {
				return
			}
			if e.closed.Load() {
				return
			}
			time.Sleep(200 * time.Millisecond)
		}
	}()
}

// suspect reports whether a query that started at start and timed out may
// have been starved by an abandoned one.
func (e *Executor) suspect(start time.Time) bool {
	return e.busy.live.Load() > 0 || start.UnixNano() < e.busy.until.Load()
}

func starved(err error) error {
	return &engine.Error{Class: item.ClassTimeout, Unavailable: true,
		Msg: "falkordb: timed out while the server was still busy with an abandoned runaway query; not a verdict on this query (retried by the next run)", Err: err}
}

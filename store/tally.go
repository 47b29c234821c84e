package store

import (
	"context"
	"sync/atomic"
)

// Tally counts, for one stage on one item, the cacheable calls it made
// (engine executions, model requests) and how many a cache answered. The
// planner puts one in the context of every stage call; caches report to
// it. A stage is "cached" for an item when it made calls and the cache
// answered every one.
type Tally struct {
	Calls, Hits atomic.Int64
	// Refresh bypasses cache reads for this stage (-refresh STAGE); the
	// answers are still written. Off bypasses reads and writes (-no-cache).
	Refresh, Off bool
}

type tallyKey struct{}

// WithTally returns ctx carrying t.
func WithTally(ctx context.Context, t *Tally) context.Context {
	return context.WithValue(ctx, tallyKey{}, t)
}

// TallyOf returns ctx's tally, or nil.
func TallyOf(ctx context.Context) *Tally {
	t, _ := ctx.Value(tallyKey{}).(*Tally)
	return t
}

// Call records one cacheable call and whether the cache answered it.
func Call(ctx context.Context, hit bool) {
	if t := TallyOf(ctx); t != nil {
		t.Calls.Add(1)
		if hit {
			t.Hits.Add(1)
		}
	}
}

// Reads reports whether a cache may answer in ctx (not -refresh for this
// stage, not -no-cache); Writes whether answers may be stored.
func Reads(ctx context.Context) bool {
	t := TallyOf(ctx)
	return t == nil || !t.Refresh && !t.Off
}

// Writes reports whether a cache may store answers in ctx.
func Writes(ctx context.Context) bool {
	t := TallyOf(ctx)
	return t == nil || !t.Off
}

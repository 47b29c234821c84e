package llm

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"
)

func TestCallParentsDeadlineAndCancel(t *testing.T) {
	var cp callParents
	parent, cancelParent := context.WithCancel(context.Background())
	defer cancelParent()

	// The per-call deadline fires on its own.
	ctx, cancel := cp.withTimeout(parent, 20*time.Millisecond)
	if _, ok := ctx.Deadline(); !ok {
		t.Fatal("no deadline")
	}
	<-ctx.Done()
	if !errors.Is(ctx.Err(), context.DeadlineExceeded) {
		t.Fatalf("err = %v, want deadline exceeded", ctx.Err())
	}
	cancel()

	// Cancelling the parent ends every call in flight, whichever shard.
	var ctxs []context.Context
	var cancels []context.CancelFunc
	for range 3 * callShards {
		c, f := cp.withTimeout(parent, time.Hour)
		ctxs, cancels = append(ctxs, c), append(cancels, f)
	}
	cancelParent()
	for i, c := range ctxs {
		select {
		case <-c.Done():
		case <-time.After(time.Second):
			t.Fatalf("call %d not cancelled with its parent", i)
		}
		if !errors.Is(c.Err(), context.Canceled) {
			t.Fatalf("call %d: err = %v, want canceled", i, c.Err())
		}
	}
	for _, f := range cancels {
		f()
	}
	assertShardsIdle(t, &cp)
}

func TestCallParentsValuesAndOtherParents(t *testing.T) {
	var cp callParents
	type key struct{}
	a, cancelA := context.WithCancel(context.WithValue(context.Background(), key{}, "a"))
	defer cancelA()
	b, cancelB := context.WithCancel(context.WithValue(context.Background(), key{}, "b"))
	defer cancelB()
	var wg sync.WaitGroup
	for i := range 200 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p, want := a, "a"
			if i%2 == 1 {
				p, want = b, "b"
			}
			ctx, cancel := cp.withTimeout(p, time.Minute)
			defer cancel()
			if got := ctx.Value(key{}); got != want {
				t.Errorf("value %v, want %s: a call hung off another parent", got, want)
			}
			time.Sleep(time.Millisecond)
		}()
	}
	wg.Wait()
	// Cancelling b must not touch a's calls.
	ctx, cancel := cp.withTimeout(a, time.Minute)
	defer cancel()
	cancelB()
	select {
	case <-ctx.Done():
		t.Fatal("a call of parent a ended when parent b was cancelled")
	case <-time.After(10 * time.Millisecond):
	}
	cancel()
	assertShardsIdle(t, &cp)
}

// assertShardsIdle checks that no intermediate context outlives its calls.
func assertShardsIdle(t *testing.T, cp *callParents) {
	t.Helper()
	for i := range cp.shards {
		s := &cp.shards[i]
		s.mu.Lock()
		n, mid := s.n, s.mid
		s.mu.Unlock()
		if n != 0 || mid != nil {
			t.Errorf("shard %d still holds %d calls (mid %v)", i, n, mid)
		}
	}
}

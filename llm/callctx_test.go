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

// assertShardsIdle checks that every call released its shard.
func assertShardsIdle(t *testing.T, cp *callParents) {
	t.Helper()
	for i := range cp.shards {
		s := &cp.shards[i]
		s.mu.Lock()
		n := s.n
		s.mu.Unlock()
		if n != 0 {
			t.Errorf("shard %d still holds %d calls", i, n)
		}
	}
}

// A run's items call with contexts of their own (their values) around the
// run's one cancellation: they share the intermediates, each call sees
// its own item's values, and cancelling the run ends them all.
func TestCallParentsPerItemValues(t *testing.T) {
	var cp callParents
	type key struct{}
	run, cancelRun := context.WithCancel(context.Background())
	defer cancelRun()
	var ctxs []context.Context
	var cancels []context.CancelFunc
	for i := range 4 * callShards {
		item := context.WithValue(run, key{}, i)
		c, f := cp.withTimeout(item, time.Hour)
		if got := c.Value(key{}); got != i {
			t.Fatalf("call %d sees value %v", i, got)
		}
		if _, ok := c.(*callContext); !ok {
			t.Fatalf("call %d: %T, want a call hung off an intermediate", i, c)
		}
		// A context derived from the call's (as net/http derives one per
		// request) is cancelled with it.
		d, cancelD := context.WithCancel(c)
		defer cancelD()
		ctxs, cancels = append(ctxs, c, d), append(cancels, f)
	}
	cancelRun()
	for i, c := range ctxs {
		select {
		case <-c.Done():
		case <-time.After(time.Second):
			t.Fatalf("context %d not cancelled with the run", i)
		}
		if !errors.Is(c.Err(), context.Canceled) {
			t.Fatalf("context %d: err = %v, want canceled", i, c.Err())
		}
	}
	for _, f := range cancels {
		f()
	}
	assertShardsIdle(t, &cp)
	// A later parent claims the idle shards; the run's intermediates are
	// retired.
	p2, cancel2 := context.WithCancel(context.Background())
	defer cancel2()
	for range callShards {
		c, f := cp.withTimeout(p2, time.Hour)
		if c.Err() != nil {
			t.Fatalf("a call of a live parent is done: %v", c.Err())
		}
		f()
	}
}

// A parent with a deadline of its own keeps the earlier deadline.
func TestCallParentsParentDeadline(t *testing.T) {
	var cp callParents
	parent, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	c, f := cp.withTimeout(parent, time.Hour)
	defer f()
	dl, _ := c.Deadline()
	if time.Until(dl) > time.Second {
		t.Fatalf("deadline %v: the parent's earlier one was lost", dl)
	}
	<-c.Done()
	if !errors.Is(c.Err(), context.DeadlineExceeded) {
		t.Fatalf("err = %v", c.Err())
	}
}

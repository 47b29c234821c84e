package llm

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// callParents derives each call's timeout context without making every
// call of an endpoint register with the one cancellable context they share
// (a run's). context.WithTimeout(parent) adds the child to the parent's
// children under the parent's mutex and removes it again on cancel: with
// hundreds of calls in flight on two cores that mutex convoys (a holder
// descheduled among a thousand runnable goroutines holds everyone up; it
// was nearly all of the process's lock contention). Here a call's timer
// hangs off one of a few intermediate contexts instead, each with its own
// mutex.
//
// Callers are told apart by their cancellation, not by the context value:
// every item of a run calls with a context of its own (its values) around
// the run's one Done channel. An intermediate is values-free and follows
// that Done channel (context.AfterFunc, registering once with the parent);
// the call's context answers Value from the caller's context and Done, Err
// and Deadline from its own timer. An intermediate lives while its shard
// serves that Done channel — across calls, so that a shard touched by one
// call at a time does not register and deregister with the parent each
// time — and is retired when an idle shard is claimed for another parent,
// or dies with its parent. A parent with no Done channel, or a deadline of
// its own, takes context.WithTimeout directly. Cancelling the parent still
// cancels every call at once, through the intermediates. The zero value is
// ready to use; safe for concurrent use.
type callParents struct {
	next   atomic.Uint32
	shards [callShards]callShard
}

const callShards = 64

type callShard struct {
	mu     sync.Mutex
	done   <-chan struct{} // the Done channel mid follows; nil: none yet
	mid    context.Context
	cancel context.CancelCauseFunc
	stop   func() bool // undoes the AfterFunc registration
	n      int         // calls using mid
	_      [64]byte
}

// withTimeout is context.WithTimeout(parent, d), contending less.
func (cp *callParents) withTimeout(parent context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	done := parent.Done()
	if done == nil {
		// Nothing to register with (context.Background and the like).
		return context.WithTimeout(parent, d)
	}
	if _, ok := parent.Deadline(); ok {
		// A deadline of its own (and so a Done channel of its own): the
		// call's deadline is the earlier one, as context.WithTimeout says.
		return context.WithTimeout(parent, d)
	}
	s := &cp.shards[cp.next.Add(1)%callShards]
	s.mu.Lock()
	if s.done != done {
		if s.n > 0 { // the shard serves another parent's calls right now
			s.mu.Unlock()
			return context.WithTimeout(parent, d)
		}
		if s.mid != nil {
			s.stop()
			s.cancel(context.Canceled)
		}
		mid, cancel := context.WithCancelCause(context.Background())
		s.stop = context.AfterFunc(parent, func() { cancel(context.Cause(parent)) })
		s.done, s.mid, s.cancel = done, mid, cancel
	}
	s.n++
	mid := s.mid
	s.mu.Unlock()
	tctx, cancel := context.WithTimeout(mid, d)
	return &callContext{Context: tctx, values: parent}, func() {
		cancel()
		s.mu.Lock()
		s.n--
		s.mu.Unlock()
	}
}

// callContext is a call's context: Deadline, Done and Err of its timer
// (which hangs off a values-free intermediate), Value of the caller's
// context. The timer's chain answers only the context package's own key
// (so that a context derived from this one registers with the timer, not
// with the run's context), every other key goes to the caller's.
type callContext struct {
	context.Context
	values context.Context
}

func (c *callContext) Value(key any) any {
	if v := c.Context.Value(key); v != nil {
		return v
	}
	return c.values.Value(key)
}

package llm

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// callParents derives each call's timeout context without making every
// call of an endpoint register with the one parent context they share (a
// run's context). context.WithTimeout(parent) adds the child to the
// parent's children under the parent's mutex and removes it again on
// cancel: with hundreds of calls in flight that mutex was nearly all of
// the process's lock contention. Here a call's timer hangs off one of a
// few intermediate contexts per parent instead, each with its own mutex;
// an intermediate is created (registering once with the parent) when a
// shard is first used for that parent and cancelled when its last call
// ends, so nothing outlives the calls. Cancelling the parent still
// cancels every call at once, through the intermediates. The zero value
// is ready to use; safe for concurrent use.
type callParents struct {
	next   atomic.Uint32
	shards [callShards]callShard
}

const callShards = 16

type callShard struct {
	mu     sync.Mutex
	parent context.Context
	mid    context.Context
	cancel context.CancelFunc
	n      int // calls using mid
	_      [64]byte
}

// withTimeout is context.WithTimeout(parent, d), contending less.
func (cp *callParents) withTimeout(parent context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	if parent.Done() == nil {
		// Nothing to register with (context.Background and the like).
		return context.WithTimeout(parent, d)
	}
	s := &cp.shards[cp.next.Add(1)%callShards]
	s.mu.Lock()
	switch {
	case s.n > 0 && s.parent == parent:
		s.n++
	case s.n == 0:
		s.parent = parent
		s.mid, s.cancel = context.WithCancel(parent)
		s.n = 1
	default: // the shard serves another parent's calls right now
		s.mu.Unlock()
		return context.WithTimeout(parent, d)
	}
	mid := s.mid
	s.mu.Unlock()
	ctx, cancel := context.WithTimeout(mid, d)
	return ctx, func() {
		cancel()
		s.mu.Lock()
		if s.n--; s.n == 0 {
			s.cancel()
			s.parent, s.mid, s.cancel = nil, nil, nil
		}
		s.mu.Unlock()
	}
}

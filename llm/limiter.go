package llm

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// Limits bound the traffic to one endpoint. Zero values mean "no limit",
// except MaxConcurrency, whose zero means DefaultMaxConcurrency.
type Limits struct {
	MaxConcurrency    int
	RequestsPerMinute float64
	TokensPerMinute   float64
}

// DefaultMaxConcurrency is the number of calls in flight per endpoint when
// a model block does not say.
const DefaultMaxConcurrency = 8

// Limiter admits calls to one endpoint: at most MaxConcurrency in flight,
// requests and tokens per minute as token buckets, and a shared pause that
// a 429's Retry-After or an exhausted rate-limit window imposes on every
// caller. It is shared by every stage using the endpoint and safe for
// concurrent use; the zero value is not usable, call NewLimiter.
type Limiter struct {
	slots chan struct{}
	rpm   *bucket
	tpm   *bucket

	// until is when the shared pause ends (Unix nanoseconds; 0: none): no
	// call starts before it. Every call reads it, so it takes no lock.
	until atomic.Int64
}

// NewLimiter returns a limiter for l.
func NewLimiter(l Limits) *Limiter {
	n := l.MaxConcurrency
	if n <= 0 {
		n = DefaultMaxConcurrency
	}
	lim := &Limiter{slots: make(chan struct{}, n)}
	if l.RequestsPerMinute > 0 {
		lim.rpm = newBucket(l.RequestsPerMinute)
	}
	if l.TokensPerMinute > 0 {
		lim.tpm = newBucket(l.TokensPerMinute)
	}
	return lim
}

// Capacity is the number of calls the limiter lets run at once.
func (l *Limiter) Capacity() int { return cap(l.slots) }

// Acquire waits until a call estimated at tokens tokens may start, then
// holds a concurrency slot. It returns a release function that must be
// called exactly once with the tokens the call really used (the token
// bucket is charged the difference). It fails only when ctx is done.
func (l *Limiter) Acquire(ctx context.Context, tokens int) (release func(used int), err error) {
	if err := l.waitPause(ctx); err != nil {
		return nil, err
	}
	select {
	case l.slots <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	undo := func() { <-l.slots }
	if l.rpm != nil {
		if err := l.rpm.take(ctx, 1); err != nil {
			undo()
			return nil, err
		}
	}
	if l.tpm != nil {
		if err := l.tpm.take(ctx, float64(tokens)); err != nil {
			undo()
			return nil, err
		}
	}
	// A pause may have started while this caller waited for a slot.
	if err := l.waitPause(ctx); err != nil {
		undo()
		return nil, err
	}
	var once sync.Once
	return func(used int) {
		once.Do(func() {
			if l.tpm != nil && used != tokens {
				l.tpm.charge(float64(used - tokens))
			}
			<-l.slots
		})
	}, nil
}

// Pause makes every caller wait d from now before starting a call (a later
// pause extends, an earlier one does not shorten).
func (l *Limiter) Pause(d time.Duration) {
	if d <= 0 {
		return
	}
	t := time.Now().Add(d).UnixNano()
	for {
		cur := l.until.Load()
		if t <= cur || l.until.CompareAndSwap(cur, t) {
			return
		}
	}
}

func (l *Limiter) waitPause(ctx context.Context) error {
	for {
		until := l.until.Load()
		if until == 0 {
			return nil
		}
		d := time.Until(time.Unix(0, until))
		if d <= 0 {
			return nil
		}
		if err := sleep(ctx, d); err != nil {
			return err
		}
	}
}

// bucket is a token bucket refilled continuously at perMinute/60 per
// second, holding at most a tenth of a minute's worth (at least 1), so a
// burst cannot spend the whole minute at once. take reserves first and
// waits after, so callers are served in arrival order and the balance may
// go negative.
type bucket struct {
	mu     sync.Mutex
	rate   float64 // per second
	burst  float64
	tokens float64
	last   time.Time
}

func newBucket(perMinute float64) *bucket {
	burst := perMinute / 10
	if burst < 1 {
		burst = 1
	}
	return &bucket{rate: perMinute / 60, burst: burst, tokens: burst, last: time.Now()}
}

func (b *bucket) refill(now time.Time) {
	b.tokens += now.Sub(b.last).Seconds() * b.rate
	if b.tokens > b.burst {
		b.tokens = b.burst
	}
	b.last = now
}

func (b *bucket) take(ctx context.Context, n float64) error {
	if n <= 0 {
		return nil
	}
	b.mu.Lock()
	now := time.Now()
	b.refill(now)
	// A request larger than the burst may still go once the bucket is full.
	need := min(n, b.burst)
	b.tokens -= n
	var wait time.Duration
	if b.tokens+n-need < 0 {
		wait = time.Duration((need - (b.tokens + n)) / b.rate * float64(time.Second))
	}
	b.mu.Unlock()
	if wait <= 0 {
		return nil
	}
	if err := sleep(ctx, wait); err != nil {
		b.charge(-n)
		return err
	}
	return nil
}

func (b *bucket) charge(n float64) {
	b.mu.Lock()
	b.refill(time.Now())
	b.tokens -= n
	b.mu.Unlock()
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

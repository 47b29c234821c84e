package store

import (
	"context"
	"sync"
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
	// Probe, when set, is `evalflow plan` looking: caches answer what they
	// hold and nothing else runs (a miss fails the call at once), and every
	// call is counted for item Seq.
	Probe *Probe
	Seq   int
}

// Probe counts, per item, the model requests and engine queries a plan's
// dry run asked the caches for, and per model the token estimates of the
// requests.
type Probe struct {
	mu     sync.Mutex
	items  map[int]*ProbeItem
	models map[string]*ProbeModel
}

// ProbeItem is one item's calls in a dry run. Missed means some call was
// not in a cache, so the item's later calls are unknown.
type ProbeItem struct {
	LLM, LLMHits, Engine, EngineHits int
	Missed                           bool
}

// ProbeModel sums one model endpoint's requests in a dry run: how many,
// how many cached, and estimated tokens of the requests not cached.
type ProbeModel struct {
	Calls, Cached             int
	InputTokens, OutputTokens int // estimates for the requests not cached
	CachedInput, CachedOutput int // recorded tokens of the cached responses
}

// NewProbe returns an empty probe.
func NewProbe() *Probe {
	return &Probe{items: map[int]*ProbeItem{}, models: map[string]*ProbeModel{}}
}

// Items returns a copy of every item's counts, by seq.
func (p *Probe) Items() map[int]ProbeItem {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make(map[int]ProbeItem, len(p.items))
	for k, v := range p.items {
		out[k] = *v
	}
	return out
}

// Models returns a copy of every model's counts, by model label.
func (p *Probe) Models() map[string]ProbeModel {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make(map[string]ProbeModel, len(p.models))
	for k, v := range p.models {
		out[k] = *v
	}
	return out
}

// Kinds of cacheable calls.
const (
	KindLLM    = "llm"
	KindEngine = "engine"
)

// Probing reports whether ctx is a plan's dry run: caches answer, nothing
// else runs.
func Probing(ctx context.Context) bool {
	t := TallyOf(ctx)
	return t != nil && t.Probe != nil
}

// ModelCall records, in a dry run, one model request's tokens: recorded
// ones for a cached response, estimates for one that is not.
func ModelCall(ctx context.Context, model string, hit bool, in, out int) {
	t := TallyOf(ctx)
	if t == nil || t.Probe == nil {
		return
	}
	p := t.Probe
	p.mu.Lock()
	defer p.mu.Unlock()
	m := p.models[model]
	if m == nil {
		m = &ProbeModel{}
		p.models[model] = m
	}
	m.Calls++
	if hit {
		m.Cached++
		m.CachedInput += in
		m.CachedOutput += out
	} else {
		m.InputTokens += in
		m.OutputTokens += out
	}
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

// Call records one cacheable call of kind (KindLLM, KindEngine) and
// whether the cache answered it.
func Call(ctx context.Context, kind string, hit bool) {
	t := TallyOf(ctx)
	if t == nil {
		return
	}
	t.Calls.Add(1)
	if hit {
		t.Hits.Add(1)
	}
	if p := t.Probe; p != nil {
		p.mu.Lock()
		it := p.items[t.Seq]
		if it == nil {
			it = &ProbeItem{}
			p.items[t.Seq] = it
		}
		switch kind {
		case KindLLM:
			it.LLM++
			if hit {
				it.LLMHits++
			}
		default:
			it.Engine++
			if hit {
				it.EngineHits++
			}
		}
		if !hit {
			it.Missed = true
		}
		p.mu.Unlock()
	}
}

// Reads reports whether a cache may answer in ctx (not -refresh for this
// stage, not -no-cache); Writes whether answers may be stored.
func Reads(ctx context.Context) bool {
	t := TallyOf(ctx)
	return t == nil || !t.Refresh && !t.Off
}

// Writes reports whether a cache may store answers in ctx (never in a dry
// run).
func Writes(ctx context.Context) bool {
	t := TallyOf(ctx)
	return t == nil || !t.Off && t.Probe == nil
}

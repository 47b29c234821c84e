package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/evalflow/evalflow/cache"
	evstore "github.com/evalflow/evalflow/store"
)

// Client is one endpoint with its limiter, retry policy, quota and cost
// guards and cache. Safe for concurrent use; share one per endpoint (see
// Shared) so that every stage calling it is bound by the same limits.
type Client struct {
	cfg       Config
	prov      Provider
	lim       *Limiter
	storeOnce sync.Once
	store     *cache.Store  // set by cacheStore; nil: no cache
	stores    *cache.Stores // where the cache is opened (its Pool's)

	warning string // guarded by mu

	mu      sync.Mutex
	spent   atomicFloat           // dollars this client spent
	latched atomic.Pointer[Error] // quota exhausted or budget reached: no more calls
	// runSpend, set by a Pool, sums the dollars of every client of the run
	// (generation, repairs and judges): max_cost is held against it.
	runSpend *spend
	// admit, set by a Pool (SetAdmit), is the run's shared admission.
	admit Admit
	// served holds the distinct model ids and system fingerprints the API
	// reported (written under mu; see Served).
	served atomic.Pointer[provenanceSet]

	calls, retries, hits, inTok, outTok atomic.Int64

	// parents derives each call's timeout context (see callParents).
	parents callParents

	// now and sleep are replaceable by tests.
	sleep func(ctx context.Context, d time.Duration) error
}

// NewProvider builds cfg's provider with the key from the environment.
func NewProvider(cfg Config) (Provider, error) {
	conns := cfg.MaxConcurrency
	if conns <= 0 {
		conns = DefaultMaxConcurrency
	}
	switch cfg.Provider {
	case "openai", "":
		return NewOpenAI(cfg.BaseURL, cfg.APIKey(), conns), nil
	case "anthropic":
		return NewAnthropic(cfg.BaseURL, cfg.APIKey(), conns), nil
	case "gemini":
		return NewGemini(cfg.BaseURL, cfg.APIKey(), conns)
	}
	return nil, fmt.Errorf("unknown provider %q", cfg.Provider)
}

// New returns a client for cfg speaking through prov (nil: NewProvider).
// With cfg.Cache it uses the shared cache store in cfg.CacheDir (or
// cache.DefaultPath); when that cannot be opened it falls back to a memory
// store and says so in Warning.
func New(cfg Config, prov Provider) (*Client, error) {
	if prov == nil {
		var err error
		if prov, err = NewProvider(cfg); err != nil {
			return nil, err
		}
	}
	c := &Client{cfg: cfg, prov: prov, lim: NewLimiter(cfg.Limits), sleep: sleep}
	return c, nil
}

// cacheStore opens the cache on first use (planning a pipeline opens no
// file): cfg.CacheDir/llm or cache.DefaultPath; a store that cannot be
// opened (an unwritable directory) is replaced by a memory store and
// Warning says so.
func (c *Client) cacheStore() *cache.Store {
	if !c.cfg.Cache {
		return nil
	}
	c.storeOnce.Do(func() {
		path := cache.DefaultPath()
		if c.cfg.CacheDir != "" {
			path = filepath.Join(c.cfg.CacheDir, "llm")
		}
		stores := c.stores
		if stores == nil {
			stores = cache.NewStores() // a client of its own (tests, tools)
			c.stores = stores
		}
		s, err := stores.Open(path)
		if err != nil {
			c.mu.Lock()
			c.warning = err.Error() + "; using a memory cache for this run"
			c.mu.Unlock()
			s, _ = stores.Open("")
		}
		c.store = s
	})
	return c.store
}

// Warning says why the disk cache is not used, "" when it is (or caching
// is off, or no call was made yet).
func (c *Client) Warning() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.warning
}

// Config returns the endpoint's configuration.
func (c *Client) Config() Config { return c.cfg }

// Limiter returns the endpoint's limiter.
func (c *Client) Limiter() *Limiter { return c.lim }

// Store returns the cache store (opening it), nil when caching is off.
func (c *Client) Store() *cache.Store { return c.cacheStore() }

// Stats counts what a Client did.
type Stats struct {
	Calls        int64   // provider calls made, retries included
	Retries      int64   // of those, retries
	CacheHits    int64   // requests answered from the cache
	InputTokens  int64   // tokens sent in calls made
	OutputTokens int64   // tokens received in calls made
	Cost         float64 // dollars spent
}

// Stats returns the counters so far.
func (c *Client) Stats() Stats {
	spent := c.spent.Load()
	return Stats{Calls: c.calls.Load(), Retries: c.retries.Load(), CacheHits: c.hits.Load(),
		InputTokens: c.inTok.Load(), OutputTokens: c.outTok.Load(), Cost: spent}
}

// NewRequest builds a request with the endpoint's parameters; system ""
// means the model block's system prompt.
func (c *Client) NewRequest(system string, msgs []Message, sample int) *Request {
	if system == "" {
		system = c.cfg.System
	}
	return &Request{Model: c.cfg.Model, System: system, Messages: msgs, Temperature: c.cfg.Temperature,
		TopP: c.cfg.TopP, MaxTokens: c.cfg.MaxTokens, Seed: c.cfg.Seed, Stop: c.cfg.Stop, Sample: sample}
}

// CacheKey is the content address of req on this endpoint: provider, base
// URL, model and the full request, sample index included.
func (c *Client) CacheKey(kind string, req *Request) string {
	k, _ := cache.Key(struct {
		Kind     string   `json:"kind"`
		Provider string   `json:"provider"`
		BaseURL  string   `json:"base_url"`
		Request  *Request `json:"request"`
	}{kind, c.cfg.Provider, c.cfg.BaseURL, req})
	return k
}

// Complete answers req: from the cache when it holds the same request,
// otherwise by calling the provider under the limiter, retrying transient
// failures. A failed call is never cached. After a quota or budget error
// every later Complete fails at once with the same kind.
func (c *Client) Complete(ctx context.Context, req *Request) (*Response, error) {
	return c.complete(ctx, "completion", req)
}

// CompleteKind is Complete for a caller that is not a generator (an LLM
// judge): kind separates its cache entries and names them in `evalflow
// cache explain`.
func (c *Client) CompleteKind(ctx context.Context, kind string, req *Request) (*Response, error) {
	return c.complete(ctx, kind, req)
}

func (c *Client) complete(ctx context.Context, kind string, req *Request) (*Response, error) {
	start := time.Now()
	if req.Model == "" {
		req.Model = c.cfg.Model
	}
	store := c.cacheStore()
	probing := evstore.Probing(ctx)
	if store != nil && !probing && !evstore.Writes(ctx) {
		store = nil // -no-cache: neither read nor written
	}
	// The key hashes the whole request: computed only when a cache is
	// read or written (Response.CacheKey is "" without one).
	var key string
	if store != nil {
		key = c.CacheKey(kind, req)
	}
	if store != nil && evstore.Reads(ctx) {
		if e, ok, _ := store.Get(key); ok {
			var r Response
			if json.Unmarshal(e.Response, &r) == nil {
				c.hits.Add(1)
				evstore.Call(ctx, evstore.KindLLM, true)
				evstore.ModelCall(ctx, c.cfg.Provider+" "+req.Model, true, r.InputTokens, r.OutputTokens)
				r.CacheHit, r.CacheKey, r.Latency = true, key, time.Since(start)
				c.noteServed(&r)
				return &r, nil
			}
		}
	}
	evstore.Call(ctx, evstore.KindLLM, false)
	if probing {
		// evalflow plan calls no model: it estimates the request's tokens
		// (its text over 4, plus max_tokens or 256 out).
		out := req.MaxTokens
		if out <= 0 {
			out = 256
		}
		evstore.ModelCall(ctx, c.cfg.Provider+" "+req.Model, false, estimateTokens(req)-out, out)
		return nil, &Error{Kind: KindNotCached, Msg: "not in the LLM cache (evalflow plan calls no model)"}
	}
	est := estimateTokens(req)
	var last *Error
	for try := 0; ; try++ {
		if err := c.check(); err != nil {
			return nil, err
		}
		release, err := c.lim.Acquire(ctx, est)
		if err != nil {
			return nil, &Error{Kind: KindCancelled, Err: err}
		}
		// A second admission after this process's own limiter: the limits
		// shared by every worker of a distributed run (Pool.SetAdmit).
		releaseShared := func(int, float64) {}
		if c.admit != nil {
			rs, err := c.admit(ctx, est)
			if err != nil {
				release(0)
				if errors.Is(err, ErrBudget) {
					e := &Error{Kind: KindBudget, Msg: err.Error(), Err: err}
					c.latch(e)
					return nil, e
				}
				return nil, &Error{Kind: KindCancelled, Err: err}
			}
			releaseShared = rs
		}
		// The latch may have closed while this caller waited for a slot.
		if err := c.check(); err != nil {
			releaseShared(0, 0)
			release(0)
			return nil, err
		}
		c.calls.Add(1)
		if try > 0 {
			c.retries.Add(1)
		}
		callCtx, cancel := c.parents.withTimeout(ctx, c.cfg.timeout())
		callCtx, capt := withCapture(callCtx)
		resp, err := c.prov.Complete(callCtx, req)
		timedOut := errors.Is(callCtx.Err(), context.DeadlineExceeded)
		cancel()
		used := est
		if resp != nil {
			used = resp.InputTokens + resp.OutputTokens
		}
		// Account spend and latch an exhausted quota before the slot is
		// released, so a caller waiting for it sees the latch and makes no
		// call after the one that crossed max_cost or ran out of quota.
		if err == nil {
			c.account(resp)
		} else if e := asError(err); e.Kind == KindQuota {
			c.latch(&Error{Kind: KindQuota, Status: e.Status, Msg: e.Msg + " (" + ErrQuotaExhausted.Error() + ")", Err: ErrQuotaExhausted})
		} else if e.RetryAfter > 0 {
			c.lim.Pause(e.RetryAfter)
		}
		// Likewise a Retry-After or an exhausted rate-limit window pauses
		// every caller before this one's slot frees up.
		_, h := capt.get()
		c.lim.Pause(rateLimitPause(h, time.Now()))
		var cost float64
		if err == nil {
			cost = resp.Cost
		}
		releaseShared(used, cost)
		release(used)
		if err == nil {
			resp.Retries = try
			resp.CacheKey, resp.Latency = key, time.Since(start)
			c.noteServed(resp)
			if store != nil {
				c.put(store, kind, key, req, resp)
			}
			return resp, nil
		}
		last = asError(err)
		if ctx.Err() != nil {
			return nil, &Error{Kind: KindCancelled, Err: ctx.Err()}
		}
		if timedOut && (last.Kind == KindCancelled || last.Kind == KindTransient) {
			last = &Error{Kind: KindTimeout, Msg: fmt.Sprintf("no answer within %s", c.cfg.timeout()), Err: err}
		}
		switch {
		case last.Kind == KindQuota:
			c.latch(&Error{Kind: KindQuota, Status: last.Status, Msg: last.Msg + " (" + ErrQuotaExhausted.Error() + ")", Err: ErrQuotaExhausted})
			return nil, last
		case !last.Kind.Retryable():
			return nil, last
		case try >= c.cfg.MaxRetries:
			last.Msg = fmt.Sprintf("%s (gave up after %d tries)", last.msg(), try+1)
			return nil, last
		}
		wait := c.backoff(try)
		if last.RetryAfter > 0 {
			wait = last.RetryAfter
			c.lim.Pause(last.RetryAfter)
		}
		if err := c.sleep(ctx, wait); err != nil {
			return nil, &Error{Kind: KindCancelled, Err: err}
		}
	}
}

func (e *Error) msg() string {
	if e.Msg != "" {
		return e.Msg
	}
	if e.Err != nil {
		return e.Err.Error()
	}
	return string(e.Kind)
}

func (cfg Config) timeout() time.Duration {
	if cfg.Timeout <= 0 {
		return DefaultTimeout
	}
	return cfg.Timeout
}

// backoff is exponential with "equal jitter": half the step fixed, half
// random, so waits grow as base·2^try but concurrent callers spread out.
func (c *Client) backoff(try int) time.Duration {
	base, max := c.cfg.BackoffBase, c.cfg.BackoffMax
	if base <= 0 {
		base = DefaultBackoffBase
	}
	if max <= 0 {
		max = DefaultBackoffMax
	}
	step := base << min(try, 30)
	if step > max || step <= 0 {
		step = max
	}
	half := step / 2
	return half + time.Duration(rand.Int64N(int64(half)+1))
}

func (c *Client) check() error {
	latched := c.latched.Load()
	if latched == nil && c.runSpend != nil {
		// Another client of the run (a judge) may have spent the budget.
		if limit := c.runSpend.budget(); limit > 0 && c.runSpend.get() >= limit {
			c.latch(&Error{Kind: KindBudget, Msg: fmt.Sprintf("the run spent $%.4f of max_cost $%.4f (%s)", c.runSpend.get(), limit, ErrBudget), Err: ErrBudget})
			latched = c.latched.Load()
		}
	}
	if latched != nil {
		e := *latched
		return &e
	}
	return nil
}

// spend is a run's dollars across its clients, and the run's budget: the
// smallest max_cost any of its model blocks declares (0: none). Every call
// of the run reads and adds to it, so it takes no lock.
type spend struct {
	total atomicFloat
	limit atomicFloat
}

func (s *spend) setLimit(l float64) {
	if l <= 0 {
		return
	}
	for {
		cur := s.limit.Load()
		if cur != 0 && cur <= l {
			return
		}
		if s.limit.CompareAndSwap(cur, l) {
			return
		}
	}
}

func (s *spend) budget() float64 { return s.limit.Load() }

func (s *spend) add(d float64) float64 { return s.total.Add(d) }

func (s *spend) get() float64 { return s.total.Load() }

// atomicFloat is a float64 read and added to without a lock. The zero
// value is 0.
type atomicFloat struct{ bits atomic.Uint64 }

func (f *atomicFloat) Load() float64 { return math.Float64frombits(f.bits.Load()) }

func (f *atomicFloat) CompareAndSwap(old, new float64) bool {
	return f.bits.CompareAndSwap(math.Float64bits(old), math.Float64bits(new))
}

// Add adds d and returns the new value.
func (f *atomicFloat) Add(d float64) float64 {
	for {
		old := f.bits.Load()
		v := math.Float64frombits(old) + d
		if f.bits.CompareAndSwap(old, math.Float64bits(v)) {
			return v
		}
	}
}

func (c *Client) latch(e *Error) {
	c.latched.CompareAndSwap(nil, e)
}

func (c *Client) account(r *Response) {
	r.Cost = (float64(r.InputTokens)*c.cfg.PriceInput + float64(r.OutputTokens)*c.cfg.PriceOutput) / 1e6
	c.inTok.Add(int64(r.InputTokens))
	c.outTok.Add(int64(r.OutputTokens))
	spent := c.spent.Add(r.Cost)
	limit := c.cfg.MaxCost
	if c.runSpend != nil {
		spent = c.runSpend.add(r.Cost) // max_cost counts every call of the run
		limit = c.runSpend.budget()
	}
	over := limit > 0 && spent >= limit
	if over {
		c.latch(&Error{Kind: KindBudget, Msg: fmt.Sprintf("spent $%.4f of max_cost $%.4f (%s)", spent, limit, ErrBudget), Err: ErrBudget})
	}
}

func (c *Client) put(store *cache.Store, kind, key string, req *Request, resp *Response) {
	rq, _ := json.Marshal(req)
	rs, _ := json.Marshal(resp)
	_ = store.Put(&cache.Entry{Key: key, Kind: kind, Provider: c.cfg.Provider, BaseURL: c.cfg.BaseURL,
		Model: req.Model, Request: rq, Response: rs})
}

func asError(err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	return &Error{Kind: KindOf(err), Err: err}
}

// estimateTokens guesses a request's tokens before the call (4 characters
// a token, plus the completion budget) for the tokens-per-minute bucket;
// the bucket is corrected with the real count afterwards.
func estimateTokens(r *Request) int {
	n := len(r.System)
	for _, m := range r.Messages {
		n += len(m.Content)
	}
	out := r.MaxTokens
	if out <= 0 {
		out = 256
	}
	return n/4 + out
}

// Pool holds one Client per endpoint configuration for its owner (one
// run, built in main and passed down): every stage and metric naming the
// same model block (the same configuration) shares one limiter, one retry
// budget, one cost guard. Its clients' response caches come from stores.
type Pool struct {
	mu     sync.Mutex
	m      map[string]*Client
	stores *cache.Stores
	own    bool // the pool made stores and closes them
	spend  spend
	admit  func(cfg Config) Admit
}

// Admit is a second admission every call of a client passes after the
// client's own limiter: the limits a distributed run shares over its
// workers (cluster.Limits). It waits until tokens (an estimate) may be
// sent, or fails: an error wrapping ErrBudget stops the endpoint's calls
// like max_cost, any other ends the call as cancelled. release is called
// once the call is over with the tokens it used and what it cost.
type Admit = func(ctx context.Context, tokens int) (release func(used int, cost float64), err error)

// SetAdmit gives every client of the pool, those made already and those
// made later, the admission f returns for its configuration (nil: none).
// It is set before the run makes calls: a client reads it unlocked.
func (p *Pool) SetAdmit(f func(cfg Config) Admit) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.admit = f
	for _, c := range p.m {
		c.admit = nil
		if f != nil {
			c.admit = f(c.cfg)
		}
	}
}

// NewPool returns an empty pool whose clients open their caches through
// stores (nil: a set of its own, closed by Close).
func NewPool(stores *cache.Stores) *Pool {
	p := &Pool{m: map[string]*Client{}, stores: stores}
	if stores == nil {
		p.stores, p.own = cache.NewStores(), true
	}
	return p
}

// Client returns the pool's Client for cfg's endpoint, creating it on first
// use.
func (p *Pool) Client(cfg Config) (*Client, error) {
	id := cfg.Identity()
	p.mu.Lock()
	defer p.mu.Unlock()
	if c, ok := p.m[id]; ok {
		return c, nil
	}
	c, err := New(cfg, nil)
	if err != nil {
		return nil, err
	}
	c.stores = p.stores
	c.runSpend = &p.spend
	if p.admit != nil {
		c.admit = p.admit(cfg)
	}
	p.spend.setLimit(cfg.MaxCost)
	p.m[id] = c
	return c, nil
}

// AddSpent adds dollars an earlier process of the same run spent (a
// resumed run), so max_cost holds across resumes.
func (p *Pool) AddSpent(d float64) { p.spend.add(d) }

// Stats sums every client's counters: the run's model calls, generation,
// repairs and judges alike.
func (p *Pool) Stats() Stats {
	p.mu.Lock()
	defer p.mu.Unlock()
	var t Stats
	for _, c := range p.m {
		s := c.Stats()
		t.Calls += s.Calls
		t.Retries += s.Retries
		t.CacheHits += s.CacheHits
		t.InputTokens += s.InputTokens
		t.OutputTokens += s.OutputTokens
		t.Cost += s.Cost
	}
	return t
}

// Configs lists the configuration of every client in the pool, sorted by
// identity.
func (p *Pool) Configs() []Config {
	p.mu.Lock()
	defer p.mu.Unlock()
	ids := make([]string, 0, len(p.m))
	for id := range p.m {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	out := make([]Config, len(ids))
	for i, id := range ids {
		out[i] = p.m[id].cfg
	}
	return out
}

// Close closes the caches the pool opened itself.
func (p *Pool) Close() error {
	if p.own {
		return p.stores.Close()
	}
	return nil
}

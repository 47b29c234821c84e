package cluster

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Shared limits
//
// A model endpoint's limits (max_concurrency, requests_per_minute,
// tokens_per_minute) and the run's cost budget (max_cost) hold over all
// the run's workers together. Each is a ledger, one JSON value in
// LimitsBucket updated with compare-and-set:
//
//	KEY.ep.ID   an endpoint: its limits, the request and token buckets
//	            (level and time of the last refill), and one lease per
//	            worker process: the concurrency slots it holds and wants
//	KEY.budget  the run's max_cost: dollars of leases that ended, and one
//	            lease per worker process: dollars reserved and spent
//
// A worker process takes what it needs in batches — a slot is kept while
// its process has calls to make, tokens are taken at least a quarter
// second's worth at a time, dollars a fiftieth of max_cost at a time — so
// the ledger is written a few times a second however many calls are made.
// Tokens taken are spent or lost, never returned, so the request and token
// rates cannot exceed the buckets' (the per-minute rate plus a burst of a
// tenth of a minute, as llm's own limiter) whatever the workers do.
//
// A lease is renewed every third of its time to live (Spec.LeaseTTL) and
// expires when it was not: every process notes when it saw each lease's
// counter change, and removes a lease it has not seen renewed for that
// long (by its own clock: no two machines' clocks are compared, except the
// buckets' refill times, whose skew adds to the burst). An expired lease's
// slots are free again; its dollars count as spent (reserved or reported
// spent, whichever is larger: a dead worker's last calls were paid). A
// process that could not renew its own lease for most of its time to live
// stops starting calls until it can.

// ErrBudgetSpent is returned by Gate.Acquire once the run's max_cost is
// reserved or spent over all its workers.
var ErrBudgetSpent = errors.New("the run's max_cost is spent (over all its workers)")

// EndpointLimits are one model endpoint's limits over the whole run (0:
// none): calls in flight at once, and requests and tokens per minute.
type EndpointLimits struct {
	Concurrency       int
	RequestsPerMinute float64
	TokensPerMinute   float64
}

// Gate admits one worker process's calls to one model endpoint under the
// run's shared limits. Acquire waits until a call estimated at tokens
// tokens may start, and returns release, to be called once when the call
// is over with the tokens it used and what it cost in dollars. It fails
// when ctx is done, or with ErrBudgetSpent. Safe for concurrent use.
type Gate interface {
	Acquire(ctx context.Context, tokens int) (release func(used int, cost float64), err error)
}

// Limits is one worker process's share of a run's shared limits: a Gate
// per model endpoint and the run's budget. Safe for concurrent use; Close
// gives its leases back.
type Limits struct {
	kv     jetstream.KeyValue
	run    string
	holder string
	ttl    time.Duration
	spent  float64 // Spec.Spent: where a new budget ledger starts

	stop chan struct{} // closed by Close: the agents' loops end
	wg   sync.WaitGroup

	mu     sync.Mutex
	gates  map[string]*endpointGate
	budget *budgetGate // nil until a gate with a budget is made
	closed bool
}

// NewLimits opens the shared limits of the run spec describes for the
// worker process holder (unique per process: a restarted process is a
// new holder).
func NewLimits(ctx context.Context, nc *nats.Conn, spec *Spec, holder string) (*Limits, error) {
	js, err := jetstream.New(nc)
	if err != nil {
		return nil, err
	}
	kv, err := limitsBucket(ctx, js, spec.Replicas)
	if err != nil {
		return nil, err
	}
	return &Limits{kv: kv, run: spec.Key, holder: holder, ttl: spec.LeaseTTL(), stop: make(chan struct{}),
		gates: map[string]*endpointGate{}, spent: spec.Spent}, nil
}

// Gate returns the gate of the endpoint id (a name the same on every
// worker: the hash of the endpoint's configuration) with limits l, and the
// run's budget maxCost (0: none; the smallest of all gates' holds). Gates
// of one id are one gate.
func (s *Limits) Gate(id string, l EndpointLimits, maxCost float64) Gate {
	s.mu.Lock()
	defer s.mu.Unlock()
	var b *budgetGate
	if maxCost > 0 {
		if s.budget == nil {
			s.budget = newBudgetGate(s, maxCost)
			s.start(s.budget.a, s.budget.step)
		} else {
			s.budget.lower(maxCost)
		}
		b = s.budget
	}
	if g, ok := s.gates[id]; ok {
		if b != nil {
			g.setBudget(b)
		}
		return g
	}
	g := newEndpointGate(s, id, l, b)
	s.gates[id] = g
	s.start(g.a, g.step)
	return g
}

// start runs an agent's loop until Close. Called with s.mu held.
func (s *Limits) start(a *agent, step func(ctx context.Context)) {
	if s.closed {
		return
	}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		go func() {
			select {
			case <-s.stop:
				cancel()
			case <-ctx.Done():
			}
		}()
		a.run(ctx, step)
	}()
}

// Close gives back every lease (slots free again, unspent dollars back
// to the budget) and stops. Calls in flight should be over.
func (s *Limits) Close() {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	s.closed = true
	var agents []*agent
	for _, g := range s.gates {
		agents = append(agents, g.a)
	}
	if s.budget != nil {
		agents = append(agents, s.budget.a)
	}
	s.mu.Unlock()
	close(s.stop)
	s.wg.Wait()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, a := range agents {
		a.leave(ctx)
	}
}

// abandon stops without giving anything back, as a killed process does
// (tests).
func (s *Limits) abandon() {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	close(s.stop)
	s.wg.Wait()
}

// deleteLimits removes a run's ledgers (the run is complete).
func deleteLimits(ctx context.Context, js jetstream.JetStream, runKey string) {
	kv, err := js.KeyValue(ctx, LimitsBucket)
	if err != nil {
		return
	}
	keys, err := kv.ListKeysFiltered(ctx, runKey+".>")
	if err != nil {
		return
	}
	for k := range keys.Keys() {
		kv.Purge(ctx, k)
	}
}

// ledger is the value of a limits key. Endpoint ledgers use Cap, RPM,
// TPM, Req and Tok; the budget ledger Budget and Closed.
type ledger struct {
	Cap    int               `json:"cap,omitempty"`
	RPM    float64           `json:"rpm,omitempty"`
	TPM    float64           `json:"tpm,omitempty"`
	Req    tokenBucket       `json:"req"`
	Tok    tokenBucket       `json:"tok"`
	Budget float64           `json:"budget,omitempty"`
	Closed float64           `json:"closed,omitempty"` // dollars of leases that ended
	Leases map[string]*lease `json:"leases"`
}

// lease is one worker process's share of a ledger.
type lease struct {
	Beat     uint64  `json:"beat"` // +1 at every write of its holder
	TTLms    int64   `json:"ttl_ms"`
	Slots    int     `json:"slots,omitempty"`
	Want     int     `json:"want,omitempty"` // slots in use and waited for
	Reserved float64 `json:"reserved,omitempty"`
	Spent    float64 `json:"spent,omitempty"`
}

func (l *lease) cost() float64 { return math.Max(l.Reserved, l.Spent) }

// clone copies l deeply.
func (l *ledger) clone() *ledger {
	c := *l
	c.Leases = make(map[string]*lease, len(l.Leases))
	for h, le := range l.Leases {
		x := *le
		c.Leases[h] = &x
	}
	return &c
}

// tokenBucket is a shared bucket: Level tokens at time At (Unix ms of the
// writer's clock, never moved back), refilled at rate per second up to
// burst.
type tokenBucket struct {
	Level float64 `json:"level"`
	At    int64   `json:"at"`
}

func (b *tokenBucket) refill(perMinute, burst float64, now time.Time) {
	ms := now.UnixMilli()
	if b.At == 0 {
		b.Level, b.At = burst, ms
		return
	}
	if ms > b.At {
		b.Level = math.Min(burst, b.Level+float64(ms-b.At)/60000*perMinute)
		b.At = ms
	}
}

// burstOf is llm's: a tenth of a minute's worth, at least 1.
func burstOf(perMinute float64) float64 { return math.Max(perMinute/10, 1) }

// batchOf is how many tokens a process takes at once: a quarter second's
// worth, at least 1, at most the burst.
func batchOf(perMinute float64) float64 {
	return math.Min(math.Max(perMinute/240, 1), burstOf(perMinute))
}

// take moves tokens from the shared bucket b to a process whose callers
// lack deficit: as soon as a batch's worth is there (or the whole deficit,
// if smaller), all there is up to the deficit or a batch, whichever is
// larger — so tokens flow to the processes about a batch at a time rather
// than in bursts of a whole deficit. Otherwise it says when to look again.
func take(b *tokenBucket, perMinute, deficit float64, now time.Time) (got float64, retry time.Duration) {
	burst, batch := burstOf(perMinute), batchOf(perMinute)
	b.refill(perMinute, burst, now)
	first := math.Min(math.Min(deficit, batch), burst)
	if b.Level >= first {
		got = math.Min(b.Level, math.Max(deficit, batch))
		b.Level -= got
		return got, 0
	}
	return 0, time.Duration((first - b.Level) / perMinute * float64(time.Minute))
}

type beatSeen struct {
	beat uint64
	at   time.Time
}

// agent owns one ledger key for its process: it reads and writes it, and
// tracks when it saw each lease renewed.
type agent struct {
	kv     jetstream.KeyValue
	key    string
	holder string
	ttl    time.Duration
	kick   chan struct{}

	mu        sync.Mutex
	seen      map[string]beatSeen
	beat      uint64
	lastWrite time.Time // when our last successful write started; zero: none
	held      bool      // our lease is in the ledger (as far as we know)
	wakeAt    time.Time // the loop's next timed step (zero: the renewal tick only)
	view      *ledger   // the latest ledger seen (read or written); never modified
}

func newAgent(s *Limits, key string) *agent {
	return &agent{kv: s.kv, key: key, holder: s.holder, ttl: s.ttl, kick: make(chan struct{}, 1), seen: map[string]beatSeen{}}
}

// poke asks the loop for a step.
func (a *agent) poke() {
	select {
	case a.kick <- struct{}{}:
	default:
	}
}

// fenced reports whether our lease may have expired in others' eyes: our
// last renewal started most of a time to live ago.
func (a *agent) fenced() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.held && time.Since(a.lastWrite) > a.ttl*4/5
}

func (a *agent) renewDue() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.held && time.Since(a.lastWrite) >= a.ttl/3
}

// wakeIn asks the loop for a step after d (called by a step).
func (a *agent) wakeIn(d time.Duration) {
	a.mu.Lock()
	if t := time.Now().Add(d); a.wakeAt.IsZero() || t.Before(a.wakeAt) {
		a.wakeAt = t
	}
	a.mu.Unlock()
}

// latest returns the latest ledger seen (nil: none yet); it must not be
// modified.
func (a *agent) latest() *ledger {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.view
}

// run calls step on every poke, every tick (a sixth of the time to live)
// and every change of the ledger, until ctx ends.
func (a *agent) run(ctx context.Context, step func(ctx context.Context)) {
	tick := time.NewTicker(a.ttl / 6)
	defer tick.Stop()
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	var updates <-chan jetstream.KeyValueEntry
	var watcher jetstream.KeyWatcher
	defer func() {
		if watcher != nil {
			watcher.Stop()
		}
	}()
	watch := func() {
		if watcher != nil {
			return
		}
		if w, err := a.kv.Watch(ctx, a.key, jetstream.UpdatesOnly()); err == nil {
			watcher, updates = w, w.Updates()
		}
	}
	watch()
	for {
		select {
		case <-ctx.Done():
			return
		case <-a.kick:
		case <-tick.C:
			watch()
		case <-timer.C:
		case e, ok := <-updates:
			if !ok {
				watcher, updates = nil, nil
				continue
			}
			if e != nil && e.Operation() == jetstream.KeyValuePut {
				var l ledger
				if json.Unmarshal(e.Value(), &l) == nil {
					a.observe(&l, time.Now())
				}
			}
		}
		a.mu.Lock()
		if !a.wakeAt.IsZero() && !time.Now().Before(a.wakeAt) {
			a.wakeAt = time.Time{}
		}
		a.mu.Unlock()
		step(ctx)
		a.mu.Lock()
		next := a.wakeAt
		a.mu.Unlock()
		if !next.IsZero() {
			timer.Reset(max(time.Until(next), 0))
		}
	}
}

// observe notes the leases' counters and keeps l as the latest ledger
// (l must not be modified afterwards).
func (a *agent) observe(l *ledger, now time.Time) {
	a.mu.Lock()
	a.view = l
	for h, le := range l.Leases {
		if h == a.holder {
			continue
		}
		if s, ok := a.seen[h]; !ok || s.beat != le.Beat {
			a.seen[h] = beatSeen{beat: le.Beat, at: now}
		}
	}
	for h := range a.seen {
		if _, ok := l.Leases[h]; !ok {
			delete(a.seen, h)
		}
	}
	a.mu.Unlock()
}

// expire removes the leases not seen renewed within their time to live;
// their dollars count as spent.
func (a *agent) expire(l *ledger, now time.Time) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for h, le := range l.Leases {
		if h == a.holder {
			continue
		}
		if s, ok := a.seen[h]; ok && s.beat == le.Beat && now.Sub(s.at) > time.Duration(le.TTLms)*time.Millisecond {
			l.Closed += le.cost()
			delete(l.Leases, h)
			delete(a.seen, h)
		}
	}
}

// errNoLedger: the key is not there and the transaction may not create it.
var errNoLedger = errors.New("no ledger")

// txn reads the ledger (fresh() when missing, if create), drops expired
// leases, and hands it to fn with our lease (added when missing; lost
// says it was there and someone removed it: it had expired in their
// eyes). When fn says write, the ledger goes back with our lease's beat
// advanced, by compare-and-set, and commit (if any) runs; on a conflict
// the whole transaction runs again on the newer value.
func (a *agent) txn(ctx context.Context, create bool, fresh func() *ledger, fn func(l *ledger, me *lease, lost bool) (write bool, commit func())) error {
	for try := 0; ; try++ {
		if try > 0 {
			// Others write the same key: step aside a little, randomly.
			d := time.Duration(try) * time.Duration(1+rand.IntN(7)) * time.Millisecond
			if !sleepCtx(ctx, min(d, 100*time.Millisecond)) {
				return ctx.Err()
			}
		}
		start := time.Now()
		var l ledger
		var rev uint64
		e, err := a.kv.Get(ctx, a.key)
		switch {
		case errors.Is(err, jetstream.ErrKeyNotFound) || errors.Is(err, jetstream.ErrKeyDeleted):
			if !create {
				return errNoLedger
			}
			l = *fresh()
		case err != nil:
			return err
		default:
			if err := json.Unmarshal(e.Value(), &l); err != nil {
				return fmt.Errorf("limits %s: %w", a.key, err)
			}
			rev = e.Revision()
		}
		if l.Leases == nil {
			l.Leases = map[string]*lease{}
		}
		a.observe(l.clone(), start)
		a.expire(&l, start)
		me := l.Leases[a.holder]
		a.mu.Lock()
		lost := me == nil && a.held
		a.mu.Unlock()
		if me == nil {
			me = &lease{}
			l.Leases[a.holder] = me
		}
		write, commit := fn(&l, me, lost)
		if !write {
			return nil
		}
		_, present := l.Leases[a.holder]
		a.mu.Lock()
		if present {
			a.beat++
			me.Beat, me.TTLms = a.beat, a.ttl.Milliseconds()
		}
		a.mu.Unlock()
		b, err := json.Marshal(&l)
		if err != nil {
			return err
		}
		if rev == 0 {
			_, err = a.kv.Create(ctx, a.key, b)
		} else {
			_, err = a.kv.Update(ctx, a.key, b, rev)
		}
		if errors.Is(err, jetstream.ErrKeyRevisionMismatch) || errors.Is(err, jetstream.ErrKeyExists) {
			continue
		}
		if err != nil {
			return err
		}
		a.mu.Lock()
		a.lastWrite, a.held, a.view = start, present, l.clone()
		a.mu.Unlock()
		if commit != nil {
			commit()
		}
		return nil
	}
}

// leave removes our lease (Close): its dollars spent count as spent.
func (a *agent) leave(ctx context.Context) {
	a.mu.Lock()
	held := a.held
	a.mu.Unlock()
	if !held {
		return
	}
	a.txn(ctx, false, nil, func(l *ledger, me *lease, _ bool) (bool, func()) {
		l.Closed += me.Spent
		delete(l.Leases, a.holder)
		return true, nil
	})
	a.mu.Lock()
	a.held = false
	a.mu.Unlock()
}

// endpointGate is one process's share of an endpoint's limits.
type endpointGate struct {
	a   *agent
	lim EndpointLimits

	mu       sync.Mutex
	budget   *budgetGate
	slots    int     // slots our lease holds (never more than the ledger says)
	busy     int     // of those, in use
	waiting  int     // callers waiting for a slot
	req      float64 // request tokens in hand
	tok      float64 // tokens in hand (negative: calls used more than estimated)
	wantReq  float64 // what callers waiting for tokens need
	wantTok  float64
	tokensAt time.Time // no bucket has enough before then
	idle     time.Time // since when a slot has been idle (zero: none is)
	wake     chan struct{}
}

func newEndpointGate(s *Limits, id string, l EndpointLimits, b *budgetGate) *endpointGate {
	return &endpointGate{a: newAgent(s, s.run+".ep."+id), lim: l, budget: b, wake: make(chan struct{})}
}

func (g *endpointGate) setBudget(b *budgetGate) {
	g.mu.Lock()
	g.budget = b
	g.mu.Unlock()
}

func (g *endpointGate) fresh() *ledger {
	return &ledger{Cap: g.lim.Concurrency, RPM: g.lim.RequestsPerMinute, TPM: g.lim.TokensPerMinute}
}

// signal wakes every waiting caller. Called with g.mu held.
func (g *endpointGate) signal() {
	close(g.wake)
	g.wake = make(chan struct{})
}

// wait waits for a change, a while, or ctx. Called with g.mu held;
// returns with it held.
func (g *endpointGate) wait(ctx context.Context) error {
	w := g.wake
	g.mu.Unlock()
	g.a.poke()
	t := time.NewTimer(g.a.ttl / 6)
	defer t.Stop()
	var err error
	select {
	case <-w:
	case <-t.C:
	case <-ctx.Done():
		err = ctx.Err()
	}
	g.mu.Lock()
	return err
}

func (g *endpointGate) Acquire(ctx context.Context, tokens int) (func(used int, cost float64), error) {
	g.mu.Lock()
	b := g.budget
	g.mu.Unlock()
	if b != nil {
		if err := b.allow(ctx); err != nil {
			return nil, err
		}
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.lim.Concurrency > 0 {
		for g.busy >= g.slots || g.a.fenced() {
			g.waiting++
			err := g.wait(ctx)
			g.waiting--
			if err != nil {
				return nil, err
			}
		}
		g.busy++
		if g.busy >= g.slots {
			g.idle = time.Time{}
		}
	}
	undo := func() {
		if g.lim.Concurrency > 0 {
			g.busy--
			g.signal()
			g.a.poke()
		}
	}
	if g.lim.RequestsPerMinute > 0 {
		for g.req < 1 {
			g.wantReq++
			err := g.wait(ctx)
			g.wantReq--
			if err != nil {
				undo()
				return nil, err
			}
		}
		g.req--
	}
	est := float64(tokens)
	if g.lim.TokensPerMinute > 0 && est > 0 {
		// A call larger than the burst goes once a burst is in hand.
		need := math.Min(est, burstOf(g.lim.TokensPerMinute))
		for g.tok < need {
			g.wantTok += need
			err := g.wait(ctx)
			g.wantTok -= need
			if err != nil {
				undo()
				return nil, err
			}
		}
		g.tok -= est
	}
	var once sync.Once
	return func(used int, cost float64) {
		once.Do(func() {
			if b != nil {
				b.spend(cost)
			}
			g.mu.Lock()
			defer g.mu.Unlock()
			if g.lim.TokensPerMinute > 0 && est > 0 {
				g.tok += est - float64(used)
			}
			if g.lim.Concurrency > 0 {
				g.busy--
				if v := g.a.latest(); v != nil && g.slots > share(v) && starved(v, g.a.holder) {
					// Another process is starved and this one holds more
					// than its share: the slot goes back.
					g.slots--
					g.a.poke()
				} else if g.busy+g.waiting < g.slots && g.idle.IsZero() {
					g.idle = time.Now()
				}
				g.signal()
			}
		})
	}, nil
}

// share is a process's fair number of slots when several want some.
func share(l *ledger) int {
	n := 0
	for _, le := range l.Leases {
		if le.Want > 0 {
			n++
		}
	}
	return max(1, l.Cap/max(n, 1))
}

// starved reports whether a process other than holder wants slots and
// holds fewer than its share.
func starved(l *ledger, holder string) bool {
	if l.Cap <= 0 {
		return false
	}
	sh := share(l)
	for h, le := range l.Leases {
		if h != holder && le.Want > le.Slots && le.Slots < sh {
			return true
		}
	}
	return false
}

// step brings the lease in line with what the process's callers need:
// more slots for callers waiting, idle ones back (after a third of the
// time to live, or at once for a starved process), tokens for callers
// waiting, and a renewal when due.
func (g *endpointGate) step(ctx context.Context) {
	now := time.Now()
	v := g.a.latest()
	g.mu.Lock()
	want := g.busy + g.waiting
	needSlots := g.lim.Concurrency > 0 && g.waiting > 0 && want > g.slots
	needTokens := !now.Before(g.tokensAt) && ((g.wantReq > 0 && g.req < g.wantReq) || (g.wantTok > 0 && g.tok < g.wantTok))
	giveBack := g.slots > want && ((!g.idle.IsZero() && now.Sub(g.idle) >= g.a.ttl/3) || v != nil && starved(v, g.a.holder))
	var mine *lease
	if v != nil {
		mine = v.Leases[g.a.holder]
	}
	changed := mine != nil && (mine.Want != want || mine.Slots != g.slots)
	g.mu.Unlock()
	if !needSlots && !needTokens && !giveBack && !changed && !g.a.renewDue() {
		return
	}
	renew := g.a.renewDue()
	var retry time.Duration
	g.a.txn(ctx, needSlots || needTokens, g.fresh, func(l *ledger, me *lease, lost bool) (bool, func()) {
		now := time.Now()
		g.mu.Lock()
		defer g.mu.Unlock()
		retry = 0
		if lost {
			// Our lease expired in someone's eyes while we could not renew
			// it: the calls in flight still hold their slots.
			g.slots = g.busy
		}
		want := g.busy + g.waiting
		prev := g.slots
		slots := prev
		others := starved(l, g.a.holder)
		if slots > want && ((!g.idle.IsZero() && now.Sub(g.idle) >= g.a.ttl/3) || others) {
			// Slots going back leave this process before the ledger
			// says so (and slots coming take effect after): it never
			// uses more than the ledger gives it.
			slots = want
			g.slots = slots
		}
		if l.Cap > 0 && want > slots {
			// Grow, but not past a fair share while another process is
			// starved.
			limit := want
			if others {
				limit = min(want, max(slots, share(l)))
			}
			used := 0
			for h, le := range l.Leases {
				if h != g.a.holder {
					used += le.Slots
				}
			}
			if free := l.Cap - used - slots; free > 0 && limit > slots {
				slots += min(free, limit-slots)
			}
		}
		write := lost || renew || slots != me.Slots || want != me.Want || slots != g.slots
		me.Slots, me.Want = slots, want
		var gotReq, gotTok float64
		if l.RPM > 0 && g.wantReq > g.req {
			gotReq, retry = take(&l.Req, l.RPM, g.wantReq-g.req, now)
		}
		if l.TPM > 0 && g.wantTok > g.tok {
			var r time.Duration
			gotTok, r = take(&l.Tok, l.TPM, math.Min(g.wantTok-g.tok, burstOf(l.TPM)), now)
			retry = max(retry, r)
		}
		write = write || gotReq > 0 || gotTok > 0
		if slots == 0 && want == 0 {
			delete(l.Leases, g.a.holder) // nothing held, nothing wanted
			write = write || mine != nil
		}
		return write, func() {
			g.mu.Lock()
			defer g.mu.Unlock()
			if slots < prev || slots == 0 {
				g.idle = time.Time{}
			}
			if slots > prev {
				// Slots given back meanwhile (yield) stay given back.
				g.slots += slots - prev
			}
			g.req += gotReq
			g.tok += gotTok
			g.signal()
		}
	})
	g.mu.Lock()
	if retry > 0 {
		g.tokensAt = time.Now().Add(retry)
	} else {
		g.tokensAt = time.Time{}
	}
	g.mu.Unlock()
	if retry > 0 {
		g.a.wakeIn(retry + time.Millisecond)
	}
}

// budgetGate is one process's share of the run's max_cost.
type budgetGate struct {
	a *agent

	mu        sync.Mutex
	limit     float64 // the smallest max_cost asked for
	reserved  float64 // dollars our lease holds
	spent     float64 // dollars our calls cost (since our lease began)
	prior     float64 // what earlier processes of the run spent (Spec.Spent)
	waiting   int
	exhausted bool
	wake      chan struct{}
}

func newBudgetGate(s *Limits, limit float64) *budgetGate {
	return &budgetGate{a: newAgent(s, s.run+".budget"), limit: limit, prior: s.spent, wake: make(chan struct{})}
}

func (b *budgetGate) lower(limit float64) {
	b.mu.Lock()
	if limit < b.limit {
		b.limit = limit
	}
	b.mu.Unlock()
}

func (b *budgetGate) allow(ctx context.Context) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	for b.spent >= b.reserved || b.a.fenced() {
		if b.exhausted && b.spent >= b.reserved {
			return fmt.Errorf("%w: $%.4f of max_cost $%.4f reserved or spent", ErrBudgetSpent, b.limit, b.limit)
		}
		b.waiting++
		w := b.wake
		b.mu.Unlock()
		b.a.poke()
		t := time.NewTimer(b.a.ttl / 6)
		var err error
		select {
		case <-w:
		case <-t.C:
		case <-ctx.Done():
			err = ctx.Err()
		}
		t.Stop()
		b.mu.Lock()
		b.waiting--
		if err != nil {
			return err
		}
	}
	return nil
}

func (b *budgetGate) spend(cost float64) {
	if cost == 0 {
		return
	}
	b.mu.Lock()
	b.spent += cost
	b.mu.Unlock()
}

func (b *budgetGate) step(ctx context.Context) {
	b.mu.Lock()
	need := b.waiting > 0 && b.spent >= b.reserved && !b.exhausted
	b.mu.Unlock()
	if !need && !b.a.renewDue() {
		return
	}
	b.a.txn(ctx, need, func() *ledger { return &ledger{Budget: b.limit, Closed: b.prior} }, func(l *ledger, me *lease, lost bool) (bool, func()) {
		b.mu.Lock()
		defer b.mu.Unlock()
		if lost {
			// Counted as spent by whoever expired it.
			b.reserved, b.spent = 0, 0
		}
		if b.limit < l.Budget || l.Budget == 0 {
			l.Budget = b.limit
		}
		me.Spent = b.spent
		me.Reserved = math.Max(b.reserved, b.spent)
		reserved, exhausted := me.Reserved, false
		if b.waiting > 0 && b.spent >= b.reserved {
			used := l.Closed
			for _, le := range l.Leases {
				used += le.cost()
			}
			if avail := l.Budget - used; avail > 1e-12 {
				me.Reserved += math.Min(avail, l.Budget/50)
				reserved = me.Reserved
			} else {
				exhausted = true
			}
		}
		return true, func() {
			b.mu.Lock()
			defer b.mu.Unlock()
			b.reserved = reserved
			if exhausted {
				b.exhausted = true
			}
			close(b.wake)
			b.wake = make(chan struct{})
		}
	})
}

// EndpointID names a model endpoint in the shared limits: a short hash
// of parts that identify it the same way on every worker.
func EndpointID(parts ...string) string {
	h := sha256.Sum256([]byte(strings.Join(parts, "\x00")))
	return hex.EncodeToString(h[:8])
}

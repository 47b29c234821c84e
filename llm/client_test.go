package llm_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/evalflow/evalflow/llm"
	"github.com/evalflow/evalflow/llm/fake"
)

var protocols = []string{fake.OpenAI, fake.Anthropic, fake.Gemini}

// newClient returns a client for a fresh fake server of protocol with fast
// backoff and a memory cache (cache=false unless asked).
func newClient(t *testing.T, protocol string, cfgEdit func(*llm.Config), opts ...fake.Option) (*llm.Client, *fake.Server) {
	t.Helper()
	srv := fake.New(protocol, opts...)
	t.Cleanup(srv.Close)
	cfg := llm.Config{Provider: protocol, BaseURL: srv.URL, Model: "m-1", Timeout: 2 * time.Second,
		MaxRetries: 4, BackoffBase: 20 * time.Millisecond, BackoffMax: 200 * time.Millisecond}
	if cfgEdit != nil {
		cfgEdit(&cfg)
	}
	c, err := llm.New(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	return c, srv
}

func ask(c *llm.Client, text string, sample int) (*llm.Response, error) {
	return c.Complete(context.Background(), c.NewRequest("be brief", []llm.Message{{Role: "user", Content: text}}, sample))
}

func TestProtocolsRoundTrip(t *testing.T) {
	for _, p := range protocols {
		t.Run(p, func(t *testing.T) {
			c, srv := newClient(t, p, func(c *llm.Config) {
				c.PriceInput, c.PriceOutput = 1e6, 2e6 // $1 / $2 per token: easy arithmetic
				temp := 0.0
				c.Temperature = &temp
			}, fake.WithResponder(func(r fake.Request) string { return "echo: " + r.System + "|" + r.Prompt() }))
			r, err := ask(c, "hello", 0)
			if err != nil {
				t.Fatal(err)
			}
			if r.Text != "echo: be brief|hello" {
				t.Errorf("text = %q", r.Text)
			}
			if r.InputTokens == 0 || r.OutputTokens == 0 {
				t.Errorf("tokens = %d/%d", r.InputTokens, r.OutputTokens)
			}
			if want := float64(r.InputTokens) + 2*float64(r.OutputTokens); r.Cost != want {
				t.Errorf("cost = %v, want %v", r.Cost, want)
			}
			if got := srv.Requests()[0].Model; got != "m-1" {
				t.Errorf("model sent = %q", got)
			}
		})
	}
}

func TestTransientFaultsAreRetried(t *testing.T) {
	faults := []struct {
		name  string
		fault fake.Fault
		kind  llm.Kind
	}{
		{"500", fake.Fault{Kind: fake.FaultServer}, llm.KindTransient},
		{"overloaded", fake.Fault{Kind: fake.FaultOverload}, llm.KindTransient},
		{"truncated-json", fake.Fault{Kind: fake.FaultTruncated}, llm.KindTransient},
		{"reset", fake.Fault{Kind: fake.FaultReset}, llm.KindTransient},
		{"slow-past-timeout", fake.Fault{Kind: fake.FaultSlow, Delay: time.Second}, llm.KindTimeout},
	}
	for _, p := range protocols {
		for _, f := range faults {
			t.Run(p+"/"+f.name, func(t *testing.T) {
				c, srv := newClient(t, p, func(c *llm.Config) { c.Timeout = 300 * time.Millisecond })
				srv.Script(f.fault, f.fault)
				r, err := ask(c, "q", 0)
				if err != nil {
					t.Fatalf("want success after 2 faults, got %v", err)
				}
				if r.Retries != 2 || srv.Calls() != 3 {
					t.Errorf("retries = %d, server calls = %d; want 2, 3", r.Retries, srv.Calls())
				}
				// With MaxRetries 0 the fault surfaces, classified.
				c0, srv0 := newClient(t, p, func(c *llm.Config) { c.Timeout = 300 * time.Millisecond; c.MaxRetries = 0 })
				srv0.Script(f.fault)
				_, err = ask(c0, "q", 0)
				if k := llm.KindOf(err); k != f.kind {
					t.Errorf("kind = %s (%v), want %s", k, err, f.kind)
				}
			})
		}
	}
}

func TestRetryAfterIsHonoured(t *testing.T) {
	for _, p := range protocols {
		t.Run(p, func(t *testing.T) {
			c, srv := newClient(t, p, nil)
			srv.Script(fake.Fault{Kind: fake.FaultRateLimit, RetryAfter: 300 * time.Millisecond})
			start := time.Now()
			r, err := ask(c, "q", 0)
			if err != nil {
				t.Fatal(err)
			}
			gap := srv.Requests()[1].At.Sub(srv.Requests()[0].At)
			if gap < 290*time.Millisecond || time.Since(start) > 2*time.Second {
				t.Errorf("retried after %s; Retry-After was 300ms", gap)
			}
			if r.Retries != 1 {
				t.Errorf("retries = %d", r.Retries)
			}
		})
	}
}

// TestRetryAfterPausesEveryCaller: a 429 on one call holds back the other
// callers of the endpoint too (one limiter per endpoint).
func TestRetryAfterPausesEveryCaller(t *testing.T) {
	c, srv := newClient(t, fake.OpenAI, func(c *llm.Config) { c.MaxConcurrency = 1 })
	srv.Script(fake.Fault{Kind: fake.FaultRateLimit, RetryAfter: 300 * time.Millisecond})
	if _, err := ask(c, "first", 0); err != nil {
		t.Fatal(err)
	}
	reqs := srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("requests = %d", len(reqs))
	}
	start := time.Now()
	srv.Script(fake.Fault{Kind: fake.FaultRateLimit, RetryAfter: 300 * time.Millisecond})
	var wg sync.WaitGroup
	for i := range 3 {
		wg.Add(1)
		go func() { defer wg.Done(); ask(c, fmt.Sprint("other", i), 0) }()
	}
	wg.Wait()
	reqs = srv.Requests()[2:]
	// The first of these got the 429; no other request may arrive in the
	// pause that followed it.
	for _, r := range reqs[1:] {
		if d := r.At.Sub(reqs[0].At); d < 290*time.Millisecond {
			t.Errorf("a request arrived %s after the 429, inside its Retry-After", d)
		}
	}
	if time.Since(start) > 3*time.Second {
		t.Errorf("took %s", time.Since(start))
	}
}

func TestBackoffTimingBounds(t *testing.T) {
	c, srv := newClient(t, fake.OpenAI, func(c *llm.Config) {
		c.BackoffBase, c.BackoffMax = 40*time.Millisecond, time.Second
	})
	srv.Script(fake.Fault{Kind: fake.FaultServer}, fake.Fault{Kind: fake.FaultServer}, fake.Fault{Kind: fake.FaultServer})
	if _, err := ask(c, "q", 0); err != nil {
		t.Fatal(err)
	}
	rs := srv.Requests()
	// Equal jitter: wait n lies in [base·2^n / 2, base·2^n].
	for i, want := range []time.Duration{40 * time.Millisecond, 80 * time.Millisecond, 160 * time.Millisecond} {
		gap := rs[i+1].At.Sub(rs[i].At)
		if gap < want/2 || gap > want+150*time.Millisecond {
			t.Errorf("gap %d = %s, want in [%s, %s]", i, gap, want/2, want)
		}
	}
}

func TestGiveUpAfterMaxRetries(t *testing.T) {
	c, srv := newClient(t, fake.OpenAI, func(c *llm.Config) { c.MaxRetries = 2 })
	srv.Script(fake.Fault{Kind: fake.FaultServer}, fake.Fault{Kind: fake.FaultServer}, fake.Fault{Kind: fake.FaultServer})
	_, err := ask(c, "q", 0)
	if llm.KindOf(err) != llm.KindTransient || srv.Calls() != 3 {
		t.Errorf("err = %v, calls = %d; want transient after 3 calls", err, srv.Calls())
	}
}

func TestDeterministicErrorsAreNotRetried(t *testing.T) {
	for _, p := range protocols {
		for _, f := range []struct {
			fault string
			kind  llm.Kind
		}{{fake.FaultBad, llm.KindInvalid}, {fake.FaultAuth, llm.KindAuth}} {
			t.Run(p+"/"+f.fault, func(t *testing.T) {
				c, srv := newClient(t, p, nil)
				srv.Script(fake.Fault{Kind: f.fault})
				_, err := ask(c, "q", 0)
				if llm.KindOf(err) != f.kind || srv.Calls() != 1 {
					t.Errorf("err = %v (kind %s), calls = %d; want %s after 1 call", err, llm.KindOf(err), srv.Calls(), f.kind)
				}
				// The endpoint still works for the next request.
				if _, err := ask(c, "q2", 0); err != nil {
					t.Errorf("next call: %v", err)
				}
			})
		}
	}
}

func TestQuotaExhaustedStopsCalls(t *testing.T) {
	for _, p := range protocols {
		t.Run(p, func(t *testing.T) {
			c, srv := newClient(t, p, nil)
			if _, err := ask(c, "before", 0); err != nil {
				t.Fatal(err)
			}
			srv.Script(fake.Fault{Kind: fake.FaultQuota})
			_, err := ask(c, "q", 0)
			if llm.KindOf(err) != llm.KindQuota {
				t.Fatalf("err = %v, want quota", err)
			}
			calls := srv.Calls()
			for i := range 5 {
				_, err := ask(c, fmt.Sprint("after", i), 0)
				if llm.KindOf(err) != llm.KindQuota || !errors.Is(err, llm.ErrQuotaExhausted) {
					t.Errorf("after quota: %v", err)
				}
			}
			if srv.Calls() != calls {
				t.Errorf("%d calls made after the quota was exhausted", srv.Calls()-calls)
			}
		})
	}
}

func TestMaxCostGuard(t *testing.T) {
	c, srv := newClient(t, fake.OpenAI, func(c *llm.Config) {
		c.PriceInput, c.PriceOutput, c.MaxCost = 1e6, 1e6, 10 // $1 a token, stop at $10
	})
	var err error
	for i := 0; i < 10 && err == nil; i++ {
		_, err = ask(c, fmt.Sprint("question number ", i), 0)
	}
	if llm.KindOf(err) != llm.KindBudget {
		t.Fatalf("err = %v, want budget", err)
	}
	if srv.Calls() == 0 || srv.Calls() > 3 || c.Stats().Cost < 10 {
		t.Errorf("calls = %d, spent %v", srv.Calls(), c.Stats().Cost)
	}
}

func TestLimiterConcurrency(t *testing.T) {
	c, srv := newClient(t, fake.OpenAI, func(c *llm.Config) { c.MaxConcurrency = 3 }, fake.WithLatency(30*time.Millisecond))
	var wg sync.WaitGroup
	for i := range 20 {
		wg.Add(1)
		go func() { defer wg.Done(); ask(c, fmt.Sprint(i), 0) }()
	}
	wg.Wait()
	if p := srv.PeakInFlight(); p != 3 {
		t.Errorf("peak in flight = %d, want 3", p)
	}
}

func TestLimiterRequestsPerMinute(t *testing.T) {
	// 600/min = 10/s with a burst of 60; 70 requests need ≥ 1 s for the
	// last 10.
	c, _ := newClient(t, fake.OpenAI, func(c *llm.Config) { c.RequestsPerMinute = 600; c.MaxConcurrency = 64 })
	start := time.Now()
	var wg sync.WaitGroup
	for i := range 70 {
		wg.Add(1)
		go func() { defer wg.Done(); ask(c, fmt.Sprint(i), 0) }()
	}
	wg.Wait()
	if d := time.Since(start); d < 900*time.Millisecond || d > 3*time.Second {
		t.Errorf("70 requests at 600/min (burst 60) took %s, want about 1s", d)
	}
}

func TestCancelledContext(t *testing.T) {
	c, _ := newClient(t, fake.OpenAI, nil, fake.WithLatency(2*time.Second))
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, err := c.Complete(ctx, c.NewRequest("", []llm.Message{{Role: "user", Content: "x"}}, 0))
	if llm.KindOf(err) != llm.KindCancelled {
		t.Errorf("err = %v, want cancelled", err)
	}
}

// TestMaxCostCountsEveryCallOfTheRun: clients of one pool share the run's
// spend, so a judge's calls count against the generator's max_cost, and
// the pool's Stats sum every call.
func TestMaxCostCountsEveryCallOfTheRun(t *testing.T) {
	srv := fake.New(fake.OpenAI)
	t.Cleanup(srv.Close)
	pool := llm.NewPool(nil)
	defer pool.Close()
	base := llm.Config{Provider: fake.OpenAI, BaseURL: srv.URL, Model: "m-1", Timeout: 2 * time.Second,
		PriceInput: 1e6, PriceOutput: 1e6, PriceSet: true}
	genCfg := base
	genCfg.MaxCost = 10 // $1 a token: a few calls
	judgeCfg := base
	half := 0.5
	judgeCfg.Temperature = &half // another endpoint configuration: another client
	gen, err := pool.Client(genCfg)
	if err != nil {
		t.Fatal(err)
	}
	judge, err := pool.Client(judgeCfg)
	if err != nil {
		t.Fatal(err)
	}
	if gen == judge {
		t.Fatal("one client for two configurations")
	}
	// The judge's block declares no max_cost, but the run's budget (the
	// generator's $10) holds for every call of the run.
	var jerr error
	for i := 0; i < 20 && jerr == nil; i++ {
		_, jerr = ask(judge, fmt.Sprint("judge this ", i), 0)
	}
	if llm.KindOf(jerr) != llm.KindBudget {
		t.Fatalf("the judge was never stopped: %v", jerr)
	}
	spent := pool.Stats().Cost
	if spent < 10 || spent > 20 {
		t.Fatalf("the judge spent $%v; want it stopped at the run's $10 budget", spent)
	}
	calls := srv.Calls()
	_, err = ask(gen, "generate", 0)
	if llm.KindOf(err) != llm.KindBudget || srv.Calls() != calls {
		t.Errorf("after the judge spent $%v, the generator (max_cost 10): err %v, %d more calls", spent, err, srv.Calls()-calls)
	}
	if st := pool.Stats(); st.Calls != int64(calls) || st.InputTokens == 0 {
		t.Errorf("pool stats %+v, server saw %d calls", st, calls)
	}
}

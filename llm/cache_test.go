package llm_test

import (
	"context"
	"testing"
	"time"

	"github.com/evalflow/evalflow/cache"
	"github.com/evalflow/evalflow/llm"
	"github.com/evalflow/evalflow/llm/fake"
)

// cachedClient is a fresh client (as a new run would make) whose cache
// opens through stores, which the test shares between its "runs".
func cachedClient(t testing.TB, srv *fake.Server, dir string, stores *cache.Stores) *llm.Client {
	c, err := llm.NewPool(stores).Client(llm.Config{Provider: srv.Protocol, BaseURL: srv.URL, Model: "m", Cache: true, CacheDir: dir,
		MaxRetries: 2, BackoffBase: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// A second run over the same requests makes no call (MC-REQ-06: ≥ 50%;
// here 100%), samples are cached separately, errors are not cached.
func TestCacheRepeatRunMakesNoCalls(t *testing.T) {
	stores := cache.NewStores()
	t.Cleanup(func() { stores.Close() })
	srv := fake.New(fake.OpenAI)
	t.Cleanup(srv.Close)
	dir := t.TempDir()
	c := cachedClient(t, srv, dir, stores)
	srv.Script(fake.Fault{Kind: fake.FaultBad})
	if _, err := ask(c, "q0", 0); err == nil {
		t.Fatal("want the scripted 400")
	}
	for _, q := range []string{"q0", "q1", "q2"} {
		for s := range 2 {
			r, err := ask(c, q, s)
			if err != nil || r.CacheHit {
				t.Fatalf("first run %s/%d: hit=%v err=%v", q, s, r != nil && r.CacheHit, err)
			}
		}
	}
	if srv.Calls() != 7 {
		t.Fatalf("first run calls = %d, want 7 (1 failed + 3 questions × 2 samples)", srv.Calls())
	}
	// A new client on the same store: a second run of the pipeline.
	c2 := cachedClient(t, srv, dir, stores)
	for _, q := range []string{"q0", "q1", "q2"} {
		for s := range 2 {
			r, err := ask(c2, q, s)
			if err != nil || !r.CacheHit || r.Cost != 0 {
				t.Fatalf("second run %s/%d: %+v %v", q, s, r, err)
			}
			if r.Latency > 10*time.Millisecond {
				t.Errorf("cache hit took %s", r.Latency)
			}
		}
	}
	if srv.Calls() != 7 {
		t.Errorf("second run made %d calls", srv.Calls()-7)
	}
	e, ok, _ := c2.Store().Get(c2.CacheKey("completion", c2.NewRequest("be brief", []llm.Message{{Role: "user", Content: "q1"}}, 1)))
	if !ok || e.Provider != "openai" || e.BaseURL != srv.URL {
		t.Errorf("entry = %+v", e)
	}
}

// BenchmarkCacheHit is a whole Complete answered from the disk cache.
func BenchmarkCacheHit(b *testing.B) {
	stores := cache.NewStores()
	b.Cleanup(func() { stores.Close() })
	srv := fake.New(fake.OpenAI)
	b.Cleanup(srv.Close)
	c := cachedClient(b, srv, b.TempDir(), stores)
	req := c.NewRequest("", []llm.Message{{Role: "user", Content: "How many users are there?"}}, 0)
	if _, err := c.Complete(context.Background(), req); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		r, err := c.Complete(context.Background(), req)
		if err != nil || !r.CacheHit {
			b.Fatal("miss")
		}
	}
}

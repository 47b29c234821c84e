package llm_test

import (
	"fmt"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/evalflow/evalflow/cache"
	"github.com/evalflow/evalflow/llm"
	"github.com/evalflow/evalflow/llm/fake"
)

// snapshot resolves an alias as the real APIs do: OpenAI's gpt-4o, Anthropic's
// -latest and Gemini's unversioned names answer as a dated snapshot.
func snapshot(requested string) string {
	return map[string]string{
		"gpt-4o":                  "gpt-4o-2024-08-06",
		"claude-3-5-haiku-latest": "claude-3-5-haiku-20241022",
		"gemini-2.0-flash":        "gemini-2.0-flash-001",
	}[requested]
}

// Each provider's response names the model that answered (OpenAI's and
// Anthropic's model, Gemini's modelVersion); only OpenAI has a system
// fingerprint, and a null one reads as "".
func TestProvenanceProviders(t *testing.T) {
	for _, tc := range []struct {
		protocol, requested, resolved, fp string
	}{
		{fake.OpenAI, "gpt-4o", "gpt-4o-2024-08-06", "fp_x"},
		{fake.OpenAI, "gpt-4o", "gpt-4o-2024-08-06", ""}, // system_fingerprint: null
		{fake.Anthropic, "claude-3-5-haiku-latest", "claude-3-5-haiku-20241022", ""},
		{fake.Gemini, "gemini-2.0-flash", "gemini-2.0-flash-001", ""},
	} {
		t.Run(fmt.Sprintf("%s/fp=%q", tc.protocol, tc.fp), func(t *testing.T) {
			opts := []fake.Option{fake.WithModelID(snapshot)}
			if tc.fp != "" {
				opts = append(opts, fake.WithSystemFingerprint(tc.fp))
			}
			c, srv := newClient(t, tc.protocol, func(c *llm.Config) { c.Name, c.Model = "gen", tc.requested }, opts...)
			r, err := ask(c, "hello", 0)
			if err != nil {
				t.Fatal(err)
			}
			if r.Model != tc.resolved || r.SystemFingerprint != tc.fp {
				t.Errorf("response model %q fingerprint %q, want %q %q", r.Model, r.SystemFingerprint, tc.resolved, tc.fp)
			}
			if got := srv.Requests()[0].Model; got != tc.requested {
				t.Errorf("requested %q, want %q", got, tc.requested)
			}
			want := llm.Provenance{Name: "gen", Provider: tc.protocol, BaseURL: srv.URL, RequestedModel: tc.requested,
				ResolvedModels: []string{tc.resolved}, SystemFingerprints: []string{}}
			if tc.fp != "" {
				want.SystemFingerprints = []string{tc.fp}
			}
			if diff := cmp.Diff(want, c.Provenance()); diff != "" {
				t.Errorf("provenance (-want +got):\n%s", diff)
			}
		})
	}
}

// The client collects the distinct model ids and fingerprints of every
// response, from concurrent calls; a response served from the cache in a
// later run carries what was stored with it.
func TestProvenanceCachedResponse(t *testing.T) {
	stores := cache.NewStores()
	t.Cleanup(func() { stores.Close() })
	var mu sync.Mutex
	n := 0
	srv := fake.New(fake.OpenAI, fake.WithSystemFingerprint("fp_x"), fake.WithModelID(func(req string) string {
		// Two snapshots answer in turn, as during a provider's rollout.
		mu.Lock()
		defer mu.Unlock()
		n++
		return fmt.Sprintf("%s-2024-0%d-06", req, 8+n%2)
	}))
	t.Cleanup(srv.Close)
	dir := t.TempDir()
	client := func() *llm.Client {
		c, err := llm.NewPool(stores).Client(llm.Config{Name: "gen", Provider: "openai", BaseURL: srv.URL, Model: "gpt-4o",
			Cache: true, CacheDir: dir, MaxRetries: 1})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	c := client()
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := ask(c, fmt.Sprintf("q%d", i), 0); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	models, fps := c.Served()
	want := []string{"gpt-4o-2024-08-06", "gpt-4o-2024-09-06"}
	if diff := cmp.Diff(want, models); diff != "" {
		t.Errorf("served models (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"fp_x"}, fps); diff != "" {
		t.Errorf("served fingerprints (-want +got):\n%s", diff)
	}

	// A new run: every answer comes from the cache, with its model id.
	c2 := client()
	if m, f := c2.Served(); len(m)+len(f) != 0 {
		t.Fatalf("a fresh client has served %v %v", m, f)
	}
	r, err := ask(c2, "q1", 0)
	if err != nil || !r.CacheHit {
		t.Fatalf("second run: hit=%v err=%v", r != nil && r.CacheHit, err)
	}
	if r.SystemFingerprint != "fp_x" || (r.Model != want[0] && r.Model != want[1]) {
		t.Errorf("cached response: model %q fingerprint %q", r.Model, r.SystemFingerprint)
	}
	models, fps = c2.Served()
	if diff := cmp.Diff([]string{r.Model}, models); diff != "" {
		t.Errorf("served models after a cache hit (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"fp_x"}, fps); diff != "" {
		t.Errorf("served fingerprints after a cache hit (-want +got):\n%s", diff)
	}
	if srv.Calls() != 8 {
		t.Errorf("%d calls, want 8 (the second run is all cache hits)", srv.Calls())
	}
}

// A failed call reports nothing served.
func TestProvenanceFailedCall(t *testing.T) {
	c, srv := newClient(t, fake.OpenAI, func(c *llm.Config) { c.Model = "gpt-4o" }, fake.WithModelID(snapshot), fake.WithSystemFingerprint("fp_x"))
	srv.Script(fake.Fault{Kind: fake.FaultBad})
	if _, err := ask(c, "hello", 0); err == nil {
		t.Fatal("want the scripted 400")
	}
	if m, f := c.Served(); len(m)+len(f) != 0 {
		t.Errorf("served %v %v after a failed call", m, f)
	}
}

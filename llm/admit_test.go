package llm_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/evalflow/evalflow/llm"
	"github.com/evalflow/evalflow/llm/fake"
)

// TestPoolAdmit: a pool's admission (what a distributed run's shared
// limits plug in) is passed before every provider call of every client,
// made before or after SetAdmit; each admission is released once with the
// call's tokens and cost; an admission that refuses with ErrBudget stops
// the endpoint like max_cost (no further calls), any other refusal ends the
// call as cancelled without a call; and a cap the admission holds is the
// cap the endpoint sees.
func TestPoolAdmit(t *testing.T) {
	srv := fake.New(fake.OpenAI, fake.WithLatency(20*time.Millisecond))
	t.Cleanup(srv.Close)
	cfg := llm.Config{Provider: fake.OpenAI, BaseURL: srv.URL, Model: "m-1", Timeout: 2 * time.Second,
		MaxRetries: 1, BackoffBase: 10 * time.Millisecond, PriceInput: 1e6, PriceOutput: 1e6}
	pool := llm.NewPool(nil)
	t.Cleanup(func() { pool.Close() })
	before, err := pool.Client(cfg)
	if err != nil {
		t.Fatal(err)
	}

	var (
		mu         sync.Mutex
		admitted   int
		released   int
		usedTokens int
		cost       float64
		refuse     error
		slots      = make(chan struct{}, 2) // a shared cap of 2
		configs    []string
	)
	pool.SetAdmit(func(c llm.Config) llm.Admit {
		mu.Lock()
		configs = append(configs, c.Model)
		mu.Unlock()
		return func(ctx context.Context, tokens int) (func(int, float64), error) {
			mu.Lock()
			err := refuse
			mu.Unlock()
			if err != nil {
				return nil, err
			}
			if tokens <= 0 {
				t.Errorf("admission asked for %d tokens", tokens)
			}
			select {
			case slots <- struct{}{}:
			case <-ctx.Done():
				return nil, ctx.Err()
			}
			mu.Lock()
			admitted++
			mu.Unlock()
			var once atomic.Bool
			return func(used int, c float64) {
				if !once.CompareAndSwap(false, true) {
					t.Error("an admission released twice")
				}
				<-slots
				mu.Lock()
				released++
				usedTokens += used
				cost += c
				mu.Unlock()
			}, nil
		}
	})
	other := cfg
	other.Model = "m-2"
	after, err := pool.Client(other)
	if err != nil {
		t.Fatal(err)
	}
	if len(configs) != 2 || configs[0] != "m-1" || configs[1] != "m-2" {
		t.Errorf("admissions made for %v, want the client made before SetAdmit and the one after", configs)
	}

	var wg sync.WaitGroup
	var spent float64
	var spentMu sync.Mutex
	for i := range 12 {
		c := before
		if i%2 == 1 {
			c = after
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			r, err := ask(c, fmt.Sprint("question ", i), 0)
			if err != nil {
				t.Errorf("call %d: %v", i, err)
				return
			}
			spentMu.Lock()
			spent += r.Cost
			spentMu.Unlock()
		}()
	}
	wg.Wait()
	if p := srv.PeakInFlight(); p != 2 {
		t.Errorf("peak in flight %d, want the admission's cap of 2", p)
	}
	if admitted != 12 || released != 12 || srv.Calls() != 12 {
		t.Errorf("admitted %d, released %d, calls %d; want 12 each", admitted, released, srv.Calls())
	}
	if s := pool.Stats(); int64(usedTokens) != s.InputTokens+s.OutputTokens || cost != spent || cost == 0 {
		t.Errorf("released with %d tokens and $%v; the calls used %d tokens and cost $%v", usedTokens, cost, s.InputTokens+s.OutputTokens, spent)
	}

	// Refused for another reason: the call is cancelled, nothing is sent,
	// and the endpoint stays usable.
	calls := srv.Calls()
	mu.Lock()
	refuse = errors.New("lease lost")
	mu.Unlock()
	if _, err := ask(before, "refused", 0); llm.KindOf(err) != llm.KindCancelled {
		t.Errorf("refused admission: %v, want cancelled", err)
	}
	// Refused because the run's budget is spent over all workers: the
	// endpoint stops like max_cost.
	mu.Lock()
	refuse = fmt.Errorf("%w: spent over all workers", llm.ErrBudget)
	mu.Unlock()
	if _, err := ask(before, "over budget", 0); llm.KindOf(err) != llm.KindBudget || !errors.Is(err, llm.ErrBudget) {
		t.Errorf("budget refusal: %v, want budget", err)
	}
	mu.Lock()
	refuse = nil
	mu.Unlock()
	if _, err := ask(before, "after the budget", 0); llm.KindOf(err) != llm.KindBudget {
		t.Errorf("a call after the shared budget was spent: %v, want budget", err)
	}
	if srv.Calls() != calls {
		t.Errorf("%d calls made by refused admissions", srv.Calls()-calls)
	}
	if len(slots) != 0 {
		t.Errorf("%d admissions held after every call returned", len(slots))
	}
}

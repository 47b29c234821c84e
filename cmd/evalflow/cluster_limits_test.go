package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/evalflow/evalflow/llm/fake"
	"github.com/evalflow/evalflow/rundir"
)

// limitedLLMPipeline writes a pipeline whose model block has the limits
// attrs (HCL) and whose generate stage calls it for each of n items (every
// prompt distinct, the response cache off), and returns the run's
// arguments.
func limitedLLMPipeline(t *testing.T, dir, baseURL string, n int, attrs string) []string {
	t.Helper()
	var items strings.Builder
	for i := range n {
		fmt.Fprintf(&items, `{"id": "q%03d", "question": "what is the answer to question %d", "gold": "SELECT 1", "db": "t"}`+"\n", i, i)
	}
	writeFile(t, filepath.Join(dir, "items.jsonl"), []byte(items.String()))
	writeFile(t, filepath.Join(dir, "t.sqlite"), nil)
	writeFile(t, filepath.Join(dir, "limited.hcl"), []byte(fmt.Sprintf(`
dataset "items" {
  source = "items.jsonl"
}

engine "main" {
  kind = "sqlite"
  path = "${fromcwd(".")}/${item.db}.sqlite"
}

model "m" {
  provider            = "openai"
  base_url            = %q
  model               = "limited"
  temperature         = 0
  max_tokens          = 16
  max_concurrency     = 4
  cache               = false
%s
}

stage "generate" {
  dataset     = dataset.items
  source      = "llm"
  model       = model.m
  language    = "sql"
  schema      = "none"
  concurrency = 8
}

stage "execute" {
  input  = stage.generate
  engine = engine.main
}

stage "score" {
  input = stage.execute

  metric "jaro_winkler" {}
}
`, baseURL, attrs)))
	return []string{"run", "limited.hcl", "-quiet"}
}

// TestWorkersShareModelLimits runs a generate stage on three worker
// processes against a fake OpenAI endpoint whose model block allows 240
// requests a minute: the endpoint never sees more than that rate (at most
// 10% over it once the initial burst, a tenth of a minute's worth, is
// spent), not three times it; it sees at least 70% of it (leases handed
// between workers do not stall the run — the margin is for a loaded CI
// machine under the race detector, where 88% was measured); and the
// manifest counts every worker's calls.
func TestWorkersShareModelLimits(t *testing.T) {
	bin := evalflowBinary(t)
	dir := t.TempDir()
	srv := fake.New(fake.OpenAI, fake.WithLatency(20*time.Millisecond))
	defer srv.Close()
	const n, rpm = 60, 240.0
	args := limitedLLMPipeline(t, dir, srv.URL, n, fmt.Sprintf("requests_per_minute = %g", rpm))
	env := append(withoutEvalflowVars(os.Environ()), "OPENAI_API_KEY=test")
	startRun(t, bin, dir, env, append(args, "-out", "dist", "-workers", "3", "-worker-slots", "2", "-shard-size", "4")...)()
	reqs := srv.Requests()
	if len(reqs) != n {
		t.Fatalf("%d calls for %d items", len(reqs), n)
	}
	at := make([]time.Time, len(reqs))
	for i, r := range reqs {
		at[i] = r.At
	}
	sort.Slice(at, func(i, j int) bool { return at[i].Before(at[j]) })
	// After the burst (24 calls at once, and what the bucket refilled
	// meanwhile), calls come at the rate: from the 30th call on.
	const from = 30
	got := float64(n-1-from) / at[n-1].Sub(at[from]).Seconds()
	t.Logf("%d calls in %s; %.2f a second from call %d on (limit %.0f a second)", n, at[n-1].Sub(at[0]).Round(time.Millisecond), got, from+1, rpm/60)
	if got > rpm/60*1.1 {
		t.Errorf("%.2f calls a second after the burst, over the shared limit of %.0f (+10%%)", got, rpm/60)
	}
	if got < rpm/60*0.7 {
		t.Errorf("%.2f calls a second after the burst, under 70%% of the shared limit of %.0f: leasing stalls the workers", got, rpm/60)
	}
	m := readManifest(t, filepath.Join(dir, "dist"))
	if m.ModelCalls == nil || m.ModelCalls.Calls != n {
		t.Errorf("manifest model_calls %+v, want %d calls", m.ModelCalls, n)
	}
	if w := readWorkers(t, filepath.Join(dir, "dist")); len(w.Workers) < 2 {
		t.Errorf("the calls were made by %d worker(s): %+v", len(w.Workers), w.Workers)
	}
}

// TestWorkersStopAtMaxCost: a model block's max_cost reached on a worker
// stops the distributed run as it stops a local one — status stopped, the
// same message, exit 2 — and the same command continues it.
func TestWorkersStopAtMaxCost(t *testing.T) {
	bin := evalflowBinary(t)
	dir := t.TempDir()
	srv := fake.New(fake.OpenAI, fake.WithLatency(20*time.Millisecond))
	defer srv.Close()
	// About 60 tokens a call at $1,000 a million: $0.06 a call, over
	// max_cost at the first.
	args := limitedLLMPipeline(t, dir, srv.URL, 40, "max_cost = 0.05\n  price = { input = 1000, output = 1000 }")
	env := append(withoutEvalflowVars(os.Environ()), "OPENAI_API_KEY=test")
	run := func(extra ...string) (int, *rundir.Manifest) {
		cmd := exec.Command(bin, append(args, extra...)...)
		cmd.Dir, cmd.Env = dir, env
		out, err := cmd.CombinedOutput()
		var ee *exec.ExitError
		if err != nil && !errors.As(err, &ee) {
			t.Fatal(err)
		}
		t.Logf("evalflow %s:\n%s", strings.Join(extra, " "), out)
		return cmd.ProcessState.ExitCode(), readManifest(t, filepath.Join(dir, extra[1]))
	}
	lcode, lm := run("-out", "local")
	dcode, dm := run("-out", "dist", "-workers", "2", "-worker-slots", "1", "-shard-size", "4")
	if lm.Status != "stopped" || lcode != exitRun {
		t.Fatalf("local run: status %q, exit %d; the test expects max_cost to stop it", lm.Status, lcode)
	}
	if dm.Status != lm.Status || dcode != lcode || dm.Error != lm.Error {
		t.Errorf("distributed run: status %q, exit %d, error %q; local: %q, %d, %q", dm.Status, dcode, dm.Error, lm.Status, lcode, lm.Error)
	}
}

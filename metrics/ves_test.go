package metrics_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/evalflow/evalflow/dsl"
	"github.com/evalflow/evalflow/engine"
	"github.com/evalflow/evalflow/engine/sqlite"
	"github.com/evalflow/evalflow/item"
	"github.com/evalflow/evalflow/metrics"
	"github.com/evalflow/evalflow/nodes"
	"github.com/evalflow/evalflow/nodes/aggregate"
	"github.com/evalflow/evalflow/planner"
	"github.com/evalflow/evalflow/store"
	"github.com/evalflow/evalflow/table"

	_ "github.com/evalflow/evalflow/nodes/all"
)

// TestVESReward checks iterated_execute_sql's tiers at and around every
// boundary.
func TestVESReward(t *testing.T) {
	for _, c := range []struct{ ratio, want float64 }{
		{0, 0},
		{math.SmallestNonzeroFloat64, 0.25},
		{0.2499999999999999, 0.25},
		{0.25, 0.5},
		{0.4999999999999999, 0.5},
		{0.5, 0.75},
		{0.9999999999999999, 0.75},
		{1, 1},
		{1.9999999999999998, 1},
		{2, 1.25},
		{1e9, 1.25},
		{math.NaN(), 0.25}, // Python: every comparison with nan is False
		{-1, 0.25},
	} {
		if got := metrics.VESReward(c.ratio); got != c.want {
			t.Errorf("VESReward(%v) = %v, want %v", c.ratio, got, c.want)
		}
	}
}

// vesGen describes a ratio vector that this test and the script that
// produced the expected values build with the same float64 operations:
// x_i = base + scale·(((i·a + b) mod m) / m), or spike where i mod p == q.
type vesGen struct {
	n             int
	base, scale   float64
	a, b, m, p, q int
	spike         float64
}

func (g vesGen) ratios() []float64 {
	out := make([]float64, g.n)
	for i := range out {
		if g.p > 0 && i%g.p == g.q {
			out[i] = g.spike
			continue
		}
		out[i] = g.base + g.scale*(float64((i*g.a+g.b)%g.m)/float64(g.m))
	}
	return out
}

// TestVESCleanAbnormalAgreesWithNumpy compares the outlier rule with
// evaluation_ves.py's clean_abnormal as numpy 1.24.2 computes it: for each
// vector, np.mean and np.std (bit for bit), how many ratios lie strictly
// inside mean ± 3σ, Python's sum(kept) / len(kept) (bit for bit) and the
// reward. The expected values were printed by running clean_abnormal's
// statements and the reward tiers under numpy on the same vectors. Note
// "all 0.1": numpy's rounded mean leaves a tiny σ, so equal ratios survive;
// "all 1.5 exact": the mean is exact, σ = 0, nothing survives, reward 0.
func TestVESCleanAbnormalAgreesWithNumpy(t *testing.T) {
	for _, c := range []struct {
		name      string
		gen       vesGen
		mean, std float64
		kept      int
		ok        bool
		ratio     float64
		reward    float64
	}{
		{"spread around 1", vesGen{n: 100, base: 0.9, scale: 0.25, a: 37, b: 11, m: 101, p: 0, q: 0, spike: 0.0}, 1.0231435643564355, 0.07225804624763082, 100, true, 1.023143564356435, 1.0},
		{"one spike removed", vesGen{n: 100, base: 1.85, scale: 0.1, a: 13, b: 5, m: 97, p: 100, q: 42, spike: 50.0}, 2.379376288659794, 4.7861400812032, 99, true, 1.8983598875351457, 1.0},
		{"spikes kept below 3 sigma", vesGen{n: 100, base: 1.0, scale: 0.5, a: 17, b: 3, m: 89, p: 10, q: 7, spike: 2.4}, 1.366067415730337, 0.3708851758427282, 100, true, 1.3660674157303374, 1.0},
		{"slow prediction", vesGen{n: 100, base: 0.2, scale: 0.1, a: 29, b: 1, m: 83, p: 0, q: 0, spike: 0.0}, 0.24872289156626506, 0.028794081745424718, 100, true, 0.24872289156626515, 0.25},
		{"fast prediction", vesGen{n: 100, base: 2.5, scale: 3.0, a: 31, b: 7, m: 79, p: 25, q: 3, spike: 400.0}, 19.820253164556963, 77.6085139380169, 96, true, 3.979430379746837, 1.25},
		{"quarter", vesGen{n: 100, base: 0.1, scale: 0.05, a: 7, b: 2, m: 61, p: 0, q: 0, spike: 0.0}, 0.12415573770491804, 0.014464579707383844, 100, true, 0.12415573770491804, 0.25},
		{"half", vesGen{n: 100, base: 0.3, scale: 0.15, a: 11, b: 9, m: 53, p: 0, q: 0, spike: 0.0}, 0.37250943396226416, 0.04292712411806852, 100, true, 0.3725094339622641, 0.5},
		{"long vector", vesGen{n: 1000, base: 0.95, scale: 0.1, a: 101, b: 17, m: 997, p: 250, q: 9, spike: 30.0}, 1.115768405215647, 1.8306908332116814, 996, true, 0.9997674751161112, 0.75},
		{"short vector", vesGen{n: 5, base: 1.0, scale: 1.0, a: 3, b: 1, m: 7, p: 0, q: 0, spike: 0.0}, 1.4, 0.3050593786294661, 5, true, 1.4, 1.0},
		{"all 0.1", vesGen{n: 100, base: 0.1, scale: 0.0, a: 1, b: 0, m: 1, p: 0, q: 0, spike: 0.0}, 0.09999999999999998, 2.7755575615628914e-17, 100, true, 0.09999999999999981, 0.25},
		{"all 1/3", vesGen{n: 100, base: 0.3333333333333333, scale: 0.0, a: 1, b: 0, m: 1, p: 0, q: 0, spike: 0.0}, 0.3333333333333334, 1.1102230246251565e-16, 100, true, 0.3333333333333329, 0.5},
		{"all 0.7 x37", vesGen{n: 37, base: 0.7, scale: 0.0, a: 1, b: 0, m: 1, p: 0, q: 0, spike: 0.0}, 0.6999999999999998, 1.1102230246251565e-16, 37, true, 0.6999999999999996, 0.75},
		{"all 1.1 x129", vesGen{n: 129, base: 1.1, scale: 0.0, a: 1, b: 0, m: 1, p: 0, q: 0, spike: 0.0}, 1.0999999999999999, 2.220446049250313e-16, 129, true, 1.0999999999999974, 1.0},
		{"single", vesGen{n: 1, base: 1.5, scale: 0.0, a: 1, b: 0, m: 1, p: 0, q: 0, spike: 0.0}, 1.5, 0.0, 0, false, 0.0, 0.0},
		{"all 1.5 exact", vesGen{n: 100, base: 1.5, scale: 0.0, a: 1, b: 0, m: 1, p: 0, q: 0, spike: 0.0}, 1.5, 0.0, 0, false, 0.0, 0.0},
		{"all 2 exact", vesGen{n: 100, base: 2.0, scale: 0.0, a: 1, b: 0, m: 1, p: 0, q: 0, spike: 0.0}, 2.0, 0.0, 0, false, 0.0, 0.0},
		{"tier edge 2", vesGen{n: 100, base: 1.0, scale: 2.0, a: 1, b: 0, m: 2, p: 0, q: 0, spike: 0.0}, 1.5, 0.5, 100, true, 1.5, 1.0},
		{"tier edge 0.5", vesGen{n: 100, base: 0.25, scale: 0.5, a: 1, b: 0, m: 2, p: 0, q: 0, spike: 0.0}, 0.375, 0.125, 100, true, 0.375, 0.5},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := c.gen.ratios()
			mean, std := metrics.VESMeanStd(r)
			if mean != c.mean || std != c.std {
				t.Errorf("mean, std = %v, %v; numpy %v, %v", mean, std, c.mean, c.std)
			}
			ratio, kept, ok := metrics.VESTimeRatio(r)
			if kept != c.kept || ok != c.ok || ratio != c.ratio {
				t.Errorf("time ratio = %v (%d kept, ok %v); evaluation_ves.py %v (%d kept, ok %v)", ratio, kept, ok, c.ratio, c.kept, c.ok)
			}
			if got := len(metrics.VESCleanAbnormal(r)); got != c.kept {
				t.Errorf("VESCleanAbnormal kept %d, want %d", got, c.kept)
			}
			if got := metrics.VESReward(ratio); got != c.reward {
				t.Errorf("reward %v, want %v", got, c.reward)
			}
		})
	}
}

// TestVESOutlierRule works the 3σ rule by hand. Nineteen ratios of 1 and
// one of 100: mean 5.95, σ ≈ 21.58, so 100 > mean + 3σ ≈ 70.7 is dropped
// and the reward is 1 (1.25 without the rule). Nine ratios of 0 and one of
// 10: mean 1, σ = 3 exactly, so 10 equals mean + 3σ and the strict bound
// drops it (≤ would keep it, mean 1, reward 1): time ratio 0, reward 0.
func TestVESOutlierRule(t *testing.T) {
	r := make([]float64, 20)
	for i := range r {
		r[i] = 1
	}
	r[7] = 100
	ratio, kept, ok := metrics.VESTimeRatio(r)
	if ratio != 1 || kept != 19 || !ok || metrics.VESReward(ratio) != 1 {
		t.Errorf("19×1 and 100: ratio %v, kept %d, ok %v; want 1, 19, true", ratio, kept, ok)
	}
	r = make([]float64, 10)
	r[3] = 10
	if m, s := metrics.VESMeanStd(r); m != 1 || s != 3 {
		t.Fatalf("mean, std = %v, %v; want 1, 3", m, s)
	}
	ratio, kept, ok = metrics.VESTimeRatio(r)
	if ratio != 0 || kept != 9 || !ok || metrics.VESReward(ratio) != 0 {
		t.Errorf("9×0 and 10: ratio %v, kept %d, ok %v; want 0, 9, true (the bound is strict)", ratio, kept, ok)
	}
	if got := metrics.VESCleanAbnormal(nil); len(got) != 0 {
		t.Errorf("no ratios kept %v", got)
	}
}

func ms(f float64) time.Duration { return time.Duration(f * float64(time.Millisecond)) }

func repeatD(n int, d time.Duration) []time.Duration {
	out := make([]time.Duration, n)
	for i := range out {
		out[i] = d
	}
	return out
}

// TestVESFromTimings feeds injected timings: ratio i is gold[i] / pred[i].
func TestVESFromTimings(t *testing.T) {
	alt := func(n int, a, b time.Duration) []time.Duration {
		out := make([]time.Duration, n)
		for i := range out {
			out[i] = a
			if i%2 == 1 {
				out[i] = b
			}
		}
		return out
	}
	outlier := repeatD(100, ms(1))
	outlier[40] = ms(100) // one slow gold run: ratio 100
	zero := repeatD(100, ms(1))
	zero[99] = 0
	for _, c := range []struct {
		name       string
		gold, pred []time.Duration
		reward     float64
		ratio      float64
		kept       int
		reason     string
	}{
		{"twice as fast, alternating 3 and 1", alt(100, ms(3), ms(1)), repeatD(100, ms(1)), 1.25, 2, 100, ""},
		{"same speed", alt(100, ms(1.1), ms(0.9)), repeatD(100, ms(1)), 1, 1, 100, ""},
		{"half as fast", alt(100, ms(0.6), ms(0.4)), repeatD(100, ms(1)), 0.75, 0.5, 100, ""},
		{"one outlier dropped", outlier, repeatD(100, ms(1)), 1, 1, 99, ""},
		// Every ratio exactly 2: σ = 0, none kept, reward 0 although the
		// prediction is twice as fast (evaluation_ves.py's quirk).
		{"all equal", repeatD(100, ms(2)), repeatD(100, ms(1)), 0, 0, 0, "σ = 0"},
		{"prediction took 0 s", repeatD(100, ms(1)), zero, 0, 0, 0, "ZeroDivisionError"},
	} {
		t.Run(c.name, func(t *testing.T) {
			o := metrics.VESFromTimings(c.gold, c.pred)
			if o.Reward != c.reward || o.TimeRatio != c.ratio || o.Kept != c.kept || o.Ratios != len(c.pred) {
				t.Errorf("got %+v; want reward %v, ratio %v, kept %d", o, c.reward, c.ratio, c.kept)
			}
			if !strings.Contains(o.Reason, c.reason) || (c.reason == "") != (o.Reason == "") {
				t.Errorf("reason %q, want one mentioning %q", o.Reason, c.reason)
			}
		})
	}
}

// TestRVES checks compute_ves: Σ √reward · 100 / n. The expected value is
// Python's, summing math.sqrt(r) * 100 left to right over these rewards.
func TestRVES(t *testing.T) {
	rewards := []float64{1.25, 1, 0.75, 0.5, 0.25, 0}
	if got := metrics.RVES(rewards); got != 69.85276956201469 {
		t.Errorf("RVES = %v, want 69.85276956201469", got)
	}
	terms := []float64{111.80339887498948, 100, 86.60254037844386, 70.71067811865476, 50, 0}
	for i, r := range rewards {
		if got := metrics.RVESTerm(r); got != terms[i] {
			t.Errorf("RVESTerm(%v) = %v, want %v", r, got, terms[i])
		}
	}
	if got := metrics.RVES([]float64{1, 1, 1}); got != 100 {
		t.Errorf("all tier 1: %v, want 100", got)
	}
	if got := metrics.RVES(nil); !math.IsNaN(got) {
		t.Errorf("no queries: %v, want NaN (compute_ves divides by zero)", got)
	}
}

func vesItem(t *testing.T, name string, o metrics.Options) metrics.ItemMetric {
	t.Helper()
	def, ok := metrics.Default.Lookup(name)
	if !ok {
		t.Fatalf("%s is not registered", name)
	}
	m, err := def.NewItem(o)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func oneCol(vals ...any) *table.Table {
	tb := &table.Table{Columns: []table.Column{{Name: "x"}}}
	for _, v := range vals {
		tb.Rows = append(tb.Rows, []table.Value{v})
	}
	return tb
}

// scripted is an injected TimedExec: results by query text and the
// durations of the calls in order; it records every call.
type scripted struct {
	results map[string]*table.Table
	fail    map[string]error
	times   []time.Duration
	failAt  int // 1-based call that fails; 0: none
	calls   []string
}

func (s *scripted) run(_ context.Context, q string) (*table.Table, time.Duration, error) {
	s.calls = append(s.calls, q)
	n := len(s.calls)
	if n == s.failAt {
		return nil, 0, errors.New("interrupted after the engine timeout")
	}
	if err := s.fail[q]; err != nil {
		return nil, 0, err
	}
	var d time.Duration
	if n-1 < len(s.times) {
		d = s.times[n-1]
	}
	return s.results[q], d, nil
}

const (
	vesGold = "SELECT x FROM t"
	vesPred = "SELECT DISTINCT x FROM t"
)

func vesRecord(pred string, failed bool) *item.Record {
	a := &item.Attempt{Query: pred, Executed: !failed}
	if failed {
		a.SetError(item.ClassSyntax, "near \"SELEC\": syntax error")
	}
	return &item.Record{Item: item.Item{ID: "q1", Gold: vesGold, DB: "d"}, GoldDone: true, GoldResult: oneCol(int64(1)),
		Samples: []*item.Sample{{Attempts: []*item.Attempt{a}}}}
}

// pairTimes scripts the untimed first pair then repeat timed pairs of
// (prediction, gold).
func pairTimes(pred, gold []time.Duration) []time.Duration {
	out := []time.Duration{ms(1), ms(1)}
	for i := range pred {
		out = append(out, pred[i], gold[i])
	}
	return out
}

// TestVESMetricSeam scores items through ScoreTimed with an injected
// executor: which queries run, in which order, and the reward they give.
func TestVESMetricSeam(t *testing.T) {
	const repeat = 4
	m := vesItem(t, "bird_ves", metrics.Options{"repeat": float64(repeat)})
	ts, ok := m.(metrics.TimedScorer)
	if !ok {
		t.Fatal("bird_ves does not implement metrics.TimedScorer")
	}
	if got := ts.TimedCalls(); got != 2+2*repeat {
		t.Errorf("TimedCalls = %d, want %d", got, 2+2*repeat)
	}
	same := map[string]*table.Table{vesGold: oneCol(int64(1), int64(1)), vesPred: oneCol(1.0)} // set semantics; 1 == 1.0
	wantAll := []string{vesPred, vesGold}
	for i := 0; i < repeat; i++ {
		wantAll = append(wantAll, vesPred, vesGold)
	}
	fast := pairTimes(repeatD(repeat, ms(1)), []time.Duration{ms(3), ms(1), ms(3), ms(1)})
	for _, c := range []struct {
		name    string
		rec     *item.Record
		exec    *scripted
		value   float64
		err     string
		calls   []string
		noteHas string
	}{
		{"faster prediction", vesRecord(vesPred, false), &scripted{results: same, times: fast}, 1.25, "", wantAll, "time ratio 2"},
		{"all ratios equal", vesRecord(vesPred, false), &scripted{results: same, times: pairTimes(repeatD(repeat, ms(1)), repeatD(repeat, ms(1)))}, 0, "", wantAll, "σ = 0"},
		{"results differ", vesRecord(vesPred, false), &scripted{results: map[string]*table.Table{vesGold: oneCol(int64(1)), vesPred: oneCol(int64(2))}}, 0, "", []string{vesPred, vesGold}, "set(pred) != set(gold)"},
		{"column order matters", vesRecord(vesPred, false), &scripted{results: map[string]*table.Table{
			vesGold: {Columns: []table.Column{{Name: "a"}, {Name: "b"}}, Rows: [][]table.Value{{int64(1), "x"}}},
			vesPred: {Columns: []table.Column{{Name: "b"}, {Name: "a"}}, Rows: [][]table.Value{{"x", int64(1)}}}}}, 0, "", []string{vesPred, vesGold}, "set(pred) != set(gold)"},
		{"prediction fails when run", vesRecord(vesPred, false), &scripted{results: same, fail: map[string]error{vesPred: errors.New("no such column")}}, 0, "", []string{vesPred}, "prediction failed"},
		{"failed attempt is not run", vesRecord("SELEC x", true), &scripted{results: same}, 0, "", nil, "prediction failed (syntax)"},
		{"timed run fails", vesRecord(vesPred, false), &scripted{results: same, times: fast, failAt: 5}, 0, "timed run 2 of the prediction failed", wantAll[:5], ""},
		{"gold fails", func() *item.Record { r := vesRecord(vesPred, false); r.GoldError = "schema: no such table"; return r }(), &scripted{results: same}, 0, "gold query failed", nil, ""},
		{"truncated result", vesRecord(vesPred, false), &scripted{results: map[string]*table.Table{vesGold: oneCol(int64(1)), vesPred: {Columns: []table.Column{{Name: "x"}}, Rows: [][]table.Value{{int64(1)}}, Truncated: true}}}, 0, "max_rows", []string{vesPred, vesGold}, ""},
		{"both empty match", vesRecord(vesPred, false), &scripted{results: map[string]*table.Table{vesGold: oneCol(), vesPred: {}}, times: fast}, 1.25, "", wantAll, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			sc := ts.ScoreTimed(context.Background(), metrics.Input{Record: c.rec}, c.exec.run)
			if sc.Value != c.value || !strings.Contains(sc.Err, c.err) || (c.err == "") != (sc.Err == "") {
				t.Errorf("score %+v; want value %v, error %q", sc, c.value, c.err)
			}
			if !strings.Contains(sc.Note, c.noteHas) {
				t.Errorf("note %q does not mention %q", sc.Note, c.noteHas)
			}
			if diff := cmp.Diff(c.calls, c.exec.calls); diff != "" {
				t.Errorf("executions (-want +got):\n%s", diff)
			}
		})
	}
	// Without an engine the score stage calls Score: it fails, never
	// falling back on a cached or untimed path.
	if sc := m.Score(context.Background(), metrics.Input{Record: vesRecord(vesPred, false)}); sc.Err == "" || sc.Value != 0 {
		t.Errorf("Score without an engine = %+v, want a failure", sc)
	}
}

// TestVESOptions: repeat defaults to evaluation_ves.py's iterate_num.
func TestVESOptions(t *testing.T) {
	m := vesItem(t, "bird_ves", metrics.Options{})
	if got := m.(metrics.TimedScorer).TimedCalls(); got != 2+2*metrics.DefaultVESRepeat || metrics.DefaultVESRepeat != 100 {
		t.Errorf("default TimedCalls %d (repeat %d), want 202 (100)", got, metrics.DefaultVESRepeat)
	}
	def, _ := metrics.Default.Lookup("bird_ves")
	for _, bad := range []metrics.Options{{"repeat": float64(0)}, {"repeat": 2.5}, {"repeat": "ten"}} {
		if _, err := def.NewItem(bad); err == nil {
			t.Errorf("options %v accepted", bad)
		}
	}
	if m.Info().Binary() {
		t.Error("bird_ves is declared 0/1")
	}
}

// TestRVESMetric: bird_r_ves is √reward · 100 of the reward column.
func TestRVESMetric(t *testing.T) {
	m := vesItem(t, "bird_r_ves", metrics.Options{})
	other := vesItem(t, "bird_r_ves", metrics.Options{"reward": "ves_slow"})
	rec := func(scores ...item.Score) metrics.Input { return metrics.Input{Record: &item.Record{Scores: scores}} }
	for _, c := range []struct {
		name  string
		m     metrics.ItemMetric
		in    metrics.Input
		value float64
		err   string
	}{
		{"tier 0.75", m, rec(item.Score{Name: "bird_ves", Value: 0.75}), 86.60254037844386, ""},
		{"tier 1.25", m, rec(item.Score{Name: "bird_ves", Value: 1.25}), 111.80339887498948, ""},
		{"reward 0", m, rec(item.Score{Name: "bird_ves", Value: 0}), 0, ""},
		{"failed reward", m, rec(item.Score{Name: "bird_ves", Err: "gold query failed"}), 0, "bird_ves failed: gold query failed"},
		{"no reward column", m, rec(), 0, "needs the bird_ves metric listed before it"},
		{"renamed column", other, rec(item.Score{Name: "bird_ves", Value: 1}, item.Score{Name: "ves_slow", Value: 0.25}), 50, ""},
	} {
		sc := c.m.Score(context.Background(), c.in)
		if sc.Value != c.value || !strings.Contains(sc.Err, c.err) || (c.err == "") != (sc.Err == "") {
			t.Errorf("%s: %+v, want value %v, error %q", c.name, sc, c.value, c.err)
		}
	}
}

// countingEngine counts the executions that reach the real SQLite engine.
type countingEngine struct {
	ex    *sqlite.Executor
	mu    sync.Mutex
	count map[string]int
}

func (c *countingEngine) Execute(ctx context.Context, q engine.Query) (*table.Table, error) {
	c.mu.Lock()
	c.count[q.Text]++
	c.mu.Unlock()
	return c.ex.Execute(ctx, q)
}

func (c *countingEngine) Close() error { return c.ex.Close() }

func (c *countingEngine) reset() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := c.count
	c.count = map[string]int{}
	return out
}

var _ io.Closer = (*countingEngine)(nil)

const vesPipeline = `
dataset "q" {
  source = "q.jsonl"
}
engine "main" {
  kind    = "sqlite"
  path    = "./${item.db}.sqlite"
  timeout = "20s"
}
stage "generate" {
  predictions = "p.jsonl"
}
stage "execute" {
  input = stage.generate
}
stage "score" {
  input       = stage.execute
  concurrency = 1
  metric "ex" {
    compare = "bird"
  }
  metric "bird_ves" {
    repeat = 5
  }
  metric "bird_r_ves" {}
}
stage "aggregate" {
  input = stage.score
}
`

// TestVESEndToEnd runs bird_ves on real SQLite executions through a
// pipeline whose engine answers from the stage cache, twice over the same
// cache. Timings are real, so only tier-free facts are asserted: the
// identical query reaches a reward tier, a wrong result and a failing
// prediction score 0, a failing gold is an error counted as 0 (as
// compute_ves counts it), the aggregate mean of bird_r_ves is compute_ves
// of the rewards, and on the second run — where the execute stage is
// answered entirely by the cache — bird_ves still executes every one of
// its queries on the engine.
func TestVESEndToEnd(t *testing.T) {
	dir := t.TempDir()
	db, err := sql.Open("sqlite", filepath.Join(dir, "shop.sqlite"))
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		`CREATE TABLE item (id INTEGER PRIMARY KEY, name TEXT, price REAL)`,
		`INSERT INTO item VALUES (1,'pen',1.5),(2,'ink',3.25),(3,'pad',2.0),(4,'cap',0.5)`,
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()
	same := "SELECT name FROM item WHERE price > 1 ORDER BY name"
	items := []map[string]any{
		{"id": "same", "gold": same, "db": "shop"},
		{"id": "wrong", "gold": "SELECT name FROM item", "db": "shop"},
		{"id": "fails", "gold": "SELECT count(*) FROM item", "db": "shop"},
		{"id": "goldfail", "gold": "SELECT nope FROM item", "db": "shop"},
	}
	preds := []map[string]any{
		{"id": "same", "pred": same},
		{"id": "wrong", "pred": "SELECT name FROM item WHERE id = 1"},
		{"id": "fails", "pred": "SELEC count(*) FROM item"},
		{"id": "goldfail", "pred": "SELECT name FROM item"},
	}
	for name, rows := range map[string][]map[string]any{"q.jsonl": items, "p.jsonl": preds} {
		var b strings.Builder
		for _, r := range rows {
			j, _ := json.Marshal(r)
			b.Write(j)
			b.WriteByte('\n')
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "pipeline.hcl"), []byte(vesPipeline), 0o644); err != nil {
		t.Fatal(err)
	}
	counter := &countingEngine{count: map[string]int{}}
	engines := &engine.Registry{}
	engines.Register("sqlite", func(_ context.Context, cfg engine.Config) (engine.Executor, error) {
		ex, err := sqlite.New(cfg)
		if err != nil {
			return nil, err
		}
		counter.ex = ex
		return counter, nil
	})
	disk, err := store.Open(filepath.Join(dir, "cache"))
	if err != nil {
		t.Fatal(err)
	}
	results := nodes.NewResults(disk, "ves-test")

	run := func() (map[string]*item.Record, map[string]aggregate.Row) {
		p, diags := dsl.Load(filepath.Join(dir, "pipeline.hcl"), dsl.LoadOptions{Env: []string{}})
		if diags.HasErrors() {
			t.Fatal(diags)
		}
		pl, diags := planner.Build(context.Background(), p, planner.Options{Engines: engines, Results: results})
		if diags.HasErrors() {
			t.Fatal(diags)
		}
		defer pl.Close()
		recs := map[string]*item.Record{}
		if err := pl.Run(context.Background(), planner.RunOptions{OnRecord: func(r *item.Record) error {
			recs[r.Item.ID] = r
			return nil
		}}); err != nil {
			t.Fatal(err)
		}
		rows := map[string]aggregate.Row{}
		for _, r := range pl.Collectors[0].Stage.(*aggregate.Aggregate).Rows(context.Background()) {
			rows[r.Group+"/"+r.Metric] = r
		}
		return recs, rows
	}
	tiers := map[float64]bool{0.25: true, 0.5: true, 0.75: true, 1: true, 1.25: true}
	for round := 1; round <= 2; round++ {
		counter.reset()
		recs, rows := run()
		calls := counter.reset()
		score := func(id, name string) item.Score {
			r, ok := recs[id]
			if !ok {
				t.Fatalf("round %d: no record %s", round, id)
			}
			s, _ := r.Score(name)
			return s
		}
		if s := score("same", "bird_ves"); !tiers[s.Value] || s.Err != "" || !s.Official {
			t.Errorf("round %d: identical query: %+v, want a reward tier > 0, official", round, s)
		}
		for _, id := range []string{"wrong", "fails"} {
			if s := score(id, "bird_ves"); s.Value != 0 || s.Err != "" || recs[id].Status == "error" {
				t.Errorf("round %d: %s: %+v (status %s), want reward 0", round, id, s, recs[id].Status)
			}
		}
		if s := score("goldfail", "bird_ves"); s.Value != 0 || !strings.Contains(s.Err, "gold query failed") || recs["goldfail"].Status != "error" {
			t.Errorf("round %d: failing gold: %+v (status %s), want an error valued 0", round, s, recs["goldfail"].Status)
		}
		var rewards []float64
		for _, id := range []string{"same", "wrong", "fails", "goldfail"} {
			v := score(id, "bird_ves").Value
			rewards = append(rewards, v)
			if got := score(id, "bird_r_ves").Value; got != metrics.RVESTerm(v) {
				t.Errorf("round %d: %s: bird_r_ves %v, want √%v·100", round, id, got, v)
			}
		}
		rv := rows["all/bird_r_ves"]
		if rv.N != 4 || rv.Mean != metrics.RVES(rewards) {
			t.Errorf("round %d: aggregate bird_r_ves N %d mean %v; want 4, compute_ves %v", round, rv.N, rv.Mean, metrics.RVES(rewards))
		}
		if round == 2 {
			// The execute stage is answered by the cache; bird_ves runs
			// the identical pair 1 + 5 times (12 executions of the one
			// text) and the wrong pair once; the failing prediction and
			// the item whose gold failed run nothing.
			want := map[string]int{same: 12, "SELECT name FROM item": 1, "SELECT name FROM item WHERE id = 1": 1}
			if diff := cmp.Diff(want, calls); diff != "" {
				t.Errorf("engine executions on the cached run (-want +got):\n%s", diff)
			}
		}
	}
}

package metrics

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/evalflow/evalflow/item"
	"github.com/evalflow/evalflow/table"
)

// BIRD mini_dev's reward-based Valid Efficiency Score (R-VES), as
// evaluation/evaluation_ves.py computes it:
//
//   - iterated_execute_sql runs the prediction and the gold once and
//     compares set(pred_rows) == set(gold_rows); results that differ, or a
//     query that raises, give reward 0;
//   - otherwise it times iterate_num (100) pairs — the prediction, then the
//     gold — and records gold_time / pred_time for each;
//   - clean_abnormal keeps the ratios strictly inside mean ± 3σ (numpy's
//     mean and population std); time_ratio is their mean, and when none
//     survives (all ratios equal with an exact mean: σ = 0) the division by
//     zero is caught and the reward is 0;
//   - the reward is a tier of time_ratio: ≥ 2 → 1.25, [1,2) → 1,
//     [0.5,1) → 0.75, [0.25,0.5) → 0.5, otherwise 0.25 (0 only when
//     time_ratio is 0);
//   - compute_ves gives R-VES = Σ √reward · 100 / number of queries.
//
// bird_ves is the per-item reward and bird_r_ves the per-item √reward · 100,
// whose mean over items (aggregates.parquet) is compute_ves's value.
// docs/metrics.md ("BIRD R-VES") documents the metric and its deviations.

// DefaultVESRepeat is evaluation_ves.py's iterate_num: the default of
// run_sqls_parallel, which its __main__ does not override.
const DefaultVESRepeat = 100

// TimedExec runs a query on the item's engine as a new execution, never
// answered by the stage cache or any other cache, and returns its result
// and how long the engine took to run it and fetch its rows.
type TimedExec func(ctx context.Context, query string) (*table.Table, time.Duration, error)

// TimedScorer is implemented by item metrics that time real executions
// (bird_ves). When the score stage has an engine it calls ScoreTimed
// instead of Score, with run bound to the item's engine and bypassing the
// stage cache; without one it calls Score, which fails. TimedCalls is the
// most executions ScoreTimed makes for one item (evalflow plan's bound).
type TimedScorer interface {
	ScoreTimed(ctx context.Context, in Input, run TimedExec) item.Score
	TimedCalls() int
}

// VESReward is iterated_execute_sql's reward for a time ratio (mean gold
// time / prediction time):
//
//	if time_ratio == 0: 0
//	elif time_ratio >= 2: 1.25
//	elif 1 <= time_ratio < 2: 1
//	elif 0.5 <= time_ratio < 1: 0.75
//	elif 0.25 <= time_ratio < 0.5: 0.5
//	else: 0.25
//
// A NaN or negative ratio (impossible from timings) falls to 0.25, as in
// Python.
func VESReward(timeRatio float64) float64 {
	switch {
	case timeRatio == 0:
		return 0
	case timeRatio >= 2:
		return 1.25
	case timeRatio >= 1:
		return 1
	case timeRatio >= 0.5:
		return 0.75
	case timeRatio >= 0.25:
		return 0.5
	}
	return 0.25
}

// numpySum adds xs as numpy's float64 add.reduce does (numpy 1.24,
// pairwise_sum): blocks of at most 128 values are summed with eight
// accumulators, longer runs are split in two at a multiple of eight. It
// agrees with np.sum bit for bit, so the 3σ bounds are numpy's.
func numpySum(xs []float64) float64 {
	n := len(xs)
	switch {
	case n < 8:
		res := 0.0
		for _, x := range xs {
			res += x
		}
		return res
	case n <= 128:
		var r [8]float64
		copy(r[:], xs[:8])
		i := 8
		for ; i < n-n%8; i += 8 {
			for j := range r {
				r[j] += xs[i+j]
			}
		}
		res := float64(float64(r[0]+r[1])+float64(r[2]+r[3])) + float64(float64(r[4]+r[5])+float64(r[6]+r[7]))
		for ; i < n; i++ {
			res += xs[i]
		}
		return res
	}
	n2 := n / 2
	n2 -= n2 % 8
	return numpySum(xs[:n2]) + numpySum(xs[n2:])
}

// VESMeanStd is np.mean and np.std (population, ddof 0) of xs, computed
// as numpy computes them: mean = sum(x) / n, std = sqrt(sum((x − mean)²) /
// n), both sums numpy's pairwise ones. NaN for no values.
func VESMeanStd(xs []float64) (mean, std float64) {
	n := float64(len(xs))
	mean = numpySum(xs) / n
	sq := make([]float64, len(xs))
	for i, x := range xs {
		d := x - mean
		sq[i] = float64(d * d)
	}
	return mean, math.Sqrt(numpySum(sq) / n)
}

// VESCleanAbnormal is evaluation_ves.py's clean_abnormal: the ratios x
// with mean − 3σ < x < mean + 3σ (both strict), in order, where mean and σ
// are VESMeanStd of all of them. When every ratio is equal and their mean
// is exact, σ is 0 and none is kept; numpy's rounding can instead leave a
// tiny σ that keeps them all (0.1 a hundred times has mean
// 0.09999999999999998).
func VESCleanAbnormal(ratios []float64) []float64 {
	if len(ratios) == 0 {
		return nil
	}
	mean, std := VESMeanStd(ratios)
	band := float64(3 * std)
	hi, lo := float64(mean+band), float64(mean-band)
	var kept []float64
	for _, x := range ratios {
		if x < hi && x > lo {
			kept = append(kept, x)
		}
	}
	return kept
}

// VESTimeRatio is iterated_execute_sql's time_ratio: the mean of the
// ratios VESCleanAbnormal keeps, sum(kept) / len(kept) with Python's
// left-to-right sum. ok is false when none is kept (evaluation_ves.py's
// ZeroDivisionError, which makes the reward 0).
func VESTimeRatio(ratios []float64) (ratio float64, kept int, ok bool) {
	k := VESCleanAbnormal(ratios)
	if len(k) == 0 {
		return 0, 0, false
	}
	s := 0.0
	for _, x := range k {
		s += x
	}
	return s / float64(len(k)), len(k), true
}

// VESOutcome is the reward of one item and how it was reached.
type VESOutcome struct {
	Reward    float64
	TimeRatio float64 // mean of the kept ratios; 0 when none
	Ratios    int     // timed pairs
	Kept      int     // ratios inside mean ± 3σ
	Reason    string  // why the reward is 0, when it is
}

// VESFromTimings computes the reward of an item whose results matched from
// its timed pairs: ratio i is gold[i] / pred[i]. A prediction time of 0
// would raise ZeroDivisionError in evaluation_ves.py and gives reward 0.
// gold and pred must have the same length.
func VESFromTimings(gold, pred []time.Duration) VESOutcome {
	o := VESOutcome{Ratios: len(pred)}
	ratios := make([]float64, len(pred))
	for i := range pred {
		if pred[i] == 0 {
			o.Reason = fmt.Sprintf("timed prediction run %d took 0 s (evaluation_ves.py divides by it: ZeroDivisionError, reward 0)", i+1)
			return o
		}
		ratios[i] = float64(gold[i]) / float64(pred[i])
	}
	r, kept, ok := VESTimeRatio(ratios)
	o.Kept = kept
	if !ok {
		o.Reason = fmt.Sprintf("no time ratio of %d lies strictly inside mean ± 3σ (all equal: σ = 0); evaluation_ves.py divides by the empty list and scores 0", len(ratios))
		return o
	}
	o.TimeRatio = r
	o.Reward = VESReward(r)
	if o.Reward == 0 {
		o.Reason = "mean time ratio is 0"
	}
	return o
}

// RVES is compute_ves over per-item rewards: Σ √reward · 100 / n, summed
// left to right. It is NaN for no rewards (compute_ves raises
// ZeroDivisionError). The aggregate stage's mean of bird_r_ves is the same
// value over a run's items.
func RVES(rewards []float64) float64 {
	if len(rewards) == 0 {
		return math.NaN()
	}
	total := 0.0
	for _, r := range rewards {
		total += RVESTerm(r)
	}
	return total / float64(len(rewards))
}

// RVESTerm is one item's term of compute_ves, math.sqrt(reward) * 100.
func RVESTerm(reward float64) float64 { return math.Sqrt(reward) * 100 }

type vesMetric struct{ repeat int }

var vesInfo = Info{
	Name:        "bird_ves",
	Description: "BIRD mini_dev R-VES reward of the final attempt: 0 unless its result set equals the gold's, else a tier (0.25 to 1.25) of the gold/prediction time ratio over repeat timed runs; timing-dependent, never cached.",
	Reference:   "bird-bench/mini_dev evaluation/evaluation_ves.py iterated_execute_sql, clean_abnormal",
	Inputs:      "the gold and sample 0's final attempt, each executed 1 + repeat times (default 100) on the item's engine, bypassing every cache",
	Range:       "{0,0.25,0.5,0.75,1,1.25}",
}

var rvesInfo = Info{
	Name:        "bird_r_ves",
	Description: "BIRD mini_dev R-VES term of an item, sqrt(reward) × 100 of its bird_ves reward: the mean over items is compute_ves's R-VES.",
	Reference:   "bird-bench/mini_dev evaluation/evaluation_ves.py compute_ves",
	Inputs:      "the item score bird_ves (option reward names another column)",
	Range:       "{0,50,70.71,86.60,100,111.80}; the dataset mean is R-VES",
}

func (m *vesMetric) Info() Info { return vesInfo }

// TimedCalls: the untimed comparison run of both queries, then repeat
// timed pairs.
func (m *vesMetric) TimedCalls() int { return 2 + 2*m.repeat }

// errVESNeedsEngine is bird_ves's failure without an engine.
var errVESNeedsEngine = errors.New("bird_ves times real executions and needs an engine; the score stage has none")

// Score fails: bird_ves runs only through ScoreTimed, with an uncached,
// timed executor (the score stage passes one when it has an engine).
func (m *vesMetric) Score(context.Context, Input) item.Score {
	return Failed(vesInfo.Name, errVESNeedsEngine)
}

// ScoreTimed computes sample 0's final attempt's reward. A failed gold is
// an error (evaluation_ves.py scores 0; the score stays 0 and counts under
// the official rule); a failed or unsafe prediction scores 0 and is not run
// again; results that differ score 0. Every execution goes through run, so
// none is answered by a cache.
func (m *vesMetric) ScoreTimed(ctx context.Context, in Input, run TimedExec) item.Score {
	name := vesInfo.Name
	rec := in.Record
	if rec.GoldError != "" {
		return Failed(name, fmt.Errorf("gold query failed: %s", rec.GoldError))
	}
	final := rec.Final()
	if final == nil {
		return Failed(name, errNoAttempt)
	}
	if final.Failed() {
		return item.Score{Name: name, Value: 0, Note: fmt.Sprintf("the prediction failed (%s): reward 0", final.ErrorClass)}
	}
	gold, pred := rec.Item.Gold, final.Query
	if gold == "" {
		return Failed(name, errors.New("the item has no gold query"))
	}
	// The untimed first run of both, compared as sets (evaluation_ves.py
	// compares only these results).
	pr, _, err := run(ctx, pred)
	if err != nil {
		if ctx.Err() != nil {
			return Failed(name, ctx.Err())
		}
		return item.Score{Name: name, Value: 0, Note: fmt.Sprintf("the prediction failed: %v: reward 0", err)}
	}
	gr, _, err := run(ctx, gold)
	if err != nil {
		return Failed(name, fmt.Errorf("gold query failed: %v", err))
	}
	if pr.Truncated || gr.Truncated {
		return Failed(name, errors.New("a result was cut at the engine's max_rows: R-VES compares and times complete results (raise max_rows)"))
	}
	if v := CompareTables(gr, pr, ProfileBIRD.CompareOptions("", Tolerance{})); !v.Match {
		return item.Score{Name: name, Value: 0, Note: "set(pred) != set(gold): " + v.Reason + ": reward 0"}
	}
	goldT := make([]time.Duration, m.repeat)
	predT := make([]time.Duration, m.repeat)
	for i := 0; i < m.repeat; i++ {
		if err := ctx.Err(); err != nil {
			return Failed(name, err)
		}
		if _, predT[i], err = run(ctx, pred); err != nil {
			return Failed(name, fmt.Errorf("timed run %d of the prediction failed: %v", i+1, err))
		}
		if _, goldT[i], err = run(ctx, gold); err != nil {
			return Failed(name, fmt.Errorf("timed run %d of the gold failed: %v", i+1, err))
		}
	}
	o := VESFromTimings(goldT, predT)
	sc := item.Score{Name: name, Value: o.Reward}
	if o.Reason != "" {
		sc.Note = o.Reason
	} else {
		sc.Note = fmt.Sprintf("time ratio %.4g: mean gold/prediction time of %d of %d timed pairs inside mean ± 3σ", o.TimeRatio, o.Kept, o.Ratios)
	}
	return sc
}

type rvesMetric struct{ from string }

func (m *rvesMetric) Info() Info { return rvesInfo }

// Score is math.sqrt(reward) * 100 of the reward column; a failed reward
// is a failure here too (value 0, as compute_ves counts it).
func (m *rvesMetric) Score(_ context.Context, in Input) item.Score {
	name := rvesInfo.Name
	s, ok := in.Record.Score(m.from)
	switch {
	case !ok:
		return Failed(name, fmt.Errorf("bird_r_ves needs the %s metric listed before it in the same score stage", m.from))
	case s.Err != "":
		return Failed(name, fmt.Errorf("%s failed: %s", m.from, s.Err))
	case s.Null:
		return item.Score{Name: name, Null: true}
	case s.Value < 0:
		return Failed(name, fmt.Errorf("%s is %v, not a reward", m.from, s.Value))
	}
	return item.Score{Name: name, Value: RVESTerm(s.Value)}
}

func init() {
	Register(Def{
		Info:    vesInfo,
		Options: []string{"repeat"},
		NewItem: func(o Options) (ItemMetric, error) {
			n, err := o.Int("repeat", DefaultVESRepeat)
			if err != nil {
				return nil, err
			}
			if n < 1 {
				return nil, fmt.Errorf(`option "repeat" must be at least 1, got %d`, n)
			}
			return &vesMetric{repeat: n}, nil
		},
	})
	Register(Def{
		Info:    rvesInfo,
		Options: []string{"reward"},
		NewItem: func(o Options) (ItemMetric, error) {
			from, err := o.String("reward", vesInfo.Name)
			if err != nil {
				return nil, err
			}
			if from == "" {
				return nil, errors.New(`option "reward" must name a score column`)
			}
			return &rvesMetric{from: from}, nil
		},
	})
}

package score

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/evalflow/evalflow/item"
	"github.com/evalflow/evalflow/metrics"
	"github.com/evalflow/evalflow/nodes"
)

type stubMetric struct {
	async bool
	sleep time.Duration
	fn    func(rec *item.Record) float64
}

func (m stubMetric) Info() metrics.Info { return metrics.Info{Name: "stub"} }
func (m stubMetric) Async() bool        { return m.async }
func (m stubMetric) Score(ctx context.Context, in metrics.Input) item.Score {
	time.Sleep(m.sleep)
	return item.Score{Value: m.fn(in.Record)}
}

// MC-REQ-08: a judge and the deterministic metrics of one item run
// concurrently, and a metric declared after the judge still reads its score.
func TestJudgesRunAlongsideDeterministicMetrics(t *testing.T) {
	one := func(*item.Record) float64 { return 1 }
	s := &Score{items: []itemMetric{
		{as: "table_accuracy", metric: stubMetric{sleep: 150 * time.Millisecond, fn: one}},
		{as: "qas_semantic", metric: stubMetric{async: true, sleep: 300 * time.Millisecond, fn: func(*item.Record) float64 { return 0.8 }}},
		{as: "reads_judge", metric: stubMetric{fn: func(r *item.Record) float64 {
			sc, ok := r.Score("qas_semantic")
			if !ok {
				return -1
			}
			return sc.Value
		}}},
	}}
	rec := &item.Record{}
	start := time.Now()
	if err := s.Process(context.Background(), rec); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > 420*time.Millisecond {
		t.Errorf("took %s; the 150 ms metric should have run inside the 300 ms judge", d)
	}
	for name, want := range map[string]float64{"table_accuracy": 1, "qas_semantic": 0.8, "reads_judge": 0.8} {
		if sc, _ := rec.Score(name); sc.Value != want {
			t.Errorf("%s = %v, want %v", name, sc.Value, want)
		}
	}
}

// errMetric fails like an LLM judge whose call was cancelled, or whose
// run reached max_cost.
type errMetric struct{ err string }

func (m errMetric) Info() metrics.Info { return metrics.Info{Name: "judge"} }
func (m errMetric) Async() bool        { return true }
func (m errMetric) Score(ctx context.Context, in metrics.Input) item.Score {
	return item.Score{Null: true, Err: m.err}
}

// An interrupted run leaves the item's judges unscored: Process returns the
// context's error (the planner marks the item cancelled, and the next run
// of the same command scores it) instead of keeping a failed judge; a judge
// that reached the run's max_cost stops the run.
func TestJudgeInterruptedOrOverBudget(t *testing.T) {
	s := &Score{items: []itemMetric{{as: "query_correctness", metric: errMetric{err: "LLM judge failed: llm cancelled: context canceled"}}}}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := s.Process(ctx, &item.Record{}); err == nil {
		t.Error("a cancelled run's item came back scored")
	}
	s = &Score{items: []itemMetric{{as: "query_correctness", metric: errMetric{err: "LLM judge failed: llm budget: spent $1 of max_cost $1 (max_cost reached; no further calls are made to this endpoint)"}}}}
	err := s.Process(context.Background(), &item.Record{})
	var halt *nodes.StopRun
	if !errors.As(err, &halt) {
		t.Errorf("a judge over the run's max_cost: %v, want nodes.StopRun", err)
	}
}

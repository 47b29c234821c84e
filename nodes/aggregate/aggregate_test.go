package aggregate

import (
	"context"
	"fmt"
	"math"
	"testing"

	"github.com/evalflow/evalflow/item"
	"github.com/evalflow/evalflow/metrics"
	"github.com/evalflow/evalflow/nodes"
)

func rec(id, status, level string, scores ...item.Score) *item.Record {
	return &item.Record{Item: item.Item{ID: id, Fields: []item.Field{{Name: "level", Value: level}}}, Status: status, Scores: scores}
}

func row(t *testing.T, rows []Row, group, value, metric string) Row {
	t.Helper()
	for _, r := range rows {
		if r.Group == group && r.Value == value && r.Metric == metric {
			return r
		}
	}
	t.Fatalf("no row %s=%s %s in %+v", group, value, metric, rows)
	return Row{}
}

// TestMeansAreHonest: errored items are out of evalflow's means and
// counted; under an official profile they count with their value and the
// mean without them is given too; a failed judge (null with an error) is a
// metric error out of the mean; a failed deterministic metric counts as 0
// (MC-REQ-07); cancelled items count nowhere; groups split the same way.
func TestMeansAreHonest(t *testing.T) {
	ag := &Aggregate{Name: "aggregate", GroupBy: []string{"level"}, accs: map[key]*acc{}, items: map[[2]string]int{}}
	ex := func(v float64) item.Score { return item.Score{Name: "ex", Value: v} }
	off := func(v float64) item.Score { return item.Score{Name: "ts", Value: v, Official: true} }
	judge := func(v float64, err string) item.Score {
		if err != "" {
			return item.Score{Name: "judge", Null: true, Err: err}
		}
		return item.Score{Name: "judge", Value: v}
	}
	for _, r := range []*item.Record{
		rec("a", "ok", "easy", ex(1), off(1), judge(1, "")),
		rec("b", "ok", "easy", ex(0), off(0), judge(0, "LLM judge timeout")),
		rec("c", "error", "hard", ex(0), off(0), judge(0, "")),
		rec("d", "ok", "hard", item.Score{Name: "ex", Err: "boom"}, off(1), judge(0.5, "")),
		rec("e", "cancelled", "hard", ex(1), off(1), judge(1, "")),
	} {
		ag.Collect(r)
	}
	rows := ag.Rows(context.Background())
	// ex: a=1, b=0, d failed (0, MC-REQ-07); c errored, e cancelled: out.
	if r := row(t, rows, "all", "", "ex"); r.N != 3 || r.Mean != 1.0/3 || r.Errors != 1 || r.ErrItems != 1 || r.Items != 4 {
		t.Errorf("ex: %+v", r)
	}
	// official: c counts with its value (0): (1+0+0+1)/4; without it 2/3.
	if r := row(t, rows, "all", "", "ts"); r.N != 4 || r.Mean != 0.5 || r.ErrItems != 1 || r.NOK != 3 || r.MeanOK != 2.0/3 {
		t.Errorf("ts: %+v", r)
	}
	// judge: b failed (null, error): out of the mean; c errored: out.
	if r := row(t, rows, "all", "", "judge"); r.N != 2 || r.Mean != 0.75 || r.Errors != 1 || r.Nulls != 0 {
		t.Errorf("judge: %+v", r)
	}
	if r := row(t, rows, "level", "hard", "ex"); r.N != 1 || r.Mean != 0 || r.ErrItems != 1 || r.Items != 2 {
		t.Errorf("ex hard: %+v", r)
	}
	if r := row(t, rows, "level", "easy", "ex"); r.N != 2 || r.Mean != 0.5 {
		t.Errorf("ex easy: %+v", r)
	}
}

// TestDatasetMetricsFold: a folding dataset metric gives the same values
// from the aggregate's accumulators as from all records at once, and the
// aggregate keeps no record for it.
func TestDatasetMetricsFold(t *testing.T) {
	def, ok := metrics.Default.Lookup("recovery_rate")
	if !ok {
		t.Skip("no recovery_rate metric")
	}
	dm, err := def.NewDataset(metrics.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ag := &Aggregate{Name: "aggregate", accs: map[key]*acc{}, items: map[[2]string]int{}, dm: []nodes.NamedDatasetMetric{{As: "recovery_rate", Metric: dm}}}
	var all []*item.Record
	yes, no := true, false
	for i, matches := range [][]*bool{{&no, &yes}, {&no, &no}, {&yes}, {&no, &yes}, {nil}} {
		var atts []*item.Attempt
		for _, m := range matches {
			atts = append(atts, &item.Attempt{Match: m})
		}
		r := &item.Record{Item: item.Item{ID: string(rune('a' + i))}, Status: "ok", Samples: []*item.Sample{{Attempts: atts}}}
		all = append(all, r)
		ag.Collect(r)
	}
	if len(ag.keep) != 0 {
		t.Errorf("the aggregate kept %d records for a folding metric", len(ag.keep))
	}
	want := dm.Aggregate(context.Background(), all)
	rows := ag.Rows(context.Background())
	for _, s := range want {
		r := row(t, rows, "all", "", s.Name)
		if r.Mean != s.Value && !(math.IsNaN(r.Mean) && s.Null) {
			t.Errorf("%s: %v from the fold, %v from all records", s.Name, r.Mean, s.Value)
		}
	}
	// recovered 2 of 3 initially failed (a, d recovered; b not); e skipped.
	if r := row(t, rows, "all", "", "recovery_rate"); r.Mean != 2.0/3 {
		t.Errorf("recovery_rate = %v, want 2/3", r.Mean)
	}
}

// TestIntervalsDrawnTogether: the intervals computed together in Rows
// (metrics that are not 0/1 over the same items share their draws) are
// each what CI gives for the row alone — overall and per group, with a
// metric that has errors (other n), a constant one and a 0/1 one.
func TestIntervalsDrawnTogether(t *testing.T) {
	ag := &Aggregate{Name: "aggregate", GroupBy: []string{"level"}, accs: map[key]*acc{}, items: map[[2]string]int{},
		binary: map[string]bool{"ex": true}, seed: 7}
	vals := map[[3]string][]float64{}
	for i := range 300 {
		level := []string{"easy", "hard", "medium"}[i%3]
		f1 := float64(i*37%101) / 100
		pk := float64(i * 13 % 2)
		scores := []item.Score{{Name: "ex", Value: pk}, {Name: "f1", Value: f1}, {Name: "pass", Value: pk}, {Name: "flat", Value: 0.25}}
		if i%10 == 0 {
			scores = append(scores, item.Score{Name: "judge", Null: true, Err: "timeout"})
		} else {
			scores = append(scores, item.Score{Name: "judge", Value: f1 / 2})
		}
		ag.Collect(rec(fmt.Sprint(i), "ok", level, scores...))
		for _, s := range scores {
			if s.Null {
				continue
			}
			for _, g := range [][2]string{{"all", ""}, {"level", level}} {
				k := [3]string{g[0], g[1], s.Name}
				vals[k] = append(vals[k], s.Value)
			}
		}
	}
	rows := ag.Rows(context.Background())
	checked := 0
	for _, r := range rows {
		x := vals[[3]string{r.Group, r.Value, r.Metric}]
		sum := 0.0
		for _, v := range x {
			sum += v
		}
		lo, hi, method := CI(ag.binary[r.Metric], sum, len(x), x, ag.seed)
		if math.Float64bits(lo) != math.Float64bits(r.CILow) || math.Float64bits(hi) != math.Float64bits(r.CIHigh) || method != r.CIMethod {
			t.Errorf("%s=%s %s: [%v, %v] %s, alone [%v, %v] %s", r.Group, r.Value, r.Metric, r.CILow, r.CIHigh, r.CIMethod, lo, hi, method)
		}
		if method == "bootstrap" {
			checked++
		}
	}
	if checked != 4*4 {
		t.Errorf("%d bootstrap rows checked, want 16 (4 metrics × overall and 3 levels)", checked)
	}
}

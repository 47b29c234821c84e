package metrics

import (
	"context"

	"github.com/evalflow/evalflow/item"
	"github.com/evalflow/evalflow/table"
)

// SoftF1 is BIRD mini_dev's Soft-F1 (evaluation_f1.py, calculate_f1_score),
// reproduced operation for operation so that it agrees bit for bit:
//
//  1. both results without rows → 1.0;
//  2. both sides are de-duplicated keeping first occurrences
//     (list(dict.fromkeys(rows)), Python == on tuples, so 1 and 1.0 collapse);
//  3. row i of the prediction is paired with row i of the gold: pairing is
//     by position, so row order matters;
//  4. per pair: matches = prediction values found anywhere in the gold row,
//     pred_only = prediction values not in it, truth_only = gold values not
//     in the prediction row, each divided by the GOLD row's length (even
//     pred_only); duplicates within a row count one by one;
//  5. a gold row without partner adds (0 match, 1 truth_only), a prediction
//     row without partner adds (0 match, 1 pred_only);
//  6. tp, fp, fn are left-to-right float sums; P = tp/(tp+fp), R = tp/(tp+fn)
//     (0 when the denominator is 0), F1 = 2·P·R/(P+R) (0 when P+R = 0).
func SoftF1(gold, pred *table.Table) float64 { return softF1(nil, gold, pred) }

// softF1 is SoftF1 with the results' keys from rk.
func softF1(rk *ResultKeys, gold, pred *table.Table) float64 {
	if gold.NumRows() == 0 && pred.NumRows() == 0 {
		return 1.0
	}
	g, p := rk.distinct(gold), rk.distinct(pred)

	var match, predOnly, truthOnly []float64
	for i := range g.rows {
		if i >= len(p.rows) {
			match = append(match, 0)
			truthOnly = append(truthOnly, 1)
			continue
		}
		m, pOnly, t := softF1Row(&p, &g, i)
		match = append(match, m)
		predOnly = append(predOnly, pOnly)
		truthOnly = append(truthOnly, t)
	}
	for i := 0; i < len(p.rows)-len(g.rows); i++ {
		match = append(match, 0)
		predOnly = append(predOnly, 1)
		truthOnly = append(truthOnly, 0)
	}
	sum := func(xs []float64) float64 {
		s := 0.0
		for _, x := range xs {
			s += x
		}
		return s
	}
	tp, fp, fn := sum(match), sum(predOnly), sum(truthOnly)
	var precision, recall float64
	if tp+fp > 0 {
		precision = tp / (tp + fp)
	}
	if tp+fn > 0 {
		recall = tp / (tp + fn)
	}
	if precision+recall > 0 {
		return 2 * precision * recall / (precision + recall)
	}
	return 0
}

// softF1Row is calculate_row_match on value keys, for row i of pred and
// of gold. A gold row of length 0 (impossible for SQL) would raise
// ZeroDivisionError in BIRD, which scores the item 0; it gives 0, 1, 0
// here and cannot occur for SQL results.
func softF1Row(pred, gold *exKeyed, i int) (match, predOnly, truthOnly float64) {
	np, ng := len(pred.rows[i]), len(gold.rows[i])
	in := func(v string, k *exKeyed, n int) bool {
		for j := range n {
			if k.cell(i, j) == v {
				return true
			}
		}
		return false
	}
	var m, p, t int
	for j := range np {
		if in(pred.cell(i, j), gold, ng) {
			m++
		} else {
			p++
		}
	}
	for j := range ng {
		if !in(gold.cell(i, j), pred, np) {
			t++
		}
	}
	total := float64(ng)
	if total == 0 {
		return 0, 1, 0
	}
	return float64(m) / total, float64(p) / total, float64(t) / total
}

type softF1Metric struct{}

var softF1Info = Info{
	Name:        "bird_soft_f1",
	Description: "BIRD mini_dev Soft-F1 between the gold and prediction results: de-duplicated rows paired by position, cell-level precision and recall divided by the gold row length.",
	Reference:   "bird-bench/mini_dev evaluation/evaluation_f1.py calculate_f1_score",
	Inputs:      "gold result and sample 0's final attempt result",
	Range:       "[0,1]",
}

func (softF1Metric) Info() Info { return softF1Info }

// Score scores sample 0's final attempt; a failed attempt scores 0, a failed
// gold is an error (BIRD would score 0).
func (softF1Metric) Score(ctx context.Context, in Input) item.Score {
	gold, _, err := exGold(ctx, Profile{Name: "bird_soft_f1"}, in)
	if err != nil {
		return Failed(softF1Info.Name, err)
	}
	a := in.Record.Final()
	if a == nil {
		return Failed(softF1Info.Name, errNoAttempt)
	}
	if a.Failed() || !a.Executed {
		return item.Score{Name: softF1Info.Name, Value: 0}
	}
	return item.Score{Name: softF1Info.Name, Value: softF1(in.Keys, gold, a.Result)}
}

func init() {
	Register(Def{
		Info:    softF1Info,
		NewItem: func(Options) (ItemMetric, error) { return softF1Metric{}, nil },
	})
}

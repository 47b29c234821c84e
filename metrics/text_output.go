package metrics

// Output Jaccard and the LLMetric-Q composite (Metrics Reference Documentation, “5.4 Jaccard
// Similarity” and “6. LLMetric-Q Composite”).
//
// jaccard_output is the "Jaccard" of neo4j-labs/text2cypher's evaluation
// notebook (df_sim), which kg-axel's output metrics follow: each row becomes
// the set of its values (column names dropped; numbers and booleans compared
// as Python floats, so 1 = 1.0 = true; strings never equal numbers); unless
// "order by" occurs in the lower-cased gold and predicted query texts, rows
// are aligned greedily (for each row i of the shorter side, the row j ≥ i of
// the longer side with the highest row-set Jaccard, first on ties, is
// swapped into place i); then the score is the Jaccard of the sets
// {(row index, value)}. Two empty results score 1.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/evalflow/evalflow/item"
	"github.com/evalflow/evalflow/table"
)

// Row-order choices for jaccard_output's "order" option.
const (
	OrderAuto   = "auto"   // rows keep their order when "order by" is in either query
	OrderAlways = "always" // rows always keep their order
	OrderNever  = "never"  // rows are always aligned
)

// cellKey is a value as the notebook's make_hashable sees it.
type cellKey struct {
	kind byte // 'n' null, 'f' number, 's' string, 'b' bytes
	f    float64
	s    string
}

func keyOf(v table.Value) cellKey {
	switch x := v.(type) {
	case nil:
		return cellKey{kind: 'n'}
	case string:
		return cellKey{kind: 's', s: x}
	case int64:
		return cellKey{kind: 'f', f: float64(x)}
	case float64:
		return cellKey{kind: 'f', f: x}
	case bool:
		return cellKey{kind: 'f', f: b2f(x)}
	case []byte:
		// Python's float() accepts bytes that spell a number.
		if f, err := strconv.ParseFloat(string(bytes.TrimSpace(x)), 64); err == nil {
			return cellKey{kind: 'f', f: f}
		}
		return cellKey{kind: 'b', s: string(x)}
	default:
		return keyOf(table.Normalize(x))
	}
}

type rowSet map[cellKey]struct{}

func rowSetsOf(t *table.Table) []rowSet {
	out := make([]rowSet, t.NumRows())
	if t == nil {
		return out
	}
	for i, row := range t.Rows {
		s := make(rowSet, len(row))
		for _, v := range row {
			s[keyOf(v)] = struct{}{}
		}
		out[i] = s
	}
	return out
}

// rowSim is the Jaccard of two row sets; two empty rows (zero columns) give
// 1, where the notebook would divide by zero.
func rowSim(a, b rowSet) float64 { return Jaccard(a, b) }

// OutputJaccard is df_sim(gold, pred, ordered) of the text2cypher notebook.
// A nil table is an empty result.
func OutputJaccard(gold, pred *table.Table, ordered bool) float64 {
	l, r := rowSetsOf(gold), rowSetsOf(pred)
	if !ordered {
		short, long := l, r
		if len(l) > len(r) {
			short, long = r, l
		}
		for i := range short {
			best, bestJ := -1.0, -1
			for j := i; j < len(long); j++ {
				if s := rowSim(short[i], long[j]); s > best {
					best, bestJ = s, j
				}
			}
			long[i], long[bestJ] = long[bestJ], long[i]
		}
	}
	type cell struct {
		row int
		key cellKey
	}
	total := func(rows []rowSet) map[cell]struct{} {
		m := map[cell]struct{}{}
		for i, s := range rows {
			for k := range s {
				m[cell{i, k}] = struct{}{}
			}
		}
		return m
	}
	return Jaccard(total(l), total(r))
}

// OrderedByText is the notebook's row-order rule: "order by" in the
// lower-cased texts of both queries.
func OrderedByText(gold, pred string) bool {
	return strings.Contains(strings.ToLower(gold+" "+pred), "order by")
}

// outputPair returns the gold and predicted results for attempt a; ok is
// false with the score to return when the gold result is unavailable.
func outputPair(name string, rec *item.Record, a *item.Attempt) (gold, pred *table.Table, s item.Score, ok bool) {
	if rec == nil {
		return nil, nil, Failed(name, errors.New("no record")), false
	}
	if rec.GoldError != "" {
		return nil, nil, Failed(name, fmt.Errorf("gold query failed: %s", rec.GoldError)), false
	}
	if !rec.GoldDone {
		return nil, nil, item.Score{Name: name, Null: true}, false
	}
	if a == nil {
		return nil, nil, Failed(name, errNoAttempt), false
	}
	return rec.GoldResult, a.Result, item.Score{}, true
}

// attemptOutputJaccard scores attempt a's result against the gold result: an
// attempt that failed or never ran scores 0 (kg-axel's fallback).
func attemptOutputJaccard(rec *item.Record, a *item.Attempt, gold *table.Table, order string) float64 {
	if a.Failed() || !a.Executed {
		return 0
	}
	ordered := order == OrderAlways || (order == OrderAuto && OrderedByText(rec.Item.Gold, a.Query))
	return OutputJaccard(gold, a.Result, ordered)
}

type outputJaccardMetric struct{ order, which string }

func (outputJaccardMetric) Info() Info { return jaccardOutputInfo }

func (m outputJaccardMetric) Score(_ context.Context, in Input) item.Score {
	a := pickAttempt(in.Record, m.which)
	gold, _, s, ok := outputPair(jaccardOutputInfo.Name, in.Record, a)
	if !ok {
		return s
	}
	return item.Score{Name: jaccardOutputInfo.Name, Value: attemptOutputJaccard(in.Record, a, gold, m.order)}
}

// LLMetricQWeights are the Metrics Reference Documentation's weights of Pass@1, KG Valid, Jaccard
// Output and JaRou.
var LLMetricQWeights = [4]float64{0.3, 0.4, 0.2, 0.1}

// LLMetricQ is w1·pass + w2·kgValid + w3·jaccardOutput + w4·JaRou with
// JaRou = (jaroWinkler + rougeLF1)/2.
func LLMetricQ(w [4]float64, pass, kgValid bool, jaccardOutput, jaroWinkler, rougeLF1 float64) float64 {
	jarou := (jaroWinkler + rougeLF1) / 2
	return w[0]*b2f(pass) + w[1]*b2f(kgValid) + w[2]*jaccardOutput + w[3]*jarou
}

type llmetricQMetric struct {
	w     [4]float64
	which string
	order string
}

func (llmetricQMetric) Info() Info { return llmetricQInfo }

func (m llmetricQMetric) Score(_ context.Context, in Input) item.Score {
	const name = "llmetric_q"
	rec := in.Record
	if rec != nil && rec.Item.Gold == "" {
		return item.Score{Name: name, Null: true}
	}
	a := pickAttempt(rec, m.which)
	gold, _, s, ok := outputPair(name, rec, a)
	if !ok {
		return s
	}
	kg, known := KGValid(a)
	if !known {
		return item.Score{Name: name, Null: true}
	}
	jo := attemptOutputJaccard(rec, a, gold, m.order)
	// Pass@1 output: the execution-match verdict, or (kg-axel) an output
	// Jaccard of exactly 1 when no verdict was written.
	pass := jo == 1
	if a.Match != nil {
		pass = *a.Match
	}
	jw := QueryJaroWinkler(rec.Item.Gold, a.Query, FormatKGAxel)
	_, _, rl := QueryRougeL(rec.Item.Gold, a.Query, true)
	return item.Score{Name: name, Value: LLMetricQ(m.w, pass, kg, jo, jw, rl)}
}

func orderOption(o Options) (string, error) {
	v, err := o.String("order", OrderAuto)
	if err != nil {
		return "", err
	}
	switch v {
	case OrderAuto, OrderAlways, OrderNever:
		return v, nil
	}
	return "", fmt.Errorf("option \"order\" must be %q, %q or %q, got %q", OrderAuto, OrderAlways, OrderNever, v)
}

func weightsOption(o Options) ([4]float64, error) {
	w := LLMetricQWeights
	v, ok := o["weights"]
	if !ok {
		return w, nil
	}
	list, ok := v.([]any)
	if !ok || len(list) != 4 {
		return w, fmt.Errorf("option \"weights\" must be a list of 4 numbers (pass@1, kg_valid, jaccard_output, jarou), got %v", v)
	}
	sum := 0.0
	for i, x := range list {
		f, ok := x.(float64)
		if !ok || f < 0 || math.IsNaN(f) {
			return w, fmt.Errorf("option \"weights\"[%d] must be a non-negative number, got %v", i, x)
		}
		w[i] = f
		sum += f
	}
	if math.Abs(sum-1) > 1e-9 {
		return w, fmt.Errorf("option \"weights\" must sum to 1, got %v", sum)
	}
	return w, nil
}

var (
	jaccardOutputInfo = Info{
		Name:        "jaccard_output",
		Description: "Jaccard similarity of the final result's (row, value) cells and the gold result's, rows aligned unless ordered.",
		Reference:   "*Metrics Reference Documentation*, “5.4 Jaccard Similarity”; neo4j-labs/text2cypher evaluating_cypher_jaccard df_sim (kg-axel output Jaccard)",
		Inputs:      "Record.Final().Result, Record.GoldResult, both query texts (for \"order by\")",
		Range:       "[0,1]",
	}
	llmetricQInfo = Info{
		Name:        "llmetric_q",
		Description: "Composite 0.3·Pass@1 + 0.4·KG Valid + 0.2·Jaccard Output + 0.1·JaRou of the final attempt.",
		Reference:   "*Metrics Reference Documentation*, “6. LLMetric-Q Composite” (kg-axel LLMetric-Q)",
		Inputs:      "Record.Final(): Match, ErrorClass, Result, Query; Record.GoldResult; Record.Item.Gold",
		Range:       "[0,1]",
	}
)

func init() {
	Register(Def{
		Info:    jaccardOutputInfo,
		Options: []string{"order", "attempt"},
		NewItem: func(o Options) (ItemMetric, error) {
			order, err := orderOption(o)
			if err != nil {
				return nil, err
			}
			which, err := attemptOption(o, AttemptFinal)
			if err != nil {
				return nil, err
			}
			return outputJaccardMetric{order: order, which: which}, nil
		},
	})
	Register(Def{
		Info:    llmetricQInfo,
		Options: []string{"weights", "attempt", "order"},
		NewItem: func(o Options) (ItemMetric, error) {
			w, err := weightsOption(o)
			if err != nil {
				return nil, err
			}
			which, err := attemptOption(o, AttemptFinal)
			if err != nil {
				return nil, err
			}
			order, err := orderOption(o)
			if err != nil {
				return nil, err
			}
			return llmetricQMetric{w: w, which: which, order: order}, nil
		},
	})
}

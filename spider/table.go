package spider

import (
	"fmt"
	"io"
	"strings"
)

// Levels are the hardness levels of the printed table, with "all" last.
var Levels = []string{"easy", "medium", "hard", "extra", "all"}

// Result is one item's outcome.
type Result struct {
	Hardness string
	Exact    bool
	// PredErr is why the prediction did not parse (it was then scored as
	// the empty query, not skipped); nil when it parsed.
	PredErr error
	Partial map[string]Partial
}

type partialSum struct {
	acc, rec, f1       float64
	accCount, recCount int
}

type levelScore struct {
	count   int
	exact   float64
	partial map[string]*partialSum
}

// Evaluator accumulates items the way evaluation.py's evaluate() does with
// --etype match and prints the same report. It is not safe for concurrent
// use. Log, when set, receives what evaluate() prints per item: an
// "eval_err_num:N" line for each prediction that does not parse and the
// "<hardness> pred: …/gold: …" block for each item that is not an exact
// match.
type Evaluator struct {
	Rule   Rule
	Log    io.Writer
	errNum int
	levels map[string]*levelScore
}

// NewEvaluator returns an Evaluator for rule that logs to log (may be nil).
func NewEvaluator(rule Rule, log io.Writer) *Evaluator {
	e := &Evaluator{Rule: rule, Log: log, levels: map[string]*levelScore{}}
	for _, l := range Levels {
		ls := &levelScore{partial: map[string]*partialSum{}}
		for _, t := range PartialTypes {
			ls.partial[t] = &partialSum{}
		}
		e.levels[l] = ls
	}
	return e
}

// Score parses and compares one item without accumulating it: gold must
// parse (evaluation.py stops otherwise); a prediction that does not parse
// is compared as EmptySQL.
func Score(schema *Schema, gold, pred string, rule Rule) (Result, error) {
	g, err := Parse(schema, gold)
	if err != nil {
		return Result{}, fmt.Errorf("%w: gold query does not parse: %v", ErrReference, err)
	}
	hard, err := Hardness(g)
	if err != nil {
		return Result{}, err
	}
	res := Result{Hardness: hard}
	p, err := Parse(schema, pred)
	if err != nil {
		res.PredErr = err
		p = EmptySQL()
	}
	gn, err := Normalize(schema, g)
	if err != nil {
		return Result{}, err
	}
	pn, err := Normalize(schema, p)
	if err != nil {
		return Result{}, err
	}
	res.Exact, res.Partial, err = exactMatchPartial(pn, gn, rule)
	if err != nil {
		return Result{}, err
	}
	if res.Partial == nil {
		res.Partial, _ = PartialMatch(pn, gn, rule)
	}
	return res, nil
}

// Add scores one item (gold and pred as written in the gold/pred files,
// already stripped) and accumulates it. On error nothing is accumulated.
func (e *Evaluator) Add(schema *Schema, gold, pred string) (Result, error) {
	res, err := Score(schema, gold, pred, e.Rule)
	if err != nil {
		return res, err
	}
	if res.PredErr != nil {
		e.errNum++
		e.logf("eval_err_num:%d\n", e.errNum)
	}
	if !res.Exact {
		e.logf("%s pred: %s\n%s gold: %s\n\n", res.Hardness, pred, res.Hardness, gold)
	}
	for _, l := range []string{res.Hardness, "all"} {
		ls := e.levels[l]
		ls.count++
		if res.Exact {
			ls.exact++
		}
		for _, t := range PartialTypes {
			p, s := res.Partial[t], ls.partial[t]
			if p.PredTotal > 0 {
				s.acc += p.Acc
				s.accCount++
			}
			if p.LabelTotal > 0 {
				s.rec += p.Rec
				s.recCount++
			}
			s.f1 += p.F1
		}
	}
	return res, nil
}

func (e *Evaluator) logf(format string, a ...any) {
	if e.Log != nil {
		fmt.Fprintf(e.Log, format, a...)
	}
}

// finals returns the per-level exact and partial scores as evaluate()
// computes them after the loop.
func (e *Evaluator) finals() map[string]*levelScore {
	out := map[string]*levelScore{}
	for _, l := range Levels {
		src := e.levels[l]
		ls := &levelScore{count: src.count, exact: src.exact, partial: map[string]*partialSum{}}
		for _, t := range PartialTypes {
			s := *src.partial[t]
			ls.partial[t] = &s
		}
		out[l] = ls
		if ls.count == 0 {
			continue
		}
		ls.exact /= float64(ls.count)
		for _, t := range PartialTypes {
			s := ls.partial[t]
			if s.accCount == 0 {
				s.acc = 0
			} else {
				s.acc = s.acc / float64(s.accCount)
			}
			if s.recCount == 0 {
				s.rec = 0
			} else {
				s.rec = s.rec / float64(s.recCount)
			}
			if s.acc == 0 && s.rec == 0 {
				s.f1 = 1
			} else {
				s.f1 = 2.0 * s.acc * s.rec / (s.rec + s.acc)
			}
		}
	}
	return out
}

// Exact returns the exact-match accuracy of a level ("all" included), 0
// for a level with no items.
func (e *Evaluator) Exact(level string) float64 { return e.finals()[level].exact }

// WriteTable prints print_scores(scores, "match"): counts, exact-match
// accuracy and the partial-matching accuracy, recall and F1 tables.
func (e *Evaluator) WriteTable(w io.Writer) error {
	f := e.finals()
	var b strings.Builder
	row := func(name string, vals func(l string) float64) {
		fmt.Fprintf(&b, "%-20s", name)
		for _, l := range Levels {
			fmt.Fprintf(&b, " %-20.3f", vals(l))
		}
		b.WriteString("\n")
	}
	fmt.Fprintf(&b, "%-20s", "")
	for _, l := range Levels {
		fmt.Fprintf(&b, " %-20s", l)
	}
	b.WriteString("\n")
	fmt.Fprintf(&b, "%-20s", "count")
	for _, l := range Levels {
		fmt.Fprintf(&b, " %-20d", f[l].count)
	}
	b.WriteString("\n")
	b.WriteString("\n====================== EXACT MATCHING ACCURACY =====================\n")
	row("exact match", func(l string) float64 { return f[l].exact })
	b.WriteString("\n---------------------PARTIAL MATCHING ACCURACY----------------------\n")
	for _, t := range PartialTypes {
		row(t, func(l string) float64 { return f[l].partial[t].acc })
	}
	b.WriteString("---------------------- PARTIAL MATCHING RECALL ----------------------\n")
	for _, t := range PartialTypes {
		row(t, func(l string) float64 { return f[l].partial[t].rec })
	}
	b.WriteString("---------------------- PARTIAL MATCHING F1 --------------------------\n")
	for _, t := range PartialTypes {
		row(t, func(l string) float64 { return f[l].partial[t].f1 })
	}
	_, err := io.WriteString(w, b.String())
	return err
}

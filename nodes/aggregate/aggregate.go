// Package aggregate is the aggregate stage: mean and count of every metric
// over all items and per value of each group_by column, plus the dataset
// metrics the upstream score stage declared.
//
//	stage "aggregate" {
//	  input    = stage.score
//	  group_by = ["difficulty"]   # dataset columns (pass-through fields or db)
//	}
//
// Means are over items where the metric has a value: a Null score (metric
// not applicable) is counted in "nulls" and left out of the mean; a failed
// metric counts as 0 in the mean (metric-calculators, “Error Reporting”) and in "errors", except a
// failed LLM judge, whose score is Null with its error: counted in
// "errors", left out of the mean. An item the harness could not evaluate
// (status error) is left out of every mean and counted in ErrItems —
// except for a score that follows an official scorer's profile
// (item.Score.Official), which counts with the value the official scorer
// gives, so that profile's totals reproduce; MeanOK is then the mean
// without errored items. Cancelled items count nowhere.
//
// Every item metric's row carries a 95% confidence interval of its mean: a
// Wilson interval for metrics declared 0/1 (metrics.Info.Binary, from the
// score stage), a seeded percentile bootstrap otherwise (the values are
// kept for it: 8 bytes per item and metric, only for metrics that are not
// 0/1). The bootstrap draws BootstrapResamples resamples, fewer for very
// large groups (at most BootstrapWork values drawn in all, at least 200
// resamples), so a million-item run does not spend minutes on intervals.
//
// A test-suite verdict (ex_suite: the score stage's SuiteColumns) exists
// only for items with a test suite: an item without one is left out of
// its row (not counted in nulls either, so a resumed run, which reads the
// NULL back from items.parquet, aggregates as an uninterrupted one), and
// its row counts the items the suite flipped (Row.Flipped).
//
// Dataset metrics that fold (metrics.Folding: calibration, safety,
// recovery_rate) keep one accumulator per group, not the records, so the
// stage's memory does not grow with the run; others keep the records.
package aggregate

import (
	"context"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/hashicorp/hcl/v2"

	"github.com/evalflow/evalflow/dataset"
	"github.com/evalflow/evalflow/dsl"
	"github.com/evalflow/evalflow/item"
	"github.com/evalflow/evalflow/metrics"
	"github.com/evalflow/evalflow/nodes"
	"github.com/evalflow/evalflow/stats"
)

func init() {
	nodes.Register(nodes.Kind{Name: "aggregate", DefaultConcurrency: 1, Inputs: []string{"score"}, Collects: true, Factory: New})
}

var schema = &hcl.BodySchema{Attributes: []hcl.AttributeSchema{{Name: "group_by"}}}

// Row is one aggregate: a metric over a group. Group is "all" (Value "")
// for the whole run.
type Row struct {
	Stage  string
	Group  string
	Value  string
	Metric string
	Items  int     // items in the group
	N      int     // items with a value (errors included as 0)
	Mean   float64 // NaN when N == 0
	Sum    float64
	Errors int
	Nulls  int
	// ErrItems are items in error (status "error"); they are not in N or
	// the mean unless the metric is official. MeanOK and NOK are the mean
	// and count over items not in error.
	ErrItems int
	MeanOK   float64
	NOK      int
	// Cell is the sweep cell the row belongs to ("" outside a sweep).
	Cell string
	// CILow and CIHigh bound a 95% confidence interval of Mean (NaN when
	// there is none: N == 0, or a dataset metric); CIMethod is "wilson" or
	// "bootstrap".
	CILow, CIHigh float64
	CIMethod      string
	// SuiteOf, on the row of a test-suite verdict (ex_suite), names the
	// one-database metric it refines (ex); Flipped counts the group's
	// items where that one is 1 and the suite verdict 0, neither failed:
	// the near-misses only the suite's other databases caught.
	SuiteOf string
	Flipped int
}

// SuiteColumns is implemented by score stages whose metrics give
// test-suite verdicts: each verdict's column (ex_suite) mapped to the
// one-database column it refines (ex).
type SuiteColumns interface {
	SuiteColumns() map[string]string
}

// Bootstrap settings for the intervals of metrics that are not 0/1.
const (
	BootstrapResamples = 2000
	BootstrapWork      = 200_000_000
	CILevel            = 0.95
)

// CI computes a row's interval: Wilson over the sum of a 0/1 metric, a
// percentile bootstrap over vals otherwise.
func CI(binary bool, sum float64, n int, vals []float64, seed uint64) (lo, hi float64, method string) {
	if !bootstrapped(binary, n, vals) {
		if binary && n > 0 {
			lo, hi = stats.Wilson(int(math.Round(sum)), n, CILevel)
			return lo, hi, "wilson"
		}
		return math.NaN(), math.NaN(), ""
	}
	// Sorted, so the interval does not depend on the order items finished
	// in (a resumed run collects its kept items first).
	vals = slices.Sorted(slices.Values(vals))
	lo, hi = stats.BootstrapMeanCI(vals, resamplesFor(len(vals)), seed, CILevel)
	return lo, hi, "bootstrap"
}

// bootstrapped reports whether CI's interval for these is a bootstrap.
func bootstrapped(binary bool, n int, vals []float64) bool {
	return !binary && n > 0 && len(vals) > 0
}

// resamplesFor is the number of bootstrap resamples of n values.
func resamplesFor(n int) int {
	b := BootstrapResamples
	if n*b > BootstrapWork {
		b = max(200, BootstrapWork/n)
	}
	return b
}

// bootstraps collects the rows whose interval is a bootstrap so that
// they are computed together: samples of one size share their draws
// (stats.BootstrapMeanCIs), each interval still CI's.
type bootstraps struct {
	rows []int
	vals [][]float64
}

func (b *bootstraps) add(row int, vals []float64) {
	b.rows = append(b.rows, row)
	b.vals = append(b.vals, vals)
}

// cis returns each collected sample's interval as CI would (method
// "bootstrap").
func (b *bootstraps) cis(seed uint64) (lo, hi []float64) {
	if len(b.vals) == 0 {
		return nil, nil
	}
	// Grouped by the number of resamples, which depends on the size.
	// Sorted copies of one group of samples at a time.
	byB := map[int][]int{}
	var bs []int
	for i, v := range b.vals {
		n := resamplesFor(len(v))
		if _, ok := byB[n]; !ok {
			bs = append(bs, n)
		}
		byB[n] = append(byB[n], i)
	}
	lo, hi = make([]float64, len(b.vals)), make([]float64, len(b.vals))
	for _, n := range bs {
		idx := byB[n]
		sub := make([][]float64, len(idx))
		for k, i := range idx {
			sub[k] = slices.Sorted(slices.Values(b.vals[i]))
		}
		l, h := stats.BootstrapMeanCIs(sub, n, seed, CILevel)
		for k, i := range idx {
			lo[i], hi[i] = l[k], h[k]
		}
	}
	return lo, hi
}

type key struct{ group, value, metric string }

type acc struct {
	n, errors, nulls int
	sum              float64
	errItems, nOK    int
	sumOK            float64
	flipped          int       // test-suite verdicts: items with 1 on one database, 0 on the suite
	vals             []float64 // counted values, for metrics not declared 0/1
}

// Aggregate accumulates scores. Collect is called from one goroutine; Rows
// may be called after the last Collect.
type Aggregate struct {
	Name    string
	GroupBy []string
	dm      []nodes.NamedDatasetMetric
	binary  map[string]bool
	suite   map[string]string // test-suite verdict column → its one-database column
	seed    uint64

	mu      sync.Mutex
	accs    map[key]*acc
	items   map[[2]string]int
	metrics []string
	folds   map[key]metrics.Accumulator // (group, value, dataset metric) → fold
	keep    []*item.Record              // for dataset metrics that do not fold
	missing map[string]int              // group_by column → items without that field
	fields  map[string]bool             // field names seen on items missing a group_by column, for a suggestion
}

// New builds an aggregate stage.
func New(env *nodes.Env) (nodes.Stage, hcl.Diagnostics) {
	b := env.Block
	a := dsl.DecodeAttrs(b.Body, schema, b.Ctx, b.DeclRange)
	ag := &Aggregate{Name: b.Name, GroupBy: a.Strings("group_by"), accs: map[key]*acc{}, items: map[[2]string]int{}, binary: map[string]bool{}, seed: env.CISeed}
	if b.Input != nil {
		if dm, ok := env.Built[b.Input.Name].(nodes.DatasetMetrics); ok {
			ag.dm = dm.DatasetMetrics()
		}
		if bc, ok := env.Built[b.Input.Name].(nodes.BinaryColumns); ok {
			for _, c := range bc.BinaryColumns() {
				ag.binary[c] = true
			}
		}
		if sc, ok := env.Built[b.Input.Name].(SuiteColumns); ok {
			ag.suite = sc.SuiteColumns()
		}
	}
	return ag, a.Diags
}

// Process does nothing per item: aggregate collects at the end of the chain.
func (ag *Aggregate) Process(context.Context, *item.Record) error { return nil }

func groupValue(rec *item.Record, g string) string {
	switch g {
	case "db":
		return rec.Item.DB
	case "status":
		return rec.Status
	}
	v, ok := rec.Item.Field(g)
	if !ok || v == nil {
		return ""
	}
	return dataset.Text(v)
}

// Collect adds one finished record.
func (ag *Aggregate) Collect(rec *item.Record) {
	ag.mu.Lock()
	defer ag.mu.Unlock()
	groups := [][2]string{{"all", ""}}
	for _, g := range ag.GroupBy {
		if _, ok := rec.Item.Field(g); !ok && g != "db" && g != "status" {
			if ag.missing == nil {
				ag.missing, ag.fields = map[string]int{}, map[string]bool{"db": true, "status": true}
			}
			ag.missing[g]++
			if len(ag.fields) < 1000 {
				for _, f := range rec.Item.Fields {
					ag.fields[f.Name] = true
				}
			}
		}
		groups = append(groups, [2]string{g, groupValue(rec, g)})
	}
	if rec.Status == "cancelled" {
		return
	}
	errored := rec.Status == "error"
	for _, g := range groups {
		ag.items[g]++
		for _, s := range rec.Scores {
			base, isSuite := ag.suite[s.Name]
			if isSuite && s.Null && s.Err == "" {
				continue // no test suite: not computed (a resumed item's NULL)
			}
			k := key{g[0], g[1], s.Name}
			c := ag.accs[k]
			if c == nil {
				c = &acc{}
				ag.accs[k] = c
				if g[0] == "all" {
					ag.metrics = append(ag.metrics, s.Name)
				}
			}
			if errored {
				c.errItems++
				if !s.Official {
					continue
				}
			}
			var v float64
			counted := true
			switch {
			case s.Null && s.Err != "":
				c.errors++
				counted = false
			case s.Err != "":
				c.errors++
			case s.Null:
				c.nulls++
				counted = false
			default:
				v = s.Value
			}
			if counted {
				c.n++
				c.sum += v
				if !ag.binary[s.Name] {
					c.vals = append(c.vals, v)
				}
				if !errored {
					c.nOK++
					c.sumOK += v
				}
				if isSuite && s.Err == "" && v == 0 {
					if b, ok := rec.Score(base); ok && !b.Null && b.Err == "" && b.Value == 1 {
						c.flipped++
					}
				}
			}
		}
		if errored {
			continue // dataset metrics see evaluated items only
		}
		for _, dm := range ag.dm {
			f, ok := dm.Metric.(metrics.Folding)
			if !ok {
				continue
			}
			k := key{g[0], g[1], dm.As}
			a := ag.folds[k]
			if a == nil {
				if ag.folds == nil {
					ag.folds = map[key]metrics.Accumulator{}
				}
				a = f.NewAccumulator()
				ag.folds[k] = a
			}
			a.Add(rec)
		}
	}
	if errored {
		return
	}
	for _, dm := range ag.dm {
		if _, ok := dm.Metric.(metrics.Folding); !ok {
			ag.keep = append(ag.keep, rec)
			break
		}
	}
}

// Rows returns every aggregate in a stable order: overall first, then each
// group_by column's values sorted; metrics in first-seen order.
func (ag *Aggregate) Rows(ctx context.Context) []Row {
	ag.mu.Lock()
	defer ag.mu.Unlock()
	var groups [][2]string
	for g := range ag.items {
		groups = append(groups, g)
	}
	order := map[string]int{"all": -1}
	for i, g := range ag.GroupBy {
		order[g] = i
	}
	sort.Slice(groups, func(i, j int) bool {
		if groups[i][0] != groups[j][0] {
			return order[groups[i][0]] < order[groups[j][0]]
		}
		return groups[i][1] < groups[j][1]
	})
	var out []Row
	var boot bootstraps
	for _, g := range groups {
		for _, m := range ag.metrics {
			c := ag.accs[key{g[0], g[1], m}]
			if c == nil {
				continue
			}
			r := Row{Stage: ag.Name, Group: g[0], Value: g[1], Metric: m, Items: ag.items[g], N: c.n, Sum: c.sum, Errors: c.errors, Nulls: c.nulls,
				ErrItems: c.errItems, NOK: c.nOK}
			r.Mean = mean(c.sum, c.n)
			r.MeanOK = mean(c.sumOK, c.nOK)
			if bootstrapped(ag.binary[m], c.n, c.vals) {
				boot.add(len(out), c.vals)
			} else {
				r.CILow, r.CIHigh, r.CIMethod = CI(ag.binary[m], c.sum, c.n, c.vals, ag.seed)
			}
			if base, ok := ag.suite[m]; ok {
				r.SuiteOf, r.Flipped = base, c.flipped
			}
			out = append(out, r)
		}
		if len(ag.dm) > 0 {
			var recs []*item.Record
			for _, rec := range ag.keep {
				if g[0] == "all" || groupValue(rec, g[0]) == g[1] {
					recs = append(recs, rec)
				}
			}
			for _, dm := range ag.dm {
				var scores []item.Score
				if _, ok := dm.Metric.(metrics.Folding); ok {
					a := ag.folds[key{g[0], g[1], dm.As}]
					if a == nil {
						a = dm.Metric.(metrics.Folding).NewAccumulator()
					}
					scores = a.Scores()
				} else {
					scores = dm.Metric.Aggregate(ctx, recs)
				}
				for _, s := range scores {
					name := s.Name
					if dm.As != dm.Metric.Info().Name && !strings.HasPrefix(name, dm.As) {
						name = dm.As + "_" + name
					}
					r := Row{Stage: ag.Name, Group: g[0], Value: g[1], Metric: name, Items: ag.items[g], N: 1, Mean: s.Value, Sum: s.Value, MeanOK: s.Value, NOK: 1,
						CILow: math.NaN(), CIHigh: math.NaN()}
					if s.Err != "" {
						r.Errors = 1
					}
					if s.Null {
						r.N, r.Nulls, r.Mean, r.Sum, r.MeanOK, r.NOK = 0, 1, math.NaN(), 0, math.NaN(), 0
					}
					out = append(out, r)
				}
			}
		}
	}
	lo, hi := boot.cis(ag.seed)
	for k, i := range boot.rows {
		out[i].CILow, out[i].CIHigh, out[i].CIMethod = lo[k], hi[k], "bootstrap"
	}
	return out
}

// Describe shows the grouping, for `evalflow plan`.
func (ag *Aggregate) Describe() []string {
	if len(ag.GroupBy) == 0 {
		return []string{"group_by: (overall only)"}
	}
	return []string{fmt.Sprintf("group_by: %s", strings.Join(ag.GroupBy, ", "))}
}

// Warnings names group_by columns that some items do not have (a typo in
// group_by puts every item in one empty group).
func (ag *Aggregate) Warnings() []string {
	ag.mu.Lock()
	defer ag.mu.Unlock()
	var out []string
	for _, g := range ag.GroupBy {
		if n := ag.missing[g]; n > 0 {
			names := make([]string, 0, len(ag.fields))
			for f := range ag.fields {
				names = append(names, f)
			}
			hint := ""
			if s := dsl.Suggest(g, names); s != "" {
				hint = fmt.Sprintf(" Did you mean %q?", s)
			}
			out = append(out, fmt.Sprintf("stage.%s: group_by column %q is not a field of %d item(s); they are grouped under \"\".%s", ag.Name, g, n, hint))
		}
	}
	return out
}

// Package score is the score stage: it runs the pipeline's metrics on each
// item, in the order they are declared (so pass_at_k can read the verdicts
// ex wrote), and collects dataset-level metrics for aggregate.
//
//	stage "score" {
//	  input   = stage.refine
//	  metrics = ["ex", "pass_at_1"]      # shorthand: default options
//	  metric "ex" {                      # or one block per metric with options
//	    as      = "ex_testsuite"         # column name; default: the metric name
//	    compare = "testsuite"
//	  }
//	}
//
// A metric that fails or panics on an item yields 0 with its error recorded
// for that metric only; the others still run (metric-calculators, “Error
// Reporting” requirement).
//
// A metric with a test-suite verdict (metrics.SuiteScorer: ex under the
// testsuite profiles, on an engine with database files) writes a second
// column, <as>_suite, for the items whose folder holds a test suite.
package score

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/hcl/v2"

	"github.com/evalflow/evalflow/dsl"
	"github.com/evalflow/evalflow/item"
	"github.com/evalflow/evalflow/llm"
	"github.com/evalflow/evalflow/metrics"
	"github.com/evalflow/evalflow/nodes"
	"github.com/evalflow/evalflow/table"
)

func init() {
	nodes.Register(nodes.Kind{Name: "score", DefaultConcurrency: 4, Inputs: []string{"execute", "refine"}, Factory: New})
}

var schema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{{Name: "metrics"}, {Name: "engine"}},
	Blocks:     []hcl.BlockHeaderSchema{{Type: "metric", LabelNames: []string{"name"}}},
}

type itemMetric struct {
	as     string
	metric metrics.ItemMetric
	// official: the metric follows an official scorer's profile, so an
	// errored item still counts with its value (item.Score.Official).
	official bool
	// suite: the metric gives a verdict over the item's test suite too
	// (metrics.SuiteScorer), written in the column as+metrics.SuiteSuffix.
	suite bool
}

// suiteCol is the column of m's test-suite verdict ("" when it has none).
func (m itemMetric) suiteCol() string {
	if !m.suite {
		return ""
	}
	return m.as + metrics.SuiteSuffix
}

// officialProfile reports whether a metric's options select an official
// scorer's comparison (testsuite, bird, buildingqa, text2sparql, …) rather
// than evalflow's own. bird_soft_f1, bird_ves and bird_r_ves have no
// compare option: they are BIRD's scorers.
func officialProfile(name string, opts metrics.Options) bool {
	switch name {
	case "bird_soft_f1", "bird_ves", "bird_r_ves", "spider_esm", "spider_esm_2018", "spider_hardness":
		return true
	}
	for _, k := range []string{"compare", "profile"} {
		if v, ok := opts[k].(string); ok && v != "" && v != "evalflow" {
			return true
		}
	}
	return false
}

// Score runs item metrics; safe for concurrent use on different records.
type Score struct {
	items   []itemMetric
	dataset []nodes.NamedDatasetMetric
	engine  *nodes.Engine
}

// New builds a score stage.
func New(env *nodes.Env) (nodes.Stage, hcl.Diagnostics) {
	b := env.Block
	a := dsl.DecodeAttrs(b.Body, schema, b.Ctx, b.DeclRange)
	reg := env.Metrics
	if reg == nil {
		reg = metrics.Default
	}
	s := &Score{}
	// The engine first: a metric's test-suite verdict needs one with the
	// folder notion (nodes.Engine.Suites).
	engName, d := nodes.RefAttr(a, "engine", "engine")
	a.Diags = append(a.Diags, d...)
	if engName == "" {
		if up := env.Upstream("execute"); up != "" {
			if x, ok := env.Built[up].(interface{ EngineOf() *nodes.Engine }); ok {
				s.engine = x.EngineOf()
			}
		}
	} else {
		s.engine = env.Engines[engName]
	}
	seen := map[string]hcl.Range{}
	// optionDiag is the diagnostic for a metric that refused its options:
	// a value outside a fixed set is reported at that value (or the -var
	// that gave it) with "did you mean" and the valid values.
	optionDiag := func(name string, err error, attrs hcl.Attributes, rng hcl.Range) *hcl.Diagnostic {
		var ce *metrics.ChoiceError
		if errors.As(err, &ce) {
			var expr hcl.Expression
			if at, ok := attrs[ce.Option]; ok {
				expr = at.Expr
			}
			d := dsl.InvalidChoice(env.Pipeline.Variables, expr, rng, "Invalid metric options",
				ce.What+" (metric "+strconv.Quote(name)+", option "+strconv.Quote(ce.Option)+")", ce.Value, ce.Valid)
			return d
		}
		return &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Invalid metric options",
			Detail: fmt.Sprintf("metric %q: %v.", name, err), Subject: rng.Ptr()}
	}
	add := func(name, as string, opts metrics.Options, rng hcl.Range, attrs hcl.Attributes) {
		def, ok := reg.Lookup(name)
		if !ok {
			a.Diags = append(a.Diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Unknown metric",
				Detail:  fmt.Sprintf("There is no metric named %q.%s Run `evalflow metrics` for the list.", name, suggest(name, reg.Names())),
				Subject: rng.Ptr()})
			return
		}
		if prev, dup := seen[as]; dup {
			a.Diags = append(a.Diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Duplicate metric column",
				Detail:  fmt.Sprintf("Column %q is already produced by the metric at %s; give this one another name with as = \"...\".", as, prev),
				Subject: rng.Ptr()})
			return
		}
		seen[as] = rng
		if env.LLM != nil {
			opts[metrics.PoolOption] = env.LLM
		}
		if def.NewItem != nil {
			m, err := def.NewItem(opts)
			if err != nil {
				a.Diags = append(a.Diags, optionDiag(name, err, attrs, rng))
				return
			}
			im := itemMetric{as: as, metric: m, official: officialProfile(name, opts)}
			if ss, ok := m.(metrics.SuiteScorer); ok && ss.SuiteVerdict() && s.engine != nil && s.engine.Suites() {
				im.suite = true
				if prev, dup := seen[im.suiteCol()]; dup {
					a.Diags = append(a.Diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Duplicate metric column",
						Detail: fmt.Sprintf("Column %q, this metric's verdict over the item's test suite, is already produced by the metric at %s; give one of them another name with as = \"...\".",
							im.suiteCol(), prev),
						Subject: rng.Ptr()})
					return
				}
				seen[im.suiteCol()] = rng
			}
			s.items = append(s.items, im)
			return
		}
		m, err := def.NewDataset(opts)
		if err != nil {
			a.Diags = append(a.Diags, optionDiag(name, err, attrs, rng))
			return
		}
		s.dataset = append(s.dataset, nodes.NamedDatasetMetric{As: as, Metric: m})
	}
	if e := a.Expr("metrics"); e != nil {
		for _, n := range a.Strings("metrics") {
			add(n, n, metrics.Options{}, e.Range(), nil)
		}
	}
	for _, blk := range a.Content.Blocks {
		name := blk.Labels[0]
		attrs, d := blk.Body.JustAttributes()
		a.Diags = append(a.Diags, d...)
		opts := metrics.Options{}
		as := name
		def, known := reg.Lookup(name)
		names := make([]string, 0, len(attrs))
		for k := range attrs {
			names = append(names, k)
		}
		sort.Strings(names)
		for _, k := range names {
			at := attrs[k]
			v, d := at.Expr.Value(b.Ctx)
			a.Diags = append(a.Diags, d...)
			if d.HasErrors() {
				continue
			}
			if k == "as" {
				if gv, ok := dsl.GoValue(v).(string); ok && gv != "" {
					as = gv
				}
				continue
			}
			if known && def.Options != nil && !contains(def.Options, k) {
				a.Diags = append(a.Diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Unknown metric option",
					Detail:  fmt.Sprintf("metric %q has no option %q.%s Options: %s.", name, k, suggest(k, def.Options), strings.Join(def.Options, ", ")),
					Subject: at.NameRange.Ptr()})
				continue
			}
			opts[k] = dsl.GoValue(v)
		}
		add(name, as, opts, blk.LabelRanges[0], attrs)
	}
	// A column named like another's test-suite verdict (<as>_suite beside
	// <as>) would be read as one (rundir.SuiteColumns): refused.
	cols := map[string]bool{}
	for _, m := range s.items {
		cols[m.as] = true
	}
	for _, m := range s.items {
		if base, ok := strings.CutSuffix(m.as, metrics.SuiteSuffix); ok && cols[base] {
			a.Diags = append(a.Diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Reserved metric column",
				Detail: fmt.Sprintf("Column %q is the name of the test-suite verdict of column %q (docs/suites.md, \"In runs\"); give this metric another name with as = \"...\".",
					m.as, base),
				Subject: seen[m.as].Ptr()})
		}
	}
	if len(s.items)+len(s.dataset) == 0 && !a.Diags.HasErrors() {
		a.Diags = append(a.Diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "No metrics",
			Detail: "A score stage needs metrics = [\"ex\", ...] or metric blocks.", Subject: b.DeclRange.Ptr()})
	}
	return s, a.Diags
}

func contains(xs []string, s string) bool {
	for _, x := range xs {
		if x == s {
			return true
		}
	}
	return false
}

func suggest(s string, c []string) string {
	if x := dsl.Suggest(s, c); x != "" {
		return fmt.Sprintf(" Did you mean %q?", x)
	}
	return ""
}

// Process runs every item metric on rec, in declaration order. A query a
// profile re-executes (a rewritten gold or prediction) that times out or
// cannot reach its engine makes the item an error: under load that would
// otherwise turn into a silent, run-to-run different score.
func (s *Score) Process(ctx context.Context, rec *item.Record) error {
	in := metrics.Input{Record: rec, Keys: &metrics.ResultKeys{}}
	var harness []error
	var mu sync.Mutex
	var timed metrics.TimedExec
	if s.engine != nil {
		eng := s.engine
		in.Exec = func(ctx context.Context, q string) (*table.Table, error) {
			o := eng.Run(ctx, &rec.Item, q)
			res, class, err := o.Result, o.Class, o.Err
			if err != nil && (class == item.ClassTimeout || errors.Is(err, nodes.ErrHarness)) {
				mu.Lock()
				harness = append(harness, fmt.Errorf("score: re-executing a rewritten query for item %q: %s: %v", rec.Item.ID, class, err))
				mu.Unlock()
			}
			return res, err
		}
		// The test-suite profiles also run the pair on the item's other
		// test databases (Engine.TestDBs): listed once per item, each run
		// through the same engine and stage cache as in.Exec, its
		// timeouts and harness failures making the item an error too.
		var (
			suiteOnce sync.Once
			suite     metrics.TestSuite
			suiteErr  error
		)
		suiteOf := func(context.Context) (metrics.TestSuite, error) {
			suiteOnce.Do(func() {
				paths, _, err := eng.TestDBs(&rec.Item)
				if err != nil {
					suiteErr = err
					return
				}
				if len(paths) == 0 {
					return
				}
				own, err := eng.Locate(&rec.Item)
				if err != nil {
					suiteErr = err
					return
				}
				suite.Own = filepath.Base(own)
				suite.Others = make([]metrics.TestDB, len(paths))
				for i, p := range paths {
					name := filepath.Base(p)
					suite.Others[i] = metrics.TestDB{Name: name, Exec: func(ctx context.Context, q string) (*table.Table, error) {
						o := eng.RunAt(ctx, &rec.Item, p, q)
						if o.Err != nil && (o.Class == item.ClassTimeout || errors.Is(o.Err, nodes.ErrHarness)) {
							mu.Lock()
							harness = append(harness, fmt.Errorf("score: running a query on test database %s for item %q: %s: %v", name, rec.Item.ID, o.Class, o.Err))
							mu.Unlock()
						}
						return o.Result, o.Err
					}}
				}
			})
			return suite, suiteErr
		}
		if eng.Suites() {
			in.Suite = suiteOf
		}
		in.Harness = func(err error) {
			mu.Lock()
			harness = append(harness, fmt.Errorf("score: item %q: %w", rec.Item.ID, err))
			mu.Unlock()
		}
		// Metrics that time executions (metrics.TimedScorer: bird_ves) get
		// the engine without its stage cache: every call executes, and
		// Took is the execution's own time.
		fresh := *eng
		fresh.Results = nil
		timed = func(ctx context.Context, q string) (*table.Table, time.Duration, error) {
			o := fresh.Run(ctx, &rec.Item, q)
			if o.Err != nil && (o.Class == item.ClassTimeout || errors.Is(o.Err, nodes.ErrHarness)) {
				mu.Lock()
				harness = append(harness, fmt.Errorf("score: timing a query for item %q: %s: %v", rec.Item.ID, o.Class, o.Err))
				mu.Unlock()
			}
			return o.Result, o.Took, o.Err
		}
	}
	defer func() {
		for i := range rec.Scores {
			for _, m := range s.items {
				if n := rec.Scores[i].Name; n == m.as || n == m.suiteCol() {
					rec.Scores[i].Official = m.official
				}
			}
		}
	}()
	// Metrics that wait on a model (metrics.LLMJudgeAsync) start first and
	// run while the deterministic ones do (metric-calculators, “Performance
	// Requirements”). A metric
	// still sees every metric declared before it: before it runs, the
	// judges declared earlier are joined and their scores set. All joined
	// before Process returns.
	async := make([]chan item.Score, len(s.items))
	for i, m := range s.items {
		if a, ok := m.metric.(metrics.LLMJudgeAsync); ok && a.Async() {
			ch := make(chan item.Score, 1)
			async[i] = ch
			go func() { ch <- run(ctx, m, in, timed) }()
		}
	}
	joined := 0
	join := func(upto int) {
		for ; joined < upto; joined++ {
			if ch := async[joined]; ch != nil {
				sc := <-ch
				sc.Name = s.items[joined].as
				rec.SetScore(sc)
			}
		}
	}
	for i, m := range s.items {
		if async[i] != nil {
			continue
		}
		join(i)
		if m.suite {
			// A metric with a test-suite verdict: its own score and, for
			// an item with a suite, the suite verdict (none otherwise: the
			// column stays NULL).
			sc, suite := runSuite(ctx, m, in)
			sc.Name = m.as
			rec.SetScore(sc)
			if suite != nil {
				suite.Name = m.suiteCol()
				rec.SetScore(*suite)
			}
			continue
		}
		sc := run(ctx, m, in, timed)
		sc.Name = m.as
		rec.SetScore(sc)
	}
	join(len(s.items))
	// An interrupted run (Ctrl-C, or max_cost stopping it) cancels the
	// judges in flight: the item is cancelled, not scored with a failed
	// judge, so the next run of the same command scores it again.
	if err := ctx.Err(); err != nil {
		return err
	}
	// A judge that hit the run's max_cost stops the run, as generation does.
	for _, sc := range rec.Scores {
		if sc.Err != "" && strings.Contains(sc.Err, llm.ErrBudget.Error()) {
			return &nodes.StopRun{Reason: "max_cost reached by an LLM judge (" + sc.Name + ")"}
		}
	}
	mu.Lock()
	defer mu.Unlock()
	return errors.Join(harness...)
}

func run(ctx context.Context, m itemMetric, in metrics.Input, timed metrics.TimedExec) (sc item.Score) {
	defer func() {
		if p := recover(); p != nil {
			sc = metrics.Failed(m.as, fmt.Errorf("panic in metric %s on item %q: %v", m.as, in.Record.Item.ID, p))
		}
	}()
	if t, ok := m.metric.(metrics.TimedScorer); ok && timed != nil {
		return t.ScoreTimed(ctx, in, timed)
	}
	return m.metric.Score(ctx, in)
}

// runSuite runs a metric with a test-suite verdict (metrics.SuiteScorer); a
// panic fails its own score and leaves the suite verdict out.
func runSuite(ctx context.Context, m itemMetric, in metrics.Input) (sc item.Score, suite *item.Score) {
	defer func() {
		if p := recover(); p != nil {
			sc = metrics.Failed(m.as, fmt.Errorf("panic in metric %s on item %q: %v", m.as, in.Record.Item.ID, p))
			suite = nil
		}
	}()
	return m.metric.(metrics.SuiteScorer).ScoreSuite(ctx, in)
}

// MetricColumns lists the item metric columns this stage writes: each
// metric's, followed by its test-suite verdict's when it gives one.
func (s *Score) MetricColumns() []string {
	out := make([]string, 0, len(s.items))
	for _, m := range s.items {
		out = append(out, m.as)
		if m.suite {
			out = append(out, m.suiteCol())
		}
	}
	return out
}

// SuiteColumns maps the column of each test-suite verdict this stage
// writes (ex_suite) to the column of the one-database verdict it refines
// (ex), for aggregate: the suite column is written only for items with a
// test suite.
func (s *Score) SuiteColumns() map[string]string {
	var out map[string]string
	for _, m := range s.items {
		if m.suite {
			if out == nil {
				out = map[string]string{}
			}
			out[m.suiteCol()] = m.as
		}
	}
	return out
}

// MaxCalls: one request per LLM judge, and a profile's rewritten gold and
// prediction per sample when the stage has an engine, plus the executions
// of the metrics that time queries (metrics.TimedScorer, never cached).
// The test-suite profiles' runs on an item's other test databases
// (metrics.Input.Suite) are not in the bound: their number depends on the
// files in the item's folder.
func (s *Score) MaxCalls(samples int) (int, int) {
	judges := 0
	for _, m := range s.items {
		if a, ok := m.metric.(metrics.LLMJudgeAsync); ok && a.Async() {
			judges++
		}
	}
	eng := 0
	if s.engine != nil {
		eng = 2 * samples
		for _, m := range s.items {
			if t, ok := m.metric.(metrics.TimedScorer); ok {
				eng += t.TimedCalls()
			}
		}
	}
	return judges, eng
}

// CallModels are the judges' models, one per judge metric.
func (s *Score) CallModels() []string {
	var out []string
	for _, p := range s.Provenances() {
		out = append(out, p.Provider+" "+p.RequestedModel)
	}
	return out
}

// Provenances lists the LLM judges' models (llm.Provenance), for the
// manifest's models.
func (s *Score) Provenances() []llm.Provenance {
	var out []llm.Provenance
	for _, m := range s.items {
		if p, ok := m.metric.(interface{ Provenance() llm.Provenance }); ok {
			out = append(out, p.Provenance())
		}
	}
	return out
}

// BinaryColumns lists the columns of metrics declared 0/1.
func (s *Score) BinaryColumns() []string {
	var out []string
	for _, m := range s.items {
		if m.metric.Info().Binary() {
			out = append(out, m.as)
			if m.suite {
				out = append(out, m.suiteCol())
			}
		}
	}
	return out
}

// DatasetMetrics returns the dataset metrics aggregate computes.
func (s *Score) DatasetMetrics() []nodes.NamedDatasetMetric { return s.dataset }

// Describe lists the metrics, for `evalflow plan`.
func (s *Score) Describe() []string {
	var out []string
	for _, m := range s.items {
		out = append(out, "metric: "+m.as+" ("+m.metric.Info().Name+")")
		if m.suite {
			out = append(out, "metric: "+m.suiteCol()+" ("+m.metric.Info().Name+" over each item's test suite)")
		}
	}
	for _, m := range s.dataset {
		out = append(out, "dataset metric: "+m.As+" ("+m.Metric.Info().Name+")")
	}
	return out
}

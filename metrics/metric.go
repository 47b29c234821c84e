// Package metrics is evalflow's metric library: every metric of the five
// reference documents (../shared/spec/seeds) and the execution-match profiles
// that reproduce the field's official scorers. It is pure Go: engines and
// LLMs feed it results, it never opens a database or calls a model itself.
// Where a metric needs a query re-run (test-suite's DISTINCT stripping), the
// score stage passes an Exec function bound to the pipeline's engine.
//
// Metrics are registered by name in init() against Default; a pipeline's
// score stage lists them by that name. Tests may build their own Registry.
package metrics

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/evalflow/evalflow/item"
	"github.com/evalflow/evalflow/table"
)

// Info describes a metric for `evalflow metrics` and docs/metrics.md.
type Info struct {
	Name        string
	Description string // what it measures, one sentence
	Reference   string // seed document / paper / official scorer it follows
	Inputs      string // what it reads from the record
	Range       string // e.g. "[0,1]", "{0,1}"
}

// Binary reports whether a metric is declared 0/1 (its Range starts with
// "{0,1}"): its confidence intervals are Wilson intervals and paired
// comparisons use McNemar's test. The declaration decides, not the values
// a run happened to observe.
func (i Info) Binary() bool { return strings.HasPrefix(i.Range, "{0,1}") }

// Exec runs a query on the item's engine (bound to the item's database) and
// returns its typed result. It is nil when the pipeline has no engine.
type Exec func(ctx context.Context, query string) (*table.Table, error)

// Input is what an item metric reads. The metric may write per-attempt
// verdicts (Attempt.Match) on Record; it must not touch other fields.
type Input struct {
	Record *item.Record
	Exec   Exec
	// Suite, when set, lists the item's test suite: its own database's
	// file name and the other files beside it that test-suite's rule takes
	// as test databases (every file of its directory whose name contains
	// ".sqlite"; ".duckdb" on DuckDB), sorted by name. Each comes with an
	// Exec bound to it through the same engine, read-only, with the same
	// timeout and row cap. Suite is nil when there is no engine or the
	// engine has no folder notion (server engines); a folder holding one
	// database gives no others. Only the suite verdict of ex
	// (SuiteScorer) reads it.
	Suite func(ctx context.Context) (TestSuite, error)
	// Keys, when set, is shared by the metrics scoring one record: a
	// result they compare (ex and bird_soft_f1 compare the same gold and
	// prediction) has its cell keys built once. Nil: each comparison
	// keys its results.
	Keys *ResultKeys
	// Harness, when set, receives failures of the harness a metric finds
	// (a test database the gold query fails on, a suite that cannot be
	// listed): the score stage makes the item an error. Metrics still
	// return Failed for their own score.
	Harness func(err error)
}

// TestSuite is an item's test databases (Input.Suite).
type TestSuite struct {
	// Own is the base name of the item's own database file.
	Own string
	// Others are the other test databases, sorted by name; empty when the
	// item's folder holds its database alone.
	Others []TestDB
}

// TestDB is one test database of an item's suite (Input.Suite).
type TestDB struct {
	// Name is the file's base name, for notes and messages.
	Name string
	// Exec runs a query on this database.
	Exec Exec
}

// harness reports err through in.Harness when it is set.
func (in Input) harness(err error) {
	if in.Harness != nil {
		in.Harness(err)
	}
}

// ItemMetric scores one item. Score must be safe for concurrent use on
// different records. A metric that fails returns a Score with Err set and
// Value 0; it never panics on bad input (the score stage also recovers).
type ItemMetric interface {
	Info() Info
	Score(ctx context.Context, in Input) item.Score
}

// SuiteSuffix ends the column of a metric's test-suite verdict: ex_suite
// beside ex (SuiteScorer).
const SuiteSuffix = "_suite"

// SuiteScorer is implemented by item metrics that give, beside their
// verdict on the item's own database (Score), a verdict over the item's
// whole test suite (Input.Suite): ex under the test-suite profiles, whose
// suite verdict is test-suite-sql-eval's eval_exec_match. The score stage
// writes it in the column named after the metric's and SuiteSuffix.
type SuiteScorer interface {
	ItemMetric
	// SuiteVerdict reports whether the metric, with its options, gives a
	// suite verdict.
	SuiteVerdict() bool
	// ScoreSuite returns what Score returns and the suite verdict, whose
	// Separation names the first database that separated the pair. suite
	// is nil when the item has no test database besides its own: nothing
	// was computed, and no number is written for it.
	ScoreSuite(ctx context.Context, in Input) (own item.Score, suite *item.Score)
}

// DatasetMetric computes values over all records of a run (or of one
// group_by group): calibration, safety confusion matrices, averages with a
// special denominator. Results are named values, e.g. "safety_recall".
type DatasetMetric interface {
	Info() Info
	Aggregate(ctx context.Context, records []*item.Record) []item.Score
}

// Accumulator folds a dataset metric over records one at a time.
type Accumulator interface {
	Add(rec *item.Record)
	Scores() []item.Score
}

// Folding is implemented by dataset metrics whose value is a fold over
// per-record contributions (counts): the aggregate stage keeps one
// accumulator per group instead of every record, so its memory does not
// grow with the run.
type Folding interface {
	NewAccumulator() Accumulator
}

func foldAll(a Accumulator, records []*item.Record) []item.Score {
	for _, r := range records {
		if r != nil {
			a.Add(r)
		}
	}
	return a.Scores()
}

// Options are a metric block's attributes, decoded from HCL into Go values:
// string, float64, bool, []any, map[string]any.
type Options map[string]any

// String returns option k as a string, or def when absent.
func (o Options) String(k, def string) (string, error) {
	v, ok := o[k]
	if !ok {
		return def, nil
	}
	s, ok := v.(string)
	if !ok {
		return "", fmt.Errorf("option %q must be a string, got %s", k, kindOf(v))
	}
	return s, nil
}

// Float returns option k as a float64, or def when absent.
func (o Options) Float(k string, def float64) (float64, error) {
	v, ok := o[k]
	if !ok {
		return def, nil
	}
	f, ok := v.(float64)
	if !ok {
		return 0, fmt.Errorf("option %q must be a number, got %s", k, kindOf(v))
	}
	return f, nil
}

// Int returns option k as an int, or def when absent.
func (o Options) Int(k string, def int) (int, error) {
	f, err := o.Float(k, float64(def))
	if err != nil {
		return 0, err
	}
	if f != float64(int(f)) {
		return 0, fmt.Errorf("option %q must be a whole number, got %v", k, f)
	}
	return int(f), nil
}

// Bool returns option k as a bool, or def when absent.
func (o Options) Bool(k string, def bool) (bool, error) {
	v, ok := o[k]
	if !ok {
		return def, nil
	}
	b, ok := v.(bool)
	if !ok {
		return false, fmt.Errorf("option %q must be a bool, got %s", k, kindOf(v))
	}
	return b, nil
}

// Def registers a metric: exactly one of NewItem and NewDataset is set.
// Options lists the option names the metric accepts, so unknown ones get a
// "did you mean" diagnostic from the DSL.
type Def struct {
	Info       Info
	Options    []string
	NewItem    func(Options) (ItemMetric, error)
	NewDataset func(Options) (DatasetMetric, error)
}

// Registry maps metric names to definitions. The zero value is empty and
// ready to use; it is safe for concurrent use.
type Registry struct {
	mu   sync.RWMutex
	defs map[string]Def
}

// Default is the registry built-in metrics register into.
var Default = &Registry{}

// Register adds d; it panics on a duplicate name, which is a programming
// error caught by any test that imports the package.
func (r *Registry) Register(d Def) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.defs == nil {
		r.defs = map[string]Def{}
	}
	if _, dup := r.defs[d.Info.Name]; dup {
		panic("metrics: duplicate metric " + d.Info.Name)
	}
	if (d.NewItem == nil) == (d.NewDataset == nil) {
		panic("metrics: " + d.Info.Name + " must set exactly one of NewItem, NewDataset")
	}
	r.defs[d.Info.Name] = d
}

// Lookup returns the named definition.
func (r *Registry) Lookup(name string) (Def, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	d, ok := r.defs[name]
	return d, ok
}

// Names returns every registered name, sorted.
func (r *Registry) Names() []string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	out := make([]string, 0, len(r.defs))
	for n := range r.defs {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// Register adds d to Default.
func Register(d Def) { Default.Register(d) }

// Failed builds the score of a metric that could not be computed (metric-calculators, “Error Reporting”):
// value 0 with the error text kept.
func Failed(name string, err error) item.Score {
	return item.Score{Name: name, Value: 0, Err: strings.TrimSpace(err.Error())}
}

// kindOf names an option value's type the way HCL users know it.
func kindOf(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "a string"
	case float64:
		return "a number"
	case bool:
		return "a bool"
	case []any:
		return "a list"
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("%T", v)
}

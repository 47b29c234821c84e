// Package nodes defines what a pipeline stage is and the registry of stage
// kinds. Each kind lives in its own sub-package (nodes/generate,
// nodes/validate, nodes/execute, nodes/refine, nodes/score,
// nodes/aggregate) and registers itself in init(); nodes/all imports them
// all.
package nodes

import (
	"context"
	"fmt"
	"sort"
	"sync"

	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"

	"github.com/evalflow/evalflow/dsl"
	"github.com/evalflow/evalflow/item"
	"github.com/evalflow/evalflow/llm"
	"github.com/evalflow/evalflow/metrics"
)

// Stage processes one record. Process is called concurrently for different
// records, at most the stage's concurrency at a time; a record is only ever
// held by one stage. Process must return promptly once ctx is done. An
// error is recorded on the record (status "error") and the run goes on.
type Stage interface {
	Process(ctx context.Context, rec *item.Record) error
}

// StopRun is returned (possibly wrapped) by a stage's Process when the whole
// run must stop, not just this item: a max_cost guard was crossed. The
// planner records the error on the item, cancels the run with it as the
// cause, and lets in-flight items drain as cancelled; everything finished
// so far is kept.
type StopRun struct{ Reason string }

func (e *StopRun) Error() string { return "run stopped: " + e.Reason }

// Collector is implemented by stages that see every record at the end of the
// run instead of transforming it (aggregate). The planner calls Collect from
// one goroutine, in dataset order.
type Collector interface {
	Collect(rec *item.Record)
}

// Reviser is implemented by generate stages that can supply another attempt
// for a sample whose last attempt failed (replay's next attempt, an LLM's
// repair). ok is false when there is none.
type Reviser interface {
	Revise(ctx context.Context, rec *item.Record, s *item.Sample) (query, raw string, ok bool, err error)
}

// DatasetMetrics is implemented by score stages that declared dataset-level
// metrics; aggregate calls them over the collected records.
type DatasetMetrics interface {
	DatasetMetrics() []NamedDatasetMetric
}

// NamedDatasetMetric is a configured dataset metric and the column prefix it
// reports under.
type NamedDatasetMetric struct {
	As     string
	Metric metrics.DatasetMetric
}

// Columns is implemented by stages that add metric columns to items.parquet;
// the names are known at plan time.
type Columns interface {
	MetricColumns() []string
}

// BinaryColumns is implemented by stages whose metric columns include
// metrics declared 0/1 (metrics.Info.Binary): aggregate gives them Wilson
// intervals.
type BinaryColumns interface {
	BinaryColumns() []string
}

// Bounded is implemented by stages that call models or engines: the most
// calls the stage makes for one item with the given number of samples.
// `evalflow plan` sums them into upper bounds for what is not cached
// (repairs and judges depend on outcomes).
type Bounded interface {
	MaxCalls(samples int) (llm, engine int)
}

// CallModels is implemented by stages that call models: the model of each
// of their calls per item, as "provider model" (a judge per judge metric),
// so evalflow plan prices the calls it cannot see.
type CallModels interface {
	CallModels() []string
}

// Sampler is implemented by generate stages: how many samples an item gets
// (pass@k draws several).
type Sampler interface {
	SampleCount() int
}

// Warner is implemented by stages that noticed something about the run as
// a whole that is not an error of one item (predictions that match no
// item, a group_by column no item has). The CLI prints the warnings and
// records them in the manifest after the run.
type Warner interface {
	Warnings() []string
}

// Claimer is implemented by source stages whose Warnings depend on the
// items they served (replay: predictions that match no item). In a
// distributed run the items are served by worker processes; the
// coordinator's copy of the stage is told each item it would have served,
// so its warnings are a local run's.
type Claimer interface {
	Claim(itemID string)
}

// Describer is implemented by stages that have more to say in `evalflow
// plan` than their kind and concurrency (refine's sub-chain, score's
// metrics). Lines are indented under the stage.
type Describer interface {
	Describe() []string
}

// Env is what a stage factory gets: the decoded block, the pipeline, the
// engines, and the stages it depends on, already built.
type Env struct {
	Pipeline *dsl.Pipeline
	Block    *dsl.Stage
	Engines  map[string]*Engine
	// Built holds every stage built so far (all of this stage's
	// dependencies), by name.
	Built map[string]Stage
	// Blocks are all stage blocks by name, for walking the chain.
	Blocks  map[string]*dsl.Stage
	Metrics *metrics.Registry
	// LLM holds the run's model clients (one per endpoint), shared by every
	// stage and judge that names the same model block.
	LLM *llm.Pool
	// CISeed seeds the bootstrap confidence intervals of aggregates.
	CISeed uint64
}

// Upstream walks the input chain from this stage and returns the nearest
// stage of the given kind, or "" when there is none.
func (e *Env) Upstream(kind string) string {
	seen := map[string]bool{}
	for b := e.Block; b != nil && b.Input != nil && !seen[b.Name]; {
		seen[b.Name] = true
		up := e.Blocks[b.Input.Name]
		if up == nil {
			return ""
		}
		if up.Kind == kind {
			return up.Name
		}
		b = up
	}
	return ""
}

// Factory builds a stage from its block.
type Factory func(env *Env) (Stage, hcl.Diagnostics)

// Kind registers a stage kind: its factory and default concurrency.
type Kind struct {
	Name               string
	DefaultConcurrency int
	// Inputs are the kinds this kind may take its input from; empty means it
	// takes none: it is a source, reading a dataset (generate). A pipeline
	// with several sources runs each as a branch.
	Inputs []string
	// Collects marks a kind whose stage sees finished records rather than
	// processing them in the chain (aggregate): -concurrency leaves it as
	// declared, and it queries no engine.
	Collects bool
	Factory  Factory
}

// Source reports whether the kind takes no input (it reads a dataset).
func (k Kind) Source() bool { return len(k.Inputs) == 0 }

// Registry maps kind names to Kinds. The zero value is empty and usable.
type Registry struct {
	mu    sync.RWMutex
	kinds map[string]Kind
}

// Default is the registry stage kinds register into.
var Default = &Registry{}

// Register adds k; a duplicate is a programming error and panics.
func (r *Registry) Register(k Kind) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.kinds == nil {
		r.kinds = map[string]Kind{}
	}
	if _, dup := r.kinds[k.Name]; dup {
		panic("nodes: duplicate stage kind " + k.Name)
	}
	r.kinds[k.Name] = k
}

// Lookup returns the named kind.
func (r *Registry) Lookup(name string) (Kind, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	k, ok := r.kinds[name]
	return k, ok
}

// Names returns the registered kinds, sorted.
func (r *Registry) Names() []string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	var out []string
	for n := range r.kinds {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// Register adds k to Default.
func Register(k Kind) { Default.Register(k) }

// RefAttr reads an optional bare reference attribute (engine = engine.main)
// from a stage body's decoded attributes.
func RefAttr(a *dsl.Attrs, attr, block string) (string, hcl.Diagnostics) {
	e := a.Expr(attr)
	if e == nil {
		return "", nil
	}
	tr, d := hcl.AbsTraversalForExpr(e)
	if d.HasErrors() {
		// Not a plain reference: a conditional choosing one (or null)
		// evaluates to the block's placeholder object {name, block}.
		if v, vd := e.Value(a.Ctx); !vd.HasErrors() && v.IsKnown() {
			if v.IsNull() {
				return "", nil
			}
			if v.Type().IsObjectType() && v.Type().HasAttribute("block") && v.Type().HasAttribute("name") {
				if b := v.GetAttr("block"); b.Type() == cty.String && b.AsString() == block {
					return v.GetAttr("name").AsString(), nil
				}
			}
		}
	}
	if d.HasErrors() || len(tr) != 2 || tr.RootName() != block {
		return "", hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "Invalid reference",
			Detail: fmt.Sprintf("%q must be a reference like %s.NAME.", attr, block), Subject: e.Range().Ptr()}}
	}
	at, ok := tr[1].(hcl.TraverseAttr)
	if !ok {
		return "", hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "Invalid reference",
			Detail: fmt.Sprintf("%q must be a reference like %s.NAME.", attr, block), Subject: e.Range().Ptr()}}
	}
	return at.Name, nil
}

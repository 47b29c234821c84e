// Package refine is the refine stage: when a sample's latest attempt failed
// validation or execution, it asks the generator for another attempt (the
// next replayed one here; an LLM repair in a later release) and runs it
// through the same validate and execute stages, up to max_iterations extra
// attempts, stopping at the first attempt that runs. Every attempt is kept.
//
// Refine closes a loop (refine → validate → execute → refine). evalflow keeps
// the plan a DAG by letting refine own that sub-chain: the validate and
// execute stages appear once in the plan, and refine calls them again for
// each new attempt inside its own worker. `evalflow plan` shows the
// sub-chain and its bound under the refine stage.
//
//	stage "refine" {
//	  input          = stage.execute
//	  max_iterations = 2
//	  # defaults: the nearest upstream stages of each kind
//	  generator = stage.generate
//	  validate  = stage.validate
//	  execute   = stage.execute
//	}
package refine

import (
	"context"
	"fmt"

	"github.com/hashicorp/hcl/v2"

	"github.com/evalflow/evalflow/dsl"
	"github.com/evalflow/evalflow/item"
	"github.com/evalflow/evalflow/nodes"
)

func init() {
	nodes.Register(nodes.Kind{Name: "refine", DefaultConcurrency: 4, Inputs: []string{"execute"}, Factory: New})
}

var schema = &hcl.BodySchema{Attributes: []hcl.AttributeSchema{
	{Name: "max_iterations"}, {Name: "generator"}, {Name: "validate"}, {Name: "execute"},
}}

// Refine re-attempts failed samples. Safe for concurrent use on different
// records.
type Refine struct {
	MaxIterations int
	genName       string
	valName       string
	exeName       string
	gen           nodes.Reviser
	val           nodes.Stage
	exe           nodes.Stage
}

// MaxCalls: every iteration of every sample may ask the generator for a
// repair (a model request when it is an LLM) and check and run it.
func (r *Refine) MaxCalls(samples int) (int, int) {
	n := samples * r.MaxIterations
	llmCalls := 0
	if b, ok := r.gen.(nodes.Bounded); ok {
		if l, _ := b.MaxCalls(1); l > 0 {
			llmCalls = n
		}
	}
	return llmCalls, 2 * n
}

// CallModels are the generator's: refine asks it for repairs.
func (r *Refine) CallModels() []string {
	if c, ok := r.gen.(nodes.CallModels); ok {
		return c.CallModels()
	}
	return nil
}

// New builds a refine stage.
func New(env *nodes.Env) (nodes.Stage, hcl.Diagnostics) {
	b := env.Block
	a := dsl.DecodeAttrs(b.Body, schema, b.Ctx, b.DeclRange)
	r := &Refine{MaxIterations: a.Int("max_iterations", 1, 0, 100)}
	pick := func(attr, kind string) string {
		n, d := nodes.RefAttr(a, attr, "stage")
		a.Diags = append(a.Diags, d...)
		if n == "" {
			n = env.Upstream(kind)
		}
		if n != "" && env.Blocks[n] != nil && env.Blocks[n].Kind != kind {
			a.Diags = append(a.Diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Wrong stage wiring",
				Detail:  fmt.Sprintf("refine's %s must be a %s stage; stage.%s is a %s stage.", attr, kind, n, env.Blocks[n].Kind),
				Subject: a.Expr(attr).Range().Ptr()})
		}
		return n
	}
	r.genName = pick("generator", "generate")
	r.valName = pick("validate", "validate")
	r.exeName = pick("execute", "execute")
	if a.Diags.HasErrors() {
		return nil, a.Diags
	}
	if r.genName == "" || r.exeName == "" {
		a.Diags = append(a.Diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Refine has nothing to re-run",
			Detail: "A refine stage needs a generate stage and an execute stage upstream of it.", Subject: b.DeclRange.Ptr()})
		return nil, a.Diags
	}
	built, exists := env.Built[r.genName]
	if !exists {
		// The generator failed to build: its own diagnostic says why, and
		// a second one here would only mislead.
		return nil, a.Diags
	}
	gen, ok := built.(nodes.Reviser)
	if !ok {
		a.Diags = append(a.Diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Generator cannot revise",
			Detail: fmt.Sprintf("stage.%s cannot supply further attempts.", r.genName), Subject: b.DeclRange.Ptr()})
		return nil, a.Diags
	}
	r.gen = gen
	if r.valName != "" {
		r.val = env.Built[r.valName]
	}
	r.exe = env.Built[r.exeName]
	return r, a.Diags
}

// Process re-attempts every sample whose latest attempt failed.
func (r *Refine) Process(ctx context.Context, rec *item.Record) error {
	for _, s := range rec.Samples {
		for iter := 0; iter < r.MaxIterations; iter++ {
			last := s.Final()
			if last == nil || !last.Failed() || ctx.Err() != nil {
				break
			}
			q, raw, ok, err := r.gen.Revise(ctx, rec, s)
			if err != nil {
				return err
			}
			if !ok {
				break
			}
			a := &item.Attempt{Sample: s.Index, Index: len(s.Attempts), Query: q, Raw: raw}
			// An LLM generator records the call (tokens, cost, latency,
			// cache hit, a failed call's error) on the new attempt.
			if an, ok := r.gen.(interface {
				AnnotateRevision(*item.Sample, *item.Attempt)
			}); ok {
				an.AnnotateRevision(s, a)
			}
			s.Attempts = append(s.Attempts, a)
			if r.val != nil {
				if err := r.val.Process(ctx, rec); err != nil {
					return err
				}
			}
			if err := r.exe.Process(ctx, rec); err != nil {
				return err
			}
		}
	}
	return nil
}

// Describe shows the owned sub-chain and its bound.
func (r *Refine) Describe() []string {
	chain := "stage." + r.exeName
	if r.valName != "" {
		chain = "stage." + r.valName + " → " + chain
	}
	return []string{fmt.Sprintf("owns: stage.%s (revise) → %s, at most %d more attempt(s) per sample", r.genName, chain, r.MaxIterations)}
}

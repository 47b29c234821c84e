// Package execute is the execute stage: it runs each sample's latest attempt
// and the item's gold query on the engine, capturing typed results. The
// gold runs once per item, however many samples or attempts there are.
//
//	stage "execute" {
//	  input  = stage.validate
//	  engine = engine.main
//	}
//
// The engine's timeout interrupts the query (it is not abandoned while still
// running) and its max_rows caps what is read.
package execute

import (
	"context"
	"errors"
	"fmt"

	"github.com/hashicorp/hcl/v2"

	"github.com/evalflow/evalflow/dsl"
	"github.com/evalflow/evalflow/item"
	"github.com/evalflow/evalflow/nodes"
)

func init() {
	nodes.Register(nodes.Kind{Name: "execute", DefaultConcurrency: 4, Inputs: []string{"generate", "validate"}, Factory: New})
}

var schema = &hcl.BodySchema{Attributes: []hcl.AttributeSchema{{Name: "engine"}, {Name: "gold"}}}

// Execute runs queries; it is safe for concurrent use.
type Execute struct {
	Name   string
	Engine *nodes.Engine
	Gold   bool
}

// New builds an execute stage.
func New(env *nodes.Env) (nodes.Stage, hcl.Diagnostics) {
	b := env.Block
	a := dsl.DecodeAttrs(b.Body, schema, b.Ctx, b.DeclRange)
	x := &Execute{Name: b.Name, Gold: a.Bool("gold", true)}
	name, d := nodes.RefAttr(a, "engine", "engine")
	a.Diags = append(a.Diags, d...)
	if name == "" && len(env.Engines) == 1 {
		for n := range env.Engines {
			name = n
		}
	}
	x.Engine = env.Engines[name]
	if x.Engine == nil && !a.Diags.HasErrors() {
		a.Diags = append(a.Diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Missing engine",
			Detail: "An execute stage needs engine = engine.NAME when the pipeline declares several (or no) engines.", Subject: b.DeclRange.Ptr()})
	}
	// The validate stage before this one may leave its syntax check to us
	// (each query parsed once): tell it which engine we run on.
	if up := env.Upstream("validate"); up != "" && x.Engine != nil {
		if v, ok := env.Built[up].(interface{ ExecutedNext(*nodes.Engine) }); ok {
			v.ExecutedNext(x.Engine)
		}
	}
	return x, a.Diags
}

// MaxCalls is the gold and one execution per sample.
func (x *Execute) MaxCalls(samples int) (int, int) {
	if x.Gold {
		return 0, 1 + samples
	}
	return 0, samples
}

// EngineOf returns the engine the stage runs on (score uses it to re-run
// queries for profiles that rewrite them).
func (x *Execute) EngineOf() *nodes.Engine { return x.Engine }

// Process runs the gold (once) and every sample's latest attempt that has
// not run and has not failed. A gold query that fails or times out, and a
// database or engine the harness cannot reach, make the item an error (the
// returned error): it is not the prediction's fault, and a silent 0 would
// change from run to run. The gold's failure is still recorded (GoldError)
// so official profiles can give the value their scorer gives.
func (x *Execute) Process(ctx context.Context, rec *item.Record) error {
	var harness []error
	if x.Gold && !rec.GoldDone && rec.Item.Gold != "" {
		o := x.Engine.Run(ctx, &rec.Item, rec.Item.Gold)
		res, class, err := o.Result, o.Class, o.Err
		if class == item.ClassCancelled {
			return err
		}
		rec.GoldDone = true
		if err != nil {
			rec.GoldError = fmt.Sprintf("%s: %v", class, err)
			harness = append(harness, fmt.Errorf("gold query failed (%s): %v", class, err))
		} else {
			rec.GoldResult = res
		}
	}
	for _, s := range rec.Samples {
		at := s.Final()
		if at == nil || at.Executed || at.Failed() {
			continue
		}
		// A syntax check the validate stage left to us comes first: the
		// query is checked and run from one parse (nodes.Engine.RunChecked).
		o, ran, herr := x.Engine.RunChecked(ctx, &rec.Item, at)
		if herr != nil {
			harness = append(harness, herr)
		}
		if !ran {
			continue // it failed the check: validate's verdict, not run
		}
		res, class, err := o.Result, o.Class, o.Err
		at.Time("execute", o.Took)
		at.Executed, at.Cached = true, o.Cached
		if err != nil {
			at.SetError(class, err.Error())
			if errors.Is(err, nodes.ErrHarness) {
				harness = append(harness, err)
			}
			continue
		}
		at.Result = res
	}
	if len(harness) > 0 {
		return errors.Join(harness...)
	}
	return nil
}

// Describe names the engine, for `evalflow plan`.
func (x *Execute) Describe() []string {
	return []string{fmt.Sprintf("engine: %s (%s, timeout %s)", "engine."+x.Engine.Block.Name, x.Engine.Block.Kind, x.Engine.Block.Timeout)}
}

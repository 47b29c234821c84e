package dsl

import (
	"time"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
)

// Engine is an engine block: a query engine the execute and validate stages
// run queries on. Path may reference item fields and is evaluated per item.
//
//	engine "main" {
//	  kind     = "sqlite"                           # default: the block name
//	  path     = "data/${item.db}.sqlite"           # relative to the pipeline
//	  root     = "data"                             # paths from data stay inside (default: the
//	                                                # template's directory before item.)
//	  timeout  = "5s"
//	  max_rows = 10000
//	}
type Engine struct {
	Name string
	Kind string
	Path hcl.Expression // nil when the engine needs no per-item location
	// Root is the directory every path from data must resolve inside (nil:
	// derived from Path; see nodes.Engine.Root).
	Root     hcl.Expression
	Timeout  time.Duration
	MaxRows  int
	ReadOnly bool
	// Concurrency bounds the open connections per database (0: stage decides).
	Concurrency int
	// Options are the kind-specific attributes (evaluated, Go values), as
	// written: the planner resolves the ones a kind declares as paths
	// (engine.PathOption) against the pipeline's directory before the
	// engine sees them.
	Options map[string]any
	// OptionsExpr is the options attribute's expression (nil without one);
	// OptionRange finds an option's place in it.
	OptionsExpr hcl.Expression
	KindRange   hcl.Range      // the kind attribute, or the block label
	KindExpr    hcl.Expression // the kind attribute's expression; nil when the label gives the kind
	DeclRange   hcl.Range
}

var engineBlockSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{
		{Name: "kind"}, {Name: "path"}, {Name: "root"}, {Name: "timeout"}, {Name: "max_rows"},
		{Name: "read_only"}, {Name: "concurrency"}, {Name: "options"},
	},
}

// DefaultEngineTimeout applies when an engine block sets no timeout.
const DefaultEngineTimeout = 30 * time.Second

func decodeEngineBlock(block *hcl.Block, ctx *hcl.EvalContext) (*Engine, hcl.Diagnostics) {
	a := DecodeAttrs(block.Body, engineBlockSchema, ctx, block.DefRange)
	e := &Engine{Name: block.Labels[0], DeclRange: block.DefRange}
	e.Kind = a.String("kind", e.Name)
	e.KindRange = block.LabelRanges[0]
	if k := a.Expr("kind"); k != nil {
		e.KindRange, e.KindExpr = k.Range(), k
	}
	e.Path = a.Expr("path")
	e.Root = a.Expr("root")
	e.Timeout = a.Duration("timeout", DefaultEngineTimeout)
	e.MaxRows = a.Int("max_rows", 0, 0, 1<<31-1)
	e.ReadOnly = a.Bool("read_only", true)
	e.Concurrency = a.Int("concurrency", 0, 0, 1<<16)
	e.OptionsExpr = a.Expr("options")
	if v, ok := a.Value("options", ctyDynamic); ok {
		if m, ok := GoValue(v).(map[string]any); ok {
			e.Options = m
		}
	}
	if !e.ReadOnly {
		a.Diags = append(a.Diags, &hcl.Diagnostic{Severity: hcl.DiagWarning, Summary: "Engine is writable",
			Detail:  "read_only = false lets generated queries change the database; evaluations normally keep it true.",
			Subject: a.Expr("read_only").Range().Ptr()})
	}
	return e, a.Diags
}

// OptionRange returns where option key — its element elem, when elem is an
// int (a list index) or a string (a map key) — is written, as precisely as
// the options expression shows it: an object and a list written out in
// the block give the value's own range; an option that comes from a local,
// a variable or a function call (merge(...)) gives the range of the whole
// options expression, and an engine without options its block's.
func (e *Engine) OptionRange(key string, elem any) hcl.Range {
	if e.OptionsExpr == nil {
		return e.DeclRange
	}
	rng := e.OptionsExpr.Range()
	x, ok := objectItem(e.OptionsExpr, key)
	if !ok {
		return rng
	}
	rng = x.Range()
	switch el := elem.(type) {
	case int:
		if t, ok := unparen(x).(*hclsyntax.TupleConsExpr); ok && el >= 0 && el < len(t.Exprs) {
			rng = t.Exprs[el].Range()
		}
	case string:
		if v, ok := objectItem(x, el); ok {
			rng = v.Range()
		}
	}
	return rng
}

// objectItem returns the value expression of key in an object constructor
// written out in the source ({ key = value }); ok is false for any other
// expression or a key it does not write literally.
func objectItem(expr hcl.Expression, key string) (hcl.Expression, bool) {
	o, ok := unparen(expr).(*hclsyntax.ObjectConsExpr)
	if !ok {
		return nil, false
	}
	for _, it := range o.Items {
		k, diags := it.KeyExpr.Value(nil)
		if diags.HasErrors() || !k.IsKnown() || k.IsNull() || k.Type() != cty.String {
			continue
		}
		if k.AsString() == key {
			return it.ValueExpr, true
		}
	}
	return nil, false
}

func unparen(expr hcl.Expression) hcl.Expression {
	for {
		p, ok := expr.(*hclsyntax.ParenthesesExpr)
		if !ok {
			return expr
		}
		expr = p.Expression
	}
}

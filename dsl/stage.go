package dsl

import (
	"fmt"
	"sort"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/ext/dynblock"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
)

var ctyDynamic = cty.DynamicPseudoType

// Stage kinds, in pipeline order.
var StageKinds = []string{"generate", "validate", "execute", "refine", "score", "aggregate"}

// Stage is a stage block. The kind-specific attributes stay in Body and are
// decoded by the node package registered for Kind, with Ctx.
//
//	stage "execute" {                 # kind defaults to the name
//	  input       = stage.validate     # the stage whose items this one takes
//	  engine      = engine.main
//	  concurrency = 4
//	}
type Stage struct {
	Name  string
	Kind  string
	Input *Ref // nil for generate; for several inputs, the planner sets the branch's
	// Inputs are every stage the input attribute names: one reference, or
	// a list (input = [stage.exec_a, stage.exec_b]) joining branches.
	Inputs      []Ref
	Concurrency int // 0: the kind's default
	Body        hcl.Body
	Ctx         *hcl.EvalContext
	// Refs are every reference to another block in the stage's body, in
	// source order, with their ranges: the planner's edges.
	Refs      []Ref
	KindRange hcl.Range
	DeclRange hcl.Range
	// Source is the block's body as written (before dynamic blocks
	// expand), for diagnostics that look at what the user typed.
	Source hcl.Body
}

// Ref is a reference to a block: stage.NAME, engine.NAME, dataset.NAME.
type Ref struct {
	Block string // "stage", "engine", "dataset", "sink"
	Name  string
	Attr  string // the attribute it appears in
	Range hcl.Range
}

func (r Ref) String() string { return r.Block + "." + r.Name }

var stageCommonSchema = []hcl.AttributeSchema{{Name: "kind"}, {Name: "input"}, {Name: "concurrency"}}

func decodeStageBlock(block *hcl.Block, ctx *hcl.EvalContext) (*Stage, hcl.Diagnostics) {
	content, remain, diags := block.Body.PartialContent(&hcl.BodySchema{Attributes: stageCommonSchema})
	// dynamic "metric" { for_each = …; content { … } } blocks expand as in
	// Terraform (hcl/ext/dynblock), so a pipeline can add blocks only when
	// a variable asks for them.
	s := &Stage{Name: block.Labels[0], Body: dynblock.Expand(remain, ctx), Ctx: ctx, DeclRange: block.DefRange, KindRange: block.LabelRanges[0]}
	a := &Attrs{Content: content, Ctx: ctx, Range: block.DefRange}
	s.Kind = a.String("kind", "")
	if e := a.Expr("kind"); e != nil {
		s.KindRange = e.Range()
	}
	if s.Kind == "" {
		if contains(StageKinds, s.Name) {
			s.Kind = s.Name
		} else {
			diags = append(diags, errorf(&block.LabelRanges[0], "Stage kind required",
				"Stage %q is not named after a kind, so it needs kind = one of %s.%s",
				s.Name, strings.Join(StageKinds, ", "), didYouMean(s.Name, StageKinds)))
		}
	} else if !contains(StageKinds, s.Kind) {
		diags = append(diags, errorf(&s.KindRange, "Unknown stage kind",
			"%q is not a stage kind; use one of %s.%s", s.Kind, strings.Join(StageKinds, ", "), didYouMean(s.Kind, StageKinds)))
	}
	s.Concurrency = a.Int("concurrency", 0, 1, 1<<16)
	if e := a.Expr("input"); e != nil {
		if tup, ok := e.(*hclsyntax.TupleConsExpr); ok {
			// input = [stage.a, stage.b]: this stage joins branches.
			for _, el := range tup.Exprs {
				ref, d := refFromExpr(el, "input", "stage")
				diags = append(diags, d...)
				if ref != nil {
					s.Inputs = append(s.Inputs, *ref)
				}
			}
			if len(s.Inputs) == 0 && !diags.HasErrors() {
				diags = append(diags, errorf(e.Range().Ptr(), "Empty input list", "input = [] names no stage; give stage.NAME or a list of them."))
			}
			if len(s.Inputs) == 1 {
				s.Input = &s.Inputs[0]
			}
		} else {
			ref, d := refFromExpr(e, "input", "stage")
			diags = append(diags, d...)
			s.Input = ref
			if ref != nil {
				s.Inputs = []Ref{*ref}
			}
		}
	}
	diags = append(diags, a.Diags...)
	s.Refs = collectRefs(block.Body)
	s.Source = block.Body
	return s, diags
}

// refFromExpr reads a bare block reference such as stage.execute.
func refFromExpr(e hcl.Expression, attr, want string) (*Ref, hcl.Diagnostics) {
	tr, d := hcl.AbsTraversalForExpr(e)
	if d.HasErrors() || len(tr) != 2 || tr.RootName() != want {
		return nil, hcl.Diagnostics{errorf(e.Range().Ptr(), "Invalid reference",
			"%q must be a reference like %s.NAME.", attr, want)}
	}
	at, ok := tr[1].(hcl.TraverseAttr)
	if !ok {
		return nil, hcl.Diagnostics{errorf(e.Range().Ptr(), "Invalid reference",
			"%q must be a reference like %s.NAME.", attr, want)}
	}
	return &Ref{Block: want, Name: at.Name, Attr: attr, Range: e.Range()}, nil
}

// collectRefs walks a native-syntax body for references to blocks.
func collectRefs(body hcl.Body) []Ref {
	sb, ok := body.(*hclsyntax.Body)
	if !ok {
		return nil
	}
	var out []Ref
	var walk func(b *hclsyntax.Body)
	walk = func(b *hclsyntax.Body) {
		attrs := make([]*hclsyntax.Attribute, 0, len(b.Attributes))
		for _, a := range b.Attributes {
			attrs = append(attrs, a)
		}
		sortAttrs(attrs)
		for _, a := range attrs {
			for _, tr := range a.Expr.Variables() {
				root := tr.RootName()
				if root != "stage" && root != "engine" && root != "dataset" && root != "sink" {
					continue
				}
				if len(tr) < 2 {
					continue
				}
				if at, ok := tr[1].(hcl.TraverseAttr); ok {
					out = append(out, Ref{Block: root, Name: at.Name, Attr: a.Name, Range: tr.SourceRange()})
				}
			}
		}
		for _, blk := range b.Blocks {
			walk(blk.Body)
		}
	}
	walk(sb)
	return out
}

func sortAttrs(as []*hclsyntax.Attribute) {
	sort.Slice(as, func(i, j int) bool { return as[i].SrcRange.Start.Byte < as[j].SrcRange.Start.Byte })
}

// checkReferences reports references to blocks that do not exist, with a
// "did you mean" among the declared names of that kind.
func (p *Pipeline) checkReferences(names map[string]map[string]hcl.Range) hcl.Diagnostics {
	var diags hcl.Diagnostics
	for _, s := range p.Stages {
		for _, r := range s.Refs {
			m := names[r.Block]
			if _, ok := m[r.Name]; ok {
				continue
			}
			cands := make([]string, 0, len(m))
			for n := range m {
				cands = append(cands, n)
			}
			rng := r.Range
			hint := didYouMean(r.Name, cands)
			if hint == "" {
				sort.Strings(cands)
				if len(cands) == 0 {
					hint = fmt.Sprintf(" Declare a %s %q block, or remove the reference.", r.Block, r.Name)
				} else {
					hint = fmt.Sprintf(" Declared %s blocks: %s.", r.Block, strings.Join(cands, ", "))
				}
			}
			diags = append(diags, errorf(&rng, "Reference to undeclared "+r.Block,
				"Stage %q refers to %s, but no %s block named %q is declared.%s",
				s.Name, r, r.Block, r.Name, hint))
		}
	}
	return diags
}

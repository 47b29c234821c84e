package dsl

import (
	"github.com/hashicorp/hcl/v2"
)

// Sink is an extra output besides the run directory's standard files:
//
// kind "qas_jsonl" writes the QAS Evaluation System's evaluation-results.jsonl lines (one per
// item, from the QAS components) instead of a table:
//
//	sink "qas" {
//	  kind       = "qas_jsonl"
//	  path       = "evaluation-results.jsonl"
//	  agent      = "my-agent"       # agent_used
//	  difficulty = "difficulty"     # dataset field for difficulty
//	  options    = { semantic = 0.8 } # QAS metric options (docs/metrics.md)
//	}
//
//	sink "items_jsonl" {
//	  kind  = "jsonl"        # parquet | arrow | jsonl; default: the name
//	  table = "items"        # items | attempts | aggregates
//	  path  = "items.jsonl"  # relative to the run directory; "-" = stdout
//	}
type Sink struct {
	Name  string
	Kind  string
	Table string
	Path  string
	// QAS sink settings.
	Agent      string
	Difficulty string
	Options    map[string]any
	DeclRange  hcl.Range
	// KindRange, PathRange and TableRange locate the attributes (or the
	// block label) for the planner's checks against the sink kind registry.
	KindRange, PathRange, TableRange hcl.Range
	// KindExpr is the kind attribute's expression (nil: the label).
	KindExpr hcl.Expression
}

// SinkTables are the tables a sink may write. Sink kinds resolve through
// the sinks registry, checked by the planner.
var SinkTables = []string{"items", "attempts", "aggregates"}

var sinkBlockSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{{Name: "kind"}, {Name: "table"}, {Name: "path", Required: true},
		{Name: "agent"}, {Name: "difficulty"}, {Name: "options"}},
}

func decodeSinkBlock(block *hcl.Block, ctx *hcl.EvalContext, vars map[string]*Variable) (*Sink, hcl.Diagnostics) {
	a := DecodeAttrs(block.Body, sinkBlockSchema, ctx, block.DefRange)
	s := &Sink{Name: block.Labels[0], DeclRange: block.DefRange}
	s.Kind = a.String("kind", s.Name)
	s.Table = a.String("table", "items")
	s.Path = a.String("path", "")
	s.Agent = a.String("agent", "evalflow")
	s.Difficulty = a.String("difficulty", "difficulty")
	if v, ok := a.Value("options", ctyDynamic); ok {
		if m, ok := GoValue(v).(map[string]any); ok {
			s.Options = m
		}
	}
	s.KindRange, s.PathRange, s.TableRange = block.LabelRanges[0], block.DefRange, block.DefRange
	if e := a.Expr("kind"); e != nil {
		s.KindRange, s.KindExpr = e.Range(), e
	}
	if e := a.Expr("path"); e != nil {
		s.PathRange = e.Range()
	}
	if e := a.Expr("table"); e != nil {
		s.TableRange = e.Range()
	}
	if !contains(SinkTables, s.Table) {
		a.Diags = append(a.Diags, InvalidChoice(vars, a.Expr("table"), s.TableRange, "Unknown sink table", "a table", s.Table, SinkTables))
	}
	return s, a.Diags
}

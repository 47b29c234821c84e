package dsl

import (
	"fmt"
	"sort"
	"strings"

	"github.com/agext/levenshtein"
	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"
)

// Suggest returns the candidate closest to name when it is close enough to be
// a likely typo, or "" otherwise. It is used for "did you mean" hints on
// unknown variables, stages, engines, metrics and kinds.
func Suggest(name string, candidates []string) string {
	best, bestDist := "", 1<<30
	sorted := append([]string(nil), candidates...)
	sort.Strings(sorted)
	for _, c := range sorted {
		d := levenshtein.Distance(name, c, nil)
		if d < bestDist {
			best, bestDist = c, d
		}
	}
	limit := 3
	if len(name) <= 4 {
		limit = 2
	}
	if bestDist <= limit && bestDist < len(name) {
		return best
	}
	return ""
}

// didYouMean renders a suggestion as a sentence to append to a detail.
func didYouMean(name string, candidates []string) string {
	if s := Suggest(name, candidates); s != "" {
		return fmt.Sprintf(" Did you mean %q?", s)
	}
	return ""
}

func errorf(rng *hcl.Range, summary, detail string, args ...any) *hcl.Diagnostic {
	return &hcl.Diagnostic{
		Severity: hcl.DiagError,
		Summary:  summary,
		Detail:   fmt.Sprintf(detail, args...),
		Subject:  rng,
	}
}

// Choices renders what to append to a detail about a value that is not one
// of valid: a "Did you mean" when one is close, then every valid value.
func Choices(value string, valid []string) string {
	return didYouMean(value, valid) + " Valid values: " + strings.Join(valid, ", ") + "."
}

// ValueOrigin says where the value of expr came from, for a diagnostic about
// that value. When expr is just var.NAME and the value was given outside the
// pipeline's files (-var, a -var-file, EVALFLOW_VAR_NAME), the place is that
// value's own (for -var the made-up file "<value for var.NAME from -var>")
// and note names the variable and the place it is used; otherwise the place
// is expr's range and note is "".
func ValueOrigin(vars map[string]*Variable, expr hcl.Expression) (hcl.Range, string) {
	rng := expr.Range()
	trav, d := hcl.AbsTraversalForExpr(expr)
	if d.HasErrors() || len(trav) != 2 || trav.RootName() != "var" {
		return rng, ""
	}
	attr, ok := trav[1].(hcl.TraverseAttr)
	if !ok {
		return rng, ""
	}
	v := vars[attr.Name]
	if v == nil || v.Source == "" || v.Source == "default" || v.Source == "sweep" || v.ValueRange.Filename == "" {
		return rng, ""
	}
	return v.ValueRange, fmt.Sprintf(" (var.%s from %s, used at %s)", attr.Name, v.Source, rangePos(rng))
}

// rangePos renders a range's start as FILE:LINE:COLUMN.
func rangePos(r hcl.Range) string {
	return fmt.Sprintf("%s:%d:%d", r.Filename, r.Start.Line, r.Start.Column)
}

// InvalidChoice is the diagnostic for a value of an attribute with a fixed
// set of valid values: at the value's origin (ValueOrigin), saying what it
// is not, "Did you mean" when one is close, and every valid value. vars may
// be nil; expr nil falls back to fallback.
func InvalidChoice(vars map[string]*Variable, expr hcl.Expression, fallback hcl.Range, summary, what, value string, valid []string) *hcl.Diagnostic {
	rng, note := fallback, ""
	if expr != nil {
		rng, note = ValueOrigin(vars, expr)
	}
	return &hcl.Diagnostic{Severity: hcl.DiagError, Summary: summary,
		Detail:  fmt.Sprintf("%q is not %s%s.%s", value, what, note, Choices(value, valid)),
		Subject: rng.Ptr()}
}

// explainUnknownNames improves HCL's diagnostics about unknown names, in
// place: a reference to an attribute an object does not have (var.compar,
// local.x, stage.x) gets "did you mean" and the declared names, and an
// argument or block type a schema does not expect gets the valid ones.
func explainUnknownNames(diags hcl.Diagnostics, schema *hcl.BodySchema) {
	for _, d := range diags {
		if d == nil || d.Severity != hcl.DiagError || strings.Contains(d.Detail, " Valid ") || strings.Contains(d.Detail, " Declared ") {
			continue
		}
		switch d.Summary {
		case "Unsupported attribute":
			explainTraversal(d)
		case "Unsupported argument":
			if schema != nil && len(schema.Attributes) > 0 {
				names := make([]string, 0, len(schema.Attributes))
				for _, a := range schema.Attributes {
					names = append(names, a.Name)
				}
				sort.Strings(names)
				d.Detail += " Valid arguments: " + strings.Join(names, ", ") + "."
			}
		case "Unsupported block type":
			if schema != nil && len(schema.Blocks) > 0 {
				names := make([]string, 0, len(schema.Blocks))
				for _, b := range schema.Blocks {
					names = append(names, b.Type)
				}
				sort.Strings(names)
				d.Detail += " Valid block types: " + strings.Join(names, ", ") + "."
			}
		}
	}
}

// refKinds names what each root object of the evaluation context holds.
var refKinds = map[string]string{"var": "variable", "local": "local value", "dataset": "dataset block",
	"engine": "engine block", "stage": "stage block", "sink": "sink block", "model": "model block", "path": "path value"}

// explainTraversal rewrites "This object does not have an attribute named
// X" for a reference rooted at var, local or a block kind.
func explainTraversal(d *hcl.Diagnostic) {
	if d.Expression == nil || d.EvalContext == nil {
		return
	}
	for _, trav := range d.Expression.Variables() {
		if len(trav) < 2 {
			continue
		}
		kind, ok := refKinds[trav.RootName()]
		if !ok {
			continue
		}
		attr, ok := trav[1].(hcl.TraverseAttr)
		if !ok || d.Subject == nil || !trav[1].SourceRange().Overlaps(*d.Subject) {
			continue
		}
		root, found := lookupRoot(d.EvalContext, trav.RootName())
		if !found || !root.Type().IsObjectType() || root.Type().HasAttribute(attr.Name) {
			continue
		}
		names := make([]string, 0, len(root.Type().AttributeTypes()))
		for n := range root.Type().AttributeTypes() {
			names = append(names, n)
		}
		sort.Strings(names)
		list := " None is declared."
		if len(names) > 0 {
			list = fmt.Sprintf(" Declared: %s.", strings.Join(names, ", "))
		}
		d.Detail = fmt.Sprintf("There is no %s named %q (%s.%s).%s%s", kind, attr.Name, trav.RootName(), attr.Name,
			didYouMean(attr.Name, names), list)
		return
	}
}

// lookupRoot finds a root variable in ctx or its parents.
func lookupRoot(ctx *hcl.EvalContext, name string) (cty.Value, bool) {
	for c := ctx; c != nil; c = c.Parent() {
		if v, ok := c.Variables[name]; ok {
			return v, true
		}
	}
	return cty.NilVal, false
}

// ExplainDiagnostics adds "did you mean" and the declared names to HCL's
// diagnostics about references to unknown variables, locals and blocks
// (var.compar). The planner applies it to what stages report.
func ExplainDiagnostics(diags hcl.Diagnostics) hcl.Diagnostics {
	explainUnknownNames(diags, nil)
	return diags
}

package dsl

import (
	"fmt"
	"time"

	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/convert"
	"github.com/zclconf/go-cty/cty/gocty"
)

// Attrs decodes a block body against a schema and reads typed attribute
// values, collecting diagnostics that point at the offending expression.
// Node packages use it to decode their kind-specific attributes. The zero
// value is not usable; call DecodeAttrs.
type Attrs struct {
	Content *hcl.BodyContent
	Ctx     *hcl.EvalContext
	Diags   hcl.Diagnostics
	Range   hcl.Range // the block's declaration, for "missing" errors
}

// DecodeAttrs decodes body with schema (unknown attributes get "did you
// mean" from HCL itself, and the valid names from explainUnknownNames).
func DecodeAttrs(body hcl.Body, schema *hcl.BodySchema, ctx *hcl.EvalContext, declRange hcl.Range) *Attrs {
	content, diags := body.Content(schema)
	explainUnknownNames(diags, schema)
	if content == nil {
		content = &hcl.BodyContent{Attributes: hcl.Attributes{}}
	}
	return &Attrs{Content: content, Ctx: ctx, Diags: diags, Range: declRange}
}

// Has reports whether the attribute is set.
func (a *Attrs) Has(name string) bool {
	_, ok := a.Content.Attributes[name]
	return ok
}

// Expr returns the attribute's expression, or nil.
func (a *Attrs) Expr(name string) hcl.Expression {
	if at, ok := a.Content.Attributes[name]; ok {
		return at.Expr
	}
	return nil
}

// Value evaluates the attribute converted to ty; ok is false when absent or
// invalid (then a diagnostic was recorded).
func (a *Attrs) Value(name string, ty cty.Type) (cty.Value, bool) {
	at, ok := a.Content.Attributes[name]
	if !ok {
		return cty.NilVal, false
	}
	v, d := at.Expr.Value(a.Ctx)
	a.Diags = append(a.Diags, d...)
	if d.HasErrors() {
		return cty.NilVal, false
	}
	if v.IsNull() {
		return cty.NilVal, false
	}
	cv, err := convert.Convert(v, ty)
	if err != nil {
		a.Diags = append(a.Diags, errorf(at.Expr.Range().Ptr(), "Invalid value for "+fmt.Sprintf("%q", name),
			"%q must be a %s: %s.", name, typeName(ty), err))
		return cty.NilVal, false
	}
	if !cv.IsWhollyKnown() {
		a.Diags = append(a.Diags, errorf(at.Expr.Range().Ptr(), "Value not known when planning",
			"%q must be known before the run starts; it cannot depend on an item.", name))
		return cty.NilVal, false
	}
	return cv, true
}

// String returns a string attribute or def.
func (a *Attrs) String(name, def string) string {
	v, ok := a.Value(name, cty.String)
	if !ok {
		return def
	}
	return v.AsString()
}

// Bool returns a bool attribute or def.
func (a *Attrs) Bool(name string, def bool) bool {
	v, ok := a.Value(name, cty.Bool)
	if !ok {
		return def
	}
	return v.True()
}

// Int returns a whole-number attribute or def; it must lie in [min, max].
func (a *Attrs) Int(name string, def, min, max int) int {
	v, ok := a.Value(name, cty.Number)
	if !ok {
		return def
	}
	var n int
	if err := gocty.FromCtyValue(v, &n); err != nil || n < min || n > max {
		a.Diags = append(a.Diags, errorf(a.Expr(name).Range().Ptr(), "Invalid value for "+fmt.Sprintf("%q", name),
			"%q must be a whole number between %d and %d.", name, min, max))
		return def
	}
	return n
}

// Float returns a number attribute or def.
func (a *Attrs) Float(name string, def float64) float64 {
	v, ok := a.Value(name, cty.Number)
	if !ok {
		return def
	}
	f, _ := v.AsBigFloat().Float64()
	return f
}

// Duration returns a duration attribute ("5s", "250ms", or a number of
// seconds) or def.
func (a *Attrs) Duration(name string, def time.Duration) time.Duration {
	at, ok := a.Content.Attributes[name]
	if !ok {
		return def
	}
	v, d := at.Expr.Value(a.Ctx)
	a.Diags = append(a.Diags, d...)
	if d.HasErrors() || v.IsNull() {
		return def
	}
	if v.Type() == cty.Number {
		f, _ := v.AsBigFloat().Float64()
		return time.Duration(f * float64(time.Second))
	}
	if v.Type() == cty.String {
		dur, err := time.ParseDuration(v.AsString())
		if err == nil && dur >= 0 {
			return dur
		}
	}
	a.Diags = append(a.Diags, errorf(at.Expr.Range().Ptr(), "Invalid duration",
		"%q must be a duration such as \"5s\" or \"250ms\", or a number of seconds.", name))
	return def
}

// Strings returns a list-of-strings attribute (a single string is accepted
// as a one-element list) or nil.
func (a *Attrs) Strings(name string) []string {
	at, ok := a.Content.Attributes[name]
	if !ok {
		return nil
	}
	v, d := at.Expr.Value(a.Ctx)
	a.Diags = append(a.Diags, d...)
	if d.HasErrors() || v.IsNull() {
		return nil
	}
	if v.Type() == cty.String {
		return []string{v.AsString()}
	}
	lv, err := convert.Convert(v, cty.List(cty.String))
	if err != nil || !lv.IsWhollyKnown() {
		a.Diags = append(a.Diags, errorf(at.Expr.Range().Ptr(), "Invalid value for "+fmt.Sprintf("%q", name),
			"%q must be a list of strings.", name))
		return nil
	}
	var out []string
	for it := lv.ElementIterator(); it.Next(); {
		_, e := it.Element()
		if e.IsNull() {
			continue
		}
		out = append(out, e.AsString())
	}
	return out
}

// GoValue converts a known cty value to plain Go values: string, float64,
// bool, []any, map[string]any, nil. Metric options use it.
func GoValue(v cty.Value) any {
	if v.IsNull() || !v.IsKnown() {
		return nil
	}
	t := v.Type()
	switch {
	case t == cty.String:
		return v.AsString()
	case t == cty.Bool:
		return v.True()
	case t == cty.Number:
		f, _ := v.AsBigFloat().Float64()
		return f
	case t.IsListType() || t.IsTupleType() || t.IsSetType():
		var out []any
		for it := v.ElementIterator(); it.Next(); {
			_, e := it.Element()
			out = append(out, GoValue(e))
		}
		return out
	case t.IsMapType() || t.IsObjectType():
		out := map[string]any{}
		for it := v.ElementIterator(); it.Next(); {
			k, e := it.Element()
			out[k.AsString()] = GoValue(e)
		}
		return out
	}
	return nil
}

package dsl

import (
	"fmt"
	"os"
	"sort"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/ext/typeexpr"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/convert"
)

// Variable is a declared input of the pipeline. Value and Source are set
// once the pipeline is loaded: Source says where the value came from
// ("default", "env EVALFLOW_VAR_x", "-var-file f.hcl", "-var"), and the run
// manifest records both.
type Variable struct {
	Name    string
	Type    cty.Type
	Default cty.Value // cty.NilVal when the variable is required
	// DefaultRange is the default's expression.
	DefaultRange hcl.Range
	Description  string
	Validations  []*VariableValidation
	DeclRange    hcl.Range

	Value  cty.Value
	Source string
	// ValueRange is where Value was written: the default's expression, the
	// -var-file attribute, or the made-up file of a -var or EVALFLOW_VAR_
	// value ("<value for var.NAME from -var>").
	ValueRange hcl.Range
}

// VariableValidation is a validation block: Condition must be true for the
// variable's value, or ErrorMessage is reported at the value's origin.
type VariableValidation struct {
	Condition    hcl.Expression
	ErrorMessage hcl.Expression
	DeclRange    hcl.Range
}

var variableBlockSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{
		{Name: "type"},
		{Name: "default"},
		{Name: "description"},
	},
	Blocks: []hcl.BlockHeaderSchema{{Type: "validation"}},
}

var validationBlockSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{
		{Name: "condition", Required: true},
		{Name: "error_message", Required: true},
	},
}

func decodeVariableBlock(block *hcl.Block) (*Variable, hcl.Diagnostics) {
	v := &Variable{Name: block.Labels[0], Type: cty.DynamicPseudoType, DeclRange: block.DefRange}
	if !hclsyntax.ValidIdentifier(v.Name) {
		return nil, hcl.Diagnostics{errorf(&block.LabelRanges[0], "Invalid variable name",
			"A variable name must start with a letter and contain only letters, digits, underscores and dashes.")}
	}
	content, diags := block.Body.Content(variableBlockSchema)
	explainUnknownNames(diags, variableBlockSchema)
	if attr, ok := content.Attributes["type"]; ok {
		ty, tdiags := typeexpr.TypeConstraint(attr.Expr)
		diags = append(diags, tdiags...)
		if !tdiags.HasErrors() {
			v.Type = ty
		}
	}
	if attr, ok := content.Attributes["description"]; ok {
		val, d := attr.Expr.Value(nil)
		diags = append(diags, d...)
		if !d.HasErrors() && val.Type() == cty.String && val.IsKnown() && !val.IsNull() {
			v.Description = val.AsString()
		}
	}
	if attr, ok := content.Attributes["default"]; ok {
		val, d := attr.Expr.Value(nil)
		diags = append(diags, d...)
		if !d.HasErrors() {
			conv, err := convert.Convert(val, v.Type)
			if err != nil {
				diags = append(diags, errorf(attr.Expr.Range().Ptr(), "Invalid default value for variable",
					"The default for var.%s does not match its type %s: %s.", v.Name, typeName(v.Type), err))
			} else {
				v.Default, v.DefaultRange = conv, attr.Expr.Range()
			}
		}
	}
	for _, b := range content.Blocks {
		vc, d := b.Body.Content(validationBlockSchema)
		explainUnknownNames(d, validationBlockSchema)
		diags = append(diags, d...)
		if d.HasErrors() {
			continue
		}
		v.Validations = append(v.Validations, &VariableValidation{
			Condition:    vc.Attributes["condition"].Expr,
			ErrorMessage: vc.Attributes["error_message"].Expr,
			DeclRange:    b.DefRange,
		})
	}
	return v, diags
}

func typeName(t cty.Type) string {
	if t == cty.DynamicPseudoType {
		return "any"
	}
	return t.FriendlyName()
}

// VarOverride is one value given on the command line or in a var file.
type VarOverride struct {
	Name   string
	Value  cty.Value
	Raw    string // unparsed text for -var and env values; "" for files
	Source string
	Range  hcl.Range
}

// ParseVarFlag parses one -var argument ("name=value").
func ParseVarFlag(arg string) (name, value string, diags hcl.Diagnostics) {
	eq := strings.IndexByte(arg, '=')
	if eq <= 0 {
		return "", "", hcl.Diagnostics{{
			Severity: hcl.DiagError,
			Summary:  "Invalid -var option",
			Detail:   fmt.Sprintf("The given -var option %q is not correctly specified. It must be a variable name and value separated by an equals sign, like -var key=value.", arg),
			Subject:  fileStart("<-var " + arg + ">"),
		}}
	}
	return arg[:eq], arg[eq+1:], nil
}

// parseRawValue turns a textual value (-var or EVALFLOW_VAR_) into a cty
// value for the declared type: strings are taken literally, everything else
// is parsed as an HCL expression under a made-up filename so its errors still
// have a location.
func parseRawValue(v *Variable, raw, filename string) (cty.Value, hcl.Diagnostics) {
	if v.Type == cty.String {
		return cty.StringVal(raw), nil
	}
	if d := checkSource([]byte(raw), filename, hcl.InitialPos, true); d.HasErrors() {
		return cty.NilVal, d
	}
	expr, diags := hclsyntax.ParseExpression([]byte(raw), filename, hcl.InitialPos)
	if diags.HasErrors() {
		if v.Type == cty.DynamicPseudoType {
			return cty.StringVal(raw), nil
		}
		return cty.NilVal, diags
	}
	val, vd := expr.Value(nil)
	if vd.HasErrors() {
		if v.Type == cty.DynamicPseudoType {
			return cty.StringVal(raw), nil
		}
		return cty.NilVal, hcl.Diagnostics{errorf(expr.Range().Ptr(), "Invalid value for variable",
			"var.%s is a %s; %q is not a valid %s value (only string variables take bare text).",
			v.Name, typeName(v.Type), raw, typeName(v.Type))}
	}
	return val, nil
}

// loadVarFile reads a .hcl or .json var file of name = value attributes.
func loadVarFile(path string) ([]VarOverride, hcl.Diagnostics) {
	src, err := readLimited(path)
	if err != nil {
		return nil, hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "Cannot read var file",
			Detail: fmt.Sprintf("%s. Check the -var-file path.", err), Subject: fileStart(path)}}
	}
	f, diags := parseFile(src, path)
	if diags.HasErrors() {
		return nil, diags
	}
	attrs, d := f.Body.JustAttributes()
	diags = append(diags, d...)
	names := make([]string, 0, len(attrs))
	for n := range attrs {
		names = append(names, n)
	}
	sort.Strings(names)
	var out []VarOverride
	for _, n := range names {
		a := attrs[n]
		val, d := a.Expr.Value(nil)
		diags = append(diags, d...)
		if d.HasErrors() {
			continue
		}
		out = append(out, VarOverride{Name: n, Value: val, Source: "-var-file " + path, Range: a.Range})
	}
	return out, diags
}

// resolveVariables applies the precedence defaults < EVALFLOW_VAR_name <
// -var-file < -var, converts to the declared types, and checks every
// variable has a value.
func resolveVariables(vars map[string]*Variable, opts LoadOptions, cell []CellVar) hcl.Diagnostics {
	var diags hcl.Diagnostics
	names := make([]string, 0, len(vars))
	for n := range vars {
		names = append(names, n)
	}
	sort.Strings(names)

	set := func(v *Variable, val cty.Value, source string, rng *hcl.Range) {
		conv, err := convert.Convert(val, v.Type)
		if err != nil {
			diags = append(diags, errorf(rng, "Invalid value for variable",
				"The value for var.%s from %s does not match its type %s: %s.", v.Name, source, typeName(v.Type), err))
			return
		}
		v.Value, v.Source, v.ValueRange = conv, source, *rng
		if v.ValueRange.Start.Line == 0 { // a made-up file: its value starts at 1:1
			v.ValueRange.Start, v.ValueRange.End = hcl.InitialPos, hcl.InitialPos
		}
	}

	for _, n := range names {
		v := vars[n]
		if v.Default != cty.NilVal {
			v.Value, v.Source, v.ValueRange = v.Default, "default", v.DefaultRange
		}
	}
	env := opts.Env
	if env == nil {
		env = os.Environ()
	}
	for _, kv := range env {
		if !strings.HasPrefix(kv, "EVALFLOW_VAR_") {
			continue
		}
		name, raw, _ := strings.Cut(strings.TrimPrefix(kv, "EVALFLOW_VAR_"), "=")
		v, ok := vars[name]
		if !ok {
			continue // like Terraform: stray environment variables are not errors
		}
		fn := fmt.Sprintf("<value for var.%s from EVALFLOW_VAR_%s>", name, name)
		val, d := parseRawValue(v, raw, fn)
		diags = append(diags, d...)
		if !d.HasErrors() {
			set(v, val, "env EVALFLOW_VAR_"+name, &hcl.Range{Filename: fn})
		}
	}
	for _, path := range opts.VarFiles {
		ovs, d := loadVarFile(path)
		diags = append(diags, d...)
		for _, ov := range ovs {
			v, ok := vars[ov.Name]
			if !ok {
				rng := ov.Range
				diags = append(diags, errorf(&rng, "Value for undeclared variable",
					"The var file sets %q, but no variable of that name is declared.%s", ov.Name, didYouMean(ov.Name, names)))
				continue
			}
			rng := ov.Range
			set(v, ov.Value, ov.Source, &rng)
		}
	}
	for _, arg := range opts.Vars {
		name, raw, d := ParseVarFlag(arg)
		diags = append(diags, d...)
		if d.HasErrors() {
			continue
		}
		v, ok := vars[name]
		if !ok {
			diags = append(diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Value for undeclared variable",
				Detail: fmt.Sprintf("A -var option sets %q, but the pipeline declares no variable of that name.%s Declared: %s.",
					name, didYouMean(name, names), strings.Join(names, ", ")),
				Subject: fileStart(fmt.Sprintf("<value for var.%s from -var>", name))})
			continue
		}
		fn := fmt.Sprintf("<value for var.%s from -var>", name)
		val, vd := parseRawValue(v, raw, fn)
		diags = append(diags, vd...)
		if !vd.HasErrors() {
			set(v, val, "-var", &hcl.Range{Filename: fn})
		}
	}
	for _, cv := range cell {
		// Converted when the sweep was expanded.
		vars[cv.Name].Value, vars[cv.Name].Source = cv.Value, "sweep"
	}
	for _, n := range names {
		v := vars[n]
		if v.Value == cty.NilVal {
			diags = append(diags, errorf(v.DeclRange.Ptr(), "No value for required variable",
				"var.%s has no default; set it with -var %s=VALUE, a -var-file, or EVALFLOW_VAR_%s.", n, n, n))
		}
	}
	return diags
}

// checkValidations evaluates each variable's validation blocks.
func checkValidations(vars map[string]*Variable, ctx func(v *Variable) *hcl.EvalContext) hcl.Diagnostics {
	var diags hcl.Diagnostics
	names := make([]string, 0, len(vars))
	for n := range vars {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		v := vars[n]
		if v.Value == cty.NilVal {
			continue
		}
		for _, val := range v.Validations {
			ec := ctx(v)
			res, d := val.Condition.Value(ec)
			if d.HasErrors() {
				diags = append(diags, d...)
				continue
			}
			if res.IsNull() || !res.IsKnown() || res.Type() != cty.Bool {
				diags = append(diags, errorf(val.Condition.Range().Ptr(), "Invalid validation condition",
					"The condition must be a bool."))
				continue
			}
			if res.True() {
				continue
			}
			msg, d := val.ErrorMessage.Value(ec)
			text := "the value is not valid"
			if !d.HasErrors() && msg.Type() == cty.String && !msg.IsNull() {
				text = msg.AsString()
			}
			diags = append(diags, errorf(val.Condition.Range().Ptr(), "Invalid value for variable",
				"%s (var.%s = %s from %s).%s This was checked by the validation rule here.", text, n, ctyString(v.Value), v.Source, containsHint(val.Condition, n, v.Value)))
		}
	}
	return diags
}

// ctyString renders a value compactly for messages.
func ctyString(v cty.Value) string {
	if v.IsNull() {
		return "null"
	}
	if !v.IsKnown() {
		return "(unknown)"
	}
	if v.Type() == cty.String {
		return fmt.Sprintf("%q", v.AsString())
	}
	b, err := ctyJSON(v)
	if err != nil {
		return v.GoString()
	}
	return string(b)
}

// containsHint is " Did you mean X?" for a rule of the form contains([...],
// var.NAME) that rejected a string close to one of the listed values.
func containsHint(cond hcl.Expression, name string, val cty.Value) string {
	call, ok := cond.(*hclsyntax.FunctionCallExpr)
	if !ok || call.Name != "contains" || len(call.Args) != 2 || val.IsNull() || !val.IsKnown() || val.Type() != cty.String {
		return ""
	}
	trav, d := hcl.AbsTraversalForExpr(call.Args[1])
	if d.HasErrors() || len(trav) != 2 || trav.RootName() != "var" {
		return ""
	}
	if a, ok := trav[1].(hcl.TraverseAttr); !ok || a.Name != name {
		return ""
	}
	list, d := call.Args[0].Value(nil)
	if d.HasErrors() || !list.CanIterateElements() {
		return ""
	}
	var valid []string
	for it := list.ElementIterator(); it.Next(); {
		_, e := it.Element()
		if e.IsKnown() && !e.IsNull() && e.Type() == cty.String {
			valid = append(valid, e.AsString())
		}
	}
	return didYouMean(val.AsString(), valid)
}

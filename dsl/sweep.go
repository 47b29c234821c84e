package dsl

import (
	"fmt"
	"sort"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/convert"
)

// A sweep block turns one pipeline into cells: every combination of the
// values it lists for declared variables.
//
//	sweep {
//	  model  = ["gpt-4o", "claude"]  # cartesian over named lists
//	  prompt = ["short", "long"]
//	  zip {                           # lists that advance together: one dimension
//	    temperature = [0, 0.7]
//	    top_p       = [1, 0.9]
//	  }
//	  exclude = [{ model = "claude", prompt = "long" }]
//	}
//
// The first dimension varies slowest (declaration order; -sweep flags come
// after the block's dimensions). `-sweep VAR=V1,V2` adds a dimension or
// replaces the block's list for VAR; `-var VAR=V` on a swept variable pins it
// to that one value.
type Sweep struct {
	Dims      []SweepDim
	Exclude   []map[string]cty.Value
	DeclRange hcl.Range
}

// SweepDim is one dimension: one variable, or a zip group of several whose
// lists have equal length (Values[i] holds the i-th value of each Name).
type SweepDim struct {
	Names  []string
	Values [][]cty.Value
	Range  hcl.Range
	Source string // "sweep block" or "-sweep"
}

// Cell is one combination of swept values.
type Cell struct {
	Index int
	ID    string // "model=gpt-4o,prompt=short"
	Vars  []CellVar
}

// CellVar is one swept variable's value in a cell.
type CellVar struct {
	Name  string
	Value cty.Value
}

// Value returns the cell's value for a variable.
func (c *Cell) Value(name string) (cty.Value, bool) {
	for _, v := range c.Vars {
		if v.Name == name {
			return v.Value, true
		}
	}
	return cty.NilVal, false
}

// MaxCells bounds a sweep's expansion (a typo in a list must not plan a
// billion cells).
const MaxCells = 100000

var sweepBlockSchema = &hcl.BodySchema{Blocks: []hcl.BlockHeaderSchema{{Type: "zip"}}}

// decodeSweepBlock reads a sweep block (dir: the pipeline's directory). Values are constants (functions
// allowed, no var or local: a sweep sets variables).
func decodeSweepBlock(block *hcl.Block, vars map[string]*Variable, dir string) (*Sweep, hcl.Diagnostics) {
	sw := &Sweep{DeclRange: block.DefRange}
	var diags hcl.Diagnostics
	var attrs hcl.Attributes
	var zips []*hcl.Block
	if sb, ok := block.Body.(*hclsyntax.Body); ok {
		// Native syntax: attributes and zip blocks side by side (a partial
		// content's remainder still refuses the blocks in JustAttributes).
		attrs = hcl.Attributes{}
		for n, a := range sb.Attributes {
			attrs[n] = a.AsHCLAttribute()
		}
		for _, b := range sb.Blocks {
			if b.Type != "zip" || len(b.Labels) > 0 {
				diags = append(diags, errorf(b.DefRange().Ptr(), "Unexpected block in sweep",
					"A sweep block holds lists (name = [values]), zip { } blocks and exclude; %q is none of them.", b.Type))
				continue
			}
			zips = append(zips, b.AsHCLBlock())
		}
	} else {
		content, remain, d := block.Body.PartialContent(sweepBlockSchema)
		diags = append(diags, d...)
		a, d := remain.JustAttributes()
		diags = append(diags, d...)
		attrs, zips = a, content.Blocks
	}
	ctx := &hcl.EvalContext{Functions: Functions(dir)} // file() and friends read relative to the pipeline, as everywhere
	names := declaredNames(vars)
	seen := map[string]hcl.Range{}
	claim := func(name string, rng hcl.Range) bool {
		if prev, dup := seen[name]; dup {
			diags = append(diags, errorf(&rng, "Variable swept twice",
				"var.%s is already swept at %s; a variable takes one list.", name, prev))
			return false
		}
		if _, ok := vars[name]; !ok {
			diags = append(diags, errorf(&rng, "Sweep over an undeclared variable",
				"The sweep lists %q, but no variable of that name is declared.%s Declared: %s.", name, didYouMean(name, names), strings.Join(names, ", ")))
			return false
		}
		seen[name] = rng
		return true
	}
	list := func(a *hcl.Attribute) ([]cty.Value, bool) {
		v, d := a.Expr.Value(ctx)
		diags = append(diags, d...)
		if d.HasErrors() {
			return nil, false
		}
		if v.IsNull() || !v.IsKnown() || !(v.Type().IsTupleType() || v.Type().IsListType() || v.Type().IsSetType()) {
			diags = append(diags, errorf(a.Expr.Range().Ptr(), "Sweep values must be a list",
				"Write %s = [value, value, ...]; the sweep runs one cell per value.", a.Name))
			return nil, false
		}
		if v.LengthInt() == 0 {
			diags = append(diags, errorf(a.Expr.Range().Ptr(), "Empty sweep list",
				"%s = [] would make no cells; list at least one value.", a.Name))
			return nil, false
		}
		var out []cty.Value
		for it := v.ElementIterator(); it.Next(); {
			_, e := it.Element()
			out = append(out, e)
		}
		return out, true
	}
	for _, a := range sortedAttrs(attrs) {
		if a.Name == "exclude" {
			sw.Exclude = append(sw.Exclude, decodeExclude(a, ctx, &diags)...)
			continue
		}
		if !claim(a.Name, a.NameRange) {
			continue
		}
		vals, ok := list(a)
		if !ok {
			continue
		}
		dim := SweepDim{Names: []string{a.Name}, Range: a.Expr.Range(), Source: "sweep block"}
		for _, v := range vals {
			dim.Values = append(dim.Values, []cty.Value{v})
		}
		sw.Dims = append(sw.Dims, dim)
	}
	for _, zb := range zips {
		zattrs, d := zb.Body.JustAttributes()
		diags = append(diags, d...)
		dim := SweepDim{Range: zb.DefRange, Source: "sweep block"}
		var lists [][]cty.Value
		var first *hcl.Attribute
		for _, a := range sortedAttrs(zattrs) {
			if !claim(a.Name, a.NameRange) {
				continue
			}
			vals, ok := list(a)
			if !ok {
				continue
			}
			if first != nil && len(vals) != len(lists[0]) {
				diags = append(diags, errorf(a.Expr.Range().Ptr(), "Zipped lists differ in length",
					"In a zip block every list advances together: %s has %d values, %s has %d.", a.Name, len(vals), first.Name, len(lists[0])))
				continue
			}
			if first == nil {
				first = a
			}
			dim.Names = append(dim.Names, a.Name)
			lists = append(lists, vals)
		}
		if len(lists) == 0 {
			continue
		}
		for i := range lists[0] {
			row := make([]cty.Value, len(lists))
			for j := range lists {
				row[j] = lists[j][i]
			}
			dim.Values = append(dim.Values, row)
		}
		sw.Dims = append(sw.Dims, dim)
	}
	// Dimensions in source order (zip blocks where they are written).
	sort.SliceStable(sw.Dims, func(i, j int) bool { return sw.Dims[i].Range.Start.Byte < sw.Dims[j].Range.Start.Byte })
	for _, ex := range sw.Exclude {
		for n := range ex {
			if _, ok := seen[n]; !ok {
				diags = append(diags, errorf(sw.DeclRange.Ptr(), "Exclude names a variable the sweep does not list",
					"exclude sets %q, which is not swept; exclude matches cells by swept values.%s", n, didYouMean(n, sortedKeys(seen))))
			}
		}
	}
	return sw, diags
}

func decodeExclude(a *hcl.Attribute, ctx *hcl.EvalContext, diags *hcl.Diagnostics) []map[string]cty.Value {
	v, d := a.Expr.Value(ctx)
	*diags = append(*diags, d...)
	if d.HasErrors() {
		return nil
	}
	bad := func() []map[string]cty.Value {
		*diags = append(*diags, errorf(a.Expr.Range().Ptr(), "Invalid exclude",
			"exclude is a list of objects naming swept values: exclude = [{ model = \"a\", prompt = \"long\" }]."))
		return nil
	}
	if v.IsNull() || !v.IsKnown() || !(v.Type().IsTupleType() || v.Type().IsListType()) {
		return bad()
	}
	var out []map[string]cty.Value
	for it := v.ElementIterator(); it.Next(); {
		_, e := it.Element()
		if e.IsNull() || !(e.Type().IsObjectType() || e.Type().IsMapType()) {
			return bad()
		}
		m := map[string]cty.Value{}
		for k, x := range e.AsValueMap() {
			m[k] = x
		}
		out = append(out, m)
	}
	return out
}

func sortedAttrs(attrs hcl.Attributes) []*hcl.Attribute {
	out := make([]*hcl.Attribute, 0, len(attrs))
	for _, a := range attrs {
		out = append(out, a)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Range.Start.Byte < out[j].Range.Start.Byte })
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func declaredNames(vars map[string]*Variable) []string { return sortedKeys(vars) }

// applySweepFlags adds or replaces dimensions from -sweep VAR=V1,V2 and
// drops dimensions pinned by -var. It returns nil when nothing is swept.
func applySweepFlags(sw *Sweep, vars map[string]*Variable, opts LoadOptions) (*Sweep, hcl.Diagnostics) {
	var diags hcl.Diagnostics
	names := declaredNames(vars)
	pinned := map[string]bool{}
	for _, arg := range opts.Vars {
		if n, _, d := ParseVarFlag(arg); !d.HasErrors() {
			pinned[n] = true
		}
	}
	if sw == nil && len(opts.Sweeps) == 0 {
		return nil, nil
	}
	if sw == nil {
		sw = &Sweep{}
	}
	flagged := map[string]bool{}
	for _, arg := range opts.Sweeps {
		name, raw, d := ParseVarFlag(arg)
		if d.HasErrors() {
			diags = append(diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Invalid -sweep option",
				Detail:  fmt.Sprintf("-sweep %q must be a variable name, an equals sign and values separated by commas: -sweep model=a,b (or an HCL list when a value holds a comma: -sweep 'graph=[\"a,b.ttl\",\"c.ttl\"]').", arg),
				Subject: fileStart("<-sweep " + arg + ">")})
			continue
		}
		fn := fmt.Sprintf("<values for var.%s from -sweep>", name)
		v, ok := vars[name]
		if !ok {
			diags = append(diags, errorf(fileStart(fn), "Sweep over an undeclared variable",
				"-sweep sets %q, but the pipeline declares no variable of that name.%s Declared: %s.", name, didYouMean(name, names), strings.Join(names, ", ")))
			continue
		}
		if flagged[name] {
			diags = append(diags, errorf(fileStart(fn), "Variable swept twice", "-sweep %s is given twice; list every value in one -sweep.", name))
			continue
		}
		if pinned[name] {
			diags = append(diags, errorf(fileStart(fn), "Variable both set and swept", "-var and -sweep both set %s; keep one.", name))
			continue
		}
		flagged[name] = true
		vals, d := parseSweepValues(v, raw, fn)
		diags = append(diags, d...)
		if d.HasErrors() {
			continue
		}
		dim := SweepDim{Names: []string{name}, Range: *fileStart(fn), Source: "-sweep"}
		for _, x := range vals {
			dim.Values = append(dim.Values, []cty.Value{x})
		}
		replaced := false
		for i, old := range sw.Dims {
			if len(old.Names) == 1 && old.Names[0] == name {
				sw.Dims[i], replaced = dim, true
			} else if contains(old.Names, name) {
				diags = append(diags, errorf(fileStart(fn), "Cannot re-sweep a zipped variable",
					"var.%s is zipped with %s in the sweep block at %s; edit the zip block instead.", name, strings.Join(old.Names, ", "), old.Range))
				replaced = true
			}
		}
		if !replaced {
			sw.Dims = append(sw.Dims, dim)
		}
	}
	// -var pins a swept variable to its one value.
	kept := sw.Dims[:0]
	for _, dim := range sw.Dims {
		pin := false
		for _, n := range dim.Names {
			if pinned[n] {
				pin = true
				if len(dim.Names) > 1 {
					diags = append(diags, errorf(dim.Range.Ptr(), "Cannot pin a zipped variable",
						"-var %s sets a variable zipped with %s; set its partners too with -var, or remove the zip.", n, strings.Join(dim.Names, ", ")))
				}
			}
		}
		if !pin {
			kept = append(kept, dim)
		}
	}
	sw.Dims = kept
	if len(sw.Dims) == 0 {
		return nil, diags
	}
	return sw, diags
}

// parseSweepValues splits a -sweep value list: an HCL list when it starts
// with "[", else comma-separated values, each read as -var would read it.
func parseSweepValues(v *Variable, raw, filename string) ([]cty.Value, hcl.Diagnostics) {
	if strings.HasPrefix(strings.TrimSpace(raw), "[") {
		if d := checkSource([]byte(raw), filename, hcl.InitialPos, true); d.HasErrors() {
			return nil, d
		}
		expr, diags := hclsyntax.ParseExpression([]byte(raw), filename, hcl.InitialPos)
		if diags.HasErrors() {
			return nil, diags
		}
		val, d := expr.Value(nil)
		if d.HasErrors() {
			return nil, d
		}
		if !val.Type().IsTupleType() && !val.Type().IsListType() || val.LengthInt() == 0 {
			return nil, hcl.Diagnostics{errorf(expr.Range().Ptr(), "Sweep values must be a list", "Write -sweep '%s=[\"a\",\"b\"]' with at least one value.", v.Name)}
		}
		var out []cty.Value
		for it := val.ElementIterator(); it.Next(); {
			_, e := it.Element()
			out = append(out, e)
		}
		return out, nil
	}
	var out []cty.Value
	var diags hcl.Diagnostics
	for _, part := range strings.Split(raw, ",") {
		x, d := parseRawValue(v, part, filename)
		diags = append(diags, d...)
		out = append(out, x)
	}
	return out, diags
}

// where is the range diagnostics about the sweep as a whole point at: the
// sweep block, or the first -sweep when there is no block.
func (sw *Sweep) where() *hcl.Range {
	if sw.DeclRange.Filename == "" && len(sw.Dims) > 0 {
		r := sw.Dims[0].Range
		return &r
	}
	return sw.DeclRange.Ptr()
}

// expand lists the cells of a sweep: the cartesian product of its
// dimensions, first dimension slowest, minus the excluded combinations.
// Values are converted to each variable's type here, so a wrong value is
// reported at its list before anything runs.
func (sw *Sweep) expand(vars map[string]*Variable) ([]Cell, hcl.Diagnostics) {
	var diags hcl.Diagnostics
	for di := range sw.Dims {
		dim := &sw.Dims[di]
		for vi, row := range dim.Values {
			for j, n := range dim.Names {
				cv, err := convert.Convert(row[j], vars[n].Type)
				if err != nil {
					diags = append(diags, errorf(dim.Range.Ptr(), "Invalid value for variable",
						"Sweep value %d for var.%s (%s) does not match its type %s: %s.", vi+1, n, ctyString(row[j]), typeName(vars[n].Type), err))
					continue
				}
				row[j] = cv
			}
		}
	}
	if diags.HasErrors() {
		return nil, diags
	}
	total := 1
	for _, dim := range sw.Dims {
		total *= len(dim.Values)
		if total > MaxCells {
			return nil, hcl.Diagnostics{errorf(sw.where(), "Sweep too large",
				"The sweep expands to more than %d cells; split it into several runs.", MaxCells)}
		}
	}
	var cells []Cell
	idx := make([]int, len(sw.Dims))
	for k := 0; k < total; k++ {
		r := k
		for d := len(sw.Dims) - 1; d >= 0; d-- {
			idx[d] = r % len(sw.Dims[d].Values)
			r /= len(sw.Dims[d].Values)
		}
		var c Cell
		var parts []string
		for d, dim := range sw.Dims {
			for j, n := range dim.Names {
				v := dim.Values[idx[d]][j]
				c.Vars = append(c.Vars, CellVar{Name: n, Value: v})
				parts = append(parts, n+"="+CellValueText(v))
			}
		}
		if sw.excluded(&c) {
			continue
		}
		c.ID = strings.Join(parts, ",")
		c.Index = len(cells)
		cells = append(cells, c)
	}
	if len(cells) == 0 {
		diags = append(diags, errorf(sw.where(), "Sweep has no cells", "exclude removes every combination; nothing would run."))
	}
	seen := map[string]int{}
	for _, c := range cells {
		if prev, dup := seen[c.ID]; dup {
			diags = append(diags, errorf(sw.where(), "Duplicate sweep cell",
				"Cells %d and %d (counting from 0) are both %s: a list repeats a value.", prev, c.Index, c.ID))
			break
		}
		seen[c.ID] = c.Index
	}
	return cells, diags
}

func (sw *Sweep) excluded(c *Cell) bool {
	for _, ex := range sw.Exclude {
		match := len(ex) > 0
		for n, want := range ex {
			got, ok := c.Value(n)
			if !ok {
				match = false
				break
			}
			cv, err := convert.Convert(want, got.Type())
			if err != nil || !cv.Equals(got).True() {
				match = false
				break
			}
		}
		if match {
			return true
		}
	}
	return false
}

// CellValueText renders a swept value for cell ids and columns: strings as
// they are, everything else as JSON.
func CellValueText(v cty.Value) string {
	if !v.IsNull() && v.IsKnown() && v.Type() == cty.String {
		return v.AsString()
	}
	return string(ValueJSON(v))
}

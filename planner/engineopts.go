package planner

import (
	"errors"
	"fmt"
	"maps"
	"path/filepath"

	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"

	"github.com/evalflow/evalflow/dsl"
	"github.com/evalflow/evalflow/engine"
)

// engineOptions returns the options e's executor is built with: the
// block's options with every path option its kind registered
// (engine.PathOption) resolved against the pipeline's directory by
// engine.ResolvePaths, so a relative files, load, module, oxigraph_dir,
// node, python … value names the same file whatever directory evalflow
// runs from, exactly like the block's path and a dataset's source. A
// fromcwd(...) value is already absolute and stays as it is. When the
// block declares a root, data paths (engine.DataPath) must resolve inside
// it; one that does not is an error at the option's place, reported
// before any engine starts or any item runs. The block's own Options map
// is not modified.
func engineOptions(reg *engine.Registry, p *dsl.Pipeline, e *dsl.Engine) (map[string]any, hcl.Diagnostics) {
	specs := reg.PathOptions(e.Kind)
	if len(specs) == 0 || len(e.Options) == 0 {
		return e.Options, nil
	}
	root := declaredRoot(p, e)
	out := maps.Clone(e.Options)
	var diags hcl.Diagnostics
	for _, o := range specs {
		v, ok := out[o.Name]
		if !ok {
			continue
		}
		r, err := engine.ResolvePaths(o, v, p.Dir, root)
		if err != nil {
			var pe *engine.OptionPathError
			elem := any(nil)
			if errors.As(err, &pe) {
				elem = pe.Elem
			}
			summary, hint := "Invalid engine option path", ""
			var ee *engine.Error
			if errors.As(err, &ee) {
				summary = "Engine option path outside the engine's root"
				hint = fmt.Sprintf(" An option naming data (%s) stays inside the engine's declared root, like every path from data: move the file under %s, or declare a root that holds it.", o.Name, root)
			}
			diags = append(diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: summary,
				Detail:  fmt.Sprintf("engine.%s (kind %q) %v.%s", e.Name, e.Kind, err, hint),
				Subject: e.OptionRange(o.Name, elem).Ptr()})
			continue
		}
		out[o.Name] = r
	}
	return out, diags
}

// declaredRoot returns e's root attribute resolved as nodes.Engine resolves
// it (relative to the pipeline's directory, symlinks followed), or "" when
// the block declares none, declares an empty one, or one that does not
// evaluate to a string (nodes.NewEngine reports that).
func declaredRoot(p *dsl.Pipeline, e *dsl.Engine) string {
	if e.Root == nil {
		return ""
	}
	v, diags := e.Root.Value(p.EvalContext())
	if diags.HasErrors() || v.IsNull() || !v.IsKnown() || v.Type() != cty.String || v.AsString() == "" {
		return ""
	}
	dir := v.AsString()
	if !filepath.IsAbs(dir) {
		dir = filepath.Join(p.Dir, dir)
	}
	r, err := engine.Resolve(dir)
	if err != nil {
		return filepath.Clean(dir)
	}
	return r
}

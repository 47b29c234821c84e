package nodes

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"

	"github.com/evalflow/evalflow/engine"
)

// Containment: every path that comes from data (an item's db, a graph or
// file name) must resolve, after symlinks, inside its engine's root. The
// root is the engine block's root attribute or, when it has none, the
// directory part of the path template before its first item. reference
// ("dbs/${item.db}.sqlite" → dbs). A file engine whose root is neither
// declared nor derivable is refused when the pipeline is planned. Engines
// whose location is a name on a server (engine.NameLocator) have no root.

// rootOf computes the engine's root; diags explain a missing one.
func (e *Engine) rootOf() hcl.Diagnostics {
	if _, byName := e.Exec.(engine.NameLocator); byName {
		return nil
	}
	b := e.Block
	if b.Root != nil {
		v, diags := b.Root.Value(e.ctx)
		if diags.HasErrors() {
			return diags
		}
		if v.IsNull() || !v.IsKnown() || v.Type() != cty.String {
			return hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "Invalid engine root",
				Detail: "root must be a string: the directory every path from data must stay inside.", Subject: b.Root.Range().Ptr()}}
		}
		e.declared = true
		return e.setRoot(v.AsString())
	}
	if b.Path == nil {
		return hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "Engine needs a root",
			Detail:  fmt.Sprintf("engine.%s (kind %q) opens each item's db as a file path, so the path comes from data and must stay inside a declared directory: add root = \"DIR\" (for example the databases directory), or a path = \"DIR/${item.db}.%s\" template whose directory is the root.", b.Name, b.Kind, b.Kind),
			Subject: b.DeclRange.Ptr()}}
	}
	prefix, fromData, ok := literalPrefix(b.Path, e.ctx)
	if !fromData {
		// The path does not depend on the item: its directory is the root.
		v, diags := b.Path.Value(e.ctx)
		if diags.HasErrors() || v.IsNull() || v.Type() != cty.String {
			return nil // Locate reports the error per item
		}
		return e.setRoot(filepath.Dir(v.AsString()))
	}
	i := strings.LastIndex(prefix, "/")
	if !ok || i < 0 {
		return hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "Engine path needs a root",
			Detail:  fmt.Sprintf("engine.%s's path has no literal directory before its first item. reference, so nothing says which directory data may name files in: declare root = \"DIR\" in the engine block (the curated pipelines use the databases or graph directory), or write the path as \"DIR/${item.db}...\".", b.Name),
			Subject: b.Path.Range().Ptr()}}
	}
	dir := prefix[:i]
	if dir == "" {
		dir = "/"
	}
	return e.setRoot(dir)
}

func (e *Engine) setRoot(dir string) hcl.Diagnostics {
	if dir == "" {
		e.root = ""
		return nil
	}
	if !filepath.IsAbs(dir) {
		dir = filepath.Join(e.dir, dir)
	}
	r, err := engine.Resolve(dir)
	if err != nil {
		r = filepath.Clean(dir)
	}
	e.root = r
	return nil
}

// literalPrefix evaluates the parts of a path template before its first
// item. reference. fromData is false when the expression does not refer to
// item at all; ok is false when the expression is not a template (a
// conditional, a function call on item, …) and so has no literal prefix.
func literalPrefix(expr hcl.Expression, ctx *hcl.EvalContext) (prefix string, fromData, ok bool) {
	refersItem := func(x hcl.Expression) bool {
		for _, t := range x.Variables() {
			if t.RootName() == "item" {
				return true
			}
		}
		return false
	}
	if !refersItem(expr) {
		return "", false, true
	}
	var parts []hclsyntax.Expression
	switch x := expr.(type) {
	case *hclsyntax.TemplateExpr:
		parts = x.Parts
	case *hclsyntax.TemplateWrapExpr:
		parts = []hclsyntax.Expression{x.Wrapped}
	default:
		return "", true, false
	}
	var b strings.Builder
	for _, p := range parts {
		if refersItem(p) {
			return b.String(), true, true
		}
		v, diags := p.Value(ctx)
		if diags.HasErrors() || v.IsNull() || !v.IsKnown() || v.Type() != cty.String {
			return b.String(), true, true
		}
		b.WriteString(v.AsString())
	}
	return b.String(), true, true
}

// Root returns the engine's resolved root ("" for engines located by name,
// or a declared empty root: then no path from data is accepted).
func (e *Engine) Root() string { return e.root }

// HasRoot reports whether paths from data have a root to stay in.
func (e *Engine) HasRoot() bool {
	_, byName := e.Exec.(engine.NameLocator)
	return !byName && (e.root != "" || e.declared)
}

// contain checks a located path against the root.
func (e *Engine) contain(it string, p string) error {
	if _, byName := e.Exec.(engine.NameLocator); byName || p == "" || !e.bound {
		return nil
	}
	if err := engine.Within(e.root, p); err != nil {
		return fmt.Errorf("engine.%s, item %q: %w", e.Block.Name, it, err)
	}
	return nil
}

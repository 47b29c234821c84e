package main

import (
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"

	"github.com/evalflow/evalflow/dsl"
	"github.com/evalflow/evalflow/llm"
	"github.com/evalflow/evalflow/planner"
	"github.com/evalflow/evalflow/rundir"
	"github.com/evalflow/evalflow/store"
)

// provenancer is implemented by stages that call a model (generate's llm
// source): the endpoint, what its API reported serving, and the hashes of
// the prompt templates the stage renders.
type provenancer interface {
	Provenance() llm.Provenance
}

// provenancers is a stage calling several models (score's LLM judges).
type provenancers interface {
	Provenances() []llm.Provenance
}

// cellPlans returns the cells' plans in cell order.
func cellPlans(cells []*cellRun) []*planner.Plan {
	out := make([]*planner.Plan, len(cells))
	for i, c := range cells {
		out[i] = c.pl
	}
	return out
}

// modelProvenance lists the model blocks the plans' stages call, for the
// manifest's "models": one entry per model block and endpoint, its prompt
// hashes keyed "stage.NAME.TEMPLATE" over every stage calling it. In a
// sweep, cells whose entries are equal share one; an entry that does not
// apply to every cell lists its cells. Call it after the run: resolved
// models and system fingerprints are what the endpoints reported so far.
func modelProvenance(pls []*planner.Plan) []rundir.ManifestModel {
	var out []rundir.ManifestModel
	idx := map[string]int{} // entry identity → index in out
	for _, pl := range pls {
		cell := ""
		if pl.Pipeline != nil && pl.Pipeline.Cell != nil {
			cell = pl.Pipeline.Cell.ID
		}
		byEndpoint := map[string]*rundir.ManifestModel{}
		var order []string
		type called struct {
			n *planner.Node
			p llm.Provenance
		}
		var calls []called
		for _, n := range pl.Order {
			if pv, ok := n.Stage.(provenancer); ok {
				calls = append(calls, called{n, pv.Provenance()})
			}
			if pv, ok := n.Stage.(provenancers); ok {
				for _, p := range pv.Provenances() {
					calls = append(calls, called{n, p})
				}
			}
		}
		for _, c := range calls {
			n, p := c.n, c.p
			k := strings.Join([]string{p.Name, p.Provider, p.BaseURL, p.RequestedModel}, "\x00")
			m := byEndpoint[k]
			if m == nil {
				m = &rundir.ManifestModel{Name: p.Name, Provider: p.Provider, BaseURL: p.BaseURL, RequestedModel: p.RequestedModel,
					ResolvedModels: []string{}, SystemFingerprints: []string{}, PromptSHA256: map[string]string{}}
				byEndpoint[k] = m
				order = append(order, k)
			}
			m.ResolvedModels = union(m.ResolvedModels, p.ResolvedModels)
			m.SystemFingerprints = union(m.SystemFingerprints, p.SystemFingerprints)
			for t, h := range p.PromptSHA256 {
				m.PromptSHA256[n.Name()+"."+t] = h
			}
		}
		for _, k := range order {
			m := byEndpoint[k]
			prompts, _ := json.Marshal(m.PromptSHA256) // keys sorted
			id := k + "\x00" + string(prompts)
			if i, ok := idx[id]; ok {
				out[i].ResolvedModels = union(out[i].ResolvedModels, m.ResolvedModels)
				out[i].SystemFingerprints = union(out[i].SystemFingerprints, m.SystemFingerprints)
				if cell != "" {
					out[i].Cells = append(out[i].Cells, cell)
				}
				continue
			}
			if cell != "" {
				m.Cells = []string{cell}
			}
			idx[id] = len(out)
			out = append(out, *m)
		}
	}
	// An entry every cell shares needs no cell list.
	for i := range out {
		if len(out[i].Cells) == len(pls) {
			out[i].Cells = nil
		}
	}
	return out
}

// union returns the sorted distinct strings of a and b, never nil.
func union(a, b []string) []string {
	set := map[string]bool{}
	for _, s := range a {
		set[s] = true
	}
	for _, s := range b {
		set[s] = true
	}
	return append([]string{}, slices.Sorted(maps.Keys(set))...)
}

// inputFiles lists the regular files the plans' stage blocks and engine
// options name — a replay's predictions file, a gold file — with their
// SHA-256, for the manifest's "inputs". The dataset and files a variable
// names are left out: the fingerprint has them. In a sweep, a file that
// differs between cells is listed per cell ("NAME [cell ID]").
func inputFiles(pls []*planner.Plan) []rundir.ManifestInput {
	per := make([]map[string]rundir.ManifestInput, len(pls))
	names := map[string]bool{}
	for i, pl := range pls {
		per[i] = blockFiles(pl.Pipeline)
		for n := range per[i] {
			names[n] = true
		}
	}
	var out []rundir.ManifestInput
	for _, n := range slices.Sorted(maps.Keys(names)) {
		first, ok := per[0][n]
		same := ok
		for _, m := range per[1:] {
			if in, ok := m[n]; !ok || in != first {
				same = false
			}
		}
		if same {
			out = append(out, first)
			continue
		}
		for i, m := range per {
			if in, ok := m[n]; ok {
				if c := pls[i].Pipeline.Cell; c != nil {
					in.Name += " [cell " + c.ID + "]"
				}
				out = append(out, in)
			}
		}
	}
	return out
}

// blockFiles finds the string attributes of p's stage blocks (nested
// blocks included) and engine options that name a regular file, resolved
// as the run resolves a variable's path: against the pipeline's directory,
// else the working directory. Expressions that need an item are skipped.
func blockFiles(p *dsl.Pipeline) map[string]rundir.ManifestInput {
	out := map[string]rundir.ManifestInput{}
	if p == nil {
		return out
	}
	covered := map[string]bool{}
	for _, n := range p.VariableNames() {
		if s, ok := dsl.GoValue(p.Variables[n].Value).(string); ok && s != "" {
			covered[absPath(resolveInput(p, s))] = true
		}
	}
	for _, ds := range p.Datasets {
		covered[absPath(ds.Source)] = true
	}
	add := func(name, s string) {
		if s == "" || len(s) > 4096 || strings.ContainsAny(s, "\n\x00") {
			return // text, not a path
		}
		path := resolveInput(p, s)
		if covered[absPath(path)] {
			return
		}
		if st, err := os.Stat(path); err != nil || !st.Mode().IsRegular() {
			return
		}
		if h := store.HashFile(path); h != "" {
			out[name] = rundir.ManifestInput{Name: name, Path: path, SHA256: h}
		}
	}
	for _, s := range p.Stages {
		bodyFiles("stage."+s.Name, s.Body, s.Ctx, add)
	}
	for _, e := range p.Engines {
		for k, v := range e.Options {
			if s, ok := v.(string); ok {
				add("engine."+e.Name+".options."+k, s)
			}
		}
	}
	return out
}

// bodyFiles calls add for every attribute of body (and of its nested
// blocks, addressed TYPE.LABEL) whose value is a known string.
func bodyFiles(prefix string, body hcl.Body, ctx *hcl.EvalContext, add func(name, s string)) {
	if body == nil {
		return
	}
	value := func(name string, expr hcl.Expression) {
		v, diags := expr.Value(ctx)
		if diags.HasErrors() || !v.IsWhollyKnown() || v.IsNull() || v.Type() != cty.String {
			return
		}
		add(prefix+"."+name, v.AsString())
	}
	sb, ok := body.(*hclsyntax.Body)
	if !ok { // a JSON pipeline file
		attrs, _ := body.JustAttributes()
		for _, n := range slices.Sorted(maps.Keys(attrs)) {
			value(n, attrs[n].Expr)
		}
		return
	}
	for _, n := range slices.Sorted(maps.Keys(sb.Attributes)) {
		value(n, sb.Attributes[n].Expr)
	}
	for _, b := range sb.Blocks {
		bodyFiles(strings.Join(append([]string{prefix, b.Type}, b.Labels...), "."), b.Body, ctx, add)
	}
}

// resolveInput resolves a relative path as fingerprint does for a
// variable's value: against the pipeline's directory when a file is there,
// else as given (relative to the working directory, as fromcwd does).
func resolveInput(p *dsl.Pipeline, s string) string {
	if filepath.IsAbs(s) {
		return s
	}
	path := filepath.Join(p.Dir, s)
	if _, err := os.Stat(path); err != nil {
		return s
	}
	return path
}

func absPath(p string) string {
	if a, err := filepath.Abs(p); err == nil {
		return a
	}
	return filepath.Clean(p)
}

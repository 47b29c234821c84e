package planner

import (
	"fmt"
	"strings"

	"github.com/hashicorp/hcl/v2"

	"github.com/evalflow/evalflow/dsl"
	"github.com/evalflow/evalflow/nodes"
)

// Branches returns the pipeline's source stages (kinds that take no input:
// generate), in declaration order, when there are several: each is a
// branch — two prompts or two models — and the stages downstream of it run
// once per branch, joined where a stage lists several inputs
// (input = [stage.exec_a, stage.exec_b]). A run runs every branch as a
// cell named branch=NAME. Nil for a pipeline with one source.
func Branches(p *dsl.Pipeline, reg *nodes.Registry) []string {
	if reg == nil {
		reg = nodes.Default
	}
	var out []string
	for _, s := range p.Stages {
		if k, ok := reg.Lookup(s.Kind); ok && k.Source() {
			out = append(out, s.Name)
		}
	}
	if len(out) < 2 {
		return nil
	}
	return out
}

// branchStages selects branch's stages: the source itself and every stage
// that takes its input, directly or not, from it — each a copy whose Input
// is the one of its inputs on the branch. Other sources and the stages
// only they feed are left out.
func branchStages(p *dsl.Pipeline, branch string, reg *nodes.Registry) ([]*dsl.Stage, hcl.Diagnostics) {
	var src *dsl.Stage
	for _, s := range p.Stages {
		if s.Name == branch {
			src = s
		}
	}
	if src == nil {
		return nil, hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "Unknown branch",
			Detail: fmt.Sprintf("No source stage %q.", branch)}}
	}
	in := map[string]*dsl.Stage{branch: src}
	var diags hcl.Diagnostics
	for changed := true; changed; {
		changed = false
		for _, s := range p.Stages {
			if in[s.Name] != nil || len(s.Inputs) == 0 {
				continue
			}
			var on []dsl.Ref
			for _, r := range s.Inputs {
				if in[r.Name] != nil {
					on = append(on, r)
				}
			}
			if len(on) == 0 {
				continue
			}
			if len(on) > 1 {
				var names []string
				for _, r := range on {
					names = append(names, r.String())
				}
				rng := on[1].Range
				diags = append(diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Ambiguous input",
					Detail:  fmt.Sprintf("stage.%s takes input from %s, which are all on branch %s; each input of a join must come from a different branch.", s.Name, strings.Join(names, " and "), branch),
					Subject: &rng})
				continue
			}
			cp := *s
			ref := on[0]
			cp.Input = &ref
			in[s.Name] = &cp
			changed = true
		}
	}
	var out []*dsl.Stage
	for _, s := range p.Stages {
		if c := in[s.Name]; c != nil {
			out = append(out, c)
		}
	}
	return out, diags
}

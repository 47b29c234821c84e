package dsl

import (
	"fmt"
	"path/filepath"
	"sort"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
)

// Model is a model block: one model endpoint, used by generate (source =
// "llm"), refine (through generate) and LLM-judge metrics. Stages and
// metric blocks refer to it as model.NAME, which evaluates to Value.
//
//	model "gpt" {
//	  provider    = "openai"                  # openai (and compatible servers) | anthropic | gemini
//	  base_url    = "http://localhost:8000/v1" # default: the provider's
//	  model       = "gpt-4o-mini"
//	  api_key_env = "OPENAI_API_KEY"           # default per provider; keys only come from the environment
//	  temperature = 0
//	  max_tokens  = 512
//	  max_concurrency     = 8
//	  requests_per_minute = 500
//	  price = { input = 0.15, output = 0.60 }  # dollars per million tokens
//	  max_cost = 5
//	}
//
// Model never holds an API key, so nothing derived from it (the manifest,
// plans, cache entries) can leak one.
type Model struct {
	Name     string
	Provider string
	// Value is the block's evaluated attributes as an object, plus name and
	// block = "model"; what model.NAME evaluates to.
	Value     cty.Value
	DeclRange hcl.Range
}

// ModelProviders are the provider names a model block accepts.
var ModelProviders = []string{"openai", "anthropic", "gemini"}

type modelAttr struct {
	name string
	ty   cty.Type
}

var modelAttrs = []modelAttr{
	{"provider", cty.String}, {"base_url", cty.String}, {"model", cty.String}, {"api_key_env", cty.String},
	{"system", cty.String}, {"temperature", cty.Number}, {"top_p", cty.Number}, {"max_tokens", cty.Number},
	{"seed", cty.Number}, {"stop", cty.List(cty.String)}, {"timeout", cty.DynamicPseudoType},
	{"max_retries", cty.Number}, {"backoff_base", cty.DynamicPseudoType}, {"backoff_max", cty.DynamicPseudoType},
	{"max_concurrency", cty.Number}, {"requests_per_minute", cty.Number}, {"tokens_per_minute", cty.Number},
	{"max_cost", cty.Number}, {"price", cty.Object(map[string]cty.Type{"input": cty.Number, "output": cty.Number})},
	{"cache", cty.Bool}, {"cache_dir", cty.String},
}

func modelBlockSchema() *hcl.BodySchema {
	s := &hcl.BodySchema{}
	for _, a := range modelAttrs {
		s.Attributes = append(s.Attributes, hcl.AttributeSchema{Name: a.name, Required: a.name == "model"})
	}
	return s
}

func decodeModelBlock(block *hcl.Block, ctx *hcl.EvalContext, vars map[string]*Variable) (*Model, hcl.Diagnostics) {
	a := DecodeAttrs(block.Body, modelBlockSchema(), ctx, block.DefRange)
	m := &Model{Name: block.Labels[0], DeclRange: block.DefRange}
	obj := map[string]cty.Value{"name": cty.StringVal(m.Name), "block": cty.StringVal("model")}
	for _, at := range modelAttrs {
		if !a.Has(at.name) {
			continue
		}
		v, ok := a.Value(at.name, at.ty)
		if !ok {
			continue
		}
		obj[at.name] = v
	}
	m.Provider = a.String("provider", "openai")
	if !contains(ModelProviders, m.Provider) {
		d := InvalidChoice(vars, a.Expr("provider"), block.DefRange, "Unknown model provider", "a provider", m.Provider, ModelProviders)
		d.Detail += " openai also covers OpenAI-compatible servers through base_url."
		a.Diags = append(a.Diags, d)
	}
	checkRange := func(name string, lo, hi float64) {
		if v, ok := obj[name]; ok && !v.IsNull() {
			f, _ := v.AsBigFloat().Float64()
			if f < lo || f > hi {
				a.Diags = append(a.Diags, errorf(a.Expr(name).Range().Ptr(), "Invalid value for "+fmt.Sprintf("%q", name),
					"%q must be between %g and %g.", name, lo, hi))
			}
		}
	}
	checkRange("temperature", 0, 2)
	checkRange("top_p", 0, 1)
	checkRange("max_tokens", 1, 1<<24)
	checkRange("max_retries", 0, 100)
	checkRange("max_concurrency", 1, 1<<16)
	checkRange("max_cost", 0, 1e9)
	for _, d := range []string{"timeout", "backoff_base", "backoff_max"} {
		if a.Has(d) {
			a.Duration(d, 0) // diagnoses a bad duration at its range
		}
	}
	if a.Has("api_key_env") {
		if v, ok := obj["api_key_env"]; ok && strings.HasPrefix(v.AsString(), "sk-") {
			a.Diags = append(a.Diags, errorf(a.Expr("api_key_env").Range().Ptr(), "API key in the pipeline",
				"api_key_env names the environment variable holding the key, not the key itself. Put the key in the environment and never in a pipeline file."))
		}
	}
	m.Value = cty.ObjectVal(obj)
	return m, a.Diags
}

// decodeModels decodes the model blocks and exposes them to expressions as
// model.NAME (in the reference context, before stages are decoded).
func (p *Pipeline) decodeModels(blocks hcl.Blocks) hcl.Diagnostics {
	var diags hcl.Diagnostics
	seen := map[string]hcl.Range{}
	objs := map[string]cty.Value{}
	for _, b := range blocks {
		name := b.Labels[0]
		if !hclsyntax.ValidIdentifier(name) {
			diags = append(diags, errorf(&b.LabelRanges[0], "Invalid model name",
				"A name must start with a letter and contain only letters, digits, underscores and dashes."))
			continue
		}
		if prev, dup := seen[name]; dup {
			diags = append(diags, duplicate("model", name, b.DefRange, prev))
			continue
		}
		seen[name] = b.DefRange
		m, d := decodeModelBlock(b, p.ctx, p.Variables)
		diags = append(diags, d...)
		// A relative cache_dir is relative to the pipeline, like every path.
		if v, ok := m.Value.AsValueMap()["cache_dir"]; ok && !v.IsNull() && v.AsString() != "" && !filepath.IsAbs(v.AsString()) {
			obj := m.Value.AsValueMap()
			obj["cache_dir"] = cty.StringVal(filepath.Join(p.Dir, v.AsString()))
			m.Value = cty.ObjectVal(obj)
		}
		p.Models = append(p.Models, m)
		objs[name] = m.Value
	}
	sort.Slice(p.Models, func(i, j int) bool { return p.Models[i].Name < p.Models[j].Name })
	p.ctx.Variables["model"] = cty.ObjectVal(objs)
	return diags
}

// Model returns the named model block.
func (p *Pipeline) Model(name string) (*Model, bool) {
	for _, m := range p.Models {
		if m.Name == name {
			return m, true
		}
	}
	return nil, false
}

package generate

// The llm source: samples drawn from a model block's endpoint, one request
// per sample, the query extracted from each completion, the completion kept.
//
//	stage "generate" {
//	  source   = "llm"
//	  model    = model.gpt
//	  samples  = 5                      # independent samples (pass@k)
//	  language = "sql"                  # extraction and default prompts
//	  prompt   = file("prompt.tmpl")    # Go template; default: llm.DefaultGeneratePrompt
//	  refine_prompt = file("fix.tmpl")  # used when refine asks for a repair
//	  system   = "..."                  # default: the model block's, else llm.DefaultSystem
//	  engine   = engine.main            # schema source (default: the only engine)
//	  schema   = "full"                 # full | pruned | none
//	  schema_sample_rows = 0            # rows of each table shown under it
//	}
//
// Refine repairs a failed attempt through Revise: the conversation so far
// (the generation prompt and the failed completion) plus the refine prompt
// with the previous query, its error class and message and, when it ran,
// a result preview.

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"text/template"

	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"

	"github.com/evalflow/evalflow/dsl"
	"github.com/evalflow/evalflow/engine"
	"github.com/evalflow/evalflow/item"
	"github.com/evalflow/evalflow/llm"
	"github.com/evalflow/evalflow/nodes"
	"github.com/evalflow/evalflow/table"
)

var llmSchema = &hcl.BodySchema{Attributes: []hcl.AttributeSchema{
	{Name: "dataset"}, {Name: "source"}, {Name: "model", Required: true}, {Name: "samples"}, {Name: "language"},
	{Name: "prompt"}, {Name: "refine_prompt"}, {Name: "system"}, {Name: "engine"}, {Name: "schema"},
	{Name: "schema_sample_rows"}, {Name: "result_preview_rows"},
}}

// isLLMSource reports whether a generate block asks for source = "llm".
func isLLMSource(b *dsl.Stage) bool {
	c, _, _ := b.Body.PartialContent(&hcl.BodySchema{Attributes: []hcl.AttributeSchema{{Name: "source"}}})
	if c == nil {
		return false
	}
	at, ok := c.Attributes["source"]
	if !ok {
		return false
	}
	v, d := at.Expr.Value(b.Ctx)
	return !d.HasErrors() && v.Type() == cty.String && v.IsKnown() && !v.IsNull() && v.AsString() == "llm"
}

// LLM generates samples with a model. Safe for concurrent use on different
// records: the client is, the templates are read-only, and the schema memo
// and revision notes are guarded.
type LLM struct {
	Dataset   string
	ModelName string
	Client    *llm.Client
	Samples   int
	Language  string
	System    string

	prompt, refine *template.Template
	eng            *nodes.Engine
	schemaMode     string
	sampleRows     int
	previewRows    int

	promptSrc, refineSrc string // the templates' text, hashed for Provenance

	schemaMu sync.Mutex
	schemas  map[string]*schemaMemo // by database location

	notesMu sync.Mutex
	notes   map[*item.Sample]*llm.Response // Revise → AnnotateRevision
	errs    map[*item.Sample]error
}

type schemaMemo struct {
	once    sync.Once
	text    string // full rendering
	schema  *engine.Schema
	samples map[string][]string
	err     error
}

// NewLLM builds an llm generate stage.
func NewLLM(env *nodes.Env) (nodes.Stage, hcl.Diagnostics) {
	b := env.Block
	a := decodeSource(b, llmSchema, schema, "replay")
	g := &LLM{schemas: map[string]*schemaMemo{}, notes: map[*item.Sample]*llm.Response{}, errs: map[*item.Sample]error{}}
	ds, d := nodes.RefAttr(a, "dataset", "dataset")
	a.Diags = append(a.Diags, d...)
	if ds == "" && len(env.Pipeline.Datasets) == 1 {
		ds = env.Pipeline.Datasets[0].Name
	}
	g.Dataset = ds
	if mv, ok := a.Value("model", cty.DynamicPseudoType); ok {
		m, _ := dsl.GoValue(mv).(map[string]any)
		if m == nil || m["block"] != "model" {
			a.Diags = append(a.Diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Invalid model reference",
				Detail: "model must be a reference like model.NAME to a model block.", Subject: a.Expr("model").Range().Ptr()})
		} else {
			g.ModelName, _ = m["name"].(string)
			cfg, err := llm.ParseConfig(m)
			if err == nil {
				g.Client, err = env.LLM.Client(cfg)
			}
			if err != nil {
				a.Diags = append(a.Diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Invalid model block",
					Detail: fmt.Sprintf("model.%s: %v.", g.ModelName, err), Subject: a.Expr("model").Range().Ptr()})
			}
		}
	}
	g.Samples = a.Int("samples", 1, 1, 1024)
	g.Language = strings.ToLower(a.String("language", "sql"))
	g.System = a.String("system", "")
	g.schemaMode = a.String("schema", llm.SchemaFull)
	if !contains(llm.SchemaModes, g.schemaMode) {
		a.Diags = append(a.Diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Unknown schema mode",
			Detail:  fmt.Sprintf("schema must be one of %s.%s", strings.Join(llm.SchemaModes, ", "), suggest(g.schemaMode, llm.SchemaModes)),
			Subject: a.Expr("schema").Range().Ptr()})
	}
	g.sampleRows = a.Int("schema_sample_rows", 0, 0, 100)
	g.previewRows = a.Int("result_preview_rows", 5, 0, 1000)
	parse := func(attr, def string) *template.Template {
		src := a.String(attr, def)
		if attr == "prompt" {
			g.promptSrc = src
		} else {
			g.refineSrc = src
		}
		t, err := llm.ParseTemplate(attr, src)
		if err != nil {
			a.Diags = append(a.Diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Invalid prompt template",
				Detail: fmt.Sprintf("%s: %v.", attr, err), Subject: a.Expr(attr).Range().Ptr()})
		}
		return t
	}
	g.prompt = parse("prompt", llm.DefaultGeneratePrompt)
	g.refine = parse("refine_prompt", llm.DefaultRefinePrompt)
	engName, d := nodes.RefAttr(a, "engine", "engine")
	a.Diags = append(a.Diags, d...)
	if engName == "" && len(env.Engines) == 1 {
		for n := range env.Engines {
			engName = n
		}
	}
	if engName != "" {
		g.eng = env.Engines[engName]
	}
	// Without a language attribute, generate in the engine's language.
	if !a.Has("language") && g.eng != nil {
		if l, ok := g.eng.Exec.(engine.Languager); ok {
			g.Language = l.Language()
		}
	}
	if g.eng == nil && g.schemaMode != llm.SchemaNone && a.Has("schema") {
		a.Diags = append(a.Diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "No engine for the schema",
			Detail: "schema needs engine = engine.NAME to introspect (or schema = \"none\").", Subject: a.Expr("schema").Range().Ptr()})
	}
	if a.Diags.HasErrors() {
		return nil, a.Diags
	}
	return g, a.Diags
}

func contains(xs []string, s string) bool {
	for _, x := range xs {
		if x == s {
			return true
		}
	}
	return false
}

// Describe says which model generates, for `evalflow plan`.
func (g *LLM) Describe() []string {
	c := g.Client.Config()
	return []string{fmt.Sprintf("source: llm model.%s (%s %s), %d sample(s), schema %s", g.ModelName, c.Provider, c.Model, g.Samples, g.schemaMode)}
}

// Process draws the record's samples, concurrently (the endpoint's limiter
// bounds the calls in flight). A failed call becomes an attempt with error
// class generation and makes the item an error; the run goes on.
func (g *LLM) Process(ctx context.Context, rec *item.Record) error {
	if rec.Samples != nil {
		return nil
	}
	data := g.data(ctx, rec)
	rec.Samples = make([]*item.Sample, g.Samples)
	draw := func(i int) {
		s := &item.Sample{Index: i}
		rec.Samples[i] = s
		a := &item.Attempt{Sample: i, Index: 0}
		s.Attempts = []*item.Attempt{a}
		d := data
		d.Sample = i
		msgs, err := g.firstTurn(d)
		if err != nil {
			a.SetError(item.ClassGeneration, err.Error())
			return
		}
		resp, err := g.Client.Complete(ctx, g.Client.NewRequest(g.system(), msgs, i))
		g.record(a, resp, err)
	}
	if g.Samples == 1 {
		draw(0) // the stage's own worker makes the call
	} else {
		var wg sync.WaitGroup
		for i := range g.Samples {
			wg.Add(1)
			go func() {
				defer wg.Done()
				draw(i)
			}()
		}
		wg.Wait()
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	// max_cost is a run-wide guard: once crossed, the run stops (finished
	// items are kept) instead of marking every remaining item.
	for _, s := range rec.Samples {
		if a := s.Final(); a != nil && strings.Contains(a.ErrorMessage, llm.ErrBudget.Error()) {
			return &nodes.StopRun{Reason: "max_cost of model." + g.ModelName + " reached"}
		}
	}
	// A model call that failed after its retries (or a prompt that could
	// not be rendered) produced no prediction to score: the item is an
	// error, retried by the next run of the same command — for pass@k, if
	// any of its samples failed so. A completion without a query is the
	// model's answer, scored as a failed prediction.
	var failed []error
	for _, s := range rec.Samples {
		if a := s.Final(); a != nil && a.ErrorClass == item.ClassGeneration &&
			(strings.HasPrefix(a.ErrorMessage, "model call failed") || strings.HasPrefix(a.ErrorMessage, "prompt template")) {
			failed = append(failed, fmt.Errorf("model.%s, item %q, sample %d: %s", g.ModelName, rec.Item.ID, s.Index, a.ErrorMessage))
		}
	}
	if len(failed) > 0 {
		return nodes.HarnessError(errors.Join(failed...))
	}
	return nil
}

func (g *LLM) system() string {
	if g.System != "" {
		return g.System
	}
	if g.Client.Config().System != "" {
		return ""
	}
	return llm.DefaultSystem
}

func (g *LLM) firstTurn(d llm.PromptData) ([]llm.Message, error) {
	if g.promptSrc == llm.DefaultGeneratePrompt {
		return []llm.Message{{Role: "user", Content: llm.RenderDefaultGenerate(d)}}, nil
	}
	p, err := llm.Render(g.prompt, d)
	if err != nil {
		return nil, fmt.Errorf("prompt template: %w", err)
	}
	return []llm.Message{{Role: "user", Content: p}}, nil
}

// record fills an attempt from a model call.
func (g *LLM) record(a *item.Attempt, resp *llm.Response, err error) {
	if err != nil {
		a.SetError(item.ClassGeneration, "model call failed: "+err.Error())
		return
	}
	a.Raw = resp.Text
	a.Query = llm.Extract(resp.Text, g.Language)
	a.InputTokens, a.OutputTokens, a.Cost = resp.InputTokens, resp.OutputTokens, resp.Cost
	a.Latency, a.CacheHit = resp.Latency, resp.CacheHit
	a.Time("generate", resp.Latency)
	if strings.TrimSpace(a.Query) == "" {
		a.SetError(item.ClassGeneration, "the completion holds no query")
	}
}

// SampleCount is the number of samples per item.
func (g *LLM) SampleCount() int { return g.Samples }

// CallModels is the generator's model.
func (g *LLM) CallModels() []string {
	c := g.Client.Config()
	return []string{c.Provider + " " + c.Model}
}

// MaxCalls is one model request per sample.
func (g *LLM) MaxCalls(samples int) (int, int) { return samples, 0 }

// Revise asks the model to repair s's last attempt. ok is false when the
// endpoint can take no more calls (quota or budget); a failed call is
// still an attempt (error class generation), recorded by AnnotateRevision.
func (g *LLM) Revise(ctx context.Context, rec *item.Record, s *item.Sample) (string, string, bool, error) {
	last := s.Final()
	if last == nil {
		return "", "", false, nil
	}
	d := g.data(ctx, rec)
	d.Sample = s.Index
	msgs, err := g.firstTurn(d)
	if err != nil {
		return "", "", false, nil
	}
	d.Attempt = len(s.Attempts)
	d.Previous, d.Raw, d.ErrorClass, d.Error = last.Query, last.Raw, last.ErrorClass, last.ErrorMessage
	if last.Result != nil && g.previewRows > 0 {
		d.Result = preview(last.Result, g.previewRows)
	}
	fix, err := llm.Render(g.refine, d)
	if err != nil {
		return "", "", false, nil
	}
	if last.Raw != "" {
		msgs = append(msgs, llm.Message{Role: "assistant", Content: last.Raw})
	}
	msgs = append(msgs, llm.Message{Role: "user", Content: fix})
	req := g.Client.NewRequest(g.system(), msgs, s.Index)
	req.Attempt = len(s.Attempts)
	resp, err := g.Client.Complete(ctx, req)
	if err != nil {
		if k := llm.KindOf(err); k == llm.KindQuota || k == llm.KindBudget || k == llm.KindCancelled {
			return "", "", false, nil
		}
	}
	g.notesMu.Lock()
	g.notes[s], g.errs[s] = resp, err
	g.notesMu.Unlock()
	if err != nil {
		return "", "", true, nil
	}
	return llm.Extract(resp.Text, g.Language), resp.Text, true, nil
}

// AnnotateRevision records the call behind the attempt Revise just
// returned for s (refine calls it before validating the attempt).
func (g *LLM) AnnotateRevision(s *item.Sample, a *item.Attempt) {
	g.notesMu.Lock()
	resp, err := g.notes[s], g.errs[s]
	delete(g.notes, s)
	delete(g.errs, s)
	g.notesMu.Unlock()
	if resp == nil && err == nil {
		return
	}
	g.record(a, resp, err)
}

// data is the template data of rec, schema included.
func (g *LLM) data(ctx context.Context, rec *item.Record) llm.PromptData {
	it := &rec.Item
	d := llm.PromptData{ID: it.ID, Question: it.Question, DB: it.DB, Gold: it.Gold, Language: g.Language,
		Fields: map[string]any{}}
	for _, f := range it.Fields {
		d.Fields[f.Name] = f.Value
	}
	d.Schema = g.schema(ctx, it)
	return d
}

// schema renders the item's database schema once per database (pruned
// schemas depend on the question, so only the introspection is shared).
func (g *LLM) schema(ctx context.Context, it *item.Item) string {
	if g.eng == nil || g.schemaMode == llm.SchemaNone {
		return ""
	}
	desc, ok := g.eng.Exec.(engine.Describer)
	if !ok {
		return ""
	}
	loc, err := g.eng.Locate(it)
	if err != nil {
		return ""
	}
	g.schemaMu.Lock()
	m, ok := g.schemas[loc]
	if !ok {
		m = &schemaMemo{}
		g.schemas[loc] = m
	}
	g.schemaMu.Unlock()
	m.once.Do(func() {
		s, err := desc.Describe(ctx, loc)
		if err != nil {
			m.err = err
			return
		}
		m.schema, m.samples = s, g.sampleValues(ctx, it, s)
		m.text = llm.RenderSchema(s, llm.SchemaOptions{Mode: llm.SchemaFull, Samples: m.samples, Language: g.Language})
	})
	if m.err != nil {
		return ""
	}
	if g.schemaMode == llm.SchemaPruned {
		return llm.RenderSchema(m.schema, llm.SchemaOptions{Mode: llm.SchemaPruned, Question: it.Question, Samples: m.samples, Language: g.Language})
	}
	return m.text
}

func (g *LLM) sampleValues(ctx context.Context, it *item.Item, s *engine.Schema) map[string][]string {
	if g.sampleRows <= 0 || g.Language != "sql" {
		return nil
	}
	out := map[string][]string{}
	for _, t := range s.Tables {
		q := fmt.Sprintf(`SELECT * FROM "%s" LIMIT %d`, strings.ReplaceAll(t.Name, `"`, `""`), g.sampleRows)
		o := g.eng.Run(ctx, it, q)
		res, err := o.Result, o.Err
		if err != nil || res == nil {
			continue
		}
		for _, r := range res.Rows {
			var cells []string
			for j, v := range r {
				if j < len(res.Columns) {
					cells = append(cells, res.Columns[j].Name+"="+table.Format(v))
				}
			}
			out[t.Name] = append(out[t.Name], strings.Join(cells, ", "))
		}
	}
	return out
}

// preview renders at most n rows of a result as text.
func preview(t *table.Table, n int) string {
	var b strings.Builder
	var names []string
	for _, c := range t.Columns {
		names = append(names, c.Name)
	}
	b.WriteString(strings.Join(names, " | "))
	for i, r := range t.Rows {
		if i >= n {
			fmt.Fprintf(&b, "\n… (%d rows in all)", len(t.Rows))
			break
		}
		var cells []string
		for _, v := range r {
			cells = append(cells, table.Format(v))
		}
		b.WriteString("\n" + strings.Join(cells, " | "))
	}
	if len(t.Rows) == 0 {
		b.WriteString("\n(no rows)")
	}
	return b.String()
}

// Provenance identifies the endpoint this stage calls and what its API
// reported serving so far (llm.Client.Served), with the SHA-256 of each
// template the stage renders, by attribute name: "system" (the system
// prompt sent: the stage's, else the model block's, else
// llm.DefaultSystem), "prompt" and "refine_prompt". Safe for concurrent
// use; call it after the run for the complete lists.
func (g *LLM) Provenance() llm.Provenance {
	p := g.Client.Provenance()
	p.Name = g.ModelName
	sys := g.system()
	if sys == "" {
		sys = g.Client.Config().System
	}
	p.PromptSHA256 = map[string]string{
		"system":        llm.TextSHA256(sys),
		"prompt":        llm.TextSHA256(g.promptSrc),
		"refine_prompt": llm.TextSHA256(g.refineSrc),
	}
	return p
}

// Stats reports the endpoint's counters, for the run summary and tests.
func (g *LLM) Stats() llm.Stats { return g.Client.Stats() }

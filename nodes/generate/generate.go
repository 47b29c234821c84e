// Package generate is the generate stage: it gives every item its samples'
// first attempts. This source is replay: predictions read from a
// JSONL, JSON, CSV or Parquet file keyed by item id, a Spider / test-suite
// pred.txt (one query per line) or BIRD's predict_dev.json.
//
//	stage "generate" {
//	  dataset     = dataset.questions
//	  source      = "replay"
//	  predictions = "preds.jsonl"   # relative to the pipeline
//	  format      = "jsonl"         # jsonl | json | csv | parquet | spider | bird; default: from the extension and content
//	  id          = "id"            # field names in the predictions file
//	}
//
// A predictions row holds one of: "pred" (one sample, one attempt),
// "attempts" (one sample, attempts in order: refine takes the next one when
// an attempt fails), or "preds" (several samples for pass@k; each element is
// a query string or a list of attempts).
//
// A Spider file (.txt, .sql) has no ids: line i (from 0) is the prediction
// for the item with id "i", so it pairs with a dataset whose ids are row
// indexes (Spider's dev.json, which has no id field, gets them). A BIRD
// file maps ids to "SQL\t----- bird -----\tdb". Both ignore the id, pred,
// preds and attempts attributes (docs/formats.md).
package generate

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/hashicorp/hcl/v2"

	"github.com/evalflow/evalflow/dataset"
	"github.com/evalflow/evalflow/dsl"
	"github.com/evalflow/evalflow/item"
	"github.com/evalflow/evalflow/nodes"
)

func init() {
	nodes.Register(nodes.Kind{Name: "generate", DefaultConcurrency: 4, Factory: New})
}

var schema = &hcl.BodySchema{Attributes: []hcl.AttributeSchema{
	{Name: "dataset"}, {Name: "source"}, {Name: "predictions"}, {Name: "format"},
	{Name: "id"}, {Name: "pred"}, {Name: "preds"}, {Name: "attempts"}, {Name: "samples"},
}}

// decodeSource decodes a generate block for one source: its own attributes
// and, so that one pipeline can switch sources with a variable
// (source = var.model == "" ? "replay" : "llm"), the other source's
// attributes when their value is null. A foreign attribute with a value is
// an error naming the source it belongs to.
func decodeSource(b *dsl.Stage, own, other *hcl.BodySchema, otherName string) *dsl.Attrs {
	union := &hcl.BodySchema{Attributes: append([]hcl.AttributeSchema(nil), own.Attributes...)}
	mine := map[string]bool{}
	for _, at := range own.Attributes {
		mine[at.Name] = true
	}
	var foreign []string
	for _, at := range other.Attributes {
		if !mine[at.Name] {
			union.Attributes = append(union.Attributes, hcl.AttributeSchema{Name: at.Name})
			foreign = append(foreign, at.Name)
		}
	}
	a := dsl.DecodeAttrs(b.Body, union, b.Ctx, b.DeclRange)
	for _, name := range foreign {
		at, ok := a.Content.Attributes[name]
		if !ok {
			continue
		}
		v, d := at.Expr.Value(b.Ctx)
		if !d.HasErrors() && v.IsNull() {
			delete(a.Content.Attributes, name) // switched off for this source
			continue
		}
		a.Diags = append(a.Diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Attribute of another source",
			Detail:  fmt.Sprintf("%q applies to source = %q only; remove it, or make it null for this source (%s = cond ? value : null).", name, otherName, name),
			Subject: at.Expr.Range().Ptr()})
		delete(a.Content.Attributes, name)
	}
	return a
}

// Sources are the generation sources this build knows.
var Sources = []string{"replay", "llm"}

// Replay serves predictions from a file. It is safe for concurrent use: the
// table is built once, before the run, and only read afterwards.
type Replay struct {
	Dataset string
	Path    string
	byID    *predStore // id → samples → attempts
	samples int        // 0: as many as the row has
}

// SampleCount is the samples option, or 1 when each row decides.
func (r *Replay) SampleCount() int { return max(r.samples, 1) }

// New builds a generate stage from its block.
func New(env *nodes.Env) (nodes.Stage, hcl.Diagnostics) {
	b := env.Block
	if isLLMSource(b) {
		return NewLLM(env) // llm.go
	}
	a := decodeSource(b, schema, llmSchema, "llm")
	ds, d := nodes.RefAttr(a, "dataset", "dataset")
	a.Diags = append(a.Diags, d...)
	if ds == "" {
		if len(env.Pipeline.Datasets) == 1 {
			ds = env.Pipeline.Datasets[0].Name
		} else {
			a.Diags = append(a.Diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Missing dataset",
				Detail: "A generate stage needs dataset = dataset.NAME when the pipeline has several (or no) dataset blocks.", Subject: b.DeclRange.Ptr()})
		}
	}
	src := a.String("source", "replay")
	if src != "replay" {
		a.Diags = append(a.Diags, dsl.InvalidChoice(env.Pipeline.Variables, a.Expr("source"), b.DeclRange, "Unknown generation source",
			"a generation source in this build", src, Sources))
	}
	r := &Replay{Dataset: ds}
	r.Path = a.String("predictions", "")
	if r.Path == "" && !a.Diags.HasErrors() {
		a.Diags = append(a.Diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Missing predictions",
			Detail: "A replay generate stage needs predictions = \"FILE\" (JSONL, JSON, CSV or Parquet keyed by item id, a Spider pred.txt or BIRD's predict_dev.json).", Subject: b.DeclRange.Ptr()})
	}
	if r.Path != "" && !filepath.IsAbs(r.Path) {
		r.Path = filepath.Join(env.Pipeline.Dir, r.Path)
	}
	format := a.String("format", "")
	if format != "" && !slices.Contains(dataset.PredictionFormats, format) {
		a.Diags = append(a.Diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Unknown predictions format",
			Detail: fmt.Sprintf("%q is not a predictions format; use one of %s.%s", format, strings.Join(dataset.PredictionFormats, ", "),
				suggest(format, dataset.PredictionFormats)), Subject: a.Expr("format").Range().Ptr()})
	}
	idField := a.String("id", "id")
	predField := a.String("pred", "pred")
	predsField := a.String("preds", "preds")
	attemptsField := a.String("attempts", "attempts")
	r.samples = a.Int("samples", 0, 0, 1<<16)
	if a.Diags.HasErrors() {
		return nil, a.Diags
	}
	if format == "" {
		var err error
		if format, err = dataset.PredictionFormat(r.Path); err != nil {
			a.Diags = append(a.Diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Cannot read predictions",
				Detail: err.Error(), Subject: a.Expr("predictions").Range().Ptr()})
			return nil, a.Diags
		}
	}
	if format == "" {
		a.Diags = append(a.Diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Unknown predictions format",
			Detail:  fmt.Sprintf("Cannot tell the format of %q; set format to one of %s.", r.Path, strings.Join(dataset.PredictionFormats, ", ")),
			Subject: a.Expr("predictions").Range().Ptr()})
		return nil, a.Diags
	}
	if format == dataset.Spider || format == dataset.Bird {
		// Rows of these formats have fixed fields (dataset.ReadRows).
		idField, predField = "id", "pred"
	}
	r.byID = newPredStore()
	err := dataset.ReadRows(r.Path, format, func(row dataset.Row) error {
		if row.Err != "" {
			return fmt.Errorf("%s:%d: %s", r.Path, row.Line, row.Err)
		}
		idv, ok := row.Get(idField)
		id := dataset.Text(idv)
		if !ok || id == "" {
			return fmt.Errorf("%s:%d: prediction row has no %q field", r.Path, row.Line, idField)
		}
		var samples [][]string
		if v, ok := row.Get(predsField); ok && v != nil {
			list, ok := v.([]any)
			if !ok {
				return fmt.Errorf("%s:%d: %q must be a list of samples", r.Path, row.Line, predsField)
			}
			for _, s := range list {
				switch x := s.(type) {
				case []any:
					var atts []string
					for _, q := range x {
						atts = append(atts, dataset.Text(q))
					}
					samples = append(samples, atts)
				default:
					samples = append(samples, []string{dataset.Text(x)})
				}
			}
		} else if v, ok := row.Get(attemptsField); ok && v != nil {
			list, ok := v.([]any)
			if !ok {
				return fmt.Errorf("%s:%d: %q must be a list of queries", r.Path, row.Line, attemptsField)
			}
			var atts []string
			for _, q := range list {
				atts = append(atts, dataset.Text(q))
			}
			samples = [][]string{atts}
		} else if v, ok := row.Get(predField); ok {
			samples = [][]string{{dataset.Text(v)}}
		} else {
			return fmt.Errorf("%s:%d: prediction row for %q has none of %q, %q, %q", r.Path, row.Line, id, predField, attemptsField, predsField)
		}
		r.byID.add(id, samples, row.Line)
		return nil
	})
	if err == nil {
		if derr := r.byID.seal(); derr != nil {
			err = fmt.Errorf("%s: %w", r.Path, derr)
		}
	}
	if err != nil {
		a.Diags = append(a.Diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Cannot read predictions",
			Detail: err.Error(), Subject: a.Expr("predictions").Range().Ptr()})
		return nil, a.Diags
	}
	return r, a.Diags
}

func suggest(s string, c []string) string {
	if x := dsl.Suggest(s, c); x != "" {
		return fmt.Sprintf(" Did you mean %q?", x)
	}
	return ""
}

// Process gives the record its samples, each with its first attempt; later
// attempts wait in Sample.Pending for refine.
func (r *Replay) Process(_ context.Context, rec *item.Record) error {
	if rec.Samples != nil {
		return nil
	}
	i := r.byID.lookup(rec.Item.ID)
	if i >= 0 {
		r.byID.markUsed(i)
	}
	if i < 0 {
		a := &item.Attempt{}
		a.SetError(item.ClassGeneration, fmt.Sprintf("no prediction for item %q in %s", rec.Item.ID, r.Path))
		rec.Samples = []*item.Sample{{Index: 0, Attempts: []*item.Attempt{a}}}
		return nil
	}
	samples := r.byID.samples(i)
	if r.samples > 0 && len(samples) > r.samples {
		samples = samples[:r.samples]
	}
	for i, atts := range samples {
		s := &item.Sample{Index: i}
		first := ""
		if len(atts) > 0 {
			first = atts[0]
			s.Pending = append([]string(nil), atts[1:]...)
		}
		a := &item.Attempt{Sample: i, Index: 0, Query: first, Raw: first}
		if strings.TrimSpace(first) == "" {
			a.SetError(item.ClassGeneration, "empty prediction")
		}
		s.Attempts = []*item.Attempt{a}
		rec.Samples = append(rec.Samples, s)
	}
	return nil
}

// Revise returns the next replayed attempt for s.
func (r *Replay) Revise(_ context.Context, _ *item.Record, s *item.Sample) (string, string, bool, error) {
	if len(s.Pending) == 0 {
		return "", "", false, nil
	}
	q := s.Pending[0]
	s.Pending = s.Pending[1:]
	return q, q, true, nil
}

// Claim marks the prediction for itemID as used, as Process does: what a
// distributed run's coordinator calls for each item its workers served
// (nodes.Claimer).
func (r *Replay) Claim(itemID string) {
	if i := r.byID.lookup(itemID); i >= 0 {
		r.byID.markUsed(i)
	}
}

// Describe says where predictions come from, for `evalflow plan`.
func (r *Replay) Describe() []string {
	return []string{fmt.Sprintf("source: replay %s (%d items)", filepath.Base(r.Path), r.byID.Len())}
}

// Warnings reports predictions whose id matched no item of the run (a
// typo'd or differently formatted id is otherwise invisible). The CLI skips
// it for runs limited with -limit or -sample, where unmatched ids are
// expected.
func (r *Replay) Warnings() []string {
	unused := r.byID.unused()
	if len(unused) == 0 {
		return nil
	}
	sort.Strings(unused)
	ex := unused
	if len(ex) > 3 {
		ex = ex[:3]
	}
	return []string{fmt.Sprintf("%d of %d predictions in %s match no item of this run (e.g. %q)", len(unused), r.byID.Len(), r.Path, ex)}
}

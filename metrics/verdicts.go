package metrics

import (
	"context"

	"github.com/evalflow/evalflow/item"
)

// The validate stage records per-attempt verdicts (docs/validation.md);
// these metrics lift sample 0's final-attempt verdicts into items.parquet
// columns so a run can be sliced by them. Each is Null when the check did
// not run on that attempt.

type verdictMetric struct {
	info Info
	get  func(a *item.Attempt) (float64, bool)
}

func (m verdictMetric) Info() Info { return m.info }

func (m verdictMetric) Score(_ context.Context, in Input) item.Score {
	a := in.Record.Final()
	if a == nil {
		return item.Score{Name: m.info.Name, Null: true}
	}
	v, ok := m.get(a)
	if !ok {
		return item.Score{Name: m.info.Name, Null: true}
	}
	return item.Score{Name: m.info.Name, Value: v}
}

func boolScore(b *bool) (float64, bool) {
	if b == nil {
		return 0, false
	}
	if *b {
		return 1, true
	}
	return 0, true
}

func floatScore(f *float64) (float64, bool) {
	if f == nil {
		return 0, false
	}
	return *f, true
}

func init() {
	for _, m := range []verdictMetric{
		{Info{Name: "syntax_valid", Description: "The engine accepted the final query's syntax (prepare / EXPLAIN / GRAPH.EXPLAIN / endpoint parse).",
			Reference: "*Metrics Reference Documentation*, “3. KG Valid Metrics (kg-axel)” (syntax validator); the validate stage (docs/validation.md)", Inputs: "Record.Final().SyntaxValid", Range: "{0,1}; null when not checked"},
			func(a *item.Attempt) (float64, bool) { return boolScore(a.SyntaxValid) }},
		{Info{Name: "schema_score", Description: "Share of the final query's labels, relationship types and paths (Cypher), tables and columns (SQL), classes and predicates (SPARQL) that exist in the introspected schema.",
			Reference: "*Metrics Reference Documentation*, “3. KG Valid Metrics (kg-axel)”; CyVer SchemaValidator (docs/validation.md)", Inputs: "Record.Final().SchemaScore", Range: "[0,1]; null when not checked"},
			func(a *item.Attempt) (float64, bool) { return floatScore(a.SchemaScore) }},
		{Info{Name: "properties_score", Description: "Precision of the properties the final Cypher query reads on the labels it reads them from.",
			Reference: "*Metrics Reference Documentation*, “3. KG Valid Metrics (kg-axel)”; CyVer PropertiesValidator (docs/validation.md)", Inputs: "Record.Final().PropertiesScore", Range: "[0,1]; null when not checked or no property is read"},
			func(a *item.Attempt) (float64, bool) { return floatScore(a.PropertiesScore) }},
		{Info{Name: "safe", Description: "The final query passed the safety check (one read-only query, no file/network access).",
			Reference: "*metric-calculators*, “Safety Validation Metric” requirement; docs/validation.md", Inputs: "Record.Final().Safe", Range: "{0,1}; null when not checked"},
			func(a *item.Attempt) (float64, bool) { return boolScore(a.Safe) }},
	} {
		m := m
		Register(Def{Info: m.info, Options: []string{}, NewItem: func(Options) (ItemMetric, error) { return m, nil }})
	}
}

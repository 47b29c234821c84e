package metrics

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/evalflow/evalflow/item"
	"github.com/evalflow/evalflow/table"
)

// This file implements the `text2sparql` profile: the TEXT2SPARQL'25
// challenge scorer (AKSW text2sparql-client, pytrec_eval set measures over
// flattened answer values). See docs/metrics.md.

// SetPRF holds trec_eval's set_P, set_recall and set_F for one question.
type SetPRF struct {
	P, Recall, F float64
}

// TrecSetPRF scores a retrieved set against graded relevance judgements
// with trec_eval semantics: relevant = relevance ≥ 1; set_P = |rel ∩ ret| /
// |ret| (0 when nothing is retrieved); set_recall = |rel ∩ ret| / |rel| (0
// when nothing is relevant: an empty or ASK-false gold scores 0 even for a
// perfect prediction); set_F is their harmonic mean (0 when both are 0).
func TrecSetPRF(gold map[string]int, retrieved map[string]struct{}) SetPRF {
	rel := 0
	for _, g := range gold {
		if g >= 1 {
			rel++
		}
	}
	hit := 0
	for v := range retrieved {
		if gold[v] >= 1 {
			hit++
		}
	}
	var out SetPRF
	if len(retrieved) > 0 {
		out.P = float64(hit) / float64(len(retrieved))
	}
	if rel > 0 {
		out.Recall = float64(hit) / float64(rel)
	}
	out.F = sparqlHarmonic(out.P, out.Recall)
	return out
}

var sparqlFormRE = lazyRE(`(?is)^\s*(?:(?:PREFIX\s+[^\s:]*:\s*<[^>]*>|BASE\s+<[^>]*>|#[^\n]*)\s*)*(SELECT|ASK|CONSTRUCT|DESCRIBE)\b`)

// SPARQLQueryForm returns the upper-cased query form (SELECT, ASK,
// CONSTRUCT, DESCRIBE) of q, or "" when it cannot tell.
func SPARQLQueryForm(q string) string {
	m := sparqlFormRE.FindStringSubmatch(q)
	if m == nil {
		return ""
	}
	return strings.ToUpper(m[1])
}

// sparqlASKValue reads the boolean of an ASK result: a 1×1 table holding a bool
// or the string "true"/"false".
func sparqlASKValue(t *table.Table) (bool, error) {
	if t == nil || len(t.Rows) != 1 || len(t.Rows[0]) != 1 {
		return false, fmt.Errorf("ASK result must be a 1×1 table, got %d rows", t.NumRows())
	}
	switch v := t.Rows[0][0].(type) {
	case bool:
		return v, nil
	case string:
		switch strings.ToLower(strings.TrimSpace(v)) {
		case "true", "1":
			return true, nil
		case "false", "0":
			return false, nil
		}
	case int64:
		return v != 0, nil
	}
	return false, fmt.Errorf("ASK result must be a boolean, got %T", t.Rows[0][0])
}

// FlattenSPARQL is the challenge's DBpediaDict2PytrecDict: every bound value
// of every variable in every row becomes a key with relevance 1; variable
// names, row structure, duplicates and datatypes are lost. An ASK result
// (ask = true) becomes {"true": 1} or {"true": 0}.
func FlattenSPARQL(t *table.Table, ask bool) (map[string]int, error) {
	out := map[string]int{}
	if ask {
		b, err := sparqlASKValue(t)
		if err != nil {
			return nil, err
		}
		out["true"] = 0
		if b {
			out["true"] = 1
		}
		return out, nil
	}
	if t == nil {
		return out, nil
	}
	for c := range t.Columns {
		for _, row := range t.Rows {
			if c < len(row) && row[c] != nil {
				out[sparqlLexical(row[c])] = 1
			}
		}
	}
	return out, nil
}

// sparqlRetrieved is the run side of pytrec_eval: every key is retrieved,
// whatever its score (a predicted ASK false still retrieves "true").
func sparqlRetrieved(m map[string]int) map[string]struct{} {
	out := make(map[string]struct{}, len(m))
	for k := range m {
		out[k] = struct{}{}
	}
	return out
}

// sparqlParseFlatGold reads a pre-flattened gold from a dataset field: a JSON
// object {value: relevance} (the challenge's *_true_result_set.json
// entries) as a string or a decoded map, or a list of values (relevance 1).
func sparqlParseFlatGold(v table.Value) (map[string]int, error) {
	var x any = v
	if s, ok := v.(string); ok {
		if err := json.Unmarshal([]byte(s), &x); err != nil {
			return nil, fmt.Errorf("gold field is not JSON: %w", err)
		}
	}
	out := map[string]int{}
	switch g := x.(type) {
	case map[string]any:
		for k, r := range g {
			f, ok := r.(float64)
			if !ok {
				return nil, fmt.Errorf("gold relevance of %q must be a number, got %T", k, r)
			}
			out[k] = int(f)
		}
	case []any:
		for _, e := range g {
			out[fmt.Sprint(e)] = 1
		}
	default:
		return nil, fmt.Errorf("gold field must be a JSON object or list, got %T", x)
	}
	return out, nil
}

type text2sparqlMetric struct {
	info      Info
	measure   string // P, recall, F
	goldField string
}

func (m *text2sparqlMetric) Info() Info { return m.info }

func (m *text2sparqlMetric) Score(_ context.Context, in Input) item.Score {
	name := m.info.Name
	rec := in.Record
	if rec == nil {
		return Failed(name, errors.New("no record"))
	}
	a := rec.Final()
	if a == nil {
		// The challenge averages only over questions in the prediction
		// file: an item with no prediction does not count.
		return item.Score{Name: name, Null: true}
	}
	var gold map[string]int
	var err error
	if m.goldField != "" {
		v, ok := rec.Item.Field(m.goldField)
		if !ok {
			return Failed(name, fmt.Errorf("item has no field %q", m.goldField))
		}
		gold, err = sparqlParseFlatGold(v)
	} else {
		if rec.GoldError != "" {
			return Failed(name, fmt.Errorf("gold query failed: %s", rec.GoldError))
		}
		if rec.GoldResult == nil {
			return Failed(name, errors.New("no gold result"))
		}
		gold, err = FlattenSPARQL(rec.GoldResult, SPARQLQueryForm(rec.Item.Gold) == "ASK")
	}
	if err != nil {
		return Failed(name, err)
	}
	pred := map[string]int{}
	if !a.Failed() && a.Result != nil {
		// A prediction that failed to run retrieves nothing (score 0).
		if pred, err = FlattenSPARQL(a.Result, SPARQLQueryForm(a.Query) == "ASK"); err != nil {
			return Failed(name, err)
		}
	}
	r := TrecSetPRF(gold, sparqlRetrieved(pred))
	v := r.F
	switch m.measure {
	case "P":
		v = r.P
	case "recall":
		v = r.Recall
	}
	return item.Score{Name: name, Value: v}
}

func init() {
	for _, d := range []struct{ name, measure, what string }{
		{"text2sparql_f1", "F", "set_F"},
		{"text2sparql_precision", "P", "set_P"},
		{"text2sparql_recall", "recall", "set_recall"},
	} {
		info := Info{
			Name:        d.name,
			Description: "TEXT2SPARQL'25 " + d.what + " over the flattened answer values (trec_eval semantics; an empty or ASK-false gold scores 0).",
			Reference:   "TEXT2SPARQL'25 (AKSW text2sparql-client, pytrec_eval set measures)",
			Inputs:      "Record.Final().Result vs Record.GoldResult, or a pre-flattened gold in the field named by gold_field; Null when the item has no attempt",
			Range:       "[0,1]",
		}
		measure := d.measure
		Register(Def{
			Info:    info,
			Options: []string{"gold_field"},
			NewItem: func(o Options) (ItemMetric, error) {
				f, err := o.String("gold_field", "")
				if err != nil {
					return nil, err
				}
				return &text2sparqlMetric{info: info, measure: measure, goldField: f}, nil
			},
		})
	}
}

package enginetest

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestCypherSchemaOfUnparsable runs pipelines/text2cypher-replay.hcl on
// FalkorDB: a prediction that does not parse must not be rewarded by
// schema_score or properties_score (it scores 0) and is not KG-valid; a
// query that parses but names unknown labels or properties is scored
// against the schema as CyVer does.
func TestCypherSchemaOfUnparsable(t *testing.T) {
	needFalkorDB(t)
	dir := t.TempDir()
	const gold = "MATCH (m:Movie) WHERE m.released = 1999 RETURN m.title"
	preds := map[string]string{
		"valid":         gold,
		"syntax_error":  "MATCH (m:Movie RETURN m.title",
		"misspelt":      "MATCH (m:Movie) RETRUN m.title",
		"empty":         "",
		"unknown_label": "MATCH (m:Film) RETURN m.title",
		"unknown_prop":  "MATCH (m:Movie) RETURN m.budget",
	}
	type scores struct {
		Schema, Props, KGValid float64
		SchemaNull, PropsNull  bool
	}
	want := map[string]scores{
		"valid":        {Schema: 1, Props: 1, KGValid: 1},
		"syntax_error": {Schema: 0, Props: 0, KGValid: 0},
		"misspelt":     {Schema: 0, Props: 0, KGValid: 0},
		// No query: nothing was validated, so there is no score to give;
		// the attempt is a generation error and not KG-valid.
		"empty": {SchemaNull: true, PropsNull: true, KGValid: 0},
		// m.title on a label that does not exist is not a known property.
		"unknown_label": {Schema: 0, Props: 0, KGValid: 0},
		"unknown_prop":  {Schema: 1, Props: 0, KGValid: 0},
	}
	var qs, ps []map[string]any
	for id, p := range preds {
		qs = append(qs, map[string]any{"id": id, "question": id, "gold": gold})
		ps = append(ps, map[string]any{"id": id, "pred": p})
	}
	graph := filepath.Join(repoRoot(t), "engine", "cypher", "testdata", "movies.cypher")
	pl := plan(t, filepath.Join(repoRoot(t), "pipelines", "text2cypher-replay.hcl"),
		"dataset="+writeJSONL(t, dir, "questions.jsonl", qs), "predictions="+writeJSONL(t, dir, "predictions.jsonl", ps), "graph="+graph)
	res := runPlan(t, pl, 2*time.Minute)
	got := map[string]scores{}
	for id := range preds {
		o, ok := res[id]
		if !ok || o.Rec == nil {
			t.Fatalf("%s: no record", id)
		}
		var s scores
		if v, ok := o.Rec.Score("schema_score"); ok {
			s.Schema, s.SchemaNull = v.Value, v.Null
		}
		if v, ok := o.Rec.Score("properties_score"); ok {
			s.Props, s.PropsNull = v.Value, v.Null
		}
		if v, ok := o.Rec.Score("kg_valid"); ok {
			s.KGValid = v.Value
		}
		got[id] = s
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("scores (-want +got):\n%s", diff)
	}
}

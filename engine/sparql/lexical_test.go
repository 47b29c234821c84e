package sparql_test

import (
	"context"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/evalflow/evalflow/engine"
	"github.com/evalflow/evalflow/engine/sparql"
	"github.com/evalflow/evalflow/item"
	"github.com/evalflow/evalflow/metrics"
	"github.com/evalflow/evalflow/table"
)

// lexicalJSON is an endpoint answer with non-canonical lexical forms, as
// Virtuoso or a remote store may send them.
const lexicalJSON = `{"head":{"vars":["v"]},"results":{"bindings":[
 {"v":{"type":"literal","datatype":"http://www.w3.org/2001/XMLSchema#decimal","value":"1234567890123456789.5"}},
 {"v":{"type":"literal","datatype":"http://www.w3.org/2001/XMLSchema#decimal","value":"0.12345678901234567890123"}},
 {"v":{"type":"literal","datatype":"http://www.w3.org/2001/XMLSchema#decimal","value":"1.0"}},
 {"v":{"type":"literal","datatype":"http://www.w3.org/2001/XMLSchema#decimal","value":"1.00"}},
 {"v":{"type":"literal","datatype":"http://www.w3.org/2001/XMLSchema#decimal","value":"1"}},
 {"v":{"type":"literal","datatype":"http://www.w3.org/2001/XMLSchema#decimal","value":"2.5"}},
 {"v":{"type":"literal","datatype":"http://www.w3.org/2001/XMLSchema#double","value":"1.0E3"}},
 {"v":{"type":"literal","datatype":"http://www.w3.org/2001/XMLSchema#double","value":"1e+20"}},
 {"v":{"type":"literal","datatype":"http://www.w3.org/2001/XMLSchema#double","value":"-0.0"}},
 {"v":{"type":"literal","datatype":"http://www.w3.org/2001/XMLSchema#double","value":"-0"}},
 {"v":{"type":"literal","datatype":"http://www.w3.org/2001/XMLSchema#double","value":"INF"}},
 {"v":{"type":"literal","datatype":"http://www.w3.org/2001/XMLSchema#integer","value":"9007199254740993"}},
 {"v":{"type":"literal","datatype":"http://www.w3.org/2001/XMLSchema#integer","value":"9223372036854775808"}},
 {"v":{"type":"literal","datatype":"http://www.w3.org/2001/XMLSchema#integer","value":"007"}},
 {"v":{"type":"literal","datatype":"http://www.w3.org/2001/XMLSchema#integer","value":"+5"}},
 {"v":{"type":"literal","datatype":"http://www.w3.org/2001/XMLSchema#boolean","value":"1"}},
 {"v":{"type":"literal","datatype":"http://www.w3.org/2001/XMLSchema#boolean","value":"true"}},
 {"v":{"type":"literal","xml:lang":"en","value":"1.0"}},
 {"v":{"type":"literal","datatype":"http://example.org/code","value":"1.0"}}
]}}`

// TestLexicalFormsKept checks that terms = "value" never alters a literal's
// lexical form: a number is typed only when it prints back identically.
func TestLexicalFormsKept(t *testing.T) {
	srv, _ := canned(t, sparql.MediaJSON, lexicalJSON, 200)
	e := newExec(t, map[string]any{"endpoint": srv.URL}, engine.Config{})
	got, err := e.Execute(context.Background(), engine.Query{Text: "SELECT ?v {}"})
	if err != nil {
		t.Fatal(err)
	}
	want := []table.Value{
		"1234567890123456789.5", "0.12345678901234567890123", "1.0", "1.00", 1.0, 2.5,
		"1.0E3", 1e20, "-0.0", math.Copysign(0, -1), "INF",
		int64(9007199254740993), "9223372036854775808", "007", "+5",
		"1", true, "1.0", "1.0",
	}
	if len(got.Rows) != len(want) {
		t.Fatalf("%d rows, want %d", len(got.Rows), len(want))
	}
	for i, w := range want {
		g := got.Rows[i][0]
		if fmt.Sprintf("%T %v", g, g) != fmt.Sprintf("%T %v", w, w) {
			t.Errorf("row %d: got %T %#v, want %T %#v", i, g, g, w, w)
		}
		if f, ok := g.(float64); ok && math.Signbit(f) != math.Signbit(w.(float64)) {
			t.Errorf("row %d: sign of zero lost", i)
		}
	}
}

// TestEmbeddedLexicalForms runs Oxigraph over testdata/lexical.ttl and
// checks, in every result format, that each value-mode cell prints as the
// lexical form the N-Triples mode shows for the same term, and pins the
// forms Oxigraph returns (it canonicalises numbers on load: "1.0" and
// "1.00"^^xsd:decimal come back as "1", "1.5E300"^^xsd:double as its
// 301-digit decimal expansion).
func TestEmbeddedLexicalForms(t *testing.T) {
	const q = "PREFIX ex: <http://example.org/>\nSELECT ?p ?o WHERE { ex:n ?p ?o } ORDER BY ?p"
	want := map[string]table.Value{
		"bigdec":      "1234567890123456789.5",
		"longfrac":    "0.12345678901234567890123",
		"one":         1.0,
		"onezero":     1.0,
		"onezerozero": 1.0,
		"dexp":        "15" + strings.Repeat("0", 299),
		"dsmall":      "0.0000001",
		"bigint":      int64(9007199254740993),
		"hugeint":     "123456789012345678901234567890",
		"negzero":     math.Copysign(0, -1),
		"negzerodec":  0.0,
		"lang":        "chat",
		"typed":       "abc",
		"float":       2.5,
		"intpad":      int64(7),
	}
	for _, accept := range []string{"json", "xml", "tsv"} {
		t.Run(accept, func(t *testing.T) {
			val := embedded(t, map[string]any{"files": []any{"testdata/lexical.ttl"}, "accept": accept})
			nt := embedded(t, map[string]any{"files": []any{"testdata/lexical.ttl"}, "accept": accept, "terms": sparql.TermsNTriples})
			gv, err := val.Execute(context.Background(), engine.Query{Text: q})
			if err != nil {
				t.Fatal(err)
			}
			gn, err := nt.Execute(context.Background(), engine.Query{Text: q})
			if err != nil {
				t.Fatal(err)
			}
			if len(gv.Rows) != len(want) || len(gn.Rows) != len(want) {
				t.Fatalf("%d / %d rows, want %d", len(gv.Rows), len(gn.Rows), len(want))
			}
			got := map[string]table.Value{}
			for i, row := range gv.Rows {
				p := strings.TrimPrefix(row[0].(string), "http://example.org/")
				got[p] = row[1]
				lex := gn.Rows[i][1].(string)
				lex = lex[1:strings.LastIndex(lex, `"`)] // "lexical"^^<dt> or "lexical"@lang
				if s := table.Format(row[1]); s != lex {
					t.Errorf("%s: value prints %q, endpoint's lexical form is %q", p, s, lex)
				}
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("(-want +got)\n%s", diff)
			}
		})
	}
}

// TestLexicalScoring scores results from Oxigraph with each profile: values
// a float64 round trip would conflate (or split) are compared by their
// lexical forms, as the TEXT2SPARQL client (JSON "value" strings) and
// BuildingQA (str() of rdflib terms) compare them.
func TestLexicalScoring(t *testing.T) {
	e := embedded(t, map[string]any{"files": []any{"testdata/lexical.ttl"}})
	ctx := context.Background()
	const px = "PREFIX ex: <http://example.org/>\nPREFIX xsd: <http://www.w3.org/2001/XMLSchema#>\n"
	run := func(q string) *table.Table {
		t.Helper()
		r, err := e.Execute(ctx, engine.Query{Text: px + q})
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		return r
	}
	metric := func(name string, o metrics.Options) metrics.ItemMetric {
		d, ok := metrics.Default.Lookup(name)
		if !ok {
			t.Fatalf("metric %s not registered", name)
		}
		m, err := d.NewItem(o)
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	scorers := []struct {
		label string
		m     metrics.ItemMetric
	}{
		{"text2sparql_f1", metric("text2sparql_f1", nil)},
		{"entity_set_f1/buildingqa", metric("entity_set_f1", metrics.Options{"profile": "buildingqa"})},
		{"row_match_f1/buildingqa", metric("row_match_f1", metrics.Options{"profile": "buildingqa"})},
		{"entity_set_f1/strict", metric("entity_set_f1", metrics.Options{"profile": "strict"})},
	}
	cases := []struct {
		name, gold, pred string
		want             float64 // every scorer agrees here
	}{
		{"large decimals differ in the last digit", "SELECT ?o WHERE { ex:n ex:bigdec ?o }", "SELECT ?o WHERE { VALUES ?o { 1234567890123456789.4 } }", 0},
		{"large decimal equal", "SELECT ?o WHERE { ex:n ex:bigdec ?o }", "SELECT ?o WHERE { VALUES ?o { 1234567890123456789.5 } }", 1},
		{"long fractions differ past float64 precision", "SELECT ?o WHERE { ex:n ex:longfrac ?o }", "SELECT ?o WHERE { VALUES ?o { 0.12345678901234567890124 } }", 0},
		{"double in its lexical form equals the same plain string", "SELECT ?o WHERE { ex:n ex:dsmall ?o }", `SELECT ?o WHERE { VALUES ?o { "0.0000001" } }`, 1},
		{"double is not its Go rendering", "SELECT ?o WHERE { ex:n ex:dsmall ?o }", `SELECT ?o WHERE { VALUES ?o { "1e-07" } }`, 0},
		{"integers beyond 2^53", "SELECT ?o WHERE { ex:n ex:bigint ?o }", "SELECT ?o WHERE { VALUES ?o { 9007199254740992 } }", 0},
		{"integer beyond int64 equal", "SELECT ?o WHERE { ex:n ex:hugeint ?o }", "SELECT ?o WHERE { VALUES ?o { 123456789012345678901234567890 } }", 1},
		{"negative zero double is not zero", "SELECT ?o WHERE { ex:n ex:negzero ?o }", `SELECT ?o WHERE { VALUES ?o { "0" } }`, 0},
		{"language tag is not compared", "SELECT ?o WHERE { ex:n ex:lang ?o }", `SELECT ?o WHERE { VALUES ?o { "chat" } }`, 1},
		{"datatype is not compared", "SELECT ?o WHERE { ex:n ex:typed ?o }", `SELECT ?o WHERE { VALUES ?o { "abc"@en } }`, 1},
	}
	for _, c := range cases {
		rec := &item.Record{
			Item:       item.Item{ID: "x", Gold: px + c.gold},
			GoldDone:   true,
			GoldResult: run(c.gold),
			Samples:    []*item.Sample{{Attempts: []*item.Attempt{{Query: px + c.pred, Executed: true, Result: run(c.pred)}}}},
		}
		for _, s := range scorers {
			got := s.m.Score(ctx, metrics.Input{Record: rec})
			if got.Err != "" || got.Value != c.want {
				t.Errorf("%s: %s = %v (err %q), want %v", c.name, s.label, got.Value, got.Err, c.want)
			}
		}
	}
}

package check

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/evalflow/evalflow/engine"
)

func cols(names ...string) []engine.ColumnInfo {
	var out []engine.ColumnInfo
	for _, n := range names {
		out = append(out, engine.ColumnInfo{Name: n})
	}
	return out
}

var shop = &engine.Schema{Tables: []engine.TableInfo{
	{Name: "singer", Columns: cols("singer_id", "name", "age", "country")},
	{Name: "concert", Columns: cols("concert_id", "singer_id", "year", "venue")},
}}

func TestSchemaSQL(t *testing.T) {
	tests := []struct {
		name, q string
		want    Score
	}{
		{"all known", "SELECT name, age FROM singer WHERE country = 'FR'", Score{Value: 1, Checked: 4}},
		{"aliases and qualified", "SELECT T1.name, T2.year FROM singer AS T1 JOIN concert T2 ON T1.singer_id = T2.singer_id", Score{Value: 1, Checked: 6}},
		{"unknown table", "SELECT name FROM singers", Score{Value: 0, Checked: 1, Reasons: []string{"table singers does not exist"}}},
		{"unknown qualified column", "SELECT s.nam FROM singer s", Score{Value: 0.5, Checked: 2, Reasons: []string{"column nam does not exist in table singer"}}},
		{"unknown bare column", "SELECT nme, age FROM singer", Score{Value: 0.75, Checked: 3, Reasons: []string{"column nme does not exist in singer"}}},
		{"CTE columns are not checked", "WITH top AS (SELECT name FROM singer) SELECT name FROM top", Score{Value: 1, Checked: 2}},
		{"output alias in ORDER BY", "SELECT count(*) AS n FROM concert GROUP BY venue ORDER BY n", Score{Value: 1, Checked: 2}},
		{"extract FROM is not a table", "SELECT extract(year FROM venue) FROM concert", Score{Value: 1, Checked: 2}},
		{"nothing to check", "SELECT 1", Score{Value: 1}},
		{"sub-query", "SELECT name FROM singer WHERE singer_id IN (SELECT singer_id FROM concert WHERE year > 2000)", Score{Value: 1, Checked: 4}},
		{"quoted names", `SELECT "name" FROM "singer"`, Score{Value: 1, Checked: 2}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, Schema(SQL, tc.q, shop)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// movies is a canned Cypher schema in the engine.Schema mapping that
// GraphFromSchema documents.
var movies = &engine.Schema{Tables: []engine.TableInfo{
	{Name: "Person", Columns: cols("name", "born")},
	{Name: "Movie", Columns: cols("title", "released")},
	{Name: "ACTED_IN", Columns: cols("roles"), ForeignKeys: []engine.ForeignKey{{Columns: []string{"(start)"}, RefTable: "Person"}, {Columns: []string{"(end)"}, RefTable: "Movie"}}},
	{Name: "DIRECTED", ForeignKeys: []engine.ForeignKey{{Columns: []string{"(start)"}, RefTable: "Person"}, {Columns: []string{"(end)"}, RefTable: "Movie"}}},
}}

func TestSchemaCypher(t *testing.T) {
	tests := []struct {
		name, q    string
		schema     Score
		props      Score
		propsKnown bool
	}{
		{"all valid", "MATCH (p:Person)-[r:ACTED_IN]->(m:Movie) WHERE m.released > 2000 RETURN p.name, r.roles",
			Score{Value: 1, Checked: 4}, Score{Value: 1, Checked: 3}, true},
		{"nothing extracted", "MATCH (n) RETURN n", Score{Value: 1}, Score{}, false},
		{"unknown label", "MATCH (p:Persn) RETURN p", Score{Value: 0, Checked: 1, Reasons: []string{"node label Persn does not exist"}}, Score{}, false},
		{"case hint", "MATCH (p:person) RETURN p", Score{Value: 0, Checked: 1, Reasons: []string{"node label person does not exist (did you mean Person?)"}}, Score{}, false},
		{"wrong direction", "MATCH (m:Movie)-[:ACTED_IN]->(p:Person) RETURN p.name",
			Score{Value: 2.0 / 3, Checked: 4, Reasons: []string{"path (Movie)-[:ACTED_IN]->(Person) does not exist (wrong direction)"}}, Score{Value: 1, Checked: 1}, true},
		{"unknown type", "MATCH (p:Person)-[:LIKES]->(m:Movie) RETURN m.title",
			Score{Value: (1 + 0 + 0) / 3.0, Checked: 4, Reasons: []string{"relationship type LIKES does not exist", "path (Person)-[:LIKES]->(Movie) does not exist"}}, Score{Value: 1, Checked: 1}, true},
		{"wrong property", "MATCH (p:Person {name: 'Tom'}) RETURN p.title",
			Score{Value: 1, Checked: 1}, Score{Value: 0.5, Checked: 2, Reasons: []string{"property title does not exist on label Person"}}, true},
		{"inferred end label", "MATCH (p:Person)-[:DIRECTED]->(m) RETURN m.title",
			Score{Value: 1, Checked: 3}, Score{Value: 1, Checked: 1}, true},
		{"disjunction picks the best label", "MATCH (x:Person|Movie) RETURN x.title, x.released",
			Score{Value: 1, Checked: 1}, Score{Value: 1, Checked: 2}, true},
		{"string decoy", "MATCH (p:Person) WHERE p.name = '(x:Nope)' RETURN p", Score{Value: 1, Checked: 1}, Score{Value: 1, Checked: 1}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.schema, Schema(Cypher, tc.q, movies)); diff != "" {
				t.Errorf("schema (-want +got):\n%s", diff)
			}
			p, ok := Properties(Cypher, tc.q, movies)
			if ok != tc.propsKnown {
				t.Errorf("properties known = %v, want %v", ok, tc.propsKnown)
			}
			if diff := cmp.Diff(tc.props, p); diff != "" {
				t.Errorf("properties (-want +got):\n%s", diff)
			}
		})
	}
}

// building mirrors engine/sparql's Describe: one table per class, and "*"
// listing every predicate.
var building = &engine.Schema{Tables: []engine.TableInfo{
	{Name: "https://brickschema.org/schema/Brick#AHU", Columns: cols("https://brickschema.org/schema/Brick#hasPoint")},
	{Name: "https://brickschema.org/schema/Brick#Temperature_Sensor"},
	{Name: "*", Columns: cols(rdfType, "https://brickschema.org/schema/Brick#hasPoint", "http://www.w3.org/2000/01/rdf-schema#label")},
}}

func TestSchemaSPARQL(t *testing.T) {
	const pfx = "PREFIX brick: <https://brickschema.org/schema/Brick#>\n"
	tests := []struct {
		name, q string
		want    Score
	}{
		{"known", pfx + "SELECT ?p WHERE { ?a a brick:AHU ; brick:hasPoint ?p . ?p rdfs:label ?l }", Score{Value: 1, Checked: 3}},
		{"unknown class", pfx + "SELECT ?a WHERE { ?a rdf:type brick:Chiller }",
			Score{Value: 0, Checked: 1, Reasons: []string{"class <https://brickschema.org/schema/Brick#Chiller> has no instances in the data"}}},
		{"unknown predicate in a path", pfx + "SELECT ?x WHERE { ?a brick:hasPoint/brick:isPointOf ?x }",
			Score{Value: 0.5, Checked: 2, Reasons: []string{"predicate <https://brickschema.org/schema/Brick#isPointOf> is not used in the data"}}},
		{"filter and values skipped", pfx + "SELECT ?a WHERE { VALUES ?a { brick:X } ?a a brick:AHU FILTER(regex(str(?a), 'x')) }", Score{Value: 1, Checked: 1}},
		{"undeclared prefix not checked", "SELECT ?a WHERE { ?a ex:p ?o }", Score{Value: 1}},
		{"blank node property list", pfx + "SELECT ?a WHERE { ?a brick:hasPoint [ a brick:Temperature_Sensor ] }", Score{Value: 1, Checked: 2}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, Schema(SPARQL, tc.q, building)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func FuzzSchema(f *testing.F) {
	for _, e := range readCorpus(f) {
		f.Add(e.Lang, e.Query)
	}
	f.Fuzz(func(t *testing.T, lang, q string) {
		for _, s := range []*engine.Schema{shop, movies, building} {
			sc := Schema(lang, q, s)
			if sc.Value < 0 || sc.Value > 1 {
				t.Fatalf("score %v out of range for %q", sc.Value, q)
			}
			if p, ok := Properties(lang, q, s); ok && (p.Value < 0 || p.Value > 1) {
				t.Fatalf("properties %v out of range for %q", p.Value, q)
			}
		}
	})
}

func TestGraphFromSchema(t *testing.T) {
	s := &engine.Schema{Tables: []engine.TableInfo{
		{Name: "A"}, {Name: "B"}, {Name: "C"},
		{Name: "R", ForeignKeys: []engine.ForeignKey{
			{Columns: []string{"(start)"}, RefTable: "A"}, {Columns: []string{"(start)"}, RefTable: "B"},
			{Columns: []string{"(end)"}, RefTable: "C"}}},
		{Name: "S", ForeignKeys: []engine.ForeignKey{{Columns: []string{"C"}, RefTable: "A"}}},
	}}
	g := GraphFromSchema(s)
	want := map[Hop]bool{{"A", "R", "C"}: true, {"B", "R", "C"}: true, {"C", "S", "A"}: true}
	if diff := cmp.Diff(want, g.Paths); diff != "" {
		t.Errorf("paths (-want +got):\n%s", diff)
	}
	if _, ok := g.Labels["R"]; ok {
		t.Error("a relationship type was read as a label")
	}
	// Without foreign keys every table is either.
	g = GraphFromSchema(&engine.Schema{Tables: []engine.TableInfo{{Name: "A"}, {Name: "R"}}})
	if _, ok := g.Types["R"]; !ok || g.Paths != nil {
		t.Errorf("no foreign keys: types %v, paths %v", g.Types, g.Paths)
	}
}

// TestCypherUnparsableScoresZero: a Cypher query the lexer already knows
// cannot parse scores 0 on schema and properties (never CyVer's
// nothing-extracted 1), with the reason recorded.
func TestCypherUnparsableScoresZero(t *testing.T) {
	s := &engine.Schema{Tables: []engine.TableInfo{{Name: "Person", Columns: []engine.ColumnInfo{{Name: "name"}}}}}
	for q, why := range map[string]string{
		"":                                        "empty query",
		"  // only a comment\n":                   "empty query",
		"MATCH (p:Person RETURN p.name":           "unclosed (",
		"MATCH (p:Person)) RETURN p":              "unbalanced )",
		"MATCH (p:Person {name: 'Al}) RETURN p":   "unterminated string",
		`MATCH (p:Person {name: 'Al\'}) RETURN p`: "unterminated string",
	} {
		sc := Schema(Cypher, q, s)
		p, ok := Properties(Cypher, q, s)
		if sc.Value != 0 || len(sc.Reasons) != 1 || !strings.HasSuffix(sc.Reasons[0], why) || !ok || p.Value != 0 {
			t.Errorf("%q: schema %+v, properties %+v %v; want 0 because %s", q, sc, p, ok, why)
		}
	}
	if sc := Schema(Cypher, `MATCH (p:Person {name: 'It\'s'}) RETURN p.name`, s); sc.Value != 1 {
		t.Errorf("escaped quote: schema %+v, want 1", sc)
	}
}

package llm

import (
	"testing"

	"github.com/evalflow/evalflow/engine"
)

func TestRenderSchemaPerLanguage(t *testing.T) {
	graph := &engine.Schema{Tables: []engine.TableInfo{
		{Name: "Person", Columns: []engine.ColumnInfo{{Name: "name", DeclType: "STRING"}}},
		{Name: "Movie", Columns: []engine.ColumnInfo{{Name: "title", DeclType: "STRING"}}},
		{Name: "ACTED_IN", Columns: []engine.ColumnInfo{{Name: "roles", DeclType: "LIST"}},
			ForeignKeys: []engine.ForeignKey{{Columns: []string{"(start)"}, RefTable: "Person"}, {Columns: []string{"(end)"}, RefTable: "Movie"}}},
	}}
	want := "(:Person {name: STRING})\n(:Movie {title: STRING})\n(:Person)-[:ACTED_IN {roles: LIST}]->(:Movie)"
	if got := RenderSchema(graph, SchemaOptions{Mode: SchemaFull, Language: "cypher"}); got != want {
		t.Errorf("cypher:\n%s\nwant\n%s", got, want)
	}
	rdf := &engine.Schema{Tables: []engine.TableInfo{
		{Name: "http://ex/Zone", Columns: []engine.ColumnInfo{{Name: "http://ex/hasPoint"}}},
		{Name: "*", Columns: []engine.ColumnInfo{{Name: "http://ex/hasPoint"}, {Name: "http://www.w3.org/1999/02/22-rdf-syntax-ns#type"}}},
	}}
	want = "<http://ex/Zone>: <http://ex/hasPoint>\nall predicates: <http://ex/hasPoint>, <http://www.w3.org/1999/02/22-rdf-syntax-ns#type>"
	if got := RenderSchema(rdf, SchemaOptions{Mode: SchemaFull, Language: "sparql"}); got != want {
		t.Errorf("sparql:\n%s\nwant\n%s", got, want)
	}
}

func TestRenderDefaultGenerate(t *testing.T) {
	tmpl, err := ParseTemplate("prompt", DefaultGeneratePrompt)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []PromptData{
		{},
		{Language: "sql", Question: "How many users?"},
		{Language: "cypher", Question: "  spaced  \n", Schema: "users(id INTEGER)\norders(id INTEGER)"},
		{Language: "sparql", Question: "", Schema: " \n"},
		{Language: "Pandas", Question: "q {{.X}} %s", Schema: "t(a)", Fields: map[string]any{"x": 1}},
	} {
		want, err := Render(tmpl, d)
		if err != nil {
			t.Fatal(err)
		}
		if got := RenderDefaultGenerate(d); got != want {
			t.Errorf("%+v:\n got %q\nwant %q", d, got, want)
		}
	}
}

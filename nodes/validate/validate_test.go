package validate_test

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"
	_ "modernc.org/sqlite"

	"github.com/evalflow/evalflow/check"
	"github.com/evalflow/evalflow/dsl"
	"github.com/evalflow/evalflow/engine"
	"github.com/evalflow/evalflow/engine/sqlite"
	"github.com/evalflow/evalflow/item"
	"github.com/evalflow/evalflow/nodes"
	_ "github.com/evalflow/evalflow/nodes/all"
	"github.com/evalflow/evalflow/nodes/validate"
	"github.com/evalflow/evalflow/planner"
	"github.com/evalflow/evalflow/table"
)

// shopDB writes a small SQLite database and returns its path.
func shopDB(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "shop.sqlite")
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, q := range []string{
		`CREATE TABLE item (id INTEGER PRIMARY KEY, name TEXT, price REAL)`,
		`INSERT INTO item VALUES (1,'pen',1.5),(2,'ink',3.25)`,
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	return path
}

// verdict is what a test compares of an attempt.
type verdict struct {
	Valid        bool
	Class        string
	SyntaxValid  *bool
	Safe         *bool
	SchemaScore  *float64
	PropsScore   *float64
	SchemaReason string
}

func summarize(a *item.Attempt) verdict {
	v := verdict{Valid: a.Valid, Class: a.ErrorClass, SyntaxValid: a.SyntaxValid, Safe: a.Safe, SchemaScore: a.SchemaScore, PropsScore: a.PropertiesScore}
	if len(a.SchemaReasons) > 0 {
		v.SchemaReason = a.SchemaReasons[0]
	}
	return v
}

func bp(b bool) *bool       { return &b }
func fp(f float64) *float64 { return &f }

func run(t *testing.T, v *validate.Validate, db, query string) *item.Attempt {
	t.Helper()
	at := &item.Attempt{Query: query}
	rec := &item.Record{Item: item.Item{ID: "x", DB: db}, Samples: []*item.Sample{{Attempts: []*item.Attempt{at}}}}
	if err := v.Process(context.Background(), rec); err != nil {
		t.Fatal(err)
	}
	if !at.Validated {
		t.Fatal("attempt not validated")
	}
	return at
}

func TestSQLite(t *testing.T) {
	ex, err := sqlite.New(engine.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer ex.Close()
	db := shopDB(t)
	v := &validate.Validate{Language: check.SQL, Safety: true, Syntax: true, Schema: true, MinSchemaScore: 1,
		Engine: &nodes.Engine{Block: &dsl.Engine{Name: "main", Kind: "sqlite"}, Exec: ex}}
	tests := []struct {
		name, q string
		want    verdict
	}{
		{"valid", "SELECT name FROM item WHERE price > 2", verdict{Valid: true, SyntaxValid: bp(true), Safe: bp(true), SchemaScore: fp(1)}},
		// Syntax is classed first; the safety verdict is still recorded.
		{"misspelt keyword", "SELEC name FROM item", verdict{Class: item.ClassSyntax, SyntaxValid: bp(false), Safe: bp(false), SchemaScore: fp(0.75), SchemaReason: "column SELEC does not exist in item"}},
		{"unsafe", "DELETE FROM item", verdict{Class: item.ClassSafety, SyntaxValid: bp(true), Safe: bp(false), SchemaScore: fp(1)}},
		{"stacked write", "SELECT 1; DROP TABLE item", verdict{Class: item.ClassSafety, SyntaxValid: bp(true), Safe: bp(false), SchemaScore: fp(1)}},
		{"unknown column (engine says schema)", "SELECT nme FROM item", verdict{Class: item.ClassSchema, SyntaxValid: bp(true), Safe: bp(true), SchemaScore: fp(0.5), SchemaReason: "column nme does not exist in item"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := summarize(run(t, v, db, tc.q))
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
	// A safe query the engine cannot parse is a syntax error.
	got := summarize(run(t, v, db, "SELECT name FROM item WHERE"))
	want := verdict{Class: item.ClassSyntax, SyntaxValid: bp(false), Safe: bp(true), SchemaScore: fp(1)}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("incomplete query (-want +got):\n%s", diff)
	}
}

// graphEngine is a Cypher engine with a canned schema: it counts Describe
// calls and accepts every query.
type graphEngine struct {
	schema    *engine.Schema
	describes atomic.Int32
	fail      bool
}

func (g *graphEngine) Execute(context.Context, engine.Query) (*table.Table, error) {
	return nil, errors.New("not used")
}

func (g *graphEngine) Prepare(_ context.Context, q engine.Query) error {
	if strings.Contains(q.Text, "RETRN") {
		return &engine.Error{Class: item.ClassSyntax, Msg: "Invalid input 'RETRN'"}
	}
	return nil
}

func (g *graphEngine) Describe(_ context.Context, db string) (*engine.Schema, error) {
	g.describes.Add(1)
	if g.fail {
		return nil, errors.New("no such graph " + db)
	}
	return g.schema, nil
}

var movies = &engine.Schema{Tables: []engine.TableInfo{
	{Name: "Person", Columns: []engine.ColumnInfo{{Name: "name"}, {Name: "born"}}},
	{Name: "Movie", Columns: []engine.ColumnInfo{{Name: "title"}}},
	{Name: "ACTED_IN", ForeignKeys: []engine.ForeignKey{{Columns: []string{"(start)"}, RefTable: "Person"}, {Columns: []string{"(end)"}, RefTable: "Movie"}}},
}}

func TestCypherCannedSchema(t *testing.T) {
	g := &graphEngine{schema: movies}
	v := &validate.Validate{Language: check.Cypher, Safety: true, Syntax: true, Schema: true, Properties: true,
		MinSchemaScore: 0.5, MinPropertiesScore: 1,
		Engine: &nodes.Engine{Block: &dsl.Engine{Name: "g", Kind: "falkordb"}, Exec: g}}
	tests := []struct {
		name, q string
		want    verdict
	}{
		{"valid", "MATCH (p:Person)-[:ACTED_IN]->(m:Movie) RETURN p.name, m.title",
			verdict{Valid: true, SyntaxValid: bp(true), Safe: bp(true), SchemaScore: fp(1), PropsScore: fp(1)}},
		{"no property: null, not a failure", "MATCH (p:Person) RETURN p",
			verdict{Valid: true, SyntaxValid: bp(true), Safe: bp(true), SchemaScore: fp(1)}},
		{"unknown property fails below min_properties_score", "MATCH (p:Person) RETURN p.title",
			verdict{Class: item.ClassSchema, SyntaxValid: bp(true), Safe: bp(true), SchemaScore: fp(1), PropsScore: fp(0)}},
		{"unknown label fails below min_schema_score", "MATCH (p:Persn) RETURN p",
			verdict{Class: item.ClassSchema, SyntaxValid: bp(true), Safe: bp(true), SchemaScore: fp(0), SchemaReason: "node label Persn does not exist"}},
		{"syntax error scores 0", "MATCH (p:Person) RETRN p.name",
			verdict{Class: item.ClassSyntax, SyntaxValid: bp(false), Safe: bp(true), SchemaScore: fp(0), PropsScore: fp(0),
				SchemaReason: "query does not parse, so the schema was not checked: the syntax check failed"}},
		{"write", "MATCH (p:Person) DETACH DELETE p",
			verdict{Class: item.ClassSafety, SyntaxValid: bp(true), Safe: bp(false), SchemaScore: fp(1)}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, summarize(run(t, v, "movies", tc.q))); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
	if n := g.describes.Load(); n != 1 {
		t.Errorf("Describe called %d times for one database, want 1 (cached)", n)
	}
}

// TestSchemaCacheConcurrent runs many items over two databases at once:
// each is described once, and the race detector sees the cache.
func TestSchemaCacheConcurrent(t *testing.T) {
	g := &graphEngine{schema: movies}
	v := &validate.Validate{Language: check.Cypher, Safety: true, Schema: true,
		Engine: &nodes.Engine{Block: &dsl.Engine{Name: "g", Kind: "neo4j"}, Exec: g}}
	var wg sync.WaitGroup
	for i := 0; i < 32; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			at := &item.Attempt{Query: "MATCH (p:Person) RETURN p.name"}
			rec := &item.Record{Item: item.Item{DB: []string{"a", "b"}[i%2]}, Samples: []*item.Sample{{Attempts: []*item.Attempt{at}}}}
			_ = v.Process(context.Background(), rec)
			if !at.Valid {
				t.Errorf("item %d: %s", i, at.ErrorMessage)
			}
		}(i)
	}
	wg.Wait()
	if n := g.describes.Load(); n != 2 {
		t.Errorf("Describe called %d times for two databases, want 2", n)
	}
}

func TestDescribeFailure(t *testing.T) {
	g := &graphEngine{fail: true}
	v := &validate.Validate{Language: check.Cypher, Safety: true, Schema: true,
		Engine: &nodes.Engine{Block: &dsl.Engine{Name: "g", Kind: "neo4j"}, Exec: g}}
	for i := 0; i < 2; i++ {
		// Describing the database is the harness's work: its failure makes
		// the item an error (Process returns it), never a failed query.
		at := &item.Attempt{Query: "MATCH (n) RETURN n"}
		rec := &item.Record{Item: item.Item{ID: "x", DB: "missing"}, Samples: []*item.Sample{{Attempts: []*item.Attempt{at}}}}
		err := v.Process(context.Background(), rec)
		if !errors.Is(err, nodes.ErrHarness) || !strings.Contains(err.Error(), `item "x"`) {
			t.Errorf("Process = %v, want a harness error naming the item", err)
		}
		if at.Valid || at.ErrorClass != item.ClassExecution || !strings.Contains(at.ErrorMessage, "no such graph missing") {
			t.Errorf("got valid=%v %s: %s", at.Valid, at.ErrorClass, at.ErrorMessage)
		}
	}
	if n := g.describes.Load(); n != 2 {
		t.Errorf("a failed Describe must not be cached: %d calls, want 2", n)
	}
}

var building = &engine.Schema{Tables: []engine.TableInfo{
	{Name: "https://brickschema.org/schema/Brick#AHU"},
	{Name: "*", Columns: []engine.ColumnInfo{{Name: "https://brickschema.org/schema/Brick#hasPoint"}}},
}}

func TestSPARQLCannedSchema(t *testing.T) {
	g := &graphEngine{schema: building}
	v := &validate.Validate{Language: check.SPARQL, Safety: true, Schema: true, MinSchemaScore: 1,
		Engine: &nodes.Engine{Block: &dsl.Engine{Name: "kg", Kind: "sparql"}, Exec: g}}
	const pfx = "PREFIX brick: <https://brickschema.org/schema/Brick#>\n"
	if got := summarize(run(t, v, "b", pfx+"SELECT ?p WHERE { ?a a brick:AHU ; brick:hasPoint ?p }")); !got.Valid {
		t.Errorf("valid query rejected: %+v", got)
	}
	got := summarize(run(t, v, "b", pfx+"SELECT ?p WHERE { ?a a brick:Chiller }"))
	want := verdict{Class: item.ClassSchema, Safe: bp(true), SchemaScore: fp(0), SchemaReason: "class <https://brickschema.org/schema/Brick#Chiller> has no instances in the data"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if got := summarize(run(t, v, "b", "SELECT * WHERE { SERVICE <http://x.example/sparql> { ?s ?p ?o } }")); got.Class != item.ClassSafety {
		t.Errorf("SERVICE not refused: %+v", got)
	}
}

// TestPipelineAttributes decodes the stage from HCL: the language comes from
// the engine kind, and bad settings are diagnosed.
func TestPipelineAttributes(t *testing.T) {
	dir := t.TempDir()
	db := shopDB(t)
	build := func(stage string) (*planner.Plan, string) {
		src := `
dataset "q" {
  source = "q.jsonl"
}
engine "main" {
  kind = "sqlite"
  path = "` + db + `"
}
stage "generate" {
  predictions = "p.jsonl"
}
stage "validate" {
  input = stage.generate
` + stage + `
}
`
		if err := os.WriteFile(filepath.Join(dir, "pipeline.hcl"), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		for _, f := range []string{"q.jsonl", "p.jsonl"} {
			if err := os.WriteFile(filepath.Join(dir, f), []byte(`{"id":"a","question":"q","gold":"SELECT 1","pred":"SELECT 1"}`+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		p, diags := dsl.Load(filepath.Join(dir, "pipeline.hcl"), dsl.LoadOptions{Env: []string{}})
		if diags.HasErrors() {
			t.Fatal(diags)
		}
		pl, diags := planner.Build(context.Background(), p, planner.Options{})
		if pl != nil {
			t.Cleanup(func() { pl.Close() })
		}
		if !diags.HasErrors() {
			return pl, ""
		}
		return pl, diags.Error()
	}
	if _, err := build("schema = true\nmin_schema_score = 0.5"); err != "" {
		t.Errorf("valid settings: %s", err)
	}
	for attr, want := range map[string]string{
		`language = "prolog"`:       "Unknown query language",
		`min_schema_score = 2`:      "Threshold out of range",
		`properties = true`:         "Properties check needs Cypher",
		`schema = "yes please"`:     "",
		`language = "sparql"`:       "",
		`min_properties_score = -1`: "Threshold out of range",
	} {
		_, err := build(attr)
		if want == "" {
			continue
		}
		if !strings.Contains(err, want) {
			t.Errorf("%s: got %q, want %q", attr, err, want)
		}
	}
}

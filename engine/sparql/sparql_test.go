package sparql_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/evalflow/evalflow/engine"
	"github.com/evalflow/evalflow/engine/sparql"
	"github.com/evalflow/evalflow/item"
	"github.com/evalflow/evalflow/table"
)

// needOxigraph skips when node or the Oxigraph npm package is missing,
// except under CI=true, where it fails: CI must run every engine.
func needOxigraph(t testing.TB) {
	t.Helper()
	fail := t.Skipf
	if os.Getenv("CI") != "" {
		fail = t.Fatalf
	}
	if _, err := exec.LookPath("node"); err != nil {
		fail("node is not on PATH (the embedded SPARQL engine needs Node.js 18+): %v", err)
	}
	if _, err := os.Stat(filepath.Join("oxigraph", "node_modules", "oxigraph", "package.json")); err != nil {
		fail("Oxigraph is not installed: run `npm ci --prefix engine/sparql/oxigraph` (scripts/install-test-deps.sh does): %v", err)
	}
}

func newExec(t testing.TB, opts map[string]any, cfg engine.Config) *sparql.Executor {
	t.Helper()
	cfg.Options = opts
	e, err := sparql.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := e.Close(); err != nil {
			t.Error(err)
		}
	})
	return e
}

func embedded(t testing.TB, opts map[string]any) *sparql.Executor {
	t.Helper()
	needOxigraph(t)
	if opts == nil {
		opts = map[string]any{}
	}
	if _, ok := opts["files"]; !ok {
		opts["files"] = []any{"testdata/small.ttl"}
	}
	return newExec(t, opts, engine.Config{Timeout: 20 * time.Second})
}

const prefixes = "PREFIX ex: <http://example.org/>\nPREFIX rdfs: <http://www.w3.org/2000/01/rdf-schema#>\n"

func col(name string, typ table.Type) table.Column { return table.Column{Name: name, Type: typ} }

func TestQueryForm(t *testing.T) {
	for q, want := range map[string]string{
		"SELECT * {}":         "SELECT",
		"  select ?x {}":      "SELECT",
		"# a comment\nASK {}": "ASK",
		"PREFIX ex: <http://e/#frag>\nCONSTRUCT {} {}":              "CONSTRUCT",
		"prefix : <http://e/> base <http://b#> # c\n  DESCRIBE <x>": "DESCRIBE",
		"PREFIX a.b-c: <http://e/>\nINSERT DATA {}":                 "INSERT",
		"WITH <g> DELETE { ?s ?p ?o } WHERE {}":                     "WITH",
		"":                                                          "",
		"# only a comment":                                          "",
		"{ ?s ?p ?o }":                                              "",
		"PREFIX ex <http://e/> SELECT":                              "PREFIX",
	} {
		if got := sparql.QueryForm(q); got != want {
			t.Errorf("QueryForm(%q) = %q, want %q", q, got, want)
		}
	}
}

// TestEmbeddedValues runs queries over testdata/small.ttl and checks the
// normal forms, in every result format Oxigraph writes.
func TestEmbeddedValues(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		name, query string
		want        *table.Table
		wantNT      *table.Table // terms = "ntriples"; nil: same as want
	}{
		{
			name:  "typed literals",
			query: prefixes + "SELECT ?age ?height ?score ?member ?born ?big WHERE { ex:alice ex:age ?age ; ex:height ?height ; ex:score ?score ; ex:member ?member ; ex:born ?born ; ex:big ?big }",
			want: &table.Table{
				Columns: []table.Column{col("age", table.TypeInt), col("height", table.TypeFloat), col("score", table.TypeFloat), col("member", table.TypeBool), col("born", table.TypeString), col("big", table.TypeString)},
				Rows:    [][]table.Value{{int64(42), 1.68, 350.0, true, "1983-04-01", "123456789012345678901234567890"}},
			},
			wantNT: &table.Table{
				Columns: []table.Column{col("age", table.TypeString), col("height", table.TypeString), col("score", table.TypeString), col("member", table.TypeString), col("born", table.TypeString), col("big", table.TypeString)},
				Rows: [][]table.Value{{`"42"^^<http://www.w3.org/2001/XMLSchema#integer>`, `"1.68"^^<http://www.w3.org/2001/XMLSchema#decimal>`,
					`"350"^^<http://www.w3.org/2001/XMLSchema#double>`, `"true"^^<http://www.w3.org/2001/XMLSchema#boolean>`,
					`"1983-04-01"^^<http://www.w3.org/2001/XMLSchema#date>`, `"123456789012345678901234567890"^^<http://www.w3.org/2001/XMLSchema#integer>`}},
			},
		},
		{
			name:  "int subtype and boolean 0",
			query: prefixes + "SELECT ?age ?member WHERE { ex:bob ex:age ?age ; ex:member ?member }",
			want:  &table.Table{Columns: []table.Column{col("age", table.TypeInt), col("member", table.TypeBool)}, Rows: [][]table.Value{{int64(7), false}}},
			// Oxigraph stores numbers and booleans as values: xsd:int comes
			// back as xsd:integer, "0" as "false", 3.5e2 as "350".
			wantNT: &table.Table{Columns: []table.Column{col("age", table.TypeString), col("member", table.TypeString)},
				Rows: [][]table.Value{{`"7"^^<http://www.w3.org/2001/XMLSchema#integer>`, `"false"^^<http://www.w3.org/2001/XMLSchema#boolean>`}}},
		},
		{
			name:   "language tags are dropped from values",
			query:  prefixes + "SELECT ?l WHERE { ex:alice rdfs:label ?l } ORDER BY ?l",
			want:   &table.Table{Columns: []table.Column{col("l", table.TypeString)}, Rows: [][]table.Value{{"Alice"}, {"Alicia"}}},
			wantNT: &table.Table{Columns: []table.Column{col("l", table.TypeString)}, Rows: [][]table.Value{{`"Alice"@en`}, {`"Alicia"@es-mx`}}},
		},
		{
			name:   "escapes",
			query:  prefixes + "SELECT ?n WHERE { ex:alice ex:note ?n }",
			want:   &table.Table{Columns: []table.Column{col("n", table.TypeString)}, Rows: [][]table.Value{{"line one\nline \"two\"\ttabbed"}}},
			wantNT: &table.Table{Columns: []table.Column{col("n", table.TypeString)}, Rows: [][]table.Value{{`"line one\nline \"two\"` + "\t" + `tabbed"`}}},
		},
		{
			name:  "unbound optional is nil",
			query: prefixes + "SELECT ?p ?knows WHERE { ?p a ex:Person OPTIONAL { ?p ex:knows ?knows } } ORDER BY ?p",
			want: &table.Table{Columns: []table.Column{col("p", table.TypeString), col("knows", table.TypeString)},
				Rows: [][]table.Value{{"http://example.org/alice", "http://example.org/bob"}, {"http://example.org/bob", nil}}},
			wantNT: &table.Table{Columns: []table.Column{col("p", table.TypeString), col("knows", table.TypeString)},
				Rows: [][]table.Value{{"<http://example.org/alice>", "<http://example.org/bob>"}, {"<http://example.org/bob>", nil}}},
		},
		{
			name:   "never bound column",
			query:  prefixes + "SELECT ?p ?x WHERE { ?p a ex:Robot OPTIONAL { ?p ex:knows ?x } }",
			want:   &table.Table{Columns: []table.Column{col("p", table.TypeString), col("x", table.TypeAny)}, Rows: [][]table.Value{{"http://example.org/carol", nil}}},
			wantNT: &table.Table{Columns: []table.Column{col("p", table.TypeString), col("x", table.TypeAny)}, Rows: [][]table.Value{{"<http://example.org/carol>", nil}}},
		},
		{
			name:  "blank node",
			query: prefixes + "SELECT ?isb ?city WHERE { ex:alice ex:address ?a . ?a ex:city ?city BIND(isBlank(?a) AS ?isb) }",
			want:  &table.Table{Columns: []table.Column{col("isb", table.TypeBool), col("city", table.TypeString)}, Rows: [][]table.Value{{true, "Paris"}}},
			wantNT: &table.Table{Columns: []table.Column{col("isb", table.TypeString), col("city", table.TypeString)},
				Rows: [][]table.Value{{`"true"^^<http://www.w3.org/2001/XMLSchema#boolean>`, `"Paris"`}}},
		},
		{
			name:  "mixed column",
			query: prefixes + "SELECT ?v WHERE { VALUES ?v { 1 \"a\" } }",
			want:  &table.Table{Columns: []table.Column{col("v", table.TypeAny)}, Rows: [][]table.Value{{int64(1)}, {"a"}}},
			wantNT: &table.Table{Columns: []table.Column{col("v", table.TypeString)},
				Rows: [][]table.Value{{`"1"^^<http://www.w3.org/2001/XMLSchema#integer>`}, {`"a"`}}},
		},
		{
			name:  "empty result keeps columns",
			query: prefixes + "SELECT ?s ?o WHERE { ?s ex:nothing ?o }",
			want:  &table.Table{Columns: []table.Column{col("s", table.TypeAny), col("o", table.TypeAny)}, Rows: [][]table.Value{}},
		},
		{
			name:  "ask true",
			query: prefixes + "ASK { ex:alice ex:knows ex:bob }",
			want:  &table.Table{Columns: []table.Column{col("ask", table.TypeBool)}, Rows: [][]table.Value{{true}}},
		},
		{
			name:  "ask false",
			query: prefixes + "ASK { ex:bob ex:knows ex:alice }",
			want:  &table.Table{Columns: []table.Column{col("ask", table.TypeBool)}, Rows: [][]table.Value{{false}}},
		},
	}
	for _, accept := range []string{"json", "xml", "tsv"} {
		for _, terms := range []string{sparql.TermsValue, sparql.TermsNTriples} {
			e := embedded(t, map[string]any{"accept": accept, "terms": terms})
			for _, c := range cases {
				t.Run(accept+"/"+terms+"/"+c.name, func(t *testing.T) {
					got, err := e.Execute(ctx, engine.Query{Text: c.query})
					if err != nil {
						t.Fatal(err)
					}
					want := c.want
					if terms == sparql.TermsNTriples && c.wantNT != nil {
						want = c.wantNT
					}
					if diff := cmp.Diff(want, got); diff != "" {
						t.Errorf("(-want +got)\n%s", diff)
					}
				})
			}
		}
	}
}

func TestEmbeddedBlankNodeLabel(t *testing.T) {
	e := embedded(t, nil)
	got, err := e.Execute(context.Background(), engine.Query{Text: prefixes + "SELECT ?a WHERE { ex:alice ex:address ?a }"})
	if err != nil {
		t.Fatal(err)
	}
	if s, ok := got.Rows[0][0].(string); !ok || !strings.HasPrefix(s, "_:") || len(s) < 3 {
		t.Errorf("blank node = %#v, want \"_:label\"", got.Rows[0][0])
	}
}

func TestEmbeddedMaxRows(t *testing.T) {
	e := embedded(t, nil)
	q := prefixes + "SELECT ?s ?p ?o WHERE { ?s ?p ?o }"
	got, err := e.Execute(context.Background(), engine.Query{Text: q, MaxRows: 3})
	if err != nil {
		t.Fatal(err)
	}
	if got.NumRows() != 3 || !got.Truncated {
		t.Errorf("got %d rows, truncated %v; want 3, true", got.NumRows(), got.Truncated)
	}
	got, err = e.Execute(context.Background(), engine.Query{Text: q, MaxRows: 1000})
	if err != nil {
		t.Fatal(err)
	}
	if got.Truncated {
		t.Errorf("truncated at %d rows under a cap of 1000", got.NumRows())
	}
}

// TestSafetyBeforeSending: forms other than SELECT and ASK never reach the
// endpoint.
func TestSafetyBeforeSending(t *testing.T) {
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		http.Error(w, "no", http.StatusInternalServerError)
	}))
	defer srv.Close()
	e := newExec(t, map[string]any{"endpoint": srv.URL}, engine.Config{})
	for _, q := range []string{
		"CONSTRUCT { ?s ?p ?o } WHERE { ?s ?p ?o }",
		"PREFIX ex: <http://e/#>\n# hi\nDESCRIBE ex:a",
		"INSERT DATA { <http://a> <http://b> <http://c> }",
		"DELETE WHERE { ?s ?p ?o }",
		"WITH <http://g> DELETE { ?s ?p ?o } WHERE { ?s ?p ?o }",
		"LOAD <http://example.org/x.ttl>",
		"DROP ALL",
		"CLEAR DEFAULT",
	} {
		_, err := e.Execute(context.Background(), engine.Query{Text: q})
		if c := engine.ClassOf(err); c != item.ClassSafety {
			t.Errorf("Execute(%q): class %q (%v), want safety", q, c, err)
		}
		err = e.Prepare(context.Background(), engine.Query{Text: q})
		if c := engine.ClassOf(err); c != item.ClassSafety {
			t.Errorf("Prepare(%q): class %q (%v), want safety", q, c, err)
		}
	}
	if n := hits.Load(); n != 0 {
		t.Errorf("%d requests reached the endpoint", n)
	}
}

func TestEmbeddedErrors(t *testing.T) {
	e := embedded(t, nil)
	ctx := context.Background()
	for _, c := range []struct {
		query, class, msg string
	}{
		{"SELEC ?x WHERE { ?x ?y ?z }", item.ClassSyntax, "error at 1:"},
		{"SELECT ?x WHERE { ?x ?y ?z ", item.ClassSyntax, "error at 1:"},
		{"PREFIX ex: <http://example.org/>\nSELECT ?x WHERE { ?x nope:p ?z }", item.ClassSyntax, "Prefix not found"},
		{"", item.ClassSyntax, "empty query"},
		{"SELECT * WHERE { SERVICE <http://example.org/sparql> { ?s ?p ?o } }", item.ClassExecution, "service"},
	} {
		_, err := e.Execute(ctx, engine.Query{Text: c.query})
		if got := engine.ClassOf(err); got != c.class || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("Execute(%q) = %v (class %q); want class %q containing %q", c.query, err, got, c.class, c.msg)
		}
		if c.class == item.ClassSyntax {
			err := e.Prepare(ctx, engine.Query{Text: c.query})
			if got := engine.ClassOf(err); got != c.class {
				t.Errorf("Prepare(%q) = %v (class %q); want %q", c.query, err, got, c.class)
			}
		}
	}
	if err := e.Prepare(ctx, engine.Query{Text: prefixes + "SELECT ?s WHERE { ?s a ex:Person }"}); err != nil {
		t.Errorf("Prepare(valid) = %v", err)
	}
	if err := e.Prepare(ctx, engine.Query{Text: prefixes + "ASK { ?s ?p ?o }"}); err != nil {
		t.Errorf("Prepare(ASK) = %v", err)
	}
}

// TestEmbeddedTimeoutRestarts runs a query that would take minutes, checks
// that it ends at its timeout as a timeout, that the server process was
// killed, and that the next query is answered by a fresh server.
func TestEmbeddedTimeoutRestarts(t *testing.T) {
	e := embedded(t, nil)
	ctx := context.Background()
	count := prefixes + "SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }"
	want, err := e.Execute(ctx, engine.Query{Text: count})
	if err != nil {
		t.Fatal(err)
	}
	pids := sparql.ServerPIDs(e)
	if len(pids) != 1 {
		t.Fatalf("server pids %v, want one", pids)
	}
	slow := "SELECT (COUNT(*) AS ?n) WHERE { ?a ?b ?c . ?d ?e ?f . ?g ?h ?i . ?j ?k ?l . ?m ?n2 ?o . ?q ?r ?s }"
	start := time.Now()
	_, err = e.Execute(ctx, engine.Query{Text: slow, Timeout: 500 * time.Millisecond})
	took := time.Since(start)
	if c := engine.ClassOf(err); c != item.ClassTimeout {
		t.Fatalf("slow query: class %q (%v), want timeout", c, err)
	}
	if took > 5*time.Second {
		t.Errorf("slow query returned after %s; timeout was 500ms", took)
	}
	deadline := time.Now().Add(5 * time.Second)
	for processAlive(pids[0]) {
		if time.Now().After(deadline) {
			t.Fatalf("server %d still alive after its query timed out", pids[0])
		}
		time.Sleep(20 * time.Millisecond)
	}
	got, err := e.Execute(ctx, engine.Query{Text: count})
	if err != nil {
		t.Fatalf("query after the timeout: %v", err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("after restart (-want +got)\n%s", diff)
	}
	if now := sparql.ServerPIDs(e); len(now) != 1 || now[0] == pids[0] {
		t.Errorf("server pids after restart %v, before %v", now, pids)
	}
}

func processAlive(pid int) bool {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return false
	}
	// A zombie (state Z) has exited.
	f := strings.Fields(string(b))
	return len(f) > 2 && f[2] != "Z"
}

func TestEmbeddedCancel(t *testing.T) {
	e := embedded(t, nil)
	ctx, cancel := context.WithCancel(context.Background())
	go func() { time.Sleep(300 * time.Millisecond); cancel() }()
	slow := "SELECT (COUNT(*) AS ?n) WHERE { ?a ?b ?c . ?d ?e ?f . ?g ?h ?i . ?j ?k ?l . ?m ?n2 ?o . ?q ?r ?s }"
	_, err := e.Execute(ctx, engine.Query{Text: slow, Timeout: time.Minute})
	if c := engine.ClassOf(err); c != item.ClassCancelled {
		t.Errorf("class %q (%v), want cancelled", c, err)
	}
	if _, err := e.Execute(context.Background(), engine.Query{Text: "ASK {}"}); err != nil {
		t.Errorf("query after cancel: %v", err)
	}
}

// TestEmbeddedPerItemDB: Query.DB picks the item's file; each file has its
// own servers.
func TestEmbeddedPerItemDB(t *testing.T) {
	needOxigraph(t)
	dir := t.TempDir()
	for name, body := range map[string]string{
		"a.ttl": "<http://e/a> <http://e/p> 1 .",
		"b.nt":  "<http://e/b> <http://e/p> \"2\"^^<http://www.w3.org/2001/XMLSchema#integer> .\n<http://e/b> <http://e/q> <http://e/c> .",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	e := newExec(t, map[string]any{"max_databases": 1}, engine.Config{})
	ctx := context.Background()
	q := "SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }"
	for _, c := range []struct {
		db   string
		want int64
	}{{"a.ttl", 1}, {"b.nt", 2}, {"a.ttl", 1}} {
		got, err := e.Execute(ctx, engine.Query{Text: q, DB: filepath.Join(dir, c.db)})
		if err != nil {
			t.Fatal(err)
		}
		if got.Rows[0][0] != c.want {
			t.Errorf("%s: %v triples, want %d", c.db, got.Rows[0][0], c.want)
		}
		if n := len(sparql.ServerPIDs(e)); n != 1 {
			t.Errorf("%d servers alive under max_databases = 1", n)
		}
	}
	_, err := e.Execute(ctx, engine.Query{Text: q, DB: filepath.Join(dir, "missing.ttl")})
	if c := engine.ClassOf(err); c != item.ClassExecution || !strings.Contains(err.Error(), "not found") {
		t.Errorf("missing file: %v (class %q)", err, c)
	}
	bad := filepath.Join(dir, "bad.ttl")
	os.WriteFile(bad, []byte("<http://e/a> <http://e/p> ."), 0o644)
	_, err = e.Execute(ctx, engine.Query{Text: q, DB: bad})
	if c := engine.ClassOf(err); c != item.ClassExecution || !strings.Contains(err.Error(), "bad.ttl") {
		t.Errorf("unparsable file: %v (class %q)", err, c)
	}
	_, err = e.Execute(ctx, engine.Query{Text: q})
	if c := engine.ClassOf(err); c != item.ClassExecution || !strings.Contains(err.Error(), "no data") {
		t.Errorf("no data: %v (class %q)", err, c)
	}
}

func TestEmbeddedConcurrent(t *testing.T) {
	needOxigraph(t)
	e := newExec(t, map[string]any{"files": "testdata/small.ttl"}, engine.Config{MaxOpen: 3})
	ctx := context.Background()
	errs := make(chan error, 12)
	for i := 0; i < 12; i++ {
		go func() {
			got, err := e.Execute(ctx, engine.Query{Text: prefixes + "SELECT ?n WHERE { ?p ex:name ?n } ORDER BY ?n"})
			if err == nil && got.NumRows() != 3 {
				err = errors.New("wrong row count")
			}
			errs <- err
		}()
	}
	for i := 0; i < 12; i++ {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
	if n := len(sparql.ServerPIDs(e)); n < 1 || n > 3 {
		t.Errorf("%d servers for MaxOpen = 3", n)
	}
}

func TestCloseStopsServers(t *testing.T) {
	needOxigraph(t)
	e, err := sparql.New(engine.Config{Options: map[string]any{"files": []string{"testdata/small.ttl"}}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Execute(context.Background(), engine.Query{Text: "ASK {}"}); err != nil {
		t.Fatal(err)
	}
	pids := sparql.ServerPIDs(e)
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	for _, p := range pids {
		if processAlive(p) {
			t.Errorf("server %d alive after Close", p)
		}
	}
	_, err = e.Execute(context.Background(), engine.Query{Text: "ASK {}"})
	if err == nil || !strings.Contains(err.Error(), "closed") {
		t.Errorf("Execute after Close = %v", err)
	}
}

func TestDescribe(t *testing.T) {
	e := embedded(t, nil)
	s, err := e.Describe(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	names := func(ti engine.TableInfo) []string {
		var out []string
		for _, c := range ti.Columns {
			out = append(out, c.Name)
		}
		return out
	}
	var got []string
	for _, ti := range s.Tables {
		got = append(got, ti.Name)
	}
	if diff := cmp.Diff([]string{"http://example.org/Person", "http://example.org/Robot", "*"}, got); diff != "" {
		t.Fatalf("classes (-want +got)\n%s", diff)
	}
	robot, _ := s.Table("http://example.org/Robot")
	if diff := cmp.Diff([]string{"http://example.org/name", "http://www.w3.org/1999/02/22-rdf-syntax-ns#type"}, names(*robot)); diff != "" {
		t.Errorf("Robot predicates (-want +got)\n%s", diff)
	}
	all, _ := s.Table(sparql.AllPredicates)
	if len(all.Columns) != 13 || !strings.Contains(strings.Join(names(*all), " "), "http://example.org/city") {
		t.Errorf("all predicates: %v", names(*all))
	}
}

func TestOptions(t *testing.T) {
	for _, c := range []struct {
		opts map[string]any
		err  string
	}{
		{map[string]any{"endpoint": "ftp://x"}, "http(s) URL"},
		{map[string]any{"endpoint": "http://x", "files": []any{"a.ttl"}}, "not both"},
		{map[string]any{"terms": "raw"}, "terms"},
		{map[string]any{"accept": "html"}, "accept"},
		{map[string]any{"method": "put"}, "method"},
		{map[string]any{"files": []any{1}}, "files"},
		{map[string]any{"db_as_graph": true}, "needs an endpoint"},
		{map[string]any{"max_databases": 0}, "max_databases"},
		{map[string]any{"start_timeout": "soon"}, "start_timeout"},
		{map[string]any{"endpont": "http://x"}, `unknown option "endpont"`},
	} {
		_, err := sparql.New(engine.Config{Options: c.opts})
		if err == nil || !strings.Contains(err.Error(), c.err) {
			t.Errorf("New(%v) = %v, want error containing %q", c.opts, err, c.err)
		}
	}
	if _, err := engine.New(context.Background(), sparql.Kind, engine.Config{Options: map[string]any{"endpoint": "http://127.0.0.1:1/sparql"}}); err != nil {
		t.Errorf("registered kind: %v", err)
	}
}

// TestMissingOxigraph: a clear error that says how to install it.
func TestMissingOxigraph(t *testing.T) {
	e := newExec(t, map[string]any{"files": "testdata/small.ttl", "oxigraph_dir": t.TempDir()}, engine.Config{})
	_, err := e.Execute(context.Background(), engine.Query{Text: "ASK {}"})
	if err == nil || !strings.Contains(err.Error(), "npm ci --prefix ") {
		t.Errorf("got %v", err)
	}
	e = newExec(t, map[string]any{"files": "testdata/small.ttl", "node": "no-such-node-binary"}, engine.Config{})
	needOxigraph(t)
	_, err = e.Execute(context.Background(), engine.Query{Text: "ASK {}"})
	if err == nil || !strings.Contains(err.Error(), "Node.js") {
		t.Errorf("got %v", err)
	}
}

package sparql_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/evalflow/evalflow/engine"
	"github.com/evalflow/evalflow/engine/sparql"
	"github.com/evalflow/evalflow/item"
	"github.com/evalflow/evalflow/table"
)

// canned serves one fixed body with one content type and records what the
// client sent.
func canned(t *testing.T, ctype, body string, status int) (*httptest.Server, *http.Request) {
	t.Helper()
	var got http.Request
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_ = r.ParseForm()
		got = *r
		w.Header().Set("Content-Type", ctype)
		w.WriteHeader(status)
		_, _ = w.Write([]byte(body))
	}))
	t.Cleanup(srv.Close)
	return srv, &got
}

const xmlBody = `<?xml version="1.0"?>
<sparql xmlns="http://www.w3.org/2005/sparql-results#">
  <head><variable name="s"/><variable name="n"/><variable name="l"/><variable name="b"/></head>
  <results>
    <result>
      <binding name="s"><uri>http://e/a</uri></binding>
      <binding name="n"><literal datatype="http://www.w3.org/2001/XMLSchema#integer">42</literal></binding>
      <binding name="l"><literal xml:lang="fr">chat &amp; chien</literal></binding>
      <binding name="b"><bnode>r1</bnode></binding>
    </result>
    <result>
      <binding name="n"><literal datatype="http://www.w3.org/2001/XMLSchema#double">1.5E0</literal></binding>
    </result>
  </results>
</sparql>`

const tsvBody = "?s\t?n\t?l\t?b\n" +
	"<http://e/a>\t42\t\"chat & chien\"@fr\t_:r1\n" +
	"\t1.5E0\t\t\n"

const jsonVirtuoso = `{"head":{"link":[],"vars":["s","n","l","b"]},"results":{"distinct":false,"ordered":true,"bindings":[
 {"s":{"type":"uri","value":"http://e/a"},"n":{"type":"typed-literal","datatype":"http://www.w3.org/2001/XMLSchema#integer","value":"42"},
  "l":{"type":"literal","xml:lang":"fr","value":"chat & chien"},"b":{"type":"bnode","value":"r1"}},
 {"n":{"type":"typed-literal","datatype":"http://www.w3.org/2001/XMLSchema#double","value":"1.5E0"}}]}}`

func TestCannedFormats(t *testing.T) {
	want := &table.Table{
		Columns: []table.Column{{Name: "s", Type: table.TypeString}, {Name: "n", Type: table.TypeAny}, {Name: "l", Type: table.TypeString}, {Name: "b", Type: table.TypeString}},
		// "1.5E0" keeps its lexical form: float64 1.5 would print "1.5".
		Rows: [][]table.Value{{"http://e/a", int64(42), "chat & chien", "_:r1"}, {nil, "1.5E0", nil, nil}},
	}
	wantNT := &table.Table{
		Columns: []table.Column{{Name: "s", Type: table.TypeString}, {Name: "n", Type: table.TypeString}, {Name: "l", Type: table.TypeString}, {Name: "b", Type: table.TypeString}},
		Rows: [][]table.Value{
			{"<http://e/a>", `"42"^^<http://www.w3.org/2001/XMLSchema#integer>`, `"chat & chien"@fr`, "_:r1"},
			{nil, `"1.5E0"^^<http://www.w3.org/2001/XMLSchema#double>`, nil, nil},
		},
	}
	for _, c := range []struct{ name, ctype, body string }{
		{"xml", "application/sparql-results+xml; charset=utf-8", xmlBody},
		{"tsv", "text/tab-separated-values; charset=utf-8", tsvBody},
		{"virtuoso json", "application/sparql-results+json", jsonVirtuoso},
	} {
		for _, terms := range []string{sparql.TermsValue, sparql.TermsNTriples} {
			t.Run(c.name+"/"+terms, func(t *testing.T) {
				srv, _ := canned(t, c.ctype, c.body, 200)
				e := newExec(t, map[string]any{"endpoint": srv.URL, "terms": terms}, engine.Config{})
				got, err := e.Execute(context.Background(), engine.Query{Text: "SELECT * WHERE { ?s ?p ?o }"})
				if err != nil {
					t.Fatal(err)
				}
				w := want
				if terms == sparql.TermsNTriples {
					w = wantNT
				}
				if diff := cmp.Diff(w, got); diff != "" {
					t.Errorf("(-want +got)\n%s", diff)
				}
			})
		}
	}
}

func TestCannedCSV(t *testing.T) {
	srv, _ := canned(t, "text/csv", "s,n\r\nhttp://e/a,42\r\n,\"x,y\"\r\n", 200)
	e := newExec(t, map[string]any{"endpoint": srv.URL, "accept": "csv"}, engine.Config{})
	got, err := e.Execute(context.Background(), engine.Query{Text: "SELECT * {}"})
	if err != nil {
		t.Fatal(err)
	}
	want := &table.Table{Columns: []table.Column{{Name: "s", Type: table.TypeString}, {Name: "n", Type: table.TypeString}},
		Rows: [][]table.Value{{"http://e/a", "42"}, {nil, "x,y"}}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got)\n%s", diff)
	}
}

func TestCannedASK(t *testing.T) {
	askTable := func(b bool) *table.Table {
		return &table.Table{Columns: []table.Column{{Name: "ask", Type: table.TypeBool}}, Rows: [][]table.Value{{b}}}
	}
	for _, c := range []struct {
		name, ctype, body string
		want              bool
	}{
		{"json", "application/sparql-results+json", `{"head":{},"boolean":false}`, false},
		{"xml", "application/sparql-results+xml", `<sparql xmlns="http://www.w3.org/2005/sparql-results#"><head/><boolean>true</boolean></sparql>`, true},
		{"tsv bare", "text/tab-separated-values", "true\n", true},
		{"csv bare", "text/csv", "false", false},
		// Virtuoso answers ASK in some formats as a one-cell table.
		{"virtuoso retval", "application/sparql-results+json", `{"head":{"vars":["__ask_retval"]},"results":{"bindings":[{"__ask_retval":{"type":"typed-literal","datatype":"http://www.w3.org/2001/XMLSchema#integer","value":"1"}}]}}`, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			srv, _ := canned(t, c.ctype, c.body, 200)
			e := newExec(t, map[string]any{"endpoint": srv.URL}, engine.Config{})
			got, err := e.Execute(context.Background(), engine.Query{Text: "PREFIX x: <http://x#>\nASK { ?s ?p ?o }"})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(askTable(c.want), got); diff != "" {
				t.Errorf("(-want +got)\n%s", diff)
			}
		})
	}
}

// TestProtocolRequest checks what goes over the wire for each method.
func TestProtocolRequest(t *testing.T) {
	const q = "SELECT * WHERE { ?s ?p ?o }"
	for _, c := range []struct {
		method, httpMethod, ctype string
	}{
		{"post", "POST", "application/x-www-form-urlencoded"},
		{"get", "GET", ""},
		{"post-direct", "POST", "application/sparql-query; charset=utf-8"},
	} {
		t.Run(c.method, func(t *testing.T) {
			var gotQuery, gotMethod, gotCT, gotAccept, gotAuth, gotGraph string
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				gotMethod, gotCT, gotAccept, gotAuth = r.Method, r.Header.Get("Content-Type"), r.Header.Get("Accept"), r.Header.Get("Authorization")
				if c.method == "post-direct" {
					b, _ := io.ReadAll(r.Body)
					gotQuery = string(b)
				} else {
					_ = r.ParseForm()
					gotQuery = r.Form.Get("query")
				}
				gotGraph = r.URL.Query().Get("default-graph-uri") + r.PostFormValue("default-graph-uri")
				w.Header().Set("Content-Type", "application/sparql-results+json")
				_, _ = w.Write([]byte(`{"head":{"vars":[]},"results":{"bindings":[]}}`))
			}))
			defer srv.Close()
			e := newExec(t, map[string]any{"endpoint": srv.URL + "/sparql", "method": c.method, "db_as_graph": true,
				"headers": map[string]any{"Authorization": "Bearer t"}}, engine.Config{})
			if _, err := e.Execute(context.Background(), engine.Query{Text: q, DB: "http://g/1"}); err != nil {
				t.Fatal(err)
			}
			if gotQuery != q || gotMethod != c.httpMethod || gotCT != c.ctype || gotAuth != "Bearer t" || gotGraph != "http://g/1" {
				t.Errorf("sent %s %q query %q graph %q auth %q", gotMethod, gotCT, gotQuery, gotGraph, gotAuth)
			}
			if !strings.HasPrefix(gotAccept, "application/sparql-results+json") {
				t.Errorf("Accept %q", gotAccept)
			}
		})
	}
}

func TestEndpointErrors(t *testing.T) {
	for _, c := range []struct {
		status      int
		ctype, body string
		class       string
	}{
		{400, "text/plain", "Parse error: line 1", item.ClassSyntax},
		{500, "text/plain", "boom", item.ClassExecution},
		{200, "text/html", "<html>", item.ClassExecution},
		{200, "application/sparql-results+json", `{"head":`, item.ClassExecution},
	} {
		srv, _ := canned(t, c.ctype, c.body, c.status)
		e := newExec(t, map[string]any{"endpoint": srv.URL}, engine.Config{})
		_, err := e.Execute(context.Background(), engine.Query{Text: "SELECT * {}"})
		if got := engine.ClassOf(err); got != c.class {
			t.Errorf("%d %s %q: class %q (%v), want %q", c.status, c.ctype, c.body, got, err, c.class)
		}
	}
	e := newExec(t, map[string]any{"endpoint": "http://127.0.0.1:1/sparql"}, engine.Config{})
	if _, err := e.Execute(context.Background(), engine.Query{Text: "ASK {}"}); engine.ClassOf(err) != item.ClassExecution {
		t.Errorf("unreachable endpoint: %v", err)
	}
}

func TestDecodeMaxRows(t *testing.T) {
	body := `{"head":{"vars":["x"]},"results":{"bindings":[{"x":{"type":"literal","value":"1"}},{"x":{"type":"literal","value":"2"}},{"x":{"type":"literal","value":"3"}}]}}`
	for _, c := range []struct {
		max  int
		rows int
		trun bool
	}{{0, 3, false}, {2, 2, true}, {3, 3, false}} {
		r, err := sparql.Decode(strings.NewReader(body), sparql.MediaJSON, c.max, false)
		if err != nil {
			t.Fatal(err)
		}
		if len(r.Rows) != c.rows || r.Truncated != c.trun {
			t.Errorf("max %d: %d rows truncated %v", c.max, len(r.Rows), r.Truncated)
		}
	}
}

package falkordb

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/evalflow/evalflow/engine"
	"github.com/evalflow/evalflow/item"
	"github.com/evalflow/evalflow/table"
)

func TestValues(t *testing.T) {
	e := newExec(t, engine.Config{})
	ctx := context.Background()
	tests := []struct {
		name  string
		query string
		want  *table.Table
	}{
		{"scalars", "RETURN 1 AS i, 2.5 AS f, 1.0 AS g, 'x' AS s, true AS b, null AS n",
			&table.Table{
				Columns: []table.Column{col("i", table.TypeInt), col("f", table.TypeFloat), col("g", table.TypeFloat), col("s", table.TypeString), col("b", table.TypeBool), col("n", table.TypeAny)},
				Rows:    [][]table.Value{{int64(1), 2.5, 1.0, "x", true, nil}},
			}},
		{"node", "MATCH (m:Movie {title: 'Cast Away'}) RETURN m",
			&table.Table{
				Columns: []table.Column{col("m", table.TypeString)},
				Rows:    [][]table.Value{{`{"labels":["Movie"],"properties":{"released":2000,"tagline":"Alone on an island, the journey of a lifetime","title":"Cast Away","votes":2960}}`}},
			}},
		{"relationship", "MATCH (:Person {name: 'Helen Hunt'})-[r:ACTED_IN]->(:Movie {title: 'Cast Away'}) RETURN r",
			&table.Table{
				Columns: []table.Column{col("r", table.TypeString)},
				Rows:    [][]table.Value{{`{"properties":{"roles":["Kelly Frears"]},"type":"ACTED_IN"}`}},
			}},
		{"path", "MATCH p = (:Person {name: 'Tobias Lindqvist'})-[:FOLLOWS]->(:Person) RETURN p",
			&table.Table{
				Columns: []table.Column{col("p", table.TypeString)},
				Rows: [][]table.Value{{`{"nodes":[{"labels":["Person"],"properties":{"name":"Tobias Lindqvist"}},{"labels":["Person"],"properties":{"name":"Marta Reyes"}}],` +
					`"relationships":[{"properties":{},"type":"FOLLOWS"}]}`}},
			}},
		{"list and map", "RETURN [1, 'x', 2.5, null, [true]] AS l, {b: 1, a: ['y'], c: {d: null}} AS m",
			&table.Table{
				Columns: []table.Column{col("l", table.TypeString), col("m", table.TypeString)},
				Rows:    [][]table.Value{{`[1,"x",2.5,null,[true]]`, `{"a":["y"],"b":1,"c":{"d":null}}`}},
			}},
		{"temporal and spatial", "RETURN date('2024-01-02') AS d, localdatetime('2024-01-02T03:04:05') AS ldt, localtime('12:30:00') AS lt, duration('P1DT2H') AS du, point({latitude: 1.5, longitude: 2}) AS p",
			&table.Table{
				Columns: []table.Column{col("d", table.TypeString), col("ldt", table.TypeString), col("lt", table.TypeString), col("du", table.TypeString), col("p", table.TypeString)},
				Rows:    [][]table.Value{{"2024-01-02", "2024-01-02T03:04:05", "12:30:00", "P1DT2H", `{"srid":4326,"x":2,"y":1.5}`}},
			}},
		{"collected nodes", "MATCH (p:Person)-[:DIRECTED]->(:Movie {title: 'You\\'ve Got Mail'}) RETURN collect(p) AS ds",
			&table.Table{
				Columns: []table.Column{col("ds", table.TypeString)},
				Rows:    [][]table.Value{{`[{"labels":["Person"],"properties":{"born":1941,"name":"Nora Ephron"}}]`}},
			}},
		{"no rows", "MATCH (m:Movie) WHERE m.released > 3000 RETURN m.title AS t",
			&table.Table{Columns: []table.Column{col("t", table.TypeAny)}, Rows: [][]table.Value{}}},
		{"unknown label matches nothing", "MATCH (m:Film) RETURN count(m) AS n",
			&table.Table{Columns: []table.Column{col("n", table.TypeInt)}, Rows: [][]table.Value{{int64(0)}}}},
		{"mixed column", "UNWIND [1, 'a'] AS x RETURN x",
			&table.Table{Columns: []table.Column{col("x", table.TypeAny)}, Rows: [][]table.Value{{int64(1)}, {"a"}}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := e.Execute(ctx, engine.Query{Text: tc.query, DB: moviesGraph})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got)\n%s", diff)
			}
		})
	}
}

func TestErrors(t *testing.T) {
	e := newExec(t, engine.Config{})
	ctx := context.Background()
	tests := []struct {
		name, query, db, class, msg string
		timeout                     time.Duration
	}{
		{"parse error", "MATC (n) RETURN n", moviesGraph, item.ClassSyntax, "Invalid input", 0},
		{"undefined variable", "MATCH (n:Movie) RETURN m", moviesGraph, item.ClassSyntax, "'m' not defined", 0},
		{"empty", "  // nothing\n ; ", moviesGraph, item.ClassSyntax, "empty query", 0},
		{"create", "CREATE (:Movie {title: 'x'})", moviesGraph, item.ClassSafety, "read-only", 0},
		{"set", "MATCH (m:Movie) SET m.votes = 0", moviesGraph, item.ClassSafety, "read-only", 0},
		{"delete", "MATCH (m) DETACH DELETE m", moviesGraph, item.ClassSafety, "read-only", 0},
		{"timeout", "MATCH (a), (b), (c), (d), (e) RETURN count(*)", moviesGraph, item.ClassTimeout, "timed out", 50 * time.Millisecond},
		{"missing graph", "MATCH (n) RETURN n", "no_such_graph", item.ClassExecution, `graph "no_such_graph" does not exist`, 0},
		{"no graph", "RETURN 1", "", item.ClassExecution, "no graph given", 0},
		{"division by zero", "RETURN 1 / 0", moviesGraph, item.ClassExecution, "Division by zero", 0},
		{"type mismatch", "MATCH (p:Person) RETURN length(p.name)", moviesGraph, item.ClassExecution, "Type mismatch", 0},
		{"EXISTS subquery", "MATCH (p:Person) WHERE EXISTS { (p)-[:DIRECTED]->() } RETURN p.name", moviesGraph, item.ClassUnsupported, "Invalid input", 0},
		{"COUNT subquery", "MATCH (p:Person) WHERE COUNT { (p)-[:DIRECTED]->() } > 1 RETURN p.name", moviesGraph, item.ClassUnsupported, "", 0},
		{"elementId", "MATCH (p:Person) RETURN elementId(p)", moviesGraph, item.ClassUnsupported, "Unknown function 'elementId'", 0},
		{"datetime", "RETURN datetime('2024-01-02T03:04:05Z')", moviesGraph, item.ClassUnsupported, "Unknown function", 0},
		{"regex", "MATCH (m:Movie) WHERE m.title =~ 'The.*' RETURN m.title", moviesGraph, item.ClassUnsupported, "=~", 0},
		{"apoc function", "RETURN apoc.coll.toSet([1, 1])", moviesGraph, item.ClassUnsupported, "apoc.coll.toSet", 0},
		{"apoc procedure", "CALL apoc.meta.data()", moviesGraph, item.ClassUnsupported, "apoc.meta.data", 0},
		{"shortestPath in MATCH", "MATCH p = shortestPath((a:Person)-[*]-(b:Person)) RETURN p", moviesGraph, item.ClassUnsupported, "shortestPaths", 0},
		{"pattern in size", "MATCH (p:Person) WHERE size((p)-[:FOLLOWS]->()) > 0 RETURN p.name", moviesGraph, item.ClassUnsupported, "filtered alias", 0},
		{"made-up function", "RETURN CONTAINS('abc', 'b')", moviesGraph, item.ClassSyntax, "Unknown function 'CONTAINS'", 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			start := time.Now()
			got, err := e.Execute(ctx, engine.Query{Text: tc.query, DB: tc.db, Timeout: tc.timeout})
			if err == nil {
				t.Fatalf("no error; got %v", got)
			}
			if got != nil {
				t.Errorf("table %v returned with error", got)
			}
			var ee *engine.Error
			if !errors.As(err, &ee) {
				t.Fatalf("error %T %v is not an *engine.Error", err, err)
			}
			if c := engine.ClassOf(err); c != tc.class {
				t.Errorf("class %q, want %q (%v)", c, tc.class, err)
			}
			if !strings.Contains(err.Error(), tc.msg) {
				t.Errorf("message %q does not contain %q", err, tc.msg)
			}
			if tc.timeout > 0 && time.Since(start) > tc.timeout+grace {
				t.Errorf("took %s for a timeout of %s", time.Since(start), tc.timeout)
			}
		})
	}
}

func TestMaxRows(t *testing.T) {
	e := newExec(t, engine.Config{MaxRows: 5})
	ctx := context.Background()
	got, err := e.Execute(ctx, engine.Query{Text: "MATCH (m:Movie) RETURN m.title ORDER BY m.title", DB: moviesGraph})
	if err != nil {
		t.Fatal(err)
	}
	if got.NumRows() != 5 || !got.Truncated {
		t.Errorf("rows %d truncated %v, want 5 true", got.NumRows(), got.Truncated)
	}
	got, err = e.Execute(ctx, engine.Query{Text: "MATCH (m:Movie) RETURN m.title", DB: moviesGraph, MaxRows: 100})
	if err != nil {
		t.Fatal(err)
	}
	if got.NumRows() != 24 || got.Truncated {
		t.Errorf("rows %d truncated %v, want 24 false", got.NumRows(), got.Truncated)
	}
}

func TestCancel(t *testing.T) {
	e := newExec(t, engine.Config{})
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(50*time.Millisecond, cancel)
	_, err := e.Execute(ctx, engine.Query{Text: "MATCH (a), (b), (c), (d), (e) RETURN count(*)", DB: moviesGraph, Timeout: 2 * time.Second})
	if c := engine.ClassOf(err); c != item.ClassCancelled {
		t.Errorf("class %q (%v), want cancelled", c, err)
	}
}

func TestPrepare(t *testing.T) {
	e := newExec(t, engine.Config{})
	ctx := context.Background()
	tests := []struct{ query, class string }{
		{"MATCH (m:Movie) RETURN m.title", item.ClassNone},
		{"MATCH (m:NoSuchLabel) RETURN m.x", item.ClassNone},
		{"MATC (m) RETURN m", item.ClassSyntax},
		{"MATCH (m:Movie) RETURN x", item.ClassSyntax},
		{"CREATE (:Movie)", item.ClassSafety},
		{"MATCH (m:Movie) SET m.x = 1", item.ClassSafety},
		{"MATCH (m) DELETE m", item.ClassSafety},
		{"MERGE (m:Movie {title: 'x'})", item.ClassSafety},
		{"MATCH (p:Person) WHERE EXISTS { (p)-->() } RETURN p", item.ClassUnsupported},
		{"", item.ClassSyntax},
	}
	for _, tc := range tests {
		t.Run(tc.query, func(t *testing.T) {
			err := e.Prepare(ctx, engine.Query{Text: tc.query, DB: moviesGraph})
			if c := engine.ClassOf(err); c != tc.class {
				t.Errorf("class %q (%v), want %q", c, err, tc.class)
			}
		})
	}
	// Prepare must not have written anything.
	got, err := e.Execute(ctx, engine.Query{Text: "MATCH (m:Movie) RETURN count(m)", DB: moviesGraph})
	if err != nil {
		t.Fatal(err)
	}
	if n := got.Rows[0][0]; n != int64(24) {
		t.Errorf("%v movies after Prepare, want 24", n)
	}
}

func TestDescribe(t *testing.T) {
	e := newExec(t, engine.Config{})
	got, err := e.Describe(context.Background(), moviesGraph)
	if err != nil {
		t.Fatal(err)
	}
	str := func(name string, notNull bool) engine.ColumnInfo {
		return engine.ColumnInfo{Name: name, DeclType: "STRING", Type: table.TypeString, NotNull: notNull}
	}
	integer := func(name string, notNull bool) engine.ColumnInfo {
		return engine.ColumnInfo{Name: name, DeclType: "INTEGER", Type: table.TypeInt, NotNull: notNull}
	}
	persons := func(end string) []engine.ForeignKey {
		return []engine.ForeignKey{{Columns: []string{"(start)"}, RefTable: "Person"}, {Columns: []string{"(end)"}, RefTable: end}}
	}
	want := &engine.Schema{Tables: []engine.TableInfo{
		{Name: "Movie", Columns: []engine.ColumnInfo{integer("released", true), str("tagline", false), str("title", true), integer("votes", true)}},
		{Name: "Person", Columns: []engine.ColumnInfo{integer("born", false), str("name", true)}},
		{Name: "ACTED_IN", Columns: []engine.ColumnInfo{{Name: "roles", DeclType: "LIST", NotNull: true}}, ForeignKeys: persons("Movie")},
		{Name: "DIRECTED", ForeignKeys: persons("Movie")},
		{Name: "PRODUCED", ForeignKeys: persons("Movie")},
		{Name: "WROTE", ForeignKeys: persons("Movie")},
		{Name: "REVIEWED", Columns: []engine.ColumnInfo{integer("rating", true), str("summary", true)}, ForeignKeys: persons("Movie")},
		{Name: "FOLLOWS", ForeignKeys: persons("Person")},
	}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got)\n%s", diff)
	}
	if _, err := e.Describe(context.Background(), "no_such_graph"); engine.ClassOf(err) != item.ClassExecution {
		t.Errorf("Describe of a missing graph: %v", err)
	}
}

// TestNotInstalled: a private server whose module or server binary is
// missing does not fail New; Ping (the run's preflight) and every query
// fail with the command that installs it.
func TestNotInstalled(t *testing.T) {
	for _, opts := range []map[string]any{
		{"start": true, "module": "/nonexistent/falkordb.so"},
		{"start": true, "server": "no-such-valkey-server"},
	} {
		e, err := New(engine.Config{Options: opts})
		if err != nil {
			t.Fatalf("New(%v): %v", opts, err)
		}
		if err := e.Ping(context.Background()); err == nil || !strings.Contains(err.Error(), "`"+InstallCommand+"`") {
			t.Errorf("Ping with %v = %v, want it to name %q", opts, err, InstallCommand)
		}
		if _, err := e.Execute(context.Background(), engine.Query{Text: "RETURN 1", DB: "g"}); engine.ClassOf(err) != item.ClassExecution {
			t.Errorf("Execute with %v = %v", opts, err)
		}
		if err := e.Close(); err != nil {
			t.Error(err)
		}
	}
}

func TestOptions(t *testing.T) {
	tests := []struct {
		opts map[string]any
		msg  string
	}{
		{map[string]any{}, "addr (host:port) is required"},
		{map[string]any{"addr": "127.0.0.1:1", "start": true}, "not both"},
		{map[string]any{"addr": 5}, "option addr has the wrong type"},
		{map[string]any{"addr": "127.0.0.1:1", "bogus": 1}, `unknown option "bogus"`},
		{map[string]any{"addr": "127.0.0.1:1", "module": "x.so"}, "only apply with start"},
		{map[string]any{"addr": "127.0.0.1:1", "describe_sample": 0}, "describe_sample"},
	}
	for _, tc := range tests {
		t.Run(tc.msg, func(t *testing.T) {
			e, err := New(engine.Config{Options: tc.opts})
			if err == nil {
				e.Close()
				t.Fatal("no error")
			}
			if !strings.Contains(err.Error(), tc.msg) {
				t.Errorf("error %q does not contain %q", err, tc.msg)
			}
		})
	}
}

// TestStart supervises a private server (start = true) loaded from a file
// (load), and checks Close stops it.
func TestStart(t *testing.T) {
	needServer(t) // the shared server's start proved the install works
	module := filepath.Join(repoRoot(), "engine", "cypher", "falkordb-npm", "node_modules", "@falkordblite", "linux-x64", "bin", "falkordb.so")
	e, err := New(engine.Config{Options: map[string]any{
		"start":  true,
		"module": module,
		"load":   map[string]any{"films": moviesFile()},
	}})
	if err != nil {
		t.Fatal(err)
	}
	addr := e.srv.Addr()
	if c, err := net.DialTimeout("tcp", e.srv.BoltAddr(), time.Second); err != nil {
		t.Errorf("Bolt port %s: %v", e.srv.BoltAddr(), err)
	} else {
		c.Close()
	}
	got, err := e.Execute(context.Background(), engine.Query{Text: "MATCH (p:Person) RETURN count(p)", DB: "films"})
	if err != nil {
		t.Fatal(err)
	}
	if n := got.Rows[0][0]; n != int64(56) {
		t.Errorf("%v people, want 56", n)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	if ping(addr) {
		t.Errorf("server at %s still answers after Close", addr)
	}
	if _, err := os.Stat(e.srv.dir); !os.IsNotExist(err) {
		t.Errorf("server directory %s left behind (%v)", e.srv.dir, err)
	}
}

// TestStartOnTakenPort starts a server on a port another server already
// answers on: the start must fail (and the caller retry on another port)
// rather than hand back the other server's address as its own.
func TestStartOnTakenPort(t *testing.T) {
	needServer(t)
	module, err := FindModule("")
	if err != nil {
		t.Fatal(err)
	}
	bin, err := FindServer("")
	if err != nil {
		t.Fatal(err)
	}
	_, portText, _ := net.SplitHostPort(serverAddr)
	port, _ := strconv.Atoi(portText)
	bolt, err := freeBoltPort()
	if err != nil {
		t.Fatal(err)
	}
	s, err := startOn(context.Background(), bin, module, port, bolt)
	if err == nil {
		s.Stop()
		t.Fatalf("a server started on the taken port %d reported success (%s)", port, s.Addr())
	}
	if !ping(serverAddr) {
		t.Errorf("the server already on %s no longer answers", serverAddr)
	}
	if pid, err := serverPID(serverAddr); err != nil || pid <= 0 {
		t.Errorf("INFO server of %s gave no process_id (%d, %v)", serverAddr, pid, err)
	}
}

func TestRegistered(t *testing.T) {
	fn, ok := engine.Default.Lookup(Kind)
	if !ok {
		t.Fatal("falkordb not registered")
	}
	_, err := fn(context.Background(), engine.Config{})
	if err == nil || !strings.Contains(err.Error(), "addr") {
		t.Errorf("New without options: %v", err)
	}
}

func TestGraphOption(t *testing.T) {
	e := newExec(t, engine.Config{Options: map[string]any{"graph": moviesGraph}})
	got, err := e.Execute(context.Background(), engine.Query{Text: "MATCH (m:Movie) RETURN count(m)"})
	if err != nil {
		t.Fatal(err)
	}
	if n := got.Rows[0][0]; n != int64(24) {
		t.Errorf("%v movies, want 24", n)
	}
	if err := e.Prepare(context.Background(), engine.Query{Text: "MATCH (m) RETURN m"}); err != nil {
		t.Error(err)
	}
}

func TestConcurrent(t *testing.T) {
	e := newExec(t, engine.Config{MaxOpen: 2})
	ctx := context.Background()
	errs := make(chan error, 16)
	for i := range 16 {
		go func() {
			q := fmt.Sprintf("MATCH (m:Movie) WHERE m.votes > %d RETURN count(m)", i*100)
			_, err := e.Execute(ctx, engine.Query{Text: q, DB: moviesGraph})
			errs <- err
		}()
	}
	for range 16 {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}

func col(name string, t table.Type) table.Column { return table.Column{Name: name, Type: t} }

// Package falkordb is evalflow's FalkorDB engine (kind "falkordb"): Cypher
// over FalkorDB's Redis protocol with go-redis/v9.
//
// # Read-only by construction
//
// Every query runs as GRAPH.RO_QUERY GRAPH TEXT --compact TIMEOUT MS. The
// server refuses anything that would write ("graph.RO_QUERY is to be
// executed only on read-only queries", item.ClassSafety). Writing is only
// possible through Load, which pipelines use for setup (the load option)
// and tests for fixtures.
//
// # Databases
//
// Query.DB is the graph key: the engine block's path as written, or the
// item's db (text2cypher's database column) when there is no path. When it
// is empty the graph option is used. A key that holds no graph is an
// execution error naming it, never an empty result.
//
// # Options
//
//	addr            "host:port" of a running FalkorDB (Redis or valkey with
//	                the falkordb module loaded)
//	start           true: start and supervise a private valkey-server with
//	                the module on a free loopback port instead of addr; it
//	                is stopped by Close
//	module          path of falkordb.so for start (default: the environment
//	                variable EVALFLOW_FALKORDB_MODULE, else where
//	                `bash scripts/falkordb-server.sh install` puts it; see
//	                ModuleCandidates)
//	server          the valkey-server (or redis-server ≥ 7.2) binary for
//	                start: a command name (no slash) looked up on PATH, or a
//	                path (default valkey-server, else redis-server, on PATH)
//	load            map of graph key → Cypher file, each run once with
//	                GRAPH.QUERY when the executor is created (setup writes)
//	graph           graph key used when Query.DB is empty
//	describe_sample how many nodes (relationships) per label (type) Describe
//	                reads to find properties and their types (default 1000)
//
// load, module and server (when it has a slash) are paths (PathOptions):
// in a pipeline the planner resolves a relative value against the
// pipeline's directory and holds load files inside the engine block's root
// when it declares one, before New sees them; New itself, called directly,
// opens a relative path from the working directory.
//
// Exactly one of addr and start is required. With start, a module or
// server binary that is not installed does not fail New: Ping (the run's
// preflight) reports it, naming InstallCommand, and every query fails with
// it, so the run stops before its first item.
//
// # Timeouts
//
// The query's timeout is passed to FalkorDB as TIMEOUT, so the server
// stops the query itself ("Query timed out", item.ClassTimeout). FalkorDB
// checks the timeout between records of its plan operators, so a query that
// spends its time inside one expression (UNWIND range(1, 1e9)) is not
// stopped: the client waits one second longer, then abandons it (also
// item.ClassTimeout) and discards the connection, while the server finishes
// the work in the background.
//
// # Values
//
// Results use the compact format, so every value keeps its type; nodes,
// relationships, paths, lists, maps, points and temporals take the normal
// forms of package engine/cypher. Label, relationship-type and property
// names come from db.labels(), db.relationshipTypes() and db.propertyKeys(),
// read once per graph and again when a reply names an id they lack.
// FalkorDB's localdatetime, date and localtime carry whole seconds; its
// duration carries only seconds, rendered as whole days plus a time part
// (P1D, PT1H30M). MaxRows caps the rows kept: FalkorDB sends the whole
// result (up to its own RESULTSET_SIZE), and rows past the cap are dropped.
//
// # Dialect
//
// FalkorDB lacks parts of Neo4j's Cypher (EXISTS { } and COUNT { }
// subqueries, =~, pattern expressions inside size() or in ORDER BY,
// elementId(), datetime(), shortestPath in MATCH, APOC). Queries that fail
// for such a reason are item.ClassUnsupported, apart from malformed queries
// (item.ClassSyntax); see ClassifyMessage.
package falkordb

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/evalflow/evalflow/engine"
	"github.com/evalflow/evalflow/engine/cypher"
	"github.com/evalflow/evalflow/item"
	"github.com/evalflow/evalflow/table"
)

// Kind is the engine kind this package registers.
const Kind = "falkordb"

// Defaults used when the configuration leaves a value at zero.
const (
	DefaultTimeout        = 30 * time.Second
	DefaultMaxOpen        = 4
	DefaultDescribeSample = 1000
	// grace is how much longer than the server-side TIMEOUT the client
	// waits for a reply.
	grace = time.Second
)

// PathOptions are the options whose values are paths, registered with the
// kind: a pipeline's relative value resolves against the pipeline's
// directory (engine.ResolvePaths) and load scripts stay inside a declared
// root.
var PathOptions = []engine.PathOption{
	{Name: "load", Kind: engine.DataPath},
	{Name: "module", Kind: engine.InstallPath},
	{Name: "server", Kind: engine.ProgramPath},
}

func init() {
	engine.Register(Kind, func(ctx context.Context, cfg engine.Config) (engine.Executor, error) { return NewContext(ctx, cfg) }, PathOptions...)
}

// Executor runs Cypher queries on FalkorDB. It implements engine.Executor,
// engine.Preparer, engine.Describer and io.Closer, and is safe for
// concurrent use. Create it with New; the caller owns it and must Close it,
// which also stops a server it started.
type Executor struct {
	client  *redis.Client
	srv     *Server // nil unless the start option was given
	timeout time.Duration
	busy    busy
	closed  atomic.Bool
	maxRows int
	sample  int
	graph   string // used when Query.DB is empty
	// setupErr is why a private server (start = true) could not be set
	// up: not installed. Ping reports it before any item and every query
	// fails with it; client is nil.
	setupErr error

	mu    sync.Mutex // guards names
	names map[string]*names
}

var (
	_ engine.Executor  = (*Executor)(nil)
	_ engine.Preparer  = (*Executor)(nil)
	_ engine.Describer = (*Executor)(nil)
)

// New returns an Executor for cfg; see the package documentation for the
// options. With start it starts the server before returning; with load it
// loads the graphs.
func New(cfg engine.Config) (*Executor, error) { return NewContext(context.Background(), cfg) }

// NewContext is New bounded by ctx: starting a private server and loading
// its graphs stop when ctx is done (Ctrl-C while a run starts).
func NewContext(parent context.Context, cfg engine.Config) (*Executor, error) {
	e := &Executor{
		timeout: cfg.Timeout,
		maxRows: cfg.MaxRows,
		sample:  DefaultDescribeSample,
		names:   map[string]*names{},
	}
	if e.timeout <= 0 {
		e.timeout = DefaultTimeout
	}
	if e.maxRows < 0 {
		return nil, fmt.Errorf("falkordb: max_rows must not be negative, got %d", e.maxRows)
	}
	var (
		addr, module, server string
		start                bool
		load                 map[string]string
	)
	keys := make([]string, 0, len(cfg.Options))
	for k := range cfg.Options {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		v := cfg.Options[k]
		var ok bool
		switch k {
		case "addr":
			addr, ok = v.(string)
		case "start":
			start, ok = v.(bool)
		case "module":
			module, ok = v.(string)
		case "server":
			server, ok = v.(string)
		case "graph":
			e.graph, ok = v.(string)
		case "describe_sample":
			var n int
			n, ok = engine.IntOption(v)
			ok = ok && n > 0
			e.sample = n
		case "load":
			load, ok = toStringMap(v)
		default:
			return nil, fmt.Errorf("falkordb: unknown option %q (known: addr, describe_sample, graph, load, module, server, start)", k)
		}
		if !ok {
			return nil, fmt.Errorf("falkordb: option %s has the wrong type or value (%T %v)", k, v, v)
		}
	}
	switch {
	case start && addr != "":
		return nil, errors.New("falkordb: give either addr or start = true, not both")
	case !start && addr == "":
		return nil, errors.New("falkordb: option addr (host:port) is required unless start = true")
	case !start && (module != "" || server != ""):
		return nil, errors.New("falkordb: options module and server only apply with start = true")
	}
	ctx, cancel := context.WithTimeout(parent, 30*time.Second)
	defer cancel()
	if start {
		// What is not installed stops the run before its first item
		// (Ping, exit 2) with the command that installs it.
		mod, err := FindModule(module)
		if err == nil {
			server, err = FindServer(server)
		}
		if err != nil {
			e.setupErr = err
			return e, nil
		}
		srv, err := StartServer(ctx, server, mod)
		if err != nil {
			return nil, err
		}
		e.srv = srv
		addr = srv.Addr()
	}
	maxOpen := cfg.MaxOpen
	if maxOpen <= 0 {
		maxOpen = DefaultMaxOpen
	}
	e.client = redis.NewClient(&redis.Options{
		Addr:     addr,
		Protocol: 2, // the compact format is specified over RESP2 arrays
		PoolSize: maxOpen,
		// Reads and writes follow the query's context, so a query never
		// waits longer than its timeout plus grace.
		ContextTimeoutEnabled: true,
		ReadTimeout:           -1,
		WriteTimeout:          -1,
		DisableIdentity:       true,
	})
	gs := make([]string, 0, len(load))
	for g := range load {
		gs = append(gs, g)
	}
	sort.Strings(gs)
	for _, g := range gs {
		text, err := os.ReadFile(load[g])
		if err == nil {
			err = e.Load(ctx, g, string(text))
		}
		if err != nil {
			e.Close()
			return nil, fmt.Errorf("falkordb: load %s into graph %q: %w", load[g], g, err)
		}
	}
	return e, nil
}

func toStringMap(v any) (map[string]string, bool) {
	switch x := v.(type) {
	case map[string]string:
		return x, true
	case map[string]any:
		m := make(map[string]string, len(x))
		for k, e := range x {
			s, ok := e.(string)
			if !ok {
				return nil, false
			}
			m[k] = s
		}
		return m, true
	}
	return nil, false
}

// Addr returns the address the executor talks to.
func (e *Executor) Addr() string {
	if e.client == nil {
		return ""
	}
	return e.client.Options().Addr
}

// Close closes the connections and stops the server the executor started,
// if any.
func (e *Executor) Close() error {
	e.closed.Store(true)
	if e.client == nil {
		return nil
	}
	err := e.client.Close()
	if e.srv != nil {
		err = errors.Join(err, e.srv.Stop())
	}
	return err
}

// Load runs text with GRAPH.QUERY (writes allowed) on graph: setup only,
// never for generated queries. Comment lines are kept; FalkorDB accepts
// // and /* */ comments.
func (e *Executor) Load(ctx context.Context, graph, text string) error {
	if err := e.notReady(); err != nil {
		return err
	}
	if err := e.client.Do(ctx, "GRAPH.QUERY", graph, text).Err(); err != nil {
		return err
	}
	e.mu.Lock()
	delete(e.names, graph)
	e.mu.Unlock()
	return nil
}

// Delete removes graph (GRAPH.DELETE); a missing graph is not an error.
func (e *Executor) Delete(ctx context.Context, graph string) error {
	if err := e.notReady(); err != nil {
		return err
	}
	err := e.client.Do(ctx, "GRAPH.DELETE", graph).Err()
	if err != nil && strings.Contains(err.Error(), "empty key") {
		err = nil
	}
	e.mu.Lock()
	delete(e.names, graph)
	e.mu.Unlock()
	return err
}

var (
	errEmpty   = &engine.Error{Class: item.ClassSyntax, Msg: "empty query: no Cypher statement"}
	errNoGraph = &engine.Error{Class: item.ClassExecution, Msg: "falkordb: no graph given (Query.DB is the graph key)"}
)

// Execute runs q.Text read-only on graph q.DB and returns its rows, at
// most MaxRows of them (Truncated is set when more came back). A query
// with no result set (a CALL of a procedure that yields nothing) returns a
// table with no columns and no rows.
func (e *Executor) Execute(ctx context.Context, q engine.Query) (*table.Table, error) {
	if err := e.notReady(); err != nil {
		return nil, err
	}
	if cypher.Empty(q.Text) {
		return nil, errEmpty
	}
	if q.DB == "" {
		q.DB = e.graph
	}
	if q.DB == "" {
		return nil, errNoGraph
	}
	timeout, maxRows := q.Limits(e.timeout, e.maxRows)
	raw, err := e.roQuery(ctx, q.DB, q.Text, timeout)
	if err != nil {
		return nil, err
	}
	return e.decode(ctx, q.DB, raw, maxRows)
}

// roQuery runs one GRAPH.RO_QUERY and returns the raw compact reply.
func (e *Executor) roQuery(ctx context.Context, graph, text string, timeout time.Duration) ([]any, error) {
	qctx, cancel := context.WithTimeout(ctx, timeout+grace)
	defer cancel()
	ms := max(timeout.Milliseconds(), 1)
	start := time.Now()
	wasBusy := e.suspect(start)
	res, err := e.client.Do(qctx, "GRAPH.RO_QUERY", graph, text, "--compact", "TIMEOUT", strconv.FormatInt(ms, 10)).Result()
	if err == nil {
		err = nestedError(res)
	}
	if err != nil {
		cerr := classify(ctx, qctx, timeout, graph, text, err)
		if engine.ClassOf(cerr) == item.ClassTimeout {
			abandoned := qctx.Err() != nil && ctx.Err() == nil
			if wasBusy || e.suspect(start) {
				cerr = starved(cerr)
			}
			if abandoned {
				// The client gave up; the server may still be running
				// it: later timeouts are suspect until it answers again.
				e.abandoned(graph)
			}
		}
		return nil, cerr
	}
	reply, ok := res.([]any)
	if !ok {
		return nil, &engine.Error{Class: item.ClassExecution, Msg: fmt.Sprintf("falkordb: unexpected reply %T", res)}
	}
	return reply, nil
}

// nestedError returns an error the server put inside a reply (runtime
// errors that occur after the header was sent).
func nestedError(v any) error {
	switch x := v.(type) {
	case error:
		return x
	case []any:
		for _, e := range x {
			if err := nestedError(e); err != nil {
				return err
			}
		}
	}
	return nil
}

// decode turns a compact reply [header, rows, stats] (or [stats] for a
// query without a result set) into a table.
func (e *Executor) decode(ctx context.Context, graph string, reply []any, maxRows int) (*table.Table, error) {
	if len(reply) < 3 {
		return cypher.NewTable(nil, nil, false), nil
	}
	header, err := asList(reply[0])
	if err != nil {
		return nil, badReply(err)
	}
	cols := make([]string, len(header))
	for i, h := range header {
		f, err := asList(h)
		if err != nil || len(f) != 2 {
			return nil, badReply(fmt.Errorf("malformed header %#v", h))
		}
		if cols[i], err = asString(f[1]); err != nil {
			return nil, badReply(err)
		}
	}
	rows, err := asList(reply[1])
	if err != nil {
		return nil, badReply(err)
	}
	truncated := false
	if maxRows > 0 && len(rows) > maxRows {
		rows, truncated = rows[:maxRows], true
	}
	for attempt := 0; ; attempt++ {
		ns, err := e.namesOf(ctx, graph, attempt > 0)
		if err != nil {
			return nil, err
		}
		t, err := decodeRows(decoder{ns}, cols, rows, truncated)
		var unknown *errUnknownID
		if errors.As(err, &unknown) && attempt == 0 {
			continue // the graph changed since the names were read
		}
		if err != nil {
			return nil, badReply(err)
		}
		return t, nil
	}
}

func decodeRows(d decoder, cols []string, rows []any, truncated bool) (*table.Table, error) {
	out := make([][]table.Value, len(rows))
	for i, r := range rows {
		cells, err := asList(r)
		if err != nil {
			return nil, err
		}
		if len(cells) != len(cols) {
			return nil, fmt.Errorf("row %d has %d values for %d columns", i, len(cells), len(cols))
		}
		row := make([]table.Value, len(cells))
		for j, c := range cells {
			v, err := d.value(c)
			if err != nil {
				return nil, err
			}
			row[j] = cypher.Cell(v)
		}
		out[i] = row
	}
	return cypher.NewTable(cols, out, truncated), nil
}

func badReply(err error) error {
	return &engine.Error{Class: item.ClassExecution, Msg: "falkordb: cannot decode reply: " + err.Error(), Err: err}
}

// namesOf returns the id → name tables of graph, reading them when they
// are not cached or refresh is set.
func (e *Executor) namesOf(ctx context.Context, graph string, refresh bool) (*names, error) {
	e.mu.Lock()
	ns, ok := e.names[graph]
	e.mu.Unlock()
	if ok && !refresh {
		return ns, nil
	}
	ns = &names{}
	for _, p := range []struct {
		proc string
		dst  *[]string
	}{
		{"db.labels()", &ns.labels},
		{"db.relationshipTypes()", &ns.relTypes},
		{"db.propertyKeys()", &ns.propKeys},
	} {
		list, err := e.column(ctx, graph, "CALL "+p.proc)
		if err != nil {
			return nil, err
		}
		*p.dst = list
	}
	e.mu.Lock()
	e.names[graph] = ns
	e.mu.Unlock()
	return ns, nil
}

// column runs a query returning one string column (with no nodes or
// edges in it, so no names are needed) and returns its values.
func (e *Executor) column(ctx context.Context, graph, text string) ([]string, error) {
	raw, err := e.roQuery(ctx, graph, text, e.timeout)
	if err != nil {
		return nil, err
	}
	if len(raw) < 3 {
		return nil, badReply(fmt.Errorf("%s returned no result set", text))
	}
	rows, err := asList(raw[1])
	if err != nil {
		return nil, badReply(err)
	}
	out := make([]string, 0, len(rows))
	for _, r := range rows {
		cells, err := asList(r)
		if err != nil || len(cells) == 0 {
			return nil, badReply(fmt.Errorf("malformed row %#v", r))
		}
		v, err := decoder{&names{}}.value(cells[0])
		if err != nil {
			return nil, badReply(err)
		}
		s, _ := v.(string)
		out = append(out, s)
	}
	return out, nil
}

var _ engine.Languager = (*Executor)(nil)
var _ engine.NameLocator = (*Executor)(nil)

// Language reports the query language this engine runs (engine.Languager).
func (e *Executor) Language() string { return "cypher" }

// LocatesByName reports that Query.DB names a database or graph on the
// server, not a file (engine.NameLocator).
func (e *Executor) LocatesByName() bool { return true }

// Package sparql is evalflow's SPARQL engine. It speaks only the SPARQL 1.1
// Protocol over HTTP, so it works against any endpoint (GraphDB, Fuseki,
// Virtuoso, Oxigraph), and it embeds Oxigraph as the default: a small Node
// script (oxigraph/server.mjs, npm package oxigraph, pure WASM) that loads
// RDF files into an in-memory store and serves them on a loopback port, run
// and supervised as a child process.
//
// # Options
//
//	endpoint      string   URL of a SPARQL endpoint (the query service).
//	files         [string] RDF files (Turtle, N-Triples, N-Quads, TriG,
//	                       RDF/XML, by extension) for the embedded Oxigraph.
//	terms         string   "value" (default) or "ntriples"; see below.
//	accept        string   result format to ask for: "json" (default), "xml",
//	                       "tsv" or "csv".
//	method        string   "post" (default: form-encoded POST), "get", or
//	                       "post-direct" (POST application/sparql-query).
//	headers       map      extra HTTP headers for an endpoint (auth).
//	db_as_graph   bool     endpoint only: send Query.DB as default-graph-uri.
//	oxigraph_dir  string   where `npm ci` installed the Oxigraph server's
//	                       dependencies (default: see Oxigraph below).
//	node          string   the node binary: a command name (no slash) looked
//	                       up on PATH, or a path (default: node on PATH).
//	start_timeout string   how long loading may take ("60s" by default).
//	max_databases int      how many datasets keep servers (default 4).
//	prefixes      map      prefix name → IRI, declared for a query that uses
//	                       the prefix without declaring it.
//	data_prefixes bool     embedded only: also declare the prefixes the
//	                       Turtle files declare (false by default).
//
// Exactly one of endpoint and files-or-path applies: with endpoint set the
// executor is a plain protocol client and Query.DB is ignored (unless
// db_as_graph). Without it every query needs data: the files option, the
// engine block's path (Query.DB, one RDF file per item, such as
// "${item.building}.ttl"), or both, in which case the item's file is loaded
// after the shared ones.
//
// files, oxigraph_dir and node (when it has a slash) are paths
// (PathOptions): in a pipeline the planner resolves a relative value
// against the pipeline's directory, as it does the engine block's path,
// and holds files inside the block's root when it declares one, before New
// sees them. New itself, called directly, resolves a relative file against
// the working directory.
//
// A query is sent exactly as given unless prefixes or data_prefixes is set.
// rdflib (BuildingQA's engine) lets a query use the prefixes its graph was
// parsed with, and GraphDB and Virtuoso predeclare prefixes too; set
// data_prefixes = true to evaluate such queries on the embedded engine
// (the PREFIX lines added in front shift the line numbers of parse errors).
//
// Form POST is the default because Virtuoso hangs on a raw
// application/sparql-query POST; every SPARQL 1.1 endpoint accepts it.
//
// # Only SELECT and ASK
//
// A query whose form (its first keyword after PREFIX/BASE declarations and
// comments, see QueryForm) is anything but SELECT or ASK is refused before
// it is sent, with item.ClassSafety: CONSTRUCT, DESCRIBE and every update.
// The query is sent as a query, never as an update, and the embedded server
// refuses updates as well.
//
// # Result normal forms
//
// A SELECT result is a table with one column per projected variable, in the
// order of the result's head. With terms = "value" (the default) each cell is
// what the SPARQL JSON result's "value" field holds, which is exactly what
// BuildingQA's metrics.py and the TEXT2SPARQL'25 scorer compare:
//
//	IRI                       bare string: http://example.org/a
//	literal, no datatype      its lexical form (string)
//	"chat"@fr                 "chat": the language tag is dropped, as the
//	                          scorers' value strings drop it (use terms =
//	                          "ntriples" to keep it)
//	xsd integer types         int64 (lexical form kept as a string if it
//	                          does not fit)
//	xsd:decimal/double/float  float64 (INF, -INF, NaN included)
//	xsd:boolean               bool
//	other datatypes           lexical form (dates stay strings)
//	blank node                "_:" + the endpoint's label
//	unbound variable          nil
//
// With terms = "ntriples" every bound cell is the N-Triples text of its
// term (<iri>, "chat"@fr, "1"^^<…#integer>, "plain", _:b0) and nothing is
// converted. An ASK result is a 1×1 table with the bool column "ask" in both
// modes. Column types are inferred from the values (TypeAny when mixed or
// never bound).
//
// # Errors and timeouts
//
// An endpoint's 400 answer (a malformed query; Oxigraph puts its parser's
// message in the body) is item.ClassSyntax; other failures are
// item.ClassExecution. A query past its timeout (Query.Timeout, else
// Config.Timeout, else DefaultTimeout) is item.ClassTimeout. For an external
// endpoint the request is abandoned (the protocol has no cancel); the
// embedded server is killed (its whole process group), because Oxigraph
// evaluates synchronously and cannot stop a query, and the next query starts
// a fresh one.
//
// Prepare checks syntax by running the query against an empty dataset
// (default-graph-uri and named-graph-uri set to an IRI that names no graph),
// so the endpoint parses it but finds nothing to do.
//
// # Oxigraph
//
// The script is embedded in the binary and written to the user cache
// directory. It needs node (18 or later) and the npm package pinned in
// oxigraph/package-lock.json, installed with
//
//	npm ci --prefix engine/sparql/oxigraph
//
// (make deps does this). The package is looked up in the oxigraph_dir option,
// then $EVALFLOW_OXIGRAPH_DIR, then engine/sparql/oxigraph beside this
// source file (a checkout), then beside the executable (../engine/sparql/
// oxigraph and ../share/evalflow/oxigraph), then in the user cache
// directory (CacheInstallDir). When it is nowhere and oxigraph_dir is not
// set, the first use (the run's preflight) installs it there: `npm ci` of
// the package.json and package-lock.json embedded in the binary, in a
// temporary directory renamed into place, with one line on standard error.
// Without node or npm the engine fails before any item, naming the command
// that installs them (NodeInstall). Each dataset (set of files) gets
// its own servers, at most MaxOpen (DefaultMaxOpen when zero) running at once
// since one server answers one query at a time; datasets beyond
// max_databases stop their idle servers, least recently used first.
package sparql

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/evalflow/evalflow/engine"
	"github.com/evalflow/evalflow/item"
	"github.com/evalflow/evalflow/table"
)

// Kind is the engine kind this package registers.
const Kind = "sparql"

// Defaults used when the configuration leaves a value at zero.
const (
	DefaultTimeout      = 30 * time.Second
	DefaultStartTimeout = 60 * time.Second
	DefaultMaxOpen      = 2
	DefaultMaxDatabases = 4
)

// PathOptions are the options whose values are paths, registered with the
// kind: a pipeline's relative value resolves against the pipeline's
// directory (engine.ResolvePaths) and files stay inside a declared root.
var PathOptions = []engine.PathOption{
	{Name: "files", Kind: engine.DataPath},
	{Name: "oxigraph_dir", Kind: engine.InstallPath},
	{Name: "node", Kind: engine.ProgramPath},
}

// emptyGraph names no graph; Prepare evaluates against it.
const emptyGraph = "urn:evalflow:empty-dataset"

func init() {
	engine.Register(Kind, func(_ context.Context, cfg engine.Config) (engine.Executor, error) { return New(cfg) }, PathOptions...)
}

var (
	_ engine.Executor  = (*Executor)(nil)
	_ engine.Preparer  = (*Executor)(nil)
	_ engine.Describer = (*Executor)(nil)
	_ io.Closer        = (*Executor)(nil)
)

// Executor runs SPARQL SELECT and ASK queries on an endpoint or on embedded
// Oxigraph servers. It implements engine.Executor, engine.Preparer,
// engine.Describer and io.Closer and is safe for concurrent use. Create it
// with New; the caller owns it and must Close it, which stops every server
// it started.
type Executor struct {
	timeout   time.Duration
	maxRows   int
	endpoint  string
	terms     string
	accept    string
	method    string
	headers   map[string]string
	dbAsGraph bool
	files     []string
	prefixes  map[string]string
	dataPfx   bool
	pfxCache  prefixCache
	client    *http.Client
	ox        *oxigraph // nil for an external endpoint
}

// New returns an Executor for cfg; see the package documentation for the
// options. Unknown options are an error. No process starts until the first
// query.
func New(cfg engine.Config) (*Executor, error) {
	e := &Executor{
		timeout: cfg.Timeout,
		maxRows: cfg.MaxRows,
		terms:   TermsValue,
		accept:  "json",
		method:  "post",
	}
	if e.timeout <= 0 {
		e.timeout = DefaultTimeout
	}
	if e.maxRows < 0 {
		return nil, fmt.Errorf("sparql: max_rows must not be negative, got %d", e.maxRows)
	}
	ox := &oxigraph{
		maxOpen:      cfg.MaxOpen,
		maxDBs:       DefaultMaxDatabases,
		startTimeout: DefaultStartTimeout,
		node:         "node",
		notice:       os.Stderr,
	}
	if ox.maxOpen <= 0 {
		ox.maxOpen = DefaultMaxOpen
	}
	keys := make([]string, 0, len(cfg.Options))
	for k := range cfg.Options {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	str := func(k string, v any) (string, error) {
		s, ok := v.(string)
		if !ok {
			return "", fmt.Errorf("sparql: option %s must be a string, got %T", k, v)
		}
		return s, nil
	}
	for _, k := range keys {
		v := cfg.Options[k]
		var err error
		switch k {
		case "endpoint":
			e.endpoint, err = str(k, v)
			if err == nil {
				u, perr := url.Parse(e.endpoint)
				if perr != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
					err = fmt.Errorf("sparql: option endpoint must be an http(s) URL, got %q", e.endpoint)
				}
			}
		case "files":
			e.files, err = stringList(v)
			if err != nil {
				err = fmt.Errorf("sparql: option files: %w", err)
			}
		case "terms":
			e.terms, err = str(k, v)
			if err == nil && e.terms != TermsValue && e.terms != TermsNTriples {
				err = fmt.Errorf("sparql: option terms must be %q or %q, got %q", TermsValue, TermsNTriples, e.terms)
			}
		case "accept":
			e.accept, err = str(k, v)
			if _, ok := acceptHeaders[e.accept]; err == nil && !ok {
				err = fmt.Errorf("sparql: option accept must be json, xml, tsv or csv, got %q", e.accept)
			}
		case "method":
			e.method, err = str(k, v)
			if err == nil && e.method != "post" && e.method != "get" && e.method != "post-direct" {
				err = fmt.Errorf("sparql: option method must be post, get or post-direct, got %q", e.method)
			}
		case "headers":
			e.headers, err = stringMap(v)
			if err != nil {
				err = fmt.Errorf("sparql: option headers: %w", err)
			}
		case "db_as_graph":
			b, ok := v.(bool)
			if !ok {
				err = fmt.Errorf("sparql: option db_as_graph must be a bool, got %T", v)
			}
			e.dbAsGraph = b
		case "prefixes":
			e.prefixes, err = stringMap(v)
			if err != nil {
				err = fmt.Errorf("sparql: option prefixes: %w", err)
			}
		case "data_prefixes":
			b, ok := v.(bool)
			if !ok {
				err = fmt.Errorf("sparql: option data_prefixes must be a bool, got %T", v)
			}
			e.dataPfx = b
		case "oxigraph_dir":
			ox.dir, err = str(k, v)
		case "node":
			ox.node, err = str(k, v)
		case "start_timeout":
			var s string
			if s, err = str(k, v); err == nil {
				ox.startTimeout, err = time.ParseDuration(s)
				if err == nil && ox.startTimeout <= 0 {
					err = errors.New("must be positive")
				}
				if err != nil {
					err = fmt.Errorf("sparql: option start_timeout: %w", err)
				}
			}
		case "max_databases":
			n, ok := engine.IntOption(v)
			if !ok || n <= 0 {
				err = fmt.Errorf("sparql: option max_databases must be a positive integer, got %v", v)
			}
			ox.maxDBs = n
		default:
			err = fmt.Errorf("sparql: unknown option %q (known: accept, data_prefixes, db_as_graph, endpoint, files, headers, max_databases, method, node, oxigraph_dir, prefixes, start_timeout, terms)", k)
		}
		if err != nil {
			return nil, err
		}
	}
	if e.endpoint != "" && len(e.files) > 0 {
		return nil, errors.New("sparql: set either endpoint or files, not both")
	}
	if e.dataPfx && e.endpoint != "" {
		return nil, errors.New("sparql: data_prefixes needs files (the embedded engine), not an endpoint")
	}
	if e.endpoint != "" {
		e.client = &http.Client{Transport: &http.Transport{
			Proxy:               http.ProxyFromEnvironment,
			MaxIdleConnsPerHost: ox.maxOpen,
			IdleConnTimeout:     90 * time.Second,
		}}
		return e, nil
	}
	if e.dbAsGraph {
		return nil, errors.New("sparql: db_as_graph needs an endpoint")
	}

	for i, f := range e.files {
		abs, err := filepath.Abs(f)
		if err != nil {
			return nil, fmt.Errorf("sparql: %w", err)
		}
		e.files[i] = abs
	}
	// Loopback only: never through a proxy.
	e.client = &http.Client{Transport: &http.Transport{Proxy: nil, MaxIdleConnsPerHost: 1, IdleConnTimeout: 30 * time.Second}}
	ox.datasets = map[string]*dataset{}
	e.ox = ox
	return e, nil
}

func stringList(v any) ([]string, error) {
	switch x := v.(type) {
	case string:
		return []string{x}, nil
	case []string:
		return append([]string(nil), x...), nil
	case []any:
		out := make([]string, len(x))
		for i, el := range x {
			s, ok := el.(string)
			if !ok {
				return nil, fmt.Errorf("element %d is %T, want a string", i, el)
			}
			out[i] = s
		}
		return out, nil
	}
	return nil, fmt.Errorf("want a list of strings, got %T", v)
}

func stringMap(v any) (map[string]string, error) {
	out := map[string]string{}
	switch x := v.(type) {
	case map[string]string:
		for k, s := range x {
			out[k] = s
		}
	case map[string]any:
		for k, el := range x {
			s, ok := el.(string)
			if !ok {
				return nil, fmt.Errorf("%s is %T, want a string", k, el)
			}
			out[k] = s
		}
	default:
		return nil, fmt.Errorf("want a map of strings, got %T", v)
	}
	return out, nil
}

var acceptHeaders = map[string]string{
	"json": MediaJSON + ", application/json;q=0.9, " + MediaXML + ";q=0.5, " + MediaTSV + ";q=0.4, " + MediaCSV + ";q=0.1",
	"xml":  MediaXML + ", application/xml;q=0.5",
	"tsv":  MediaTSV,
	"csv":  MediaCSV,
}

// Close stops every embedded server and waits for them to exit. Queries
// still running fail; later calls fail with an execution error.
func (e *Executor) Close() error {
	if e.client != nil {
		e.client.CloseIdleConnections()
	}
	if e.ox != nil {
		return e.ox.close()
	}
	return nil
}

// Execute runs one SELECT or ASK query and returns its table (see the
// package documentation for the normal forms).
func (e *Executor) Execute(ctx context.Context, q engine.Query) (*table.Table, error) {
	form, err := checkForm(q.Text)
	if err != nil {
		return nil, err
	}
	maxRows := q.MaxRows
	if maxRows == 0 {
		maxRows = e.maxRows
	}
	res, err := e.run(ctx, q, form == "ASK", maxRows, nil)
	if err != nil {
		return nil, err
	}
	return res.Table(e.terms), nil
}

// Prepare refuses anything but SELECT and ASK (item.ClassSafety) and has the
// endpoint parse the query by running it on an empty dataset; a parse error
// is item.ClassSyntax.
func (e *Executor) Prepare(ctx context.Context, q engine.Query) error {
	form, err := checkForm(q.Text)
	if err != nil {
		return err
	}
	_, err = e.run(ctx, q, form == "ASK", 1, url.Values{"default-graph-uri": {emptyGraph}, "named-graph-uri": {emptyGraph}})
	return err
}

// checkForm returns the query form of text or a classified error.
func checkForm(text string) (string, error) {
	if strings.TrimSpace(text) == "" {
		return "", &engine.Error{Class: item.ClassSyntax, Msg: "sparql: empty query"}
	}
	switch form := QueryForm(text); form {
	case "SELECT", "ASK":
		return form, nil
	case "CONSTRUCT", "DESCRIBE", "INSERT", "DELETE", "LOAD", "CLEAR", "CREATE", "DROP", "COPY", "MOVE", "ADD", "WITH":
		return "", &engine.Error{Class: item.ClassSafety, Msg: fmt.Sprintf("sparql: only SELECT and ASK queries are allowed, got %s", form)}
	default:
		// Not a query form we know: let the endpoint's parser say why.
		return form, nil
	}
}

// run sends q and decodes the answer. extra adds protocol parameters.
func (e *Executor) run(ctx context.Context, q engine.Query, ask bool, maxRows int, extra url.Values) (*Result, error) {
	timeout := q.Timeout
	if timeout <= 0 {
		timeout = e.timeout
	}
	params := url.Values{}
	endpoint := e.endpoint
	var srv *server
	if e.ox != nil {
		files := e.files
		if q.DB != "" {
			abs, err := filepath.Abs(q.DB)
			if err != nil {
				return nil, &engine.Error{Class: item.ClassExecution, Msg: err.Error(), Err: err}
			}
			files = append(files[:len(files):len(files)], abs)
		}
		if len(files) == 0 {
			return nil, &engine.Error{Class: item.ClassExecution, Msg: "sparql: no data: set the endpoint or files option, or the engine block's path"}
		}
		// Waiting for a server and loading its data are not query time:
		// they are bounded by ctx and start_timeout.
		text := q.Text
		if e.dataPfx {
			pfx, err := e.pfxCache.forFiles(files)
			if err != nil {
				return nil, &engine.Error{Class: item.ClassExecution, Msg: "sparql: " + err.Error(), Err: err}
			}
			for k, v := range e.prefixes {
				pfx[k] = v
			}
			text = withPrefixes(text, pfx)
		} else {
			text = withPrefixes(text, e.prefixes)
		}
		q.Text = text
		var err error
		srv, err = e.ox.acquire(ctx, files)
		if err != nil {
			return nil, e.ctxError(ctx, ctx, timeout, err)
		}
		endpoint = srv.url
	} else {
		q.Text = withPrefixes(q.Text, e.prefixes)
		if e.dbAsGraph && q.DB != "" {
			params.Set("default-graph-uri", q.DB)
		}
	}
	for k, vs := range extra {
		params[k] = vs
	}
	qctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	res, healthy, err := e.do(qctx, endpoint, q.Text, params, ask, maxRows)
	if srv != nil {
		e.ox.release(srv, healthy && qctx.Err() == nil)
	}
	if err != nil {
		return nil, e.ctxError(ctx, qctx, timeout, err)
	}
	return res, nil
}

// ctxError classifies err after the request: a cancelled parent is
// ClassCancelled, our own deadline ClassTimeout.
func (e *Executor) ctxError(parent, qctx context.Context, timeout time.Duration, err error) error {
	switch {
	case parent.Err() != nil && errors.Is(parent.Err(), context.Canceled):
		return &engine.Error{Class: item.ClassCancelled, Msg: "sparql: query cancelled", Err: parent.Err()}
	case parent.Err() != nil:
		return &engine.Error{Class: item.ClassTimeout, Msg: "sparql: deadline exceeded", Err: parent.Err()}
	case qctx.Err() != nil:
		return &engine.Error{Class: item.ClassTimeout, Msg: fmt.Sprintf("sparql: query timed out after %s", timeout), Err: context.DeadlineExceeded}
	}
	return err
}

// do performs one protocol request. healthy is false when the server's
// state is unknown (the request failed in transport).
func (e *Executor) do(ctx context.Context, endpoint, query string, params url.Values, ask bool, maxRows int) (*Result, bool, error) {
	var req *http.Request
	var err error
	switch e.method {
	case "get":
		p := cloneValues(params)
		p.Set("query", query)
		u := endpoint + sep(endpoint) + p.Encode()
		req, err = http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	case "post-direct":
		u := endpoint
		if len(params) > 0 {
			u += sep(endpoint) + params.Encode()
		}
		req, err = http.NewRequestWithContext(ctx, http.MethodPost, u, strings.NewReader(query))
		if req != nil {
			req.Header.Set("Content-Type", "application/sparql-query; charset=utf-8")
		}
	default:
		p := cloneValues(params)
		p.Set("query", query)
		req, err = http.NewRequestWithContext(ctx, http.MethodPost, endpoint, strings.NewReader(p.Encode()))
		if req != nil {
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		}
	}
	if err != nil {
		return nil, true, &engine.Error{Class: item.ClassExecution, Msg: "sparql: " + err.Error(), Err: err}
	}
	req.Header.Set("Accept", acceptHeaders[e.accept])
	for k, v := range e.headers {
		req.Header.Set(k, v)
	}
	resp, err := e.client.Do(req)
	if err != nil {
		// A transport failure that is not this query's own deadline is the
		// server's: the embedded one is killed and restarted when another
		// item's query times out, taking its in-flight queries with it.
		// That is no verdict on this query: a harness error (retried),
		// never a silent 0.
		return nil, false, &engine.Error{Class: item.ClassExecution, Msg: "sparql: " + err.Error(), Err: err, Unavailable: ctx.Err() == nil}
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
		msg := strings.TrimSpace(string(b))
		if msg == "" {
			msg = resp.Status
		}
		class := item.ClassExecution
		switch resp.StatusCode {
		case http.StatusBadRequest:
			class = item.ClassSyntax
		case http.StatusForbidden:
			class = item.ClassSafety
		}
		return nil, true, &engine.Error{Class: class, Msg: fmt.Sprintf("sparql: endpoint answered %d: %s", resp.StatusCode, msg)}
	}
	res, err := Decode(resp.Body, resp.Header.Get("Content-Type"), maxRows, ask)
	if err != nil {
		var netErr *net.OpError
		lost := ctx.Err() == nil && (errors.Is(err, io.ErrUnexpectedEOF) || errors.As(err, &netErr) || errors.Is(err, syscall.ECONNRESET))
		return nil, ctx.Err() == nil, &engine.Error{Class: item.ClassExecution, Msg: "sparql: reading results: " + err.Error(), Err: err, Unavailable: lost}
	}
	if res.Truncated {
		// Drain a little so the connection can be reused; give up past 1 MiB.
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
	}
	return res, true, nil
}

func sep(u string) string {
	if strings.Contains(u, "?") {
		return "&"
	}
	return "?"
}

func cloneValues(v url.Values) url.Values {
	out := url.Values{}
	for k, vs := range v {
		out[k] = append([]string(nil), vs...)
	}
	return out
}

// lookupOxigraphDir finds the directory holding node_modules/oxigraph:
// opt when set, else $EVALFLOW_OXIGRAPH_DIR, a checkout's
// engine/sparql/oxigraph (when checkout is true), the directories beside
// the executable, and the user cache directory where a first use installs
// the package.
func lookupOxigraphDir(opt string, checkout bool) (string, error) {
	var cands []string
	if opt != "" {
		cands = append(cands, opt)
	} else {
		if d := os.Getenv("EVALFLOW_OXIGRAPH_DIR"); d != "" {
			cands = append(cands, d)
		}
		if d := sourceDir(); d != "" && checkout {
			cands = append(cands, filepath.Join(d, "oxigraph"))
		}
		if exe, err := os.Executable(); err == nil {
			base := filepath.Dir(filepath.Dir(exe))
			cands = append(cands, filepath.Join(base, "engine", "sparql", "oxigraph"), filepath.Join(base, "share", "evalflow", "oxigraph"))
		}
	}
	for _, d := range cands {
		if installed(d) {
			return d, nil
		}
	}
	if opt != "" {
		return "", fmt.Errorf("sparql: the Oxigraph server's npm dependencies are not installed in %s (the oxigraph_dir option); run `npm ci --prefix %s` with the package.json and package-lock.json of engine/sparql/oxigraph, or leave oxigraph_dir unset to let evalflow install them on first use", opt, opt)
	}
	return "", fmt.Errorf("sparql: the Oxigraph server's npm dependencies are not installed (looked in %s)", strings.Join(cands, ", "))
}

// scriptOnce guards writing the embedded script.
var scriptOnce struct {
	sync.Mutex
	path string
}

var _ engine.Languager = (*Executor)(nil)

// Language reports the query language this engine runs (engine.Languager).
func (e *Executor) Language() string { return "sparql" }

// Package duckdb is evalflow's DuckDB engine, on github.com/duckdb/duckdb-go/v2
// (cgo, DuckDB's prebuilt static library). It is pinned to v2.10505.0
// (DuckDB 1.5.5): later versions need library modules the Go module proxy
// refuses to serve here (see docs/engines.md).
//
// # Read-only by construction
//
// Every database file is opened with access_mode=READ_ONLY, so DuckDB
// refuses writes to it ("Cannot execute statement of type INSERT ... in
// read-only mode", item.ClassSafety), and a missing file is an error
// ("database file not found: PATH"), never a new empty database. Unless the
// option external_access is true, enable_external_access=false is set too:
// queries cannot read or write other files (COPY … TO, read_csv, ATTACH)
// nor load extensions; lock_configuration=true keeps a query from turning
// either back on with SET.
//
// # Connections
//
// An Executor keeps one DuckDB instance per database path (at most
// max_databases of them, least recently used closed first) with at most
// MaxOpen connections each (Config.MaxOpen; DefaultMaxOpen when zero). A
// connection that ran anything but exactly one SELECT/WITH/VALUES query is
// closed afterwards, so no connection state (USE, SET VARIABLE) reaches
// another item's query.
//
// # Timeouts
//
// A query that runs out of time is interrupted inside DuckDB: evalflow
// calls duckdb_interrupt on the connection at the deadline itself
// (interrupt.go), because the driver's own context interrupt returns up to
// 500 ms late. The error is item.ClassTimeout; the interrupted connection
// is closed rather than reused.
//
// DuckDB materialises a query's whole result before the first row is read,
// so the row cap bounds what evalflow keeps, not what DuckDB computes; the
// timeout and the memory_limit option bound that.
//
// # Values
//
// See docs/engines.md for the full table. In short: integers → int64
// (HUGEINT, UBIGINT and BIGNUM too while every value of the column fits;
// otherwise the column becomes float64); FLOAT, DOUBLE and DECIMAL →
// float64 (FLOAT through its shortest decimal form, so 1.1 stays 1.1);
// VARCHAR → string; BLOB → []byte; BOOLEAN → bool; DATE →
// "2006-01-02"; TIME → "15:04:05[.ffffff]"; TIMESTAMP →
// "2006-01-02 15:04:05[.ffffff]"; TIMESTAMPTZ → the instant in UTC as
// "2006-01-02 15:04:05[.ffffff]+00" (what DuckDB and PostgreSQL print with
// TimeZone=UTC); UUID → its canonical text; INTERVAL → DuckDB's text form;
// LIST, ARRAY, STRUCT, MAP, UNION and JSON → JSON text.
package duckdb

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"fmt"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"

	duckdb "github.com/duckdb/duckdb-go/v2"

	"github.com/evalflow/evalflow/engine"
	"github.com/evalflow/evalflow/item"
	"github.com/evalflow/evalflow/sqltext"
	"github.com/evalflow/evalflow/table"
)

// Kind is the engine kind this package registers.
const Kind = "duckdb"

// Defaults used when the configuration leaves a value at zero.
const (
	DefaultTimeout = 30 * time.Second
	DefaultMaxOpen = 4
	// DefaultMemoryLimit bounds DuckDB's memory per database file when the
	// engine block sets no memory_limit option.
	DefaultMemoryLimit  = "2GB"
	DefaultMaxDatabases = 8
)

func init() {
	engine.Register(Kind, func(_ context.Context, cfg engine.Config) (engine.Executor, error) { return New(cfg) })
}

// Executor runs queries on DuckDB database files. It implements
// engine.Executor, engine.Preparer, engine.Describer and io.Closer, and is
// safe for concurrent use. Create it with New; the caller owns it and must
// Close it.
type Executor struct {
	timeout  time.Duration
	maxRows  int
	maxOpen  int
	maxDBs   int
	settings url.Values // DuckDB configuration options put in every DSN

	// dbs caches the open databases (engine.FileDBs: bounded LRU,
	// reference-counted).
	dbs *engine.FileDBs
}

// handle is one cached database (engine.FileDB).
type handle = engine.FileDB

var (
	_ engine.Executor  = (*Executor)(nil)
	_ engine.Preparer  = (*Executor)(nil)
	_ engine.Describer = (*Executor)(nil)
)

// New returns an Executor for cfg. Accepted Options:
//
//	external_access  bool     let queries read files and load extensions (default false)
//	threads          integer  DuckDB worker threads per database (default: DuckDB's, one per core)
//	memory_limit     string   DuckDB memory limit per database, e.g. "4GB" (default DefaultMemoryLimit)
//	max_databases    integer  database files kept open at once (default DefaultMaxDatabases)
//
// Unknown options are an error.
func New(cfg engine.Config) (*Executor, error) {
	e := &Executor{
		timeout: cfg.Timeout,
		maxRows: cfg.MaxRows,
		maxOpen: cfg.MaxOpen,
		maxDBs:  DefaultMaxDatabases,
	}
	if e.timeout <= 0 {
		e.timeout = DefaultTimeout
	}
	if e.maxOpen <= 0 {
		e.maxOpen = DefaultMaxOpen
	}
	if e.maxRows < 0 {
		return nil, fmt.Errorf("duckdb: max_rows must not be negative, got %d", e.maxRows)
	}
	external := false
	set := url.Values{}
	keys := make([]string, 0, len(cfg.Options))
	for k := range cfg.Options {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		v := cfg.Options[k]
		switch k {
		case "external_access":
			b, ok := v.(bool)
			if !ok {
				return nil, fmt.Errorf("duckdb: option external_access must be a bool, got %T", v)
			}
			external = b
		case "threads":
			n, ok := engine.IntOption(v)
			if !ok || n <= 0 {
				return nil, fmt.Errorf("duckdb: option threads must be a positive integer, got %v", v)
			}
			set.Set("threads", strconv.Itoa(n))
		case "memory_limit":
			s, ok := v.(string)
			if !ok || s == "" {
				return nil, fmt.Errorf("duckdb: option memory_limit must be a size such as \"2GB\", got %v", v)
			}
			set.Set("memory_limit", s)
		case "max_databases":
			n, ok := engine.IntOption(v)
			if !ok || n <= 0 {
				return nil, fmt.Errorf("duckdb: option max_databases must be a positive integer, got %v", v)
			}
			e.maxDBs = n
		default:
			return nil, fmt.Errorf("duckdb: unknown option %q (known: external_access, max_databases, memory_limit, threads)", k)
		}
	}
	if set.Get("memory_limit") == "" {
		// DuckDB's own default is 80% of RAM: one runaway query (a list of
		// 10^8 elements) took 9 GB and ran 30 s past a 3 s timeout, since
		// DuckDB checks for interrupts between vectors, not inside one
		// giant value. A bounded limit stops it with an out-of-memory
		// error first.
		set.Set("memory_limit", DefaultMemoryLimit)
	}
	set.Set("access_mode", "READ_ONLY")
	if !external {
		set.Set("enable_external_access", "false")
		set.Set("autoinstall_known_extensions", "false")
		set.Set("autoload_known_extensions", "false")
	}
	set.Set("lock_configuration", "true")
	e.settings = set
	// Opening happens under the cache's lock: DuckDB's instance cache must
	// not see two opens of one path racing.
	e.dbs = &engine.FileDBs{Name: "duckdb", Max: e.maxDBs, Open: func(abs string) (*sql.DB, error) {
		dsn, err := e.dsn(abs)
		if err != nil {
			return nil, &engine.Error{Class: item.ClassExecution, Msg: err.Error(), Err: err}
		}
		c, err := duckdb.NewConnector(dsn, nil)
		if err != nil {
			return nil, err
		}
		db := sql.OpenDB(c)
		db.SetMaxOpenConns(e.maxOpen)
		db.SetMaxIdleConns(e.maxOpen)
		return db, nil
	}}
	return e, nil
}

// Close closes every open database. Queries still running finish first
// (sql.DB.Close waits for them); later calls fail with an execution error.
func (e *Executor) Close() error { return e.dbs.Close() }

// dsn builds the driver's DSN for an absolute path. The driver takes the
// path verbatim up to the first '?' and parses the rest as a URL query, so a
// path holding '?', '#' or '%' cannot be expressed; it is refused rather than
// opened without its settings.
func (e *Executor) dsn(path string) (string, error) {
	if strings.ContainsAny(path, "?#%") {
		return "", fmt.Errorf("duckdb: database path %s contains '?', '#' or '%%', which the DuckDB driver cannot open; rename or link the file", path)
	}
	return path + "?" + e.settings.Encode(), nil
}

// acquire returns the cached database for path, opening it if needed. The
// caller must release it.
func (e *Executor) acquire(path string) (*handle, error) { return e.dbs.Acquire(path) }

func (e *Executor) release(h *handle) { e.dbs.Release(h) }

// Execute runs q.Text on the database file q.DB and returns its rows, at
// most MaxRows of them (Truncated is set when more existed). Errors are
// *engine.Error values carrying DuckDB's own message. Empty text is an
// item.ClassSyntax error. Text that is not exactly one SELECT/WITH/VALUES
// query (sqltext.ReadOnly) is still run, so that DuckDB reports what it
// makes of it, but its connection is closed rather than reused. A script of
// several statements returns the last statement's rows.
func (e *Executor) Execute(ctx context.Context, q engine.Query) (*table.Table, error) {
	h, err := e.acquire(q.DB)
	if err != nil {
		return nil, err
	}
	if sqltext.Empty(q.Text) {
		e.release(h)
		return nil, errEmpty
	}
	timeout, maxRows := q.Limits(e.timeout, e.maxRows)
	qctx, cancel := context.WithTimeout(ctx, timeout)

	type result struct {
		t   *table.Table
		err error
	}
	done := make(chan result, 1)
	// The query runs in its own goroutine, which owns the connection and
	// the database handle until DuckDB lets go of it. DuckDB checks for an
	// interrupt between vectors, not inside one giant value (SELECT
	// list(range(100000000)) ran 30 s past a 3 s interrupt): the caller gets
	// its timeout at the deadline whatever DuckDB is doing, and the
	// connection is closed, not reused, once it returns.
	go func() {
		defer e.release(h)
		defer cancel()
		conn, err := h.DB.Conn(qctx)
		if err != nil {
			done <- result{err: classify(ctx, qctx, timeout, err)}
			return
		}
		defer conn.Close()
		runCtx := qctx
		var intr *interrupter
		if hnd := interruptHandle(conn); hnd != nil {
			// Interrupt at the deadline ourselves (interrupt.go); the
			// driver sees only the caller's cancellation.
			intr = &interrupter{h: hnd}
			runCtx = ctx
			timer := time.AfterFunc(timeout, intr.fire)
			defer timer.Stop()
			stop := context.AfterFunc(ctx, intr.fire)
			defer stop()
		}
		t, err := readAll(runCtx, conn, q.Text, maxRows)
		interrupted := intr != nil && intr.finish()
		if ok, _ := sqltext.ReadOnly(q.Text); !ok || interrupted || qctx.Err() != nil {
			discard(conn)
		}
		if err != nil {
			done <- result{err: classify(ctx, qctx, timeout, err)}
			return
		}
		done <- result{t: t}
	}()
	select {
	case r := <-done:
		return r.t, r.err
	case <-qctx.Done():
		// Give an interrupt that works a moment to report itself.
		select {
		case r := <-done:
			return r.t, r.err
		case <-time.After(abandonAfter):
		}
		if ctx.Err() != nil {
			return nil, &engine.Error{Class: item.ClassCancelled, Msg: "duckdb: cancelled", Err: ctx.Err()}
		}
		return nil, &engine.Error{Class: item.ClassTimeout,
			Msg: fmt.Sprintf("query interrupted after timeout of %s (DuckDB had not stopped; its connection is closed when it does)", timeout)}
	}
}

// abandonAfter is how long past its deadline a query that DuckDB has not
// stopped is waited for before the caller gets its timeout.
const abandonAfter = 250 * time.Millisecond

var errEmpty = &engine.Error{Class: item.ClassSyntax, Msg: "empty query: no SQL statement"}

// discard closes conn's driver connection instead of returning it to the
// pool: database/sql drops a connection whose Raw callback reports
// driver.ErrBadConn.
func discard(conn *sql.Conn) {
	_ = conn.Raw(func(any) error { return driver.ErrBadConn })
}

func readAll(ctx context.Context, conn *sql.Conn, text string, maxRows int) (*table.Table, error) {
	rows, err := conn.QueryContext(ctx, text)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	cts, err := rows.ColumnTypes()
	if err != nil {
		return nil, err
	}
	t := &table.Table{Columns: make([]table.Column, len(cts)), Rows: [][]table.Value{}}
	decl := make([]string, len(cts))
	for i, ct := range cts {
		decl[i] = ct.DatabaseTypeName()
		t.Columns[i] = table.Column{Name: ct.Name(), Type: TypeOf(decl[i])}
	}
	vals := make([]any, len(cts))
	ptrs := make([]any, len(cts))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	for rows.Next() {
		if maxRows > 0 && len(t.Rows) == maxRows {
			t.Truncated = true
			break
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if err := rows.Scan(ptrs...); err != nil {
			return nil, err
		}
		row := make([]table.Value, len(vals))
		for i, v := range vals {
			row[i] = value(v, decl[i])
			vals[i] = nil
		}
		t.Rows = append(t.Rows, row)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if err := rows.Close(); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	fixTypes(t)
	return t, nil
}

var _ engine.Languager = (*Executor)(nil)

// Language reports the query language this engine runs (engine.Languager).
func (e *Executor) Language() string { return "sql" }

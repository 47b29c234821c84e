// Package postgres is evalflow's PostgreSQL engine, on pgx/v5 (pgxpool).
//
// # Databases
//
// The engine block's option dsn (a libpq connection string or
// postgres:// URL; empty means libpq's environment defaults: PGHOST,
// PGPORT, PGUSER …) says where the server is. Query.DB, the engine block's
// path evaluated per item, names the database on that server; when it is
// empty the DSN's own database is used. A Query.DB that looks like a file
// path (it holds '/') is refused: it is a database name, not a file.
//
// # Read-only, one transaction per query
//
// Every query runs as
//
//	BEGIN READ ONLY; SET LOCAL statement_timeout = <timeout ms>; <query>; ROLLBACK
//
// so PostgreSQL refuses writes (SQLSTATE 25006, item.ClassSafety) and
// whatever the query set (SET, set_config) is undone by the rollback.
// Queries go over the extended protocol, which takes exactly one statement:
// "SELECT 1; DELETE …" is refused by the server (SQLSTATE 42601) before
// anything runs, so a query cannot COMMIT its way out of the read-only
// transaction and then write. A connection that ran anything but one
// SELECT/WITH/VALUES query (PREPARE, LISTEN … survive a rollback), or
// whose result was cut at the row cap, is closed instead of being reused.
// For defence in depth connect as a role that can only read.
//
// # Connections
//
// One pgxpool per database, at most MaxOpen connections each
// (Config.MaxOpen; DefaultMaxOpen when zero), at most max_databases pools
// (least recently used closed first). The Executor owns them; Close closes
// them.
//
// # Timeouts
//
// statement_timeout makes the server cancel the query at the timeout
// (SQLSTATE 57014, item.ClassTimeout); the connection stays usable. As a
// backstop the query's context ends one second later: pgx then sends a
// cancel request and, if the server still does not answer, drops the
// connection. A caller's cancellation sends the cancel request at once
// (item.ClassCancelled).
//
// # Values
//
// Results are read in PostgreSQL's text format with the session settings
// TimeZone=UTC, DateStyle=ISO, IntervalStyle=postgres, bytea_output=hex and
// extra_float_digits=1, and converted by column type: bool → bool;
// int2, int4, int8, oid → int64; float4, float8, numeric → float64 (numeric
// NaN and ±Infinity too; digits beyond float64's precision are lost);
// bytea → []byte; everything else → the text PostgreSQL prints: date
// "2006-01-02", timestamp "2006-01-02 15:04:05[.ffffff]", timestamptz the
// instant in UTC "2006-01-02 15:04:05[.ffffff]+00", json/jsonb their JSON
// text, arrays "{1,2,3}", uuid, interval, text and varchar as they are.
package postgres

import (
	"container/list"
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgconn/ctxwatch"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/evalflow/evalflow/engine"
	"github.com/evalflow/evalflow/item"
	"github.com/evalflow/evalflow/sqltext"
	"github.com/evalflow/evalflow/table"
)

// Kind is the engine kind this package registers.
const Kind = "postgres"

// Defaults used when the configuration leaves a value at zero.
const (
	DefaultTimeout      = 30 * time.Second
	DefaultMaxOpen      = 4
	DefaultMaxDatabases = 8
)

// grace is how long after statement_timeout the query's context ends.
const grace = time.Second

func init() {
	engine.Register(Kind, func(_ context.Context, cfg engine.Config) (engine.Executor, error) { return New(cfg) })
}

// Executor runs queries on one PostgreSQL server. It implements
// engine.Executor, engine.Preparer, engine.Describer and io.Closer, and is
// safe for concurrent use. Create it with New; the caller owns it and must
// Close it.
type Executor struct {
	base    *pgxpool.Config // parsed DSN; copied per database
	timeout time.Duration
	maxRows int
	maxOpen int
	maxDBs  int

	mu     sync.Mutex // guards the fields below
	closed bool
	pools  map[string]*handle
	lru    *list.List // of *handle, most recently used at the front
}

// handle is one database's pool. refs counts the queries using it; an
// evicted handle is closed when its last user releases it.
type handle struct {
	name    string
	pool    *pgxpool.Pool
	refs    int
	evicted bool
	elem    *list.Element
}

var (
	_ engine.Executor  = (*Executor)(nil)
	_ engine.Preparer  = (*Executor)(nil)
	_ engine.Describer = (*Executor)(nil)
)

// New returns an Executor for cfg. Accepted Options: "dsn" (string) and
// "max_databases" (positive integer). Unknown options are an error. New
// does not connect; the first query does.
func New(cfg engine.Config) (*Executor, error) {
	e := &Executor{
		timeout: cfg.Timeout,
		maxRows: cfg.MaxRows,
		maxOpen: cfg.MaxOpen,
		maxDBs:  DefaultMaxDatabases,
		pools:   map[string]*handle{},
		lru:     list.New(),
	}
	if e.timeout <= 0 {
		e.timeout = DefaultTimeout
	}
	if e.maxOpen <= 0 {
		e.maxOpen = DefaultMaxOpen
	}
	if e.maxRows < 0 {
		return nil, fmt.Errorf("postgres: max_rows must not be negative, got %d", e.maxRows)
	}
	dsn := ""
	keys := make([]string, 0, len(cfg.Options))
	for k := range cfg.Options {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		v := cfg.Options[k]
		switch k {
		case "dsn":
			s, ok := v.(string)
			if !ok {
				return nil, fmt.Errorf("postgres: option dsn must be a string, got %T", v)
			}
			dsn = s
		case "max_databases":
			n, ok := engine.IntOption(v)
			if !ok || n <= 0 {
				return nil, fmt.Errorf("postgres: option max_databases must be a positive integer, got %v", v)
			}
			e.maxDBs = n
		default:
			return nil, fmt.Errorf("postgres: unknown option %q (known: dsn, max_databases)", k)
		}
	}
	pc, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		// pgconn's message quotes the DSN; it may hold a password.
		return nil, errors.New("postgres: option dsn is not a valid connection string")
	}
	cc := pc.ConnConfig
	cc.DefaultQueryExecMode = pgx.QueryExecModeExec // text results, one statement, no statement cache
	for k, v := range map[string]string{
		"TimeZone": "UTC", "DateStyle": "ISO, YMD", "IntervalStyle": "postgres",
		"bytea_output": "hex", "extra_float_digits": "1", "application_name": "evalflow",
	} {
		cc.RuntimeParams[k] = v
	}
	cc.BuildContextWatcherHandler = func(c *pgconn.PgConn) ctxwatch.Handler {
		return &pgconn.CancelRequestContextWatcherHandler{Conn: c, DeadlineDelay: grace}
	}
	pc.MaxConns = int32(e.maxOpen)
	pc.MinConns = 0
	e.base = pc
	return e, nil
}

// Close closes every pool; it waits for connections in use to be
// returned. Later calls fail with an execution error.
func (e *Executor) Close() error {
	e.mu.Lock()
	e.closed = true
	hs := make([]*handle, 0, len(e.pools))
	for _, h := range e.pools {
		hs = append(hs, h)
	}
	e.pools = map[string]*handle{}
	e.lru.Init()
	e.mu.Unlock()
	for _, h := range hs {
		h.pool.Close()
	}
	return nil
}

// acquire returns the pool for database name ("" for the DSN's own),
// creating it if needed. The caller must release it.
func (e *Executor) acquire(name string) (*handle, error) {
	if strings.Contains(name, "/") {
		return nil, &engine.Error{Class: item.ClassExecution,
			Msg: fmt.Sprintf("postgres: %q is not a database name (the engine's path must evaluate to a database name, not a file path)", name)}
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return nil, &engine.Error{Class: item.ClassExecution, Msg: "postgres: executor is closed"}
	}
	if h, ok := e.pools[name]; ok {
		h.refs++
		e.lru.MoveToFront(h.elem)
		return h, nil
	}
	pc := e.base.Copy()
	if name != "" {
		pc.ConnConfig.Database = name
	}
	pool, err := pgxpool.NewWithConfig(context.Background(), pc) // connects lazily
	if err != nil {
		return nil, &engine.Error{Class: item.ClassExecution, Msg: err.Error(), Err: err}
	}
	h := &handle{name: name, pool: pool, refs: 1}
	h.elem = e.lru.PushFront(h)
	e.pools[name] = h
	e.evictLocked()
	return h, nil
}

func (e *Executor) evictLocked() {
	for len(e.pools) > e.maxDBs {
		h := e.lru.Remove(e.lru.Back()).(*handle)
		delete(e.pools, h.name)
		h.evicted = true
		if h.refs == 0 {
			go h.pool.Close() // Close waits for nothing here: no connection is in use
		}
	}
}

func (e *Executor) release(h *handle) {
	e.mu.Lock()
	h.refs--
	closeIt := h.evicted && h.refs == 0
	e.mu.Unlock()
	if closeIt {
		h.pool.Close()
	}
}

var errEmpty = &engine.Error{Class: item.ClassSyntax, Msg: "empty query: no SQL statement"}

// session is one query's connection inside its read-only transaction.
type session struct {
	conn *pgxpool.Conn
	tx   pgx.Tx
	// discard closes the connection instead of returning it to the pool.
	discard bool
}

// begin acquires a connection and opens the read-only transaction with the
// statement timeout.
func begin(ctx context.Context, h *handle, timeout time.Duration) (*session, error) {
	conn, err := h.pool.Acquire(ctx)
	if err != nil {
		return nil, err
	}
	s := &session{conn: conn}
	s.tx, err = conn.BeginTx(ctx, pgx.TxOptions{AccessMode: pgx.ReadOnly})
	if err != nil {
		s.discard = true
		s.end()
		return nil, err
	}
	ms := timeout.Milliseconds()
	if ms < 1 {
		ms = 1
	}
	if _, err := s.tx.Exec(ctx, fmt.Sprintf("SET LOCAL statement_timeout = %d", ms)); err != nil {
		s.end()
		return nil, err
	}
	return s, nil
}

// end rolls the transaction back and returns or closes the connection. The
// rollback gets its own short context, so that a query that ran out of
// time still leaves a clean, reusable connection.
func (s *session) end() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if s.tx != nil && !s.discard {
		if err := s.tx.Rollback(ctx); err != nil && !errors.Is(err, pgx.ErrTxClosed) {
			s.discard = true
		}
	}
	if s.discard {
		_ = s.conn.Conn().Close(ctx)
	}
	s.conn.Release()
}

// Execute runs q.Text in the database q.DB and returns its rows, at most
// MaxRows of them (Truncated is set when more existed). Errors are
// *engine.Error values carrying PostgreSQL's own message and SQLSTATE.
// Empty text is an item.ClassSyntax error.
func (e *Executor) Execute(ctx context.Context, q engine.Query) (*table.Table, error) {
	h, err := e.acquire(q.DB)
	if err != nil {
		return nil, err
	}
	defer e.release(h)
	if sqltext.Empty(q.Text) {
		return nil, errEmpty
	}
	// A READ ONLY transaction still lets a superuser COPY … TO a server file
	// or PROGRAM, and LOCK tables: anything but one SELECT/WITH/VALUES is
	// refused before it is sent (found by enginetest's adversarial run).
	if ok, reason := sqltext.ReadOnly(q.Text); !ok {
		// Parse it first (preparing runs nothing), so malformed text keeps
		// the engine's syntax error; only a well-formed write is refused.
		if err := e.Prepare(ctx, q); err != nil {
			return nil, err
		}
		return nil, &engine.Error{Class: item.ClassSafety, Msg: "refused before running: " + reason}
	}
	timeout, maxRows := q.Limits(e.timeout, e.maxRows)
	qctx, cancel := context.WithTimeout(ctx, timeout+grace)
	defer cancel()

	s, err := begin(qctx, h, timeout)
	if err != nil {
		return nil, classify(ctx, qctx, timeout, err)
	}
	t, err := readAll(qctx, s.tx, q.Text, maxRows)
	if ok, _ := sqltext.ReadOnly(q.Text); !ok || (t != nil && t.Truncated) {
		// Not one SELECT: it may have left session state that survives
		// ROLLBACK (PREPARE, LISTEN). Or a cut result, whose rest would
		// have to be read before the connection could be reused.
		s.discard = true
	}
	s.end()
	if err != nil {
		return nil, classify(ctx, qctx, timeout, err)
	}
	return t, nil
}

func readAll(ctx context.Context, tx pgx.Tx, text string, maxRows int) (*table.Table, error) {
	rows, err := tx.Query(ctx, text)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	fds := rows.FieldDescriptions()
	t := &table.Table{Columns: make([]table.Column, len(fds)), Rows: [][]table.Value{}}
	for i, fd := range fds {
		t.Columns[i] = table.Column{Name: fd.Name, Type: TypeOf(fd.DataTypeOID)}
	}
	for rows.Next() {
		if maxRows > 0 && len(t.Rows) == maxRows {
			t.Truncated = true
			break
		}
		raw := rows.RawValues()
		row := make([]table.Value, len(fds))
		var decoded []any
		for i, fd := range fds {
			if fd.Format != pgx.TextFormatCode {
				// Not expected in QueryExecModeExec; let pgx decode.
				if decoded == nil {
					if decoded, err = rows.Values(); err != nil {
						return nil, err
					}
				}
				row[i] = table.Normalize(decoded[i])
				continue
			}
			if row[i], err = textValue(raw[i], fd.DataTypeOID); err != nil {
				return nil, fmt.Errorf("column %q: %w", fd.Name, err)
			}
		}
		t.Rows = append(t.Rows, row)
	}
	if t.Truncated {
		// Reading the rest of the result to reuse the connection could take
		// as long as the query had left; the connection is closed instead
		// (the caller discards it) and the server stops at its next write.
		_ = tx.Conn().PgConn().Conn().Close()
		return t, nil
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	return t, nil
}

var _ engine.Languager = (*Executor)(nil)
var _ engine.NameLocator = (*Executor)(nil)

// Language reports the query language this engine runs (engine.Languager).
func (e *Executor) Language() string { return "sql" }

// LocatesByName reports that Query.DB names a database or graph on the
// server, not a file (engine.NameLocator).
func (e *Executor) LocatesByName() bool { return true }

// Package engine is the one small interface evalflow runs queries through.
// Every engine kind (SQLite, DuckDB, PostgreSQL, SPARQL, Cypher, pandas)
// implements Executor and registers a constructor under its kind name; the
// execute stage knows nothing else about it.
//
// Optional behaviour is a second small interface checked with a type
// assertion: Preparer (syntax and name check without running),
// PrepareExecuter (that check and the execution from one parse), Describer
// (schema for prompts and validation) and io.Closer (executors that hold
// connections or processes; whoever called New closes them).
package engine

import (
	"context"
	"errors"
	"math"
	"strings"
	"time"

	"github.com/evalflow/evalflow/item"
	"github.com/evalflow/evalflow/table"
)

// Query is one query to run. The zero values of MaxRows and Timeout mean
// "use the executor's configured default" (Config.MaxRows, Config.Timeout),
// and when that is zero too, "no row cap" and the engine's own default
// timeout.
type Query struct {
	// Text is the query exactly as it will be sent to the engine.
	Text string
	// DB is the resolved database location: a file path for SQLite, a
	// connection string or graph name for server engines.
	DB string
	// MaxRows caps the rows read back; Table.Truncated reports a cut.
	MaxRows int
	// Timeout bounds the query on the engine; the query is interrupted, not
	// merely abandoned, when it runs out.
	Timeout time.Duration
	// Root, when set, is the resolved directory every file the engine opens
	// for this query must stay inside (engines that expand DB into several
	// files — a directory, a glob — check each with Within).
	Root string
}

// Executor runs one query against one engine. Implementations are safe for
// concurrent use and return promptly once ctx is done. Errors are *Error
// values whose Class says what went wrong (see ClassOf); the returned table
// is nil exactly when the error is non-nil.
type Executor interface {
	Execute(ctx context.Context, q Query) (*table.Table, error)
}

// Preparer checks a query's syntax (and, where the engine resolves names at
// prepare time, its table and column names) without running it. A nil error
// means the engine would accept the query; errors are classified like
// Execute's.
type Preparer interface {
	Prepare(ctx context.Context, q Query) error
}

// PrepareExecuter is implemented by executors that can check a query's
// syntax and, when it passes, run the query from the parse the check made.
// prepErr is what Prepare would return for q; only when it is nil, res and
// err are what Execute would return for q, and took is the time the
// execution took after the check. A validate stage whose attempts an
// execute stage runs next on the same engine uses it, so that each query
// is parsed once (nodes.Engine.DeferCheck, RunChecked).
type PrepareExecuter interface {
	PrepareExecute(ctx context.Context, q Query) (prepErr error, res *table.Table, err error, took time.Duration)
}

// Describer returns the schema of one database, for prompts and for schema
// validation of generated queries.
type Describer interface {
	Describe(ctx context.Context, db string) (*Schema, error)
}

// Config configures one executor. The zero value is valid: no
// engine-specific options, engine default timeout, no row cap, engine
// default connection limit.
type Config struct {
	// Options are engine-specific settings, as decoded from the pipeline's
	// engine block (numbers may arrive as int, int64 or float64). Each
	// engine documents the keys it accepts and rejects unknown keys.
	Options map[string]any
	// ReadOnly asks an engine that could write to refuse writes. Engines that
	// are read-only by construction (sqlite) ignore it.
	ReadOnly bool
	// Timeout is the per-query timeout used when Query.Timeout is zero.
	Timeout time.Duration
	// MaxRows is the row cap used when Query.MaxRows is zero.
	MaxRows int
	// MaxOpen bounds the connections an executor opens per database. The
	// planner sets it to the stage's declared concurrency so that no query
	// ever waits on a pool the planner thinks is free.
	MaxOpen int
}

// Schema describes one database: its tables (and views) in the order the
// engine lists them.
type Schema struct {
	Tables []TableInfo
}

// Table returns the named table, matching names case-insensitively as SQL
// does, and whether it exists.
func (s *Schema) Table(name string) (*TableInfo, bool) {
	if s == nil {
		return nil, false
	}
	for i := range s.Tables {
		if strings.EqualFold(s.Tables[i].Name, name) {
			return &s.Tables[i], true
		}
	}
	return nil, false
}

// TableInfo describes one table or view.
type TableInfo struct {
	Name        string
	View        bool
	Columns     []ColumnInfo
	ForeignKeys []ForeignKey
}

// ColumnInfo describes one column. DeclType is the type as declared in the
// DDL (possibly empty); Type is evalflow's mapping of it.
type ColumnInfo struct {
	Name       string
	DeclType   string
	Type       table.Type
	PrimaryKey bool
	NotNull    bool
}

// ForeignKey is one (possibly composite) foreign key: Columns of the owning
// table reference RefColumns of RefTable, position by position.
type ForeignKey struct {
	Columns    []string
	RefTable   string
	RefColumns []string
}

// Error is a classified engine error. Class is one of item.ClassSyntax,
// item.ClassSchema, item.ClassExecution, item.ClassTimeout,
// item.ClassSafety or item.ClassCancelled; Msg is the engine's own message
// (kept verbatim so users see what the engine said); Err is the underlying
// error, if any.
type Error struct {
	Class string
	Msg   string
	Err   error
	// Unavailable is set when the database, graph or engine could not be
	// reached at all (a missing file, a server that does not answer): not
	// the query's fault, so the item is a harness error, never a score.
	Unavailable bool
}

// Unavailable reports whether err says the engine or database could not be
// reached (an *Error with Unavailable set).
func Unavailable(err error) bool {
	var e *Error
	return errors.As(err, &e) && e.Unavailable
}

// Error returns Msg, or the wrapped error's text when Msg is empty.
func (e *Error) Error() string {
	switch {
	case e.Msg != "":
		return e.Msg
	case e.Err != nil:
		return e.Err.Error()
	default:
		return e.Class + " error"
	}
}

// Unwrap returns the underlying error.
func (e *Error) Unwrap() error { return e.Err }

// ClassOf returns the error class of err: item.ClassNone for nil, the Class
// of the first *Error in its chain, item.ClassTimeout for a deadline,
// item.ClassCancelled for a cancellation, and item.ClassExecution otherwise.
func ClassOf(err error) string {
	if err == nil {
		return item.ClassNone
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Class
	}
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return item.ClassTimeout
	case errors.Is(err, context.Canceled):
		return item.ClassCancelled
	}
	return item.ClassExecution
}

// Limits returns q's timeout and row cap, each falling back to the
// executor's default when q leaves it at zero.
func (q Query) Limits(defTimeout time.Duration, defMaxRows int) (time.Duration, int) {
	timeout, maxRows := q.Timeout, q.MaxRows
	if timeout <= 0 {
		timeout = defTimeout
	}
	if maxRows <= 0 {
		maxRows = defMaxRows
	}
	return timeout, maxRows
}

// IntOption reads a whole-number engine option as HCL decodes it (float64)
// or as Go callers pass it (int, int64); ok is false for anything else.
func IntOption(v any) (int, bool) {
	switch x := v.(type) {
	case int:
		return x, true
	case int64:
		return int(x), true
	case float64:
		if x == math.Trunc(x) && math.Abs(x) < 1<<31 {
			return int(x), true
		}
	}
	return 0, false
}

// Languager is implemented by executors that say which query language they
// run: "sql", "cypher", "sparql" or "pandas". The validate stage and LLM
// prompts default to it.
type Languager interface {
	Language() string
}

// NameLocator is implemented by executors whose per-item location
// (Query.DB) names a database or graph on a server rather than a file; the
// planner then passes the engine block's path through as written instead of
// resolving it against the pipeline directory.
type NameLocator interface {
	LocatesByName() bool
}

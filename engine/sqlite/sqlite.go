// Package sqlite is evalflow's SQLite engine, on the pure-Go
// modernc.org/sqlite driver (no cgo).
//
// # Read-only by construction
//
// Every database file is opened as "file:PATH?mode=ro" with
// _pragma=query_only(1): SQLite itself refuses any write
// ("attempt to write a readonly database", classified item.ClassSafety), and
// a missing file is an error ("database file not found: PATH"), never a new
// empty database. The option immutable=true adds SQLite's immutable=1, which
// skips file locking and change detection; it is off by default because it is
// only safe when nothing (not even another evalflow run regenerating a
// benchmark) can change the file while it is open.
//
// # Connections
//
// An Executor keeps one *sql.DB per database path, at most MaxOpen
// connections each (Config.MaxOpen, which the planner sets to the stage's
// declared concurrency; DefaultMaxOpen when zero), and at most
// max_databases paths (DefaultMaxDatabases); the least recently used idle
// database is closed when a new one is needed. The Executor owns them all;
// Close releases them. A connection that ran anything but exactly one
// SELECT/WITH/VALUES query (a PRAGMA, ATTACH, BEGIN, a script) is closed
// afterwards, so no connection-scoped state reaches another item's query.
//
// # Locks
//
// A database in rollback-journal mode (the header says so; the Spider,
// GeoQuery and Restaurants files of the test data are) is opened with
// locking_mode EXCLUSIVE: each connection takes SQLite's shared read lock
// at its first query and holds it until the connection closes, instead of
// taking and releasing it, and re-validating its page cache, around every
// query (a fifth of a raw replay's CPU time, most of it in fcntl calls;
// docs/benchmarks-baseline.md). Other readers are not affected; a process
// writing the database cannot commit while a run has it open (SQLITE_BUSY),
// so the run reads one state of the file throughout — for writers that take
// SQLite's locks: a file copied over in place (cp, a download) is not
// stopped, and a run reading it may see old pages; replace a database by
// writing a new file and renaming it over the old one. A query waits for a
// lock up to the busy wait (busyWait: half the engine's timeout, at most
// MaxBusyWait; a new connection of the run waits while a writer waits for
// its lock), or until its own deadline when that comes first (see dctx);
// one that cannot get it by then is an execution error marked Unavailable:
// the item is a harness error, not a wrong answer. A database
// in WAL mode keeps SQLite's normal locking: opened read-only with
// exclusive locking it could not be read at all (the first connection gets
// "disk I/O error", the next "database is locked").
//
// # Timeouts
//
// A query that runs out of time is interrupted inside SQLite
// (sqlite3_interrupt), not abandoned: this package interrupts it, on every
// step, repeating the interrupt until the query has stopped (interrupt.go).
// When that watcher is armed and the busy wait cannot outlast the query's
// deadline, the driver's calls get the context without its end, so the
// driver's own watchers (a goroutine and a progress handler per statement,
// database/sql's goroutine per result set) are left out. The error is
// item.ClassTimeout and the connection is discarded, so the next query
// gets a fresh one.
//
// # Values
//
// Columns get table types from their declared types by SQLite's affinity
// rules (INT → int; CHAR, CLOB, TEXT → string; BLOB → bytes; REAL, FLOA,
// DOUB → float; anything else, and expressions, → any). When a value
// contradicts its column's declared type (SQLite lets an INTEGER column hold
// text) the column's type becomes any: rows carry the truth. TEXT is
// returned byte for byte as a Go string; invalid UTF-8 is kept, not
// replaced, so comparisons see exactly what the database holds.
//
// The driver turns TEXT stored in a column declared DATE, DATETIME or
// TIMESTAMP into time.Time; this package formats it back as SQLite text
// ("2006-01-02" for a date at midnight in a DATE column, otherwise
// "2006-01-02 15:04:05[.fff][-07:00]"). Values stored in other layouts
// ("T" separator, trailing "Z", minutes only) come back in that canonical
// layout, not as stored.
//
// # Double-quoted strings
//
// The driver is built with SQLite's legacy double-quoted-string
// behaviour on (DQS): "arizona" is an identifier when a column of that
// name exists and a string literal otherwise. GeoQuery and Spider golds
// rely on it, so it is left on.
package sqlite

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	_ "modernc.org/sqlite" // registers the "sqlite" database/sql driver

	"github.com/evalflow/evalflow/engine"
	"github.com/evalflow/evalflow/item"
	"github.com/evalflow/evalflow/sqltext"
	"github.com/evalflow/evalflow/table"
)

// Kind is the engine kind this package registers.
const Kind = "sqlite"

// MaxBusyWait is how long a query waits for a lock another connection
// holds (SQLite's busy timeout; half the engine's timeout when that is
// shorter):
// a WAL file's first reader rebuilding its index, a writer of another
// process between its lock and its commit. A query still locked out after
// it fails as a harness error (see "Locks"), never as the prediction's.
const MaxBusyWait = 5 * time.Second

// Defaults used when the configuration leaves a value at zero.
const (
	DefaultTimeout      = 30 * time.Second
	DefaultMaxOpen      = 4
	DefaultMaxDatabases = 16
)

func init() {
	engine.Register(Kind, func(_ context.Context, cfg engine.Config) (engine.Executor, error) { return New(cfg) })
}

// Executor runs queries on SQLite database files. It implements
// engine.Executor, engine.Preparer, engine.PrepareExecuter,
// engine.Describer and io.Closer, and is
// safe for concurrent use. Create it with New; the caller owns it and must
// Close it.
type Executor struct {
	timeout   time.Duration
	maxRows   int
	maxOpen   int
	maxDBs    int
	immutable bool

	// dbs caches the open databases (engine.FileDBs: bounded LRU,
	// reference-counted).
	dbs *engine.FileDBs
}

// handle is one cached database (engine.FileDB).
type handle = engine.FileDB

var (
	_ engine.Executor        = (*Executor)(nil)
	_ engine.Preparer        = (*Executor)(nil)
	_ engine.PrepareExecuter = (*Executor)(nil)
	_ engine.Describer       = (*Executor)(nil)
)

// New returns an Executor for cfg. Accepted Options: "immutable" (bool) and
// "max_databases" (positive integer). Unknown options are an error.
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
		return nil, fmt.Errorf("sqlite: max_rows must not be negative, got %d", e.maxRows)
	}
	keys := make([]string, 0, len(cfg.Options))
	for k := range cfg.Options {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		v := cfg.Options[k]
		switch k {
		case "immutable":
			b, ok := v.(bool)
			if !ok {
				return nil, fmt.Errorf("sqlite: option immutable must be a bool, got %T", v)
			}
			e.immutable = b
		case "max_databases":
			n, ok := engine.IntOption(v)
			if !ok || n <= 0 {
				return nil, fmt.Errorf("sqlite: option max_databases must be a positive integer, got %v", v)
			}
			e.maxDBs = n
		default:
			return nil, fmt.Errorf("sqlite: unknown option %q (known: immutable, max_databases)", k)
		}
	}
	e.dbs = &engine.FileDBs{Name: "sqlite", Max: e.maxDBs, Open: func(abs string) (*sql.DB, error) {
		db, err := sql.Open("sqlite", e.dsn(abs))
		if err != nil {
			return nil, err
		}
		db.SetMaxOpenConns(e.maxOpen)
		db.SetMaxIdleConns(e.maxOpen)
		return db, nil
	}}
	return e, nil
}

// Close closes every cached database. Queries still running finish first
// (sql.DB.Close waits for them); later calls fail with an execution error.
func (e *Executor) Close() error { return e.dbs.Close() }

// dsn builds the read-only URI for an absolute path. SQLite decodes %XX in
// URI paths, so the characters that would end the path are escaped. A
// database in rollback-journal mode is read with locking_mode EXCLUSIVE
// (see "Locks" in the package documentation).
func (e *Executor) dsn(path string) string {
	esc := strings.NewReplacer("%", "%25", "?", "%3f", "#", "%23").Replace(filepath.ToSlash(path))
	s := "file:" + esc + "?mode=ro&_pragma=query_only(1)"
	s += fmt.Sprintf("&_pragma=busy_timeout(%d)", e.busyWait().Milliseconds())
	if e.immutable {
		s += "&immutable=1"
	} else if rollbackJournal(path) {
		s += "&_pragma=locking_mode(EXCLUSIVE)"
	}
	return s
}

// busyWait is SQLite's busy timeout for this executor: MaxBusyWait, or half
// the query timeout when that is shorter, so a query locked out fails as
// locked out before its own timeout would call it a timeout.
func (e *Executor) busyWait() time.Duration { return min(e.timeout/2, MaxBusyWait) }

// dctx is the context for the driver's calls of a query whose context is
// qctx and whose watcher armed is: qctx without its end when the watcher
// is armed and a wait for a lock (SQLite's busy wait, which an interrupt
// does not cut short) ends before qctx's deadline — the watcher then
// stops the query in time by itself; otherwise qctx, whose end the
// driver's busy handler also watches (a query timeout shorter than twice
// the busy wait, or a caller's earlier deadline).
func (e *Executor) dctx(qctx context.Context, armed bool) context.Context {
	if !armed {
		return qctx
	}
	if d, ok := qctx.Deadline(); !ok || time.Until(d) < e.busyWait() {
		return qctx
	}
	return context.WithoutCancel(qctx)
}

// rollbackJournal reports whether the file at path is an SQLite database in
// rollback-journal mode: the header's magic string and its file format
// write and read versions both 1 (2 is WAL; https://www.sqlite.org/fileformat.html).
// Anything else (WAL, an unreadable or empty file, not a database) is
// false, and the database is opened with SQLite's normal locking.
func rollbackJournal(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	var h [20]byte
	if _, err := io.ReadFull(f, h[:]); err != nil {
		return false
	}
	return string(h[:16]) == "SQLite format 3\x00" && h[18] == 1 && h[19] == 1
}

// acquire returns the cached database for path, opening it if needed. The
// caller must release it.
func (e *Executor) acquire(path string) (*handle, error) { return e.dbs.Acquire(path) }

func (e *Executor) release(h *handle) { e.dbs.Release(h) }

// Execute runs q.Text on the database file q.DB and returns its rows, at
// most MaxRows of them (Truncated is set when more existed). Errors are
// *engine.Error values carrying SQLite's own message. Empty text (only
// whitespace, comments and semicolons) is an item.ClassSyntax error. Text
// that is not exactly one SELECT/WITH/VALUES query (sqltext.ReadOnly) is
// refused before anything runs (item.ClassSafety): mode=ro covers only the
// main database, so an ATTACH or VACUUM INTO would create files elsewhere
// (found by enginetest's adversarial run).
func (e *Executor) Execute(ctx context.Context, q engine.Query) (*table.Table, error) {
	h, err := e.acquire(q.DB)
	if err != nil {
		return nil, err
	}
	defer e.release(h)
	timeout, maxRows := q.Limits(e.timeout, e.maxRows)
	qctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()

	if sqltext.Empty(q.Text) {
		return nil, errEmpty
	}
	if ok, reason := sqltext.ReadOnly(q.Text); !ok {
		// Parse it first (preparing runs nothing), so malformed text keeps
		// the engine's syntax error; only a well-formed write is refused.
		// Nothing else runs, so no connection keeps its state.
		if err := e.Prepare(ctx, q); err != nil {
			return nil, err
		}
		return nil, &engine.Error{Class: item.ClassSafety, Msg: "refused before running: " + reason}
	}
	conn, err := h.DB.Conn(qctx)
	if err != nil {
		return nil, classify(ctx, qctx, timeout, err)
	}
	defer conn.Close()

	// Only exactly one SELECT gets here (the ReadOnly check above), so the
	// connection goes back to the pool: no PRAGMA, ATTACH or BEGIN has
	// left state on it.
	stop, armed := watch(qctx, conn)
	defer stop() // before conn.Close, also on a panic
	t, err := readAll(qctx, e.dctx(qctx, armed), conn, q.Text, maxRows)
	stop()
	if err != nil {
		return nil, classify(ctx, qctx, timeout, err)
	}
	return t, nil
}

var errEmpty = &engine.Error{Class: item.ClassSyntax, Msg: "empty query: no SQL statement"}

// discard closes conn's driver connection instead of returning it to the
// pool: database/sql drops a connection whose Raw callback reports
// driver.ErrBadConn.
func discard(conn *sql.Conn) {
	_ = conn.Raw(func(any) error { return driver.ErrBadConn })
}

// PrepareExecute checks q's syntax as Prepare does and, when it passes,
// runs q as Execute does, from the same parse (engine.PrepareExecuter):
// one read-only query is compiled once, on one connection, under one
// timeout. Text that is not one read-only query is only prepared (Execute
// refuses it after preparing it, as here).
func (e *Executor) PrepareExecute(ctx context.Context, q engine.Query) (prepErr error, res *table.Table, err error, took time.Duration) {
	if ok, _ := sqltext.ReadOnly(q.Text); !ok {
		if prepErr = e.Prepare(ctx, q); prepErr != nil {
			return prepErr, nil, nil, 0
		}
		start := time.Now()
		res, err = e.Execute(ctx, q)
		return nil, res, err, time.Since(start)
	}
	h, err := e.acquire(q.DB)
	if err != nil {
		return err, nil, nil, 0
	}
	defer e.release(h)
	timeout, maxRows := q.Limits(e.timeout, e.maxRows)
	qctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	conn, err := h.DB.Conn(qctx)
	if err != nil {
		return classify(ctx, qctx, timeout, err), nil, nil, 0
	}
	defer conn.Close()
	stop, armed := watch(qctx, conn)
	defer stop()
	dc := e.dctx(qctx, armed)
	stmt, err := conn.PrepareContext(dc, q.Text)
	if err != nil {
		return classify(ctx, qctx, timeout, err), nil, nil, 0
	}
	defer stmt.Close()
	start := time.Now()
	rows, err := stmt.QueryContext(dc)
	var t *table.Table
	if err == nil {
		t, err = readRows(qctx, rows, maxRows)
	}
	stop()
	took = time.Since(start)
	if err != nil {
		return nil, nil, classify(ctx, qctx, timeout, err), took
	}
	return nil, t, nil, took
}

// readAll runs text on conn with the driver's calls under dctx and reads
// its rows, checking ctx between them.
func readAll(ctx, dctx context.Context, conn *sql.Conn, text string, maxRows int) (*table.Table, error) {
	rows, err := conn.QueryContext(dctx, text)
	if err != nil {
		return nil, err
	}
	return readRows(ctx, rows, maxRows)
}

// readRows reads rows (closing them) into a table of at most maxRows rows.
func readRows(ctx context.Context, rows *sql.Rows, maxRows int) (*table.Table, error) {
	defer rows.Close()
	cts, err := rows.ColumnTypes()
	if err != nil {
		return nil, err
	}
	t := &table.Table{Columns: make([]table.Column, len(cts)), Rows: [][]table.Value{}}
	decl := make([]string, len(cts))
	for i, ct := range cts {
		decl[i] = strings.ToUpper(ct.DatabaseTypeName())
		t.Columns[i] = table.Column{Name: ct.Name(), Type: TypeOf(decl[i])}
	}
	vals := make([]any, len(cts))
	ptrs := make([]any, len(cts))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	// Rows are cut from slabs of values (4 rows, then twice as many each
	// time, up to 1024), each row capped at its own length.
	var slab []table.Value
	chunk := 4
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
		if len(slab) < len(vals) || len(vals) == 0 {
			slab = make([]table.Value, chunk*len(vals))
			chunk = min(2*chunk, 1024)
		}
		row := slab[:len(vals):len(vals)]
		slab = slab[len(vals):]
		for i, v := range vals {
			switch x := v.(type) {
			case time.Time:
				row[i] = formatTime(x, decl[i])
			case []byte:
				// Copied, and non-nil even when empty: an empty BLOB is
				// not NULL.
				row[i] = append([]byte{}, x...)
			default:
				row[i] = table.Normalize(v)
			}
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
	// An interrupt that lands after the last step still cancels the result:
	// a caller that ran out of time must not get a table.
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	fixTypes(t)
	return t, nil
}

// TypeOf maps a declared SQLite column type to a table type by SQLite's
// type-affinity rules (https://www.sqlite.org/datatype3.html#affname),
// except that NUMERIC affinity and an empty type (expressions) map to
// table.TypeAny because their values may be of any storage class.
func TypeOf(decl string) table.Type {
	d := strings.ToUpper(decl)
	switch {
	case d == "":
		return table.TypeAny
	case strings.Contains(d, "INT"):
		return table.TypeInt
	case strings.Contains(d, "CHAR"), strings.Contains(d, "CLOB"), strings.Contains(d, "TEXT"):
		return table.TypeString
	case strings.Contains(d, "BLOB"):
		return table.TypeBytes
	case strings.Contains(d, "REAL"), strings.Contains(d, "FLOA"), strings.Contains(d, "DOUB"):
		return table.TypeFloat
	}
	return table.TypeAny
}

// fixTypes sets a column's type to any when a non-NULL value contradicts it.
func fixTypes(t *table.Table) {
	for j := range t.Columns {
		want := t.Columns[j].Type
		if want == table.TypeAny {
			continue
		}
		for _, r := range t.Rows {
			if !fits(r[j], want) {
				t.Columns[j].Type = table.TypeAny
				break
			}
		}
	}
}

func fits(v table.Value, t table.Type) bool {
	switch v.(type) {
	case nil:
		return true
	case int64:
		return t == table.TypeInt
	case float64:
		return t == table.TypeFloat
	case string:
		return t == table.TypeString
	case []byte:
		return t == table.TypeBytes
	}
	return false
}

// formatTime renders a time the driver parsed from TEXT back in SQLite's
// own layout; see the package documentation for what is lost.
func formatTime(tm time.Time, decl string) string {
	_, off := tm.Zone()
	if decl == "DATE" && off == 0 && tm.Hour() == 0 && tm.Minute() == 0 && tm.Second() == 0 && tm.Nanosecond() == 0 {
		return tm.Format("2006-01-02")
	}
	s := tm.Format("2006-01-02 15:04:05.999999999")
	if off != 0 {
		s += tm.Format("-07:00")
	}
	return s
}

var _ engine.Languager = (*Executor)(nil)

// Language reports the query language this engine runs (engine.Languager).
func (e *Executor) Language() string { return "sql" }

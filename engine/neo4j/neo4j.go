// Package neo4j is evalflow's Neo4j engine (kind "neo4j"): Cypher over Bolt
// with github.com/neo4j/neo4j-go-driver/v5. It also reaches other servers
// that speak Bolt and Neo4j's Cypher, such as Memgraph.
//
// # Read-only
//
// Every query runs in a managed read transaction (session access mode
// read, ExecuteRead). Neo4j refuses writes there ("Writing in read access
// mode not allowed", item.ClassSafety). For a stronger guarantee connect
// as a user whose role only reads.
//
// # Databases
//
// Query.DB is the database name; when empty, the database option is used,
// and when that is empty too, the user's home database.
//
// # Options
//
//	uri       bolt://host:7687, neo4j://host:7687 (routing) or +s variants; required
//	username  user for basic authentication (no authentication when empty)
//	password  its password
//	database  database used when Query.DB is empty
//
// # Timeouts
//
// The query's timeout is sent as the transaction timeout, so the server
// terminates the transaction itself (Neo.ClientError.Transaction.
// TransactionTimedOut..., item.ClassTimeout); the client gives up one second
// later. The driver's retries of transient failures are off: a query is run
// once.
//
// # Values
//
// Records take the normal forms of package engine/cypher: nodes,
// relationships and paths without their ids, lists and maps as JSON text,
// points with their SRID, temporals in ISO 8601. MaxRows stops reading
// records after the cap; the rest are discarded with the transaction.
//
// # Testing
//
// The executor talks to the driver through the small interfaces in
// driver.go (Driver, Session, Tx, Result), so tests run it against fakes;
// NewWithDriver takes one.
package neo4j

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"
	neo4jconfig "github.com/neo4j/neo4j-go-driver/v5/neo4j/config"

	"github.com/evalflow/evalflow/engine"
	"github.com/evalflow/evalflow/engine/cypher"
	"github.com/evalflow/evalflow/item"
	"github.com/evalflow/evalflow/table"
)

// Kind is the engine kind this package registers.
const Kind = "neo4j"

// Defaults used when the configuration leaves a value at zero.
const (
	DefaultTimeout = 30 * time.Second
	DefaultMaxOpen = 4
	grace          = time.Second
)

func init() {
	engine.Register(Kind, func(_ context.Context, cfg engine.Config) (engine.Executor, error) { return New(cfg) })
}

// Executor runs Cypher queries over Bolt. It implements engine.Executor,
// engine.Preparer, engine.Describer and io.Closer and is safe for
// concurrent use (each query has its own session). The caller owns it and
// must Close it, which closes the driver.
type Executor struct {
	driver   Driver
	database string
	timeout  time.Duration
	maxRows  int
}

var (
	_ engine.Executor  = (*Executor)(nil)
	_ engine.Preparer  = (*Executor)(nil)
	_ engine.Describer = (*Executor)(nil)
)

// New connects lazily to the server named by the uri option (the driver
// dials on the first query); see the package documentation for options.
func New(cfg engine.Config) (*Executor, error) {
	var uri, user, pass, db string
	keys := make([]string, 0, len(cfg.Options))
	for k := range cfg.Options {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		s, ok := cfg.Options[k].(string)
		switch k {
		case "uri":
			uri = s
		case "username":
			user = s
		case "password":
			pass = s
		case "database":
			db = s
		default:
			return nil, fmt.Errorf("neo4j: unknown option %q (known: database, password, uri, username)", k)
		}
		if !ok {
			return nil, fmt.Errorf("neo4j: option %s must be a string, got %T", k, cfg.Options[k])
		}
	}
	if uri == "" {
		return nil, errors.New("neo4j: option uri (bolt://host:port or neo4j://host:port) is required")
	}
	auth := neo4j.NoAuth()
	if user != "" || pass != "" {
		auth = neo4j.BasicAuth(user, pass, "")
	}
	maxOpen := cfg.MaxOpen
	if maxOpen <= 0 {
		maxOpen = DefaultMaxOpen
	}
	d, err := neo4j.NewDriverWithContext(uri, auth, func(c *neo4jconfig.Config) {
		c.MaxConnectionPoolSize = maxOpen
		c.MaxTransactionRetryTime = 0
		c.ConnectionAcquisitionTimeout = 30 * time.Second
	})
	if err != nil {
		return nil, fmt.Errorf("neo4j: %w", err)
	}
	cfg.Options = map[string]any{"database": db}
	return NewWithDriver(Wrap(d), cfg)
}

// NewWithDriver returns an Executor on d, which it then owns. Of
// cfg.Options only "database" is read.
func NewWithDriver(d Driver, cfg engine.Config) (*Executor, error) {
	e := &Executor{driver: d, timeout: cfg.Timeout, maxRows: cfg.MaxRows}
	e.database, _ = cfg.Options["database"].(string)
	if e.timeout <= 0 {
		e.timeout = DefaultTimeout
	}
	if e.maxRows < 0 {
		return nil, fmt.Errorf("neo4j: max_rows must not be negative, got %d", e.maxRows)
	}
	return e, nil
}

// Close closes the driver.
func (e *Executor) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return e.driver.Close(ctx)
}

var errEmpty = &engine.Error{Class: item.ClassSyntax, Msg: "empty query: no Cypher statement"}

// records is what one read transaction returns.
type records struct {
	keys      []string
	rows      [][]any
	truncated bool
	notes     []neo4j.Notification
}

// read runs text in a read transaction with timeout and returns at most
// maxRows records (all when maxRows is 0), and the summary's notifications
// when consume is set.
func (e *Executor) read(ctx context.Context, db, text string, timeout time.Duration, maxRows int, consume bool) (*records, error) {
	if db == "" {
		db = e.database
	}
	qctx, cancel := context.WithTimeout(ctx, timeout+grace)
	defer cancel()
	s := e.driver.NewSession(qctx, neo4j.SessionConfig{AccessMode: neo4j.AccessModeRead, DatabaseName: db})
	defer s.Close(context.WithoutCancel(ctx))
	out, err := s.ExecuteRead(qctx, func(tx Tx) (any, error) {
		res, err := tx.Run(qctx, text, nil)
		if err != nil {
			return nil, err
		}
		keys, err := res.Keys()
		if err != nil {
			return nil, err
		}
		r := &records{keys: keys, rows: [][]any{}}
		var rec *neo4j.Record
		for res.NextRecord(qctx, &rec) {
			if maxRows > 0 && len(r.rows) == maxRows {
				r.truncated = true
				break
			}
			r.rows = append(r.rows, rec.Values)
		}
		if err := res.Err(); err != nil {
			return nil, err
		}
		if consume {
			sum, err := res.Consume(qctx)
			if err != nil {
				return nil, err
			}
			if sum != nil {
				r.notes = sum.Notifications()
			}
		}
		return r, nil
	}, neo4j.WithTxTimeout(timeout))
	if err != nil {
		return nil, classify(ctx, qctx, timeout, err)
	}
	return out.(*records), nil
}

// Execute runs q.Text in a read transaction on database q.DB.
func (e *Executor) Execute(ctx context.Context, q engine.Query) (*table.Table, error) {
	if cypher.Empty(q.Text) {
		return nil, errEmpty
	}
	timeout, maxRows := q.Limits(e.timeout, e.maxRows)
	r, err := e.read(ctx, q.DB, q.Text, timeout, maxRows, false)
	if err != nil {
		return nil, err
	}
	rows := make([][]table.Value, len(r.rows))
	for i, vals := range r.rows {
		row := make([]table.Value, len(vals))
		for j, v := range vals {
			row[j] = cypher.Cell(toCypher(v))
		}
		rows[i] = row
	}
	return cypher.NewTable(r.keys, rows, r.truncated), nil
}

// Prepare runs EXPLAIN q.Text in a read transaction: syntax and semantic
// errors are classified as Execute classifies them, and the planner's
// warnings about unknown labels, relationship types and property keys
// (Neo.ClientNotification.Statement.Unknown...Warning) make an
// item.ClassSchema error naming them.
func (e *Executor) Prepare(ctx context.Context, q engine.Query) error {
	if cypher.Empty(q.Text) {
		return errEmpty
	}
	timeout, _ := q.Limits(e.timeout, e.maxRows)
	r, err := e.read(ctx, q.DB, "EXPLAIN "+q.Text, timeout, 0, true)
	if err != nil {
		return err
	}
	var unknown []string
	for _, n := range r.notes {
		if strings.HasPrefix(n.Code(), "Neo.ClientNotification.Statement.Unknown") {
			unknown = append(unknown, n.Description())
		}
	}
	if len(unknown) > 0 {
		return &engine.Error{Class: item.ClassSchema, Msg: strings.Join(unknown, "; ")}
	}
	return nil
}

// classify turns a driver error into an *engine.Error.
func classify(parent, qctx context.Context, timeout time.Duration, err error) error {
	var ee *engine.Error
	if errors.As(err, &ee) {
		return err
	}
	var ne *neo4j.Neo4jError
	if errors.As(err, &ne) {
		return &engine.Error{Class: ClassifyCode(ne.Code, ne.Msg), Msg: ne.Msg, Err: err}
	}
	switch {
	case parent.Err() != nil && errors.Is(parent.Err(), context.Canceled):
		return &engine.Error{Class: item.ClassCancelled, Msg: "query cancelled", Err: parent.Err()}
	case qctx.Err() != nil:
		return &engine.Error{Class: item.ClassTimeout, Msg: fmt.Sprintf("query abandoned after timeout of %s", timeout), Err: err}
	}
	return &engine.Error{Class: item.ClassExecution, Msg: err.Error(), Err: err}
}

// ClassifyCode classifies a Neo4j error by its status code and message:
//
//	Neo.ClientError.Transaction.TransactionTimedOut*,
//	  Neo.TransientError.Transaction.Terminated with "timed out"  item.ClassTimeout
//	Neo.ClientError.Security.Forbidden, ...Statement.AccessMode,
//	  "read access mode"                                          item.ClassSafety
//	Neo.ClientError.Procedure.ProcedureNotFound and "Unknown
//	  function" naming an APOC/GDS (plugin) name                  item.ClassUnsupported
//	Neo.ClientError.Statement.SyntaxError, ...SemanticError       item.ClassSyntax
//	Neo.ClientError.Statement.UnsupportedOperationError           item.ClassUnsupported
//	anything else (TypeError, ArithmeticError, ParameterMissing,
//	  DatabaseNotFound, ProcedureNotFound of other names)         item.ClassExecution
//
// Neo4j reports unknown labels, types and properties as warnings, not
// errors; Prepare turns those into item.ClassSchema.
func ClassifyCode(code, msg string) string {
	switch {
	case strings.HasPrefix(code, "Neo.ClientError.Transaction.TransactionTimedOut"),
		strings.Contains(code, "Terminated") && strings.Contains(msg, "timed out"):
		return item.ClassTimeout
	case code == "Neo.ClientError.Security.Forbidden", code == "Neo.ClientError.Statement.AccessMode",
		strings.Contains(msg, "read access mode"):
		return item.ClassSafety
	case code == "Neo.ClientError.Procedure.ProcedureNotFound":
		if name := between(msg, "`", "`"); cypher.PluginName(name) {
			return item.ClassUnsupported
		}
		return item.ClassExecution
	case code == "Neo.ClientError.Statement.UnsupportedOperationError":
		return item.ClassUnsupported
	case code == "Neo.ClientError.Statement.SyntaxError", code == "Neo.ClientError.Statement.SemanticError":
		if name := between(msg, "Unknown function '", "'"); name != "" && cypher.PluginName(name) {
			return item.ClassUnsupported
		}
		return item.ClassSyntax
	}
	return item.ClassExecution
}

// between returns the text between the first open and the next close in s.
func between(s, open, close string) string {
	_, rest, ok := strings.Cut(s, open)
	if !ok {
		return ""
	}
	name, _, ok := strings.Cut(rest, close)
	if !ok {
		return ""
	}
	return name
}

var _ engine.Languager = (*Executor)(nil)
var _ engine.NameLocator = (*Executor)(nil)

// Language reports the query language this engine runs (engine.Languager).
func (e *Executor) Language() string { return "cypher" }

// LocatesByName reports that Query.DB names a database or graph on the
// server, not a file (engine.NameLocator).
func (e *Executor) LocatesByName() bool { return true }

package nodes

import (
	"context"
	"errors"
	"fmt"
	"net"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"

	"github.com/evalflow/evalflow/dsl"
	"github.com/evalflow/evalflow/engine"
	"github.com/evalflow/evalflow/item"
	"github.com/evalflow/evalflow/store"
	"github.com/evalflow/evalflow/table"
)

// Engine is an engine block bound to its executor. It is shared by every
// stage that names it and safe for concurrent use; the planner owns it and
// closes it after the run.
type Engine struct {
	Block *dsl.Engine
	Exec  engine.Executor
	ctx   *hcl.EvalContext
	dir   string

	root     string // resolved containment root (contain.go)
	declared bool   // root came from the block's root attribute
	bound    bool   // built by NewEngine: containment applies
	// RootDiags explain why a file engine has no root; the planner
	// reports them.
	RootDiags hcl.Diagnostics
	// Results, when set, is the stage cache that answers queries run
	// before on the same data (results.go).
	Results *Results

	// contained memoizes containment successes for the engine's life (one
	// run); see containOnce. A pointer, set by NewEngine, so that a copy of
	// the Engine (score's per-item copy without the stage cache) shares it
	// and copying stays legal; nil (an Engine built by hand) memoizes
	// nothing.
	contained *containMemo
}

// containMemo is the set of located paths found inside the root.
type containMemo struct {
	paths sync.Map // path → struct{}
	n     atomic.Int64
}

// maxContained bounds the memo of contained paths; past it a new path is
// checked every time (correct, only slower).
const maxContained = 1 << 16

// containOnce is contain, memoized per path string for the engine's life
// (one run): resolving a path (filepath.Abs, an lstat per component for
// EvalSymlinks) and the root check run once per distinct database path,
// not once per query. Only a success is remembered: a refused or missing
// path is checked again the next time (so a database file created during
// the run is found, and an error still names its item). The check is
// against the paths' state the first time they are seen: the data tree
// (and the working directory) must not change during a run — a symlink
// replaced mid-run to point outside the root is not seen again. (The
// check and the open were never atomic, so this widens a window that
// already existed; it does not open a new one: containment refuses paths
// that data names, it is not a guard against a concurrent writer of the
// tree.)
func (e *Engine) containOnce(it, p string) error {
	m := e.contained
	if m == nil {
		return e.contain(it, p)
	}
	if _, ok := m.paths.Load(p); ok {
		return nil
	}
	if err := e.contain(it, p); err != nil {
		return err
	}
	if m.n.Load() < maxContained {
		if _, loaded := m.paths.LoadOrStore(p, struct{}{}); !loaded {
			m.n.Add(1)
		}
	}
	return nil
}

// NewEngine binds an engine block to an executor.
func NewEngine(b *dsl.Engine, ex engine.Executor, p *dsl.Pipeline) *Engine {
	e := &Engine{Block: b, Exec: ex, ctx: p.EvalContext(), dir: p.Dir, bound: true, contained: &containMemo{}}
	e.RootDiags = e.rootOf()
	return e
}

// ItemValue is the cty object an item exposes to per-item expressions as
// `item`: id, question, gold, db and every pass-through field.
func ItemValue(it *item.Item) cty.Value {
	m := map[string]cty.Value{
		"id":       cty.StringVal(it.ID),
		"question": cty.StringVal(it.Question),
		"gold":     cty.StringVal(it.Gold),
		"db":       cty.StringVal(it.DB),
	}
	for _, f := range it.Fields {
		if _, taken := m[f.Name]; taken {
			continue
		}
		switch v := f.Value.(type) {
		case nil:
			m[f.Name] = cty.NullVal(cty.String)
		case string:
			m[f.Name] = cty.StringVal(v)
		case int64:
			m[f.Name] = cty.NumberIntVal(v)
		case float64:
			m[f.Name] = cty.NumberFloatVal(v)
		case bool:
			m[f.Name] = cty.BoolVal(v)
		default:
			m[f.Name] = cty.StringVal(table.Format(v))
		}
	}
	return cty.ObjectVal(m)
}

// Locate evaluates the engine's path for an item; for file-based engines a
// relative path resolves against the pipeline directory (engines whose
// location is a name on a server implement engine.NameLocator). With no path the
// item's db is used as is.
//
// Every path is checked against the engine's root (contain.go): one that
// resolves outside it, symlinks followed, is a harness error and nothing is
// opened. The path expression is evaluated for every item; the
// resolution and root check are done once per distinct path for the run
// (containOnce).
func (e *Engine) Locate(it *item.Item) (string, error) {
	p, err := e.locate(it)
	if err != nil {
		return "", err
	}
	if err := e.containOnce(it.ID, p); err != nil {
		return "", HarnessError(err)
	}
	return p, nil
}

func (e *Engine) locate(it *item.Item) (string, error) {
	if e.Block.Path == nil {
		return it.DB, nil
	}
	c := e.ctx.NewChild()
	c.Variables = map[string]cty.Value{"item": ItemValue(it)}
	v, diags := e.Block.Path.Value(c)
	if diags.HasErrors() {
		return "", fmt.Errorf("engine.%s path: %s", e.Block.Name, diags.Error())
	}
	if v.IsNull() || v.Type() != cty.String {
		return "", fmt.Errorf("engine.%s path must be a string", e.Block.Name)
	}
	p := v.AsString()
	_, byName := e.Exec.(engine.NameLocator)
	if p != "" && !filepath.IsAbs(p) && !byName {
		p = filepath.Join(e.dir, p)
	}
	return p, nil
}

// Query builds an engine query for an item with the block's limits.
func (e *Engine) Query(it *item.Item, text string) (engine.Query, error) {
	db, err := e.Locate(it)
	if err != nil {
		return engine.Query{}, err
	}
	return engine.Query{Text: text, DB: db, MaxRows: e.Block.MaxRows, Timeout: e.Block.Timeout, Root: e.root}, nil
}

// ErrHarness marks an error of the harness, not of the query: the
// database or graph is missing or outside its root, the engine cannot be
// reached. Stages return it from Process so the item is an `error` (not
// scored) rather than a failed prediction.
var ErrHarness = errors.New("the harness could not evaluate this item")

// HarnessError wraps err as a harness error (errors.Is(err, ErrHarness)).
func HarnessError(err error) error { return &harnessError{err} }

type harnessError struct{ err error }

func (h *harnessError) Error() string        { return h.err.Error() }
func (h *harnessError) Unwrap() []error      { return []error{h.err, ErrHarness} }
func (h *harnessError) Is(target error) bool { return target == ErrHarness }

// Outcome is what running one query gave: its result or error (with the
// error class), the time it took and whether the stage cache answered it
// (then Took is the lookup's time, not the query's).
type Outcome struct {
	Result *table.Table
	Class  string
	Err    error
	Took   time.Duration
	Cached bool
}

// Run executes text for it. A missing database file or an engine that
// cannot be reached comes back as a HarnessError (class execution). With a
// stage cache, a query run before on the same data is answered from it.
func (e *Engine) Run(ctx context.Context, it *item.Item, text string) Outcome {
	q, err := e.Query(it, text)
	if err != nil {
		return Outcome{Class: item.ClassExecution, Err: HarnessError(err)}
	}
	return e.run(ctx, it, q)
}

// TestDBs lists the other test databases of it's database, by
// test-suite's rule (exec_eval.py): every file in the directory of the
// located database whose base name contains the kind's marker
// (engine.SuiteMarker: ".sqlite", ".duckdb"), the database itself left
// out, sorted by name (engine.SuiteFiles). ok is false for engines without
// the folder notion (server engines, directory and graph engines): they
// have one database per item. Every listed path is checked against the
// engine's root like the item's own (a symlink escaping it is a
// HarnessError); a listing that fails is a HarnessError too.
func (e *Engine) TestDBs(it *item.Item) (dbs []string, ok bool, err error) {
	if !e.Suites() {
		return nil, false, nil
	}
	marker, _ := engine.SuiteMarker(e.Block.Kind)
	db, err := e.Locate(it)
	if err != nil {
		return nil, true, err
	}
	if db == "" {
		return nil, true, nil
	}
	dbs, err = engine.SuiteFiles(db, marker)
	if err != nil {
		return nil, true, HarnessError(fmt.Errorf("engine.%s, item %q: %w", e.Block.Name, it.ID, err))
	}
	for _, p := range dbs {
		if err := e.containOnce(it.ID, p); err != nil {
			return nil, true, HarnessError(err)
		}
	}
	return dbs, true, nil
}

// Suites reports whether the engine has the folder notion TestDBs reads:
// a file engine of a kind with a suite marker (SQLite, DuckDB).
func (e *Engine) Suites() bool {
	_, byName := e.Exec.(engine.NameLocator)
	_, ok := engine.SuiteMarker(e.Block.Kind)
	return ok && !byName
}

// RunAt executes text for it on the database file db in place of the
// item's own (a test database from TestDBs), with the engine's kind,
// options, read-only connection, timeout and row cap, through the stage
// cache (keyed by db's content hash). db is checked against the engine's
// root first; outside it nothing runs and the outcome is a HarnessError.
func (e *Engine) RunAt(ctx context.Context, it *item.Item, db, text string) Outcome {
	if err := e.containOnce(it.ID, db); err != nil {
		return Outcome{Class: item.ClassExecution, Err: HarnessError(err)}
	}
	q := engine.Query{Text: text, DB: db, MaxRows: e.Block.MaxRows, Timeout: e.Block.Timeout, Root: e.root}
	return e.run(ctx, it, q)
}

// run executes q, located and contained, for it.
func (e *Engine) run(ctx context.Context, it *item.Item, q engine.Query) Outcome {
	var err error
	start := time.Now()
	var res *table.Table
	cached := false
	if e.Results == nil && store.Probing(ctx) {
		// evalflow plan's dry run without a stage cache: nothing to answer.
		store.Call(ctx, store.KindEngine, false)
		return Outcome{Class: item.ClassExecution, Err: HarnessError(errors.New("not in the stage cache (evalflow plan runs no query)"))}
	}
	if e.Results != nil {
		res, err, cached = e.Results.cached(ctx, e, "execute", q, func() (*table.Table, error) { return e.Exec.Execute(ctx, q) })
	} else {
		store.Call(ctx, store.KindEngine, false) // -no-cache: counted as computed
		res, err = e.Exec.Execute(ctx, q)
	}
	d := time.Since(start)
	if err != nil {
		class := engine.ClassOf(err)
		if ctx.Err() != nil {
			class = item.ClassCancelled
		}
		var netErr *net.OpError
		switch {
		case class == item.ClassCancelled:
		case engine.Unavailable(err):
			err = HarnessError(fmt.Errorf("engine.%s, item %q: %w", e.Block.Name, it.ID, err))
		case errors.As(err, &netErr):
			err = HarnessError(fmt.Errorf("engine.%s cannot be reached: %w", e.Block.Name, err))
		}
		return Outcome{Class: class, Err: err, Took: d, Cached: cached}
	}
	return Outcome{Result: res, Class: item.ClassNone, Took: d, Cached: cached}
}

// Prepare checks q's syntax on the engine (engine.Preparer), through the
// stage cache when there is one. ok is false when the engine cannot
// prepare.
func (e *Engine) Prepare(ctx context.Context, q engine.Query) (err error, ok bool, cached bool) {
	p, ok := e.Exec.(engine.Preparer)
	if !ok {
		return nil, false, false
	}
	if e.Results == nil && store.Probing(ctx) {
		store.Call(ctx, store.KindEngine, false)
		return &engine.Error{Class: item.ClassExecution, Msg: "not in the stage cache (evalflow plan runs no query)", Unavailable: true}, true, false
	}
	if e.Results != nil {
		_, err, cached = e.Results.cached(ctx, e, "prepare", q, func() (*table.Table, error) {
			return &table.Table{}, p.Prepare(ctx, q)
		})
		return err, true, cached
	}
	store.Call(ctx, store.KindEngine, false)
	return p.Prepare(ctx, q), true, false
}

package nodes

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
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
	// located memoizes Locate per tuple of the item fields the path
	// expression reads (pathMemo); nil when the expression may not be
	// memoized or the Engine was built by hand. Shared by copies, as
	// contained.
	located *pathMemo
	// deferred holds the syntax checks the validate stage left to the
	// execute stage (DeferCheck); set by NewEngine, shared by copies.
	deferred *deferredChecks
}

// deferredChecks are the syntax checks waiting for the execute stage, by
// attempt (at most maxDeferred at a time), and the database files known to
// exist (so that a check left to execute cannot fail for want of its
// database: that would be validate's harness error, not execute's).
type deferredChecks struct {
	m      sync.Map // *item.Attempt → *deferredCheck
	n      atomic.Int64
	exists sync.Map // path → struct{}
}

// deferredCheck is one attempt's syntax check: its query, what the
// validate stage makes of the check's error (verdict sets the attempt's
// validate fields and returns a harness error), and whether the validate
// stage may store the verdict in the stage cache.
type deferredCheck struct {
	q       engine.Query
	verdict func(ctx context.Context, err error) error
	writes  bool
	key     string // the check's stage cache key and material, when writes
	mat     []byte
}

// maxDeferred bounds the checks waiting for the execute stage (those of
// items cancelled between the stages are never taken); past it the
// validate stage checks at once.
const maxDeferred = 4096

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
	e := &Engine{Block: b, Exec: ex, ctx: p.EvalContext(), dir: p.Dir, bound: true, contained: &containMemo{}, deferred: &deferredChecks{}}
	e.located = newPathMemo(b.Path)
	e.RootDiags = e.rootOf()
	return e
}

// pathMemo remembers the located path of each distinct tuple of the item
// fields (fields, sorted) the engine's path expression reads, for the
// engine's life (one run). Only a path that was contained and exists
// (or names a database on a server) is remembered, so an item whose
// database is missing or refused is evaluated and checked every time.
type pathMemo struct {
	fields []string
	paths  sync.Map // key (pathMemo.key) → string
	n      atomic.Int64
}

// maxLocated bounds a pathMemo; past it new tuples are evaluated every
// time (correct, only slower).
const maxLocated = 1 << 16

// newPathMemo returns the memo for a path expression, or nil when its
// value may differ between two items with the same fields: it reads item
// other than as item.NAME or item["NAME"] (the whole object, a computed
// key), or calls a function whose result may change during a run
// (dsl.StableFunction: file, templatefile, one evalflow does not know).
// Everything else an expression can read — var, local, path, the
// functions' view of the files, the working directory and the
// environment — is fixed for a run: so fileexists's verdict on a tuple is
// taken once per run (the data tree must not change during a run, as
// containment already requires), and the expression is evaluated once per
// distinct tuple (per database, for the curated pipelines' item.db).
func newPathMemo(expr hcl.Expression) *pathMemo {
	node, ok := expr.(hclsyntax.Node)
	if expr == nil || !ok {
		return nil
	}
	stable := true
	hclsyntax.VisitAll(node, func(n hclsyntax.Node) hcl.Diagnostics {
		if fc, ok := n.(*hclsyntax.FunctionCallExpr); ok && !dsl.StableFunction(fc.Name) {
			stable = false
		}
		return nil
	})
	if !stable {
		return nil
	}
	seen := map[string]bool{}
	m := &pathMemo{}
	for _, tr := range expr.Variables() {
		if tr.RootName() != "item" {
			continue
		}
		if len(tr) < 2 {
			return nil
		}
		var name string
		switch st := tr[1].(type) {
		case hcl.TraverseAttr:
			name = st.Name
		case hcl.TraverseIndex:
			if !st.Key.IsKnown() || st.Key.IsNull() || !st.Key.Type().Equals(cty.String) {
				return nil
			}
			name = st.Key.AsString()
		default:
			return nil
		}
		if !seen[name] {
			seen[name] = true
			m.fields = append(m.fields, name)
		}
	}
	sort.Strings(m.fields)
	return m
}

// key returns the memo key of it: its values of m.fields, each as
// ItemValue exposes it. ok is false when it lacks one of them (the
// expression then fails, and failures are not remembered).
func (m *pathMemo) key(it *item.Item) (string, bool) {
	if len(m.fields) == 1 {
		return fieldKey(it, m.fields[0])
	}
	var b strings.Builder
	for _, f := range m.fields {
		v, ok := fieldKey(it, f)
		if !ok {
			return "", false
		}
		b.WriteString(strconv.Itoa(len(v)))
		b.WriteByte(':')
		b.WriteString(v)
	}
	return b.String(), true
}

// fieldKey encodes the value ItemValue gives field name of it so that two
// encodings are equal only when the values are. The four fixed fields
// are strings and come as they are; a pass-through field is tagged with
// its type (the first field of a name is the one ItemValue exposes).
func fieldKey(it *item.Item, name string) (string, bool) {
	switch name {
	case "id":
		return it.ID, true
	case "question":
		return it.Question, true
	case "gold":
		return it.Gold, true
	case "db":
		return it.DB, true
	}
	for _, f := range it.Fields {
		if f.Name != name {
			continue
		}
		switch v := f.Value.(type) {
		case nil:
			return "n", true
		case string:
			return "s" + v, true
		case int64:
			return "i" + strconv.FormatInt(v, 10), true
		case float64:
			return "f" + strconv.FormatFloat(v, 'g', -1, 64), true
		case bool:
			return "b" + strconv.FormatBool(v), true
		default:
			return "o" + table.Format(v), true
		}
	}
	return "", false
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
// opened. The path expression is evaluated once per distinct tuple of the
// item fields it reads (pathMemo: for text2sql-replay.hcl once per
// database, fileexists included) and the resolution and root check are
// done once per distinct path for the run (containOnce); a path that was
// refused, does not exist or could not be evaluated is evaluated and
// checked again for every item, so its error names that item.
func (e *Engine) Locate(it *item.Item) (string, error) {
	m := e.located
	var key string
	memo := false
	if m != nil {
		if key, memo = m.key(it); memo {
			if p, ok := m.paths.Load(key); ok {
				return p.(string), nil
			}
		}
	}
	p, err := e.locate(it)
	if err != nil {
		return "", err
	}
	if err := e.containOnce(it.ID, p); err != nil {
		return "", HarnessError(err)
	}
	if memo && m.n.Load() < maxLocated && e.settled(p) {
		if _, loaded := m.paths.LoadOrStore(key, p); !loaded {
			m.n.Add(1)
		}
	}
	return p, nil
}

// settled reports whether a located path may be remembered: a database on
// a server, or a file or directory that exists (a missing one is looked
// for again, as fileexists would).
func (e *Engine) settled(p string) bool {
	if _, byName := e.Exec.(engine.NameLocator); byName {
		return p != ""
	}
	if p == "" {
		return false
	}
	_, err := os.Stat(p)
	return err == nil
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
	return e.runWith(ctx, it, q, func() (*table.Table, error) { return e.Exec.Execute(ctx, q) }, 0)
}

// runWith is run with execute in place of the executor's Execute; ran is
// time spent before the call on the execution (added to Took).
func (e *Engine) runWith(ctx context.Context, it *item.Item, q engine.Query, execute func() (*table.Table, error), ran time.Duration) Outcome {
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
		res, err, cached = e.Results.cached(ctx, e, "execute", q, execute)
	} else {
		store.Call(ctx, store.KindEngine, false) // -no-cache: counted as computed
		res, err = execute()
	}
	d := time.Since(start)
	if !cached {
		d += ran
	}
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

// DeferCheck is Prepare for the syntax check of attempt at, whose query q
// the execute stage runs next on this engine (the validate stage calls it
// when such a stage follows it: validate.Validate.ExecutedNext). When the
// stage cache holds the check's verdict, or the engine cannot check and
// run from one parse (engine.PrepareExecuter), or q's database is not
// known to exist, it is Prepare and deferred is false. Otherwise the
// check is counted as computed for the caller's stage, as Prepare counts
// it, and left to the execute stage: RunChecked checks and runs q from one
// parse, calls verdict with the check's error (what Prepare would have
// returned) before anything else, stores that verdict in the stage cache
// as Prepare would have (when the caller's stage may write it), and runs q
// only if the attempt has not failed. So each query is parsed once; the
// attempt's fields, the stage counts and the cache entries are what
// checking here would have given — except that a query whose check
// another item left to the execute stage, not yet run, is not found in the
// cache: it is checked again (the same verdict), and counted as computed.
func (e *Engine) DeferCheck(ctx context.Context, at *item.Attempt, q engine.Query, verdict func(ctx context.Context, err error) error) (err error, ok, cached, deferred bool) {
	_, can := e.Exec.(engine.PrepareExecuter)
	d := e.deferred
	if !can || d == nil || store.Probing(ctx) || d.n.Load() >= maxDeferred || !e.exists(q.DB) {
		err, ok, cached = e.Prepare(ctx, q)
		return err, ok, cached, false
	}
	dc := &deferredCheck{q: q, verdict: verdict}
	if e.Results != nil {
		dc.key, dc.mat = e.Results.key(e, "prepare", q)
		if store.Reads(ctx) {
			if _, err, hit := e.Results.get(dc.key); hit {
				store.Call(ctx, store.KindEngine, true)
				return err, true, true, false
			}
		}
		dc.writes = store.Writes(ctx)
	}
	store.Call(ctx, store.KindEngine, false)
	if _, loaded := d.m.Swap(at, dc); !loaded {
		d.n.Add(1)
	}
	return nil, true, false, true
}

// exists reports whether the database file p exists, remembering the
// files that do for the engine's life.
func (e *Engine) exists(p string) bool {
	d := e.deferred
	if _, ok := d.exists.Load(p); ok {
		return true
	}
	if st, err := os.Stat(p); err != nil || !st.Mode().IsRegular() {
		return false
	}
	d.exists.Store(p, struct{}{})
	return true
}

// RunChecked runs the syntax check DeferCheck left for attempt at of it
// and, when the attempt passes it, its query (see DeferCheck); ran is
// false when the attempt failed the check (nothing ran), harness the
// validate stage's harness error for it. With no deferred check it is Run
// of at's query.
func (e *Engine) RunChecked(ctx context.Context, it *item.Item, at *item.Attempt) (o Outcome, ran bool, harness error) {
	var dc *deferredCheck
	if e.deferred != nil {
		if v, ok := e.deferred.m.LoadAndDelete(at); ok {
			e.deferred.n.Add(-1)
			dc = v.(*deferredCheck)
		}
	}
	if dc == nil {
		return e.Run(ctx, it, at.Query), true, nil
	}
	q := dc.q
	start := time.Now()
	perr, res, xerr, took := e.Exec.(engine.PrepareExecuter).PrepareExecute(ctx, q)
	at.Time("validate", time.Since(start)-took) // the check's share
	if e.Results != nil && dc.writes && ctx.Err() == nil {
		class := item.ClassNone
		if perr != nil {
			class = engine.ClassOf(perr)
		}
		e.Results.put(dc.key, dc.mat, &table.Table{}, class, perr)
	}
	if harness = dc.verdict(ctx, perr); harness != nil || at.Failed() {
		return Outcome{}, false, harness
	}
	return e.runWith(ctx, it, q, func() (*table.Table, error) { return res, xerr }, took), true, nil
}

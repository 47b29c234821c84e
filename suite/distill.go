package suite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/pingcap/tidb/pkg/parser/ast"
	driver "github.com/pingcap/tidb/pkg/parser/test_driver"
	"github.com/sourcegraph/conc/pool"

	"github.com/evalflow/evalflow/engine"
	"github.com/evalflow/evalflow/engine/duckdb"
	"github.com/evalflow/evalflow/engine/sqlite"
	"github.com/evalflow/evalflow/item"
	"github.com/evalflow/evalflow/metrics"
	"github.com/evalflow/evalflow/table"
)

// Engine names the file format of the databases: "sqlite" or "duckdb".
type Engine string

// Engines the builder reads and writes.
const (
	SQLite Engine = "sqlite"
	DuckDB Engine = "duckdb"
)

// Ext returns the file extension of the engine's databases, with its dot.
func (e Engine) Ext() string {
	if e == DuckDB {
		return ".duckdb"
	}
	return ".sqlite"
}

func (e Engine) open(path string, write, enforceFKs bool) (*sql.DB, error) {
	if e == DuckDB {
		if write {
			return sql.Open("duckdb", path)
		}
		return sql.Open("duckdb", path+"?access_mode=READ_ONLY")
	}
	// A generated file is written once, then only read: no fsync, and the
	// rollback journal in memory (the file's bytes do not depend on either).
	const fast = "_pragma=synchronous(OFF)&_pragma=journal_mode(MEMORY)"
	if write && enforceFKs {
		return sql.Open("sqlite", "file:"+path+"?_pragma=foreign_keys(1)&"+fast)
	}
	if write {
		return sql.Open("sqlite", "file:"+path+"?"+fast)
	}
	return sql.Open("sqlite", "file:"+path+"?mode=ro")
}

func (e Engine) readSchema(ctx context.Context, db *sql.DB) (*Schema, error) {
	if e == DuckDB {
		return ReadDuckDB(ctx, db)
	}
	return ReadSQLite(ctx, db)
}

func (e Engine) executor(timeout time.Duration) (interface {
	engine.Executor
	io.Closer
}, error) {
	return e.executorN(timeout, 1)
}

// screenWorkers is the number of neighbours run on the original at once.
const screenWorkers = 2

func (e Engine) executorN(timeout time.Duration, n int) (interface {
	engine.Executor
	io.Closer
}, error) {
	cfg := engine.Config{Timeout: timeout, MaxOpen: n}
	if e == DuckDB {
		cfg.Options = map[string]any{"threads": 1}
		return duckdb.New(cfg)
	}
	return sqlite.New(cfg)
}

// Options configure Build. The zero value is not valid: use
// DefaultOptions and change what you need.
type Options struct {
	Engine Engine
	// Seed makes the build reproducible: the same inputs and seed give
	// byte-identical database files (SQLite) and suite reports.
	Seed uint64
	// MaxDBs bounds the databases kept beside the original.
	MaxDBs int
	// Samples bounds the random databases drawn for the suite.
	Samples int
	// Verify is the number of random databases drawn after distillation,
	// from a seed stream of their own, only to measure which neighbours
	// the suite leaves unseparated although some database separates them
	// (DBReport.Separable). They are never kept. 0 draws none.
	Verify int
	// Timeout bounds each query.
	Timeout time.Duration
	// ScreenTimeout bounds a neighbour's run on the original: the larger
	// of ScreenTimeout and twenty times its gold's time there, at most
	// Timeout. A neighbour that runs out of it (typically a cross product
	// left by a dropped join condition) is dropped as "timeout on the
	// original". 0 means Timeout.
	ScreenTimeout time.Duration
	// Profile is the comparison under which two results "differ".
	Profile metrics.Profile
	GenOptions
}

// Defaults of Options.
const (
	DefaultMaxDBs  = 40
	DefaultSamples = 400
	DefaultVerify  = 100
	// DefaultScreenTimeout is 0 (Timeout): a neighbour is dropped only when
	// it runs out of the query timeout, so builds are byte-identical in
	// practice; a short one is faster but depends on the machine's load.
	DefaultScreenTimeout = 0
)

// DefaultOptions are the command's defaults.
func DefaultOptions() Options {
	return Options{Engine: SQLite, Seed: 1, MaxDBs: DefaultMaxDBs, Samples: DefaultSamples, Verify: DefaultVerify,
		Timeout: 5 * time.Second, ScreenTimeout: DefaultScreenTimeout, Profile: metrics.ProfileTestSuiteKeepDistinct}
}

// Gold is one gold query of a database and the ids of the dataset items
// that use it.
type Gold struct {
	Text string
	IDs  []string
}

// neighbour is one candidate being distilled.
type neighbour struct {
	gold      int
	cand      Candidate
	exec      string
	separated bool
	// separable says why a neighbour the suite leaves unseparated is known
	// to be separable: "" (not known), or the reason listed in the report.
	separable string
}

// goldRun is a gold query prepared for execution.
type goldRun struct {
	exec, order string
	ordered     bool
	ties        []tieCheck // the order-fixedness checks, top level first
	result      *table.Table
	facts       *queryFacts // nil when the gold does not parse
	tables      []string    // the tables it reads
}

// Reasons a neighbour left unseparated is listed with.
const (
	reasonPool     = "separable (a sampled database not kept separates it)"
	reasonVerify   = "separable (a verification database separates it)"
	reasonNoneSeen = "no database drawn separates it"
)

// Reasons a drawn database is not kept.
const (
	rejectGoldFails   = "a gold fails"
	rejectTies        = "a gold's row order is not fixed (ties under ORDER BY)"
	rejectNestedTies  = "a gold's sub-query has ties at its LIMIT (ties under ORDER BY … LIMIT)"
	rejectNothingNew  = "separates no new neighbour"
	rejectOverMaxDBs  = "not kept: -max-dbs reached (it separates neighbours still unseparated)"
	dropTimeoutReason = "timeout on the original"
)

// candidate is a drawn database that passed the gold checks, waiting in
// the pool of the greedy distillation.
type candidate struct {
	sample int
	path   string
	sep    []int // indices of the neighbours it separates, among those open when it was drawn
}

// Build writes the suite of database db (the file at orig) into dir:
// dir/<db><ext> (a copy of the original) and dir/<db>_NNN<ext>, one per
// kept database, numbered from 001. It returns the database's report.
// Golds that do not parse are reported and get no neighbours; golds that
// fail on the original are reported and left out.
//
// Distillation is greedy over a pool: random databases are drawn in
// batches (Samples/MaxDBs each); each that passes the gold checks is
// run once on the neighbours not yet separated, and after each batch the
// pool's database that separates the most of those still open is kept.
// A pooled database's count stays exact as neighbours get separated, since
// the open set only shrinks. Then Verify more databases, drawn from their
// own seed stream, measure what the suite left separable.
func Build(ctx context.Context, db, orig, dir string, golds []Gold, o Options) (*DBReport, error) {
	start := time.Now()
	rep := &DBReport{DB: db, Engine: string(o.Engine), Golds: len(golds), Dropped: map[string]int{}, Rejected: map[string]int{}}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	copyPath := filepath.Join(dir, db+o.Engine.Ext())
	if err := copyFile(orig, copyPath); err != nil {
		return nil, err
	}
	odb, err := o.Engine.open(orig, false, false)
	if err != nil {
		return nil, err
	}
	defer odb.Close()
	schema, err := o.Engine.readSchema(ctx, odb)
	if err != nil {
		return nil, fmt.Errorf("%s: reading schema: %w", db, err)
	}
	rep.SchemaNotes = schema.Ignored
	ex, err := o.Engine.executor(o.Timeout)
	if err != nil {
		return nil, err
	}
	defer ex.Close()

	seed := hashSeed(db)
	rng := rand.New(rand.NewPCG(o.Seed, seed))
	var runs []*goldRun
	var nbs, all []*neighbour
	var timeouts []time.Duration
	var facts []*queryFacts
	for gi, g := range golds {
		gr := &goldRun{}
		gr.exec, gr.order = o.Profile.PrepareGold(g.Text)
		gr.ordered = o.Profile.Ordered(gr.order)
		t0 := time.Now()
		res, err := ex.Execute(ctx, engine.Query{Text: gr.exec, DB: copyPath})
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			rep.GoldIssues = append(rep.GoldIssues, GoldIssue{IDs: g.IDs, Gold: g.Text, Problem: "fails on the original: " + err.Error()})
			runs = append(runs, nil)
			continue
		}
		goldTime := time.Since(t0)
		gr.result = res
		gr.ties = tieChecks(gr.exec, gr.ordered)
		runs = append(runs, gr)
		f, err := factsOf(g.Text, schema)
		if err != nil {
			rep.GoldIssues = append(rep.GoldIssues, GoldIssue{IDs: g.IDs, Gold: g.Text, Problem: "does not parse: " + err.Error()})
			continue
		}
		facts = append(facts, f)
		gr.facts = f
		if stmt, err := Parse(g.Text); err == nil {
			for _, t := range newScope(stmt, schema).tables {
				gr.tables = append(gr.tables, t.Name)
			}
		}
		cands, err := Neighbours(g.Text, schema, rng)
		if err != nil {
			continue
		}
		screen := o.screenTimeout(goldTime)
		for _, c := range cands {
			all = append(all, &neighbour{gold: gi, cand: c, exec: o.Profile.PreparePred(c.Text)})
			timeouts = append(timeouts, screen)
		}
	}
	// Every neighbour runs once on the original, screenWorkers at a time;
	// the outcomes are read back in order, so the report does not depend
	// on the interleaving.
	rep.Neighbours = len(all)
	errs := make([]error, len(all))
	sexec, err := o.Engine.executorN(o.Timeout, screenWorkers)
	if err != nil {
		return nil, err
	}
	p := pool.New().WithMaxGoroutines(screenWorkers)
	for i, n := range all {
		if ctx.Err() != nil {
			break
		}
		p.Go(func() {
			gr := runs[n.gold]
			pr, err := sexec.Execute(ctx, engine.Query{Text: n.exec, DB: copyPath, Timeout: timeouts[i]})
			if err != nil {
				errs[i] = err
				return
			}
			n.separated = !metrics.CompareTables(gr.result, pr, o.Profile.CompareOptions(gr.order, metrics.Tolerance{})).Match
		})
	}
	p.Wait()
	sexec.Close()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	for i, n := range all {
		if errs[i] != nil {
			rep.Dropped[dropReason(errs[i])]++
			continue
		}
		if n.separated {
			rep.SeparatedByOriginal++
		}
		nbs = append(nbs, n)
	}
	pl, err := buildPools(ctx, odb, schema, facts)
	if err != nil {
		return nil, err
	}
	left := 0
	for _, n := range nbs {
		if !n.separated {
			left++
		}
	}
	gain := func(c *candidate) int {
		k := 0
		for _, i := range c.sep {
			if !nbs[i].separated {
				k++
			}
		}
		return k
	}
	var pool []*candidate
	defer func() {
		for _, c := range pool {
			os.Remove(c.path)
		}
	}()
	batch := 1
	if o.MaxDBs > 0 {
		batch = max(1, (o.Samples+o.MaxDBs-1)/o.MaxDBs)
	}
	sm := &sampler{o: o, schema: schema, pl: pl, dir: dir, runs: runs, nbs: nbs, focused: make([]int, len(runs))}
	draws := 0
	for left > 0 && len(rep.Kept) < o.MaxDBs {
		for i := 0; i < batch && draws < o.Samples; i++ {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			s := draws
			draws++
			rep.Sampled++
			srng := rand.New(rand.NewPCG(o.Seed^uint64(s+1)*0x9e3779b97f4a7c15, seed))
			tmp := filepath.Join(dir, fmt.Sprintf(".sample-%d%s", s, o.Engine.Ext()))
			sep, reason, err := sm.draw(ctx, srng, s%2 == 1, tmp, func(n *neighbour) bool { return !n.separated })
			if err == nil && reason == "" && len(sep) == 0 {
				reason = rejectNothingNew
			}
			if err != nil {
				os.Remove(tmp)
				return nil, err
			}
			if reason != "" {
				rep.Rejected[reason]++
				os.Remove(tmp)
				continue
			}
			pool = append(pool, &candidate{sample: s, path: tmp, sep: sep})
		}
		var best *candidate
		bestGain := 0
		kept := pool[:0]
		for _, c := range pool {
			k := gain(c)
			if k == 0 {
				rep.Rejected[rejectNothingNew]++
				os.Remove(c.path)
				continue
			}
			kept = append(kept, c)
			if k > bestGain {
				best, bestGain = c, k
			}
		}
		pool = kept
		if best == nil {
			if draws >= o.Samples {
				break
			}
			continue
		}
		name := fmt.Sprintf("%s_%03d%s", db, len(rep.Kept)+1, o.Engine.Ext())
		if err := os.Rename(best.path, filepath.Join(dir, name)); err != nil {
			return nil, err
		}
		for _, i := range best.sep {
			nbs[i].separated = true
		}
		left -= bestGain
		rep.Kept = append(rep.Kept, KeptDB{File: name, Sample: best.sample, Separated: bestGain})
		kept = pool[:0]
		for _, c := range pool {
			if c != best {
				kept = append(kept, c)
			}
		}
		pool = kept
	}
	// What the pool's databases not kept separate is separable too.
	for _, c := range pool {
		if gain(c) == 0 {
			rep.Rejected[rejectNothingNew]++
			continue
		}
		rep.Rejected[rejectOverMaxDBs]++
		for _, i := range c.sep {
			if !nbs[i].separated {
				nbs[i].separable = reasonPool
			}
		}
	}
	if err := verify(ctx, sm, seed, rep); err != nil {
		return nil, err
	}
	for _, n := range nbs {
		switch {
		case n.separated:
			rep.Separated++
			rep.Separable++
		case n.separable != "":
			rep.Separable++
			rep.Unseparated = append(rep.Unseparated, Unseparated{IDs: golds[n.gold].IDs, Gold: golds[n.gold].Text,
				Mutation: n.cand.Mutation, Neighbour: n.cand.Text, Reason: n.separable})
		default:
			rep.Unseparated = append(rep.Unseparated, Unseparated{IDs: golds[n.gold].IDs, Gold: golds[n.gold].Text,
				Mutation: n.cand.Mutation, Neighbour: n.cand.Text, Reason: reasonNoneSeen})
		}
	}
	rep.SeparationRate = rate(rep.Separated, rep.Separable)
	rep.Elapsed = time.Since(start).Round(time.Millisecond).String()
	return rep, nil
}

// screenTimeout is a neighbour's timeout on the original (Options.ScreenTimeout).
func (o Options) screenTimeout(gold time.Duration) time.Duration {
	if o.ScreenTimeout <= 0 {
		return o.Timeout
	}
	return min(max(o.ScreenTimeout, 20*gold), o.Timeout)
}

// rate is separated/separable, 1 when nothing is separable.
func rate(separated, separable int) float64 {
	if separable == 0 {
		return 1
	}
	return math.Round(float64(separated)/float64(separable)*1e4) / 1e4
}

// verify draws o.Verify databases from a seed stream of their own and
// marks the neighbours left unseparated that one of them separates. They
// are drawn as the suite's are (every other one aimed at golds with
// neighbours still open), and used only if they pass the gold checks a
// kept one must pass.
func verify(ctx context.Context, sm *sampler, seed uint64, rep *DBReport) error {
	o := sm.o
	rep.VerifyRejected = map[string]int{}
	isOpen := func(n *neighbour) bool { return !n.separated && n.separable == "" }
	open := func() bool {
		for _, n := range sm.nbs {
			if isOpen(n) {
				return true
			}
		}
		return false
	}
	for i := range sm.focused {
		sm.focused[i] = 0
	}
	for v := 0; v < o.Verify && open(); v++ {
		if err := ctx.Err(); err != nil {
			return err
		}
		rep.VerifySampled++
		vrng := rand.New(rand.NewPCG(o.Seed^uint64(v+1)*0xbf58476d1ce4e5b9, seed^0x5645524946590000))
		tmp := filepath.Join(sm.dir, fmt.Sprintf(".verify-%d%s", v, o.Engine.Ext()))
		sep, reason, err := sm.draw(ctx, vrng, v%2 == 1, tmp, isOpen)
		os.Remove(tmp)
		if err != nil {
			return err
		}
		if reason != "" {
			rep.VerifyRejected[reason]++
			continue
		}
		for _, i := range sep {
			sm.nbs[i].separable = reasonVerify
		}
	}
	return nil
}

// maxRepairs bounds the rows dropped from a drawn database to break the
// ties that leave a gold's row order open.
const maxRepairs = 6

// sampler draws and checks random databases for Build and verify.
type sampler struct {
	o       Options
	schema  *Schema
	pl      *pools
	dir     string
	runs    []*goldRun
	nbs     []*neighbour
	focused []int // per gold: the draws aimed at it so far
}

// draw generates one database from rng, writes it to tmp, checks the golds
// on it and returns the open neighbours it separates (see evalSample).
// A focused draw aims at one to maxFocus golds with open neighbours, those
// aimed at least so far (generate's focus). When a gold's order is left
// open by ties, up to maxRepairs rows of that gold's tables are dropped,
// one at a time, and the checks run again.
func (sm *sampler) draw(ctx context.Context, rng *rand.Rand, focused bool, tmp string, open func(*neighbour) bool) ([]int, string, error) {
	var focus map[colRef][]any
	if focused {
		focus = focusValues(sm.pl, sm.schema, sm.pickFocus(rng, open))
	}
	g := generate(sm.schema, sm.pl, sm.o.GenOptions, rng, focus)
	for attempt := 0; ; attempt++ {
		sep, reason, tieGold, err := evalSample(ctx, sm.o, sm.schema, g, tmp, sm.runs, sm.nbs, func(n *neighbour) bool { return !open(n) })
		if err != nil || tieGold < 0 || attempt == maxRepairs || !g.dropRow(sm.runs[tieGold].tables, rng) {
			return sep, reason, err
		}
	}
}

// maxFocus bounds the golds one focused draw aims at.
const maxFocus = 6

// pickFocus chooses one to maxFocus golds that have open neighbours, among
// those aimed at least often so far, and returns their facts.
func (sm *sampler) pickFocus(rng *rand.Rand, open func(*neighbour) bool) []*queryFacts {
	has := make([]bool, len(sm.runs))
	for _, n := range sm.nbs {
		if open(n) && sm.runs[n.gold] != nil && sm.runs[n.gold].facts != nil {
			has[n.gold] = true
		}
	}
	var out []*queryFacts
	for k := 1 + rng.IntN(maxFocus); k > 0; k-- {
		least := -1
		var cands []int
		for i, ok := range has {
			switch {
			case !ok:
			case least < 0 || sm.focused[i] < least:
				least, cands = sm.focused[i], []int{i}
			case sm.focused[i] == least:
				cands = append(cands, i)
			}
		}
		if len(cands) == 0 {
			break
		}
		i := cands[rng.IntN(len(cands))]
		sm.focused[i]++
		has[i] = false
		out = append(out, sm.runs[i].facts)
	}
	return out
}

// evalSample writes g to tmp, checks the golds on it (each runs, no row
// order left open by ties) and returns the indices of the neighbours,
// other than those skip selects, whose result differs from their gold's
// (or that fail: they would score 0); or the reason the database cannot
// be used and, for ties, the index of the gold that has them (else -1).
func evalSample(ctx context.Context, o Options, s *Schema, g *genDB, tmp string, runs []*goldRun, nbs []*neighbour, skip func(*neighbour) bool) ([]int, string, int, error) {
	os.Remove(tmp)
	w, err := o.Engine.open(tmp, true, len(s.Ignored) == 0)
	if err != nil {
		return nil, "", -1, err
	}
	_, err = g.write(ctx, w, s)
	if cerr := w.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, "", -1, err
	}
	ex, err := o.Engine.executor(o.Timeout)
	if err != nil {
		return nil, "", -1, err
	}
	defer ex.Close()
	results := make([]*table.Table, len(runs))
	for i, gr := range runs {
		if gr == nil {
			continue
		}
		res, err := ex.Execute(ctx, engine.Query{Text: gr.exec, DB: tmp})
		if err != nil {
			if ctx.Err() != nil {
				return nil, "", -1, ctx.Err()
			}
			return nil, rejectGoldFails, -1, nil
		}
		for _, tc := range gr.ties {
			kt, err := ex.Execute(ctx, engine.Query{Text: tc.text, DB: tmp})
			if err != nil {
				if ctx.Err() != nil {
					return nil, "", -1, ctx.Err()
				}
				continue // e.g. a correlated sub-query: it cannot run alone
			}
			n := tc.count
			if tc.top {
				n = len(res.Rows)
			}
			if !orderFixed(kt, tc.nkeys, tc.offset, n, tc.inside) {
				if tc.top {
					return nil, rejectTies, i, nil
				}
				return nil, rejectNestedTies, i, nil
			}
		}
		results[i] = res
	}
	var sep []int
	for i, n := range nbs {
		if skip(n) {
			continue
		}
		gr := runs[n.gold]
		pr, err := ex.Execute(ctx, engine.Query{Text: n.exec, DB: tmp})
		if err != nil && ctx.Err() != nil {
			return nil, "", -1, ctx.Err()
		}
		if err != nil || !metrics.CompareTables(results[n.gold], pr, o.Profile.CompareOptions(gr.order, metrics.Tolerance{})).Match {
			sep = append(sep, i)
		}
	}
	return sep, "", -1, nil
}

// tieCheck is a query that lists the rows of one SELECT of a gold that has
// ORDER BY, without its LIMIT, each followed by its sort keys, in the
// SELECT's order: rows offset … offset+count-1 are the SELECT's result.
type tieCheck struct {
	text          string
	nkeys         int
	offset, count int
	// top is the outermost SELECT: its row count is the gold's result's.
	top bool
	// inside: ties inside the result matter (the outermost SELECT of a gold
	// compared in order), not only those at the LIMIT boundary.
	inside bool
}

// tieChecks returns the checks of gold: the outermost SELECT when it has
// ORDER BY (and the comparison is ordered, or it has LIMIT), then every
// sub-query with ORDER BY and LIMIT (whose ties at the boundary decide
// which rows the sub-query gives). A sub-query that cannot run alone (a
// correlated one) is not checked.
func tieChecks(gold string, ordered bool) []tieCheck {
	stmt, err := Parse(gold)
	if err != nil {
		return nil
	}
	var out []tieCheck
	k := 0
	stmt.Accept(&walker{target: -1, enter: func(_ int, n ast.Node) {
		sel, ok := n.(*ast.SelectStmt)
		if !ok {
			return
		}
		top := n == stmt
		idx := k
		k++
		if sel.OrderBy == nil || (!top && sel.Limit == nil) || (top && !ordered && sel.Limit == nil) {
			return
		}
		if tc, ok := tieCheckOf(gold, idx); ok {
			tc.top, tc.inside = top, top && ordered
			out = append(out, tc)
		}
	}})
	return out
}

// tieCheckOf builds the check of the idx-th SELECT (in visit order) of a
// fresh parse of gold.
func tieCheckOf(gold string, idx int) (tieCheck, bool) {
	stmt, err := Parse(gold)
	if err != nil {
		return tieCheck{}, false
	}
	var sel *ast.SelectStmt
	k := 0
	stmt.Accept(&walker{target: -1, enter: func(_ int, n ast.Node) {
		if s, ok := n.(*ast.SelectStmt); ok {
			if k == idx {
				sel = s
			}
			k++
		}
	}})
	if sel == nil || sel.OrderBy == nil || sel.Fields == nil {
		return tieCheck{}, false
	}
	tc := tieCheck{count: -1}
	if sel.Limit != nil {
		var ok bool
		if tc.count, ok = intLiteral(sel.Limit.Count); !ok {
			return tieCheck{}, false
		}
		if sel.Limit.Offset != nil {
			if tc.offset, ok = intLiteral(sel.Limit.Offset); !ok {
				return tieCheck{}, false
			}
		}
	}
	fields := sel.Fields.Fields
	var keys []*ast.SelectField
	for _, it := range sel.OrderBy.Items {
		e := it.Expr
		if c, ok := e.(*ast.ColumnNameExpr); ok && c.Name.Table.O == "" {
			for _, f := range fields {
				if f.AsName.L != "" && f.AsName.L == c.Name.Name.L {
					e = f.Expr
				}
			}
		}
		if v, ok := e.(*driver.ValueExpr); ok && v.Kind() == driver.KindInt64 {
			p := int(v.GetInt64())
			if p < 1 || p > len(fields) || fields[p-1].Expr == nil {
				return tieCheck{}, false
			}
			e = fields[p-1].Expr
		}
		keys = append(keys, &ast.SelectField{Expr: e})
	}
	sel.Fields.Fields = append(append([]*ast.SelectField(nil), fields...), keys...)
	sel.Limit = nil
	sel.IsInBraces = false
	text, err := Print(sel)
	if err != nil {
		return tieCheck{}, false
	}
	tc.text, tc.nkeys = text, len(keys)
	return tc, true
}

func intLiteral(e ast.ExprNode) (int, bool) {
	v, ok := e.(*driver.ValueExpr)
	if !ok {
		return 0, false
	}
	switch v.Kind() {
	case driver.KindInt64:
		return int(v.GetInt64()), true
	case driver.KindUint64:
		return int(v.GetUint64()), true
	}
	return 0, false
}

// orderFixed reports whether the rows offset … offset+n-1 of kt (a
// tieCheck's result: the rows, then nkeys sort keys) are fixed by the
// ORDER BY: no row just outside the range ties with the row at its edge
// (equal keys, different rows: a tie at the LIMIT boundary or at the
// OFFSET) and, when inside, no two neighbouring rows of the range tie.
// n < 0 means every row from offset on.
func orderFixed(kt *table.Table, nkeys, offset, n int, inside bool) bool {
	rows := kt.Rows
	nf := len(kt.Columns) - nkeys
	if nf < 0 {
		return true
	}
	eq := func(a, b []table.Value) bool {
		for i := range a {
			if !metrics.ValuesEqual(a[i], b[i], metrics.Tolerance{}) {
				return false
			}
		}
		return true
	}
	tie := func(i int) bool { // rows i and i+1
		a, b := rows[i], rows[i+1]
		if len(a) != nf+nkeys || len(b) != nf+nkeys {
			return false
		}
		return eq(a[nf:], b[nf:]) && !eq(a[:nf], b[:nf])
	}
	end := len(rows)
	if n >= 0 && offset+n < end {
		end = offset + n
	}
	if offset > 0 && offset < len(rows) && tie(offset-1) {
		return false
	}
	if end > offset && end < len(rows) && tie(end-1) {
		return false
	}
	if inside {
		for i := offset; i+1 < end; i++ {
			if tie(i) {
				return false
			}
		}
	}
	return true
}

// dropReason groups an engine error for the report: its message with
// names and values cut off, so that similar failures share a line.
func dropReason(err error) string {
	if engine.ClassOf(err) == item.ClassTimeout {
		return dropTimeoutReason
	}
	msg := err.Error()
	var e *engine.Error
	if errors.As(err, &e) && e.Msg != "" {
		msg = e.Msg
	}
	if i := strings.Index(msg, ": "); i > 0 && i < 60 {
		msg = msg[:i]
	}
	if len(msg) > 80 {
		msg = msg[:80]
	}
	return "does not run: " + msg
}

func hashSeed(s string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(s))
	return h.Sum64()
}

func copyFile(from, to string) error {
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.Create(to)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

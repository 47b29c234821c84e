package suite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/pingcap/tidb/pkg/parser/ast"
	driver "github.com/pingcap/tidb/pkg/parser/test_driver"

	"github.com/evalflow/evalflow/engine"
	"github.com/evalflow/evalflow/engine/duckdb"
	"github.com/evalflow/evalflow/engine/sqlite"
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
	if write && enforceFKs {
		return sql.Open("sqlite", "file:"+path+"?_pragma=foreign_keys(1)")
	}
	if write {
		return sql.Open("sqlite", "file:"+path)
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
	cfg := engine.Config{Timeout: timeout, MaxOpen: 1}
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
	// Samples bounds the random databases drawn.
	Samples int
	// Timeout bounds each query.
	Timeout time.Duration
	// Profile is the comparison under which two results "differ".
	Profile metrics.Profile
	GenOptions
}

// DefaultOptions are the command's defaults.
func DefaultOptions() Options {
	return Options{Engine: SQLite, Seed: 1, MaxDBs: 20, Samples: 200, Timeout: 5 * time.Second,
		Profile: metrics.ProfileTestSuiteKeepDistinct}
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
}

// goldRun is a gold query prepared for execution.
type goldRun struct {
	exec, order string
	ordered     bool
	check       string // the order-fixedness query, "" when order does not matter
	nfields     int
	result      *table.Table
}

// Build writes the suite of database db (the file at orig) into dir:
// dir/<db><ext> (a copy of the original) and dir/<db>_NNN<ext>, one per
// kept database, numbered from 001. It returns the database's report.
// Golds that do not parse are reported and get no neighbours; golds that
// fail on the original are reported and left out.
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
	var nbs []*neighbour
	var facts []*queryFacts
	for gi, g := range golds {
		gr := &goldRun{}
		gr.exec, gr.order = o.Profile.PrepareGold(g.Text)
		gr.ordered = o.Profile.Ordered(gr.order)
		res, err := ex.Execute(ctx, engine.Query{Text: gr.exec, DB: copyPath})
		if err != nil {
			rep.GoldIssues = append(rep.GoldIssues, GoldIssue{IDs: g.IDs, Gold: g.Text, Problem: "fails on the original: " + err.Error()})
			runs = append(runs, nil)
			continue
		}
		gr.result = res
		gr.nfields = len(res.Columns)
		if gr.ordered {
			gr.check = orderCheck(gr.exec)
		}
		runs = append(runs, gr)
		f, err := factsOf(g.Text, schema)
		if err != nil {
			rep.GoldIssues = append(rep.GoldIssues, GoldIssue{IDs: g.IDs, Gold: g.Text, Problem: "does not parse: " + err.Error()})
			continue
		}
		facts = append(facts, f)
		cands, err := Neighbours(g.Text, schema, rng)
		if err != nil {
			continue
		}
		for _, c := range cands {
			n := &neighbour{gold: gi, cand: c, exec: o.Profile.PreparePred(c.Text)}
			rep.Neighbours++
			pr, err := ex.Execute(ctx, engine.Query{Text: n.exec, DB: copyPath})
			if err != nil {
				rep.Dropped[dropReason(err)]++
				continue
			}
			if !metrics.CompareTables(res, pr, o.Profile.CompareOptions(gr.order, metrics.Tolerance{})).Match {
				n.separated = true
				rep.SeparatedByOriginal++
			}
			nbs = append(nbs, n)
		}
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
	for s := 0; s < o.Samples && left > 0 && len(rep.Kept) < o.MaxDBs; s++ {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		rep.Sampled++
		srng := rand.New(rand.NewPCG(o.Seed^uint64(s+1)*0x9e3779b97f4a7c15, seed))
		g := generate(schema, pl, o.GenOptions, srng)
		tmp := filepath.Join(dir, fmt.Sprintf(".sample-%d%s", s, o.Engine.Ext()))
		newly, reason, err := trySample(ctx, o, schema, g, tmp, runs, nbs)
		if err != nil {
			os.Remove(tmp)
			return nil, err
		}
		if reason != "" {
			rep.Rejected[reason]++
			os.Remove(tmp)
			continue
		}
		name := fmt.Sprintf("%s_%03d%s", db, len(rep.Kept)+1, o.Engine.Ext())
		if err := os.Rename(tmp, filepath.Join(dir, name)); err != nil {
			return nil, err
		}
		for _, n := range newly {
			n.separated = true
		}
		left -= len(newly)
		rep.Kept = append(rep.Kept, KeptDB{File: name, Sample: s, Separated: len(newly)})
	}
	for _, n := range nbs {
		if n.separated {
			rep.Separated++
		} else {
			rep.Unseparated = append(rep.Unseparated, Unseparated{IDs: golds[n.gold].IDs, Gold: golds[n.gold].Text,
				Mutation: n.cand.Mutation, Neighbour: n.cand.Text})
		}
	}
	rep.Elapsed = time.Since(start).Round(time.Millisecond).String()
	return rep, nil
}

// trySample writes g to tmp and returns the neighbours it separates
// first, or why it is not kept: a gold fails on it, a gold's row order is
// not fixed, or it separates nothing new.
func trySample(ctx context.Context, o Options, s *Schema, g *genDB, tmp string, runs []*goldRun, nbs []*neighbour) ([]*neighbour, string, error) {
	os.Remove(tmp)
	w, err := o.Engine.open(tmp, true, len(s.Ignored) == 0)
	if err != nil {
		return nil, "", err
	}
	_, err = g.write(ctx, w, s)
	if cerr := w.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, "", err
	}
	ex, err := o.Engine.executor(o.Timeout)
	if err != nil {
		return nil, "", err
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
				return nil, "", ctx.Err()
			}
			return nil, "a gold fails", nil
		}
		if gr.check != "" {
			kt, err := ex.Execute(ctx, engine.Query{Text: gr.check, DB: tmp})
			if err == nil && !orderFixed(kt, gr.nfields, len(res.Rows)) {
				return nil, "a gold's row order is not fixed (ties under ORDER BY)", nil
			}
		}
		results[i] = res
	}
	var newly []*neighbour
	for _, n := range nbs {
		if n.separated {
			continue
		}
		gr := runs[n.gold]
		pr, err := ex.Execute(ctx, engine.Query{Text: n.exec, DB: tmp})
		if err != nil && ctx.Err() != nil {
			return nil, "", ctx.Err()
		}
		if err != nil || !metrics.CompareTables(results[n.gold], pr, o.Profile.CompareOptions(gr.order, metrics.Tolerance{})).Match {
			newly = append(newly, n)
		}
	}
	if len(newly) == 0 {
		return nil, "separates no new neighbour", nil
	}
	return newly, "", nil
}

// orderCheck returns a query that lists, without LIMIT, the gold's result
// columns followed by its ORDER BY keys, in the gold's order; "" when the
// gold has no top-level ORDER BY or cannot be rewritten.
func orderCheck(gold string) string {
	stmt, err := Parse(gold)
	if err != nil {
		return ""
	}
	sel, ok := stmt.(*ast.SelectStmt)
	if !ok || sel.OrderBy == nil || sel.Fields == nil {
		return ""
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
				return ""
			}
			e = fields[p-1].Expr
		}
		keys = append(keys, &ast.SelectField{Expr: e})
	}
	sel.Fields.Fields = append(append([]*ast.SelectField(nil), fields...), keys...)
	sel.Limit = nil
	text, err := Print(sel)
	if err != nil {
		return ""
	}
	return text
}

// orderFixed reports whether the gold's rows are fixed by its ORDER BY:
// within the first n rows (the gold's result) two neighbouring rows with
// equal keys must be equal, and the n-th row's keys must differ from the
// next row's unless the rows are equal (a tie at the LIMIT boundary).
func orderFixed(kt *table.Table, nfields, n int) bool {
	rows := kt.Rows
	eq := func(a, b []table.Value) bool {
		for i := range a {
			if !metrics.ValuesEqual(a[i], b[i], metrics.Tolerance{}) {
				return false
			}
		}
		return true
	}
	for i := 0; i+1 < len(rows) && i < n; i++ {
		a, b := rows[i], rows[i+1]
		if len(a) < nfields {
			return true
		}
		if eq(a[nfields:], b[nfields:]) && !eq(a[:nfields], b[:nfields]) {
			return false
		}
	}
	return true
}

// dropReason groups an engine error for the report: its message with
// names and values cut off, so that similar failures share a line.
func dropReason(err error) string {
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

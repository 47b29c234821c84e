// Package report renders evaluation runs as one self-contained HTML file
// (docs/report.md): the run header, metric table with confidence
// intervals, accuracy by group with interval whiskers, error classes,
// latency and cost, the refinement curve, the items (wrong and errored
// first) and, for several runs or sweep cells, their paired differences.
// Plots are SVG drawn in Go (gonum/plot) and inlined; the file references
// nothing outside itself.
//
// Every number the page shows carries its full-precision value and where
// it came from (data-key, data-value), so a test can read the page and
// check it against the Parquet files.
package report

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/sourcegraph/conc"

	"github.com/evalflow/evalflow/compare"
	"github.com/evalflow/evalflow/metrics"
	"github.com/evalflow/evalflow/nodes/aggregate"
	"github.com/evalflow/evalflow/rundir"
	"github.com/evalflow/evalflow/runsql"
)

// DefaultMaxItems bounds the item table: the first this many items, wrong
// and errored first; the page says how many it leaves out.
const DefaultMaxItems = 500

// DiffResamples are the bootstrap resamples of each paired difference.
const DiffResamples = 2000

// Options tune a report. The zero value is usable.
type Options struct {
	// MaxItems bounds the item table (0: DefaultMaxItems; negative: no items).
	MaxItems int
	// Version is the evalflow version writing the report.
	Version string
}

// Report is everything a report page shows.
type Report struct {
	Version string
	Runs    []*Run
	// Diffs are the paired differences: each sweep run's cells against its
	// first cell, and each run against the first run.
	Diffs []Diff
	// DiffNotes say which pairs could not be compared, and why.
	DiffNotes []string
}

// Run is one run directory's part of the page.
type Run struct {
	Index    int
	Dir      string
	Manifest *rundir.Manifest
	// Partial: the run has not finished (or was interrupted); the numbers
	// are over the items finished so far (parts/).
	Partial   bool
	Variables []KV
	Hashes    []KV
	Cells     []string // sweep cell ids in manifest order; nil outside a sweep
	Metrics   []string // metric columns of items
	Primary   string   // the metric the group charts and item order use
	Binary    map[string]bool

	MetricRows []Stat
	Groups     []Group
	Statuses   []Count
	Classes    []Count
	Latency    []Latency
	Costs      []Cost
	Refine     []RefinePoint
	RefineSVG  string
	Items      []Item
	ItemsTotal int
	ItemsShown int
	WrongTotal int // items wrong or errored
	// SuiteVerdicts are the run's test-suite verdict columns (ex_suite);
	// the items they separate follow the wrong ones.
	SuiteVerdicts []string
}

// KV is a labelled value of the header.
type KV struct{ Key, Value, Note string }

// Stat is a metric's mean over a group with its interval.
type Stat struct {
	Source   string // "aggregates" (read from aggregates.parquet) or "items" (computed here)
	Cell     string
	GroupBy  string // "all" for the whole run (cell)
	Group    string
	Metric   string
	Items    int64
	N        int64
	Mean     sql.NullFloat64
	CILow    sql.NullFloat64
	CIHigh   sql.NullFloat64
	CIMethod string
}

// Category is the value of by the row stands for: its cell for "cell".
func (s Stat) Category(by string) string {
	if by == "cell" {
		return s.Cell
	}
	return s.Group
}

// Group is the primary metric by one column, with its chart.
type Group struct {
	By   string
	Rows []Stat
	SVG  string
}

// Count is a number of items with a value of a column.
type Count struct {
	Cell, Value string
	N           int64
}

// Latency summarises one timing column.
type Latency struct {
	Cell, Table, Column, Label string
	N                          int64
	Mean, P50, P90, P99, Max   sql.NullFloat64
}

// Cost is what the model calls of a cell used.
type Cost struct {
	Cell                      string
	Calls, CacheHits          int64
	InputTokens, OutputTokens int64
	Cost                      float64
}

// RefinePoint is the share of items whose sample 0 had passed by an attempt.
type RefinePoint struct {
	Cell    string
	Attempt int64
	Passed  int64
	Items   int64
}

// Rate is Passed/Items.
func (p RefinePoint) Rate() float64 { return float64(p.Passed) / float64(p.Items) }

// Item is one row of the item table.
type Item struct {
	Seq                                   int64
	ID, Cell, Question, DB, Gold, Pred    string
	Status, ErrorClass, Error, ErrMessage string
	GoldError                             string
	GoldRows, PredRows, Attempts          sql.NullInt64
	// GoldPreview and PredPreview are the heads of the two results
	// (items.parquet gold_preview, pred_preview); nil when the column is
	// null or the run has none.
	GoldPreview, PredPreview *ResultView
	Values                   []MetricValue
	Wrong                    bool
	// Suite is where the item's test suite separated the prediction from
	// the gold (a test-suite verdict below 1: ex_suite); nil when none did
	// or the run has no suite verdict. Separated is set when the suite did
	// and the primary metric did not: ex 1, ex_suite 0.
	Suite     *SuiteView
	Separated bool
}

// SuiteView is the test database that separated an item's prediction from
// its gold under a test-suite verdict (items.parquet <verdict>_db,
// suite_gold_preview, suite_pred_preview).
type SuiteView struct {
	// Metric is the verdict's column (ex_suite), DB the database's file
	// name.
	Metric, DB string
	// Own is set when the item's own database separated them: its results
	// are the item's, shown above.
	Own bool
	// Gold and Pred are both results on DB (Pred nil when the prediction
	// failed there); Note is the verdict's note (metric_notes), which says
	// why.
	Gold, Pred *ResultView
	Note       string
}

// suiteVerdicts returns the run's test-suite verdict columns (rundir.
// SuiteColumns) that have a <verdict>_db column, each with its
// one-database column.
func suiteVerdicts(metricCols, cols []string) (verdicts, bases []string) {
	for _, v := range rundir.SuiteColumns(metricCols) {
		if slices.Contains(cols, v+rundir.SuiteDBSuffix) {
			verdicts = append(verdicts, v)
			bases = append(bases, strings.TrimSuffix(v, metrics.SuiteSuffix))
		}
	}
	return verdicts, bases
}

// ResultView is a result preview as the item table shows it.
type ResultView struct {
	Columns []string
	Rows    [][]Cell
	// ColumnsTotal is the result's column count; ColumnsCut is set when
	// it holds more than Columns. RowsTotal is its row count.
	ColumnsTotal int64
	ColumnsCut   bool
	RowsTotal    int64
	// Truncated: the preview holds less than the result (rows, columns or
	// a text cut); Capped: the engine's max_rows cut the result itself.
	Truncated, Capped bool
	// Err says why the stored preview could not be read (then the rest
	// is empty).
	Err string
}

// Total is the result's row count as the preview recorded it (its
// rows_total); invalid for no preview.
func (v *ResultView) Total() sql.NullInt64 {
	if v == nil || v.Err != "" {
		return sql.NullInt64{}
	}
	return sql.NullInt64{Int64: v.RowsTotal, Valid: true}
}

// RowsCut reports whether rows of the result are left out of the view.
func (v *ResultView) RowsCut(total sql.NullInt64) bool {
	return total.Valid && int64(len(v.Rows)) < total.Int64
}

// Cell is one value of a preview: Null for SQL NULL, else its text as
// items.parquet holds it.
type Cell struct {
	Text string
	Null bool
}

// resultView reads a preview column's value; nil for none.
func resultView(s string) *ResultView {
	if s == "" {
		return nil
	}
	p, err := rundir.ParsePreview(s)
	if err != nil {
		return &ResultView{Err: err.Error()}
	}
	v := &ResultView{Columns: p.Columns, ColumnsTotal: p.ColumnsTotal, ColumnsCut: int64(len(p.Columns)) < p.ColumnsTotal,
		RowsTotal: p.RowsTotal, Truncated: p.Truncated, Capped: p.Capped}
	for _, row := range p.Rows {
		cells := make([]Cell, len(row))
		for i, x := range row {
			switch x := x.(type) {
			case nil:
				cells[i] = Cell{Text: "NULL", Null: true}
			case string:
				cells[i] = Cell{Text: x}
			default: // json.Number, bool: as written
				cells[i] = Cell{Text: fmt.Sprint(x)}
			}
		}
		v.Rows = append(v.Rows, cells)
	}
	return v
}

// MetricValue is one metric of an item.
type MetricValue struct {
	Metric string
	Value  sql.NullFloat64
}

// Diff is one paired comparison (compare.Compare) of B against A.
type Diff struct {
	A, B string
	Res  *compare.Result
}

// Build reads the run directories and computes the report.
func Build(ctx context.Context, dirs []string, o Options) (*Report, error) {
	if len(dirs) == 0 {
		return nil, errors.New("no run directory given")
	}
	if o.MaxItems == 0 {
		o.MaxItems = DefaultMaxItems
	}
	rep := &Report{Version: o.Version}
	for i, dir := range dirs {
		r, err := buildRun(ctx, i, dir, o)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", dir, err)
		}
		rep.Runs = append(rep.Runs, r)
	}
	if err := rep.diffs(ctx); err != nil {
		return nil, err
	}
	return rep, nil
}

// singleThreadItems is the largest run whose report DuckDB reads with one
// thread a lane: on two cores a second thread costs more CPU than it saves
// wall time until about 25,000 items (`evalflow report`: 8,000–10,000
// items 0.13–0.14 → 0.11 s CPU and 0.15–0.17 → 0.12–0.13 s wall;
// docs/benchmarks-baseline.md, "The same page every time"; BenchmarkThreads
// in-process). Larger runs give each of the two lanes half the cores (on
// two cores, one each: at 100,000 and 1,000,000 items the lanes side by
// side took 15% off the report's wall time against two threads one lane
// after the other, for the same CPU and peak memory; "The report rendered
// in Go"). The page is the same either way (TestSameEveryTime).
const singleThreadItems = 25_000

// sectionTook, when set, is told how long each section of a run took
// (BenchmarkSections). Called from both lanes at once.
var sectionTook func(section string, took time.Duration)

// threadsFor is DuckDB's threads for a run of n items (0: not counted). A
// variable for BenchmarkThreads only.
var threadsFor = func(n int) int {
	if n > 0 && n <= singleThreadItems {
		return 1
	}
	return max(1, runtime.NumCPU()/2)
}

func buildRun(ctx context.Context, index int, dir string, o Options) (*Run, error) {
	m, err := rundir.Previous(dir)
	if err != nil {
		return nil, err
	}
	if m == nil {
		return nil, fmt.Errorf("not a run directory (no %s)", rundir.ManifestName)
	}
	db, partial, err := runsql.Open(ctx, dir)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	// DuckDB's threads are a database-wide setting: each lane below gets
	// this many.
	if _, err := db.ExecContext(ctx, fmt.Sprintf("SET threads = %d", threadsFor(m.Counts.Items))); err != nil {
		return nil, err
	}
	r := &Run{Index: index, Dir: dir, Manifest: m, Partial: partial || m.Status == "running", Binary: map[string]bool{}}
	for _, b := range m.BinaryMetrics {
		r.Binary[b] = true
	}
	r.header()
	for _, c := range m.Cells {
		r.Cells = append(r.Cells, c.ID)
	}
	cols, err := runsql.Columns(ctx, db, "items")
	if err != nil {
		return nil, err
	}
	if len(cols) == 0 {
		return r, nil // nothing finished yet
	}
	r.Metrics = metricColumns(cols)
	switch {
	case slices.Contains(r.Metrics, "ex"):
		r.Primary = "ex"
	case len(m.BinaryMetrics) > 0 && slices.Contains(r.Metrics, m.BinaryMetrics[0]):
		r.Primary = m.BinaryMetrics[0]
	case len(r.Metrics) > 0:
		r.Primary = r.Metrics[0]
	}
	q := &querier{ctx: ctx, db: db, cols: cols, seed: m.CISeed}
	if q.seed == 0 {
		q.seed = 1
	}
	aggCols, err := runsql.Columns(ctx, db, "aggregates")
	if err != nil {
		return nil, err
	}
	q.hasAgg = len(aggCols) > 0
	q.aggCell = slices.Contains(aggCols, "cell")
	attCols, err := runsql.Columns(ctx, db, "attempts")
	if err != nil {
		return nil, err
	}
	q.attCols = attCols
	// Two lanes of sections (groups needs metricTable's rows; every
	// section fills fields of its own), side by side on two connections:
	// the page comes in about two thirds of the time, for the same CPU.
	type section struct {
		name string
		f    func(*Run) error
	}
	lanes := [2][]section{
		{{"metrics", q.metricTable}, {"groups", q.groups}, {"counts", q.counts}, {"refine", q.refine}},
		{{"latency", q.latency}, {"items", func(r *Run) error { return q.items(r, o.MaxItems) }}},
	}
	var errs [2]error
	run := func(i int) {
		for _, s := range lanes[i] {
			start := time.Now()
			if errs[i] = s.f(r); errs[i] != nil {
				return
			}
			if sectionTook != nil {
				sectionTook(s.name, time.Since(start))
			}
		}
	}
	func() {
		var wg conc.WaitGroup
		// Waited for also when lane 0 panics: the deferred db.Close must
		// not close the database under lane 1.
		defer wg.Wait()
		wg.Go(func() { run(1) })
		run(0)
	}()
	if err := cmp.Or(errs[0], errs[1]); err != nil {
		return nil, err
	}
	return r, nil
}

// header lists the variables and the hashes the manifest records.
func (r *Run) header() {
	m := r.Manifest
	for _, v := range m.Variables {
		r.Variables = append(r.Variables, KV{Key: v.Name, Value: jsonText(v.Value), Note: v.Source})
	}
	r.Hashes = append(r.Hashes, KV{Key: "pipeline", Value: m.PipelineHash, Note: m.Pipeline})
	if m.Dataset.SHA256 != "" {
		r.Hashes = append(r.Hashes, KV{Key: "dataset", Value: m.Dataset.SHA256, Note: m.Dataset.Path})
	}
	for _, in := range m.Inputs {
		r.Hashes = append(r.Hashes, KV{Key: in.Name, Value: in.SHA256, Note: in.Path})
	}
	for _, md := range m.Models {
		for _, k := range slices.Sorted(maps.Keys(md.PromptSHA256)) {
			r.Hashes = append(r.Hashes, KV{Key: "model." + md.Name + " " + k, Value: md.PromptSHA256[k]})
		}
	}
}

// metricColumns are the float columns between duration_ms and
// metric_errors (docs/output.md: one column per metric).
func metricColumns(cols []string) []string {
	i, j := slices.Index(cols, "duration_ms"), slices.Index(cols, "metric_errors")
	if i < 0 || j < 0 || j <= i {
		return nil
	}
	return slices.Clone(cols[i+1 : j])
}

type querier struct {
	ctx     context.Context
	db      *sql.DB
	cols    []string
	attCols []string
	hasAgg  bool
	aggCell bool
	seed    uint64
}

func (q *querier) has(col string) bool { return slices.Contains(q.cols, col) }

// cellExpr is the cell column, or ” outside a sweep.
func (q *querier) cellExpr(cols []string) string {
	if slices.Contains(cols, "cell") {
		return "coalesce(cell, '')"
	}
	return "''"
}

// metricTable reads every metric's overall mean and interval per cell from
// aggregates.parquet; a run without it (unfinished) gets them computed over
// its finished items.
func (q *querier) metricTable(r *Run) error {
	if q.hasAgg {
		rows, err := q.aggRows("group_by = 'all'")
		if err != nil {
			return err
		}
		r.MetricRows = rows
		return nil
	}
	for _, m := range r.Metrics {
		rows, err := q.computeGroup(r, "", m)
		if err != nil {
			return err
		}
		r.MetricRows = append(r.MetricRows, rows...)
	}
	return nil
}

// aggRows reads aggregates rows, in file order.
func (q *querier) aggRows(where string) ([]Stat, error) {
	cell := "''"
	if q.aggCell {
		cell = "coalesce(cell, '')"
	}
	rows, err := q.db.QueryContext(q.ctx, fmt.Sprintf(`SELECT %s, group_by, coalesce("group", ''), metric, items, n, mean, ci_low, ci_high, coalesce(ci_method, '')
		FROM aggregates WHERE %s`, cell, where))
	if err != nil {
		return nil, fmt.Errorf("reading aggregates: %w", err)
	}
	defer rows.Close()
	var out []Stat
	for rows.Next() {
		s := Stat{Source: "aggregates"}
		if err := rows.Scan(&s.Cell, &s.GroupBy, &s.Group, &s.Metric, &s.Items, &s.N, &s.Mean, &s.CILow, &s.CIHigh, &s.CIMethod); err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, rows.Err()
}

// computeGroup computes metric's mean per cell (and per value of by, when
// set) over the items not in error or cancelled, with a Wilson interval
// for a 0/1 metric and a seeded percentile bootstrap otherwise — what the
// aggregate stage does, for groups aggregates.parquet does not hold.
func (q *querier) computeGroup(r *Run, by, metric string) ([]Stat, error) {
	g, groupBy := "''", "all"
	if by != "" {
		g, groupBy = fmt.Sprintf("coalesce(CAST(%s AS VARCHAR), '')", runsql.Ident(by)), by
	}
	rows, err := q.db.QueryContext(q.ctx, fmt.Sprintf(`SELECT %s AS c, %s AS g, count(*) AS items,
		list(CAST(%s AS DOUBLE) ORDER BY %s) FILTER (WHERE status <> 'error' AND %s IS NOT NULL AND NOT isnan(%s)) AS vals
		FROM items WHERE status <> 'cancelled' GROUP BY ALL ORDER BY min(seq)`,
		q.cellExpr(q.cols), g, runsql.Ident(metric), runsql.Ident(metric), runsql.Ident(metric), runsql.Ident(metric)))
	if err != nil {
		return nil, fmt.Errorf("grouping items: %w", err)
	}
	defer rows.Close()
	var out []Stat
	for rows.Next() {
		s := Stat{Source: "items", GroupBy: groupBy, Metric: metric}
		var vals duckList
		if err := rows.Scan(&s.Cell, &s.Group, &s.Items, &vals); err != nil {
			return nil, err
		}
		x := vals.floats
		s.N = int64(len(x))
		if len(x) > 0 {
			sum := 0.0
			for _, v := range x {
				sum += v
			}
			s.Mean = sql.NullFloat64{Float64: sum / float64(len(x)), Valid: true}
			// The aggregate stage's own interval (Wilson for a 0/1 metric,
			// its capped, seeded bootstrap otherwise).
			lo, hi, method := aggregate.CI(r.Binary[metric], sum, len(x), x, q.seed)
			s.CIMethod = method
			s.CILow = sql.NullFloat64{Float64: lo, Valid: !math.IsNaN(lo)}
			s.CIHigh = sql.NullFloat64{Float64: hi, Valid: !math.IsNaN(hi)}
		}
		out = append(out, s)
	}
	return out, rows.Err()
}

// duckList scans a DuckDB LIST of DOUBLE.
type duckList struct{ floats []float64 }

func (l *duckList) Scan(src any) error {
	switch v := src.(type) {
	case nil:
		l.floats = nil
	case []any:
		l.floats = make([]float64, 0, len(v))
		for _, x := range v {
			f, ok := x.(float64)
			if !ok {
				return fmt.Errorf("list element %T, want float64", x)
			}
			l.floats = append(l.floats, f)
		}
	default:
		return fmt.Errorf("cannot scan %T into a list", src)
	}
	return nil
}

// groups charts the primary metric by every group_by column the run
// aggregated, by db, and by cell.
func (q *querier) groups(r *Run) error {
	if r.Primary == "" {
		return nil
	}
	var bys []string
	if q.hasAgg {
		rows, err := q.db.QueryContext(q.ctx, "SELECT DISTINCT group_by FROM aggregates WHERE group_by <> 'all' ORDER BY 1")
		if err != nil {
			return err
		}
		for rows.Next() {
			var b string
			if err := rows.Scan(&b); err != nil {
				rows.Close()
				return err
			}
			bys = append(bys, b)
		}
		rows.Close()
		for _, by := range bys {
			st, err := q.aggRows(fmt.Sprintf("group_by = %s AND metric = %s", runsql.Quote(by), runsql.Quote(r.Primary)))
			if err != nil {
				return err
			}
			r.Groups = append(r.Groups, Group{By: by, Rows: st})
		}
	} else if q.has("difficulty") {
		bys = append(bys, "difficulty")
		st, err := q.computeGroup(r, "difficulty", r.Primary)
		if err != nil {
			return err
		}
		r.Groups = append(r.Groups, Group{By: "difficulty", Rows: st})
	}
	if q.has("db") && !slices.Contains(bys, "db") {
		st, err := q.computeGroup(r, "db", r.Primary)
		if err != nil {
			return err
		}
		r.Groups = append(r.Groups, Group{By: "db", Rows: st})
	}
	if len(r.Cells) > 0 {
		var st []Stat
		for _, s := range r.MetricRows {
			if s.Metric == r.Primary {
				st = append(st, s)
			}
		}
		r.Groups = append(r.Groups, Group{By: "cell", Rows: st})
	}
	for i := range r.Groups {
		svg, err := groupSVG(r.Groups[i], r.Primary, metricRange(r.Primary, r.Binary[r.Primary]))
		if err != nil {
			return err
		}
		r.Groups[i].SVG = svg
	}
	return nil
}

// counts are the items by status and by final-attempt error class.
func (q *querier) counts(r *Run) error {
	c := q.cellExpr(q.cols)
	for _, x := range []struct {
		col string
		dst *[]Count
	}{{"status", &r.Statuses}, {"error_class", &r.Classes}} {
		where := ""
		if x.col == "error_class" {
			where = "WHERE coalesce(error_class, '') <> ''"
		}
		rows, err := q.db.QueryContext(q.ctx, fmt.Sprintf("SELECT %s, coalesce(%s, ''), count(*) FROM items %s GROUP BY ALL ORDER BY 1, 3 DESC, 2", c, x.col, where))
		if err != nil {
			return err
		}
		for rows.Next() {
			var k Count
			if err := rows.Scan(&k.Cell, &k.Value, &k.N); err != nil {
				rows.Close()
				return err
			}
			*x.dst = append(*x.dst, k)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
	}
	return nil
}

// latency summarises the timing columns, and sums tokens and cost.
func (q *querier) latency(r *Run) error {
	type src struct{ table, col, label string }
	srcs := []src{{"items", "duration_ms", "item: validate + execute, all attempts (ms)"}}
	for _, s := range []src{
		{"attempts", "latency_ms", "model call per attempt (ms)"},
		{"attempts", "validate_ms", "validate per attempt (ms)"},
		{"attempts", "execute_ms", "execute per attempt (ms)"},
	} {
		if slices.Contains(q.attCols, s.col) {
			srcs = append(srcs, s)
		}
	}
	// One query per table, every column of it at once: each query scans
	// its Parquet file once, and the three quantiles of a column come from
	// one sort (quantile_cont with a list of fractions gives each the value
	// it gives alone).
	bySrc := make([][]Latency, len(srcs))
	for _, table := range []string{"items", "attempts"} {
		var mine []int // indexes into srcs
		var sel []string
		for i, s := range srcs {
			if s.table != table {
				continue
			}
			c := runsql.Ident(s.col)
			mine = append(mine, i)
			// avg over the sorted values: DuckDB's parallel avg adds in an
			// order that changes from one query to the next, and so did the
			// mean's last digits; sorted, the page is the same every time.
			sel = append(sel, fmt.Sprintf("count(%s), avg(%s ORDER BY %s), quantile_cont(%s, [0.5, 0.9, 0.99]), max(%s)", c, c, c, c, c))
		}
		if len(mine) == 0 {
			continue
		}
		cols := q.cols
		if table == "attempts" {
			cols = q.attCols
		}
		rows, err := q.db.QueryContext(q.ctx, fmt.Sprintf("SELECT %s, %s FROM %s GROUP BY ALL ORDER BY 1",
			q.cellExpr(cols), strings.Join(sel, ", "), table))
		if err != nil {
			return fmt.Errorf("latency: %w", err)
		}
		for rows.Next() {
			var cell string
			ls := make([]Latency, len(mine))
			qs := make([]any, len(mine))
			dst := []any{&cell}
			for i := range mine {
				l := &ls[i]
				dst = append(dst, &l.N, &l.Mean, &qs[i], &l.Max)
			}
			if err := rows.Scan(dst...); err != nil {
				rows.Close()
				return err
			}
			for i, k := range mine {
				s, l := srcs[k], ls[i]
				l.Cell, l.Table, l.Column, l.Label = cell, s.table, s.col, s.label
				if l.P50, l.P90, l.P99, err = quantiles3(qs[i]); err != nil {
					rows.Close()
					return fmt.Errorf("latency of %s: %w", s.col, err)
				}
				bySrc[k] = append(bySrc[k], l)
			}
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
	}
	for _, ls := range bySrc {
		r.Latency = append(r.Latency, ls...)
	}
	if !slices.Contains(q.attCols, "cost") {
		return nil
	}
	rows, err := q.db.QueryContext(q.ctx, fmt.Sprintf(`SELECT %s, count(*), count(*) FILTER (WHERE cache_hit),
		coalesce(sum(input_tokens), 0), coalesce(sum(output_tokens), 0), coalesce(sum(cost ORDER BY cost), 0)
		FROM attempts GROUP BY ALL ORDER BY 1`, q.cellExpr(q.attCols)))
	if err != nil {
		return fmt.Errorf("cost: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var c Cost
		if err := rows.Scan(&c.Cell, &c.Calls, &c.CacheHits, &c.InputTokens, &c.OutputTokens, &c.Cost); err != nil {
			return err
		}
		r.Costs = append(r.Costs, c)
	}
	return rows.Err()
}

// quantiles3 reads quantile_cont(x, [a, b, c]): NULL (no values) or a list
// of three numbers, NULL where the quantile is.
func quantiles3(v any) (a, b, c sql.NullFloat64, err error) {
	if v == nil {
		return a, b, c, nil
	}
	list, ok := v.([]any)
	if !ok || len(list) != 3 {
		return a, b, c, fmt.Errorf("quantiles: got %T %v, want a list of three", v, v)
	}
	out := [3]*sql.NullFloat64{&a, &b, &c}
	for i, x := range list {
		if err := out[i].Scan(x); err != nil {
			return a, b, c, fmt.Errorf("quantiles: %w", err)
		}
	}
	return a, b, c, nil
}

// refine computes the refinement curve: per cell and attempt k, the items
// whose sample 0 had an attempt ≤ k with match = true, over the items with
// at least one attempt.
func (q *querier) refine(r *Run) error {
	if !slices.Contains(q.attCols, "match") || !slices.Contains(q.attCols, "attempt") {
		return nil
	}
	rows, err := q.db.QueryContext(q.ctx, fmt.Sprintf(`WITH a AS (
			SELECT %s AS cell, seq, min(attempt) FILTER (WHERE match) AS first_pass
			FROM attempts WHERE sample = 0 GROUP BY ALL),
		k AS (SELECT DISTINCT attempt FROM attempts WHERE sample = 0)
		SELECT a.cell, k.attempt, count(*) FILTER (WHERE a.first_pass <= k.attempt), count(*)
		FROM a, k GROUP BY ALL ORDER BY 1, 2`, q.cellExpr(q.attCols)))
	if err != nil {
		return fmt.Errorf("refinement curve: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var p RefinePoint
		if err := rows.Scan(&p.Cell, &p.Attempt, &p.Passed, &p.Items); err != nil {
			return err
		}
		r.Refine = append(r.Refine, p)
	}
	if err := rows.Err(); err != nil {
		return err
	}
	// Cells in manifest order, as everywhere else on the page (and so in
	// the same colours as the group charts).
	slices.SortStableFunc(r.Refine, func(a, b RefinePoint) int {
		return slices.Index(r.Cells, a.Cell) - slices.Index(r.Cells, b.Cell)
	})
	if len(r.Refine) > 0 {
		svg, err := refineSVG(r.Refine)
		if err != nil {
			return err
		}
		r.RefineSVG = svg
	}
	return nil
}

// items reads the item table: errored first (status not ok, or a final
// error class), then wrong (primary metric below 1 or null), then the
// rest, each in run order; at most max rows.
func (q *querier) items(r *Run, max int) error {
	wrong := "false"
	if r.Primary != "" {
		p := runsql.Ident(r.Primary)
		wrong = fmt.Sprintf("(%s IS NULL OR isnan(%s) OR %s < 1)", p, p, p)
	}
	bad := fmt.Sprintf("(status <> 'ok' OR coalesce(error_class, '') <> '' OR %s)", wrong)
	if err := q.db.QueryRowContext(q.ctx, fmt.Sprintf("SELECT count(*), count(*) FILTER (WHERE %s) FROM items", bad)).Scan(&r.ItemsTotal, &r.WrongTotal); err != nil {
		return fmt.Errorf("counting items: %w", err)
	}
	// Items a test suite separated (ex_suite < 1) come after the wrong
	// ones, before the right ones.
	verdicts, bases := suiteVerdicts(r.Metrics, q.cols)
	r.SuiteVerdicts = verdicts
	separated := "false"
	if len(verdicts) > 0 {
		var or []string
		for _, v := range verdicts {
			or = append(or, fmt.Sprintf("coalesce(%s < 1, false)", runsql.Ident(v)))
		}
		separated = "(" + strings.Join(or, " OR ") + ")"
	}
	if max < 0 {
		return nil
	}
	str := func(col string) string {
		if q.has(col) {
			return fmt.Sprintf("coalesce(CAST(%s AS VARCHAR), '')", runsql.Ident(col))
		}
		return "''"
	}
	num := func(col string) string {
		if q.has(col) {
			return runsql.Ident(col)
		}
		return "NULL"
	}
	sel := []string{"seq", str("id"), q.cellExpr(q.cols), str("question"), str("db"), str("gold"), str("prediction"),
		str("status"), str("error_class"), str("error"), str("error_message"), str("gold_error"),
		num("gold_rows"), num("pred_rows"), num("attempts"), bad, str("gold_preview"), str("pred_preview")}
	for _, m := range r.Metrics {
		sel = append(sel, runsql.Ident(m))
	}
	sel = append(sel, separated)
	if len(verdicts) > 0 {
		sel = append(sel, str(rundir.SuiteGoldPreview), str(rundir.SuitePredPreview), str("metric_notes"))
		for _, v := range verdicts {
			sel = append(sel, str(v+rundir.SuiteDBSuffix))
		}
	}
	order := fmt.Sprintf("CASE WHEN status <> 'ok' OR coalesce(error_class, '') <> '' THEN 0 WHEN %s THEN 1 WHEN %s THEN 2 ELSE 3 END, seq", wrong, separated)
	// The items shown are chosen first, by their seq (unique in a run,
	// cells included), and only they are read whole: ordering every
	// item's texts and previews to keep max of them was most of the
	// report's time on large runs.
	shown, err := q.db.QueryContext(q.ctx, fmt.Sprintf("SELECT seq FROM items ORDER BY %s LIMIT %d", order, max))
	if err != nil {
		return fmt.Errorf("choosing items: %w", err)
	}
	var seqs []string
	for shown.Next() {
		var seq int64
		if err := shown.Scan(&seq); err != nil {
			shown.Close()
			return err
		}
		seqs = append(seqs, strconv.FormatInt(seq, 10))
	}
	shown.Close()
	if err := shown.Err(); err != nil {
		return err
	}
	if len(seqs) == 0 {
		return nil
	}
	rows, err := q.db.QueryContext(q.ctx, fmt.Sprintf("SELECT %s FROM items WHERE seq IN (%s) ORDER BY %s",
		strings.Join(sel, ", "), strings.Join(seqs, ", "), order))
	if err != nil {
		return fmt.Errorf("reading items: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var it Item
		var goldPreview, predPreview string
		it.Values = make([]MetricValue, len(r.Metrics))
		dst := []any{&it.Seq, &it.ID, &it.Cell, &it.Question, &it.DB, &it.Gold, &it.Pred, &it.Status, &it.ErrorClass,
			&it.Error, &it.ErrMessage, &it.GoldError, &it.GoldRows, &it.PredRows, &it.Attempts, &it.Wrong, &goldPreview, &predPreview}
		for i, m := range r.Metrics {
			it.Values[i].Metric = m
			dst = append(dst, &it.Values[i].Value)
		}
		var separated bool
		var suiteGold, suitePred, notes string
		suiteDBs := make([]string, len(verdicts))
		dst = append(dst, &separated)
		if len(verdicts) > 0 {
			dst = append(dst, &suiteGold, &suitePred, &notes)
			for i := range verdicts {
				dst = append(dst, &suiteDBs[i])
			}
		}
		if err := rows.Scan(dst...); err != nil {
			return err
		}
		it.GoldPreview, it.PredPreview = resultView(goldPreview), resultView(predPreview)
		it.Separated = separated && !it.Wrong
		it.Suite = suiteView(it, verdicts, bases, suiteDBs, suiteGold, suitePred, notes)
		r.Items = append(r.Items, it)
	}
	r.ItemsShown = len(r.Items)
	return rows.Err()
}

// suiteView is the item's first test-suite verdict whose pair a database
// separated: the previews belong to the first one separated by a database
// other than the item's own (rundir's rule), and that database is shown
// when there is one.
func suiteView(it Item, verdicts, bases, dbs []string, gold, pred, notes string) *SuiteView {
	var note map[string]string
	if notes != "" {
		json.Unmarshal([]byte(notes), &note) // a note that cannot be read is left out
	}
	var first *SuiteView
	for i, v := range verdicts {
		if dbs[i] == "" {
			continue
		}
		sv := &SuiteView{Metric: v, DB: dbs[i], Note: note[v]}
		// The item's own database separates the pair exactly when the
		// one-database verdict is 0: the loop starts there.
		for _, mv := range it.Values {
			if mv.Metric == bases[i] && mv.Value.Valid && mv.Value.Float64 < 1 {
				sv.Own = true
			}
		}
		if !sv.Own {
			sv.Gold, sv.Pred = resultView(gold), resultView(pred)
			return sv
		}
		if first == nil {
			first = sv
		}
	}
	return first
}

// diffs pairs each sweep run's cells with its first cell, and each later
// run with the first (cell with cell of the same id, for sweeps).
func (rep *Report) diffs(ctx context.Context) error {
	type pair struct{ a, b string }
	var pairs []pair
	for _, r := range rep.Runs {
		for _, c := range r.Cells[min(1, len(r.Cells)):] {
			pairs = append(pairs, pair{r.Dir + "@" + r.Cells[0], r.Dir + "@" + c})
		}
	}
	if len(rep.Runs) > 1 {
		first := rep.Runs[0]
		for _, r := range rep.Runs[1:] {
			switch {
			case len(first.Cells) == 0 && len(r.Cells) == 0:
				pairs = append(pairs, pair{first.Dir, r.Dir})
			case len(first.Cells) > 0 && len(r.Cells) > 0:
				n := 0
				for _, c := range r.Cells {
					if slices.Contains(first.Cells, c) {
						pairs = append(pairs, pair{first.Dir + "@" + c, r.Dir + "@" + c})
						n++
					}
				}
				if n == 0 {
					rep.DiffNotes = append(rep.DiffNotes, fmt.Sprintf("%s and %s share no sweep cell: compare cells with evalflow compare RUN@CELL RUN@CELL", first.Dir, r.Dir))
				}
			default:
				rep.DiffNotes = append(rep.DiffNotes, fmt.Sprintf("%s and %s: one is a sweep and the other is not; compare a cell with evalflow compare RUN@CELL RUN", first.Dir, r.Dir))
			}
		}
	}
	for _, p := range pairs {
		a, errA := compare.OpenRun(p.a)
		b, errB := compare.OpenRun(p.b)
		if err := errors.Join(errA, errB); err != nil {
			// An unfinished run has no items.parquet to pair yet.
			rep.DiffNotes = append(rep.DiffNotes, fmt.Sprintf("%s vs %s not compared: %v", p.a, p.b, err))
			continue
		}
		res, err := compare.Compare(ctx, a, b, compare.Options{Resamples: DiffResamples, Seed: 1, Alpha: compare.DefaultAlpha})
		if err != nil {
			var ae *compare.ArgError
			if errors.As(err, &ae) {
				rep.DiffNotes = append(rep.DiffNotes, fmt.Sprintf("%s vs %s not compared: %v", p.a, p.b, err))
				continue
			}
			return fmt.Errorf("comparing %s with %s: %w", p.a, p.b, err)
		}
		for _, w := range res.Warnings {
			rep.DiffNotes = append(rep.DiffNotes, fmt.Sprintf("%s vs %s: %s", p.a, p.b, w))
		}
		rep.Diffs = append(rep.Diffs, Diff{A: p.a, B: p.b, Res: res})
	}
	return nil
}

// key is a number's data-key: a JSON array naming where it came from.
func key(parts ...any) string {
	b, _ := json.Marshal(parts)
	return string(b)
}

// jsonText shows a JSON value as a person reads it: compact, without the
// \u003c escapes a JSON encoder may have written (the page escapes it).
func jsonText(raw json.RawMessage) string {
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return string(raw)
	}
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return string(raw)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

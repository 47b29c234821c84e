// Package compare compares two evaluation runs, or two cells of sweep
// runs, item by item: it pairs items by id and, per metric (and per group
// of a column), reports the means, their paired difference with a
// bootstrap interval, a paired significance test and Holm's adjustment over
// every test of one invocation (docs/cli.md, "evalflow compare"). The
// statistics themselves live in package stats; forward.go re-exports them.
package compare

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/evalflow/evalflow/stats"
	"io"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/evalflow/evalflow/dataset"
	"github.com/evalflow/evalflow/dsl"
	"github.com/evalflow/evalflow/metrics"
	"github.com/evalflow/evalflow/rundir"
	"github.com/evalflow/evalflow/sinks"
	"github.com/evalflow/evalflow/table"
)

// Defaults of [Options].
const (
	DefaultAlpha     = 0.05
	DefaultResamples = 10000
	// CILevel is the confidence level of the bootstrap interval of every
	// row; -alpha sets the significance threshold only.
	CILevel = 0.95
)

// Test names a [Row] carries in Test.
const (
	TestMcNemar = "mcnemar_exact"
	// TestNone means no pair was left to test: the p-value is undefined.
	TestNone = "none"
	// The Wilcoxon names are "wilcoxon_" + the method [Wilcoxon] reports:
	// wilcoxon_exact, wilcoxon_normal, wilcoxon_none.
	testWilcoxon = "wilcoxon_"
)

// RunError means a run directory could not be read: it does not exist, is
// not a run, or has not finished (no items.parquet yet). The CLI exits 2.
type RunError struct {
	Spec string // the argument as given
	Err  error
}

func (e *RunError) Error() string { return e.Err.Error() }
func (e *RunError) Unwrap() error { return e.Err }

// ArgError means the arguments name something the runs do not hold: a
// cell, a metric or a column. The CLI exits 1.
type ArgError struct{ Msg string }

func (e *ArgError) Error() string { return e.Msg }

func argErrorf(format string, args ...any) error {
	return &ArgError{Msg: fmt.Sprintf(format, args...)}
}

// Run is one side of a comparison: a finished run directory, or one cell of
// a sweep run. OpenRun reads its manifest and the schema of items.parquet;
// the items themselves are read by [Compare]. The zero value is not usable.
type Run struct {
	Spec string // the argument as given: DIR or DIR@CELL
	Dir  string
	// Cell is the selected cell's full id; empty for a run without a sweep.
	Cell string

	RunID, Pipeline, Status, DatasetSHA256 string

	// Schema is items.parquet's columns; Metrics the metric columns among
	// them (the float columns between duration_ms and metric_errors).
	Schema  sinks.Schema
	Metrics []string

	binary []string // manifest binary_metrics: the metric columns declared 0/1
}

// Label names the run in output: its directory, and "@cell" for a cell of
// a sweep.
func (r *Run) Label() string {
	if r.Cell == "" {
		return r.Dir
	}
	return r.Dir + "@" + r.Cell
}

// OpenRun opens the run named by spec: a run directory, or RUN_DIR@CELL for
// one cell of a sweep run, where CELL is the cell's full id or a
// comma-separated subset of its name=value pairs that matches exactly one
// cell. A path that exists as a directory is taken whole even if it holds
// an "@".
//
// Errors are a *RunError when the directory cannot be read as a finished
// run and an *ArgError when the cell selection is wrong (a sweep run without
// @CELL, a selector matching no cell or several, @CELL on a run without a
// sweep).
func OpenRun(spec string) (*Run, error) {
	dir, sel, hasSel := spec, "", false
	if st, err := os.Stat(spec); err != nil || !st.IsDir() {
		if i := strings.LastIndexByte(spec, '@'); i >= 0 {
			dir, sel, hasSel = spec[:i], spec[i+1:], true
		}
	}
	runErr := func(format string, args ...any) error {
		return &RunError{Spec: spec, Err: fmt.Errorf(format, args...)}
	}
	st, err := os.Stat(dir)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return nil, runErr("%s: no such run directory", dir)
	case err != nil:
		return nil, runErr("%s: %v", dir, err)
	case !st.IsDir():
		return nil, runErr("%s is not a run directory (it is a file)", dir)
	}
	m, err := rundir.Previous(dir)
	if err != nil {
		return nil, runErr("%v", err)
	}
	if m == nil {
		return nil, runErr("%s is not a run directory (no %s)", dir, rundir.ManifestName)
	}
	r := &Run{Spec: spec, Dir: dir, RunID: m.RunID, Pipeline: m.Pipeline, Status: m.Status,
		DatasetSHA256: m.Dataset.SHA256, binary: m.BinaryMetrics}

	items := filepath.Join(dir, rundir.ItemsFile)
	if _, err := os.Stat(items); errors.Is(err, os.ErrNotExist) {
		parts, _ := filepath.Glob(filepath.Join(dir, rundir.PartsDir, "items-*.parquet"))
		if len(parts) > 0 || m.Status == "running" {
			return nil, runErr("run not finished: %s has no %s yet (manifest status %q, %d part files in %s/); wait for the run to end, or if it was interrupted run the same `evalflow run` command again to finish it",
				dir, rundir.ItemsFile, m.Status, len(parts), rundir.PartsDir)
		}
		return nil, runErr("%s has no %s (manifest status %q)", dir, rundir.ItemsFile, m.Status)
	}
	pr, err := sinks.OpenParquet(items)
	if err != nil {
		return nil, runErr("%s: %v", items, err)
	}
	r.Schema = pr.Schema()
	pr.Close()
	col := colIndex(r.Schema)
	for _, need := range []string{"id", "status"} {
		if _, ok := col[need]; !ok {
			return nil, runErr("%s is not an evalflow items file (no %s column)", items, need)
		}
	}
	r.Metrics = metricColumns(r.Schema)

	switch {
	case len(m.Cells) > 0:
		if i, ok := col["cell"]; !ok || r.Schema[i].Type != table.TypeString {
			return nil, runErr("%s lists %d sweep cells but %s has no string column \"cell\"", dir, len(m.Cells), items)
		}
		if !hasSel {
			return nil, argErrorf("%s is a sweep run of %d cells; choose one with %s@CELL:\n%s", dir, len(m.Cells), dir, cellList(dir, m.Cells))
		}
		c, err := selectCell(dir, sel, m.Cells)
		if err != nil {
			return nil, err
		}
		r.Cell = c.ID
	case hasSel:
		return nil, argErrorf("%s is not a sweep run (its manifest lists no cells); drop @%s", dir, sel)
	}
	return r, nil
}

func colIndex(s sinks.Schema) map[string]int {
	m := make(map[string]int, len(s))
	for i, c := range s {
		if _, dup := m[c.Name]; !dup {
			m[c.Name] = i
		}
	}
	return m
}

// metricColumns returns the float columns after duration_ms and before
// metric_errors (rundir.ItemSchema's layout).
func metricColumns(s sinks.Schema) []string {
	var out []string
	in := false
	for _, c := range s {
		switch {
		case c.Name == "duration_ms":
			in = true
		case c.Name == "metric_errors":
			return out
		case in && c.Type == table.TypeFloat:
			out = append(out, c.Name)
		}
	}
	return out
}

// cellPairs returns a cell's swept values as strings: a JSON string as its
// text, anything else as its compact JSON. A cell without variables falls
// back to the name=value pairs of its id.
func cellPairs(c rundir.ManifestCell) map[string]string {
	out := map[string]string{}
	if len(c.Variables) > 0 {
		for k, raw := range c.Variables {
			var s string
			if json.Unmarshal(raw, &s) == nil {
				out[k] = s
				continue
			}
			var v any
			if json.Unmarshal(raw, &v) == nil {
				b, _ := json.Marshal(v)
				out[k] = string(b)
			} else {
				out[k] = string(raw)
			}
		}
		return out
	}
	for _, kv := range strings.Split(c.ID, ",") {
		if k, v, ok := strings.Cut(kv, "="); ok {
			out[k] = v
		}
	}
	return out
}

// SelectCell resolves sel against a run's cells (its manifest's): a
// cell's full id, or name=value pairs that exactly one cell has.
func SelectCell(dir, sel string, cells []rundir.ManifestCell) (rundir.ManifestCell, error) {
	return selectCell(dir, sel, cells)
}

// selectCell resolves sel: a cell's full id, or name=value pairs that
// exactly one cell has.
func selectCell(dir, sel string, cells []rundir.ManifestCell) (rundir.ManifestCell, error) {
	for _, c := range cells {
		if c.ID == sel {
			return c, nil
		}
	}
	want := map[string]string{}
	for _, kv := range strings.Split(sel, ",") {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return rundir.ManifestCell{}, argErrorf("%s@%s: %q is not name=value; write the cell's id or name=value pairs separated by commas, e.g. %s@%s",
				dir, sel, kv, dir, cells[0].ID)
		}
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		if prev, dup := want[k]; dup && prev != v {
			return rundir.ManifestCell{}, argErrorf("%s@%s: %s is given twice (%s and %s); a cell has one value per variable", dir, sel, k, prev, v)
		}
		want[k] = v
	}
	pairs := make([]map[string]string, len(cells))
	names := map[string]bool{}
	for i, c := range cells {
		pairs[i] = cellPairs(c)
		for k := range pairs[i] {
			names[k] = true
		}
	}
	swept := slices.Sorted(maps.Keys(names))
	for _, k := range slices.Sorted(maps.Keys(want)) {
		if !names[k] {
			hint := ""
			if s := dsl.Suggest(k, swept); s != "" {
				hint = fmt.Sprintf(" Did you mean %q?", s)
			}
			return rundir.ManifestCell{}, argErrorf("%s@%s: the sweep has no variable %q.%s Swept: %s", dir, sel, k, hint, strings.Join(swept, ", "))
		}
	}
	var match []rundir.ManifestCell
	for i, c := range cells {
		ok := true
		for k, v := range want {
			if got, has := pairs[i][k]; !has || got != v {
				ok = false
				break
			}
		}
		if ok {
			match = append(match, c)
		}
	}
	switch len(match) {
	case 1:
		return match[0], nil
	case 0:
		return rundir.ManifestCell{}, argErrorf("%s@%s matches no cell of %s; its cells:\n%s", dir, sel, dir, cellList(dir, cells))
	}
	return rundir.ManifestCell{}, argErrorf("%s@%s matches %d cells; add name=value pairs to choose one:\n%s", dir, sel, len(match), cellList(dir, match))
}

func cellList(dir string, cells []rundir.ManifestCell) string {
	var b strings.Builder
	for i, c := range cells {
		if i > 0 {
			b.WriteByte('\n')
		}
		fmt.Fprintf(&b, "  %s@%s", dir, c.ID)
	}
	return b.String()
}

// DeclaredBinary reports whether the metric column name is a metric declared 0/1:
// the registered metric of that name has a Range starting with "{0,1}"
// (metrics.Info.Binary). The declaration decides, not the values a run
// observed. A column renamed with `as` is not a registered name; [Compare]
// also takes the runs' manifest binary_metrics, which resolve it.
func DeclaredBinary(name string) bool {
	d, ok := metrics.Default.Lookup(name)
	return ok && d.Info.Binary()
}

// binary reports whether metric m is compared as 0/1: declared so by its
// registered name, or listed in either run's manifest binary_metrics.
func binary(m string, a, b *Run) bool {
	return DeclaredBinary(m) || slices.Contains(a.binary, m) || slices.Contains(b.binary, m)
}

// Options say what [Compare] computes.
type Options struct {
	// Metrics are the metric columns to compare, in order; empty means
	// every metric column both runs have, in A's order.
	Metrics []string
	// By is an items.parquet column (string, int or bool) to break every
	// metric down by; the group of a pair is A's value. Empty: no groups.
	By string
	// Alpha is the significance threshold for p_holm (DefaultAlpha if 0).
	Alpha float64
	// Seed seeds every bootstrap interval.
	Seed uint64
	// Resamples is the number of bootstrap resamples (DefaultResamples if 0).
	Resamples int
	// FailIfWorse are metrics gating the comparison: see Result.Failures.
	FailIfWorse []string
}

// Flip is one item whose metric value differs between A and B.
type Flip struct {
	ID   string
	A, B float64
}

// Row is the comparison of one metric over the pairs of one group (or of
// every pair, when Grouped is false). Undefined numbers are NaN.
type Row struct {
	Metric string
	// Grouped rows have GroupBy (the -by column) and Group (A's value,
	// "" when null); the overall row of a metric has neither.
	Grouped       bool
	GroupBy       string
	Group         string
	Binary        bool // compared as 0/1 (McNemar)
	NPairs        int  // pairs tested
	NDropped      int  // pairs dropped: error/cancelled on a side, or a null value
	NOnlyA        int  // items of the group only A has
	NOnlyB        int  // items of the group only B has
	AMean, BMean  float64
	Diff          float64 // mean of b − a over the pairs
	CILow, CIHigh float64
	Test          string
	P, PHolm      float64
	Significant   bool // PHolm < Alpha
	// Better and Worse are the pairs whose value went up or down from A to
	// B, in A's item order.
	Better, Worse []Flip
}

// Result is a comparison of run B against run A.
type Result struct {
	A, B      *Run
	Alpha     float64
	Seed      uint64
	Resamples int
	By        string
	// Rows: per metric the overall row, then (with By) one row per group
	// in sorted group order. PHolm is adjusted over every row's P.
	Rows []Row
	// Paired is the number of ids both sides have; OnlyA and OnlyB list
	// the ids only one side has, in that side's order.
	Paired       int
	OnlyA, OnlyB []string
	// Warnings are things a reader should know that do not stop the
	// comparison (different datasets, the same run twice, a declared 0/1
	// metric with other values).
	Warnings []string
	// Failures are the rows that fail a FailIfWorse gate: the metric's
	// diff < 0 with PHolm < Alpha, on its overall row, or (with By) on any
	// of its rows.
	Failures []Row
}

// side is one run's items, reduced to what the comparison reads.
type side struct {
	ids    []string
	index  map[string]int
	usable []bool      // status is neither error nor cancelled
	group  []string    // the By column's value as text ("" when null)
	byCol  bool        // the run has the By column
	vals   [][]float64 // per compared metric; NaN for null
	dups   int
}

// load reads r's items (of r.Cell for a sweep) with the metric columns
// mets and the group column by (may be empty or absent), streaming the
// file a row group at a time.
func (r *Run) load(ctx context.Context, mets []string, by string) (*side, error) {
	path := filepath.Join(r.Dir, rundir.ItemsFile)
	pr, err := sinks.OpenParquet(path)
	if err != nil {
		return nil, &RunError{Spec: r.Spec, Err: fmt.Errorf("%s: %v", path, err)}
	}
	defer pr.Close()
	col := colIndex(pr.Schema())
	idC, stC := col["id"], col["status"]
	cellC, hasCell := col["cell"]
	byC, hasBy := col[by]
	hasBy = hasBy && by != ""
	metC := make([]int, len(mets))
	for i, m := range mets {
		metC[i] = col[m]
	}
	s := &side{index: map[string]int{}, vals: make([][]float64, len(mets)), byCol: hasBy}
	for n := 0; ; n++ {
		if n%4096 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		row, err := pr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, &RunError{Spec: r.Spec, Err: err}
		}
		if r.Cell != "" && hasCell {
			if c, _ := row[cellC].(string); c != r.Cell {
				continue
			}
		}
		id, _ := row[idC].(string)
		if _, dup := s.index[id]; dup {
			s.dups++
			continue
		}
		s.index[id] = len(s.ids)
		s.ids = append(s.ids, id)
		st, _ := row[stC].(string)
		s.usable = append(s.usable, st != "error" && st != "cancelled")
		g := ""
		if hasBy {
			g = dataset.Text(row[byC]) // as aggregates.parquet renders groups
		}
		s.group = append(s.group, g)
		for i, c := range metC {
			v, ok := row[c].(float64)
			if !ok {
				v = math.NaN()
			}
			s.vals[i] = append(s.vals[i], v)
		}
	}
	return s, nil
}

// Compare pairs B's items with A's by id and compares every selected metric
// (see Options): per metric and group, the means over the usable pairs,
// their mean difference b − a with a paired percentile bootstrap interval
// ([PairedBootstrapCI] at CILevel), and a two-sided p-value — exact
// McNemar ([McNemarExact]) for a metric declared 0/1 ([DeclaredBinary], or
// the manifests' binary_metrics), else the
// Wilcoxon signed-rank test ([Wilcoxon]) — then Holm's adjustment
// ([Holm]) over every row.
//
// A name in Options that neither run has (a metric, the By column) is an
// *ArgError with a suggestion; a file that cannot be read is a *RunError.
// Compare checks ctx while it reads and between rows.
func Compare(ctx context.Context, a, b *Run, o Options) (*Result, error) {
	if o.Alpha == 0 {
		o.Alpha = DefaultAlpha
	}
	if o.Resamples == 0 {
		o.Resamples = DefaultResamples
	}
	if !(o.Alpha > 0 && o.Alpha < 1) {
		return nil, argErrorf("-alpha %v: want a level between 0 and 1, e.g. 0.05", o.Alpha)
	}
	if o.Resamples < 1 {
		return nil, argErrorf("-resamples %d: want at least 1", o.Resamples)
	}
	res := &Result{A: a, B: b, Alpha: o.Alpha, Seed: o.Seed, Resamples: o.Resamples, By: o.By}
	warn := func(format string, args ...any) { res.Warnings = append(res.Warnings, fmt.Sprintf(format, args...)) }

	mets, err := chooseMetrics(a, b, o.Metrics, warn)
	if err != nil {
		return nil, err
	}
	for _, g := range o.FailIfWorse {
		if !slices.Contains(mets, g) {
			return nil, argErrorf("-fail-if-worse %s: %s is not among the compared metrics (%s)%s A gate needs its metric compared: add -metric %s, or name one of those",
				g, g, strings.Join(mets, ", "), sentence(suggest(g, mets)), g)
		}
	}
	if o.By != "" {
		if err := checkBy(a, o.By); err != nil {
			return nil, err
		}
	}
	if same(a, b) {
		warn("A and B are the same run (%s): every difference is 0", a.Label())
	} else if a.DatasetSHA256 != "" && b.DatasetSHA256 != "" && a.DatasetSHA256 != b.DatasetSHA256 {
		warn("A and B ran on different datasets (dataset sha256 %.12s… and %.12s…): only items with the same id are paired", a.DatasetSHA256, b.DatasetSHA256)
	}
	for _, r := range []*Run{a, b} {
		if r.Status != "" && r.Status != "complete" {
			warn("%s: the run's status is %q, not \"complete\"", r.Label(), r.Status)
		}
	}

	sa, err := a.load(ctx, mets, o.By)
	if err != nil {
		return nil, err
	}
	sb, err := b.load(ctx, mets, o.By)
	if err != nil {
		return nil, err
	}
	for _, x := range []struct {
		r *Run
		s *side
	}{{a, sa}, {b, sb}} {
		if x.s.dups > 0 {
			warn("%s: %d rows repeat an id already seen; the first row of each id is used", x.r.Label(), x.s.dups)
		}
	}

	// Pairs in A's order; bIdx[i] is B's row of A's row i, -1 when B has
	// no such id.
	bIdx := make([]int, len(sa.ids))
	for i, id := range sa.ids {
		j, ok := sb.index[id]
		if !ok {
			j = -1
			res.OnlyA = append(res.OnlyA, id)
		} else {
			res.Paired++
		}
		bIdx[i] = j
	}
	for _, id := range sb.ids {
		if _, ok := sa.index[id]; !ok {
			res.OnlyB = append(res.OnlyB, id)
		}
	}

	var groups []string
	if o.By != "" {
		groups = groupOrder(sa.group, columnType(a.Schema, o.By))
	}
	for mi, m := range mets {
		bin := binary(m, a, b)
		if bin && !zeroOne(sa.vals[mi]) || bin && !zeroOne(sb.vals[mi]) {
			warn("%s is declared 0/1 but has other values; it is compared with the Wilcoxon signed-rank test", m)
			bin = false
		}
		res.Rows = append(res.Rows, compareRow(m, bin, sa, sb, bIdx, mi, nil, o))
		for _, g := range groups {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			res.Rows = append(res.Rows, compareRow(m, bin, sa, sb, bIdx, mi, &g, o))
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
	}

	var ps []float64
	var at []int
	for i, r := range res.Rows {
		if !math.IsNaN(r.P) {
			ps, at = append(ps, r.P), append(at, i)
		}
	}
	for k, p := range stats.Holm(ps) {
		r := &res.Rows[at[k]]
		r.PHolm = p
		r.Significant = p < o.Alpha
	}
	for _, g := range o.FailIfWorse {
		for _, r := range res.Rows {
			// Every row of the metric counts: its overall row, and
			// with By its group rows too.
			if r.Metric == g && r.Diff < 0 && r.Significant {
				res.Failures = append(res.Failures, r)
			}
		}
	}
	return res, nil
}

func suggest(name string, candidates []string) string {
	if s := dsl.Suggest(name, candidates); s != "" {
		return fmt.Sprintf(". Did you mean %q?", s)
	}
	return ""
}

// chooseMetrics resolves the requested metrics against both runs' metric
// columns.
func chooseMetrics(a, b *Run, want []string, warn func(string, ...any)) ([]string, error) {
	if len(want) == 0 {
		var both []string
		for _, m := range a.Metrics {
			if slices.Contains(b.Metrics, m) {
				both = append(both, m)
			} else {
				warn("metric %s is only in A; it is not compared", m)
			}
		}
		for _, m := range b.Metrics {
			if !slices.Contains(a.Metrics, m) {
				warn("metric %s is only in B; it is not compared", m)
			}
		}
		if len(both) == 0 {
			return nil, argErrorf("A (%s) and B (%s) have no metric column in common (A: %s; B: %s)",
				a.Label(), b.Label(), orNone(a.Metrics), orNone(b.Metrics))
		}
		return both, nil
	}
	var out []string
	for _, m := range want {
		inA, inB := slices.Contains(a.Metrics, m), slices.Contains(b.Metrics, m)
		switch {
		case inA && inB:
			if !slices.Contains(out, m) {
				out = append(out, m)
			}
		case inA:
			return nil, argErrorf("-metric %s: B (%s) has no metric %s (its metrics: %s)", m, b.Label(), m, orNone(b.Metrics))
		case inB:
			return nil, argErrorf("-metric %s: A (%s) has no metric %s (its metrics: %s)", m, a.Label(), m, orNone(a.Metrics))
		default:
			all := append(slices.Clone(a.Metrics), b.Metrics...)
			return nil, argErrorf("-metric %s: unknown metric%s The runs' metrics: %s", m, sentence(suggest(m, all)), orNone(dedup(all)))
		}
	}
	return out, nil
}

// sentence turns suggest's ". Did you mean …?" into " … Did you mean …?"
// ending a sentence, or "." when there is no suggestion.
func sentence(s string) string {
	if s == "" {
		return "."
	}
	return s
}

func orNone(xs []string) string {
	if len(xs) == 0 {
		return "none"
	}
	return strings.Join(xs, ", ")
}

func dedup(xs []string) []string {
	var out []string
	for _, x := range xs {
		if !slices.Contains(out, x) {
			out = append(out, x)
		}
	}
	return out
}

// checkBy checks that col is a column of A that can hold groups.
func checkBy(a *Run, col string) error {
	var ok []string
	for _, c := range a.Schema {
		if c.Type == table.TypeString || c.Type == table.TypeInt || c.Type == table.TypeBool {
			ok = append(ok, c.Name)
		}
	}
	if slices.Contains(ok, col) {
		return nil
	}
	if t := columnType(a.Schema, col); t != table.TypeNull {
		return argErrorf("-by %s: the column is %s; group by a string, int or bool column (%s)", col, t, strings.Join(ok, ", "))
	}
	return argErrorf("-by %s: A (%s) has no column %s%s Columns: %s", col, a.Label(), col, sentence(suggest(col, ok)), strings.Join(ok, ", "))
}

// columnType returns col's type in s, TypeNull when s has no such column.
func columnType(s sinks.Schema, col string) table.Type {
	for _, c := range s {
		if c.Name == col {
			return c.Type
		}
	}
	return table.TypeNull
}

// groupOrder returns the distinct values, numerically sorted for an int
// column, else as text; the null group ("") last.
func groupOrder(vals []string, t table.Type) []string {
	seen := map[string]bool{}
	var out []string
	for _, v := range vals {
		if !seen[v] {
			seen[v] = true
			out = append(out, v)
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		x, y := out[i], out[j]
		if x == "" || y == "" {
			return y == "" && x != ""
		}
		if t == table.TypeInt {
			xi, _ := strconv.ParseInt(x, 10, 64)
			yi, _ := strconv.ParseInt(y, 10, 64)
			return xi < yi
		}
		return x < y
	})
	return out
}

func same(a, b *Run) bool {
	if a.Cell != b.Cell {
		return false
	}
	x, err1 := filepath.EvalSymlinks(a.Dir)
	y, err2 := filepath.EvalSymlinks(b.Dir)
	if err1 != nil || err2 != nil {
		return filepath.Clean(a.Dir) == filepath.Clean(b.Dir)
	}
	x, _ = filepath.Abs(x)
	y, _ = filepath.Abs(y)
	return x == y
}

func zeroOne(vs []float64) bool {
	for _, v := range vs {
		if !math.IsNaN(v) && v != 0 && v != 1 {
			return false
		}
	}
	return true
}

// compareRow computes one row: metric mi over the pairs whose A group is
// *group (every pair when group is nil).
func compareRow(m string, bin bool, sa, sb *side, bIdx []int, mi int, group *string, o Options) Row {
	r := Row{Metric: m, Binary: bin, AMean: math.NaN(), BMean: math.NaN(), Diff: math.NaN(),
		CILow: math.NaN(), CIHigh: math.NaN(), P: math.NaN(), PHolm: math.NaN(), Test: TestNone,
		Better: []Flip{}, Worse: []Flip{}}
	if group != nil {
		r.Grouped, r.GroupBy, r.Group = true, o.By, *group
	}
	in := func(g string) bool { return group == nil || g == *group }
	var av, bv []float64
	for i, j := range bIdx {
		if !in(sa.group[i]) {
			continue
		}
		if j < 0 {
			r.NOnlyA++
			continue
		}
		x, y := sa.vals[mi][i], sb.vals[mi][j]
		if !sa.usable[i] || !sb.usable[j] || math.IsNaN(x) || math.IsNaN(y) {
			r.NDropped++
			continue
		}
		av, bv = append(av, x), append(bv, y)
		switch {
		case y > x:
			r.Better = append(r.Better, Flip{ID: sa.ids[i], A: x, B: y})
		case y < x:
			r.Worse = append(r.Worse, Flip{ID: sa.ids[i], A: x, B: y})
		}
	}
	for j, id := range sb.ids {
		if _, ok := sa.index[id]; !ok && (group == nil || sb.byCol && sb.group[j] == *group) {
			r.NOnlyB++
		}
	}
	r.NPairs = len(av)
	if r.NPairs == 0 {
		return r
	}
	diffs := make([]float64, len(av))
	var sumA, sumB, sumD float64
	for i := range av {
		diffs[i] = bv[i] - av[i]
		sumA += av[i]
		sumB += bv[i]
		sumD += diffs[i]
	}
	n := float64(r.NPairs)
	r.AMean, r.BMean, r.Diff = sumA/n, sumB/n, sumD/n
	r.CILow, r.CIHigh = stats.PairedBootstrapCI(av, bv, o.Resamples, o.Seed, CILevel)
	if bin {
		// b: only A is right (a=1, b=0); c: only B is right.
		r.P, r.Test = stats.McNemarExact(len(r.Worse), len(r.Better)), TestMcNemar
	} else {
		var method string
		r.P, method = stats.Wilcoxon(diffs)
		r.Test = testWilcoxon + method
	}
	return r
}

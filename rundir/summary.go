package rundir

import (
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/evalflow/evalflow/nodes/aggregate"
)

// WriteSummary renders the summary table (markdown) to w: items, status
// counts, time, every metric's overall mean, per-group tables and error
// classes.
func WriteSummary(w io.Writer, m *Manifest, rows []aggregate.Row) {
	fmt.Fprintf(w, "# evalflow run %s\n\n", m.RunID)
	fmt.Fprintf(w, "pipeline `%s` · status **%s** · %d items (%s) · %s\n\n",
		m.Pipeline, m.Status, m.Counts.Items, StatusCounts(m.Counts),
		(time.Duration(m.Seconds * float64(time.Second))).Round(time.Millisecond))
	if len(m.Cells) > 0 {
		WriteCellTable(w, rows, true)
		fmt.Fprintln(w)
	}
	var overall, groups []aggregate.Row
	for _, r := range rows {
		if r.Cell != "" {
			continue // in the cell table
		}
		if r.Group == "all" {
			overall = append(overall, r)
		} else {
			groups = append(groups, r)
		}
	}
	if len(overall) > 0 {
		fmt.Fprintf(w, "| metric | mean | 95%% CI | n | errors | nulls |\n|---|---:|---|---:|---:|---:|\n")
		for _, r := range overall {
			fmt.Fprintf(w, "| %s | %s | %s | %d | %d | %d |\n", r.Metric, fmtMean(r.Mean), FormatCI(r), r.N, r.Errors, r.Nulls)
		}
		fmt.Fprintln(w)
	}
	if lines := SuiteLines(rows); len(lines) > 0 {
		for _, l := range lines {
			fmt.Fprintln(w, l)
		}
		fmt.Fprintln(w)
	}
	if len(groups) > 0 {
		by := map[string][]aggregate.Row{}
		var keys []string
		for _, r := range groups {
			if _, ok := by[r.Group]; !ok {
				keys = append(keys, r.Group)
			}
			by[r.Group] = append(by[r.Group], r)
		}
		for _, k := range keys {
			fmt.Fprintf(w, "by %s:\n\n| %s | metric | mean | n |\n|---|---|---:|---:|\n", k, k)
			for _, r := range by[k] {
				fmt.Fprintf(w, "| %s | %s | %s | %d |\n", r.Value, r.Metric, fmtMean(r.Mean), r.N)
			}
			fmt.Fprintln(w)
		}
	}
	if c := m.Counts; c.InputTokens+c.OutputTokens > 0 || c.CacheHits > 0 {
		fmt.Fprintf(w, "model calls: %d input + %d output tokens, $%.4f, %d cache hits\n\n", c.InputTokens, c.OutputTokens, c.Cost, c.CacheHits)
	}
	if len(m.Counts.Classes) > 0 {
		var cs []string
		for c := range m.Counts.Classes {
			cs = append(cs, c)
		}
		sort.Strings(cs)
		var parts []string
		for _, c := range cs {
			parts = append(parts, fmt.Sprintf("%s %d", c, m.Counts.Classes[c]))
		}
		fmt.Fprintf(w, "final-attempt errors: %s\n", strings.Join(parts, ", "))
	}
}

// SuiteLines are the summary's test-suite lines, one per test-suite
// verdict computed for some item (an overall row with SuiteOf and a value
// or an error): the one-database mean and the suite mean side by side,
// and how many items the suite flipped:
//
//	test suite: ex 0.6000 (own database, n 30) · ex_suite 0.5000 (whole suite, n 30) · the suite flipped 3 items (ex 1 → ex_suite 0)
//
// None for a run without test suites (or a sweep: its cell table has a
// column of flips).
func SuiteLines(rows []aggregate.Row) []string {
	var out []string
	for _, r := range rows {
		if r.Group != "all" || r.Cell != "" || r.SuiteOf == "" || r.N+r.Errors == 0 {
			continue
		}
		one := "–"
		for _, b := range rows {
			if b.Group == "all" && b.Cell == "" && b.Metric == r.SuiteOf {
				one = fmt.Sprintf("%s (own database, n %d)", fmtMean(b.Mean), b.N)
			}
		}
		items := "items"
		if r.Flipped == 1 {
			items = "item"
		}
		out = append(out, fmt.Sprintf("test suite: %s %s · %s %s (whole suite, n %d) · the suite flipped %d %s (%s 1 → %s 0)",
			r.SuiteOf, one, r.Metric, fmtMean(r.Mean), r.N, r.Flipped, items, r.SuiteOf, r.Metric))
	}
	return out
}

// FormatCI renders a row's confidence interval as "[0.7123, 0.8456]", or
// "–" when it has none.
func FormatCI(r aggregate.Row) string {
	if math.IsNaN(r.CILow) || math.IsNaN(r.CIHigh) || r.CIMethod == "" {
		return "–"
	}
	return fmt.Sprintf("[%.4f, %.4f]", r.CILow, r.CIHigh)
}

// WriteCellTable renders a sweep's cell × metric table of overall means
// with their 95% intervals, as markdown or aligned text.
func WriteCellTable(w io.Writer, rows []aggregate.Row, markdown bool) {
	var cells, metrics []string
	seenCell, seenMetric := map[string]bool{}, map[string]bool{}
	val := map[[2]string]aggregate.Row{}
	// A test-suite verdict (ex_suite) is followed by a column of the items
	// its suite flipped in each cell ("ex_suite flipped").
	flips := map[string]string{}   // flips column → its verdict's column
	suiteOf := map[string]string{} // verdict's column → its one-database column
	for _, r := range rows {
		if r.Group != "all" || r.Cell == "" {
			continue
		}
		if !seenCell[r.Cell] {
			seenCell[r.Cell] = true
			cells = append(cells, r.Cell)
		}
		if !seenMetric[r.Metric] {
			seenMetric[r.Metric] = true
			metrics = append(metrics, r.Metric)
		}
		if r.SuiteOf != "" && r.N+r.Errors > 0 {
			if f := r.Metric + " flipped"; flips[f] == "" {
				flips[f] = r.Metric
				seenMetric[f] = true
				metrics = append(metrics, f)
			}
		}
		val[[2]string{r.Cell, r.Metric}] = r
		if r.SuiteOf != "" {
			suiteOf[r.Metric] = r.SuiteOf
		}
	}
	// A test-suite verdict and its flips stand right after the
	// one-database metric they refine, whichever cell showed them first.
	if len(suiteOf) > 0 {
		var ordered []string
		placed := map[string]bool{}
		add := func(m string) {
			if !placed[m] {
				placed[m] = true
				ordered = append(ordered, m)
			}
		}
		for _, m := range metrics {
			if _, ok := suiteOf[m]; ok || flips[m] != "" {
				continue
			}
			add(m)
			for _, v := range metrics {
				if suiteOf[v] == m {
					add(v)
					if f := v + " flipped"; flips[f] != "" {
						add(f)
					}
				}
			}
		}
		for _, m := range metrics {
			add(m)
		}
		metrics = ordered
	}
	cellText := func(c, m string) string {
		if v, ok := flips[m]; ok {
			r, ok := val[[2]string{c, v}]
			if !ok || r.N+r.Errors == 0 {
				return "–"
			}
			return fmt.Sprint(r.Flipped)
		}
		r, ok := val[[2]string{c, m}]
		if !ok {
			return "–"
		}
		if ci := FormatCI(r); ci != "–" {
			return fmtMean(r.Mean) + " " + ci
		}
		return fmtMean(r.Mean)
	}
	if markdown {
		fmt.Fprintf(w, "| cell | %s |\n|---|%s\n", strings.Join(metrics, " | "), strings.Repeat("---:|", len(metrics)))
		for _, c := range cells {
			parts := make([]string, len(metrics))
			for i, m := range metrics {
				parts[i] = cellText(c, m)
			}
			fmt.Fprintf(w, "| %s | %s |\n", c, strings.Join(parts, " | "))
		}
		return
	}
	width := len("cell")
	for _, c := range cells {
		width = max(width, len(c))
	}
	cw := make([]int, len(metrics))
	for i, m := range metrics {
		cw[i] = len(m)
		for _, c := range cells {
			cw[i] = max(cw[i], len(cellText(c, m)))
		}
	}
	fmt.Fprintf(w, "  %-*s", width, "cell")
	for i, m := range metrics {
		fmt.Fprintf(w, "  %-*s", cw[i], m)
	}
	fmt.Fprintln(w)
	for _, c := range cells {
		fmt.Fprintf(w, "  %-*s", width, c)
		for i, m := range metrics {
			fmt.Fprintf(w, "  %-*s", cw[i], cellText(c, m))
		}
		fmt.Fprintln(w)
	}
}

func fmtMean(f float64) string {
	if math.IsNaN(f) {
		return "–"
	}
	return fmt.Sprintf("%.4f", f)
}

// WriteSummaryFile writes summary.md into the run directory.
func (r *Run) WriteSummaryFile(m *Manifest, rows []aggregate.Row) error {
	f, err := os.Create(filepath.Join(r.Dir, SummaryFile))
	if err != nil {
		return err
	}
	WriteSummary(f, m, rows)
	return f.Close()
}

// StatusCounts renders the item status counts: "28 ok, 1 timeout, 1 unsafe,
// 0 error, 0 cancelled" (timeout and unsafe only when non-zero).
func StatusCounts(c Counts) string {
	parts := []string{fmt.Sprintf("%d ok", c.OK)}
	if c.Timeout > 0 {
		parts = append(parts, fmt.Sprintf("%d timeout", c.Timeout))
	}
	if c.Unsafe > 0 {
		parts = append(parts, fmt.Sprintf("%d unsafe", c.Unsafe))
	}
	parts = append(parts, fmt.Sprintf("%d error", c.Errors), fmt.Sprintf("%d cancelled", c.Cancelled))
	return strings.Join(parts, ", ")
}

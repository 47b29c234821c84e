package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/evalflow/evalflow/rundir"
	"github.com/evalflow/evalflow/runsql"
)

// cmdShow prints a run's summary again, from its directory; -by COL groups
// every metric by an items column.
func cmdShow(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("show", "show [-by COL] RUN_DIR", stderr)
	by := fs.String("by", "", "group the metrics by this items.parquet column (difficulty, db, cell, a swept variable, …)")
	pos, err := parseArgs(fs, args)
	if errors.Is(err, flag.ErrHelp) {
		return exitOK
	}
	if err != nil || len(pos) != 1 {
		if err == nil {
			fs.Usage()
		}
		return exitConfig
	}
	dir := pos[0]
	m, err := rundir.Previous(dir)
	if err != nil || m == nil {
		fmt.Fprintf(stderr, "evalflow show: %s is not a run directory (no readable manifest.json)\n", dir)
		return exitRun
	}
	db, partial, err := runsql.Open(ctx, dir)
	if err != nil {
		fmt.Fprintf(stderr, "evalflow show: %v\n", err)
		return exitRun
	}
	defer db.Close()
	// Everything goes to a buffer first: a bad -by or a failing query
	// prints nothing but the error.
	var out bytes.Buffer
	fmt.Fprintf(&out, "run %s  %s  pipeline %s\n", m.RunID, m.Status, m.Pipeline)
	if partial {
		fmt.Fprintf(&out, "  not finished: the numbers below are over the items finished so far (parts/)\n")
	}
	// The metric columns: the manifest's means, or every cell's.
	names := map[string]bool{}
	for k := range m.Metrics {
		names[k] = true
	}
	for _, c := range m.Cells {
		for k := range c.Metrics {
			names[k] = true
		}
	}
	cols := map[string]bool{}
	rows, err := db.QueryContext(ctx, "SELECT column_name FROM (DESCRIBE items)")
	if err != nil {
		fmt.Fprintf(stderr, "evalflow show: %v\n", err)
		return exitRun
	}
	for rows.Next() {
		var c string
		if err := rows.Scan(&c); err != nil {
			rows.Close()
			fmt.Fprintf(stderr, "evalflow show: %v\n", err)
			return exitRun
		}
		cols[c] = true
	}
	if err := rows.Err(); err != nil {
		rows.Close()
		fmt.Fprintf(stderr, "evalflow show: %v\n", err)
		return exitRun
	}
	rows.Close()
	var metrics []string
	for _, k := range slices.Sorted(maps.Keys(names)) {
		if cols[k] {
			metrics = append(metrics, k)
		}
	}
	group := *by
	if group == "" && cols["cell"] {
		group = "cell"
	}
	if group != "" && !cols[group] {
		fmt.Fprintf(stderr, "evalflow show: items has no column %q.%s\n", group, suggestion(group, slices.Sorted(maps.Keys(cols))))
		return exitConfig
	}
	ident := func(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }
	sel := []string{"count(*) AS items", "count(*) FILTER (WHERE status = 'error') AS errors"}
	for _, mname := range metrics {
		// Items in error are left out of the means, as the run does (its
		// official-profile exception is in aggregates.parquet).
		sel = append(sel, fmt.Sprintf("avg(%s) FILTER (WHERE status <> 'error')", ident(mname)))
	}
	q := "SELECT " + strings.Join(sel, ", ") + " FROM items WHERE status <> 'cancelled'"
	if group != "" {
		q = fmt.Sprintf("SELECT %s, %s FROM items WHERE status <> 'cancelled' GROUP BY 1 ORDER BY 1", ident(group), strings.Join(sel, ", "))
	}
	res, err := db.QueryContext(ctx, q)
	if err != nil {
		fmt.Fprintf(stderr, "evalflow show: %v\n", err)
		return exitRun
	}
	defer res.Close()
	tw := tabwriter.NewWriter(&out, 0, 0, 2, ' ', tabwriter.AlignRight)
	head := []string{"items", "errors"}
	if group != "" {
		head = append([]string{group}, head...)
	}
	fmt.Fprintln(tw, "  "+strings.Join(append(head, metrics...), "\t")+"\t")
	for res.Next() {
		vals := make([]any, len(head)+len(metrics))
		ptrs := make([]any, len(vals))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := res.Scan(ptrs...); err != nil {
			fmt.Fprintf(stderr, "evalflow show: %v\n", err)
			return exitRun
		}
		cells := make([]string, len(vals))
		for i, v := range vals {
			if f, ok := v.(float64); ok {
				cells[i] = fmt.Sprintf("%.4f", f)
			} else {
				cells[i] = valueText(v, "–")
			}
		}
		fmt.Fprintln(tw, "  "+strings.Join(cells, "\t")+"\t")
	}
	tw.Flush()
	if err := res.Err(); err != nil {
		fmt.Fprintf(stderr, "evalflow show: %v\n", err)
		return exitRun
	}
	if m.Status == "complete" && !partial {
		fmt.Fprintf(&out, "  (means over items not in error; the official profiles' totals and the 95%% CIs are in aggregates.parquet and summary.md)\n")
	}
	stdout.Write(out.Bytes())
	return exitOK
}

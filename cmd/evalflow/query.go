package main

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"strings"
	"text/tabwriter"

	"github.com/evalflow/evalflow/runsql"
)

// cmdQuery runs SQL over a run directory with the embedded DuckDB.
func cmdQuery(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("query", "query [-format text|csv|json] RUN_DIR \"SQL\"", stderr)
	format := fs.String("format", "text", "text (an aligned table), csv or json (an array of objects)")
	pos, err := parseArgs(fs, args)
	if errors.Is(err, flag.ErrHelp) {
		return exitOK
	}
	if err != nil || len(pos) != 2 {
		if err == nil {
			fs.Usage()
			fmt.Fprintln(stderr, "\nThe run's tables are the views items, attempts and aggregates, e.g.\n  evalflow query runs/x \"SELECT difficulty, avg(ex) FROM items GROUP BY ALL\"")
		}
		return exitConfig
	}
	if *format != "text" && *format != "csv" && *format != "json" {
		fmt.Fprintf(stderr, "evalflow query: -format must be text, csv or json, not %q\n", *format)
		return exitConfig
	}
	db, partial, err := runsql.Open(ctx, pos[0])
	if err != nil {
		fmt.Fprintf(stderr, "evalflow query: %v\n", err)
		return exitRun
	}
	defer db.Close()
	if partial {
		fmt.Fprintf(stderr, "evalflow query: %s has not finished: the views hold the items finished so far (parts/)\n", pos[0])
	}
	rows, err := db.QueryContext(ctx, pos[1])
	if err != nil {
		fmt.Fprintf(stderr, "evalflow query: %v\n", err)
		return exitConfig
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	var out [][]any
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			fmt.Fprintf(stderr, "evalflow query: %v\n", err)
			return exitRun
		}
		out = append(out, vals)
	}
	if err := rows.Err(); err != nil {
		fmt.Fprintf(stderr, "evalflow query: %v\n", err)
		return exitRun
	}
	switch *format {
	case "json":
		objs := make([]map[string]any, len(out))
		for i, r := range out {
			objs[i] = map[string]any{}
			for j, c := range cols {
				objs[i][c] = jsonValue(r[j])
			}
		}
		b, err := json.MarshalIndent(objs, "", "  ")
		if err != nil {
			fmt.Fprintf(stderr, "evalflow query: %v\n", err)
			return exitRun
		}
		fmt.Fprintf(stdout, "%s\n", b)
	case "csv":
		w := csv.NewWriter(stdout)
		w.Write(cols)
		for _, r := range out {
			rec := make([]string, len(r))
			for j, v := range r {
				rec[j] = valueText(v, "")
			}
			w.Write(rec)
		}
		w.Flush()
	default:
		tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, strings.Join(cols, "\t"))
		for _, r := range out {
			rec := make([]string, len(r))
			for j, v := range r {
				rec[j] = strings.NewReplacer("\t", " ", "\n", " ").Replace(valueText(v, "NULL"))
			}
			fmt.Fprintln(tw, strings.Join(rec, "\t"))
		}
		tw.Flush()
	}
	return exitOK
}

// valueText renders a value from DuckDB for text and CSV output.
func valueText(v any, null string) string {
	switch x := v.(type) {
	case nil:
		return null
	case []byte:
		return string(x)
	case float64:
		return fmt.Sprintf("%.6g", x)
	case float32:
		return fmt.Sprintf("%.6g", x)
	}
	return fmt.Sprint(v)
}

// jsonValue keeps JSON-native values and renders the rest as text.
func jsonValue(v any) any {
	switch x := v.(type) {
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return nil
		}
		return x
	case nil, bool, string, int64, int32, int16, int8, uint64, uint32, uint16, uint8, float32:
		return x
	case []byte:
		return string(x)
	}
	return fmt.Sprint(v)
}

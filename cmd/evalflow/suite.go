package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/evalflow/evalflow/dataset"
	"github.com/evalflow/evalflow/dsl"
	"github.com/evalflow/evalflow/metrics"
	"github.com/evalflow/evalflow/suite"
)

const suiteSynopsis = "suite build -dataset FILE -databases DIR -out DIR [-seed N] [-max-dbs K] [-samples T] [flags]"

// cmdSuite handles "suite build": distilled test suites of databases for
// every database the dataset's items name (docs/suites.md).
func cmdSuite(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 && (args[0] == "-h" || args[0] == "-help" || args[0] == "--help") {
		args = []string{"build", args[0]} // build is the one subcommand: show its flags
	}
	if len(args) == 0 || args[0] != "build" {
		fmt.Fprintf(stderr, "Usage: evalflow %s\n", suiteSynopsis)
		return exitConfig
	}
	def := suite.DefaultOptions()
	fs := newFlagSet("suite build", suiteSynopsis, stderr)
	ds := fs.String("dataset", "", "dataset file (JSONL, JSON array, CSV or Parquet) with gold and db fields")
	dbs := fs.String("databases", "", "directory holding <db>.sqlite or <db>/<db>.sqlite (.duckdb with -engine duckdb)")
	out := fs.String("out", "", "output directory: OUT/<db>/<db>.sqlite, OUT/<db>/<db>_NNN.sqlite, OUT/suite.json, OUT/summary.md")
	seed := fs.Uint64("seed", def.Seed, "random seed: the same inputs and seed give the same suite")
	maxDBs := fs.Int("max-dbs", def.MaxDBs, "most generated databases kept per database")
	samples := fs.Int("samples", def.Samples, "most random databases drawn per database")
	verify := fs.Int("verify", def.Verify, "random databases drawn after distillation, from a seed stream of their own and never kept, only to measure the separation rate: the neighbours one of them separates count as separable")
	maxRows := fs.Int("max-rows", suite.DefaultMaxRows, "most rows per generated table")
	nulls := fs.Bool("nulls", false, "let nullable columns hold NULL")
	empty := fs.Bool("empty", false, "let generated tables be empty")
	eng := fs.String("engine", "sqlite", "sqlite or duckdb")
	compare := fs.String("compare", def.Profile.Name, "comparison profile that decides when two results differ: "+strings.Join(metrics.ProfileNames(), ", "))
	timeout := fs.Duration("timeout", def.Timeout, "per-query timeout")
	screen := fs.Duration("screen-timeout", def.ScreenTimeout, "a neighbour's timeout on the original: the larger of this and 20× its gold's time there, at most -timeout; one that runs out is dropped as \"timeout on the original\" (0: -timeout)")
	only := fs.String("db", "", "build only this database")
	limit := fs.Int("limit", 0, "read only the first N items of the dataset (0: all)")
	pos, err := parseArgs(fs, args[1:])
	if errors.Is(err, flag.ErrHelp) {
		return exitOK
	}
	if err != nil {
		return exitConfig
	}
	if len(pos) != 0 || *ds == "" || *dbs == "" || *out == "" {
		fmt.Fprintln(stderr, "evalflow suite build: -dataset, -databases and -out are required (and no other arguments)")
		fs.Usage()
		return exitConfig
	}
	o := def
	o.Seed, o.MaxDBs, o.Samples, o.Verify, o.Timeout, o.ScreenTimeout = *seed, *maxDBs, *samples, *verify, *timeout, *screen
	o.MaxRows, o.Nulls, o.Empty = *maxRows, *nulls, *empty
	switch suite.Engine(*eng) {
	case suite.SQLite, suite.DuckDB:
		o.Engine = suite.Engine(*eng)
	default:
		fmt.Fprintf(stderr, "evalflow suite build: -engine must be sqlite or duckdb, not %q\n", *eng)
		return exitConfig
	}
	p, ok := metrics.LookupProfile(*compare)
	if !ok {
		fmt.Fprintf(stderr, "evalflow suite build: unknown -compare %q (valid: %s)\n", *compare, strings.Join(metrics.ProfileNames(), ", "))
		return exitConfig
	}
	o.Profile = p
	if o.MaxDBs < 0 || o.Samples < 0 || o.Verify < 0 || o.ScreenTimeout < 0 || o.MaxRows < 1 {
		fmt.Fprintln(stderr, "evalflow suite build: -max-dbs, -samples, -verify and -screen-timeout must not be negative, -max-rows must be positive")
		return exitConfig
	}
	order, golds, err := readSuiteDataset(*ds, *limit)
	if err != nil {
		fmt.Fprintf(stderr, "evalflow suite build: %v\n", err)
		return exitConfig
	}
	if *only != "" && len(golds[*only]) == 0 {
		fmt.Fprintf(stderr, "evalflow suite build: -db %q: no item of %s names that database (its items name: %s)\n", *only, *ds, strings.Join(order, ", "))
		return exitConfig
	}
	start := time.Now()
	rep := &suite.Report{Dataset: filepath.Base(*ds), Engine: string(o.Engine), Compare: p.Name, Seed: o.Seed,
		MaxDBs: o.MaxDBs, Samples: o.Samples, Verify: o.Verify, MaxRows: o.MaxRows, Nulls: o.Nulls, Empty: o.Empty}
	for _, db := range order {
		if *only != "" && db != *only {
			continue
		}
		orig, err := findDatabase(*dbs, db, o.Engine.Ext())
		if err != nil {
			fmt.Fprintf(stderr, "evalflow suite build: %v\n", err)
			return exitRun
		}
		fmt.Fprintf(stderr, "suite %s: %d gold queries\n", db, len(golds[db]))
		r, err := suite.Build(ctx, db, orig, filepath.Join(*out, db), golds[db], o)
		if err != nil {
			fmt.Fprintf(stderr, "evalflow suite build: %s: %v\n", db, err)
			return exitRun
		}
		fmt.Fprintf(stderr, "suite %s: %d neighbours, %d separated of %d separable (rate %.4f), %d unseparated, %d databases kept (%s)\n",
			db, r.Neighbours-sumCounts(r.Dropped), r.Separated, r.Separable, r.SeparationRate, len(r.Unseparated), len(r.Kept), r.Elapsed)
		rep.Databases = append(rep.Databases, r)
	}
	rep.Elapsed = time.Since(start).Round(time.Millisecond).String()
	if err := os.MkdirAll(*out, 0o755); err != nil {
		fmt.Fprintf(stderr, "evalflow suite build: %v\n", err)
		return exitRun
	}
	if err := rep.WriteFiles(*out); err != nil {
		fmt.Fprintf(stderr, "evalflow suite build: %v\n", err)
		return exitRun
	}
	rep.WriteSummary(stdout, false)
	fmt.Fprintf(stdout, "wrote %s\n", filepath.Join(*out, "suite.json"))
	return exitOK
}

func sumCounts(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

// readSuiteDataset returns the databases in the order the dataset first
// names them and, per database, its distinct gold queries with the ids of
// the items that use each. Fields: gold (or query, SQL), db (or db_id),
// id (or question_id, else the row number).
func readSuiteDataset(path string, limit int) ([]string, map[string][]suite.Gold, error) {
	format, err := dataset.DatasetFormat(path, path, dsl.FormatOf(path))
	if err != nil {
		return nil, nil, err
	}
	if format == "" {
		return nil, nil, fmt.Errorf("%s: unknown dataset format (use .jsonl, .json, .csv or .parquet)", path)
	}
	var order []string
	golds := map[string][]suite.Gold{}
	index := map[string]map[string]int{}
	n := 0
	errStop := errors.New("stop")
	err = dataset.ReadRows(path, format, func(r dataset.Row) error {
		if limit > 0 && n >= limit {
			return errStop
		}
		n++
		if r.Err != "" {
			return fmt.Errorf("%s:%d: %s", path, r.Line, r.Err)
		}
		gold := firstField(r, "gold", "query", "SQL")
		db := firstField(r, "db", "db_id")
		id := firstField(r, "id", "question_id")
		if id == "" {
			id = strconv.Itoa(r.Line)
		}
		if gold == "" || db == "" {
			return fmt.Errorf("%s:%d: the item has no gold (gold, query, SQL) or no db (db, db_id)", path, r.Line)
		}
		if index[db] == nil {
			index[db] = map[string]int{}
			order = append(order, db)
		}
		if i, ok := index[db][gold]; ok {
			golds[db][i].IDs = append(golds[db][i].IDs, id)
			return nil
		}
		index[db][gold] = len(golds[db])
		golds[db] = append(golds[db], suite.Gold{Text: gold, IDs: []string{id}})
		return nil
	})
	if err != nil && !errors.Is(err, errStop) {
		return nil, nil, err
	}
	if len(order) == 0 {
		return nil, nil, fmt.Errorf("%s: no items", path)
	}
	return order, golds, nil
}

func firstField(r dataset.Row, names ...string) string {
	for _, n := range names {
		if v, ok := r.Get(n); ok && v != nil {
			if s := dataset.Text(v); s != "" {
				return s
			}
		}
	}
	return ""
}

// findDatabase resolves <dir>/<db><ext> or <dir>/<db>/<db><ext>.
func findDatabase(dir, db, ext string) (string, error) {
	if strings.ContainsAny(db, `/\`) || db == ".." {
		return "", fmt.Errorf("database name %q is not a plain name", db)
	}
	for _, p := range []string{filepath.Join(dir, db+ext), filepath.Join(dir, db, db+ext)} {
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() {
			return p, nil
		}
	}
	return "", fmt.Errorf("database %s not found: no %s or %s", db, filepath.Join(dir, db+ext), filepath.Join(dir, db, db+ext))
}

// Package runsql opens a run directory for SQL: an in-memory embedded
// DuckDB (no duckdb CLI needed) with the run's items, attempts and
// aggregates as views. evalflow query, show and report read runs through it.
package runsql

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"

	duckdb "github.com/duckdb/duckdb-go/v2"

	"github.com/evalflow/evalflow/rundir"
)

// Views are the view names Open creates, when the run has the table.
var Views = []string{"items", "attempts", "aggregates"}

// Open opens dir's tables as the views items, attempts and aggregates. A
// run that is still going or was interrupted has no merged files yet: its
// views read the finished items from parts/, and partial says so (it has
// no aggregates view then). The caller closes db.
func Open(ctx context.Context, dir string) (db *sql.DB, partial bool, err error) {
	if _, err := os.Stat(filepath.Join(dir, rundir.ManifestName)); err != nil {
		return nil, false, fmt.Errorf("%s is not a run directory (no %s)", dir, rundir.ManifestName)
	}
	c, err := connector()
	if err != nil {
		return nil, false, err
	}
	db = sql.OpenDB(c)
	for _, v := range []struct{ name, file, part string }{
		{"items", rundir.ItemsFile, "items-*.parquet"},
		{"attempts", rundir.AttemptsFile, "attempts-*.parquet"},
		{"aggregates", rundir.AggregatesFile, ""},
	} {
		src := ""
		if _, err := os.Stat(filepath.Join(dir, v.file)); err == nil {
			src = fmt.Sprintf("read_parquet(%s)", Quote(filepath.Join(dir, v.file)))
		} else if v.part != "" {
			if m, _ := filepath.Glob(filepath.Join(dir, rundir.PartsDir, v.part)); len(m) > 0 {
				src = fmt.Sprintf("read_parquet(%s, union_by_name = true)", Quote(filepath.Join(dir, rundir.PartsDir, v.part)))
				partial = true
			}
		}
		if src == "" {
			continue // no such table yet (aggregates of an unfinished run)
		}
		if _, err := db.ExecContext(ctx, fmt.Sprintf("CREATE VIEW %s AS SELECT * FROM %s", v.name, src)); err != nil {
			db.Close()
			return nil, false, fmt.Errorf("reading %s: %w", v.name, err)
		}
	}
	return db, partial, nil
}

// warmed holds the instance Warm started, until an Open takes it.
var warmed struct {
	sync.Mutex
	c chan warmConnector
}

type warmConnector struct {
	c   *duckdb.Connector
	err error
}

// Warm starts creating, in the background, the DuckDB instance the next
// Open will use: about 10 ms of DuckDB's start-up that evalflow run takes
// off the end of the run, where the report waits for it (the instance is
// empty and in memory; Open adds the views). Calling it again before an
// Open does nothing.
func Warm() {
	warmed.Lock()
	defer warmed.Unlock()
	if warmed.c != nil {
		return
	}
	ch := make(chan warmConnector, 1)
	warmed.c = ch
	go func() {
		c, err := duckdb.NewConnector("", nil)
		ch <- warmConnector{c, err}
	}()
}

// connector is the instance Warm started (waiting for it), or a new one.
func connector() (*duckdb.Connector, error) {
	warmed.Lock()
	ch := warmed.c
	warmed.c = nil
	warmed.Unlock()
	if ch != nil {
		if w := <-ch; w.err == nil {
			return w.c, nil
		}
	}
	return duckdb.NewConnector("", nil)
}

// Quote is s as an SQL string literal.
func Quote(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// Ident is s as a quoted SQL identifier.
func Ident(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }

// Columns lists view's columns in order; nil when the view does not exist.
// (The view's own result columns: information_schema.columns binds every
// view of the catalog, about 20 ms of report.Build at 100k items,
// BenchmarkLargeRun in package report.)
func Columns(ctx context.Context, db *sql.DB, view string) ([]string, error) {
	var n int
	if err := db.QueryRowContext(ctx, "SELECT count(*) FROM duckdb_views() WHERE view_name = ? AND NOT internal", view).Scan(&n); err != nil {
		return nil, err
	}
	if n == 0 {
		return nil, nil
	}
	rows, err := db.QueryContext(ctx, "SELECT * FROM "+Ident(view)+" LIMIT 0")
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	return rows.Columns()
}

package main

import (
	"database/sql"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"
	_ "modernc.org/sqlite"

	"github.com/evalflow/evalflow/sinks"
)

var update = flag.Bool("update", false, "rewrite the cmp golden files inside testdata/script/*.txtar")

// TestMain lets the test binary act as the evalflow command: testscript
// installs it on $PATH under that name, and `exec evalflow ...` in a script
// runs main() in a child process, so scripts see real exit codes, stdout,
// stderr and signal handling.
func TestMain(m *testing.M) {
	// Every run the tests start, in process or as a child, uses a cache of
	// the test binary's own (removed at exit), never the developer's.
	dir := ""
	if os.Getenv("EVALFLOW_TEST_CACHE") == "" {
		var err error
		if dir, err = os.MkdirTemp("", "evalflow-test-cache-"); err != nil {
			panic(err)
		}
		os.Setenv("EVALFLOW_CACHE_DIR", dir)
		os.Setenv("EVALFLOW_TEST_CACHE", dir)
	}
	// testscript.Main never returns (it exits), so the clean-up runs
	// inside Run, after the tests and before the exit.
	testscript.Main(cleanupM{m, func() {
		if dir != "" {
			os.RemoveAll(dir)
		}
		if procTmp.dir != "" {
			os.RemoveAll(procTmp.dir)
		}
	}}, map[string]func(){"evalflow": main})
}

// procTmp holds what the package's tests share for the life of the test
// process (the built binary, about 250 MB, and shared reference runs),
// made on first use; TestMain removes it at the end.
var procTmp struct {
	once sync.Once
	dir  string
	err  error
}

// processTempDir makes a new directory under procTmp.
func processTempDir(prefix string) (string, error) {
	procTmp.once.Do(func() { procTmp.dir, procTmp.err = os.MkdirTemp("", "evalflow-cmdtest-") })
	if procTmp.err != nil {
		return "", procTmp.err
	}
	return os.MkdirTemp(procTmp.dir, prefix)
}

// cleanupM runs the tests, then clean-up: what the test binary made in the
// temporary directory (the test cache, procTmp) does not
// outlive it. Before it, RunMain's exit skipped the clean-up and every run
// of the package's tests left about 250 MB behind.
type cleanupM struct {
	m       *testing.M
	cleanup func()
}

func (c cleanupM) Run() int {
	code := c.m.Run()
	c.cleanup()
	return code
}

// TestScripts runs testdata/script/*.txtar. Scripts get $REPO (the
// repository root) and $SHARED (../shared/data next to it; the [shared]
// condition says whether it exists), plus the commands in scriptCmds.
func TestScripts(t *testing.T) {
	repo, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	shared := filepath.Join(repo, "..", "shared", "data")
	testscript.Run(t, testscript.Params{
		Dir:                 filepath.Join("testdata", "script"),
		RequireExplicitExec: true,
		RequireUniqueNames:  true,
		UpdateScripts:       *update,
		Setup: func(e *testscript.Env) error {
			e.Setenv("REPO", repo)
			e.Setenv("SHARED", shared)
			// A developer's own EVALFLOW_VAR_* must not leak into the
			// scripts (an empty value would still set the variable).
			vars := e.Vars[:0]
			for _, kv := range e.Vars {
				if !strings.HasPrefix(kv, "EVALFLOW_VAR_") {
					vars = append(vars, kv)
				}
			}
			e.Vars = vars
			// Each script has a cache of its own.
			e.Setenv("EVALFLOW_CACHE_DIR", filepath.Join(e.WorkDir, ".evalflow-cache"))
			return nil
		},
		Condition: func(cond string) (bool, error) {
			switch cond {
			case "shared":
				_, err := os.Stat(shared)
				return err == nil, nil
			case "short":
				return testing.Short(), nil
			}
			return false, fmt.Errorf("unknown condition %q", cond)
		},
		Cmds: scriptCmds,
	})
}

// scriptCmds are the in-process commands the scripts use to look inside
// what evalflow wrote. Each prints to the script's stdout, so `stdout` and
// `cmp stdout` check it.
var scriptCmds = map[string]func(ts *testscript.TestScript, neg bool, args []string){
	"parquet-rows": cmdParquetRows,
	"parquet-cols": cmdParquetCols,
	"parquet-col":  cmdParquetCol,
	"json-field":   cmdJSONField,
	"mksqlite":     cmdMkSQLite,
}

func readParquet(ts *testscript.TestScript, neg bool, file string) (sinks.Schema, [][]any, bool) {
	s, rows, err := sinks.ReadParquetRows(ts.MkAbs(file))
	if err != nil {
		if neg {
			return nil, nil, false
		}
		ts.Fatalf("%v", err)
	}
	if neg {
		ts.Fatalf("%s is a readable Parquet file", file)
	}
	return s, rows, true
}

// parquet-rows FILE prints the number of rows of a Parquet file. With !,
// it succeeds only when the file cannot be read.
func cmdParquetRows(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 1 {
		ts.Fatalf("usage: parquet-rows FILE")
	}
	if _, rows, ok := readParquet(ts, neg, args[0]); ok {
		fmt.Fprintln(ts.Stdout(), len(rows))
	}
}

// parquet-cols FILE prints "name type" for every column, in order.
func cmdParquetCols(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 1 {
		ts.Fatalf("usage: parquet-cols FILE")
	}
	if s, _, ok := readParquet(ts, neg, args[0]); ok {
		for _, c := range s {
			fmt.Fprintf(ts.Stdout(), "%s %s\n", c.Name, c.Type)
		}
	}
}

// parquet-col FILE COL [COL...] prints the columns' values, one row per
// line, tab-separated; NULL prints as NULL and floats in the shortest form
// that round-trips.
func cmdParquetCol(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) < 2 {
		ts.Fatalf("usage: parquet-col FILE COL [COL...]")
	}
	s, rows, ok := readParquet(ts, neg, args[0])
	if !ok {
		return
	}
	var idx []int
	for _, name := range args[1:] {
		i := -1
		for j, c := range s {
			if c.Name == name {
				i = j
			}
		}
		if i < 0 {
			var names []string
			for _, c := range s {
				names = append(names, c.Name)
			}
			ts.Fatalf("%s has no column %q (columns: %s)", args[0], name, strings.Join(names, ", "))
		}
		idx = append(idx, i)
	}
	for _, r := range rows {
		vals := make([]string, len(idx))
		for k, i := range idx {
			vals[k] = formatValue(r[i])
		}
		fmt.Fprintln(ts.Stdout(), strings.Join(vals, "\t"))
	}
}

func formatValue(v any) string {
	switch x := v.(type) {
	case nil:
		return "NULL"
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64)
	case string:
		return x
	case []byte:
		return string(x)
	case time.Time:
		return x.UTC().Format(time.RFC3339Nano)
	}
	return fmt.Sprint(v)
}

// json-field FILE PATH prints the value at a dotted path of a JSON file
// (object keys and array indexes: variables.0.source). Strings print bare,
// everything else as compact JSON. With !, it succeeds only when the path
// does not exist.
func cmdJSONField(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 2 {
		ts.Fatalf("usage: json-field FILE PATH")
	}
	var v any
	ts.Check(json.Unmarshal([]byte(ts.ReadFile(args[0])), &v))
	cur := v
	for _, part := range strings.Split(args[1], ".") {
		var next any
		found := false
		switch x := cur.(type) {
		case map[string]any:
			next, found = x[part]
		case []any:
			if i, err := strconv.Atoi(part); err == nil && i >= 0 && i < len(x) {
				next, found = x[i], true
			}
		}
		if !found {
			if neg {
				return
			}
			ts.Fatalf("%s: no %q in %s", args[0], part, args[1])
		}
		cur = next
	}
	if neg {
		ts.Fatalf("%s: %s exists", args[0], args[1])
	}
	if s, ok := cur.(string); ok {
		fmt.Fprintln(ts.Stdout(), s)
		return
	}
	b, err := json.Marshal(cur)
	ts.Check(err)
	fmt.Fprintln(ts.Stdout(), string(b))
}

// mksqlite FILE SQL... creates a SQLite database (and its directory) and
// runs each SQL argument in it.
func cmdMkSQLite(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 1 {
		ts.Fatalf("usage: mksqlite FILE SQL...")
	}
	path := ts.MkAbs(args[0])
	ts.Check(os.MkdirAll(filepath.Dir(path), 0o755))
	db, err := sql.Open("sqlite", path)
	ts.Check(err)
	defer db.Close()
	for _, stmt := range args[1:] {
		if _, err := db.Exec(stmt); err != nil {
			ts.Fatalf("mksqlite %s: %q: %v", args[0], stmt, err)
		}
	}
}

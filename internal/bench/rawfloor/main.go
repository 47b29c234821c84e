// Command rawfloor is the floor that replay scoring is measured against
// (docs/benchmarks-baseline.md, scripts/bench-cli.sh): it reads the same
// dataset and predictions files text2sql-replay.hcl reads, opens each
// database read-only as a plain script would (modernc.org/sqlite,
// "file:PATH?mode=ro&_pragma=query_only(1)", SQLite's default locking),
// with one connection, and executes every gold and every prediction once,
// in dataset order, scanning every row into Go values. Nothing is
// compared, cached or written; a query's error is counted, not fatal.
// (evalflow's engine/sqlite also holds each connection's read lock between
// queries, locking_mode EXCLUSIVE: part of what it does to approach this
// floor, not part of the floor.)
//
//	go run ./internal/bench/rawfloor -dataset items.jsonl -predictions preds.jsonl -databases ../shared/data/geoquery
//
// The CPU time of the whole process (user + sys) is the floor: evalflow's
// own work per item is what a replay run costs beyond it.
package main

import (
	"bufio"
	"context"
	"database/sql"
	"encoding/json"
	"flag"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"runtime/pprof"
	"strings"
	"sync"
	"time"

	_ "modernc.org/sqlite"
)

type row struct {
	ID   string `json:"id"`
	Gold string `json:"gold"`
	Pred string `json:"pred"`
	DB   string `json:"db"`
}

func main() {
	dataset := flag.String("dataset", "", "JSONL with id, gold, db")
	predictions := flag.String("predictions", "", "JSONL with id, pred")
	databases := flag.String("databases", "", "directory holding <db>.sqlite or <db>/<db>.sqlite")
	var pragmas []string
	flag.Func("pragma", "add `P` to every database's URI as _pragma=P (repeatable), e.g. 'locking_mode(EXCLUSIVE)': to measure what an open mode costs (docs/benchmarks-baseline.md, \"Held read locks\"); the floor itself has none", func(v string) error {
		pragmas = append(pragmas, v)
		return nil
	})
	threads := flag.Int("threads", 1, "run the items on `N` goroutines, each with its own connections, the i-th taking every N-th item: to see whether SQLite's CPU grows when several cores run it (docs/benchmarks.md, \"Sixth pass\"); the floor itself is 1")
	cpuprofile := flag.String("cpuprofile", "", "write a CPU profile of the run to `FILE` (docs/benchmarks-baseline.md, \"Own work against the floor\")")
	flag.Parse()
	if *threads < 1 {
		fmt.Fprintln(os.Stderr, "rawfloor: -threads must be at least 1")
		os.Exit(2)
	}
	if *dataset == "" || *predictions == "" || *databases == "" {
		fmt.Fprintln(os.Stderr, "rawfloor: -dataset, -predictions and -databases are required")
		os.Exit(2)
	}
	if *cpuprofile != "" {
		f, err := os.Create(*cpuprofile)
		if err != nil {
			fail(err)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			fail(err)
		}
		defer pprof.StopCPUProfile()
	}
	start := time.Now()
	items, err := readJSONL(*dataset)
	if err != nil {
		fail(err)
	}
	preds, err := readJSONL(*predictions)
	if err != nil {
		fail(err)
	}
	byID := make(map[string]string, len(preds))
	for _, p := range preds {
		byID[p.ID] = p.Pred
	}

	ctx := context.Background()
	counts := make([]count, *threads)
	var wg sync.WaitGroup
	for w := range *threads {
		wg.Go(func() { counts[w] = floor(ctx, items[w:], *threads, byID, *databases, pragmas) })
	}
	wg.Wait()
	var total count
	for _, c := range counts {
		total.queries += c.queries
		total.failed += c.failed
		total.rows += c.rows
	}
	fmt.Printf("rawfloor: %d items, %d queries (%d failed), %d rows in %s\n",
		len(items), total.queries, total.failed, total.rows, time.Since(start).Round(time.Millisecond))
}

type count struct{ queries, failed, rows int }

// floor executes the gold and the prediction of every stride-th item of
// items, from the first, on connections of its own (one a database).
func floor(ctx context.Context, items []row, stride int, byID map[string]string, databases string, pragmas []string) count {
	dbs := map[string]*sql.Conn{}
	var n count
	run := func(c *sql.Conn, q string) {
		n.queries++
		k, err := execute(ctx, c, q)
		n.rows += k
		if err != nil {
			n.failed++
		}
	}
	for i := 0; i < len(items); i += stride {
		it := items[i]
		c, ok := dbs[it.DB]
		if !ok {
			db, err := sql.Open("sqlite", dsn(dbPath(databases, it.DB), pragmas))
			if err != nil {
				fail(err)
			}
			db.SetMaxOpenConns(1)
			if c, err = db.Conn(ctx); err != nil {
				fail(err)
			}
			dbs[it.DB] = c
		}
		run(c, it.Gold)
		if p, ok := byID[it.ID]; ok {
			run(c, p)
		}
	}
	return n
}

// execute runs q and scans every row, as engine/sqlite's readAll does.
func execute(ctx context.Context, c *sql.Conn, q string) (int, error) {
	rs, err := c.QueryContext(ctx, q)
	if err != nil {
		return 0, err
	}
	defer rs.Close()
	cols, err := rs.Columns()
	if err != nil {
		return 0, err
	}
	vals := make([]any, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	n := 0
	for rs.Next() {
		if err := rs.Scan(ptrs...); err != nil {
			return n, err
		}
		n++
	}
	return n, rs.Err()
}

// dsn is the read-only URI (engine/sqlite's Executor.dsn without its held
// lock and with immutable off).
func dsn(path string, pragmas []string) string {
	esc := strings.NewReplacer("%", "%25", "?", "%3f", "#", "%23").Replace(filepath.ToSlash(path))
	s := "file:" + esc + "?mode=ro&_pragma=query_only(1)"
	for _, p := range pragmas {
		s += "&_pragma=" + url.QueryEscape(p)
	}
	return s
}

// dbPath resolves a db name as text2sql-replay.hcl's engine path does.
func dbPath(dir, db string) string {
	p := filepath.Join(dir, db, db+".sqlite")
	if _, err := os.Stat(p); err == nil {
		return p
	}
	return filepath.Join(dir, db+".sqlite")
}

func readJSONL(path string) ([]row, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []row
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<26)
	for line := 1; sc.Scan(); line++ {
		if len(strings.TrimSpace(sc.Text())) == 0 {
			continue
		}
		var r row
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			return nil, fmt.Errorf("%s:%d: %v", path, line, err)
		}
		out = append(out, r)
	}
	return out, sc.Err()
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "rawfloor:", err)
	os.Exit(1)
}

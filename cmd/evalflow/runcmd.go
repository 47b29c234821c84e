package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"math"
	"math/big"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/evalflow/evalflow/cache"
	"github.com/evalflow/evalflow/cluster"
	"github.com/evalflow/evalflow/dataset"
	"github.com/evalflow/evalflow/dsl"
	"github.com/evalflow/evalflow/item"
	"github.com/evalflow/evalflow/llm"
	"github.com/evalflow/evalflow/nodes"
	"github.com/evalflow/evalflow/nodes/aggregate"
	"github.com/evalflow/evalflow/planner"
	"github.com/evalflow/evalflow/rundir"
	"github.com/evalflow/evalflow/runsql"
	"github.com/evalflow/evalflow/store"
	"github.com/evalflow/evalflow/table"
	"github.com/zclconf/go-cty/cty"

	_ "github.com/evalflow/evalflow/engine/all"
	_ "github.com/evalflow/evalflow/nodes/all"
)

// maxErrors is -max-errors: a count, or a percentage of the run's items.
type maxErrors struct {
	n       int
	percent float64
	isPct   bool
	text    string
}

func parseMaxErrors(s string) (maxErrors, error) {
	m := maxErrors{text: s}
	if p, ok := strings.CutSuffix(s, "%"); ok {
		v, err := strconv.ParseFloat(p, 64)
		if err != nil || v < 0 || v > 100 || math.IsNaN(v) {
			return m, fmt.Errorf("-max-errors %q: want N or N%% with 0 <= N <= 100", s)
		}
		m.percent, m.isPct = v, true
		return m, nil
	}
	v, err := strconv.Atoi(s)
	if err != nil || v < 0 {
		return m, fmt.Errorf("-max-errors %q: want a count (0, 5) or a percentage (2%%)", s)
	}
	m.n = v
	return m, nil
}

// exceeded reports whether errors out of items break the threshold.
func (m maxErrors) exceeded(errs, items int) bool {
	if m.isPct {
		return items > 0 && float64(errs)*100 > m.percent*float64(items)
	}
	return errs > m.n
}

// maxInvalidShown is how many invalid dataset rows are printed in full.
const maxInvalidShown = 20

// maxErrorItemsShown is how many items in error are named on stderr after
// a run; maxErrorMessage is where each one's message is cut.
const (
	maxErrorItemsShown = 10
	maxErrorMessage    = 200
)

// errorItems keeps, of the items a run finds in error (harness failures),
// the first maxErrorItemsShown in run order and how many there are, so
// they can be named on stderr without holding every one.
type errorItems struct {
	mu    sync.Mutex
	n     int
	first []errorItem // by seq, at most maxErrorItemsShown
}

type errorItem struct {
	seq       int
	label, id string
	msg       string
}

// add records rec if it is in error: its final attempt's message, else
// the item's own error (a dataset row that is not an item, a stage that
// failed before any attempt).
func (e *errorItems) add(label string, rec *item.Record) {
	if rundir.ItemStatus(rec) != "error" {
		return
	}
	msg := rec.Error
	if f := rec.Final(); f != nil && f.ErrorMessage != "" {
		msg = f.ErrorMessage
	}
	it := errorItem{seq: rec.Seq, label: label, id: rec.Item.ID, msg: oneLine(msg, maxErrorMessage)}
	e.mu.Lock()
	defer e.mu.Unlock()
	e.n++
	i, _ := slices.BinarySearchFunc(e.first, it.seq, func(x errorItem, seq int) int { return x.seq - seq })
	if i < maxErrorItemsShown {
		e.first = slices.Insert(e.first, i, it)
		if len(e.first) > maxErrorItemsShown {
			e.first = e.first[:maxErrorItemsShown]
		}
	}
}

// print names the items in error on w, one line each, and says how to
// list the rest.
func (e *errorItems) print(w io.Writer, dir string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.n == 0 {
		return
	}
	fmt.Fprintf(w, "evalflow run: %d items are in error (harness failures, not wrong predictions; no score):\n", e.n)
	for _, it := range e.first {
		fmt.Fprintf(w, "  %s%s: %s\n", it.label, it.id, it.msg)
	}
	if more := e.n - len(e.first); more > 0 {
		fmt.Fprintf(w, "  … and %d more (evalflow query %s \"SELECT id, error_message FROM items WHERE status = 'error'\")\n",
			more, shellJoin([]string{dir}))
	}
}

// oneLine folds s onto one line and cuts it to about max bytes (at a rune
// boundary, marked with …).
func oneLine(s string, max int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) <= max {
		return s
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

// maxConcurrency is the largest concurrency the HCL accepts (stage blocks'
// concurrency attribute); -concurrency is held to the same range.
const maxConcurrency = 1 << 16

func cmdRun(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("run", "run [flags] PIPELINE", stderr)
	var pf pipelineFlags
	pf.register(fs)
	out := fs.String("out", "", "run directory (default runs/<run-id>); running the same command again with the same -out resumes it")
	conc := fs.Int("concurrency", 0, fmt.Sprintf("override every stage's concurrency (1..%d; 0 = as declared)", maxConcurrency))
	limit := fs.Int("limit", 0, "run only the first N items")
	sample := fs.Int("sample", 0, "run a reproducible random subset of N items (see -seed)")
	seed := fs.Uint64("seed", 1, "seed for -sample")
	overwrite := fs.Bool("overwrite", false, "start over in -out even if it holds a run of other inputs or a complete one")
	maxErr := fs.String("max-errors", "0", "fail the run (exit 2) when more items than this are in error: a count N or a percentage N%")
	quiet := fs.Bool("quiet", false, "no progress display")
	var failUnder multiFlag
	fs.Var(&failUnder, "fail-under", "CI gate: exit 3 when METRIC's overall mean (in a sweep: any cell's) is below X: -fail-under ex=0.8 (repeatable)")
	junitOut := fs.String("junit", "", "also write the run as JUnit XML (Ant/Surefire format: a testcase per item) to this file")
	noCache := fs.Bool("no-cache", false, "bypass the stage cache and the LLM response cache: every query runs and every model call is made, nothing is stored")
	var refresh multiFlag
	fs.Var(&refresh, "refresh", "re-run STAGE's work instead of reading the cache (the answers are stored again); repeatable")
	cellsAtOnce := fs.Int("cells", 8, "sweep cells run side by side at most (their stages share one pool each)")
	ciSeed := fs.Uint64("ci-seed", 1, "seed for the bootstrap confidence intervals in aggregates.parquet (recorded in the manifest as ci_seed)")
	var cf clusterFlags // -cluster, -workers: cluster.go
	cf.register(fs)
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
	if *limit < 0 || *sample < 0 {
		fmt.Fprintln(stderr, "evalflow run: -limit and -sample must not be negative")
		return exitConfig
	}
	if *conc < 0 || *conc > maxConcurrency {
		fmt.Fprintf(stderr, "evalflow run: -concurrency %d is out of range: use 1..%d, or 0 for the pipeline's declared values\n", *conc, maxConcurrency)
		return exitConfig
	}
	maxErrs, err := parseMaxErrors(*maxErr)
	if err != nil {
		fmt.Fprintf(stderr, "evalflow run: %v\n", err)
		return exitConfig
	}
	if *cellsAtOnce < 1 {
		fmt.Fprintf(stderr, "evalflow run: -cells %d: at least 1\n", *cellsAtOnce)
		return exitConfig
	}
	if err := cf.check(); err != nil {
		fmt.Fprintf(stderr, "evalflow run: %v\n", err)
		return exitConfig
	}
	var gates []gate
	for _, g := range failUnder {
		gt, err := parseGate(g)
		if err != nil {
			fmt.Fprintf(stderr, "evalflow run: %v\n", err)
			return exitConfig
		}
		gates = append(gates, gt)
	}
	started := time.Now().UTC()
	p, ok := loadPipeline(pos[0], &pf, stderr)
	if !ok {
		return exitConfig
	}
	pipes, ok := loadCells(pos[0], p, &pf, stderr)
	if !ok {
		return exitConfig
	}
	// The run's shared state is built here and passed down: the model
	// clients (one per endpoint) and the response caches they open. Every
	// sweep cell shares them, so a model endpoint has one limiter however
	// many cells call it.
	stores := cache.NewStores()
	defer stores.Close()
	pool := llm.NewPool(stores)
	var results *nodes.Results
	if !*noCache {
		disk, err := store.Open(filepath.Join(store.Root(), "stages"))
		if err != nil {
			fmt.Fprintf(stderr, "evalflow run: warning: the stage cache cannot be opened (%v); every query runs\n", err)
		} else {
			results = nodes.NewResults(disk, buildVersion())
		}
	}
	specs := expandCells(p, pipes)
	cells := make([]*cellRun, len(specs))
	pools := planner.NewPools()
	for i, sp := range specs {
		pl, diags := planner.Build(ctx, sp.p, planner.Options{Concurrency: *conc, LLM: pool, CISeed: *ciSeed,
			Results: results, NoCache: *noCache, Refresh: refresh, Branch: sp.branch, Pools: pools})
		defer pl.Close()
		if sp.cell != nil && diags.HasErrors() {
			fmt.Fprintf(stderr, "evalflow run: in cell %s:\n", sp.cell.ID)
		}
		writeDiags(stderr, diags)
		if diags.HasErrors() {
			return exitConfig
		}
		cells[i] = &cellRun{p: sp.p, pl: pl, cell: sp.cell}
	}
	for _, c := range cells {
		if err := preflight(ctx, c.pl); err != nil {
			if ctx.Err() != nil {
				return exitCancelled
			}
			fmt.Fprintf(stderr, "evalflow run: %s%v\n", c.label(), err)
			return exitRun
		}
	}

	// Each dataset is read once for its schema (every row's keys and
	// types) before anything is written; a FIFO is spooled, and an
	// interrupt while it waits for a writer ends the command at once. In a
	// sweep every cell's items are counted too: a cell's items take the
	// sequence numbers after the previous cell's, so a resumed sweep finds
	// each item where it was.
	offset := 0
	for _, c := range cells {
		if c.pl.Dataset == nil {
			continue
		}
		dsr, err := dataset.Open(ctx, c.pl.Dataset)
		if err != nil {
			if ctx.Err() != nil {
				fmt.Fprintln(stderr, "evalflow run: interrupted while opening the dataset")
				return exitCancelled
			}
			fmt.Fprintf(stderr, "evalflow run: %sdataset.%s: %v\n", c.label(), c.pl.Dataset.Name, err)
			return exitRun
		}
		defer dsr.Close()
		c.dsr = dsr
		for _, w := range dsr.Warnings {
			fmt.Fprintf(stderr, "evalflow run: warning: %s%s\n", c.label(), w)
		}
		if len(dsr.Mapping.Inferred) > 0 && (c.cell == nil || c.cell.Index == 0 || c.pl.Dataset.Source != cells[0].pl.Dataset.Source) {
			// Said once: what was read from the file rather than declared.
			fmt.Fprintf(stderr, "evalflow run: %sdataset.%s: %s\n", c.label(), c.pl.Dataset.Name, dsr.Mapping)
		}
		if c.cell != nil {
			n := 0
			if err := dsr.Items(ctx, func(item.Item) error { n++; return nil }); err != nil {
				fmt.Fprintf(stderr, "evalflow run: %sdataset.%s: %v\n", c.label(), c.pl.Dataset.Name, err)
				return exitRun
			}
			switch {
			case *sample > 0:
				n = min(n, *sample)
				if *limit > 0 {
					n = min(n, *limit)
				}
			case *limit > 0:
				n = min(n, *limit)
			}
			c.offset, c.total = offset, n
			offset += n
		}
	}

	runID := started.Format("20060102T150405Z") + "-" + p.Hash[:8]
	dir := *out
	if dir == "" {
		dir = filepath.Join("runs", runID)
	}
	var metricCols, binaryCols []string
	seenCol, seenBin := map[string]bool{}, map[string]bool{}
	for _, c := range cells {
		for _, n := range c.pl.Chain {
			if cs, ok := n.Stage.(nodes.Columns); ok {
				for _, m := range cs.MetricColumns() {
					if !seenCol[m] {
						seenCol[m] = true
						metricCols = append(metricCols, m)
					}
				}
			}
			if bc, ok := n.Stage.(nodes.BinaryColumns); ok {
				for _, m := range bc.BinaryColumns() {
					if !seenBin[m] {
						seenBin[m] = true
						binaryCols = append(binaryCols, m)
					}
				}
			}
		}
	}
	if err := checkGateNames(gates, gateMetrics(cells, metricCols)); err != nil {
		fmt.Fprintf(stderr, "evalflow run: %v\n", err)
		return exitConfig
	}
	prog := newProgress(stderr, metricCols, progressOptionsFor(stderr, *quiet))
	// Whatever else the run prints meanwhile goes through the display, so
	// a live line never garbles it.
	stderr = prog.writer()
	defer prog.stop() // on the early returns; a second stop does nothing
	if cells[0].cell != nil {
		prog.start(offset)
	} else if c := cells[0]; c.dsr != nil && *sample == 0 {
		prog.countItems(ctx, c.dsr, *limit) // the planner streams it uncounted
	}
	fp := sweepFingerprint(cells, *limit, *sample, *seed)
	var rdCells []rundir.Cell
	for _, c := range cells {
		if c.cell != nil {
			rdCells = append(rdCells, rundirCell(c.cell))
		}
	}
	rd, err := rundir.Open(dir, rundir.Config{
		MetricCols: metricCols, Sinks: p.Sinks, Overwrite: *overwrite,
		Fingerprint: fp,
		MayDiffer:   maxCostMayDiffer,
		Cells:       rdCells,
		OnKept: func(rec *item.Record) {
			if rec.Cell >= 0 && rec.Cell < len(cells) {
				cells[rec.Cell].pl.Collect(rec)
			}
			prog.keep(rec)
		},
	})
	var done *rundir.ErrComplete
	switch {
	case errors.As(err, &done):
		fmt.Fprintf(stdout, "run %s  complete  %d items (%s)  nothing to do: %s already holds this complete run (-overwrite starts over)\n",
			done.Prev.RunID, done.Prev.Counts.Items, rundir.StatusCounts(done.Prev.Counts), dir)
		// The gates and -junit still hold the finished run to account:
		// CI may run the same command twice.
		rows := manifestRows(done.Prev)
		code := exitOK
		if *junitOut != "" {
			if err := writeJUnit(*junitOut, dir, done.Prev, rows, metricCols); err != nil {
				fmt.Fprintf(stderr, "evalflow run: -junit: %v\n", err)
				code = exitRun
			}
		}
		if missed := failedGates(gates, rows); code == exitOK && len(missed) > 0 {
			for _, msg := range missed {
				fmt.Fprintf(stderr, "evalflow run: gate failed: %s\n", msg)
			}
			code = exitGate
		}
		return code
	case err != nil:
		fmt.Fprintf(stderr, "evalflow run: %v\n", err)
		return exitRun
	}
	m := manifest(p, cells[0].pl, runID, started, rd, nil, *limit, *sample, *seed, *conc)
	var prevCalls *rundir.ManifestModelCalls
	var prevSpent float64
	if prev, _ := rundir.Previous(dir); prev != nil && prev.RunID != "" {
		// A resumed run keeps its identity, and what its earlier processes
		// spent counts against max_cost.
		m.RunID, m.Started, m.Resumes = prev.RunID, prev.Started, prev.Resumes+1
		runID = prev.RunID
		if prev.ModelCalls != nil {
			prevCalls, prevSpent = prev.ModelCalls, prev.ModelCalls.Cost
			pool.AddSpent(prevSpent)
		}
	}
	if names, types := passColumns(cells); names != nil {
		rd.SetPassColumns(names, types)
	}
	resumed, kept := rd.Resumed()
	m.Kept, m.MaxErrors, m.Status, m.Fingerprint, m.CISeed, m.BinaryMetrics = kept, maxErrs.text, "running", fp, *ciSeed, binaryCols
	m.Cells = manifestCells(cells, nil)
	if err := rd.WriteJSON(rundir.ManifestName, m); err != nil {
		rd.Abandon()
		fmt.Fprintf(stderr, "evalflow run: %v\n", err)
		return exitRun
	}
	if resumed {
		fmt.Fprintf(stderr, "evalflow run: resuming %s: %d finished items kept\n", dir, kept)
	}
	runsql.Warm() // the report's DuckDB starts while the items run

	parallel := min(*cellsAtOnce, len(cells))
	for _, sb := range p.Sinks {
		if sb.Path == "-" {
			parallel = 1 // a stream on standard output keeps the cells in order
		}
	}
	// Cells run side by side, -cells at a time; each stage's pool is shared
	// by every cell (planner.Pools), so a stage never works on more items
	// than its concurrency, however many cells run. A cell that stops the
	// run (max_cost) stops the others.
	var invalid atomic.Int64
	var errItems errorItems
	cellCtx, stopCells := context.WithCancelCause(ctx)
	defer stopCells(nil)
	errs := make([]error, len(cells))
	slots := make(chan struct{}, parallel)
	var cellsWG sync.WaitGroup
	onRecord := func(c *cellRun, rec *item.Record) error {
		if rec.Item.Invalid != "" {
			// Reported as read (FILE:LINE: message), the first few in
			// full; each is an error item in items.parquet.
			if n := invalid.Add(1); n <= maxInvalidShown {
				fmt.Fprintf(stderr, "evalflow run: %s%s\n", c.label(), rec.Item.Invalid)
			}
		}
		prog.add(rec)
		errItems.add(c.label(), rec)
		return rd.Write(rec)
	}
	localCells := cells
	var workerStats []cluster.WorkerStat
	if cf.enabled() {
		// The items run on workers; their records arrive here in the
		// order a local run delivers them.
		localCells = nil
		workerStats, errs[0] = runOnCluster(cellCtx, &cf, clusterRun{pipeline: pos[0], pf: &pf, p: p, cells: cells, rd: rd,
			runID: runID, dir: dir, limit: *limit, sample: *sample, seed: *seed, conc: *conc, noCache: *noCache,
			refresh: refresh, ciSeed: *ciSeed, stderr: stderr, spent: prevSpent,
			deliver: func(i int, rec *item.Record) error {
				cells[i].pl.Collect(rec)
				cells[i].claim(rec.Item.ID)
				return onRecord(cells[i], rec)
			}})
	}
	for i, c := range localCells {
		opts := planner.RunOptions{
			Limit: *limit, Sample: *sample, Seed: *seed,
			Skip:    func(seq int) bool { return rd.Kept(c.offset + seq) },
			Dataset: c.dsr,
			OnRecord: func(rec *item.Record) error {
				rec.Seq += c.offset
				rec.Cell = i
				return onRecord(c, rec)
			},
		}
		if c.cell == nil {
			opts.OnStart = prog.start
		}
		cellsWG.Add(1)
		go func() {
			defer cellsWG.Done()
			select {
			case slots <- struct{}{}:
			case <-cellCtx.Done():
				errs[i] = context.Cause(cellCtx)
				return
			}
			defer func() { <-slots }()
			if err := c.pl.Run(cellCtx, opts); err != nil {
				errs[i] = err
				var halt *nodes.StopRun
				if errors.As(err, &halt) || cellCtx.Err() == nil {
					stopCells(err)
				}
			}
		}()
	}
	cellsWG.Wait()
	var runErr error
	for _, err := range errs {
		var halt *nodes.StopRun
		if errors.As(err, &halt) {
			runErr = err
			break
		}
		if err != nil && runErr == nil {
			runErr = err
		}
	}
	if n := int(invalid.Load()); n > maxInvalidShown {
		fmt.Fprintf(stderr, "evalflow run: ... and %d more invalid dataset rows (error_message in items.parquet)\n", n-maxInvalidShown)
	}
	prog.stop()
	// Named whether or not -max-errors lets the run pass: each is an item
	// without a score.
	errItems.print(stderr, dir)

	closeErr := rd.Close()
	var rows []aggregate.Row
	for i, c := range cells {
		var crows []aggregate.Row
		for _, col := range c.pl.Collectors {
			if ag, ok := col.Stage.(*aggregate.Aggregate); ok {
				crows = append(crows, ag.Rows(context.WithoutCancel(ctx))...)
			}
		}
		if len(crows) == 0 {
			crows = prog.overall(i)
		}
		if c.cell != nil {
			for j := range crows {
				crows[j].Cell = c.cell.ID
			}
		}
		rows = append(rows, crows...)
	}
	aggErr := rd.WriteAggregates(rows)

	fin := manifest(p, cells[0].pl, runID, started, rd, rows, *limit, *sample, *seed, *conc)
	fin.RunID, fin.Started, fin.Resumes, fin.Kept, fin.MaxErrors, fin.Fingerprint = m.RunID, m.Started, m.Resumes, m.Kept, m.MaxErrors, fp
	fin.CISeed, fin.BinaryMetrics = *ciSeed, binaryCols
	if d := cells[0].dsr; d != nil && d.Mapping.Format != "" {
		fin.Dataset.Format = d.Mapping.Format // as read, which may differ from the extension
	}
	fin.Stages = stageStats(cells)
	plans := cellPlans(cells)
	fin.Models, fin.Inputs = modelProvenance(plans), inputFiles(plans)
	if st := pool.Stats(); st.Calls+st.CacheHits > 0 || prevCalls != nil {
		mc := rundir.ManifestModelCalls{Calls: st.Calls, Retries: st.Retries, CacheHits: st.CacheHits,
			InputTokens: st.InputTokens, OutputTokens: st.OutputTokens, Cost: st.Cost}
		if p := prevCalls; p != nil {
			// Earlier processes of a resumed run (one killed before writing
			// its manifest is not known).
			mc.Calls, mc.Retries, mc.CacheHits = mc.Calls+p.Calls, mc.Retries+p.Retries, mc.CacheHits+p.CacheHits
			mc.InputTokens, mc.OutputTokens, mc.Cost = mc.InputTokens+p.InputTokens, mc.OutputTokens+p.OutputTokens, mc.Cost+p.Cost
		}
		fin.ModelCalls = &mc
	}
	fin.Cells = manifestCells(cells, rows)
	fin.Seconds = fin.Finished.Sub(m.Started).Seconds()
	m = fin
	status := "complete"
	code := exitOK
	var halt *nodes.StopRun
	switch {
	case errors.As(runErr, &halt):
		status, code = "stopped", exitRun
		m.Error = halt.Error()
	case runErr != nil && ctx.Err() != nil:
		status, code = "cancelled", exitCancelled
	case runErr != nil:
		status, code = "failed", exitRun
		m.Error = runErr.Error()
	case closeErr != nil || aggErr != nil:
		status, code = "failed", exitRun
		m.Error = errors.Join(closeErr, aggErr).Error()
	case maxErrs.exceeded(m.Counts.Errors, m.Counts.Items):
		status, code = "failed", exitRun
		m.Error = fmt.Sprintf("%d of %d items are in error (harness failures, not wrong predictions), more than -max-errors %s allows; see error_message in items.parquet; running the same command again retries them",
			m.Counts.Errors, m.Counts.Items, maxErrs.text)
	}
	m.Status = status
	for _, c := range cells {
		if c.dsr != nil {
			for _, w := range c.dsr.Warnings {
				m.Warnings = append(m.Warnings, c.label()+w)
			}
		}
		for _, n := range c.pl.Order {
			// With -limit or -sample, predictions for items left out are
			// expected: the generate stage's unmatched-id warning is moot.
			// A resumed run does not generate for the items it kept, and
			// an interrupted or stopped one not for the items it left.
			if (*limit > 0 || *sample > 0 || kept > 0 || runErr != nil) && n.Kind.Source() {
				continue
			}
			if w, ok := n.Stage.(nodes.Warner); ok {
				for _, x := range w.Warnings() {
					m.Warnings = append(m.Warnings, c.label()+x)
				}
			}
		}
	}
	if closeErr != nil {
		// The parts hold every finished item; keep them for the next
		// command and leave the manifest saying so.
		m.Status = "failed"
		rd.WriteJSON(rundir.ManifestName, withWorkers(m, workerStats))
		rd.Abandon()
		fmt.Fprintf(stderr, "evalflow run: %v\nevalflow run: the finished items are kept in %s; run the same command again to continue\n",
			closeErr, filepath.Join(dir, rundir.PartsDir))
		return exitRun
	}
	if err := rd.WriteJSON(rundir.ManifestName, withWorkers(m, workerStats)); err != nil {
		rd.Abandon()
		fmt.Fprintf(stderr, "evalflow run: %v\n", err)
		return exitRun
	}
	if err := rd.WriteSummaryFile(m, rows); err != nil && code == exitOK {
		code = exitRun
		fmt.Fprintf(stderr, "evalflow run: %v\n", err)
	}
	if err := rd.Finish(); err != nil && code == exitOK {
		code = exitRun
		fmt.Fprintf(stderr, "evalflow run: %v\n", err)
	}
	writeRunReport(context.WithoutCancel(ctx), dir, stderr) // report.html; a failure is a warning
	// A sink streaming to standard output owns it; the summary moves to
	// standard error so the stream stays clean for the next process.
	summaryOut := stdout
	for _, sb := range p.Sinks {
		if sb.Path == "-" {
			summaryOut = stderr
		}
	}
	printSummary(summaryOut, m, rows, dir)
	for _, w := range m.Warnings {
		fmt.Fprintf(stderr, "evalflow run: warning: %s\n", w)
	}
	if m.Error != "" {
		fmt.Fprintf(stderr, "evalflow run: %s\n", m.Error)
	}
	if status == "cancelled" {
		fmt.Fprintf(stderr, "evalflow run: interrupted; %d finished items are in %s; run the same command again to continue\n", m.Counts.Items-m.Counts.Cancelled, dir)
	}
	if results != nil && results.Disk().Written() > 0 {
		// Keep the stage cache within its bound (least recently used go).
		results.Disk().GC(store.MaxBytes())
	}
	if *junitOut != "" && status != "cancelled" {
		if err := writeJUnit(*junitOut, dir, m, rows, metricCols); err != nil {
			fmt.Fprintf(stderr, "evalflow run: -junit: %v\n", err)
			if code == exitOK {
				code = exitRun
			}
		}
	}
	// A failed run (exit 2) or an interrupt wins over a gate: its numbers
	// are not the run's.
	if code == exitOK {
		if missed := failedGates(gates, rows); len(missed) > 0 {
			for _, msg := range missed {
				fmt.Fprintf(stderr, "evalflow run: gate failed: %s\n", msg)
			}
			code = exitGate
		}
	}
	return code
}

// gateMetrics lists what -fail-under may name: the item metric columns and
// the dataset metrics (whose output names are prefixed by their column
// name, so a gate may name any output: see checkGateNames).
func gateMetrics(cells []*cellRun, metricCols []string) []string {
	out := append([]string(nil), metricCols...)
	for _, c := range cells {
		for _, n := range c.pl.Chain {
			if dm, ok := n.Stage.(nodes.DatasetMetrics); ok {
				for _, d := range dm.DatasetMetrics() {
					out = append(out, d.As+"*")
				}
			}
		}
	}
	return out
}

// manifestRows are a finished run's overall means, from its manifest (per
// cell in a sweep), for gates on a run that had nothing left to do.
func manifestRows(m *rundir.Manifest) []aggregate.Row {
	var rows []aggregate.Row
	add := func(cell string, metrics map[string]*float64) {
		names := slices.Sorted(maps.Keys(metrics))
		for _, name := range names {
			mean := math.NaN()
			if v := metrics[name]; v != nil {
				mean = *v
			}
			rows = append(rows, aggregate.Row{Cell: cell, Group: "all", Metric: name, Mean: mean, CILow: math.NaN(), CIHigh: math.NaN()})
		}
	}
	if len(m.Cells) > 0 {
		for _, c := range m.Cells {
			add(c.ID, c.Metrics)
		}
		return rows
	}
	add("", m.Metrics)
	return rows
}

// stageStats sums every cell's stage counts, by stage name.
func stageStats(cells []*cellRun) []rundir.ManifestStage {
	var out []rundir.ManifestStage
	idx := map[string]int{}
	for _, c := range cells {
		for _, st := range c.pl.Stats() {
			i, ok := idx[st.Name]
			if !ok {
				i = len(out)
				idx[st.Name] = i
				out = append(out, rundir.ManifestStage{Name: st.Name, Kind: st.Kind})
			}
			out[i].Items += st.Items
			out[i].Cached += st.Cached
			out[i].Computed += st.Computed
		}
	}
	return out
}

// cellRun is one sweep cell's pipeline, plan and dataset (a run without a
// sweep has one, with cell nil). Its items take the sequence numbers
// offset..offset+total-1.
type cellRun struct {
	cell          *dsl.Cell
	p             *dsl.Pipeline
	pl            *planner.Plan
	dsr           *dataset.Reader
	offset, total int
}

// claim tells the cell's source stages that a worker served itemID
// (nodes.Claimer), so their warnings are a local run's.
func (c *cellRun) claim(itemID string) {
	for _, n := range c.pl.Order {
		if cl, ok := n.Stage.(nodes.Claimer); ok && n.Kind.Source() {
			cl.Claim(itemID)
		}
	}
}

// label prefixes messages about a cell ("" outside a sweep).
func (c *cellRun) label() string {
	if c.cell == nil {
		return ""
	}
	return "cell " + c.cell.ID + ": "
}

func rundirCell(c *dsl.Cell) rundir.Cell {
	rc := rundir.Cell{ID: c.ID}
	for _, v := range c.Vars {
		rc.Vars = append(rc.Vars, rundir.CellVar{Name: v.Name, Value: cellValue(v.Value)})
	}
	return rc
}

// cellValue turns a swept value into a column value: strings, numbers and
// bools as themselves, anything else as its JSON text.
func cellValue(v cty.Value) table.Value {
	if v.IsNull() || !v.IsKnown() {
		return nil
	}
	switch v.Type() {
	case cty.String:
		return v.AsString()
	case cty.Bool:
		return v.True()
	case cty.Number:
		bf := v.AsBigFloat()
		if i, acc := bf.Int64(); acc == big.Exact {
			return i
		}
		f, _ := bf.Float64()
		return f
	}
	return dsl.CellValueText(v)
}

// passColumns is the union of the cells' dataset columns, in first-seen
// order; a column whose type differs between cells is text.
func passColumns(cells []*cellRun) ([]string, []table.Type) {
	var names []string
	var types []table.Type
	idx := map[string]int{}
	for _, c := range cells {
		if c.dsr == nil {
			continue
		}
		for _, col := range c.dsr.Columns {
			if i, ok := idx[col.Name]; ok {
				if types[i] != col.Type {
					types[i] = table.TypeString
				}
				continue
			}
			idx[col.Name] = len(names)
			names = append(names, col.Name)
			types = append(types, col.Type)
		}
	}
	return names, types
}

// manifestCells lists the cells with their variables, item counts and
// overall means (rows nil: before the run).
func manifestCells(cells []*cellRun, rows []aggregate.Row) []rundir.ManifestCell {
	var out []rundir.ManifestCell
	for i, c := range cells {
		if c.cell == nil {
			continue
		}
		mc := rundir.ManifestCell{Index: i, ID: c.cell.ID, Variables: map[string]json.RawMessage{}, Items: c.total, Metrics: map[string]*float64{}}
		for _, v := range c.cell.Vars {
			mc.Variables[v.Name] = dsl.ValueJSON(v.Value)
		}
		for _, r := range rows {
			if r.Cell == c.cell.ID && r.Group == "all" {
				mc.Metrics[r.Metric] = floatOrNil(r.Mean)
			}
		}
		out = append(out, mc)
	}
	return out
}

// sweepFingerprint is the run's fingerprint: one cell's as it is; in a
// sweep, the components every cell shares once and the others per cell.
func sweepFingerprint(cells []*cellRun, limit, sample int, seed uint64) rundir.Fingerprint {
	if len(cells) == 1 && cells[0].cell == nil {
		return fingerprint(cells[0].p, cells[0].pl, limit, sample, seed)
	}
	fps := make([]rundir.Fingerprint, len(cells))
	keys := map[string]bool{}
	var ids []string
	for i, c := range cells {
		fps[i] = fingerprint(c.p, c.pl, limit, sample, seed)
		for k := range fps[i] {
			keys[k] = true
		}
		ids = append(ids, c.cell.ID)
	}
	f := rundir.Fingerprint{"cells": strings.Join(ids, " | ")}
	for k := range keys {
		same := true
		for _, fp := range fps[1:] {
			if fp[k] != fps[0][k] {
				same = false
			}
		}
		if same {
			f[k] = fps[0][k]
			continue
		}
		for i, fp := range fps {
			f[k+" [cell "+cells[i].cell.ID+"]"] = fp[k]
		}
	}
	return f
}

// maxCostMayDiffer lets a run stopped by max_cost resume with a higher
// max_cost variable (var.max_cost or any var.*_max_cost).
func maxCostMayDiffer(prev *rundir.Manifest, key, now string) bool {
	if prev.Status != "stopped" || (key != "var:max_cost" && !(strings.HasPrefix(key, "var:") && strings.HasSuffix(key, "_max_cost"))) {
		return false
	}
	old, err1 := strconv.ParseFloat(prev.Fingerprint[key], 64)
	cur, err2 := strconv.ParseFloat(now, 64)
	return err1 == nil && err2 == nil && cur > old
}

// fingerprint names everything a resumed run must share with the run it
// continues: the pipeline's files, every variable's value (and, for a
// variable naming a file or directory, its content), the dataset, the
// engines' roots (database content), and which items run.
func fingerprint(p *dsl.Pipeline, pl *planner.Plan, limit, sample int, seed uint64) rundir.Fingerprint {
	f := rundir.Fingerprint{"pipeline": p.Hash, "limit": strconv.Itoa(limit), "sample": strconv.Itoa(sample)}
	if sample > 0 {
		f["seed"] = strconv.FormatUint(seed, 10)
	}
	for _, n := range p.VariableNames() {
		v := p.Variables[n]
		f["var:"+n] = string(dsl.ValueJSON(v.Value))
		if s, ok := dsl.GoValue(v.Value).(string); ok && s != "" {
			path := s
			if !filepath.IsAbs(path) {
				path = filepath.Join(p.Dir, path)
				if _, err := os.Stat(path); err != nil {
					path = s // fromcwd values are relative to the working directory
				}
			}
			if h := store.InputFingerprint(path); h != "" {
				f["content of var."+n] = h
			}
		}
	}
	if ds := pl.Dataset; ds != nil {
		f["dataset"] = store.InputFingerprint(ds.Source)
	}
	// Files the stages name directly (a predictions path written in the
	// pipeline rather than given by a variable).
	for name, in := range blockFiles(p) {
		f["content of "+name] = "sha256:" + in.SHA256
	}
	for name, e := range pl.Engines {
		if r, ok := any(e).(interface{ Root() string }); ok && r.Root() != "" {
			f["databases of engine."+name] = store.InputFingerprint(r.Root())
		}
	}
	return f
}

func manifest(p *dsl.Pipeline, pl *planner.Plan, runID string, started time.Time, rd *rundir.Run, rows []aggregate.Row, limit, sample int, seed uint64, conc int) *rundir.Manifest {
	fin := time.Now().UTC()
	m := &rundir.Manifest{
		RunID: runID, Pipeline: p.Path, PipelineHash: p.Hash,
		Evalflow: buildVersion(), Go: runtime.Version(), Command: redactArgs(os.Args),
		Started: started, Finished: fin, Seconds: fin.Sub(started).Seconds(),
		Counts: rd.Counts, Metrics: map[string]*float64{},
		Options: rundir.RunOptions{Limit: limit, Sample: sample, Concurrency: conc},
	}
	if sample > 0 {
		m.Options.Seed = seed
	}
	for _, n := range p.VariableNames() {
		v := p.Variables[n]
		m.Variables = append(m.Variables, rundir.ManifestVar{Name: n, Value: dsl.ValueJSON(v.Value), Source: v.Source})
	}
	if ds := pl.Dataset; ds != nil {
		m.Dataset = rundir.ManifestFile{Name: ds.Name, Path: ds.Source, Format: ds.Format, SHA256: store.HashFile(ds.Source)}
	}
	for _, r := range rows {
		if r.Group != "all" {
			continue
		}
		m.Metrics[r.Metric] = floatOrNil(r.Mean)
		if r.ErrItems > 0 {
			if m.MetricsWithoutErrors == nil {
				m.MetricsWithoutErrors = map[string]*float64{}
			}
			m.MetricsWithoutErrors[r.Metric] = floatOrNil(r.MeanOK)
		}
		if r.Errors > 0 {
			if m.MetricErrors == nil {
				m.MetricErrors = map[string]int{}
			}
			m.MetricErrors[r.Metric] = r.Errors
		}
	}
	return m
}

func floatOrNil(f float64) *float64 {
	if math.IsNaN(f) {
		return nil
	}
	return &f
}

func printSummary(w io.Writer, m *rundir.Manifest, rows []aggregate.Row, dir string) {
	fmt.Fprintf(w, "run %s  %s  %d items (%s)  %s\n",
		m.RunID, m.Status, m.Counts.Items, rundir.StatusCounts(m.Counts),
		time.Duration(m.Seconds*float64(time.Second)).Round(time.Millisecond))
	var overall []aggregate.Row
	for _, r := range rows {
		if r.Group == "all" && r.Cell == "" {
			overall = append(overall, r)
		}
	}
	if len(m.Cells) > 0 {
		fmt.Fprintf(w, "  %d cells; mean [95%% CI] by cell:\n", len(m.Cells))
		rundir.WriteCellTable(w, rows, false)
	}
	if len(overall) > 0 {
		fmt.Fprintf(w, "  %-24s %8s  %-18s %6s %7s\n", "metric", "mean", "95% CI", "n", "errors")
		for _, r := range overall {
			mean := "–"
			if !math.IsNaN(r.Mean) {
				mean = fmt.Sprintf("%.4f", r.Mean)
			}
			fmt.Fprintf(w, "  %-24s %8s  %-18s %6d %7d\n", r.Metric, mean, rundir.FormatCI(r), r.N, r.Errors)
		}
		for _, l := range rundir.SuiteLines(rows) {
			fmt.Fprintf(w, "  %s\n", l)
		}
	}
	if len(m.Counts.Classes) > 0 {
		fmt.Fprintf(w, "  final-attempt errors:")
		for _, c := range slices.Sorted(maps.Keys(m.Counts.Classes)) {
			fmt.Fprintf(w, " %s %d", c, m.Counts.Classes[c])
		}
		fmt.Fprintln(w)
	}
	if mc := m.ModelCalls; mc != nil {
		fmt.Fprintf(w, "  model calls: %d (%d retries), %d input + %d output tokens, $%.4f, %d cache hits (generation, repairs and judges)\n",
			mc.Calls, mc.Retries, mc.InputTokens, mc.OutputTokens, mc.Cost, mc.CacheHits)
	} else if c := m.Counts; c.InputTokens+c.OutputTokens > 0 || c.CacheHits > 0 {
		fmt.Fprintf(w, "  model calls: %d input + %d output tokens, $%.4f, %d cache hits\n", c.InputTokens, c.OutputTokens, c.Cost, c.CacheHits)
	}
	fmt.Fprintf(w, "  wrote %s\n", dir)
}

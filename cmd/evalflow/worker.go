package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/evalflow/evalflow/cache"
	"github.com/evalflow/evalflow/cluster"
	"github.com/evalflow/evalflow/dataset"
	"github.com/evalflow/evalflow/dsl"
	"github.com/evalflow/evalflow/item"
	"github.com/evalflow/evalflow/llm"
	"github.com/evalflow/evalflow/nodes"
	"github.com/evalflow/evalflow/planner"
	"github.com/evalflow/evalflow/store"
)

// cmdWorker is `evalflow worker nats://HOST:4222`: it serves every run
// published to the server, each in a child process (`-serve KEY`) whose
// working directory mirrors the coordinator's inside the run's bundle.
func cmdWorker(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("worker", "worker [flags] nats://HOST:4222", stderr)
	slots := fs.Int("concurrency", 2, "shards this worker runs at once (per run)")
	bundles := fs.String("bundles", "", "where pipeline bundles are unpacked (default: the user cache directory's evalflow/bundles)")
	id := fs.String("id", "", "this worker's name in manifest.json (default HOST-PID)")
	serve := fs.String("serve", "", "serve only the run with this key, here (what a worker starts per run)")
	var conn connFlags
	conn.register(fs)
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
	if *slots < 1 || *slots > maxConcurrency {
		fmt.Fprintf(stderr, "evalflow worker: -concurrency %d: use 1..%d\n", *slots, maxConcurrency)
		return exitConfig
	}
	url := childURL(pos[0])
	if err := checkNATSURL(url); err != nil {
		fmt.Fprintf(stderr, "evalflow worker: %s: %v\n", cluster.RedactURL(url), err)
		return exitConfig
	}
	if err := conn.check(); err != nil {
		fmt.Fprintf(stderr, "evalflow worker: %v\n", err)
		return exitConfig
	}
	if *bundles == "" {
		dir, err := os.UserCacheDir()
		if err != nil {
			dir = os.TempDir()
		}
		if d := os.Getenv("EVALFLOW_CACHE_DIR"); d != "" {
			dir = d
		}
		*bundles = filepath.Join(dir, "evalflow", "bundles")
	}
	wid, host := cluster.NewWorkerID()
	if *id != "" {
		wid = *id
	}
	opts := conn.options(url, "evalflow worker "+wid)
	opts.Retry = true
	opts.Log = func(format string, args ...any) {
		fmt.Fprintf(stderr, "evalflow worker %s: "+format+"\n", append([]any{wid}, args...)...)
	}
	nc, err := cluster.Connect(opts)
	if err != nil {
		fmt.Fprintf(stderr, "evalflow worker: %v\n", err)
		return exitRun
	}
	defer nc.Close()
	w := &cluster.Worker{NC: nc, ID: wid, Host: host, Slots: *slots,
		Log: func(format string, args ...any) {
			fmt.Fprintf(stderr, "evalflow worker %s: "+format+"\n", append([]any{wid}, args...)...)
		}}
	if *serve != "" {
		if err := serveRun(ctx, w, *serve, *bundles, stderr); err != nil && ctx.Err() == nil {
			fmt.Fprintf(stderr, "evalflow worker %s: %v\n", wid, err)
			return exitRun
		}
		return exitOK
	}
	exe, err := os.Executable()
	if err != nil {
		fmt.Fprintf(stderr, "evalflow worker: %v\n", err)
		return exitRun
	}
	fmt.Fprintf(stderr, "evalflow worker %s: waiting for runs on %s\n", wid, cluster.RedactURL(url))
	err = w.Watch(ctx, func(rctx context.Context, spec *cluster.Spec) error {
		fmt.Fprintf(stderr, "evalflow worker %s: serving run %s\n", wid, spec.RunID)
		cmd := workerCommand(rctx, exe, url, nil, append([]string{"-serve", spec.Key, "-id", wid,
			"-concurrency", strconv.Itoa(*slots), "-bundles", *bundles}, conn.args()...)...)
		cmd.Stdout, cmd.Stderr = stderr, stderr
		cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
		cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
		cmd.WaitDelay = 10 * time.Second
		return cmd.Run()
	})
	if err != nil {
		fmt.Fprintf(stderr, "evalflow worker %s: %v\n", wid, err)
		return exitRun
	}
	return exitOK
}

// serveRun serves one run in this process: it waits for the run to be
// published, fetches and checks its bundle, moves into the mirror of the
// coordinator's working directory and runs shards until the run is done.
func serveRun(ctx context.Context, w *cluster.Worker, key, bundles string, stderr io.Writer) error {
	var spec *cluster.Spec
	for {
		s, live, err := cluster.LoadSpec(ctx, w.NC, key)
		if err != nil && ctx.Err() != nil {
			return nil
		}
		if err != nil && w.NC.IsClosed() {
			return cluster.ErrConnClosed
		}
		if errors.As(err, new(*cluster.NoJetStreamError)) {
			return err
		}
		if err == nil && s != nil && !live {
			return nil // stopped
		}
		if err == nil && s != nil {
			spec = s
			break
		}
		t := time.NewTimer(200 * time.Millisecond)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil
		case <-t.C:
		}
	}
	dir, err := cluster.FetchBundle(ctx, w.NC, spec.Bundle, bundles)
	if err != nil {
		return err
	}
	fsroot := filepath.Join(dir, "fs")
	mirror := filepath.Join(fsroot, spec.Cwd)
	if err := os.MkdirAll(mirror, 0o755); err != nil {
		return err
	}
	if err := os.Chdir(mirror); err != nil {
		return err
	}
	r, err := newShardRunner(ctx, w, spec, fsroot)
	if err != nil {
		return err
	}
	defer r.close()
	w.Report = r.report
	return w.Serve(ctx, spec, r)
}

// shardRunner runs a run's shards with the plans a local run builds.
type shardRunner struct {
	spec   *cluster.Spec
	fsroot string
	cells  []*cellRun
	ready  []readyCell
	stores *cache.Stores
	pool   *llm.Pool
	limits *cluster.Limits // the run's shared limits (closed by close)
}

type readyCell struct {
	once  sync.Once
	err   error
	items []item.Item // by local seq
}

// inBundle maps an absolute coordinator path that the bundle holds to its
// copy; other values are returned as they are.
func (r *shardRunner) inBundle(v string) string {
	if filepath.IsAbs(v) {
		if _, err := os.Stat(filepath.Join(r.fsroot, v)); err == nil {
			return filepath.Join(r.fsroot, v)
		}
	}
	return v
}

// mapValue maps the absolute paths of a NAME=VALUE option (the whole value,
// or each element of a comma-separated list).
func (r *shardRunner) mapValue(kv string) string {
	name, v, ok := strings.Cut(kv, "=")
	if !ok {
		return kv
	}
	parts := strings.Split(v, ",")
	for i, p := range parts {
		t := strings.TrimSpace(p)
		if m := r.inBundle(t); m != t {
			parts[i] = strings.Replace(p, t, m, 1)
		}
	}
	return name + "=" + strings.Join(parts, ",")
}

func newShardRunner(ctx context.Context, w *cluster.Worker, spec *cluster.Spec, fsroot string) (*shardRunner, error) {
	r := &shardRunner{spec: spec, fsroot: fsroot}
	var vars, varFiles []string
	for _, v := range spec.Vars {
		vars = append(vars, r.mapValue(v))
	}
	for _, f := range spec.VarFiles {
		varFiles = append(varFiles, r.inBundle(f))
	}
	env := []string{}
	for _, e := range spec.Env {
		env = append(env, r.mapValue(e))
	}
	path := r.inBundle(spec.Pipeline)
	load := func(cell int) (*dsl.Pipeline, error) {
		p, diags := dsl.Load(path, dsl.LoadOptions{Vars: vars, VarFiles: varFiles, Sweeps: spec.Sweeps, Env: env, Cell: cell})
		if diags.HasErrors() {
			var b bytes.Buffer
			writeDiags(&b, diags)
			return nil, fmt.Errorf("the pipeline does not load here:\n%s", b.String())
		}
		return p, nil
	}
	p, err := load(0)
	if err != nil {
		return nil, err
	}
	if p.Hash != spec.PipelineHash {
		return nil, fmt.Errorf("the pipeline's files here hash to %s, the run's to %s", p.Hash, spec.PipelineHash)
	}
	pipes := []*dsl.Pipeline{p}
	for i := 1; i < len(p.Cells); i++ {
		pi, err := load(i)
		if err != nil {
			return nil, err
		}
		pipes = append(pipes, pi)
	}
	specs := expandCells(p, pipes)
	if len(specs) != len(spec.Cells) {
		return nil, fmt.Errorf("the pipeline has %d cells here, %d in the run", len(specs), len(spec.Cells))
	}
	r.stores = cache.NewStores()
	pool := llm.NewPool(r.stores)
	r.pool = pool
	// Creating a replicated bucket on a busy cluster may take longer than
	// a JetStream request's default 5 s.
	lctx, cancel := context.WithTimeout(ctx, time.Minute)
	lim, err := cluster.NewLimits(lctx, w.NC, spec, w.ID+"-"+strconv.Itoa(os.Getpid()))
	cancel()
	if err != nil {
		r.close()
		return nil, fmt.Errorf("shared limits: %w", err)
	}
	r.limits = lim
	shareLimits(pool, lim)
	var results *nodes.Results
	if !spec.NoCache {
		if disk, err := store.Open(filepath.Join(store.Root(), "stages")); err == nil {
			results = nodes.NewResults(disk, buildVersion())
		}
	}
	pools := planner.NewPools()
	for i, sp := range specs {
		pl, diags := planner.Build(ctx, sp.p, planner.Options{Concurrency: spec.Concurrency, LLM: pool, CISeed: spec.CISeed,
			Results: results, NoCache: spec.NoCache, Refresh: spec.Refresh, Branch: sp.branch, Pools: pools})
		if diags.HasErrors() {
			var b bytes.Buffer
			writeDiags(&b, diags)
			r.close()
			return nil, fmt.Errorf("cell %d does not plan here:\n%s", i, b.String())
		}
		pl.DetachCollectors()
		r.cells = append(r.cells, &cellRun{p: sp.p, pl: pl, cell: sp.cell})
	}
	r.ready = make([]readyCell, len(r.cells))
	return r, nil
}

func (r *shardRunner) close() {
	for _, c := range r.cells {
		if c.dsr != nil {
			c.dsr.Close()
		}
		c.pl.Close()
	}
	if r.limits != nil {
		r.limits.Close()
	}
	if r.stores != nil {
		r.stores.Close()
	}
}

// report is what this process did for the run so far, for the
// coordinator's manifest: its stages' counts and its model calls.
func (r *shardRunner) report() cluster.Report {
	var rep cluster.Report
	for _, c := range r.cells {
		var st []cluster.StageCount
		for _, s := range c.pl.Stats() {
			st = append(st, cluster.StageCount{Name: s.Name, Kind: s.Kind, Items: s.Items, Cached: s.Cached, Computed: s.Computed})
		}
		rep.Stages = cluster.AddStages(rep.Stages, st)
	}
	s := r.pool.Stats()
	rep.Calls = cluster.CallCount{Calls: s.Calls, Retries: s.Retries, CacheHits: s.CacheHits, InputTokens: s.InputTokens,
		OutputTokens: s.OutputTokens, Cost: s.Cost}
	return rep
}

// hasModels reports whether the run's pipeline has a model block.
func (r *shardRunner) hasModels() bool { return len(r.pool.Configs()) > 0 }

// shareLimits makes the pool's clients take the run's shared limits:
// each endpoint's max_concurrency (the llm default when unset),
// requests_per_minute and tokens_per_minute, and the run's max_cost, over
// every worker.
func shareLimits(pool *llm.Pool, lim *cluster.Limits) {
	pool.SetAdmit(func(cfg llm.Config) llm.Admit {
		conc := cfg.MaxConcurrency
		if conc <= 0 {
			conc = llm.DefaultMaxConcurrency
		}
		g := lim.Gate(endpointID(cfg), cluster.EndpointLimits{Concurrency: conc, RequestsPerMinute: cfg.RequestsPerMinute,
			TokensPerMinute: cfg.TokensPerMinute}, cfg.MaxCost)
		return func(ctx context.Context, tokens int) (func(int, float64), error) {
			release, err := g.Acquire(ctx, tokens)
			if errors.Is(err, cluster.ErrBudgetSpent) {
				return nil, fmt.Errorf("%w: %w", llm.ErrBudget, err)
			}
			return release, err
		}
	})
}

// endpointID names a model endpoint in the shared limits the same way on
// every worker: its configuration as the pipeline gives it (the cache
// directory, which may resolve differently per worker, aside).
func endpointID(cfg llm.Config) string {
	cfg.CacheDir = ""
	return cluster.EndpointID(cfg.Identity())
}

// prepare checks a cell's engines and reads its items, once.
func (r *shardRunner) prepare(ctx context.Context, cell int) error {
	rc := &r.ready[cell]
	rc.once.Do(func() {
		c := r.cells[cell]
		if err := preflight(ctx, c.pl); err != nil {
			rc.err = err
			return
		}
		if c.pl.Dataset == nil {
			rc.err = fmt.Errorf("the pipeline has no dataset")
			return
		}
		dsr, err := dataset.Open(ctx, c.pl.Dataset)
		if err != nil {
			rc.err = err
			return
		}
		c.dsr = dsr
		rc.err = selectItems(ctx, dsr, r.spec.Limit, r.spec.Sample, r.spec.Seed, nil, func(_ int, it item.Item) error {
			rc.items = append(rc.items, it)
			return nil
		})
		if rc.err == nil && len(rc.items) != r.spec.Cells[cell].Total {
			rc.err = fmt.Errorf("the dataset has %d items here, %d in the run", len(rc.items), r.spec.Cells[cell].Total)
		}
	})
	if rc.err != nil && ctx.Err() != nil {
		// A cancelled preparation is tried again by the next shard.
		return rc.err
	}
	return rc.err
}

func (r *shardRunner) RunShard(ctx context.Context, cell int, seqs []int, emit func(*item.Record) error) error {
	if cell < 0 || cell >= len(r.cells) {
		return fmt.Errorf("no cell %d", cell)
	}
	if err := r.prepare(ctx, cell); err != nil {
		return err
	}
	items := r.ready[cell].items
	picked := make([]item.Item, len(seqs))
	for i, q := range seqs {
		if q < 0 || q >= len(items) {
			return fmt.Errorf("no item %d in cell %d", q, cell)
		}
		picked[i] = items[q]
	}
	err := r.cells[cell].pl.RunItems(ctx, seqs, picked, func(rec *item.Record) error {
		rec.Cell = cell
		r.unmap(rec)
		return emit(rec)
	})
	var halt *nodes.StopRun
	if errors.As(err, &halt) {
		return &cluster.StopError{Reason: halt.Reason} // the whole run stops
	}
	return err
}

func (r *shardRunner) ErrorRecords(ctx context.Context, cell int, seqs []int, msg string) ([]*item.Record, error) {
	items := r.ready[cell].items
	out := make([]*item.Record, 0, len(seqs))
	for _, q := range seqs {
		if q < 0 || q >= len(items) {
			return nil, fmt.Errorf("no item %d in cell %d", q, cell)
		}
		out = append(out, &item.Record{Seq: q, Cell: cell, Item: items[q], Status: "error", Error: msg})
	}
	return out, nil
}

// unmap writes the coordinator's paths back into a record's messages: the
// run directory must not depend on where a worker unpacked the bundle.
func (r *shardRunner) unmap(rec *item.Record) {
	f := func(s string) string {
		if strings.Contains(s, r.fsroot) {
			return strings.ReplaceAll(s, r.fsroot, "")
		}
		return s
	}
	rec.Error, rec.GoldError, rec.Item.Invalid = f(rec.Error), f(rec.GoldError), f(rec.Item.Invalid)
	for _, s := range rec.Samples {
		for _, a := range s.Attempts {
			a.ErrorMessage = f(a.ErrorMessage)
		}
	}
	for i := range rec.Scores {
		rec.Scores[i].Err = f(rec.Scores[i].Err)
	}
}

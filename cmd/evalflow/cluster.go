package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"

	"github.com/evalflow/evalflow/cluster"
	"github.com/evalflow/evalflow/cluster/embed"
	"github.com/evalflow/evalflow/dataset"
	"github.com/evalflow/evalflow/dsl"
	"github.com/evalflow/evalflow/item"
	"github.com/evalflow/evalflow/nodes"
	"github.com/evalflow/evalflow/planner"
	"github.com/evalflow/evalflow/rundir"
)

// tokenEnv carries the embedded server's token to the worker processes
// of `run -workers N` (an environment variable: not visible in ps).
const tokenEnv = "EVALFLOW_NATS_TOKEN"

// urlEnv carries the server URL to a worker process evalflow starts
// itself (the process a worker starts for each run; run -workers starts its
// own server, whose URL has no password, for its workers): its
// command line shows the URL with any password cut out (cluster.RedactURL,
// what `ps` shows every user), and the process takes the whole URL from
// here when its argument is that redacted form (childURL).
const urlEnv = "EVALFLOW_NATS_URL"

// workerCommand is the command of a worker process evalflow starts: the
// arguments after "worker" and the URL, and the URL in its environment
// (urlEnv), not on its command line.
func workerCommand(ctx context.Context, exe, url string, env []string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, exe, append([]string{"worker", cluster.RedactURL(url)}, args...)...)
	cmd.Env = append(append(os.Environ(), env...), urlEnv+"="+url) // the last of a key wins
	return cmd
}

// childURL is the URL a worker connects to: arg as given, or, when arg is
// the redacted form of the URL in urlEnv (a process evalflow started),
// that URL.
func childURL(arg string) string {
	if v := os.Getenv(urlEnv); v != "" && cluster.RedactURL(v) == arg {
		return v
	}
	return arg
}

// checkNATSURL checks a NATS server URL as nats.go takes it: one or a
// comma-separated list of nats://, tls://, ws:// or wss:// URLs or bare
// HOST:PORT (nats.go adds nats://).
func checkNATSURL(u string) error {
	for _, part := range strings.Split(u, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			return fmt.Errorf("an empty server URL")
		}
		scheme, rest, ok := strings.Cut(part, "://")
		if !ok {
			rest = part
		} else {
			switch strings.ToLower(scheme) {
			case "nats", "tls", "ws", "wss":
			default:
				return fmt.Errorf("%s:// is not a NATS URL: use nats://HOST:4222 (or tls://, ws://, wss://)", scheme)
			}
		}
		if at := strings.LastIndexByte(rest, '@'); at >= 0 {
			rest = rest[at+1:]
		}
		if host, _, _ := strings.Cut(rest, "/"); host == "" || strings.HasPrefix(host, ":") {
			return fmt.Errorf("no server host: use nats://HOST:4222")
		}
	}
	return nil
}

// redactArgs returns args (a command line, for manifest.json's command)
// with the passwords of NATS URLs hidden: the value of -cluster, the
// worker's URL and any nats://user:pass@ argument.
func redactArgs(args []string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		if name, v, ok := strings.Cut(a, "="); ok && strings.TrimLeft(name, "-") == "cluster" && strings.HasPrefix(name, "-") {
			out[i] = name + "=" + cluster.RedactURL(v)
			continue
		}
		if i > 0 && strings.TrimLeft(args[i-1], "-") == "cluster" && strings.HasPrefix(args[i-1], "-") {
			out[i] = cluster.RedactURL(a)
			continue
		}
		if strings.Contains(a, "://") && strings.Contains(a, "@") {
			out[i] = cluster.RedactURL(a)
			continue
		}
		out[i] = a
	}
	return out
}

// connFlags are the NATS connection flags of run -cluster and worker.
type connFlags struct {
	creds, nkey, user, tlsCA, tlsCert, tlsKey string
}

func (c *connFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&c.creds, "creds", "", "NATS credentials file (JWT and nkey seed)")
	fs.StringVar(&c.nkey, "nkey", "", "NATS nkey seed file")
	fs.StringVar(&c.user, "user", "", "NATS user (the password is read from $NATS_PASSWORD)")
	fs.StringVar(&c.tlsCA, "tls-ca", "", "CA certificate (PEM) that signed the NATS server's certificate")
	fs.StringVar(&c.tlsCert, "tls-cert", "", "client certificate (PEM) for mutual TLS with the NATS server")
	fs.StringVar(&c.tlsKey, "tls-key", "", "client key (PEM) for -tls-cert")
}

// check refuses -user without $NATS_PASSWORD (the server would refuse
// every connection, each time with the same error).
func (c *connFlags) check() error {
	if c.user != "" && os.Getenv("NATS_PASSWORD") == "" {
		return fmt.Errorf("-user %s: $NATS_PASSWORD is not set (the password is read from it)", c.user)
	}
	return nil
}

func (c *connFlags) options(url, name string) cluster.ConnOptions {
	return cluster.ConnOptions{URL: url, Name: name, Creds: c.creds, NKey: c.nkey, User: c.user, Password: os.Getenv("NATS_PASSWORD"),
		Token: os.Getenv(tokenEnv), TLSCA: c.tlsCA, TLSCert: c.tlsCert, TLSKey: c.tlsKey}
}

// args renders the flags again, for worker processes started by the run
// (files by their absolute paths: the child runs elsewhere).
func (c *connFlags) args() []string {
	var out []string
	if c.user != "" {
		out = append(out, "-user", c.user)
	}
	for _, f := range []struct{ name, v string }{{"creds", c.creds}, {"nkey", c.nkey}, {"tls-ca", c.tlsCA}, {"tls-cert", c.tlsCert}, {"tls-key", c.tlsKey}} {
		if f.v != "" {
			out = append(out, "-"+f.name, absPath(f.v))
		}
	}
	return out
}

// clusterFlags are run's flags for a distributed run.
type clusterFlags struct {
	url        string
	workers    int
	slots      int
	shardSize  int
	ackWait    time.Duration
	maxDeliver int
	replicas   int
	leaseTTL   time.Duration
	conn       connFlags
	fs         *flag.FlagSet // what register registered on: check sees the flags given
}

func (cf *clusterFlags) register(fs *flag.FlagSet) {
	cf.fs = fs
	fs.StringVar(&cf.url, "cluster", "", "run on the workers of this NATS JetStream server (nats://HOST:4222; see docs/scale-out.md)")
	fs.IntVar(&cf.workers, "workers", 0, "run on N worker processes of this machine through an embedded NATS server")
	fs.IntVar(&cf.slots, "worker-slots", 2, "with -workers: shards each worker process runs at once")
	fs.IntVar(&cf.shardSize, "shard-size", 0, "with -cluster or -workers: items per shard (0: 32, fewer for small runs)")
	fs.DurationVar(&cf.ackWait, "ack-wait", cluster.DefaultAckWait, "with -cluster or -workers: how long a silent worker keeps its shard before it is redelivered")
	fs.IntVar(&cf.maxDeliver, "max-deliver", cluster.DefaultMaxDeliver, "with -cluster or -workers: deliveries of a shard before its items are reported as errors")
	fs.IntVar(&cf.replicas, "replicas", 0, "with -cluster: servers holding each of the run's streams (0: 3 on a cluster of three servers or more, else 1)")
	fs.DurationVar(&cf.leaseTTL, "lease-ttl", cluster.DefaultLeaseTTL, "with -cluster or -workers: how long a silent worker keeps its share of the shared model limits")
	cf.conn.register(fs)
}

func (cf *clusterFlags) enabled() bool { return cf.url != "" || cf.workers > 0 }

// distributedFlags are run's flags that only a distributed run uses
// (-workers and -cluster aside); replicasFlags only a -cluster one.
var distributedFlags = []string{"worker-slots", "shard-size", "ack-wait", "max-deliver", "replicas", "lease-ttl",
	"creds", "nkey", "user", "tls-ca", "tls-cert", "tls-key"}

func (cf *clusterFlags) check() error {
	set := map[string]bool{}
	if cf.fs != nil {
		cf.fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	}
	if !cf.enabled() {
		for _, n := range distributedFlags {
			if set[n] {
				return fmt.Errorf("-%s applies to a distributed run: add -workers N or -cluster nats://HOST:4222 (or leave -%s out)", n, n)
			}
		}
	}
	if cf.workers > 0 {
		if set["replicas"] {
			return fmt.Errorf("-replicas applies to -cluster: -workers runs one embedded server, which keeps one copy")
		}
		for _, n := range []string{"creds", "nkey", "user", "tls-ca", "tls-cert", "tls-key"} {
			if set[n] {
				return fmt.Errorf("-%s applies to -cluster: -workers starts its own server", n)
			}
		}
	}
	if cf.url != "" {
		if err := checkNATSURL(cf.url); err != nil {
			return fmt.Errorf("-cluster %s: %w", cluster.RedactURL(cf.url), err)
		}
		if err := cf.conn.check(); err != nil {
			return err
		}
	}
	switch {
	case cf.url != "" && cf.workers > 0:
		return fmt.Errorf("-cluster and -workers exclude each other: -workers starts its own server")
	case cf.workers < 0 || cf.workers > 1024:
		return fmt.Errorf("-workers %d: use 1..1024", cf.workers)
	case cf.slots < 1 || cf.slots > maxConcurrency:
		return fmt.Errorf("-worker-slots %d: use 1..%d", cf.slots, maxConcurrency)
	case cf.shardSize < 0:
		return fmt.Errorf("-shard-size must not be negative")
	case cf.ackWait < time.Second:
		return fmt.Errorf("-ack-wait %s: at least 1s", cf.ackWait)
	case cf.maxDeliver < 1:
		return fmt.Errorf("-max-deliver %d: at least 1", cf.maxDeliver)
	case cf.replicas < 0 || cf.replicas > 5:
		return fmt.Errorf("-replicas %d: use 1..5, or 0 for automatic", cf.replicas)
	case cf.leaseTTL < time.Second:
		return fmt.Errorf("-lease-ttl %s: at least 1s", cf.leaseTTL)
	}
	return nil
}

// clusterRun is what a distributed run needs from cmdRun.
type clusterRun struct {
	pipeline      string
	pf            *pipelineFlags
	p             *dsl.Pipeline
	cells         []*cellRun
	rd            *rundir.Run
	runID, dir    string
	limit, sample int
	seed          uint64
	conc          int
	noCache       bool
	refresh       []string
	ciSeed        uint64
	spent         float64 // what earlier processes of the run spent on models
	deliver       func(cell int, rec *item.Record) error
	stderr        io.Writer
}

// runOnCluster runs a planned run's items on workers — those of -cluster's
// server, or -workers processes of this machine around an embedded server —
// delivering every item's record to r.deliver in the order a local run
// would. It returns each worker's share.
func runOnCluster(ctx context.Context, cf *clusterFlags, r clusterRun) (_ []cluster.WorkerStat, err error) {
	complete := false
	url := cf.url
	conn := cf.conn
	var token string
	if cf.workers > 0 {
		b := make([]byte, 24)
		rand.Read(b)
		token = hex.EncodeToString(b)
		// The server's JetStream state lives in the run directory, so the
		// same command after a crash finds the results already computed.
		store := filepath.Join(r.dir, ".nats")
		srv, err := embed.Start(store, token)
		if err != nil {
			return nil, err
		}
		defer func() {
			srv.Shutdown()
			if complete {
				os.RemoveAll(store) // nothing left to resume
			}
		}()
		url, conn = srv.URL, connFlags{}
	}
	opts := conn.options(url, "evalflow run "+r.runID)
	if token != "" {
		opts.Token = token
	}
	nc, err := cluster.Connect(opts)
	if err != nil {
		return nil, err
	}
	defer nc.Close()
	if err := cluster.CheckJetStream(ctx, nc); errors.As(err, new(*cluster.NoJetStreamError)) {
		return nil, err
	}
	if cf.replicas > 1 && nc.ConnectedClusterName() == "" {
		return nil, fmt.Errorf("-replicas %d needs a JetStream cluster of at least %d servers; this server is not clustered", cf.replicas, cf.replicas)
	}

	// Every cell's item count (a run without a sweep has not counted yet).
	offset := 0
	for _, c := range r.cells {
		if c.cell == nil {
			n := 0
			if err := selectItems(ctx, c.dsr, r.limit, r.sample, r.seed, nil, func(int, item.Item) error { n++; return nil }); err != nil {
				return nil, fmt.Errorf("%sdataset: %w", c.label(), err)
			}
			c.offset, c.total = offset, n
		}
		offset = c.offset + c.total
	}
	roots, err := bundleRoots(r.p, r.cells, r.pf)
	if err != nil {
		return nil, err
	}
	replicas := cf.replicas
	if replicas == 0 {
		replicas = cluster.AutoReplicas(nc)
	}
	digest, err := cluster.PublishBundle(ctx, nc, roots, replicas)
	if err != nil {
		return nil, err
	}
	cwd, _ := os.Getwd()
	absDir := absPath(r.dir)
	spec := &cluster.Spec{Key: cluster.RunKey(absDir, r.runID), RunID: r.runID, Bundle: digest, Cwd: cwd, Pipeline: r.pipeline,
		Vars: r.pf.vars, VarFiles: r.pf.varFiles, Sweeps: r.pf.sweeps, Env: evalflowVars(os.Environ()),
		Limit: r.limit, Sample: r.sample, Seed: r.seed, Concurrency: r.conc, NoCache: r.noCache, Refresh: r.refresh, CISeed: r.ciSeed,
		PipelineHash: r.p.Hash, AckWaitMS: cf.ackWait.Milliseconds(), MaxDeliver: cf.maxDeliver, Replicas: replicas,
		LeaseTTLMS: cf.leaseTTL.Milliseconds(), Spent: r.spent}
	total := 0
	for i, c := range r.cells {
		id := ""
		if c.cell != nil {
			id = c.cell.ID
		}
		spec.Cells = append(spec.Cells, cluster.SpecCell{Index: i, ID: id, Offset: c.offset, Total: c.total})
		total += c.total
	}
	spec.ShardSize = cf.shardSize
	if spec.ShardSize == 0 {
		// Enough shards to spread a small run: at least 8 per worker
		// process (or 32 in all), at most 32 items each.
		spread := max(8*max(cf.workers, 4), 32)
		spec.ShardSize = min(32, max(1, (total+spread-1)/spread))
	}

	var procs []*exec.Cmd
	var wg sync.WaitGroup
	if cf.workers > 0 {
		exe, err := os.Executable()
		if err != nil {
			return nil, err
		}
		for i := range cf.workers {
			cmd := workerCommand(context.Background(), exe, url, []string{tokenEnv + "=" + token}, "-serve", spec.Key, "-concurrency", strconv.Itoa(cf.slots))
			cmd.Stdout, cmd.Stderr = r.stderr, r.stderr
			// The workers die with the run, whatever kills it.
			cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
			if err := cmd.Start(); err != nil {
				return nil, fmt.Errorf("starting worker %d: %w", i+1, err)
			}
			procs = append(procs, cmd)
			wg.Add(1)
			go func() { defer wg.Done(); cmd.Wait() }()
		}
		// Every worker gone with the run unfinished: nothing would finish it.
		var stop context.CancelCauseFunc
		ctx, stop = context.WithCancelCause(ctx)
		defer stop(nil)
		go func() {
			wg.Wait()
			var how []string
			for i, p := range procs {
				how = append(how, fmt.Sprintf("worker %d: %s", i+1, exitHow(p.ProcessState)))
			}
			stop(fmt.Errorf("all %d worker processes exited before the run was complete: %s", cf.workers, strings.Join(how, "; ")))
		}()
		defer func() {
			for _, p := range procs {
				p.Process.Signal(syscall.SIGTERM)
			}
			done := make(chan struct{})
			go func() { wg.Wait(); close(done) }()
			select {
			case <-done:
			case <-time.After(5 * time.Second):
				for _, p := range procs {
					p.Process.Kill()
				}
				<-done
			}
		}()
	}
	co := &cluster.Coordinator{NC: nc, Spec: spec, Kept: r.rd.Kept,
		Deliver: func(rec *item.Record) error { return r.deliver(rec.Cell, rec) },
		Failed: func(cell int, seqs []int, msg string) ([]*item.Record, error) {
			return errorRecords(context.WithoutCancel(ctx), r.cells[cell], r.limit, r.sample, r.seed, cell, seqs, msg)
		},
		Idle: func() {
			if cf.url != "" {
				fmt.Fprintf(r.stderr, "evalflow run: no worker has taken a shard of this run yet; start workers with: evalflow worker %s\n", cluster.RedactURL(cf.url))
			}
		},
		Log: func(format string, args ...any) {
			if strings.HasPrefix(format, "published") {
				return
			}
			fmt.Fprintf(r.stderr, "evalflow run: cluster: "+format+"\n", args...)
		},
	}
	stats, err := co.Run(ctx)
	if err != nil && ctx.Err() != nil {
		// Say why the run was cancelled (every worker gone), not that it was.
		if cause := context.Cause(ctx); cause != nil && !errors.Is(cause, context.Canceled) {
			err = cause
		}
	}
	complete = err == nil
	var halt *cluster.StopError
	if errors.As(err, &halt) {
		// As a local run stops (max_cost): status stopped, resumable.
		return stats, &nodes.StopRun{Reason: halt.Reason}
	}
	return stats, err
}

// exitHow says how a worker process ended: its exit status (its errors
// are above) or the signal that killed it.
func exitHow(ps *os.ProcessState) string {
	if ps == nil {
		return "did not start"
	}
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return fmt.Sprintf("killed by signal %d (%s)", int(ws.Signal()), ws.Signal())
	}
	if ps.ExitCode() == 0 {
		return "exit status 0"
	}
	return fmt.Sprintf("exit status %d (its errors are above)", ps.ExitCode())
}

// evalflowVars keeps the EVALFLOW_VAR_* entries of env: the only part of
// the coordinator's environment a worker gets.
func evalflowVars(env []string) []string {
	var out []string
	for _, kv := range env {
		if strings.HasPrefix(kv, "EVALFLOW_VAR_") {
			out = append(out, kv)
		}
	}
	return out
}

// selectItems streams the dataset's items as a run selects them (-limit,
// -sample, -seed: the planner's rule) with their local seq, those want
// accepts (nil: all).
func selectItems(ctx context.Context, dsr *dataset.Reader, limit, sample int, seed uint64, want func(int) bool, fn func(int, item.Item) error) error {
	errStop := errors.New("stop")
	var idx []int
	if sample > 0 {
		n := 0
		if err := dsr.Items(ctx, func(item.Item) error { n++; return nil }); err != nil {
			return err
		}
		idx = planner.SampleIndices(n, sample, seed)
		if limit > 0 && len(idx) > limit {
			idx = idx[:limit]
		}
	}
	pos, seq := 0, 0
	err := dsr.Items(ctx, func(it item.Item) error {
		defer func() { pos++ }()
		if sample > 0 {
			if seq >= len(idx) {
				return errStop
			}
			if pos != idx[seq] {
				return nil
			}
		} else if limit > 0 && seq >= limit {
			return errStop
		}
		s := seq
		seq++
		if want == nil || want(s) {
			return fn(s, it)
		}
		return nil
	})
	if errors.Is(err, errStop) {
		return nil
	}
	return err
}

// errorRecords makes records in error with msg for items seqs (local,
// ascending) of a cell.
func errorRecords(ctx context.Context, c *cellRun, limit, sample int, seed uint64, cell int, seqs []int, msg string) ([]*item.Record, error) {
	want := map[int]bool{}
	for _, q := range seqs {
		want[q] = true
	}
	byseq := map[int]item.Item{}
	err := selectItems(ctx, c.dsr, limit, sample, seed, func(q int) bool { return want[q] }, func(q int, it item.Item) error {
		byseq[q] = it
		return nil
	})
	if err != nil {
		return nil, err
	}
	out := make([]*item.Record, 0, len(seqs))
	for _, q := range seqs {
		it, ok := byseq[q]
		if !ok {
			return nil, fmt.Errorf("%sitem %d is not in the dataset", c.label(), q)
		}
		out = append(out, &item.Record{Seq: q, Cell: cell, Item: it, Status: "error", Error: msg})
	}
	return out, nil
}

// bundleRoots lists what a run's workers need from this machine: the
// pipeline's files, -var-file files, and every file or directory the
// pipeline names — its datasets, the values of its variables that name a
// path, the files its stage and engine attributes name, its engines'
// roots, and the string literals of its files that name a path inside the
// pipeline's directory (templates, prompts). Executable files (programs and
// engine modules: a worker has its own) are left out.
func bundleRoots(p *dsl.Pipeline, cells []*cellRun, pf *pipelineFlags) ([]string, error) {
	seen := map[string]bool{}
	var roots []string
	add := func(path string) {
		if path == "" || strings.ContainsAny(path, "\n\x00") || len(path) > 4096 {
			return
		}
		a := absPath(path)
		if seen[a] {
			return
		}
		st, err := os.Stat(a)
		if err != nil || (!st.IsDir() && !st.Mode().IsRegular()) || (st.Mode().IsRegular() && st.Mode().Perm()&0o111 != 0) {
			return
		}
		seen[a] = true
		roots = append(roots, a)
	}
	for _, f := range pf.varFiles {
		add(f)
	}
	pipes := []*dsl.Pipeline{p}
	for _, c := range cells {
		pipes = append(pipes, c.p)
		if c.pl.Dataset != nil {
			add(c.pl.Dataset.Source)
		}
		for _, e := range c.pl.Engines {
			if r, ok := any(e).(interface{ Root() string }); ok {
				add(r.Root())
			}
		}
	}
	for _, pp := range pipes {
		for fn, f := range pp.Files {
			add(fn)
			for _, lit := range quotedLiterals(f) {
				cand := filepath.Join(pp.Dir, lit)
				if !filepath.IsAbs(lit) && within(absPath(pp.Dir), absPath(cand)) {
					add(cand)
				}
			}
		}
		for _, n := range pp.VariableNames() {
			if s, ok := dsl.GoValue(pp.Variables[n].Value).(string); ok && s != "" {
				add(resolveInput(pp, s))
				for _, part := range strings.Split(s, ",") {
					if part = strings.TrimSpace(part); part != "" && part != s {
						add(resolveInput(pp, part))
					}
				}
			}
		}
		for _, in := range blockFiles(pp) {
			add(in.Path)
		}
	}
	sort.Strings(roots)
	if len(roots) == 0 {
		return nil, fmt.Errorf("nothing to bundle for the workers")
	}
	return roots, nil
}

func within(root, p string) bool {
	return p == root || strings.HasPrefix(p, root+string(filepath.Separator))
}

// quotedLiterals returns the literal parts of a file's quoted strings.
func quotedLiterals(f *hcl.File) []string {
	toks, _ := hclsyntax.LexConfig(f.Bytes, "", hcl.InitialPos)
	var out []string
	for _, t := range toks {
		if t.Type == hclsyntax.TokenQuotedLit {
			if s := string(t.Bytes); s != "" && !strings.ContainsAny(s, "${}\\") {
				out = append(out, s)
			}
		}
	}
	return out
}

// withWorkers adds a distributed run's workers to its manifest:
// `workers: [{id, host, shards, redelivered}]`, shards being how many each
// completed (redelivered: of those, how many an earlier holder had not
// finished). The work the workers reported — their stages' counts and
// model calls — is added to m's stages and model_calls (which count the
// coordinator's own): called once per manifest.
func withWorkers(m *rundir.Manifest, ws []cluster.WorkerStat) any {
	if ws == nil {
		return m
	}
	stages, calls := cluster.Totals(ws)
	if len(stages) > 0 {
		own := make([]cluster.StageCount, len(m.Stages))
		for i, s := range m.Stages {
			own[i] = cluster.StageCount{Name: s.Name, Kind: s.Kind, Items: s.Items, Cached: s.Cached, Computed: s.Computed}
		}
		m.Stages = nil
		for _, s := range cluster.AddStages(own, stages) {
			m.Stages = append(m.Stages, rundir.ManifestStage{Name: s.Name, Kind: s.Kind, Items: s.Items, Cached: s.Cached, Computed: s.Computed})
		}
	}
	if calls.Calls+calls.CacheHits > 0 {
		mc := rundir.ManifestModelCalls{}
		if m.ModelCalls != nil {
			mc = *m.ModelCalls
		}
		mc.Calls, mc.Retries, mc.CacheHits = mc.Calls+calls.Calls, mc.Retries+calls.Retries, mc.CacheHits+calls.CacheHits
		mc.InputTokens, mc.OutputTokens, mc.Cost = mc.InputTokens+calls.InputTokens, mc.OutputTokens+calls.OutputTokens, mc.Cost+calls.Cost
		m.ModelCalls = &mc
	}
	return struct {
		*rundir.Manifest
		Workers []cluster.WorkerStat `json:"workers"`
	}{m, ws}
}

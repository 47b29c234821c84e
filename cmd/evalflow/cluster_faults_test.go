package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/evalflow/evalflow/cluster"
	"github.com/evalflow/evalflow/cluster/clustertest"
	"github.com/evalflow/evalflow/cluster/embed"
)

// lockedBuffer collects a process's output; safe to read while it runs.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

type slowRef struct {
	once sync.Once
	dir  string
	err  error
}

var slowRefs sync.Map // n → *slowRef

// slowReference is the run directory of slowReplay's n items run locally,
// once per test process for every test that compares with it (kept in a
// temporary directory of its own, as the binary is).
func slowReference(t *testing.T, bin string, n int) string {
	t.Helper()
	v, _ := slowRefs.LoadOrStore(n, &slowRef{})
	r := v.(*slowRef)
	r.once.Do(func() {
		dir, err := processTempDir("evalflow-slowref-")
		if err != nil {
			r.err = err
			return
		}
		res := runBin(t, bin, dir, append(slowReplay(t, dir, n), "-out", "ref")...)
		if res.code != 0 {
			r.err = fmt.Errorf("reference run: exit %d\n%s%s", res.code, res.stdout, res.stderr)
			return
		}
		r.dir = filepath.Join(dir, "ref")
	})
	if r.err != nil || r.dir == "" {
		t.Fatalf("reference run of %d slow items: %v", n, r.err)
	}
	return r.dir
}

// workerProc is an `evalflow worker` process a test started.
type workerProc struct {
	id     string
	cmd    *exec.Cmd
	out    *lockedBuffer
	done   chan struct{}
	killed atomic.Bool
}

// startWorker starts `evalflow worker URL -id ID -concurrency 1` with a
// bundle cache of its own, in a directory that is not the pipeline's; it
// is stopped (SIGTERM) when the test ends, its output logged if the test
// failed.
func startWorker(t *testing.T, bin, url, id string, env []string, extra ...string) *workerProc {
	t.Helper()
	cache := t.TempDir()
	w := &workerProc{id: id, out: &lockedBuffer{}, done: make(chan struct{})}
	w.cmd = exec.Command(bin, append([]string{"worker", url, "-id", id, "-concurrency", "1", "-bundles", cache}, extra...)...)
	w.cmd.Dir = t.TempDir()
	w.cmd.Env = env
	w.cmd.Stdout, w.cmd.Stderr = w.out, w.out
	if err := w.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { w.cmd.Wait(); close(w.done) }()
	t.Cleanup(func() {
		select {
		case <-w.done:
			if !w.killed.Load() {
				t.Errorf("worker %s exited before the end of the test", id)
			}
		default:
		}
		w.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-w.done:
		case <-time.After(20 * time.Second):
			w.cmd.Process.Kill()
			<-w.done
		}
		if t.Failed() {
			t.Logf("worker %s:\n%s", id, w.out.String())
		}
	})
	return w
}

// kill kills the worker and the child serving the run with SIGKILL, as a
// lost machine.
func (w *workerProc) kill() {
	w.killed.Store(true)
	for _, k := range childPIDs(w.cmd.Process.Pid) {
		syscall.Kill(k, syscall.SIGKILL)
	}
	w.cmd.Process.Kill()
	<-w.done
}

// bgCmd is an evalflow process a test started in the background: its
// combined output, and exited closed once it has ended (err is then
// Wait's).
type bgCmd struct {
	*exec.Cmd
	out    *lockedBuffer
	exited chan struct{}
	err    error
}

// startBin starts `evalflow ARGS` in dir with env, in the background.
func startBin(t *testing.T, bin, dir string, env []string, args ...string) *bgCmd {
	t.Helper()
	b := &bgCmd{Cmd: exec.Command(bin, args...), out: &lockedBuffer{}, exited: make(chan struct{})}
	b.Dir, b.Env = dir, env
	b.Stdout, b.Stderr = b.out, b.out
	if err := b.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { b.err = b.Wait(); close(b.exited) }()
	return b
}

// startRun starts `evalflow run ARGS` in dir; wait waits for it (at most
// five minutes) and fails the test unless it succeeds.
func startRun(t *testing.T, bin, dir string, env []string, args ...string) (wait func()) {
	t.Helper()
	return runWaiter(t, startBin(t, bin, dir, env, args...))
}

// runWaiter is startRun's wait for a process startBin started.
func runWaiter(t *testing.T, b *bgCmd) (wait func()) {
	return func() {
		t.Helper()
		select {
		case <-b.exited:
			if b.err != nil {
				t.Fatalf("evalflow run: %v\n%s", b.err, b.out.String())
			}
			if o := b.out.String(); o != "" {
				t.Logf("evalflow run said:\n%s", o)
			}
		case <-time.After(5 * time.Minute):
			b.Process.Kill()
			t.Fatalf("evalflow run did not finish\n%s", b.out.String())
		}
	}
}

// resultMsg is what a test sees of the run's result and done messages.
type resultMsg struct {
	done           bool
	worker, shard  string
	seq, delivery  int
	subject, runID string
}

// watchResults subscribes nc to every run's result and done messages.
func watchResults(t *testing.T, nc *nats.Conn) <-chan resultMsg {
	t.Helper()
	raw := make(chan *nats.Msg, 4096)
	for _, subj := range []string{"evalflow.*.result", "evalflow.*.done"} {
		if _, err := nc.ChanSubscribe(subj, raw); err != nil {
			t.Fatal(err)
		}
	}
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	out := make(chan resultMsg, 4096)
	go func() {
		for m := range raw {
			seq, _ := strconv.Atoi(m.Header.Get("Evalflow-Seq"))
			d, _ := strconv.Atoi(m.Header.Get("Evalflow-Delivery"))
			select {
			case out <- resultMsg{done: strings.HasSuffix(m.Subject, ".done"), worker: m.Header.Get("Evalflow-Worker"),
				shard: m.Header.Get("Evalflow-Shard"), seq: seq, delivery: d, subject: m.Subject}:
			default:
			}
		}
	}()
	return out
}

// TestWorkerKilledMidShard runs 24 slow items on three `evalflow worker`
// processes (shards of three items, one at a time each): when a worker
// has published the first item of a shard (so two are still to come) it
// is killed with SIGKILL, and a fourth worker joins. The killed worker's
// shard is redelivered after the ack wait and finished by another worker
// on its second delivery (its done message says so, the worker that took
// it logs it, the manifest counts it); the worker that joined runs shards;
// and the run directory equals a local run's — nothing lost, nothing
// twice.
func TestWorkerKilledMidShard(t *testing.T) {
	bin := evalflowBinary(t)
	dir := t.TempDir()
	srv, err := embed.Start(filepath.Join(dir, "js"), "tok")
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Shutdown()
	nc, err := cluster.Connect(cluster.ConnOptions{URL: srv.URL, Token: "tok"})
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	msgs := watchResults(t, nc)
	env := append(withoutEvalflowVars(os.Environ()), tokenEnv+"=tok")
	workers := map[string]*workerProc{}
	for _, id := range []string{"w1", "w2", "w3"} {
		workers[id] = startWorker(t, bin, srv.URL, id, env)
	}
	const n = 24
	ref := slowReference(t, bin, n)
	args := slowReplay(t, dir, n)
	wait := startRun(t, bin, dir, env, append(args, "-out", "dist", "-cluster", srv.URL, "-shard-size", "3", "-ack-wait", "3s")...)

	var killed, killedShard string
	deadline := time.After(3 * time.Minute)
	for killed == "" {
		select {
		case m := <-msgs:
			if m.done || m.seq%3 != 0 || workers[m.worker] == nil {
				continue
			}
			// The first item of a shard: its worker has two to go.
			killed, killedShard = m.worker, fmt.Sprintf("1.0.%d-%d", m.seq, m.seq+2)
			workers[m.worker].kill()
			workers["w4"] = startWorker(t, bin, srv.URL, "w4", env)
		case <-deadline:
			t.Fatal("no result from a worker within 3 minutes")
		}
	}
	wait()
	sameRunFiles(t, ref, filepath.Join(dir, "dist"))

	// The killed worker's shard was finished elsewhere, on a redelivery
	// (its done message reached the run, so it reaches this test too).
	var finisher string
	late := time.After(30 * time.Second)
	for finisher == "" {
		select {
		case m := <-msgs:
			if m.done && m.shard == killedShard && m.worker != killed && m.delivery >= 2 {
				finisher = m.worker
			}
			continue
		case <-late:
		}
		break
	}
	if finisher == "" {
		t.Errorf("shard %s of the killed worker %s: no done message from another worker on a redelivery", killedShard, killed)
	} else if out := workers[finisher].out.String(); !strings.Contains(out, "shard "+killedShard+", delivery 2") {
		t.Errorf("worker %s finished shard %s on its redelivery without saying so:\n%s", finisher, killedShard, out)
	}
	m := readWorkers(t, filepath.Join(dir, "dist"))
	shards := map[string]int{}
	redelivered := 0
	for _, w := range m.Workers {
		shards[w.ID] = w.Shards
		redelivered += w.Redelivered
	}
	if shards["w4"] == 0 {
		t.Errorf("the worker that joined mid-run ran no shard: %+v", m.Workers)
	}
	if redelivered == 0 {
		t.Errorf("the manifest counts no redelivered shard: %+v", m.Workers)
	}
}

// natsCluster starts three nats-server processes (Debian 12's is 2.9) on
// loopback as deploy/nats/cluster.conf configures them, its hosts and
// ports mapped to free loopback ports and its store to dir. It returns
// the client URLs, a function killing node i, and waits until JetStream
// answers.
func natsCluster(t *testing.T, dir string) (urls []string, kill func(i int), names []string) {
	t.Helper()
	bin, err := exec.LookPath("nats-server")
	if err != nil {
		t.Skip("nats-server is not installed (apt-get install nats-server; scripts/install-test-deps.sh installs it)")
	}
	conf, err := os.ReadFile(filepath.Join("..", "..", "deploy", "nats", "cluster.conf"))
	if err != nil {
		t.Fatal(err)
	}
	var client, route, httpPort [3]int
	for i := range 3 {
		client[i], route[i], httpPort[i] = freePort(t), freePort(t), freePort(t)
	}
	procs := make([]*exec.Cmd, 3)
	for i := range 3 {
		c := string(conf)
		repl := []string{"0.0.0.0:4222", fmt.Sprintf("127.0.0.1:%d", client[i]), "0.0.0.0:6222", fmt.Sprintf("127.0.0.1:%d", route[i]),
			"0.0.0.0:8222", fmt.Sprintf("127.0.0.1:%d", httpPort[i]), "/var/lib/nats/jetstream", filepath.Join(dir, fmt.Sprintf("n%d", i+1))}
		for j := range 3 {
			repl = append(repl, fmt.Sprintf("nats-route://n%d:6222", j+1), fmt.Sprintf("nats-route://127.0.0.1:%d", route[j]))
		}
		r := strings.NewReplacer(repl...)
		if got := r.Replace(c); got == c || strings.Contains(got, "nats-route://n") || strings.Contains(got, "0.0.0.0") {
			t.Fatalf("deploy/nats/cluster.conf changed shape: the test maps its listen addresses, routes and store_dir")
		} else {
			c = got
		}
		f := filepath.Join(dir, fmt.Sprintf("n%d.conf", i+1))
		writeFile(t, f, []byte(c))
		cmd := exec.Command(bin, "-c", f)
		cmd.Env = append(os.Environ(), fmt.Sprintf("NODE=n%d", i+1))
		out := &lockedBuffer{}
		cmd.Stdout, cmd.Stderr = out, out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		procs[i] = cmd
		urls = append(urls, fmt.Sprintf("nats://127.0.0.1:%d", client[i]))
		names = append(names, fmt.Sprintf("n%d", i+1))
		t.Cleanup(func() {
			cmd.Process.Kill()
			cmd.Wait()
			if t.Failed() {
				t.Logf("nats-server n%d:\n%s", i+1, out.String())
			}
		})
	}
	for i := range 3 {
		waitFor(t, 60*time.Second, fmt.Sprintf("nats-server n%d listening", i+1), func() bool {
			c, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", client[i]), time.Second)
			if err == nil {
				c.Close()
			}
			return err == nil
		})
	}
	// Ready when every node routes to the other two (JetStream can answer
	// with two of three nodes meshed, while a client of the third may not
	// yet see the others' messages) and JetStream's meta group has a
	// leader.
	monitor := &http.Client{Timeout: 2 * time.Second}
	waitFor(t, 60*time.Second, "routes between the three nodes", func() bool {
		for i := range 3 {
			res, err := monitor.Get(fmt.Sprintf("http://127.0.0.1:%d/routez", httpPort[i]))
			if err != nil {
				return false
			}
			var rz struct {
				NumRoutes int `json:"num_routes"`
			}
			err = json.NewDecoder(res.Body).Decode(&rz)
			res.Body.Close()
			if err != nil || rz.NumRoutes < 2 {
				return false
			}
		}
		return true
	})
	nc, err := cluster.Connect(cluster.ConnOptions{URL: strings.Join(urls, ",")})
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, _ := jetstream.New(nc)
	waitFor(t, 60*time.Second, "JetStream cluster ready", func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_, err := js.AccountInfo(ctx)
		return err == nil
	})
	return urls, func(i int) { procs[i].Process.Kill(); procs[i].Wait() }, names
}

// TestClusterThreeNodes runs 24 slow items with -cluster on a three-node
// JetStream cluster (three nats-server processes from
// deploy/nats/cluster.conf) and two workers: the run's streams get three
// replicas without a flag, the node leading the shard stream is killed
// mid-run, and the run goes on and equals a local run.
func TestClusterThreeNodes(t *testing.T) {
	bin := evalflowBinary(t)
	dir := t.TempDir()
	t0 := time.Now()
	urls, killNode, names := natsCluster(t, dir)
	t.Logf("cluster ready after %s", time.Since(t0).Round(time.Millisecond))
	url := strings.Join(urls, ",")
	env := withoutEvalflowVars(os.Environ())
	for _, id := range []string{"w1", "w2"} {
		startWorker(t, bin, url, id, env)
	}
	nc, err := cluster.Connect(cluster.ConnOptions{URL: url})
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	msgs := watchResults(t, nc)
	js, _ := jetstream.New(nc)
	const n = 24
	ref := slowReference(t, bin, n)
	t.Logf("reference run ready %s after the start", time.Since(t0).Round(time.Millisecond))
	args := slowReplay(t, dir, n)
	run := startBin(t, bin, dir, env, append(args, "-out", "dist", "-cluster", url, "-shard-size", "2", "-ack-wait", "5s")...)
	wait := runWaiter(t, run)
	var first resultMsg
	select {
	case first = <-msgs:
	case <-time.After(3 * time.Minute):
		t.Fatalf("no result within 3 minutes; evalflow run said so far:\n%s", run.out.String())
	}
	key := strings.Split(first.subject, ".")[1]
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	leader := ""
	for _, name := range []string{cluster.ShardStream(key), cluster.ResultStream(key)} {
		st, err := js.Stream(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		info, err := st.Info(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if info.Config.Replicas != 3 {
			t.Errorf("stream %s has %d replicas on a three-node cluster, want 3", name, info.Config.Replicas)
		}
		if leader == "" && info.Cluster != nil {
			leader = info.Cluster.Leader
		}
	}
	killed := false
	for i, name := range names {
		if name == leader {
			killNode(i)
			killed = true
		}
	}
	if !killed {
		t.Fatalf("no node leads the shard stream (leader %q)", leader)
	}
	t.Logf("killed %s, the shard stream's leader, %s after the start", leader, time.Since(t0).Round(time.Millisecond))
	wait()
	t.Logf("run done %s after the start", time.Since(t0).Round(time.Millisecond))
	sameRunFiles(t, ref, filepath.Join(dir, "dist"))
}

// TestClusterTLS runs the quickstart with -cluster over mutual TLS with a
// user and password (the password from $NATS_PASSWORD) on a server that
// requires both, with one worker signed in the same way: it equals a
// local run.
func TestClusterTLS(t *testing.T) {
	bin := evalflowBinary(t)
	dir := t.TempDir()
	pki := t.TempDir()
	if err := clustertest.WritePKI(pki); err != nil {
		t.Fatal(err)
	}
	tc, err := server.GenTLSConfig(&server.TLSConfigOpts{CertFile: filepath.Join(pki, "server.pem"), KeyFile: filepath.Join(pki, "server-key.pem"),
		CaFile: filepath.Join(pki, "ca.pem"), Verify: true})
	if err != nil {
		t.Fatal(err)
	}
	s := passwordServer(t, func(o *server.Options) {
		o.TLSConfig, o.TLS, o.TLSVerify, o.TLSTimeout = tc, true, true, 10
	})
	url := fmt.Sprintf("tls://127.0.0.1:%d", s.Addr().(*net.TCPAddr).Port)
	flags := []string{"-tls-ca", filepath.Join(pki, "ca.pem"), "-tls-cert", filepath.Join(pki, "client.pem"),
		"-tls-key", filepath.Join(pki, "client-key.pem"), "-user", "evalflow"}
	env := append(withoutEvalflowVars(os.Environ()), "NATS_PASSWORD=s3cret")
	startWorker(t, bin, url, "w1", env, flags...)
	repo, _ := filepath.Abs(filepath.Join("..", ".."))
	args := []string{"run", filepath.Join(repo, "examples", "quickstart"), "-quiet", "-no-cache"}
	local := runBin(t, bin, dir, append(args, "-out", "local")...)
	if local.code != 0 {
		t.Fatalf("local run: exit %d\n%s%s", local.code, local.stdout, local.stderr)
	}
	startRun(t, bin, dir, env, append(append(args, "-out", "dist", "-cluster", url), flags...)...)()
	sameRunFiles(t, filepath.Join(dir, "local"), filepath.Join(dir, "dist"))
	if m := readWorkers(t, filepath.Join(dir, "dist")); len(m.Workers) != 1 || m.Workers[0].ID != "w1" {
		t.Errorf("manifest workers %+v, want w1", m.Workers)
	}
	// -user without $NATS_PASSWORD is refused, saying so; a worker with a
	// wrong password says why and exits.
	bad := exec.Command(bin, append(append(args, "-out", "bad", "-cluster", url), flags...)...)
	bad.Dir, bad.Env = dir, withoutEvalflowVars(os.Environ())
	out, err := bad.CombinedOutput()
	if bad.ProcessState.ExitCode() != exitConfig || !strings.Contains(string(out), "$NATS_PASSWORD is not set") {
		t.Errorf("a run without $NATS_PASSWORD: %v\n%s", err, out)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	badWorker := exec.CommandContext(ctx, bin, append([]string{"worker", url, "-id", "bad"}, flags...)...)
	badWorker.Dir, badWorker.Env = t.TempDir(), append(withoutEvalflowVars(os.Environ()), "NATS_PASSWORD=guess")
	out, err = badWorker.CombinedOutput()
	if err == nil || ctx.Err() != nil || !strings.Contains(string(out), "Authorization Violation") || strings.Contains(string(out), "guess") {
		t.Errorf("a worker with a wrong password: %v\n%s", err, out)
	}
}

// TestWorkerChildrenHidePassword: the process a watching worker starts for
// each run shows the server URL on its command line with the password cut
// out (what `ps` shows every user of the machine), takes the whole URL
// from its environment, connects with it, and the run equals a local one.
func TestWorkerChildrenHidePassword(t *testing.T) {
	bin := evalflowBinary(t)
	dir := t.TempDir()
	s := passwordServer(t, nil)
	url := fmt.Sprintf("nats://evalflow:s3cret@127.0.0.1:%d", s.Addr().(*net.TCPAddr).Port)
	env := withoutEvalflowVars(os.Environ())
	startWorker(t, bin, url, "w1", env)
	repo, _ := filepath.Abs(filepath.Join("..", ".."))
	args := []string{"run", filepath.Join(repo, "examples", "quickstart"), "-quiet", "-no-cache"}
	local := runBin(t, bin, dir, append(args, "-out", "local")...)
	if local.code != 0 {
		t.Fatalf("local run: exit %d\n%s%s", local.code, local.stdout, local.stderr)
	}
	// Watch the process table while the run goes: every "worker … -serve"
	// process is one evalflow started.
	seen := map[string]bool{}
	stop := make(chan struct{})
	polled := make(chan struct{})
	go func() {
		defer close(polled)
		for {
			select {
			case <-stop:
				return
			case <-time.After(5 * time.Millisecond):
			}
			procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
			for _, p := range procs {
				b, err := os.ReadFile(p)
				if err != nil {
					continue
				}
				argv := strings.Split(strings.TrimRight(string(b), "\x00"), "\x00")
				if len(argv) > 2 && argv[1] == "worker" && slices.Contains(argv, "-serve") {
					seen[strings.Join(argv[1:], " ")] = true
				}
			}
		}
	}()
	startRun(t, bin, dir, env, append(args, "-out", "dist", "-cluster", url)...)()
	close(stop)
	<-polled
	sameRunFiles(t, filepath.Join(dir, "local"), filepath.Join(dir, "dist"))
	if len(seen) == 0 {
		t.Fatal("no worker process evalflow started was seen while the run went")
	}
	for cmdline := range seen {
		if strings.Contains(cmdline, "s3cret") {
			t.Errorf("a worker process shows the password on its command line: %s", cmdline)
		}
		if !strings.Contains(cmdline, "nats://…@127.0.0.1:") {
			t.Errorf("a worker process's command line does not show the redacted URL: %s", cmdline)
		}
	}
	t.Logf("worker processes seen: %v", slices.Sorted(maps.Keys(seen)))
}

// passwordServer starts a JetStream server in the test process that
// admits the user evalflow with the password s3cret, with more options
// set by opts (nil: none), and shuts it down when the test ends.
func passwordServer(t *testing.T, opts func(*server.Options)) *server.Server {
	t.Helper()
	o := &server.Options{Users: []*server.User{{Username: "evalflow", Password: "s3cret"}}}
	if opts != nil {
		opts(o)
	}
	return clustertest.StartServer(t, o)
}

package main

import (
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// sameRunFiles compares two run directories' items, attempts and
// aggregates row by row (timing columns aside).
func sameRunFiles(t *testing.T, want, got string) {
	t.Helper()
	for _, f := range []string{"items.parquet", "attempts.parquet", "aggregates.parquet"} {
		w, g := itemRows(t, filepath.Join(want, f)), itemRows(t, filepath.Join(got, f))
		if diff := cmp.Diff(w, g); diff != "" {
			t.Errorf("%s differs from the local run's (-local +distributed):\n%s", f, diff)
		}
	}
}

type manifestWorkers struct {
	Status  string `json:"status"`
	Workers []struct {
		ID          string `json:"id"`
		Host        string `json:"host"`
		Shards      int    `json:"shards"`
		Redelivered int    `json:"redelivered"`
	} `json:"workers"`
}

func readWorkers(t *testing.T, dir string) manifestWorkers {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	var m manifestWorkers
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// TestWorkersEqualLocal runs the quickstart and the ablation sweep on
// three local worker processes (an embedded NATS server) and compares the
// run directory with a local run's, and the manifest's stage counts
// (summed from the workers' reports) with the local run's.
func TestWorkersEqualLocal(t *testing.T) {
	bin := evalflowBinary(t)
	repo, _ := filepath.Abs(filepath.Join("..", ".."))
	for _, tc := range []struct {
		name, pipeline string
		vars           func(dir string) []string
	}{
		{"quickstart", "examples/quickstart", nil},
		{"ablation", "examples/ablation", nil},
		// A prediction whose id matches no item: the run warns about it
		// whether the items ran here or on workers.
		{"stray prediction", "pipelines/text2sql-replay.hcl", func(dir string) []string {
			var ds, preds strings.Builder
			for i := range 12 {
				fmt.Fprintf(&ds, `{"id": "q%02d", "question": "q", "gold": "SELECT COUNT(*) FROM customers", "db": "shop"}`+"\n", i)
				fmt.Fprintf(&preds, `{"id": "q%02d", "pred": "SELECT %d"}`+"\n", i, i)
			}
			preds.WriteString(`{"id": "stray", "pred": "SELECT 1"}` + "\n")
			writeFile(t, filepath.Join(dir, "questions.jsonl"), []byte(ds.String()))
			writeFile(t, filepath.Join(dir, "preds.jsonl"), []byte(preds.String()))
			return []string{"-var", "dataset=questions.jsonl", "-var", "predictions=preds.jsonl",
				"-var", "databases=" + filepath.Join(repo, "examples", "quickstart", "data")}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			args := []string{"run", filepath.Join(repo, tc.pipeline), "-quiet", "-no-cache"}
			if tc.vars != nil {
				args = append(args, tc.vars(dir)...)
			}
			local := runBin(t, bin, dir, append(args, "-out", "local")...)
			if local.code != 0 {
				t.Fatalf("local run: exit %d\n%s%s", local.code, local.stdout, local.stderr)
			}
			dist := runBin(t, bin, dir, append(args, "-out", "dist", "-workers", "3")...)
			if dist.code != 0 {
				t.Fatalf("-workers 3: exit %d\n%s%s", dist.code, dist.stdout, dist.stderr)
			}
			if dist.stderr != local.stderr {
				t.Errorf("stderr differs:\nlocal:\n%s\ndistributed:\n%s", local.stderr, dist.stderr)
			}
			sameRunFiles(t, filepath.Join(dir, "local"), filepath.Join(dir, "dist"))
			// The workers' reports make the manifest's stage counts.
			lm, dm := readManifest(t, filepath.Join(dir, "local")), readManifest(t, filepath.Join(dir, "dist"))
			if diff := cmp.Diff(lm.Stages, dm.Stages); diff != "" || len(dm.Stages) == 0 {
				t.Errorf("manifest stages differ from the local run's (-local +distributed):\n%s", diff)
			}
			if diff := cmp.Diff(lm.ModelCalls, dm.ModelCalls); diff != "" {
				t.Errorf("manifest model_calls differ (-local +distributed):\n%s", diff)
			}
			if diff := cmp.Diff(lm.Warnings, dm.Warnings); diff != "" {
				t.Errorf("manifest warnings differ (-local +distributed):\n%s", diff)
			}
			if tc.vars != nil && !strings.Contains(strings.Join(dm.Warnings, "\n"), `preds.jsonl match no item of this run (e.g. ["stray"])`) {
				t.Errorf("the distributed run does not warn about the stray prediction: %q", dm.Warnings)
			}
			m := readWorkers(t, filepath.Join(dir, "dist"))
			shards := 0
			for _, w := range m.Workers {
				if w.ID == "" || w.Host == "" || w.Shards < 1 {
					t.Errorf("manifest worker %+v", w)
				}
				shards += w.Shards
			}
			if m.Status != "complete" || len(m.Workers) == 0 || shards == 0 {
				t.Errorf("manifest: status %q, workers %+v", m.Status, m.Workers)
			}
			if _, err := os.Stat(filepath.Join(dir, "dist", ".nats")); err == nil {
				t.Errorf("the embedded server's store is left in a complete run")
			}
		})
	}
}

// childPIDs lists the processes whose parent is pid.
func childPIDs(pid int) []int {
	var out []int
	tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/children", pid))
	for _, f := range tasks {
		b, _ := os.ReadFile(f)
		for _, s := range strings.Fields(string(b)) {
			if n, err := strconv.Atoi(s); err == nil {
				out = append(out, n)
			}
		}
	}
	return out
}

// waitFor polls cond every 20 ms until it holds or d passes.
func waitFor(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %s", what, d)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestCoordinatorKilledThenResumed kills the run process (and with it its
// workers and embedded server) with SIGKILL mid-run; the same command
// resumes from the parts and the server's stored results.
func TestCoordinatorKilledThenResumed(t *testing.T) {
	bin := evalflowBinary(t)
	dir := t.TempDir()
	const n = 24
	args := append(slowReplay(t, dir, n), "-workers", "2", "-worker-slots", "1", "-shard-size", "2")
	ref := slowReference(t, bin, n)
	cmd := exec.Command(bin, append(args, "-out", "crash")...)
	cmd.Dir = dir
	cmd.Env = withoutEvalflowVars(os.Environ())
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 120*time.Second, "first part flushed", func() bool {
		m, _ := filepath.Glob(filepath.Join(dir, "crash", "parts", "items-*.parquet"))
		return len(m) > 0
	})
	kids := childPIDs(cmd.Process.Pid)
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	// The workers die with it (their parent-death signal).
	waitFor(t, 30*time.Second, "workers gone", func() bool {
		for _, k := range kids {
			if syscall.Kill(k, 0) == nil {
				if b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/stat", k)); !strings.Contains(string(b), ") Z ") {
					return false
				}
			}
		}
		return true
	})
	res := runBin(t, bin, dir, append(args, "-out", "crash")...)
	if res.code != 0 {
		t.Fatalf("resume: exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	if !strings.Contains(res.stderr, "resuming crash:") {
		t.Errorf("resume did not say so:\n%s", res.stderr)
	}
	sameRunFiles(t, ref, filepath.Join(dir, "crash"))
}

// natsServer starts the nats-server binary on PATH (Debian 12's is 2.9)
// with JetStream on a free loopback port, storing in dir; stop kills it.
func natsServer(t *testing.T, dir string, port int) (url string, stop func()) {
	t.Helper()
	bin, err := exec.LookPath("nats-server")
	if err != nil {
		t.Skip("nats-server is not installed (apt-get install nats-server; scripts/install-test-deps.sh installs it)")
	}
	cmd := exec.Command(bin, "-js", "-a", "127.0.0.1", "-p", strconv.Itoa(port), "-sd", dir)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	url = fmt.Sprintf("nats://127.0.0.1:%d", port)
	waitFor(t, 30*time.Second, "nats-server listening", func() bool {
		c, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", port), time.Second)
		if err == nil {
			c.Close()
		}
		return err == nil
	})
	return url, func() { cmd.Process.Kill(); cmd.Wait() }
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// TestClusterWithExternalServer runs the ablation sweep with -cluster on
// the nats-server binary (Debian 12's 2.9 in CI) and two `evalflow worker`
// processes started before the run, with a bundle cache of their own
// (the pipeline's files reach them only through the object store), then a
// second run on the same workers; both equal local runs.
func TestClusterWithExternalServer(t *testing.T) {
	bin := evalflowBinary(t)
	dir := t.TempDir()
	url, stop := natsServer(t, filepath.Join(dir, "js"), freePort(t))
	defer stop()
	var workers []*exec.Cmd
	for i := range 2 {
		w := exec.Command(bin, "worker", url, "-concurrency", "2", "-bundles", filepath.Join(dir, fmt.Sprintf("bundles%d", i)))
		w.Dir = t.TempDir() // not the pipeline's directory: everything comes from the bundle
		w.Env = withoutEvalflowVars(os.Environ())
		var out strings.Builder
		w.Stdout, w.Stderr = &out, &out
		if err := w.Start(); err != nil {
			t.Fatal(err)
		}
		workers = append(workers, w)
		defer func() {
			w.Process.Signal(syscall.SIGTERM)
			w.Wait()
			if t.Failed() {
				t.Logf("worker %d:\n%s", i, out.String())
			}
		}()
	}
	repo, _ := filepath.Abs(filepath.Join("..", ".."))
	for _, p := range []string{"examples/ablation", "examples/quickstart"} {
		args := []string{"run", filepath.Join(repo, p), "-quiet", "-no-cache"}
		name := filepath.Base(p)
		local := runBin(t, bin, dir, append(args, "-out", name+"-local")...)
		if local.code != 0 {
			t.Fatalf("local run: exit %d\n%s%s", local.code, local.stdout, local.stderr)
		}
		dist := runBin(t, bin, dir, append(args, "-out", name+"-dist", "-cluster", url)...)
		if dist.code != 0 {
			t.Fatalf("-cluster: exit %d\n%s%s", dist.code, dist.stdout, dist.stderr)
		}
		sameRunFiles(t, filepath.Join(dir, name+"-local"), filepath.Join(dir, name+"-dist"))
		if m := readWorkers(t, filepath.Join(dir, name+"-dist")); len(m.Workers) == 0 {
			t.Errorf("%s: no workers in the manifest", name)
		}
	}
}

// TestClusterServerRestart restarts the NATS server (same port, same
// store) in the middle of a -cluster run with two workers: the run stalls
// and goes on, and equals a local run.
func TestClusterServerRestart(t *testing.T) {
	bin := evalflowBinary(t)
	dir := t.TempDir()
	port := freePort(t)
	store := filepath.Join(dir, "js")
	url, stop := natsServer(t, store, port)
	defer func() { stop() }()
	for i := range 2 {
		w := exec.Command(bin, "worker", url, "-concurrency", "1", "-bundles", filepath.Join(dir, "bundles"))
		w.Dir = t.TempDir()
		w.Env = withoutEvalflowVars(os.Environ())
		var out strings.Builder
		w.Stdout, w.Stderr = &out, &out
		if err := w.Start(); err != nil {
			t.Fatal(err)
		}
		defer func() {
			w.Process.Signal(syscall.SIGTERM)
			w.Wait()
			if t.Failed() {
				t.Logf("worker %d:\n%s", i, out.String())
			}
		}()
	}
	const n = 24
	args := slowReplay(t, dir, n)
	ref := slowReference(t, bin, n)
	cmd := exec.Command(bin, append(args, "-out", "dist", "-cluster", url, "-shard-size", "2", "-ack-wait", "5s")...)
	cmd.Dir = dir
	cmd.Env = withoutEvalflowVars(os.Environ())
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	waitFor(t, 120*time.Second, "first part flushed", func() bool {
		m, _ := filepath.Glob(filepath.Join(dir, "dist", "parts", "items-*.parquet"))
		return len(m) > 0
	})
	stop()
	_, stop = natsServer(t, store, port)
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("run across a server restart: %v\n%s", err, stderr.String())
		}
	case <-time.After(5 * time.Minute):
		cmd.Process.Kill()
		t.Fatalf("run did not finish\n%s", stderr.String())
	}
	sameRunFiles(t, ref, filepath.Join(dir, "dist"))
}

func TestRedactArgs(t *testing.T) {
	got := redactArgs([]string{"evalflow", "run", "p.hcl", "-cluster", "nats://evalflow:s3cret@h:4222", "--cluster=tls://u:p@a:1,tls://u:p@b:2",
		"-var", "x=nats://me:pw@c:4222", "-limit", "3"})
	want := []string{"evalflow", "run", "p.hcl", "-cluster", "nats://…@h:4222", "--cluster=tls://…@a:1,tls://…@b:2",
		"-var", "x=nats://…@c:4222", "-limit", "3"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("redactArgs (-want +got):\n%s", diff)
	}
}

// TestClusterFlagErrors: flags of a distributed run given without one,
// -replicas with -workers, a URL that is not a NATS one, -user without
// $NATS_PASSWORD: refused before anything runs (exit 1), naming the flag.
func TestClusterFlagErrors(t *testing.T) {
	t.Setenv("NATS_PASSWORD", "")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-worker-slots", "3"}, "-worker-slots applies to a distributed run"},
		{[]string{"-workers", "0", "-ack-wait", "5s"}, "-ack-wait applies to a distributed run"},
		{[]string{"-tls-ca", "ca.pem"}, "-tls-ca applies to a distributed run"},
		{[]string{"-workers", "2", "-replicas", "3"}, "-replicas applies to -cluster"},
		{[]string{"-cluster", "http://evalflow:s3cret@host:4222"}, "http:// is not a NATS URL"},
		{[]string{"-cluster", "nats://:4222"}, "no server host"},
		{[]string{"-cluster", "nats://host:4222", "-user", "evalflow"}, "$NATS_PASSWORD is not set"},
	} {
		var stdout, stderr strings.Builder
		code := run(t.Context(), append(append([]string{"run"}, tc.args...), "nowhere.hcl"), &stdout, &stderr)
		if code != exitConfig || !strings.Contains(stderr.String(), tc.want) {
			t.Errorf("%q: exit %d, %q; want exit %d and %q", tc.args, code, stderr.String(), exitConfig, tc.want)
		}
		if strings.Contains(stderr.String(), "s3cret") {
			t.Errorf("%q: the password is printed: %q", tc.args, stderr.String())
		}
	}
	for _, ok := range []string{"nats://h:4222", "h:4222", "tls://u:p@h:4222,wss://h2", "ws://h"} {
		if err := checkNATSURL(ok); err != nil {
			t.Errorf("checkNATSURL(%q): %v", ok, err)
		}
	}
}

// TestClusterWithoutJetStream: on a server without JetStream (and a
// password in the URL) the coordinator and a worker say so and exit 2,
// without printing the password; -replicas 3 on a single server is
// refused with a clear message.
func TestClusterWithoutJetStream(t *testing.T) {
	bin := evalflowBinary(t)
	nsBin, err := exec.LookPath("nats-server")
	if err != nil {
		t.Skip("nats-server is not installed")
	}
	dir := t.TempDir()
	port := freePort(t)
	srv := exec.Command(nsBin, "-a", "127.0.0.1", "-p", strconv.Itoa(port), "--user", "evalflow", "--pass", "s3cret")
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { srv.Process.Kill(); srv.Wait() }()
	waitFor(t, 30*time.Second, "nats-server listening", func() bool {
		c, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", port), time.Second)
		if err == nil {
			c.Close()
		}
		return err == nil
	})
	url := fmt.Sprintf("nats://evalflow:s3cret@127.0.0.1:%d", port)
	const want = "has JetStream disabled (start nats-server with -js"
	w := exec.Command(bin, "worker", url, "-bundles", filepath.Join(dir, "bundles"))
	w.Dir = dir
	var out strings.Builder
	w.Stdout, w.Stderr = &out, &out
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	werr := make(chan error, 1)
	go func() { werr <- w.Wait() }()
	select {
	case <-werr:
	case <-time.After(30 * time.Second):
		w.Process.Kill()
		<-werr
		t.Fatalf("the worker did not stop:\n%s", out.String())
	}
	if code := w.ProcessState.ExitCode(); code != exitRun || !strings.Contains(out.String(), want) || strings.Contains(out.String(), "s3cret") {
		t.Errorf("worker: exit %d, want %d, %q, no password:\n%s", code, exitRun, want, out.String())
	}
	if !strings.Contains(out.String(), "waiting for runs on nats://…@127.0.0.1") {
		t.Errorf("worker: no redacted URL in its first line:\n%s", out.String())
	}
	repo, _ := filepath.Abs(filepath.Join("..", ".."))
	res := runBin(t, bin, dir, "run", filepath.Join(repo, "examples", "quickstart"), "-quiet", "-no-cache", "-out", "nojs", "-cluster", url)
	if res.code != exitRun || !strings.Contains(res.stderr, want) || strings.Contains(res.stderr, "s3cret") {
		t.Errorf("run -cluster: exit %d, want %d, %q, no password:\n%s", res.code, exitRun, want, res.stderr)
	}

	jsURL, stop := natsServer(t, filepath.Join(dir, "js"), freePort(t))
	defer stop()
	res = runBin(t, bin, dir, "run", filepath.Join(repo, "examples", "quickstart"), "-quiet", "-no-cache", "-out", "r3", "-cluster", jsURL, "-replicas", "3")
	if res.code != exitRun || !strings.Contains(res.stderr, "-replicas 3 needs a JetStream cluster of at least 3 servers; this server is not clustered") {
		t.Errorf("run -cluster -replicas 3: exit %d:\n%s", res.code, res.stderr)
	}
}

// TestClusterNoWorkerNotice: a -cluster run no worker serves says so
// once after 15 s and keeps waiting; a worker started then finishes it,
// and the manifest lists redelivered even when it is 0.
func TestClusterNoWorkerNotice(t *testing.T) {
	bin := evalflowBinary(t)
	dir := t.TempDir()
	url, stop := natsServer(t, filepath.Join(dir, "js"), freePort(t))
	defer stop()
	repo, _ := filepath.Abs(filepath.Join("..", ".."))
	cmd := startBin(t, bin, dir, withoutEvalflowVars(os.Environ()), "run", filepath.Join(repo, "examples", "quickstart"), "-quiet", "-no-cache", "-out", "dist", "-cluster", url)
	out := cmd.out
	defer func() {
		cmd.Process.Kill()
		<-cmd.exited
	}()
	const notice = "evalflow run: no worker has taken a shard of this run yet; start workers with: evalflow worker " + "nats://127.0.0.1:"
	waitFor(t, 60*time.Second, "the no-worker notice", func() bool { return strings.Contains(out.String(), notice) })
	startWorker(t, bin, url, "late", withoutEvalflowVars(os.Environ()))
	select {
	case <-cmd.exited:
		if cmd.err != nil {
			t.Fatalf("run: %v\n%s", cmd.err, out.String())
		}
	case <-time.After(3 * time.Minute):
		t.Fatalf("the run did not finish\n%s", out.String())
	}
	if n := strings.Count(out.String(), "no worker has taken"); n != 1 {
		t.Errorf("the notice is printed %d times:\n%s", n, out.String())
	}
	b, err := os.ReadFile(filepath.Join(dir, "dist", "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"redelivered": 0`) && !strings.Contains(string(b), `"redelivered":0`) {
		t.Errorf("manifest.json has no redelivered 0:\n%s", b)
	}
}

// TestWorkersAllKilled: when every -workers process is killed the run
// fails naming how each ended.
func TestWorkersAllKilled(t *testing.T) {
	bin := evalflowBinary(t)
	dir := t.TempDir()
	args := slowReplay(t, dir, 24)
	cmd := startBin(t, bin, dir, withoutEvalflowVars(os.Environ()), append(args, "-out", "dist", "-workers", "2", "-worker-slots", "1", "-shard-size", "2")...)
	out := cmd.out
	var kids []int
	waitFor(t, 60*time.Second, "two worker processes", func() bool {
		kids = childPIDs(cmd.Process.Pid)
		return len(kids) == 2
	})
	for _, k := range kids {
		syscall.Kill(k, syscall.SIGKILL)
	}
	select {
	case <-cmd.exited:
	case <-time.After(2 * time.Minute):
		cmd.Process.Kill()
		<-cmd.exited
		t.Fatalf("the run did not end\n%s", out.String())
	}
	for _, want := range []string{"all 2 worker processes exited before the run was complete", "worker 1: killed by signal 9", "worker 2: killed by signal 9"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("no %q in:\n%s", want, out.String())
		}
	}
	if code := cmd.ProcessState.ExitCode(); code != exitRun {
		t.Errorf("exit %d, want %d", code, exitRun)
	}
}

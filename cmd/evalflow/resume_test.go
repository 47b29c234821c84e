package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/evalflow/evalflow/rundir"
	"github.com/evalflow/evalflow/sinks"
)

var (
	binOnce sync.Once
	binPath string
	binErr  error
)

// evalflowBinary builds the command once per test process.
func evalflowBinary(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the binary")
	}
	binOnce.Do(func() {
		dir, err := processTempDir("evalflow-bin-")
		if err != nil {
			binErr = err
			return
		}
		binPath = filepath.Join(dir, "evalflow")
		out, err := exec.Command(goTool(t), "build", "-o", binPath, ".").CombinedOutput()
		if err != nil {
			binErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if binErr != nil {
		t.Fatal(binErr)
	}
	return binPath
}

// slowReplay writes n items whose predictions each count to a few million
// in a recursive CTE (a fraction of a second each on SQLite), so a serial
// run takes seconds and can be killed half-way. Every third prediction is
// wrong, so ex is not constant.
func slowReplay(t *testing.T, dir string, n int) []string {
	t.Helper()
	var ds, preds bytes.Buffer
	for i := range n {
		id := fmt.Sprintf("i%02d", i)
		want := 1500000
		got := want
		if i%3 == 2 {
			got = want + 1
		}
		fmt.Fprintf(&ds, `{"id": %q, "question": "count", "gold": "SELECT %d", "db": "shop", "k": %d}`+"\n", id, want, i)
		fmt.Fprintf(&preds, `{"id": %q, "pred": "WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n WHERE x < %d) SELECT COUNT(*) FROM n"}`+"\n", id, got)
	}
	writeFile(t, filepath.Join(dir, "questions.jsonl"), ds.Bytes())
	writeFile(t, filepath.Join(dir, "preds.jsonl"), preds.Bytes())
	repo, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	return []string{"run", filepath.Join(repo, "pipelines", "text2sql-replay.hcl"),
		"-var", "dataset=questions.jsonl", "-var", "predictions=preds.jsonl",
		"-var", "databases=" + filepath.Join(repo, "examples", "quickstart", "data"),
		"-var", "timeout=5m", "-quiet", "-concurrency", "1", "-no-cache"}
}

type cmdResult struct {
	code           int
	stdout, stderr string
}

func runBin(t *testing.T, bin, dir string, args ...string) cmdResult {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	cmd.Env = withoutEvalflowVars(os.Environ())
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	r := cmdResult{stdout: stdout.String(), stderr: stderr.String()}
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		r.code = ee.ExitCode()
	case err != nil:
		t.Fatal(err)
	}
	return r
}

// itemRows reads a Parquet file (or glob) as maps without the columns that
// measure time, which differ between any two runs.
func itemRows(t *testing.T, glob string) []map[string]any {
	t.Helper()
	files, err := filepath.Glob(glob)
	if err != nil || len(files) == 0 {
		t.Fatalf("%s: no files (%v)", glob, err)
	}
	var out []map[string]any
	for _, f := range files {
		s, rows, err := sinks.ReadParquetRows(f)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		for _, row := range rows {
			m := map[string]any{}
			for i, c := range s {
				switch c.Name {
				case "duration_ms", "validate_ms", "execute_ms", "latency_ms":
					continue
				}
				m[c.Name] = row[i]
			}
			out = append(out, m)
		}
	}
	return out
}

func readManifest(t *testing.T, dir string) *rundir.Manifest {
	t.Helper()
	m, err := rundir.Previous(dir)
	if err != nil || m == nil {
		t.Fatalf("manifest in %s: %v", dir, err)
	}
	return m
}

// TestKillNineThenResume kills a run with SIGKILL after its first items
// were flushed, reads the crashed run with the documented glob, and runs
// the identical command again: it continues, keeps the finished items
// without recomputing them, and ends with files equal to an uninterrupted
// run's.
func TestKillNineThenResume(t *testing.T) {
	bin := evalflowBinary(t)
	dir := t.TempDir()
	const n = 24
	args := slowReplay(t, dir, n)

	ref := runBin(t, bin, dir, append(args, "-out", "ref")...)
	if ref.code != 0 {
		t.Fatalf("reference run: exit %d\n%s%s", ref.code, ref.stdout, ref.stderr)
	}

	cmd := exec.Command(bin, append(args, "-out", "crash")...)
	cmd.Dir = dir
	cmd.Env = withoutEvalflowVars(os.Environ())
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		if m, _ := filepath.Glob(filepath.Join(dir, "crash", "parts", "items-*.parquet")); len(m) > 0 {
			break
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatal("no part was flushed within 60 s")
		}
		time.Sleep(20 * time.Millisecond)
	}
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()

	// The crashed run: manifest says running, its lock is stale, and the
	// documented glob reads every finished item once.
	crash := filepath.Join(dir, "crash")
	if m := readManifest(t, crash); m.Status != "running" || !rundir.Stale(crash) {
		t.Errorf("after kill -9: status %q, stale %v; want running and stale", m.Status, rundir.Stale(crash))
	}
	partial := itemRows(t, filepath.Join(crash, "parts", "items-*.parquet"))
	if len(partial) == 0 || len(partial) >= n {
		t.Fatalf("crashed run holds %d items, want some but not all of %d", len(partial), n)
	}
	// The documented glob, read by DuckDB (an independent reader): every
	// finished item once.
	duck := duckdbQuery(t, fmt.Sprintf("SELECT count(*), count(DISTINCT id) FROM read_parquet('%s')", filepath.Join(crash, "parts", "items-*.parquet")))
	if want := fmt.Sprint(len(partial)); duck[0] != want || duck[1] != want {
		t.Errorf("DuckDB reads %v rows/distinct ids through parts/items-*.parquet, want %s", duck, want)
	}
	seen := map[any]bool{}
	for _, r := range partial {
		if seen[r["id"]] {
			t.Errorf("item %v twice in the crashed run's parts", r["id"])
		}
		seen[r["id"]] = true
	}

	res := runBin(t, bin, dir, append(args, "-out", "crash")...)
	if res.code != 0 {
		t.Fatalf("resume: exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	if !strings.Contains(res.stderr, fmt.Sprintf("resuming crash: %d finished items kept", len(partial))) {
		t.Errorf("resume does not say what it kept:\n%s", res.stderr)
	}
	m := readManifest(t, crash)
	if m.Status != "complete" || m.Resumes != 1 || m.Kept != len(partial) || m.Counts.Items != n {
		t.Errorf("manifest after resume: status %q resumes %d kept %d items %d", m.Status, m.Resumes, m.Kept, m.Counts.Items)
	}
	if _, err := os.Stat(filepath.Join(crash, rundir.PartsDir)); !os.IsNotExist(err) {
		t.Errorf("parts/ left after a complete run: %v", err)
	}
	for _, f := range []string{rundir.ItemsFile, rundir.AttemptsFile} {
		want := itemRows(t, filepath.Join(dir, "ref", f))
		got := itemRows(t, filepath.Join(crash, f))
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s after kill -9 and resume differs from an uninterrupted run (-want +got):\n%s", f, diff)
		}
	}
	wantAgg := itemRows(t, filepath.Join(dir, "ref", rundir.AggregatesFile))
	if diff := cmp.Diff(wantAgg, itemRows(t, filepath.Join(crash, rundir.AggregatesFile))); diff != "" {
		t.Errorf("aggregates after resume differ (-want +got):\n%s", diff)
	}
	refM := readManifest(t, filepath.Join(dir, "ref"))
	if b1, b2 := mustJSON(refM.Metrics), mustJSON(m.Metrics); b1 != b2 {
		t.Errorf("manifest metrics: resumed %s, uninterrupted %s", b2, b1)
	}

	// Once complete, the same command has nothing to do.
	again := runBin(t, bin, dir, append(args, "-out", "crash")...)
	if again.code != 0 || !strings.Contains(again.stdout, "nothing to do") {
		t.Errorf("a complete run again: exit %d\n%s%s", again.code, again.stdout, again.stderr)
	}
	// Other inputs on that directory are refused, naming what differs.
	other := runBin(t, bin, dir, append(args, "-out", "crash", "-limit", "3")...)
	if other.code != exitRun || !strings.Contains(other.stderr, "(limit differ)") {
		t.Errorf("other inputs: exit %d\n%s", other.code, other.stderr)
	}
}

// TestInterruptThenResume: after Ctrl-C (exit 130, status cancelled), the
// same command retries the cancelled items and completes.
func TestInterruptThenResume(t *testing.T) {
	bin := evalflowBinary(t)
	dir := t.TempDir()
	const n = 12
	args := append(slowReplay(t, dir, n), "-out", "run")
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	cmd.Env = withoutEvalflowVars(os.Environ())
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(1500 * time.Millisecond)
	cmd.Process.Signal(os.Interrupt)
	sent := time.Now()
	err := cmd.Wait()
	if took := time.Since(sent); took > 5*time.Second {
		t.Errorf("SIGINT took %v to end the run", took)
	}
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != exitCancelled {
		t.Fatalf("exit %v, want %d", err, exitCancelled)
	}
	out := filepath.Join(dir, "run")
	if m := readManifest(t, out); m.Status != "cancelled" {
		t.Fatalf("status %q", m.Status)
	}
	before := itemRows(t, filepath.Join(out, rundir.ItemsFile))
	ok := 0
	for _, r := range before {
		if r["status"] == "ok" {
			ok++
		}
	}
	res := runBin(t, bin, dir, args...)
	if res.code != 0 {
		t.Fatalf("resume: exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	after := itemRows(t, filepath.Join(out, rundir.ItemsFile))
	if len(after) != n {
		t.Fatalf("%d items after resume, want %d", len(after), n)
	}
	for i, r := range after {
		if r["id"] != fmt.Sprintf("i%02d", i) || r["status"] != "ok" {
			t.Errorf("row %d: %v %v, want i%02d ok", i, r["id"], r["status"], i)
		}
	}
	if m := readManifest(t, out); m.Kept != ok || m.Status != "complete" {
		t.Errorf("kept %d (want the %d ok items), status %q", m.Kept, ok, m.Status)
	}
}

// TestSecondWriterRefused: two processes on one directory — the second is
// refused while the first holds the lock.
func TestSecondWriterRefused(t *testing.T) {
	bin := evalflowBinary(t)
	dir := t.TempDir()
	args := append(slowReplay(t, dir, 8), "-out", "run")
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	cmd.Env = withoutEvalflowVars(os.Environ())
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		cmd.Process.Kill()
		cmd.Wait()
	}()
	deadline := time.Now().Add(30 * time.Second)
	for {
		if m, _ := rundir.Previous(filepath.Join(dir, "run")); m != nil && m.Status == "running" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the first run never started")
		}
		time.Sleep(20 * time.Millisecond)
	}
	res := runBin(t, bin, dir, args...)
	if res.code != exitRun || !strings.Contains(res.stderr, "is being written by another evalflow process (pid ") {
		t.Errorf("second writer: exit %d\n%s", res.code, res.stderr)
	}
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// TestDiskFullThenResume runs with a file-size limit (RLIMIT_FSIZE, the
// same EFBIG a full disk gives as ENOSPC) at two sizes: one where the
// first part cannot be written and one where the parts fit but the merge
// does not. Each run fails with exit 2 and a manifest saying so; the parts
// that were renamed are complete; the same command without the limit
// resumes and ends equal to an uninterrupted run.
func TestDiskFullThenResume(t *testing.T) {
	bin := evalflowBinary(t)
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash for ulimit")
	}
	dir := t.TempDir()
	var ds, preds bytes.Buffer
	// Parts hold at most 2,000 items and the merged files copy the parts'
	// row groups, so 8,000 items make merged files about four parts large.
	const n = 8000
	for i := range n {
		id := fmt.Sprintf("i%04d", i)
		pred := "SELECT COUNT(*) FROM customers"
		if i%3 == 0 {
			pred = "SELECT 1"
		}
		fmt.Fprintf(&ds, `{"id": %q, "question": "count", "gold": "SELECT COUNT(*) FROM customers", "db": "shop"}`+"\n", id)
		fmt.Fprintf(&preds, `{"id": %q, "pred": %q}`+"\n", id, pred)
	}
	writeFile(t, filepath.Join(dir, "q.jsonl"), ds.Bytes())
	writeFile(t, filepath.Join(dir, "p.jsonl"), preds.Bytes())
	repo, _ := filepath.Abs(filepath.Join("..", ".."))
	args := []string{"run", filepath.Join(repo, "pipelines", "text2sql-replay.hcl"),
		"-var", "dataset=q.jsonl", "-var", "predictions=p.jsonl",
		"-var", "databases=" + filepath.Join(repo, "examples", "quickstart", "data"), "-quiet", "-no-cache"}
	if r := runBin(t, bin, dir, append(args, "-out", "ref")...); r.code != 0 {
		t.Fatalf("reference: exit %d\n%s", r.code, r.stderr)
	}
	// The limits come from the reference run's merged files, whose sizes
	// move with the timings they hold, compressed (60 to 95 KB for 6,000
	// items in runs of the same build): the larger merged file is about
	// four parts, so an eighth of it stops the first part and a half lets
	// every part through and stops the merge, each with twice the margin.
	merged := int64(0)
	for _, f := range []string{rundir.ItemsFile, rundir.AttemptsFile} {
		st, err := os.Stat(filepath.Join(dir, "ref", f))
		if err != nil {
			t.Fatal(err)
		}
		merged = max(merged, st.Size())
	}
	for _, kb := range []int64{merged / 8 / 1024, merged / 2 / 1024} {
		out := fmt.Sprintf("full%d", kb)
		t.Run(out, func(t *testing.T) {
			line := fmt.Sprintf("ulimit -f %d; exec %q", kb, bin)
			for _, a := range append(args, "-out", out) {
				line += fmt.Sprintf(" %q", a)
			}
			r := runBin(t, "bash", dir, "-c", line)
			if r.code != exitRun || !strings.Contains(r.stderr, "file too large") {
				t.Fatalf("with %d KB: exit %d, want 2 naming the write error\n%s", kb, r.code, r.stderr)
			}
			if m := readManifest(t, filepath.Join(dir, out)); m.Status != "failed" && m.Status != "running" {
				t.Errorf("manifest status %q after the disk filled, want failed (or running)", m.Status)
			}
			parts, _ := filepath.Glob(filepath.Join(dir, out, "parts", "*.parquet"))
			for _, p := range parts {
				if _, _, err := sinks.ReadParquetRows(p); err != nil {
					t.Errorf("a renamed part is not complete: %v", err)
				}
			}
			res := runBin(t, bin, dir, append(args, "-out", out)...)
			if res.code != 0 {
				t.Fatalf("resume: exit %d\n%s", res.code, res.stderr)
			}
			for _, f := range []string{rundir.ItemsFile, rundir.AttemptsFile} {
				if diff := cmp.Diff(itemRows(t, filepath.Join(dir, "ref", f)), itemRows(t, filepath.Join(dir, out, f))); diff != "" {
					t.Errorf("%s after disk full and resume differs (-want +got):\n%s", f, diff)
				}
			}
			if strings.Contains(res.stderr, "match no item") {
				t.Errorf("resume warns about predictions of kept items:\n%s", res.stderr)
			}
		})
	}
}

// TestSignals: SIGTERM ends a run like SIGINT (exit 130, cancelled, the
// finished items merged); a second SIGINT right after the first ends the
// process at once with 130, and the same command then resumes to a
// complete run.
func TestSignals(t *testing.T) {
	bin := evalflowBinary(t)
	dir := t.TempDir()
	args := slowReplay(t, dir, 10)
	start := func(out string) *exec.Cmd {
		cmd := exec.Command(bin, append(args, "-out", out)...)
		cmd.Dir = dir
		cmd.Env = withoutEvalflowVars(os.Environ())
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(1200 * time.Millisecond)
		return cmd
	}
	wait := func(cmd *exec.Cmd, sent time.Time, within time.Duration) {
		t.Helper()
		err := cmd.Wait()
		if took := time.Since(sent); took > within {
			t.Errorf("ended %v after the signal, want within %v", took, within)
		}
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != exitCancelled {
			t.Errorf("exit %v, want %d", err, exitCancelled)
		}
	}

	cmd := start("term")
	cmd.Process.Signal(syscall.SIGTERM)
	wait(cmd, time.Now(), 3*time.Second)
	if m := readManifest(t, filepath.Join(dir, "term")); m.Status != "cancelled" {
		t.Errorf("SIGTERM: status %q", m.Status)
	}

	cmd = start("twice")
	cmd.Process.Signal(os.Interrupt)
	time.Sleep(50 * time.Millisecond)
	cmd.Process.Signal(os.Interrupt)
	wait(cmd, time.Now(), 2*time.Second)
	if r := runBin(t, bin, dir, append(args, "-out", "twice")...); r.code != 0 {
		t.Fatalf("resume after a double interrupt: exit %d\n%s", r.code, r.stderr)
	}
	if rows := itemRows(t, filepath.Join(dir, "twice", rundir.ItemsFile)); len(rows) != 10 {
		t.Errorf("%d items after resume, want 10", len(rows))
	}
}

// TestMaxErrors: items the harness could not evaluate fail the run (exit 2,
// status failed) beyond -max-errors, given as a count or a percentage; the
// summary, the manifest and the exit code agree.
func TestMaxErrors(t *testing.T) {
	bin := evalflowBinary(t)
	dir := t.TempDir()
	var ds, preds bytes.Buffer
	for i := range 10 {
		db := "shop"
		if i < 2 {
			db = "nowhere" // no such database: a harness error
		}
		fmt.Fprintf(&ds, `{"id": "i%d", "question": "q", "gold": "SELECT COUNT(*) FROM customers", "db": %q}`+"\n", i, db)
		fmt.Fprintf(&preds, `{"id": "i%d", "pred": "SELECT COUNT(*) FROM customers"}`+"\n", i)
	}
	writeFile(t, filepath.Join(dir, "q.jsonl"), ds.Bytes())
	writeFile(t, filepath.Join(dir, "p.jsonl"), preds.Bytes())
	repo, _ := filepath.Abs(filepath.Join("..", ".."))
	args := []string{"run", filepath.Join(repo, "pipelines", "text2sql-replay.hcl"),
		"-var", "dataset=q.jsonl", "-var", "predictions=p.jsonl",
		"-var", "databases=" + filepath.Join(repo, "examples", "quickstart", "data"), "-quiet"}
	for _, tc := range []struct {
		flag   string
		code   int
		status string
	}{
		{"", exitRun, "failed"},
		{"1", exitRun, "failed"},
		{"2", exitOK, "complete"},
		{"10%", exitRun, "failed"},
		{"20%", exitOK, "complete"},
	} {
		out := "run" + strings.TrimSuffix(tc.flag, "%")
		a := append(args, "-out", out)
		if tc.flag != "" {
			a = append(a, "-max-errors", tc.flag)
		}
		r := runBin(t, bin, dir, a...)
		m := readManifest(t, filepath.Join(dir, out))
		if r.code != tc.code || m.Status != tc.status || m.Counts.Errors != 2 || m.Counts.OK != 8 {
			t.Errorf("-max-errors %q: exit %d status %q counts %+v; want %d %s with 2 errors\n%s", tc.flag, r.code, m.Status, m.Counts, tc.code, tc.status, r.stderr)
		}
		if !strings.Contains(r.stdout, "  "+tc.status+"  10 items (8 ok, 2 error, 0 cancelled)") {
			t.Errorf("-max-errors %q: summary does not agree:\n%s", tc.flag, r.stdout)
		}
		if v := m.Metrics["ex"]; v == nil || *v != 1 {
			t.Errorf("-max-errors %q: ex mean %v, want 1 over the 8 evaluated items", tc.flag, v)
		}
	}
	if r := runBin(t, bin, dir, append(args, "-out", "bad", "-max-errors", "lots")...); r.code != exitConfig {
		t.Errorf("-max-errors lots: exit %d, want 1", r.code)
	}
}

// TestInterruptWhileOpeningFIFO: a dataset that is a FIFO no writer has
// opened blocks the open; Ctrl-C still ends the command within 2 s.
func TestInterruptWhileOpeningFIFO(t *testing.T) {
	bin := evalflowBinary(t)
	dir := t.TempDir()
	slowReplay(t, dir, 1)
	os.Remove(filepath.Join(dir, "questions.jsonl"))
	if err := syscall.Mkfifo(filepath.Join(dir, "questions.jsonl"), 0o644); err != nil {
		t.Skip(err)
	}
	args := append(slowReplay2Args(t), "-out", "run")
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	cmd.Env = withoutEvalflowVars(os.Environ())
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(700 * time.Millisecond)
	cmd.Process.Signal(os.Interrupt)
	sent := time.Now()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != exitCancelled {
			t.Errorf("exit %v, want %d", err, exitCancelled)
		}
		if took := time.Since(sent); took > 2*time.Second {
			t.Errorf("took %v after SIGINT", took)
		}
	case <-time.After(5 * time.Second):
		cmd.Process.Kill()
		t.Fatal("SIGINT ignored while the FIFO dataset was opening")
	}
}

// slowReplay2Args are slowReplay's arguments without writing files.
func slowReplay2Args(t *testing.T) []string {
	repo, _ := filepath.Abs(filepath.Join("..", ".."))
	return []string{"run", filepath.Join(repo, "pipelines", "text2sql-replay.hcl"),
		"-var", "dataset=questions.jsonl", "-var", "predictions=preds.jsonl",
		"-var", "databases=" + filepath.Join(repo, "examples", "quickstart", "data"),
		"-var", "timeout=5m", "-quiet", "-concurrency", "1", "-no-cache"}
}

// duckdbQuery runs one query with the DuckDB reader make deps installs
// (sinks/testdata/duckdb-npm) and returns its first row as text.
func duckdbQuery(t *testing.T, sql string) []string {
	t.Helper()
	dir, _ := filepath.Abs(filepath.Join("..", "..", "sinks", "testdata", "duckdb-npm"))
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "@duckdb", "node-api")); err != nil {
		if os.Getenv("EVALFLOW_SKIP_NODE_READER") == "1" {
			t.Skip("EVALFLOW_SKIP_NODE_READER=1")
		}
		t.Fatalf("the DuckDB reader is not installed (%v): run make deps", err)
	}
	out, err := exec.Command("node", filepath.Join(dir, "read.mjs"), sql).Output()
	if err != nil {
		t.Fatalf("duckdb reader: %v", err)
	}
	var res []struct {
		Rows [][]*string `json:"rows"`
	}
	if err := json.Unmarshal(out, &res); err != nil || len(res) != 1 || len(res[0].Rows) == 0 {
		t.Fatalf("duckdb reader output %s: %v", out, err)
	}
	var row []string
	for _, c := range res[0].Rows[0] {
		if c == nil {
			row = append(row, "NULL")
		} else {
			row = append(row, *c)
		}
	}
	return row
}

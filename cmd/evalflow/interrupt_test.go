package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/evalflow/evalflow/rundir"
	"github.com/evalflow/evalflow/sinks"
)

// TestInterrupt builds the real binary, interrupts runs whose later items
// are stuck in slow queries, and checks what a user relies on after Ctrl-C:
// exit status 130 within moments, a manifest that says "cancelled", and
// readable Parquet files that hold the items that finished.
func TestInterrupt(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and runs pipelines for a few seconds")
	}
	if runtime.GOOS == "windows" {
		t.Skip("no SIGINT to send on windows")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "evalflow")
	build := exec.Command(goTool(t), "build", "-o", bin, ".")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}

	// Fast items first, then items whose prediction counts to 10^9 in a
	// recursive CTE: tens of seconds, far under the 5-minute engine timeout,
	// so only the interrupt can stop them.
	const fast, slow = 4, 12
	var ds, preds bytes.Buffer
	for i := range fast + slow {
		id := fmt.Sprintf("i%02d", i)
		pred := "SELECT COUNT(*) FROM customers"
		if i >= fast {
			pred = "WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n WHERE x < 1000000000) SELECT COUNT(*) FROM n"
		}
		fmt.Fprintf(&ds, `{"id": %q, "question": "q", "gold": "SELECT COUNT(*) FROM customers", "db": "shop"}`+"\n", id)
		fmt.Fprintf(&preds, `{"id": %q, "pred": %q}`+"\n", id, pred)
	}
	writeFile(t, filepath.Join(dir, "questions.jsonl"), ds.Bytes())
	writeFile(t, filepath.Join(dir, "preds.jsonl"), preds.Bytes())
	repo, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	args := []string{"run", filepath.Join(repo, "pipelines", "text2sql-replay.hcl"),
		"-var", "dataset=questions.jsonl", "-var", "predictions=preds.jsonl",
		"-var", "databases=" + filepath.Join(repo, "examples", "quickstart", "data"),
		"-var", "timeout=5m", "-quiet"}

	// One worker per stage: items move in dataset order, so exactly the
	// fast items finish and the first slow one holds up the rest.
	t.Run("serial", func(t *testing.T) {
		r := interruptRun(t, bin, dir, append(args, "-out", filepath.Join(dir, "serial"), "-concurrency", "1"), true)
		for i, row := range r.rows {
			want := "cancelled"
			if i < fast {
				want = "ok"
			}
			if id := fmt.Sprintf("i%02d", i); row.id != id || row.status != want {
				t.Errorf("items.parquet row %d: %s %s, want %s %s", i, row.id, row.status, id, want)
			}
		}
		if r.status["ok"] != fast {
			t.Errorf("%d items ok, want the %d fast ones (by status: %v)", r.status["ok"], fast, r.status)
		}
	})

	// Four workers per stage: which items finish depends on scheduling
	// (stages do not keep dataset order), but the run must still stop at
	// once and leave a consistent, readable run directory.
	t.Run("concurrent", func(t *testing.T) {
		interruptRun(t, bin, dir, append(args, "-out", filepath.Join(dir, "concurrent"), "-var", "concurrency=4"), false)
	})
}

type interruptRow struct {
	id, status string
	ex         any
}

type interruptResult struct {
	rows   []interruptRow
	status map[string]int
}

// interruptRun runs bin with args, sends SIGINT once the fast items have
// had ample time (with waitPart, once the run has flushed a part), and
// checks the common guarantees of an interrupted run.
func interruptRun(t *testing.T, bin, dir string, args []string, waitPart bool) interruptResult {
	t.Helper()
	out := args[len(args)-1]
	for i, a := range args {
		if a == "-out" {
			out = args[i+1]
		}
	}
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	cmd.Env = withoutEvalflowVars(os.Environ())
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()

	// The fast items take milliseconds; wait until the run has flushed a
	// part (its first flush comes a flush interval after the start, when
	// they are long done, however loaded the machine), then interrupt it
	// while the slow queries run.
	deadline := time.After(60 * time.Second)
	if !waitPart {
		// Which items finish first depends on scheduling: perhaps none
		// before the slow ones hold every connection.
		select {
		case err := <-done:
			t.Fatalf("run ended before it was interrupted: %v\nstdout:\n%s\nstderr:\n%s", err, &stdout, &stderr)
		case <-time.After(1200 * time.Millisecond):
		}
	}
	for flushed := !waitPart; !flushed; {
		select {
		case err := <-done:
			t.Fatalf("run ended before it was interrupted: %v\nstdout:\n%s\nstderr:\n%s", err, &stdout, &stderr)
		case <-deadline:
			_ = cmd.Process.Kill()
			<-done
			t.Fatalf("no part flushed within 60 s\nstderr:\n%s", &stderr)
		case <-time.After(20 * time.Millisecond):
			parts, _ := filepath.Glob(filepath.Join(dir, out, rundir.PartsDir, "items-*.parquet"))
			if filepath.IsAbs(out) {
				parts, _ = filepath.Glob(filepath.Join(out, rundir.PartsDir, "items-*.parquet"))
			}
			flushed = len(parts) > 0
		}
	}
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	sent := time.Now()
	var waitErr error
	select {
	case waitErr = <-done:
	case <-time.After(5 * time.Second):
		_ = cmd.Process.Kill()
		<-done
		t.Fatalf("still running 5s after SIGINT: the slow queries were not interrupted\nstderr:\n%s", &stderr)
	}
	t.Logf("exited %v after SIGINT", time.Since(sent).Round(time.Millisecond))

	var ee *exec.ExitError
	if !errors.As(waitErr, &ee) || ee.ExitCode() != exitCancelled {
		t.Fatalf("exit: %v, want status %d\nstdout:\n%s\nstderr:\n%s", waitErr, exitCancelled, &stdout, &stderr)
	}
	if !strings.Contains(stderr.String(), "evalflow run: interrupted; ") {
		t.Errorf("stderr does not say the run was interrupted:\n%s", &stderr)
	}
	if strings.Contains(stderr.String(), "panic") || strings.Contains(stderr.String(), "goroutine ") {
		t.Errorf("stderr has a panic:\n%s", &stderr)
	}
	if !strings.Contains(stdout.String(), "  cancelled  ") {
		t.Errorf("summary does not say cancelled:\n%s", &stdout)
	}

	var m rundir.Manifest
	b, err := os.ReadFile(filepath.Join(out, rundir.ManifestName))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("manifest.json: %v", err)
	}
	if m.Status != "cancelled" {
		t.Errorf("manifest status = %q, want cancelled", m.Status)
	}

	s, rows, err := sinks.ReadParquetRows(filepath.Join(out, rundir.ItemsFile))
	if err != nil {
		t.Fatalf("items.parquet after an interrupt: %v", err)
	}
	col := func(name string) int {
		for i, c := range s {
			if c.Name == name {
				return i
			}
		}
		t.Fatalf("items.parquet has no column %q", name)
		return -1
	}
	idCol, statusCol, exCol := col("id"), col("status"), col("ex")
	r := interruptResult{status: map[string]int{}}
	for _, row := range rows {
		ir := interruptRow{ex: row[exCol]}
		ir.id, _ = row[idCol].(string)
		ir.status, _ = row[statusCol].(string)
		r.rows = append(r.rows, ir)
		r.status[ir.status]++
		if ir.status == "ok" && ir.ex != 1.0 {
			t.Errorf("item %s finished with ex = %v, want 1 (only the fast, correct items can finish)", ir.id, ir.ex)
		}
	}
	t.Logf("items.parquet: %d rows, by status %v", len(rows), r.status)
	if r.status["cancelled"] == 0 {
		t.Errorf("no item is cancelled (by status: %v)", r.status)
	}
	if m.Counts.Items != len(rows) || m.Counts.OK != r.status["ok"] || m.Counts.Cancelled != r.status["cancelled"] {
		t.Errorf("manifest counts %+v disagree with items.parquet (%d rows, by status %v)", m.Counts, len(rows), r.status)
	}
	for _, name := range []string{rundir.AttemptsFile, rundir.AggregatesFile} {
		if _, _, err := sinks.ReadParquetRows(filepath.Join(out, name)); err != nil {
			t.Errorf("%s after an interrupt: %v", name, err)
		}
	}
	if _, err := os.Stat(filepath.Join(out, rundir.SummaryFile)); err != nil {
		t.Error(err)
	}
	return r
}

func goTool(t *testing.T) string {
	t.Helper()
	if p := filepath.Join(runtime.GOROOT(), "bin", "go"); runtime.GOROOT() != "" {
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	p, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command to build the binary with")
	}
	return p
}

func writeFile(t *testing.T, path string, b []byte) {
	t.Helper()
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func withoutEvalflowVars(env []string) []string {
	out := env[:0:0]
	for _, kv := range env {
		if !strings.HasPrefix(kv, "EVALFLOW_VAR_") {
			out = append(out, kv)
		}
	}
	return out
}

package main

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// BenchmarkReplayRSS runs the built binary on the curated replay pipeline
// (text2sql-replay.hcl, SQLite, every stage) over N generated items and
// reports the process's peak resident set size and its throughput. The
// target: memory bounded by concurrency, not by N — 1M items under 300 MB
// RSS (docs/benchmarks.md). About 100 MB of any figure is the binary itself
// (DuckDB, SQLite and the rest mapped in: `evalflow version` alone peaks
// there).
//
//	go test -run '^$' -bench ReplayRSS -benchtime 1x ./cmd/evalflow/
func BenchmarkReplayRSS(b *testing.B) {
	for _, n := range []int{10_000, 100_000, 1_000_000} {
		b.Run(fmt.Sprintf("items=%d", n), func(b *testing.B) {
			bin := evalflowBinaryB(b)
			dir := b.TempDir()
			writeReplay(b, dir, n)
			repo, _ := filepath.Abs(filepath.Join("..", ".."))
			var peak int64
			var total time.Duration
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				cmd := exec.Command(bin, "run", filepath.Join(repo, "pipelines", "text2sql-replay.hcl"),
					"-var", "dataset=q.jsonl", "-var", "predictions=p.jsonl",
					"-var", "databases="+filepath.Join(repo, "examples", "quickstart", "data"),
					"-quiet", "-overwrite", "-out", "run")
				cmd.Dir = dir
				start := time.Now()
				if out, err := cmd.CombinedOutput(); err != nil {
					b.Fatalf("%v\n%s", err, out)
				}
				total += time.Since(start)
				if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok && ru.Maxrss > peak {
					peak = ru.Maxrss
				}
			}
			b.ReportMetric(float64(peak)/1024, "peak-RSS-MB")
			b.ReportMetric(float64(n)*float64(b.N)/total.Seconds(), "items/s")
		})
	}
}

func evalflowBinaryB(b *testing.B) string {
	b.Helper()
	dir := b.TempDir()
	bin := filepath.Join(dir, "evalflow")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		b.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// writeReplay writes n questions over the quickstart shop database and
// their predictions (a third wrong), with a pass-through difficulty.
func writeReplay(b *testing.B, dir string, n int) {
	q, err := os.Create(filepath.Join(dir, "q.jsonl"))
	if err != nil {
		b.Fatal(err)
	}
	p, err := os.Create(filepath.Join(dir, "p.jsonl"))
	if err != nil {
		b.Fatal(err)
	}
	qw, pw := bufio.NewWriter(q), bufio.NewWriter(p)
	for i := range n {
		id := fmt.Sprintf("i%07d", i)
		fmt.Fprintf(qw, `{"id":%q,"question":"how many customers are there","gold":"SELECT COUNT(*) FROM customers","db":"shop","difficulty":%q}`+"\n",
			id, []string{"easy", "medium", "hard"}[i%3])
		pred := "SELECT COUNT(*) FROM customers"
		if i%3 == 0 {
			pred = "SELECT 1"
		}
		fmt.Fprintf(pw, `{"id":%q,"pred":%q}`+"\n", id, pred)
	}
	for _, err := range []error{qw.Flush(), pw.Flush(), q.Close(), p.Close()} {
		if err != nil {
			b.Fatal(err)
		}
	}
}

// Command evalflow evaluates text-to-query systems from declarative HCL
// pipelines. See README.md and `evalflow help`.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"runtime"
	"runtime/debug"
	"syscall"
)

// defaultGCPercent is the garbage collector's target when GOGC is not set:
// the heap may grow to 1.5× the live heap instead of Go's 2×. A long run's
// live heap is mostly what grows with the dataset (the replay predictions,
// the duplicate-id check), so this is what keeps a million-item replay
// under its memory budget; measured at no throughput cost
// (docs/benchmarks.md, BenchmarkReplayRSS).
//
// It takes effect after the first collection, not at start: the packages'
// initialisation leaves about 3 MB on the heap, over the 2 MB minimum
// goal of GOGC=50, so setting it at once made short commands (version,
// validate, plan) collect during startup for nothing. A long run collects
// within its first few megabytes anyway, and from then on the target
// is 50.
const defaultGCPercent = 50

func main() {
	if os.Getenv("GOGC") == "" {
		// Runs once the object is collected: after the first GC cycle.
		runtime.AddCleanup(new([64]byte), func(int) { debug.SetGCPercent(defaultGCPercent) }, 0)
	}
	ctx, cancel := context.WithCancel(context.Background())
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	go func() {
		<-sigs
		// The first signal cancels the run: it stops within about two
		// seconds, keeping its finished items. A second one ends the
		// process at once; the items already flushed to the run's parts
		// stay readable and the same command resumes.
		cancel()
		<-sigs
		fmt.Fprintln(os.Stderr, "evalflow: second interrupt: exiting now")
		os.Exit(exitCancelled)
	}()
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	signal.Stop(sigs)
	cancel()
	os.Exit(code)
}

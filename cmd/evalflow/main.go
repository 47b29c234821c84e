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
	"runtime/metrics"
	"syscall"
)

// defaultGCPercent is the garbage collector's target when GOGC is not set,
// for a large heap: it may grow to 1.5× the live heap instead of Go's 2×.
// A long run's live heap is mostly what grows with the dataset (the replay
// predictions, the duplicate-id check), so this is what keeps a
// million-item replay under its memory budget (docs/benchmarks.md,
// BenchmarkReplayRSS).
//
// A small heap gets at least gcMinHeadroom above its live bytes instead:
// with a few MB live, 1.5× meant a collection every few MB allocated, each
// scanning every goroutine's stack (a thousand model calls in flight are
// three thousand goroutines): at C = 1024 the headroom takes about 12% off
// a model-call run's CPU for about 30 MB (docs/benchmarks-baseline.md, "Run
// tails and collections"; a scoring run's change is within the noise).
// The headroom bounds what this costs in memory.
//
// The tuning starts after the first collection, not at start: the
// packages' initialisation leaves about 3 MB on the heap, so short
// commands (version, validate, plan) never collect.
const (
	defaultGCPercent = 50
	gcMinHeadroom    = 32 << 20
)

// tuneGC sets the next collection's target from the live heap the last
// one left, and re-arms itself for the next cycle.
func tuneGC() {
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(s)
	pct := defaultGCPercent
	if s[0].Value.Kind() == metrics.KindUint64 {
		if live := s[0].Value.Uint64(); live > 0 {
			pct = max(pct, int(min(gcMinHeadroom*100/live, 10_000)))
		}
	}
	debug.SetGCPercent(pct)
	// Runs once this object is collected: after the next GC cycle.
	runtime.AddCleanup(new([64]byte), func(int) { tuneGC() }, 0)
}

func main() {
	if os.Getenv("GOGC") == "" {
		// Runs once the object is collected: after the first GC cycle.
		runtime.AddCleanup(new([64]byte), func(int) { tuneGC() }, 0)
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

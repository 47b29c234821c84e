package planner_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/hcl/v2"

	"github.com/evalflow/evalflow/item"
	"github.com/evalflow/evalflow/nodes"
	"github.com/evalflow/evalflow/planner"
)

// noop is a stage that does nothing per item; as a collector it drops
// every record.
type noop struct{}

func (noop) Process(context.Context, *item.Record) error { return nil }

type noopCollector struct{}

func (noopCollector) Process(context.Context, *item.Record) error { return nil }
func (noopCollector) Collect(*item.Record)                        {}

// noopRegistry has the built-in kind names and wiring, but every factory
// returns a stage that does nothing: what is left is the planner's own cost
// (dataset decoding, channel hops, the reorder buffer).
func noopRegistry() *nodes.Registry {
	reg := &nodes.Registry{}
	chain := func(*nodes.Env) (nodes.Stage, hcl.Diagnostics) { return noop{}, nil }
	reg.Register(nodes.Kind{Name: "generate", DefaultConcurrency: 4, Factory: chain})
	reg.Register(nodes.Kind{Name: "validate", DefaultConcurrency: 4, Inputs: []string{"generate"}, Factory: chain})
	reg.Register(nodes.Kind{Name: "execute", DefaultConcurrency: 4, Inputs: []string{"validate"}, Factory: chain})
	reg.Register(nodes.Kind{Name: "refine", DefaultConcurrency: 4, Inputs: []string{"execute"}, Factory: chain})
	reg.Register(nodes.Kind{Name: "score", DefaultConcurrency: 4, Inputs: []string{"generate", "refine"}, Factory: chain})
	reg.Register(nodes.Kind{Name: "aggregate", DefaultConcurrency: 1, Inputs: []string{"score"},
		Factory: func(*nodes.Env) (nodes.Stage, hcl.Diagnostics) { return noopCollector{}, nil }})
	return reg
}

// noopPipelines are the shapes benchmarked: the smallest chain, and the
// shape of pipelines/text2sql-replay.hcl (five chain stages and a collector,
// concurrency 4 as there).
var noopPipelines = []struct{ name, src string }{
	{"stages=2", `
dataset "q" {
  source = "q.jsonl"
}
stage "generate" {
}
stage "score" {
  input = stage.generate
}
`},
	{"stages=6", `
dataset "q" {
  source = "q.jsonl"
}
stage "generate" {
}
stage "validate" {
  input = stage.generate
}
stage "execute" {
  input = stage.validate
}
stage "refine" {
  input = stage.execute
}
stage "score" {
  input = stage.refine
}
stage "aggregate" {
  input = stage.score
}
`},
}

// writeItems writes n items shaped like a text-to-SQL dataset row.
func writeItems(b testing.TB, path string, n int) {
	b.Helper()
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	w := bufio.NewWriter(f)
	for i := 0; i < n; i++ {
		fmt.Fprintf(w, `{"id":"q%07d","question":"How many rivers run through state number %d?","gold":"SELECT COUNT ( river_name ) FROM river WHERE traverse = 'state%d'","db":"geography","level":"easy","n":%d}`+"\n", i, i, i, i)
	}
	if err := w.Flush(); err != nil {
		b.Fatal(err)
	}
	if err := f.Close(); err != nil {
		b.Fatal(err)
	}
}

// heapSampler records the peak of live heap object bytes while a run goes
// on. It reads runtime/metrics, which does not stop the world.
type heapSampler struct {
	stop     chan struct{}
	done     sync.WaitGroup
	peak     uint64 // heap objects
	peakLive uint64 // live heap after a GC
}

func (h *heapSampler) sample() {
	o, l := heapNow()
	h.peak = max(h.peak, o)
	h.peakLive = max(h.peakLive, l)
}

// heapNow returns the bytes of heap objects, live or not yet swept (what
// MemStats.HeapAlloc reports), and the live heap the last GC marked.
func heapNow() (objects, live uint64) {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}, {Name: "/gc/heap/live:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64(), s[1].Value.Uint64()
}

func startHeapSampler() *heapSampler {
	h := &heapSampler{stop: make(chan struct{})}
	h.done.Add(1)
	go func() {
		defer h.done.Done()
		t := time.NewTicker(2 * time.Millisecond)
		defer t.Stop()
		for {
			h.sample()
			select {
			case <-h.stop:
				return
			case <-t.C:
			}
		}
	}()
	return h
}

// Stop stops sampling and returns the highest values seen.
func (h *heapSampler) Stop() (objects, live uint64) {
	close(h.stop)
	h.done.Wait()
	h.sample()
	return h.peak, h.peakLive
}

// BenchmarkNoopPipeline measures the planner's per-item overhead: a
// generated JSONL dataset streamed through stages that do nothing.
// items/s is the throughput. peak-heap-MB is the highest heap (objects
// live or not yet collected) during a run above the heap before it;
// peak-live-MB the same for the live heap each GC marked. Neither should
// grow with N: channels and the reorder buffer are bounded and records are
// not retained.
func BenchmarkNoopPipeline(b *testing.B) {
	for _, shape := range noopPipelines {
		for _, n := range []int{10_000, 100_000} {
			b.Run(fmt.Sprintf("%s/items=%d", shape.name, n), func(b *testing.B) {
				dir := b.TempDir()
				writeItems(b, filepath.Join(dir, "q.jsonl"), n)
				pl := build(b, dir, shape.src, planner.Options{Stages: noopRegistry()})
				ctx := context.Background()
				var peak, peakLive uint64
				b.ReportAllocs()
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					b.StopTimer()
					runtime.GC()
					base, baseLive := heapNow()
					h := startHeapSampler()
					got := 0
					b.StartTimer()
					err := pl.Run(ctx, planner.RunOptions{OnRecord: func(*item.Record) error { got++; return nil }})
					b.StopTimer()
					p, pl2 := h.Stop()
					if err != nil {
						b.Fatal(err)
					}
					if got != n {
						b.Fatalf("%d records, want %d", got, n)
					}
					if p > base {
						peak = max(peak, p-base)
					}
					if pl2 > baseLive {
						peakLive = max(peakLive, pl2-baseLive)
					}
					b.StartTimer()
				}
				b.StopTimer()
				b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "items/s")
				b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MB")
				b.ReportMetric(float64(peakLive)/(1<<20), "peak-live-MB")
			})
		}
	}
}

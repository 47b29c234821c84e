package planner_test

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/hcl/v2"

	"github.com/evalflow/evalflow/item"
	"github.com/evalflow/evalflow/nodes"
	"github.com/evalflow/evalflow/planner"
)

// slowStage sleeps per item and records how many items it holds at once,
// across every plan that shares it.
type slowStage struct{ now, peak *atomic.Int64 }

func (s slowStage) Process(context.Context, *item.Record) error {
	n := s.now.Add(1)
	for {
		p := s.peak.Load()
		if n <= p || s.peak.CompareAndSwap(p, n) {
			break
		}
	}
	time.Sleep(5 * time.Millisecond)
	s.now.Add(-1)
	return nil
}

// TestPoolsBoundStagesAcrossCells: three plans (a sweep's cells) running at
// once with shared Pools never hold more items in a stage than its
// concurrency; without Pools they hold three times as many.
func TestPoolsBoundStagesAcrossCells(t *testing.T) {
	for _, shared := range []bool{true, false} {
		t.Run(fmt.Sprintf("shared=%v", shared), func(t *testing.T) {
			var now, peak atomic.Int64
			reg := &nodes.Registry{}
			reg.Register(nodes.Kind{Name: "generate", DefaultConcurrency: 4,
				Factory: func(*nodes.Env) (nodes.Stage, hcl.Diagnostics) { return noop{}, nil }})
			reg.Register(nodes.Kind{Name: "score", DefaultConcurrency: 4, Inputs: []string{"generate"},
				Factory: func(*nodes.Env) (nodes.Stage, hcl.Diagnostics) { return slowStage{&now, &peak}, nil }})
			dir := t.TempDir()
			var rows []map[string]any
			for i := range 40 {
				rows = append(rows, map[string]any{"id": fmt.Sprint(i)})
			}
			writeJSONL(t, filepath.Join(dir, "q.jsonl"), rows)
			src := `
dataset "q" {
  source = "q.jsonl"
}
stage "generate" {
}
stage "score" {
  input       = stage.generate
  concurrency = 2
}
`
			opts := planner.Options{Stages: reg}
			if shared {
				opts.Pools = planner.NewPools()
			}
			var wg sync.WaitGroup
			for range 3 {
				pl := build(t, dir, src, opts)
				wg.Add(1)
				go func() {
					defer wg.Done()
					if err := pl.Run(context.Background(), planner.RunOptions{OnRecord: func(*item.Record) error { return nil }}); err != nil {
						t.Error(err)
					}
				}()
			}
			wg.Wait()
			switch p := peak.Load(); {
			case shared && p > 2:
				t.Errorf("with shared pools the stage held %d items at once, more than its concurrency 2", p)
			case !shared && p <= 2:
				t.Errorf("without shared pools the peak was %d; the test cannot tell the bound from chance", p)
			}
		})
	}
}

package planner_test

import (
	"context"
	"errors"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/hcl/v2"

	"github.com/evalflow/evalflow/item"
	"github.com/evalflow/evalflow/nodes"
	"github.com/evalflow/evalflow/planner"
)

// funcStage runs fn on every record.
type funcStage func(context.Context, *item.Record) error

func (f funcStage) Process(ctx context.Context, r *item.Record) error { return f(ctx, r) }

func oneStageRegistry(fn funcStage) *nodes.Registry {
	reg := &nodes.Registry{}
	reg.Register(nodes.Kind{Name: "generate", DefaultConcurrency: 4, Factory: func(*nodes.Env) (nodes.Stage, hcl.Diagnostics) { return fn, nil }})
	reg.Register(nodes.Kind{Name: "score", DefaultConcurrency: 4, Inputs: []string{"generate"},
		Factory: func(*nodes.Env) (nodes.Stage, hcl.Diagnostics) { return noop{}, nil }})
	return reg
}

const twoStages = `
dataset "q" {
  source = "q.jsonl"
}
stage "generate" {
}
stage "score" {
  input = stage.generate
}
`

// TestReorderWindowBounded: item 0 is slow, the rest are instant. The
// reader may run ahead of delivery by at most the window, however many
// items follow — the reorder buffer cannot pile up the dataset behind one
// slow item.
func TestReorderWindowBounded(t *testing.T) {
	dir := t.TempDir()
	const n = 5000
	writeItems(t, filepath.Join(dir, "q.jsonl"), n)
	release := make(chan struct{})
	var started, maxAhead atomic.Int64
	var delivered atomic.Int64
	stage := funcStage(func(ctx context.Context, r *item.Record) error {
		started.Add(1)
		if ahead := started.Load() - delivered.Load(); ahead > maxAhead.Load() {
			maxAhead.Store(ahead)
		}
		if r.Seq == 0 {
			<-release
		}
		return nil
	})
	pl := build(t, dir, twoStages, planner.Options{Stages: oneStageRegistry(stage)})
	done := make(chan error, 1)
	const window = 100
	go func() {
		done <- pl.Run(context.Background(), planner.RunOptions{Window: window, OnRecord: func(*item.Record) error {
			delivered.Add(1)
			return nil
		}})
	}()
	// Give the reader every chance to run ahead.
	deadline := time.Now().Add(2 * time.Second)
	for time.Now().Before(deadline) && started.Load() < window {
		time.Sleep(5 * time.Millisecond)
	}
	time.Sleep(200 * time.Millisecond)
	if s := started.Load(); s > window || s < window/2 {
		t.Errorf("%d items started while item 0 was stuck; want the window, %d", s, window)
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if d := delivered.Load(); d != n {
		t.Errorf("%d delivered, want %d", d, n)
	}
	if m := maxAhead.Load(); m > window {
		t.Errorf("up to %d items between reader and delivery, want at most %d", m, window)
	}
}

// TestRunGraceAbandonsStuckStages: a stage that ignores its context holds
// an item; a cancelled run still returns within its grace period, with the
// items that finished delivered.
func TestRunGraceAbandonsStuckStages(t *testing.T) {
	dir := t.TempDir()
	writeItems(t, filepath.Join(dir, "q.jsonl"), 50)
	stuck := make(chan struct{})
	defer close(stuck)
	stage := funcStage(func(ctx context.Context, r *item.Record) error {
		if r.Seq == 10 {
			<-stuck // ignores ctx
		}
		return nil
	})
	pl := build(t, dir, twoStages, planner.Options{Stages: oneStageRegistry(stage)})
	ctx, cancel := context.WithCancel(context.Background())
	var got atomic.Int64
	done := make(chan error, 1)
	go func() {
		done <- pl.Run(ctx, planner.RunOptions{Grace: 300 * time.Millisecond, OnRecord: func(r *item.Record) error {
			got.Add(1)
			return nil
		}})
	}()
	time.Sleep(300 * time.Millisecond)
	cancel()
	at := time.Now()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("Run returned %v, want context.Canceled", err)
		}
		if took := time.Since(at); took > 2*time.Second {
			t.Errorf("returned %v after cancel; grace is 300ms", took)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Run did not return 5 s after cancel: a stuck stage held it")
	}
	if g := got.Load(); g < 10 {
		t.Errorf("%d records delivered, want at least the 10 before the stuck one", g)
	}
}

// TestSkipKeepsOrder: items an earlier run finished (Skip) run no stage
// and are not delivered; the others keep their seq.
func TestSkipKeepsOrder(t *testing.T) {
	dir := t.TempDir()
	writeItems(t, filepath.Join(dir, "q.jsonl"), 3)
	var ran atomic.Int64
	stage := funcStage(func(ctx context.Context, r *item.Record) error { ran.Add(1); return nil })
	pl := build(t, dir, twoStages, planner.Options{Stages: oneStageRegistry(stage)})
	var recs []*item.Record
	err := pl.Run(context.Background(), planner.RunOptions{Skip: func(seq int) bool { return seq == 1 }, OnRecord: func(r *item.Record) error {
		recs = append(recs, r)
		return nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 2 || recs[0].Seq != 0 || recs[1].Seq != 2 || ran.Load() != 2 {
		t.Errorf("skip: %d records, %d stage runs; want seq 0 and 2 delivered and run", len(recs), ran.Load())
	}
}

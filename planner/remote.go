package planner

import (
	"context"
	"fmt"

	"github.com/evalflow/evalflow/item"
)

// ItemSource feeds a run its items in place of the dataset: it calls send
// with seq 0, 1, 2, … in that order (the collector delivers records in seq
// order from 0, so a gap would hold back everything after it) and returns
// when it has sent everything or send fails.
type ItemSource func(ctx context.Context, send func(seq int, it item.Item) error) error

// RunItems runs the given items (a cluster worker's shard) through the
// plan's per-item stages, exactly as Run would for them, and hands each
// finished record to emit in the order given, with Seq set to seqs[i].
// Records of items the run did not finish arrive with Status "cancelled".
// It may be called from several goroutines at once once the plan's
// collectors are detached (DetachCollectors): the coordinator, not the
// worker, collects.
func (pl *Plan) RunItems(ctx context.Context, seqs []int, items []item.Item, emit func(*item.Record) error) error {
	if len(seqs) != len(items) {
		return fmt.Errorf("RunItems: %d seqs for %d items", len(seqs), len(items))
	}
	return pl.Run(ctx, RunOptions{
		Source: func(ctx context.Context, send func(int, item.Item) error) error {
			for i, it := range items {
				if err := send(i, it); err != nil {
					return err
				}
			}
			return nil
		},
		OnRecord: func(rec *item.Record) error {
			rec.Seq = seqs[rec.Seq]
			return emit(rec)
		},
	})
}

// DetachCollectors removes the plan's collecting stages (aggregate): a
// worker's plan runs only the per-item stages, and the records it
// finishes are collected by the coordinator that writes the run.
func (pl *Plan) DetachCollectors() { pl.Collectors = nil }

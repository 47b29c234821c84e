package planner

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sort"
	"time"

	"github.com/sourcegraph/conc"

	"github.com/evalflow/evalflow/dataset"
	"github.com/evalflow/evalflow/item"
	"github.com/evalflow/evalflow/nodes"
	"github.com/evalflow/evalflow/store"
)

// RunOptions select items and receive results.
type RunOptions struct {
	// Limit keeps the first Limit items (0: all).
	Limit int
	// Sample keeps a reproducible random subset of Sample items chosen with
	// Seed (0: all); items keep dataset order.
	Sample int
	Seed   uint64
	// OnRecord receives every record once it leaves the last stage, in
	// dataset order, from a single goroutine. Records of items the run did
	// not finish (cancellation) arrive with Status "cancelled".
	OnRecord func(*item.Record) error
	// OnStart is told the number of items once the dataset is read (-1 when
	// it is streamed and not known yet).
	OnStart func(total int)
	// Skip reports items an earlier run of the same directory finished:
	// they keep their place in the order (seq) but run no stage and are
	// not delivered.
	Skip func(seq int) bool
	// Window bounds the items between the dataset and delivery (0: eight
	// times the widest stage's concurrency, at least 64): a slow item
	// holds back at most this many finished ones, so memory is bounded by
	// concurrency, not by the dataset's size.
	Window int
	// Dataset is the opened dataset (its schema read); nil: Run opens it.
	Dataset *dataset.Reader
	// Grace is how long a cancelled run waits for in-flight items to drain
	// before it returns without them (0: 1.5 s). A stage that ignores its
	// context cannot keep an interrupted run alive.
	Grace time.Duration
	// Source, when set, supplies the items in place of the dataset (a
	// cluster worker's shard; planner/remote.go). Limit and Sample do not
	// apply to it.
	Source ItemSource
}

var errStop = errors.New("stop")

// Run streams the dataset through the chain. It returns when every record
// has been delivered to OnRecord and the collectors; on cancellation it
// stops reading the dataset, lets in-flight records drain (marked
// cancelled) and returns ctx's error. A stage error or panic is recorded on
// that record and the run goes on; an OnRecord error (a sink failing) stops
// the run and is returned.
func (pl *Plan) Run(ctx context.Context, opts RunOptions) error {
	if pl.Dataset == nil {
		return fmt.Errorf("the pipeline has no dataset")
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)

	bufSize := func(n *Node) int { return n.Concurrency * 2 }
	first := 4
	if len(pl.Chain) > 0 {
		first = bufSize(pl.Chain[0])
	}
	src := make(chan *item.Record, first)
	var wg conc.WaitGroup
	var srcErr error
	window := opts.Window
	if window <= 0 {
		window = 64
		for _, n := range pl.Chain {
			window = max(window, 8*n.Concurrency)
		}
	}
	tokens := make(chan struct{}, window)

	wg.Go(func() {
		defer close(src)
		srcErr = pl.produce(ctx, opts, src, tokens)
	})

	stop := func(err error) { cancel(err) }
	in := src
	for _, n := range pl.Chain {
		// A stage's output holds up to the window: every record in flight
		// holds a window token, so no stage waits on a slower one
		// downstream while the window has room (a generate worker does
		// not wait for the execute workers before its next call), and
		// memory stays bounded by the window, not by these buffers.
		out := make(chan *item.Record, window)
		stageIn, node := in, n
		var workers conc.WaitGroup
		for w := 0; w < node.Concurrency; w++ {
			workers.Go(func() {
				for rec := range stageIn {
					if node.sem != nil {
						node.sem <- struct{}{} // the stage's pool across cells
					}
					process(ctx, node, rec, stop)
					if node.sem != nil {
						<-node.sem
					}
					out <- rec
				}
			})
		}
		wg.Go(func() {
			workers.Wait()
			close(out)
		})
		in = out
	}

	// Collect in dataset order; a reorder buffer holds records that finished
	// ahead of a slower one.
	var sinkErr error
	pending := map[int]*item.Record{}
	next := 0
	deliver := func(rec *item.Record) {
		// The record's window slot is freed once it is delivered, so the
		// reader is never more than the window ahead of what the sink has.
		defer func() { <-tokens }()
		if rec.Resumed {
			return
		}
		if rec.Status == "" {
			rec.Status = "ok"
		}
		for _, c := range pl.Collectors {
			c.Stage.(nodes.Collector).Collect(rec)
		}
		if opts.OnRecord != nil && sinkErr == nil {
			if err := opts.OnRecord(rec); err != nil {
				sinkErr = err
				cancel(err)
			}
		}
	}
	grace := opts.Grace
	if grace <= 0 {
		grace = 1500 * time.Millisecond
	}
	var graceC <-chan time.Time
	abandoned := false
collect:
	for {
		var rec *item.Record
		var ok bool
		select {
		case rec, ok = <-in:
		case <-ctx.Done():
			if graceC == nil {
				t := time.NewTimer(grace)
				defer t.Stop()
				graceC = t.C
			}
			select {
			case rec, ok = <-in:
			case <-graceC:
				abandoned = true
				break collect
			}
		}
		if !ok {
			break
		}
		pending[rec.Seq] = rec
		for {
			r, ok := pending[next]
			if !ok {
				break
			}
			delete(pending, next)
			next++
			deliver(r)
		}
	}
	if abandoned {
		// Stages still hold items past the grace period: deliver what
		// finished and return without waiting for the rest (their
		// goroutines end when their stages notice the cancellation).
		keys := make([]int, 0, len(pending))
		for k := range pending {
			keys = append(keys, k)
		}
		sort.Ints(keys)
		for _, k := range keys {
			deliver(pending[k])
		}
		if sinkErr != nil {
			return sinkErr
		}
		return context.Cause(ctx)
	}
	// Anything left had a gap before it (cannot happen unless a record was
	// lost); deliver in order anyway so nothing computed is dropped.
	if len(pending) > 0 {
		keys := make([]int, 0, len(pending))
		for k := range pending {
			keys = append(keys, k)
		}
		sort.Ints(keys)
		for _, k := range keys {
			deliver(pending[k])
		}
	}
	wg.Wait()
	if sinkErr != nil {
		return sinkErr
	}
	if srcErr != nil && !errors.Is(srcErr, errStop) {
		return srcErr
	}
	return context.Cause(ctx)
}

func (pl *Plan) produce(ctx context.Context, opts RunOptions, out chan<- *item.Record, tokens chan<- struct{}) error {
	send := func(seq int, it item.Item) error {
		rec := &item.Record{Seq: seq, Item: it}
		if opts.Skip != nil && opts.Skip(seq) {
			rec.Resumed = true
		} else if it.Invalid != "" {
			rec.Status, rec.Error = "error", it.Invalid
		}
		select {
		case tokens <- struct{}{}:
		case <-ctx.Done():
			return context.Cause(ctx)
		}
		select {
		case out <- rec:
			return nil
		case <-ctx.Done():
			return context.Cause(ctx)
		}
	}
	if opts.Source != nil {
		return opts.Source(ctx, send)
	}
	rd := opts.Dataset
	if rd == nil {
		var err error
		if rd, err = dataset.Open(ctx, pl.Dataset); err != nil {
			return err
		}
		defer rd.Close()
	}
	if opts.Sample > 0 {
		// Two passes: count, then send the chosen indices. Only the count
		// and the chosen positions are held, not the items.
		n := 0
		if err := rd.Items(ctx, func(item.Item) error { n++; return nil }); err != nil {
			return err
		}
		idx := SampleIndices(n, opts.Sample, opts.Seed)
		if opts.Limit > 0 && len(idx) > opts.Limit {
			idx = idx[:opts.Limit]
		}
		if opts.OnStart != nil {
			opts.OnStart(len(idx))
		}
		pos, seq := 0, 0
		err := rd.Items(ctx, func(it item.Item) error {
			if seq >= len(idx) {
				return errStop
			}
			if pos == idx[seq] {
				if err := send(seq, it); err != nil {
					return err
				}
				seq++
			}
			pos++
			return nil
		})
		if errors.Is(err, errStop) {
			return nil
		}
		return err
	}
	if opts.OnStart != nil {
		opts.OnStart(-1)
	}
	seq := 0
	return rd.Items(ctx, func(it item.Item) error {
		if opts.Limit > 0 && seq >= opts.Limit {
			return errStop
		}
		if err := send(seq, it); err != nil {
			return err
		}
		seq++
		return nil
	})
}

// SampleIndices picks k of n indices reproducibly from seed and returns them
// sorted. The same (n, k, seed) always gives the same subset.
func SampleIndices(n, k int, seed uint64) []int {
	if k >= n {
		out := make([]int, n)
		for i := range out {
			out[i] = i
		}
		return out
	}
	r := rand.New(rand.NewPCG(seed, 0x657661_6c666c6f77))
	perm := r.Perm(n)[:k]
	sort.Ints(perm)
	return perm
}

// process runs one stage on one record, turning errors and panics into the
// record's status so the run goes on.
func process(ctx context.Context, n *Node, rec *item.Record, stop func(error)) {
	if ctx.Err() != nil {
		if rec.Status == "" {
			rec.Status, rec.Error = "cancelled", "run cancelled before "+n.Name()
		}
		return
	}
	if rec.Status == "cancelled" || rec.Resumed || rec.Item.Invalid != "" {
		return
	}
	defer func() {
		if p := recover(); p != nil {
			msg := fmt.Sprintf("panic in %s on item %q: %v", n.Name(), rec.Item.ID, p)
			rec.Status, rec.Error = "error", msg
			if a := rec.Final(); a != nil {
				a.SetError(item.ClassPanic, msg)
			}
		}
	}()
	tally := &store.Tally{Refresh: n.refresh, Off: n.noCache, Probe: n.probe, Seq: rec.Seq}
	defer func() {
		n.items.Add(1)
		switch c := tally.Calls.Load(); {
		case c > 0 && tally.Hits.Load() == c:
			n.cached.Add(1)
		case c > 0:
			n.computed.Add(1)
		}
	}()
	if err := n.Stage.Process(store.WithTally(ctx, tally), rec); err != nil {
		var halt *nodes.StopRun
		if errors.As(err, &halt) {
			rec.Status, rec.Error = "error", fmt.Sprintf("%s on item %q: %v", n.Name(), rec.Item.ID, err)
			stop(halt)
			return
		}
		if ctx.Err() != nil {
			rec.Status, rec.Error = "cancelled", fmt.Sprintf("%s: %v", n.Name(), err)
			return
		}
		if rec.Status != "error" {
			rec.Status, rec.Error = "error", fmt.Sprintf("%s on item %q: %v", n.Name(), rec.Item.ID, err)
		}
	}
}

// Collect hands a finished record to the collectors (aggregate) without
// running it: a resumed run feeds them the items an earlier run finished.
func (pl *Plan) Collect(rec *item.Record) {
	for _, c := range pl.Collectors {
		c.Stage.(nodes.Collector).Collect(rec)
	}
}

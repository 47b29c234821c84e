package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/evalflow/evalflow/item"
)

// Coordinator publishes one run's shards and collects its results.
type Coordinator struct {
	NC   *nats.Conn
	Spec *Spec
	// Kept reports items (by run directory seq) an earlier process of the
	// run finished: they are neither published nor delivered.
	Kept func(seq int) bool
	// Deliver receives every other item's finished record, each cell's in
	// seq order (Seq is the run directory's, Cell the cell's index), from
	// the goroutine that called Run. An error stops the run.
	Deliver func(*item.Record) error
	// Failed makes the records of items whose shard died (delivered
	// MaxDeliver times, never finished): status error with msg.
	Failed func(cell int, seqs []int, msg string) ([]*item.Record, error)
	// Log receives notices (a dead shard, a worker's first shard); nil: none.
	Log func(format string, args ...any)
	// Poll is how often the consumer is checked for dead shards (0: 2 s).
	Poll time.Duration
	// Idle is called once when IdleAfter (0: 15 s) after the shards were
	// published no worker has taken one (none is serving the run); nil:
	// never. The run goes on waiting.
	Idle      func()
	IdleAfter time.Duration
}

// WorkerStat is one worker's share of a run, for manifest.json's workers.
type WorkerStat struct {
	ID     string `json:"id"`
	Host   string `json:"host"`
	Shards int    `json:"shards"`
	// Redelivered counts the shards among Shards that an earlier holder
	// had taken and not finished (it died, or gave the shard back).
	Redelivered int `json:"redelivered"`
	// reports holds the latest Report of each of its processes that
	// served this coordinator's generation (Totals sums them).
	reports map[string]Report
}

// PublishBundle packs roots into a bundle and stores it in BundleBucket
// under its digest unless an object of that name is already there; it
// returns the digest. The shared buckets missing are created with
// replicas replicas (0: AutoReplicas).
func PublishBundle(ctx context.Context, nc *nats.Conn, roots []string, replicas int) (string, error) {
	js, err := jetstream.New(nc)
	if err != nil {
		return "", err
	}
	_, bundles, _, err := buckets(ctx, js, replicas)
	if err != nil {
		return "", err
	}
	tmp, err := os.CreateTemp("", "evalflow-bundle-*.tar")
	if err != nil {
		return "", err
	}
	defer os.Remove(tmp.Name())
	defer tmp.Close()
	ix, err := PackBundle(roots, tmp)
	if err != nil {
		return "", err
	}
	digest := ix.Digest()
	if info, err := bundles.GetInfo(ctx, digest); err == nil && !info.Deleted {
		return digest, nil
	}
	if _, err := tmp.Seek(0, io.SeekStart); err != nil {
		return "", err
	}
	if _, err := bundles.Put(ctx, jetstream.ObjectMeta{Name: digest, Description: "evalflow pipeline bundle: " + strings.Join(ix.Roots, " ")}, tmp); err != nil {
		return "", fmt.Errorf("storing the pipeline bundle: %w", err)
	}
	return digest, nil
}

type pendingRec struct {
	raw    []byte
	object string
	rec    *item.Record // already decoded (a dead shard's error records)
}

type cellState struct {
	offset, total, next int
	buf                 map[int]pendingRec
}

// Run publishes the run (Spec, then a shard for every item not kept and
// not already in the results stream) and delivers results until every item
// is delivered, ctx ends, or a worker stops the run (a *StopError: a
// model's max_cost reached). On success the run's key, streams and result
// objects are deleted; on cancellation the run is marked stopped (workers
// stop serving it) and its streams stay for the next process.
func (c *Coordinator) Run(ctx context.Context) ([]WorkerStat, error) {
	s := c.Spec
	logf := c.Log
	if logf == nil {
		logf = func(string, ...any) {}
	}
	if s.ShardSize <= 0 {
		s.ShardSize = 32
	}
	if s.MaxDeliver <= 0 {
		s.MaxDeliver = DefaultMaxDeliver
	}
	js, err := jetstream.New(c.NC, jetstream.WithPublishAsyncTimeout(publishTimeout))
	if err != nil {
		return nil, err
	}
	auto := s.Replicas <= 0
	if auto {
		s.Replicas = AutoReplicas(c.NC)
	}
	kv, _, resultObjs, err := buckets(ctx, js, s.Replicas)
	if err != nil {
		return nil, err
	}
	s.Gen = 1
	if e, err := kv.Get(ctx, s.Key); err == nil {
		var prev Spec
		if json.Unmarshal(e.Value(), &prev) == nil {
			s.Gen = prev.Gen + 1
		}
	}
	shardCfg := jetstream.StreamConfig{Name: ShardStream(s.Key), Subjects: []string{shardSubject(s.Key)},
		Retention: jetstream.WorkQueuePolicy, Storage: jetstream.FileStorage, Description: "evalflow shards of run " + s.RunID, Replicas: s.Replicas}
	shards, err := js.CreateOrUpdateStream(ctx, shardCfg)
	if err != nil && auto && s.Replicas > 1 {
		// A cluster whose servers do not all run JetStream: one copy.
		logf("creating the run's streams with %d replicas: %v; using 1", s.Replicas, err)
		s.Replicas, shardCfg.Replicas = 1, 1
		shards, err = js.CreateOrUpdateStream(ctx, shardCfg)
	}
	if err != nil {
		return nil, fmt.Errorf("shard stream (%d replicas): %w", s.Replicas, err)
	}
	results, err := js.CreateOrUpdateStream(ctx, jetstream.StreamConfig{Name: ResultStream(s.Key), Subjects: []string{resultSubject(s.Key), doneSubject(s.Key)},
		Retention: jetstream.LimitsPolicy, Storage: jetstream.FileStorage, Description: "evalflow results of run " + s.RunID, Replicas: s.Replicas})
	if err != nil {
		return nil, fmt.Errorf("result stream (%d replicas): %w", s.Replicas, err)
	}
	cons, err := shards.CreateOrUpdateConsumer(ctx, jetstream.ConsumerConfig{Durable: WorkersConsumer, AckPolicy: jetstream.AckExplicitPolicy,
		AckWait: s.AckWait(), MaxDeliver: s.MaxDeliver, MaxAckPending: 100000})
	if err != nil {
		return nil, fmt.Errorf("shard consumer: %w", err)
	}
	// Shards of an earlier process go: what they would compute is
	// published again below for what is still missing.
	if err := shards.Purge(ctx); err != nil {
		return nil, fmt.Errorf("purging old shards: %w", err)
	}
	info, err := results.Info(ctx)
	if err != nil {
		return nil, err
	}
	lastOld := info.State.LastSeq
	if err := c.putSpec(ctx, kv); err != nil {
		return nil, err
	}
	stopped := false
	defer func() {
		if !stopped {
			// Interrupted or failed: workers stop; the streams stay.
			s2 := *s
			s2.Cells = nil
			b, _ := json.Marshal(struct {
				Spec
				Stopped bool `json:"stopped"`
			}{s2, true})
			kv.Put(context.WithoutCancel(ctx), s.Key, b)
		}
	}()

	cells := make([]*cellState, len(s.Cells))
	expected, delivered := 0, 0
	maxSeq := 0
	for i, sc := range s.Cells {
		cells[i] = &cellState{offset: sc.Offset, total: sc.Total, buf: map[int]pendingRec{}}
		for q := 0; q < sc.Total; q++ {
			if !c.Kept(sc.Offset + q) {
				expected++
			}
		}
		maxSeq = max(maxSeq, sc.Offset+sc.Total)
	}
	done := make([]bool, maxSeq)
	workers := map[string]*WorkerStat{}
	var workerOrder []string
	seenShard := map[string]bool{}

	msgs := make(chan jetstream.Msg, 256)
	reader := &resultReader{stream: results, msgs: msgs}
	if err := reader.start(ctx); err != nil {
		return nil, fmt.Errorf("result consumer: %w", err)
	}
	defer reader.stop()

	advance := func(cs *cellState, ci int) error {
		for cs.next < cs.total {
			if c.Kept(cs.offset + cs.next) {
				cs.next++
				continue
			}
			p, ok := cs.buf[cs.next]
			if !ok {
				return nil
			}
			rec := p.rec
			if rec == nil {
				raw := p.raw
				if p.object != "" {
					if raw, err = resultObjs.GetBytes(ctx, p.object); err != nil {
						return fmt.Errorf("result object %s: %w", p.object, err)
					}
				}
				if rec, err = DecodeRecord(raw); err != nil {
					return err
				}
			}
			rec.Seq, rec.Cell = cs.offset+cs.next, ci
			if err := c.Deliver(rec); err != nil {
				return err
			}
			delete(cs.buf, cs.next)
			cs.next++
			delivered++
		}
		return nil
	}

	var lastSeen uint64
	accept := func(m jetstream.Msg) error {
		if md, err := m.Metadata(); err == nil {
			lastSeen = max(lastSeen, md.Sequence.Stream)
		}
		h := m.Headers()
		if strings.HasSuffix(m.Subject(), ".done") {
			if reason := h.Get(hdrStop); reason != "" {
				if gen, _ := strconv.Atoi(h.Get(hdrGen)); gen == s.Gen {
					return &StopError{Reason: reason}
				}
				return nil // an earlier process's: this one goes on
			}
			id, host, sh := h.Get(hdrWorker), h.Get(hdrHost), h.Get(hdrShard)
			if id == "" || seenShard[id+"\x00"+sh] {
				return nil
			}
			seenShard[id+"\x00"+sh] = true
			w := workers[id]
			if w == nil {
				w = &WorkerStat{ID: id, Host: host, reports: map[string]Report{}}
				workers[id] = w
				workerOrder = append(workerOrder, id)
			}
			w.Shards++
			if d, _ := strconv.Atoi(h.Get(hdrDelivery)); d > 1 {
				w.Redelivered++
			}
			var r Report
			if len(m.Data()) > 0 && json.Unmarshal(m.Data(), &r) == nil && r.Proc != "" && r.Gen == s.Gen {
				if prev, ok := w.reports[r.Proc]; !ok || r.N > prev.N {
					w.reports[r.Proc] = r
				}
			}
			return nil
		}
		gen, _ := strconv.Atoi(h.Get(hdrGen))
		ci, err1 := strconv.Atoi(h.Get(hdrCell))
		seq, err2 := strconv.Atoi(h.Get(hdrSeq))
		if err1 != nil || err2 != nil || ci < 0 || ci >= len(cells) || seq < 0 || seq >= cells[ci].total {
			logf("ignoring a result with bad headers (cell %q, seq %q)", h.Get(hdrCell), h.Get(hdrSeq))
			return nil
		}
		cs := cells[ci]
		g := cs.offset + seq
		if done[g] || c.Kept(g) {
			return nil // a duplicate (a redelivered shard)
		}
		switch st := h.Get(hdrStatus); {
		case st == "ok" || st == "timeout" || st == "unsafe":
		case gen == s.Gen:
		default:
			return nil // an error of an earlier process's shard: it runs again
		}
		done[g] = true
		cs.buf[seq] = pendingRec{raw: m.Data(), object: h.Get(hdrObject)}
		return advance(cs, ci)
	}

	published := false
	var publishedAt time.Time
	idleDone := c.Idle == nil
	idleAfter := c.IdleAfter
	if idleAfter <= 0 {
		idleAfter = 15 * time.Second
	}
	publish := func() error {
		published, publishedAt = true, time.Now()
		n := 0
		type sent struct {
			f    jetstream.PubAckFuture
			id   string
			data []byte
		}
		var pending []sent
		for ci, cs := range cells {
			var seqs []int
			flush := func() error {
				if len(seqs) == 0 {
					return nil
				}
				sh := Shard{Gen: s.Gen, Cell: ci, Seqs: seqs}
				b, _ := json.Marshal(sh)
				// The id lets the server drop a shard published twice (an
				// acknowledgement lost, the shard published again).
				f, err := js.PublishAsync(shardSubject(s.Key), b, jetstream.WithMsgID("shard."+sh.id()))
				if err != nil {
					return err
				}
				pending = append(pending, sent{f, "shard." + sh.id(), b})
				n++
				seqs = nil
				return nil
			}
			for q := 0; q < cs.total; q++ {
				if g := cs.offset + q; done[g] || c.Kept(g) {
					continue
				}
				seqs = append(seqs, q)
				if len(seqs) == s.ShardSize {
					if err := flush(); err != nil {
						return err
					}
				}
			}
			if err := flush(); err != nil {
				return err
			}
		}
		select {
		case <-js.PublishAsyncComplete():
		case <-ctx.Done():
			return context.Cause(ctx)
		}
		for _, p := range pending {
			select {
			case <-p.f.Ok():
				continue
			case err := <-p.f.Err():
				logf("publishing a shard: %v; publishing it again", err)
			}
			for {
				if _, err := js.Publish(ctx, shardSubject(s.Key), p.data, jetstream.WithMsgID(p.id)); err == nil {
					break
				} else if ctx.Err() != nil {
					return context.Cause(ctx)
				} else {
					logf("publishing a shard: %v; trying again", err)
				}
				if !sleepCtx(ctx, time.Second) {
					return context.Cause(ctx)
				}
			}
		}
		logf("published %d shards", n)
		return nil
	}
	if lastOld == 0 {
		if err := publish(); err != nil {
			return nil, err
		}
	}

	poll := c.Poll
	if poll <= 0 {
		poll = 2 * time.Second
	}
	tick := time.NewTicker(poll)
	defer tick.Stop()
	for delivered < expected {
		select {
		case <-ctx.Done():
			return c.stats(workers, workerOrder), context.Cause(ctx)
		case m, ok := <-msgs:
			if !ok {
				return nil, fmt.Errorf("the result stream ended")
			}
			if err := accept(m); err != nil {
				return c.stats(workers, workerOrder), err
			}
			if !published {
				if md, err := m.Metadata(); err == nil && md.Sequence.Stream >= lastOld {
					if err := publish(); err != nil {
						return nil, err
					}
				}
			}
		case <-tick.C:
			if len(msgs) == 0 && time.Since(reader.active()) > readerStall {
				// An ordered consumer lost with a server does not always
				// come back: read again after the last message passed on.
				if info, err := results.Info(ctx); err == nil && info.State.LastSeq > reader.last.Load() {
					logf("reading the results again from message %d (nothing came for %s)", reader.last.Load()+1, readerStall)
					reader.stop()
					if err := reader.start(ctx); err != nil {
						logf("reading the results: %v", err)
					}
				}
			}
			if !published {
				continue
			}
			if !idleDone && time.Since(publishedAt) >= idleAfter {
				if ci, err := cons.Info(ctx); err == nil {
					idleDone = true
					if ci.Delivered.Consumer == 0 && len(workers) == 0 {
						c.Idle()
					}
				}
			}
			dead, err := deadShards(ctx, shards, cons, shardSubject(s.Key))
			if err != nil {
				logf("checking for dead shards: %v", err)
				continue
			}
			for _, d := range dead {
				if d.shard.Gen == s.Gen && d.shard.Cell >= 0 && d.shard.Cell < len(cells) {
					cs := cells[d.shard.Cell]
					var missing []int
					for _, q := range d.shard.Seqs {
						if q >= 0 && q < cs.total && !done[cs.offset+q] && !c.Kept(cs.offset+q) {
							missing = append(missing, q)
						}
					}
					if len(missing) > 0 {
						msg := fmt.Sprintf("cluster: shard %s (%d items) was delivered %d times and never finished: the workers that took it died or could not run it",
							d.shard.id(), len(d.shard.Seqs), s.MaxDeliver)
						logf("%s", msg)
						recs, err := c.Failed(d.shard.Cell, missing, msg)
						if err != nil {
							return c.stats(workers, workerOrder), err
						}
						for i, q := range missing {
							if i < len(recs) {
								done[cs.offset+q] = true
								cs.buf[q] = pendingRec{rec: recs[i]}
							}
						}
						if err := advance(cs, d.shard.Cell); err != nil {
							return c.stats(workers, workerOrder), err
						}
					}
				}
				if err := shards.DeleteMsg(ctx, d.seq); err != nil && !errors.Is(err, jetstream.ErrMsgNotFound) {
					logf("deleting dead shard %d: %v", d.seq, err)
				}
			}
		}
	}
	// Every item is in; the shards' done messages follow their items, so
	// wait (a while) for the last acks, then read the stream to its end.
	if err := c.drain(ctx, cons, results, msgs, poll, accept, func() uint64 { return lastSeen }); err != nil {
		logf("reading the last done messages: %v", err)
	}
	stats := c.stats(workers, workerOrder)
	// Complete: the run is unpublished and its state deleted.
	stopped = true
	bg := context.WithoutCancel(ctx)
	kv.Delete(bg, s.Key)
	js.DeleteStream(bg, ShardStream(s.Key))
	js.DeleteStream(bg, ResultStream(s.Key))
	deleteLimits(bg, js, s.Key)
	if lister, err := resultObjs.List(bg); err == nil {
		for _, o := range lister {
			if strings.HasPrefix(o.Name, s.Key+"/") {
				resultObjs.Delete(bg, o.Name)
			}
		}
	}
	return stats, nil
}

// readerStall is how long the coordinator waits for the next result
// while the results stream holds more before it reads it again.
const readerStall = 10 * time.Second

// resultReader passes the results stream's messages on to msgs, in stream
// order, through an ordered consumer; start again resumes after the last
// message passed on. Used by one goroutine (start and stop).
type resultReader struct {
	stream jetstream.Stream
	msgs   chan jetstream.Msg
	last   atomic.Uint64 // stream sequence of the last message passed on
	at     atomic.Int64  // when (Unix ns) the last was passed on, or the reader started
	halt   func()        // stops the running reader and waits for it; nil: none runs
}

func (r *resultReader) active() time.Time { return time.Unix(0, r.at.Load()) }

func (r *resultReader) start(ctx context.Context) error {
	r.at.Store(time.Now().UnixNano())
	cfg := jetstream.OrderedConsumerConfig{DeliverPolicy: jetstream.DeliverAllPolicy}
	if l := r.last.Load(); l > 0 {
		cfg = jetstream.OrderedConsumerConfig{DeliverPolicy: jetstream.DeliverByStartSequencePolicy, OptStartSeq: l + 1}
	}
	cons, err := r.stream.OrderedConsumer(ctx, cfg)
	if err != nil {
		return err
	}
	it, err := cons.Messages()
	if err != nil {
		return err
	}
	rctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			m, err := it.Next()
			if err != nil {
				if errors.Is(err, jetstream.ErrMsgIteratorClosed) || rctx.Err() != nil {
					return
				}
				continue // a reconnect: the ordered consumer resumes
			}
			md, err := m.Metadata()
			if err != nil || md.Sequence.Stream <= r.last.Load() {
				continue // passed on by an earlier reader
			}
			select {
			case r.msgs <- m:
				r.last.Store(md.Sequence.Stream)
				r.at.Store(time.Now().UnixNano())
			case <-rctx.Done():
				return
			}
		}
	}()
	r.halt = func() {
		cancel()
		it.Stop()
		<-done
	}
	return nil
}

func (r *resultReader) stop() {
	if r.halt != nil {
		r.halt()
		r.halt = nil
	}
}

// drain waits until no shard is in flight (at most AckWait) and accepts
// what the result stream holds up to its last message then.
func (c *Coordinator) drain(ctx context.Context, cons jetstream.Consumer, results jetstream.Stream, msgs <-chan jetstream.Msg, poll time.Duration, accept func(jetstream.Msg) error, seen func() uint64) error {
	deadline := time.Now().Add(c.Spec.AckWait())
	for time.Now().Before(deadline) {
		ci, err := cons.Info(ctx)
		if err != nil {
			return err
		}
		if ci.NumAckPending == 0 {
			break
		}
		if !sleepCtx(ctx, min(poll, 100*time.Millisecond)) {
			return context.Cause(ctx)
		}
	}
	info, err := results.Info(ctx)
	if err != nil {
		return err
	}
	last := info.State.LastSeq
	t := time.NewTimer(c.Spec.AckWait())
	defer t.Stop()
	for seen() < last {
		select {
		case <-ctx.Done():
			return context.Cause(ctx)
		case <-t.C:
			return fmt.Errorf("the result stream did not reach message %d", last)
		case m, ok := <-msgs:
			if !ok {
				return nil
			}
			if err := accept(m); err != nil {
				return err
			}
		}
	}
	return nil
}

func (c *Coordinator) putSpec(ctx context.Context, kv jetstream.KeyValue) error {
	b, err := json.Marshal(c.Spec)
	if err != nil {
		return err
	}
	if _, err := kv.Put(ctx, c.Spec.Key, b); err != nil {
		return fmt.Errorf("publishing the run: %w", err)
	}
	return nil
}

func (c *Coordinator) stats(m map[string]*WorkerStat, order []string) []WorkerStat {
	out := make([]WorkerStat, 0, len(order))
	for _, id := range order {
		out = append(out, *m[id])
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

type deadShard struct {
	seq   uint64
	shard Shard
}

// deadShards lists the shards the consumer will never deliver again:
// when it has nothing pending and nothing in flight, every shard still in
// the work queue was delivered MaxDeliver times without an ack.
func deadShards(ctx context.Context, st jetstream.Stream, cons jetstream.Consumer, subject string) ([]deadShard, error) {
	ci, err := cons.Info(ctx)
	if err != nil {
		return nil, err
	}
	if ci.NumPending > 0 || ci.NumAckPending > 0 {
		return nil, nil
	}
	si, err := st.Info(ctx)
	if err != nil || si.State.Msgs == 0 {
		return nil, err
	}
	var out []deadShard
	for seq := si.State.FirstSeq; seq <= ci.Delivered.Stream; {
		m, err := st.GetMsg(ctx, seq, jetstream.WithGetMsgSubject(subject))
		if errors.Is(err, jetstream.ErrMsgNotFound) {
			break
		}
		if err != nil {
			return out, err
		}
		if m.Sequence > ci.Delivered.Stream {
			break
		}
		var sh Shard
		if json.Unmarshal(m.Data, &sh) == nil {
			out = append(out, deadShard{seq: m.Sequence, shard: sh})
		}
		seq = m.Sequence + 1
	}
	return out, nil
}

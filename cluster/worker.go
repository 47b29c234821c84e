package cluster

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/evalflow/evalflow/item"
)

// Runner runs the shards of one run on a worker. The command builds it
// from the run's Spec and its unpacked bundle: the same plans a local run
// would build, with their collectors detached. Both methods are called
// from several goroutines at once.
type Runner interface {
	// RunShard runs the cell's items seqs (local sequence numbers) through
	// the per-item stages and hands each finished record to emit, in
	// order. An error means the shard could not run (the plan or an engine
	// could not start), not that items failed: those are records.
	RunShard(ctx context.Context, cell int, seqs []int, emit func(*item.Record) error) error
	// ErrorRecords makes the records of items seqs of cell in error with
	// msg (a shard that cannot run, on its last delivery).
	ErrorRecords(ctx context.Context, cell int, seqs []int, msg string) ([]*item.Record, error)
}

// StopError stops a whole run, as a local run stops when a model's
// max_cost is reached: RunShard returns it (possibly wrapped), the worker
// tells the coordinator, and Coordinator.Run returns it.
type StopError struct{ Reason string }

func (e *StopError) Error() string { return "run stopped: " + e.Reason }

// Worker pulls shards of runs and runs them.
type Worker struct {
	NC *nats.Conn
	// ID names the worker in manifest.json's workers; Host is its machine.
	ID, Host string
	// Slots is how many shards run at once (at least 1).
	Slots int
	// Log receives notices; nil: none.
	Log func(format string, args ...any)
	// Report returns what this process did for the run so far (its
	// stages' counts and model calls; Proc, N and Gen are filled in
	// here), sent with every shard's done message; nil: nothing.
	Report func() Report

	procOnce sync.Once
	proc     string
	reports  atomic.Int64
}

// NewWorkerID returns an identity for a worker process: host and pid.
func NewWorkerID() (id, host string) {
	host = hostname()
	return host + "-" + strconv.Itoa(os.Getpid()), host
}

func (w *Worker) logf(format string, args ...any) {
	if w.Log != nil {
		w.Log(format, args...)
	}
}

// runState is a published run as a worker sees it.
type runState struct {
	Spec
	Stopped bool `json:"stopped"`
}

// watchResync is how often Watch replaces its watcher of the runs bucket.
const watchResync = 30 * time.Second

// ErrConnClosed: the client gave up its connection to the server for good
// (the server refused the credentials twice in a row).
var ErrConnClosed = errors.New("the connection to the NATS server is closed (refused credentials?)")

// Watch calls serve for every run published on the server — those there
// when it starts and those published later — each in its own goroutine with
// a context that ends when the run is deleted or stopped (or ctx ends). A
// serve that returns an error while its run is still published is called
// again after a pause. Watch returns nil when ctx ends, ErrConnClosed when
// the connection is closed before it could start.
func (w *Worker) Watch(ctx context.Context, serve func(ctx context.Context, spec *Spec) error) error {
	js, err := jetstream.New(w.NC)
	if err != nil {
		return err
	}
	var kv jetstream.KeyValue
	for {
		kv, _, _, err = buckets(ctx, js, 0)
		if err == nil {
			break
		}
		if ctx.Err() != nil {
			return nil
		}
		if w.NC.IsClosed() {
			return ErrConnClosed
		}
		if errors.As(err, new(*NoJetStreamError)) {
			return err // it will not fix itself
		}
		w.logf("waiting for the server: %v", err)
		if !sleepCtx(ctx, 2*time.Second) {
			return nil
		}
	}
	type served struct {
		gen    int
		cancel context.CancelFunc
	}
	running := map[string]*served{}
	var wg sync.WaitGroup
	defer wg.Wait()
	defer func() {
		for _, s := range running {
			s.cancel()
		}
	}()
	resync := time.NewTicker(watchResync)
	defer resync.Stop()
	var watcher jetstream.KeyWatcher
	defer func() {
		if watcher != nil {
			watcher.Stop()
		}
	}()
	var updates <-chan jetstream.KeyValueEntry
	var initial map[string]bool // live runs among the watcher's initial values; nil after them
	for {
		if watcher == nil {
			if watcher, err = kv.WatchAll(ctx); err != nil {
				watcher = nil
				if ctx.Err() != nil {
					return nil
				}
				if w.NC.IsClosed() {
					return ErrConnClosed
				}
				w.logf("watching the runs: %v", err)
				if !sleepCtx(ctx, 2*time.Second) {
					return nil
				}
				continue
			}
			updates, initial = watcher.Updates(), map[string]bool{}
		}
		var e jetstream.KeyValueEntry
		ok := true
		select {
		case <-ctx.Done():
			return nil
		case <-resync.C:
			// A watcher lost with a server does not always come back: a
			// fresh one replays every published run.
			watcher.Stop()
			watcher = nil
			continue
		case e, ok = <-updates:
		}
		if !ok {
			watcher.Stop()
			watcher = nil
			continue
		}
		if e == nil {
			// The initial values are all there: a run deleted while an
			// earlier watcher heard nothing is not served any more.
			for key, cur := range running {
				if !initial[key] {
					cur.cancel()
					delete(running, key)
				}
			}
			initial = nil
			continue
		}
		key := e.Key()
		var st runState
		live := e.Operation() == jetstream.KeyValuePut && json.Unmarshal(e.Value(), &st) == nil && !st.Stopped
		if live && initial != nil {
			initial[key] = true
		}
		if cur := running[key]; cur != nil && (!live || cur.gen != st.Gen) {
			cur.cancel()
			delete(running, key)
		}
		if !live || running[key] != nil {
			continue
		}
		rctx, cancel := context.WithCancel(ctx)
		running[key] = &served{gen: st.Gen, cancel: cancel}
		spec := st.Spec
		wg.Add(1)
		go func() {
			defer wg.Done()
			for rctx.Err() == nil {
				err := serve(rctx, &spec)
				if rctx.Err() != nil {
					return
				}
				if err != nil {
					w.logf("run %s: %v; trying again", spec.RunID, err)
				}
				if !sleepCtx(rctx, 2*time.Second) {
					return
				}
			}
		}()
	}
}

// Serve runs shards of one run, Slots at a time, until ctx ends or the
// run's streams are deleted (it is complete).
func (w *Worker) Serve(ctx context.Context, spec *Spec, r Runner) error {
	js, err := jetstream.New(w.NC, jetstream.WithPublishAsyncTimeout(publishTimeout))
	if err != nil {
		return err
	}
	_, _, objs, err := buckets(ctx, js, spec.Replicas)
	if err != nil {
		return err
	}
	var cons jetstream.Consumer
	for {
		cons, err = js.Consumer(ctx, ShardStream(spec.Key), WorkersConsumer)
		if err == nil {
			break
		}
		if errors.Is(err, jetstream.ErrStreamNotFound) || ctx.Err() != nil {
			return nil // complete, or stopped
		}
		if !sleepCtx(ctx, time.Second) {
			return nil
		}
	}
	slots := max(w.Slots, 1)
	var wg sync.WaitGroup
	errs := make([]error, slots)
	sctx, stop := context.WithCancel(ctx)
	defer stop()
	for i := range slots {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for sctx.Err() == nil {
				batch, err := cons.Fetch(1, jetstream.FetchMaxWait(2*time.Second))
				if err != nil {
					if errors.Is(err, jetstream.ErrConsumerNotFound) || errors.Is(err, jetstream.ErrStreamNotFound) ||
						errors.Is(err, jetstream.ErrConsumerDeleted) {
						stop() // the run is complete
						return
					}
					sleepCtx(sctx, 500*time.Millisecond)
					continue
				}
				for m := range batch.Messages() {
					if err := w.handle(sctx, js, objs, spec, r, m); err != nil {
						if sctx.Err() != nil && errors.Is(err, context.Canceled) {
							continue // the run is complete or the worker stops: the normal end
						}
						w.logf("run %s: %v", spec.RunID, err)
					}
				}
				if err := batch.Error(); err != nil && !errors.Is(err, nats.ErrTimeout) && !errors.Is(err, context.DeadlineExceeded) {
					if errors.Is(err, jetstream.ErrConsumerDeleted) || errors.Is(err, jetstream.ErrConsumerNotFound) {
						stop()
						return
					}
					errs[i] = err
					sleepCtx(sctx, 500*time.Millisecond)
				}
			}
		}()
	}
	wg.Wait()
	return nil
}

// handle runs one shard: its items are published (each awaited) and its
// done message sent before it is acked; meanwhile its lease is extended
// every AckWait/3.
func (w *Worker) handle(ctx context.Context, js jetstream.JetStream, objs jetstream.ObjectStore, spec *Spec, r Runner, m jetstream.Msg) error {
	var sh Shard
	if err := json.Unmarshal(m.Data(), &sh); err != nil {
		m.Term()
		return fmt.Errorf("a shard that is not JSON: %v", err)
	}
	md, err := m.Metadata()
	if err != nil {
		return err
	}
	if md.NumDelivered > 1 {
		w.logf("run %s: shard %s, delivery %d (an earlier holder died or gave it back)", spec.RunID, sh.id(), md.NumDelivered)
	}
	hb, stopHB := context.WithCancel(ctx)
	defer stopHB()
	go func() {
		t := time.NewTicker(spec.AckWait() / 3)
		defer t.Stop()
		for {
			select {
			case <-hb.Done():
				return
			case <-t.C:
				m.InProgress()
			}
		}
	}()
	var futures []jetstream.PubAckFuture
	cancelled := false
	maxPayload := int(w.NC.MaxPayload()) - 8<<10
	emit := func(rec *item.Record) error {
		if rec.Status == "cancelled" {
			cancelled = true
			return nil
		}
		data, err := EncodeRecord(rec)
		if err != nil {
			return err
		}
		msg := nats.NewMsg(resultSubject(spec.Key))
		msg.Header.Set(hdrGen, strconv.Itoa(sh.Gen))
		msg.Header.Set(hdrCell, strconv.Itoa(sh.Cell))
		msg.Header.Set(hdrSeq, strconv.Itoa(rec.Seq))
		msg.Header.Set(hdrStatus, rec.Status)
		msg.Header.Set(hdrWorker, w.ID)
		if len(data) > maxPayload {
			name := fmt.Sprintf("%s/%d/%d/%d", spec.Key, sh.Cell, rec.Seq, sh.Gen)
			// In chunks the server takes (the store's default, 128 KiB,
			// may exceed a server's max_payload).
			meta := jetstream.ObjectMeta{Name: name, Opts: &jetstream.ObjectMetaOptions{ChunkSize: uint32(min(128<<10, maxPayload))}}
			if _, err := objs.Put(ctx, meta, bytes.NewReader(data)); err != nil {
				return fmt.Errorf("storing a large result: %w", err)
			}
			msg.Header.Set(hdrObject, name)
		} else {
			msg.Data = data
		}
		f, err := js.PublishMsgAsync(msg, jetstream.WithMsgID(fmt.Sprintf("%d.%d.%d", sh.Gen, sh.Cell, rec.Seq)))
		if err != nil {
			return err
		}
		futures = append(futures, f)
		return nil
	}
	runErr := r.RunShard(ctx, sh.Cell, sh.Seqs, emit)
	var halt *StopError
	if runErr != nil && !errors.As(runErr, &halt) && ctx.Err() == nil && md.NumDelivered >= uint64(spec.MaxDeliver) {
		// Its last chance: the items are errors with the reason, so the
		// run ends naming it rather than a dead shard.
		recs, err := r.ErrorRecords(ctx, sh.Cell, sh.Seqs, fmt.Sprintf("cluster: shard %s could not run on worker %s: %v", sh.id(), w.ID, runErr))
		if err == nil {
			runErr = nil
			for _, rec := range recs {
				if err := emit(rec); err != nil {
					runErr = err
					break
				}
			}
		}
	}
	for _, f := range futures {
		select {
		case <-f.Ok():
		case err := <-f.Err():
			runErr = errors.Join(runErr, err)
		case <-ctx.Done():
		}
	}
	stopHB()
	if errors.As(runErr, &halt) && ctx.Err() == nil {
		// The whole run stops: the coordinator ends it; the shard goes
		// back (a resumed run runs it).
		msg := nats.NewMsg(doneSubject(spec.Key))
		msg.Header.Set(hdrWorker, w.ID)
		msg.Header.Set(hdrHost, w.Host)
		msg.Header.Set(hdrShard, sh.id())
		msg.Header.Set(hdrGen, strconv.Itoa(sh.Gen))
		msg.Header.Set(hdrStop, halt.Reason)
		_, err := js.PublishMsg(ctx, msg)
		m.NakWithDelay(spec.AckWait())
		return errors.Join(fmt.Errorf("shard %s: %w", sh.id(), halt), err)
	}
	if ctx.Err() != nil || cancelled {
		m.Nak() // the worker is stopping: someone else takes it now
		return nil
	}
	if runErr != nil {
		m.NakWithDelay(2 * time.Second)
		return fmt.Errorf("shard %s: %w", sh.id(), runErr)
	}
	done := nats.NewMsg(doneSubject(spec.Key))
	done.Header.Set(hdrWorker, w.ID)
	done.Header.Set(hdrHost, w.Host)
	done.Header.Set(hdrShard, sh.id())
	done.Header.Set(hdrGen, strconv.Itoa(sh.Gen))
	done.Header.Set(hdrDelivery, strconv.FormatUint(md.NumDelivered, 10))
	done.Data = w.report(spec.Gen)
	if _, err := js.PublishMsg(ctx, done); err != nil {
		m.NakWithDelay(2 * time.Second)
		return fmt.Errorf("shard %s: done: %w", sh.id(), err)
	}
	actx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := m.DoubleAck(actx); err != nil {
		// The results are stored: a redelivery only makes duplicates.
		return fmt.Errorf("shard %s: ack: %w", sh.id(), err)
	}
	return nil
}

// report encodes the process's Report for a done message (nil without
// Worker.Report).
func (w *Worker) report(gen int) []byte {
	if w.Report == nil {
		return nil
	}
	w.procOnce.Do(func() { w.proc = randomID() })
	r := w.Report()
	r.Proc, r.N, r.Gen = w.proc, int(w.reports.Add(1)), gen
	b, _ := json.Marshal(r)
	return b
}

// randomID returns 16 random hex digits.
func randomID() string {
	var b [8]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// FetchBundle makes the bundle digest available under cacheDir/digest
// (downloading, checking and unpacking it unless an earlier call did) and
// returns that directory. Worker processes on one machine may share
// cacheDir.
func FetchBundle(ctx context.Context, nc *nats.Conn, digest, cacheDir string) (string, error) {
	if !safeName(digest) || filepath.Base(digest) != digest {
		return "", fmt.Errorf("%w: bad digest %q", errBundle, digest)
	}
	dir := filepath.Join(cacheDir, digest)
	if _, err := os.Stat(filepath.Join(dir, ".complete")); err == nil {
		return dir, nil
	}
	js, err := jetstream.New(nc)
	if err != nil {
		return "", err
	}
	_, bundles, _, err := buckets(ctx, js, 0)
	if err != nil {
		return "", err
	}
	obj, err := bundles.Get(ctx, digest)
	if err != nil {
		return "", fmt.Errorf("pipeline bundle %s: %w", digest, err)
	}
	defer obj.Close()
	if err := os.MkdirAll(cacheDir, 0o755); err != nil {
		return "", err
	}
	tmp, err := os.MkdirTemp(cacheDir, digest+".tmp-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	if _, err := UnpackBundle(obj, tmp, digest); err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(tmp, ".complete"), nil, 0o644); err != nil {
		return "", err
	}
	if err := os.Rename(tmp, dir); err != nil {
		if _, serr := os.Stat(filepath.Join(dir, ".complete")); serr == nil {
			return dir, nil // another worker process unpacked it first
		}
		return "", err
	}
	return dir, nil
}

// LoadSpec reads a published run's Spec; ok is false when the run is not
// published (complete) or stopped.
func LoadSpec(ctx context.Context, nc *nats.Conn, key string) (*Spec, bool, error) {
	js, err := jetstream.New(nc)
	if err != nil {
		return nil, false, err
	}
	kv, _, _, err := buckets(ctx, js, 0)
	if err != nil {
		return nil, false, err
	}
	e, err := kv.Get(ctx, key)
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	var st runState
	if err := json.Unmarshal(e.Value(), &st); err != nil {
		return nil, false, err
	}
	return &st.Spec, !st.Stopped, nil
}

func sleepCtx(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

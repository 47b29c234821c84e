package cluster

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/evalflow/evalflow/item"
)

// bigRunner's records carry an incompressible error message of size
// bytes (s2 cannot shrink random hex much), keyed by item.
type bigRunner struct {
	size int
	mu   sync.Mutex
	msgs map[int]string
}

func (r *bigRunner) msg(q int) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	if m, ok := r.msgs[q]; ok {
		return m
	}
	b := make([]byte, r.size/2)
	rand.Read(b)
	m := fmt.Sprintf("item %d: %s", q, hex.EncodeToString(b))
	r.msgs[q] = m
	return m
}

func (r *bigRunner) RunShard(ctx context.Context, cell int, seqs []int, emit func(*item.Record) error) error {
	for _, q := range seqs {
		if err := emit(&item.Record{Seq: q, Cell: cell, Item: item.Item{ID: fmt.Sprint(q)}, Status: "error", Error: r.msg(q)}); err != nil {
			return err
		}
	}
	return nil
}

func (r *bigRunner) ErrorRecords(context.Context, int, []int, string) ([]*item.Record, error) {
	return nil, fmt.Errorf("not used")
}

// TestLargeResults: on a server whose messages are at most 64 KiB, a
// worker's records of 100 KiB travel through the results object store;
// the coordinator delivers them whole and in order, and deletes the
// objects when the run is complete.
func TestLargeResults(t *testing.T) {
	port := startServer(t, &server.Options{MaxPayload: 64 << 10})
	url := fmt.Sprintf("nats://127.0.0.1:%d", port)
	coordNC, err := Connect(ConnOptions{URL: url})
	if err != nil {
		t.Fatal(err)
	}
	defer coordNC.Close()
	workerNC, err := Connect(ConnOptions{URL: url})
	if err != nil {
		t.Fatal(err)
	}
	defer workerNC.Close()
	const n = 6
	spec := &Spec{Key: "rlarge", RunID: "large", Cells: []SpecCell{{Index: 0, Offset: 0, Total: n}}, ShardSize: 2, AckWaitMS: 10000}
	runner := &bigRunner{size: 100 << 10, msgs: map[int]string{}}
	var got []*item.Record
	co := &Coordinator{NC: coordNC, Spec: spec, Kept: func(int) bool { return false },
		Deliver: func(rec *item.Record) error { got = append(got, rec); return nil },
		Failed: func(int, []int, string) ([]*item.Record, error) {
			return nil, fmt.Errorf("no shard should die")
		},
		Log: t.Logf, Poll: 200 * time.Millisecond}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	wctx, stopWorker := context.WithCancel(ctx)
	w := &Worker{NC: workerNC, ID: "w1", Host: "h", Slots: 1, Log: t.Logf}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		// As a worker does: the run as published (by Run), then its shards.
		for wctx.Err() == nil {
			if ws, live, err := LoadSpec(wctx, workerNC, spec.Key); err == nil && live {
				w.Serve(wctx, ws, runner)
			}
			sleepCtx(wctx, 100*time.Millisecond)
		}
	}()
	stats, err := co.Run(ctx)
	stopWorker()
	wg.Wait()
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != n {
		t.Fatalf("%d records delivered, want %d", len(got), n)
	}
	for i, rec := range got {
		if rec.Seq != i || rec.Error != runner.msg(i) {
			t.Errorf("record %d: seq %d, error of %d bytes (want %d, equal to the worker's)", i, rec.Seq, len(rec.Error), len(runner.msg(i)))
		}
	}
	if len(stats) != 1 || stats[0].Shards != n/2 {
		t.Errorf("workers %+v, want w1 with %d shards", stats, n/2)
	}
	js, _ := jetstream.New(coordNC)
	objs, err := js.ObjectStore(ctx, ResultsBucket)
	if err != nil {
		t.Fatal(err)
	}
	list, err := objs.List(ctx)
	if err != nil && err != jetstream.ErrNoObjectsFound {
		t.Fatal(err)
	}
	for _, o := range list {
		if strings.HasPrefix(o.Name, spec.Key+"/") {
			t.Errorf("result object %s left after the run", o.Name)
		}
	}
}

// Package cluster spreads one evalflow run over worker processes through
// NATS JetStream (nats.go's jetstream package; NATS server 2.9 — Debian 12's
// — and current releases). A local run and a distributed one share every
// line above the item: the coordinator plans exactly as a local run does
// and writes the same run directory through the same rundir writer; the
// workers run the same plans' per-item stages. Only where items are
// computed differs.
//
// # What a shard is
//
// A shard is one sweep cell × a list of that cell's item sequence numbers
// (at most Spec.ShardSize, consecutive except where a resumed run already
// holds an item). Item sequence numbers are the local run's: items after
// -limit/-sample, in dataset order, per cell; the run directory's global
// seq is the cell's offset plus the local one (Spec.Cells).
//
// # Names (one NATS account; KEY is the run's key, Spec.Key)
//
//	KV bucket   evalflow_runs            KEY → Spec (JSON): the runs workers serve
//	object      evalflow_bundles         SHA256 → the pipeline bundle (bundle.go)
//	stream      EVALFLOW_SHARDS_KEY      work queue, subject evalflow.KEY.shard;
//	                                     durable pull consumer "workers"
//	stream      EVALFLOW_RESULTS_KEY     limits retention, subjects
//	                                     evalflow.KEY.result (one message per
//	                                     finished item) and evalflow.KEY.done
//	                                     (one per finished shard: who ran it)
//	object      evalflow_results         KEY/CELL/SEQ → a result too large for
//	                                     one message (the message points to it)
//	KV bucket   evalflow_limits          KEY.ep.ID, KEY.budget → the run's
//	                                     shared limits (limits.go)
//
// The run's streams are created with Spec.Replicas copies (automatic: 3 on
// a cluster of three servers or more, else 1); the shared buckets and
// object stores with the first run's, scaled up when a run asks for more.
//
// A worker watches evalflow_runs: for each run it fetches the bundle
// (checked against its SHA-256 and every file's), unpacks it under its own
// directory, and serves the run in a child process whose working directory
// mirrors the coordinator's (so relative paths and fromcwd() resolve as
// they did there; absolute paths in -var values are mapped into the
// bundle). It pulls shards one at a time per slot (-concurrency slots),
// runs them, publishes each finished item (awaiting the server's ack, at
// most publishTimeout: an ack lost with a server must not be waited for
// while the shard's lease is extended), publishes the shard's done message
// and only then acks the shard. While a shard runs it sends ack-progress
// every AckWait/3, so a healthy worker's shard is never redelivered (NATS
// 2.9 has no per-message TTL). When the run's key is deleted the worker
// stops serving it.
//
// A done message's headers name the worker (Evalflow-Worker, -Host), the
// shard (Evalflow-Shard, GEN.CELL.FIRST-LAST) and its delivery
// (Evalflow-Delivery: more than 1 when an earlier holder died or gave it
// back); its body is the worker process's Report so far (its stages'
// counts and model calls), from which the coordinator fills the manifest's
// stages and model_calls (Totals). A done message with Evalflow-Stop
// instead says that a shard stopped the whole run (StopError: a model's
// max_cost reached); the coordinator's Run returns it.
//
// # Result format
//
// A result message's body is the finished item.Record, JSON through
// explicit wire structs (wire.go: result tables and the item's fields in
// table's exact binary codec, floats by their bits where JSON cannot hold
// them), s2-compressed. Headers: Evalflow-Gen, Evalflow-Cell, Evalflow-Seq,
// Evalflow-Worker, and Nats-Msg-Id GEN.CELL.SEQ (the server drops a
// republished duplicate within its window).
//
// # Exactly-once output
//
// A shard is acked only after all its items are stored in the results
// stream, so a worker killed mid-shard loses nothing the coordinator has
// seen: the shard's lease ends after AckWait and JetStream redelivers it.
// Items published twice (a redelivered shard whose first holder got part
// way) are dropped by the coordinator by (cell, seq). The coordinator
// reorders each cell's records into seq order and hands them to the run
// directory exactly as a local run's collector does, so the files are
// equal to a local run's. A shard delivered MaxDeliver times without an
// ack (its workers keep dying) is dead: the coordinator sees it when the
// consumer has nothing pending or in flight while the shard stays in the
// stream, records its items as `error` naming the shard, and deletes it.
// A worker whose shard fails with an error (not a crash) on its last
// delivery publishes the items as errors with that message itself.
//
// # Resume
//
// The results stream and the run directory's parts are the state. The
// coordinator's key is derived from the run directory and run id, so the
// same command after a kill -9 finds its streams: it bumps Spec.Gen, reads
// the results stream from the start (finished items of any generation are
// used; errored or cancelled ones of an earlier generation are run again,
// as a local resume does), purges the shard queue and publishes shards for
// what is still missing. Shards of the dead coordinator that a worker is
// still running only produce duplicates, which are dropped. When the run
// is complete the coordinator deletes its key, streams and results
// objects.
package cluster

package cluster

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Bucket and object store names shared by every run of a NATS account.
const (
	RunsBucket    = "evalflow_runs"
	BundleBucket  = "evalflow_bundles"
	ResultsBucket = "evalflow_results"
	// LimitsBucket holds the runs' shared limits (limits.go): one key per
	// model endpoint of a run and one for its cost budget.
	LimitsBucket = "evalflow_limits"
	// WorkersConsumer is the durable pull consumer every worker of a run
	// shares on its shard stream.
	WorkersConsumer = "workers"
)

// Message headers.
const (
	hdrGen    = "Evalflow-Gen"
	hdrCell   = "Evalflow-Cell"
	hdrSeq    = "Evalflow-Seq"
	hdrStatus = "Evalflow-Status"
	hdrWorker = "Evalflow-Worker"
	hdrHost   = "Evalflow-Host"
	hdrShard  = "Evalflow-Shard"
	hdrObject = "Evalflow-Object"
	// hdrDelivery is the delivery of the shard a done message ends (1: the
	// first; more: an earlier holder died or gave it back).
	hdrDelivery = "Evalflow-Delivery"
	// hdrStop, on a done message, stops the run (StopError's reason).
	hdrStop = "Evalflow-Stop"
)

// Defaults for Spec.
const (
	DefaultAckWait    = 30 * time.Second
	DefaultMaxDeliver = 5
	// publishTimeout bounds the wait for the server's acknowledgement of
	// an asynchronous publish: one lost with a server (a node killed, a
	// restart) would otherwise be waited for forever — and a worker waiting
	// on it keeps extending its shard's lease.
	publishTimeout = 10 * time.Second
	// DefaultLeaseTTL is how long a worker's share of the run's shared
	// limits outlives its last renewal (a dead worker's slots come back
	// after it).
	DefaultLeaseTTL = 10 * time.Second
)

// Spec is a published run: what a worker needs to rebuild the run's plans
// exactly as the coordinator built them. It is the value of the run's key
// in RunsBucket. Provider API keys are not in it: a worker reads its own
// from its environment (the pipeline's env() calls run on the worker).
type Spec struct {
	Key   string `json:"key"`
	RunID string `json:"run_id"`
	// Gen counts the coordinator processes of this run (1 for the first);
	// shards and results carry it (see the package doc, Resume).
	Gen int `json:"gen"`
	// Bundle is the pipeline bundle's digest, its object name in
	// BundleBucket.
	Bundle string `json:"bundle"`
	// Cwd is the coordinator's working directory, mirrored on the worker;
	// Pipeline is the pipeline path as given (relative to Cwd or absolute).
	Cwd      string   `json:"cwd"`
	Pipeline string   `json:"pipeline"`
	Vars     []string `json:"vars,omitempty"`
	VarFiles []string `json:"var_files,omitempty"`
	Sweeps   []string `json:"sweeps,omitempty"`
	// Env holds the coordinator's EVALFLOW_VAR_* variables (their values
	// are recorded in manifest.json anyway); nothing else of its
	// environment travels.
	Env         []string `json:"env,omitempty"`
	Limit       int      `json:"limit,omitempty"`
	Sample      int      `json:"sample,omitempty"`
	Seed        uint64   `json:"seed,omitempty"`
	Concurrency int      `json:"concurrency,omitempty"`
	NoCache     bool     `json:"no_cache,omitempty"`
	Refresh     []string `json:"refresh,omitempty"`
	CISeed      uint64   `json:"ci_seed,omitempty"`
	// Fingerprint is the pipeline's SHA-256 (dsl.Pipeline.Hash): a worker
	// that loads something else refuses the run.
	PipelineHash string     `json:"pipeline_sha256"`
	Cells        []SpecCell `json:"cells"`
	ShardSize    int        `json:"shard_size"`
	AckWaitMS    int64      `json:"ack_wait_ms"`
	MaxDeliver   int        `json:"max_deliver"`
	// Replicas is how many servers hold each of the run's streams: 0 at
	// Coordinator.Run means automatic (3 on a cluster of three servers or
	// more, else 1); Run sets the number it used.
	Replicas int `json:"replicas,omitempty"`
	// LeaseTTLMS is the shared limits' lease time (0: DefaultLeaseTTL).
	LeaseTTLMS int64 `json:"lease_ttl_ms,omitempty"`
	// Spent is the dollars earlier processes of the run spent (a resumed
	// run's manifest): a budget ledger the run creates starts from it,
	// so max_cost holds across resumes as it does locally.
	Spent float64 `json:"spent,omitempty"`
}

// SpecCell is one cell of a run: its items take the run directory's seq
// Offset..Offset+Total-1.
type SpecCell struct {
	Index  int    `json:"index"`
	ID     string `json:"id,omitempty"`
	Offset int    `json:"offset"`
	Total  int    `json:"total"`
}

// AckWait is how long a shard's lease lasts without an ack or a heartbeat.
func (s *Spec) AckWait() time.Duration {
	if s.AckWaitMS <= 0 {
		return DefaultAckWait
	}
	return time.Duration(s.AckWaitMS) * time.Millisecond
}

// LeaseTTL is how long a worker's lease on the shared limits lasts
// without a renewal.
func (s *Spec) LeaseTTL() time.Duration {
	if s.LeaseTTLMS <= 0 {
		return DefaultLeaseTTL
	}
	return time.Duration(s.LeaseTTLMS) * time.Millisecond
}

// RunKey derives a run's key from its directory (absolute) and run id, so
// the same command finds its streams again after a crash.
func RunKey(absDir, runID string) string {
	h := sha256.Sum256([]byte(absDir + "\x00" + runID))
	return "r" + hex.EncodeToString(h[:8])
}

// ShardStream, ResultStream and the subjects name a run's streams.
func ShardStream(key string) string   { return "EVALFLOW_SHARDS_" + key }
func ResultStream(key string) string  { return "EVALFLOW_RESULTS_" + key }
func shardSubject(key string) string  { return "evalflow." + key + ".shard" }
func resultSubject(key string) string { return "evalflow." + key + ".result" }
func doneSubject(key string) string   { return "evalflow." + key + ".done" }

// Shard is a shard message's body.
type Shard struct {
	Gen  int   `json:"gen"`
	Cell int   `json:"cell"`
	Seqs []int `json:"seqs"` // the cell's local item sequence numbers, ascending
}

func (s Shard) id() string {
	if len(s.Seqs) == 0 {
		return fmt.Sprintf("%d.%d.-", s.Gen, s.Cell)
	}
	return fmt.Sprintf("%d.%d.%d-%d", s.Gen, s.Cell, s.Seqs[0], s.Seqs[len(s.Seqs)-1])
}

// ConnOptions say how to reach and authenticate to the NATS server.
// Credentials may be given at most one way besides TLS client
// certificates: a creds file (JWT + nkey seed), an nkey seed file,
// user/password (also in the URL: nats://user:pass@host:4222) or a token.
type ConnOptions struct {
	URL      string
	Name     string // the connection's name, shown by the server's monitoring
	Creds    string // creds file
	NKey     string // nkey seed file
	User     string
	Password string
	Token    string
	TLSCA    string // CA certificate (PEM) to verify the server with
	TLSCert  string // client certificate and key (PEM), for mutual TLS
	TLSKey   string
	// Retry keeps trying to connect when the server is not up yet (a
	// worker started before its server).
	Retry bool
	// Log receives the connection's troubles: a failed connection attempt
	// (an unknown user, a certificate refused — each distinct error once),
	// a lost connection, a reconnection. Nil: none.
	Log func(format string, args ...any)
}

// Connect opens a connection that reconnects forever: a server restart
// stalls the run, it does not end it.
func Connect(o ConnOptions) (*nats.Conn, error) {
	opts := []nats.Option{nats.Name(o.Name), nats.MaxReconnects(-1), nats.ReconnectWait(250 * time.Millisecond)}
	if o.Retry {
		opts = append(opts, nats.RetryOnFailedConnect(true))
	}
	if o.Log != nil {
		var mu sync.Mutex
		last := ""
		once := func(what string, err error) {
			mu.Lock()
			defer mu.Unlock()
			if msg := what + err.Error(); msg != last {
				last = msg
				o.Log("%s%v", what, err)
			}
		}
		opts = append(opts,
			nats.ReconnectErrHandler(func(_ *nats.Conn, err error) { once("connecting to "+RedactURL(o.URL)+": ", err) }),
			nats.DisconnectErrHandler(func(_ *nats.Conn, err error) {
				if err != nil {
					once("disconnected from the NATS server: ", err)
				}
			}),
			nats.ReconnectHandler(func(nc *nats.Conn) {
				mu.Lock()
				last = ""
				mu.Unlock()
				o.Log("reconnected to %s", redactURL(nc.ConnectedUrlRedacted()))
			}),
			nats.ConnectHandler(func(nc *nats.Conn) {
				mu.Lock()
				defer mu.Unlock()
				if last != "" {
					last = ""
					o.Log("connected to %s", redactURL(nc.ConnectedUrlRedacted()))
				}
			}))
	}
	switch {
	case o.Creds != "":
		opts = append(opts, nats.UserCredentials(o.Creds))
	case o.NKey != "":
		opt, err := nats.NkeyOptionFromSeed(o.NKey)
		if err != nil {
			return nil, fmt.Errorf("nkey %s: %w", o.NKey, err)
		}
		opts = append(opts, opt)
	case o.User != "":
		opts = append(opts, nats.UserInfo(o.User, o.Password))
	case o.Token != "":
		opts = append(opts, nats.Token(o.Token))
	}
	if o.TLSCA != "" {
		opts = append(opts, nats.RootCAs(o.TLSCA))
	}
	if o.TLSCert != "" || o.TLSKey != "" {
		opts = append(opts, nats.ClientCert(o.TLSCert, o.TLSKey))
	}
	nc, err := nats.Connect(o.URL, opts...)
	if err != nil {
		return nil, fmt.Errorf("connecting to %s: %w", RedactURL(o.URL), err)
	}
	return nc, nil
}

// RedactURL hides the user and password of a NATS URL (each of a
// comma-separated list): nats://user:pass@host:4222 → nats://…@host:4222.
// Every URL evalflow prints or stores goes through it.
func RedactURL(u string) string {
	if strings.Contains(u, ",") {
		parts := strings.Split(u, ",")
		for i, p := range parts {
			parts[i] = redactURL(p)
		}
		return strings.Join(parts, ",")
	}
	return redactURL(u)
}

func redactURL(u string) string {
	if !strings.Contains(u, "://") {
		// A bare user:pass@host:4222 (nats.go adds the scheme).
		if at := strings.LastIndexByte(u, '@'); at >= 0 && !strings.Contains(u[:at], "/") {
			return "…@" + u[at+1:]
		}
		return u
	}
	for i := 0; i+2 < len(u); i++ {
		if u[i:i+3] == "://" {
			rest := u[i+3:]
			for j := 0; j < len(rest) && rest[j] != '/'; j++ {
				if rest[j] == '@' {
					return u[:i+3] + "…@" + rest[j+1:]
				}
			}
			break
		}
	}
	return u
}

// AutoReplicas is the number of replicas automatic replication gives a
// stream on the server nc is connected to: 3 when the server is part of a
// cluster of three servers or more (those the connection knows: its URLs
// and the ones the server announced), else 1.
func AutoReplicas(nc *nats.Conn) int {
	if nc.ConnectedClusterName() == "" {
		return 1
	}
	hosts := map[string]bool{}
	for _, u := range nc.Servers() {
		if pu, err := url.Parse(u); err == nil && pu.Host != "" {
			hosts[pu.Host] = true
		}
	}
	if len(hosts) >= 3 {
		return 3
	}
	return 1
}

// buckets opens the shared key-value bucket and object stores, creating
// those missing with replicas replicas (0: AutoReplicas). An existing one
// with fewer replicas than a positive replicas asks for is scaled up
// (best effort: a server that cannot keeps it as it is).
func buckets(ctx context.Context, js jetstream.JetStream, replicas int) (jetstream.KeyValue, jetstream.ObjectStore, jetstream.ObjectStore, error) {
	kv, err := openKV(ctx, js, jetstream.KeyValueConfig{Bucket: RunsBucket, Description: "evalflow: published runs", History: 1,
		Storage: jetstream.FileStorage}, replicas)
	if err != nil {
		return nil, nil, nil, err
	}
	bundles, err := openObjects(ctx, js, jetstream.ObjectStoreConfig{Bucket: BundleBucket, Description: "evalflow: pipeline bundles",
		Storage: jetstream.FileStorage}, replicas)
	if err != nil {
		return nil, nil, nil, err
	}
	results, err := openObjects(ctx, js, jetstream.ObjectStoreConfig{Bucket: ResultsBucket, Description: "evalflow: results too large for a message",
		Storage: jetstream.FileStorage}, replicas)
	if err != nil {
		return nil, nil, nil, err
	}
	return kv, bundles, results, nil
}

// limitsBucket opens (creating when missing) LimitsBucket. Its keys are
// rewritten at every lease renewal; one nobody wrote for a week (a run
// abandoned for good) ages out.
func limitsBucket(ctx context.Context, js jetstream.JetStream, replicas int) (jetstream.KeyValue, error) {
	return openKV(ctx, js, jetstream.KeyValueConfig{Bucket: LimitsBucket, Description: "evalflow: shared limits of runs (leases)",
		History: 1, TTL: 7 * 24 * time.Hour, Storage: jetstream.FileStorage}, replicas)
}

func jsReplicas(js jetstream.JetStream, replicas int) int {
	if replicas > 0 {
		return replicas
	}
	return AutoReplicas(js.Conn())
}

// NoJetStreamError: the server answers, but not JetStream's API (it runs
// without -js, or the account has no JetStream). It does not fix itself.
type NoJetStreamError struct{ URL string }

func (e *NoJetStreamError) Error() string {
	return "the NATS server at " + e.URL + " has JetStream disabled (start nats-server with -js, or enable jetstream in its configuration)"
}

// jsErr turns the errors of a server without JetStream into a
// *NoJetStreamError; others are returned as they are.
func jsErr(js jetstream.JetStream, err error) error {
	if err == nil {
		return nil
	}
	var nj *NoJetStreamError
	if errors.As(err, &nj) {
		return err
	}
	if errors.Is(err, nats.ErrNoResponders) || errors.Is(err, jetstream.ErrJetStreamNotEnabled) ||
		errors.Is(err, jetstream.ErrJetStreamNotEnabledForAccount) || errors.Is(err, nats.ErrJetStreamNotEnabled) {
		return &NoJetStreamError{URL: RedactURL(js.Conn().ConnectedUrlRedacted())}
	}
	return err
}

// CheckJetStream returns a *NoJetStreamError when the server nc is
// connected to does not run JetStream, nil when it does, another error
// when it cannot tell.
func CheckJetStream(ctx context.Context, nc *nats.Conn) error {
	js, err := jetstream.New(nc)
	if err != nil {
		return err
	}
	_, err = js.AccountInfo(ctx)
	return jsErr(js, err)
}

func openKV(ctx context.Context, js jetstream.JetStream, cfg jetstream.KeyValueConfig, replicas int) (kv jetstream.KeyValue, err error) {
	err = whileSettling(ctx, func() (err error) {
		kv, err = openKVOnce(ctx, js, cfg, replicas)
		return err
	})
	return kv, err
}

func openKVOnce(ctx context.Context, js jetstream.JetStream, cfg jetstream.KeyValueConfig, replicas int) (jetstream.KeyValue, error) {
	kv, err := js.KeyValue(ctx, cfg.Bucket)
	if errors.Is(err, jetstream.ErrBucketNotFound) {
		cfg.Replicas = jsReplicas(js, replicas)
		kv, err = js.CreateKeyValue(ctx, cfg)
		if errors.Is(err, jetstream.ErrBucketExists) {
			kv, err = js.KeyValue(ctx, cfg.Bucket)
		}
	} else if err == nil && replicas > 1 {
		if st, serr := kv.Status(ctx); serr == nil {
			if bs, ok := st.(*jetstream.KeyValueBucketStatus); ok && bs.StreamInfo().Config.Replicas < replicas {
				cfg.Replicas = replicas
				if up, uerr := js.UpdateKeyValue(ctx, cfg); uerr == nil {
					kv = up
				}
			}
		}
	}
	if err != nil {
		if err = jsErr(js, err); errors.As(err, new(*NoJetStreamError)) {
			return nil, err
		}
		return nil, fmt.Errorf("key-value bucket %s: %w", cfg.Bucket, err)
	}
	return kv, nil
}

func openObjects(ctx context.Context, js jetstream.JetStream, cfg jetstream.ObjectStoreConfig, replicas int) (obs jetstream.ObjectStore, err error) {
	err = whileSettling(ctx, func() (err error) {
		obs, err = openObjectsOnce(ctx, js, cfg, replicas)
		return err
	})
	return obs, err
}

// settleAttempts is how many times whileSettling tries; each JetStream API
// call waits up to the client's default 5 s.
const settleAttempts = 6

// whileSettling calls open until it succeeds, fails otherwise than by a
// timeout of its own, ctx ends, or settleAttempts tries have timed out: a
// replicated stream created on a cluster that has just started can take
// longer than one API call's timeout while its servers elect its leader
// (TestClusterThreeNodes failed so once: "object store evalflow_bundles:
// context deadline exceeded", the stream's leader elected a moment
// later). Opening is idempotent: a bucket a timed-out call did create is
// found by the next.
func whileSettling(ctx context.Context, open func() error) error {
	var err error
	for range settleAttempts {
		err = open()
		if err == nil || ctx.Err() != nil ||
			!(errors.Is(err, context.DeadlineExceeded) || errors.Is(err, nats.ErrTimeout)) {
			return err
		}
	}
	return err
}

func openObjectsOnce(ctx context.Context, js jetstream.JetStream, cfg jetstream.ObjectStoreConfig, replicas int) (jetstream.ObjectStore, error) {
	obs, err := js.ObjectStore(ctx, cfg.Bucket)
	if errors.Is(err, jetstream.ErrBucketNotFound) {
		cfg.Replicas = jsReplicas(js, replicas)
		obs, err = js.CreateObjectStore(ctx, cfg)
		if errors.Is(err, jetstream.ErrBucketExists) {
			obs, err = js.ObjectStore(ctx, cfg.Bucket)
		}
	} else if err == nil && replicas > 1 {
		if st, serr := obs.Status(ctx); serr == nil && st.Replicas() < replicas {
			cfg.Replicas = replicas
			if up, uerr := js.UpdateObjectStore(ctx, cfg); uerr == nil {
				obs = up
			}
		}
	}
	if err != nil {
		if err = jsErr(js, err); errors.As(err, new(*NoJetStreamError)) {
			return nil, err
		}
		return nil, fmt.Errorf("object store %s: %w", cfg.Bucket, err)
	}
	return obs, nil
}

// hostname is this machine's name, for workers' identity.
func hostname() string {
	h, err := os.Hostname()
	if err != nil {
		return "unknown"
	}
	return h
}

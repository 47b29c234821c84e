package sparql

import (
	"bytes"
	"context"
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/evalflow/evalflow/engine"
	"github.com/evalflow/evalflow/item"
)

//go:embed oxigraph/server.mjs
var serverScript []byte

// oxigraph supervises embedded Oxigraph servers: per dataset (list of files)
// a pool of at most maxOpen processes, each answering one query at a time.
// mu guards closed, datasets, clock and live; a server is in live from start
// until its process has been reaped.
type oxigraph struct {
	dir          string
	node         string
	startTimeout time.Duration
	maxOpen      int
	maxDBs       int
	notice       io.Writer // where a first-use install says so (os.Stderr)
	installDir   string    // where to install; "" is CacheInstallDir()
	noCheckout   bool      // tests: do not look in the checkout

	dirMu    sync.Mutex // guards resolved
	resolved string

	mu       sync.Mutex
	closed   bool
	datasets map[string]*dataset
	clock    int64
	live     map[*server]struct{}
}

// dataset is one set of files and its servers. sem holds a token per server
// in use or starting; idle servers wait in idle.
type dataset struct {
	key   string
	files []string
	sem   chan struct{}
	idle  []*server
	refs  int
	used  int64
}

// server is one running node process.
type server struct {
	ds     *dataset
	cmd    *exec.Cmd
	url    string
	done   chan struct{} // closed once the process is reaped
	stderr *tailBuffer
	stdin  interface{ Close() error }
}

func (s *server) alive() bool {
	select {
	case <-s.done:
		return false
	default:
		return true
	}
}

// kill ends the server's whole process group; the reaper notices.
func (s *server) kill() {
	_ = s.stdin.Close()
	killGroup(s.cmd)
}

var errClosed = &engine.Error{Class: item.ClassExecution, Msg: "sparql: executor is closed"}

// acquire returns a server for files, starting one if none is idle. The
// caller must release it.
func (o *oxigraph) acquire(ctx context.Context, files []string) (*server, error) {
	key := strings.Join(files, "\x00")
	o.mu.Lock()
	if o.closed {
		o.mu.Unlock()
		return nil, errClosed
	}
	ds, ok := o.datasets[key]
	if !ok {
		ds = &dataset{key: key, files: files, sem: make(chan struct{}, o.maxOpen)}
		o.datasets[key] = ds
	}
	ds.refs++
	o.clock++
	ds.used = o.clock
	o.evictLocked()
	o.mu.Unlock()

	select {
	case ds.sem <- struct{}{}:
	case <-ctx.Done():
		o.mu.Lock()
		ds.refs--
		o.mu.Unlock()
		return nil, ctx.Err()
	}
	o.mu.Lock()
	for len(ds.idle) > 0 {
		s := ds.idle[len(ds.idle)-1]
		ds.idle = ds.idle[:len(ds.idle)-1]
		if s.alive() {
			o.mu.Unlock()
			return s, nil
		}
	}
	o.mu.Unlock()
	s, err := o.start(ctx, ds)
	if err != nil {
		o.mu.Lock()
		ds.refs--
		o.mu.Unlock()
		<-ds.sem
		return nil, err
	}
	return s, nil
}

// release returns s to its dataset's idle list when healthy, and kills it
// otherwise (a timed-out or cancelled query may still be running in it).
func (o *oxigraph) release(s *server, healthy bool) {
	o.mu.Lock()
	ds := s.ds
	if healthy && !o.closed && s.alive() {
		ds.idle = append(ds.idle, s)
	} else {
		s.kill()
	}
	ds.refs--
	o.evictLocked()
	o.mu.Unlock()
	<-ds.sem
}

// evictLocked stops the idle servers of the least recently used datasets
// nobody is using until at most maxDBs datasets remain.
func (o *oxigraph) evictLocked() {
	for len(o.datasets) > o.maxDBs {
		var lru *dataset
		for _, ds := range o.datasets {
			if ds.refs == 0 && (lru == nil || ds.used < lru.used) {
				lru = ds
			}
		}
		if lru == nil {
			return
		}
		for _, s := range lru.idle {
			s.kill()
		}
		lru.idle = nil
		delete(o.datasets, lru.key)
	}
}

// close kills every server and waits until each process is reaped.
func (o *oxigraph) close() error {
	o.mu.Lock()
	o.closed = true
	var all []*server
	for s := range o.live {
		all = append(all, s)
	}
	for _, ds := range o.datasets {
		ds.idle = nil
	}
	o.mu.Unlock()
	for _, s := range all {
		s.kill()
	}
	for _, s := range all {
		<-s.done
	}
	return nil
}

// readyLine is what server.mjs prints once it listens.
type readyLine struct {
	Ready   bool   `json:"ready"`
	Port    int    `json:"port"`
	Triples int64  `json:"triples"`
	Error   string `json:"error"`
}

// start runs a server for ds and waits for its ready line.
func (o *oxigraph) start(ctx context.Context, ds *dataset) (*server, error) {
	dir, err := o.resolveDir(ctx)
	if err != nil {
		return nil, &engine.Error{Class: item.ClassExecution, Msg: err.Error(), Err: err, Unavailable: true}
	}
	script, err := writeScript()
	if err != nil {
		return nil, &engine.Error{Class: item.ClassExecution, Msg: "sparql: " + err.Error(), Err: err, Unavailable: true}
	}
	node, err := exec.LookPath(o.node)
	if err != nil {
		return nil, &engine.Error{Class: item.ClassExecution, Msg: fmt.Sprintf("sparql: the embedded Oxigraph engine needs Node.js 18 or later (%v); install it with `%s`", err, NodeInstall), Err: err, Unavailable: true}
	}
	for _, f := range ds.files {
		if _, err := os.Stat(f); err != nil {
			return nil, &engine.Error{Class: item.ClassExecution, Msg: "sparql: RDF file not found: " + f, Err: err, Unavailable: true}
		}
	}
	args := append([]string{script, "--host", "127.0.0.1", "--port", "0"}, ds.files...)
	cmd := exec.Command(node, args...)
	cmd.Env = append(os.Environ(), "EVALFLOW_OXIGRAPH_MODULE="+filepath.Join(dir, "node_modules", "oxigraph"))
	setProcAttr(cmd)
	ready := make(chan string, 1)
	cmd.Stdout = &firstLine{ch: ready}
	s := &server{ds: ds, cmd: cmd, done: make(chan struct{}), stderr: &tailBuffer{max: 8 << 10}}
	cmd.Stderr = s.stderr
	cmd.WaitDelay = 2 * time.Second
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, &engine.Error{Class: item.ClassExecution, Msg: "sparql: " + err.Error(), Err: err}
	}
	s.stdin = stdin

	o.mu.Lock()
	if o.closed {
		o.mu.Unlock()
		return nil, errClosed
	}
	if err := cmd.Start(); err != nil {
		o.mu.Unlock()
		return nil, &engine.Error{Class: item.ClassExecution, Msg: "sparql: starting Oxigraph: " + err.Error(), Err: err}
	}
	if o.live == nil {
		o.live = map[*server]struct{}{}
	}
	o.live[s] = struct{}{}
	o.mu.Unlock()
	go func() {
		_ = cmd.Wait()
		o.mu.Lock()
		delete(o.live, s)
		o.mu.Unlock()
		close(s.done)
	}()

	fail := func(msg string) (*server, error) {
		s.kill()
		<-s.done
		if tail := strings.TrimSpace(s.stderr.String()); tail != "" {
			msg += "; stderr: " + tail
		}
		return nil, &engine.Error{Class: item.ClassExecution, Msg: "sparql: Oxigraph " + msg}
	}
	timer := time.NewTimer(o.startTimeout)
	defer timer.Stop()
	select {
	case line := <-ready:
		var r readyLine
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			return fail(fmt.Sprintf("printed %q instead of its ready line", line))
		}
		if !r.Ready || r.Port == 0 {
			return fail("could not load its data: " + r.Error)
		}
		s.url = fmt.Sprintf("http://127.0.0.1:%d/query", r.Port)
		return s, nil
	case <-s.done:
		return fail(fmt.Sprintf("exited before it was ready (%v)", s.cmd.ProcessState))
	case <-timer.C:
		return fail(fmt.Sprintf("was not ready after %s (start_timeout)", o.startTimeout))
	case <-ctx.Done():
		s.kill()
		<-s.done
		return nil, ctx.Err()
	}
}

// writeScript writes the embedded server script into the user cache
// directory (once per content hash) and returns its path.
func writeScript() (string, error) {
	scriptOnce.Lock()
	defer scriptOnce.Unlock()
	if scriptOnce.path != "" {
		if _, err := os.Stat(scriptOnce.path); err == nil {
			return scriptOnce.path, nil
		}
	}
	sum := sha256.Sum256(serverScript)
	base, err := os.UserCacheDir()
	if err != nil {
		base = os.TempDir()
	}
	dir := filepath.Join(base, "evalflow", "oxigraph")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		dir = filepath.Join(os.TempDir(), "evalflow-oxigraph")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return "", err
		}
	}
	path := filepath.Join(dir, "server-"+hex.EncodeToString(sum[:6])+".mjs")
	if b, err := os.ReadFile(path); err != nil || !bytes.Equal(b, serverScript) {
		tmp, err := os.CreateTemp(dir, "server-*.tmp")
		if err != nil {
			return "", err
		}
		_, werr := tmp.Write(serverScript)
		cerr := tmp.Close()
		if err := errors.Join(werr, cerr); err != nil {
			os.Remove(tmp.Name())
			return "", err
		}
		if err := os.Rename(tmp.Name(), path); err != nil {
			os.Remove(tmp.Name())
			return "", err
		}
	}
	scriptOnce.path = path
	return path, nil
}

// sourceDir is the directory of this source file when it still exists
// (tests, go run in a checkout).
func sourceDir() string {
	_, file, _, ok := runtime.Caller(0)
	if !ok || !filepath.IsAbs(file) {
		return ""
	}
	d := filepath.Dir(file)
	if _, err := os.Stat(d); err != nil {
		return ""
	}
	return d
}

// firstLine sends the first line written to it on ch and discards the rest.
type firstLine struct {
	mu   sync.Mutex
	buf  []byte
	sent bool
	ch   chan<- string
}

func (w *firstLine) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.sent {
		return len(p), nil
	}
	w.buf = append(w.buf, p...)
	if i := bytes.IndexByte(w.buf, '\n'); i >= 0 {
		w.ch <- string(w.buf[:i])
		w.sent, w.buf = true, nil
	} else if len(w.buf) > 64<<10 {
		w.ch <- string(w.buf)
		w.sent, w.buf = true, nil
	}
	return len(p), nil
}

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	mu  sync.Mutex
	max int
	b   []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, p...)
	if len(t.b) > t.max {
		t.b = append([]byte(nil), t.b[len(t.b)-t.max:]...)
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.b)
}

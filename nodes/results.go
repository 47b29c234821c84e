package nodes

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"regexp"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/evalflow/evalflow/engine"
	"github.com/evalflow/evalflow/internal/jsonquote"
	"github.com/evalflow/evalflow/item"
	"github.com/evalflow/evalflow/store"
	"github.com/evalflow/evalflow/table"
)

// Results is the stage cache of engine work: the result (or the
// deterministic error) of every query a stage runs — gold, predictions,
// refine's re-runs, a profile's rewritten queries, validate's syntax check
// — stored under a key hashing all it depends on:
//
//   - the query text, the row cap and the operation (execute or prepare);
//   - the engine's kind and options, credentials removed (a DSN's password,
//     any option named like a secret), and read_only;
//   - the database: for a file (SQLite, DuckDB, a graph or dataframe file)
//     the SHA-256 of its content; for a directory its tree fingerprint
//     (paths, sizes, modification times); for a server engine its name or
//     endpoint only — the cache cannot see a server's data change, so that
//     key is weaker (docs/cli.md: use -refresh or -no-cache after changing
//     server data);
//   - the evalflow version, since engine code decides the result's form.
//
// Timeouts, cancellations and failures of the harness (engine down,
// database missing) are never stored: they depend on the moment. Durations
// are never served: a cached execution's time is this run's lookup time.
type Results struct {
	disk    *store.Store
	version string

	// ids memoizes dbIdentity for read-only engines for the life of the
	// Results (one evalflow invocation): path → *dbID.
	ids sync.Map

	// hot holds the encoded entries this Results read last, so a key
	// asked again (the same gold query for many items) is decoded
	// from memory instead of read from disk again. Entries are immutable
	// (a key is the hash of all its value depends on), so serving one the
	// disk has since dropped is still right.
	hot hotEntries
}

// hotEntries is a small in-memory set of encoded stage cache entries:
// at most hotMaxEntries entries of at most hotMaxValue bytes each; when
// full it starts over empty. The zero value is ready to use; safe for
// concurrent use.
type hotEntries struct {
	mu sync.RWMutex
	m  map[string][]byte
}

const (
	hotMaxEntries = 4096
	hotMaxValue   = 4 << 10
)

func (h *hotEntries) get(key string) ([]byte, bool) {
	h.mu.RLock()
	v, ok := h.m[key]
	h.mu.RUnlock()
	return v, ok
}

func (h *hotEntries) add(key string, raw []byte) {
	if len(raw) > hotMaxValue {
		return
	}
	h.mu.Lock()
	if h.m == nil || len(h.m) >= hotMaxEntries {
		h.m = make(map[string][]byte, 64)
	}
	h.m[key] = raw
	h.mu.Unlock()
}

func (h *hotEntries) remove(key string) {
	h.mu.Lock()
	delete(h.m, key)
	h.mu.Unlock()
}

// dbID is one memoized database identity, computed once (once) however
// many queries ask for it at the same time.
type dbID struct {
	once   sync.Once
	id     string
	stable bool
}

// NewResults returns a stage cache over disk, keyed for this evalflow
// version. It makes disk write in batches (store.Store.Buffer): an entry
// lost to a crash is only computed again, and one write(2) per batch
// instead of one per query is a tenth of a cold run's system time. The
// caller flushes disk before it exits (Close, Flush or GC; evalflow run's
// end-of-run GC does).
func NewResults(disk *store.Store, version string) *Results {
	disk.Buffer()
	return &Results{disk: disk, version: version}
}

// Disk is the store holding the results.
func (r *Results) Disk() *store.Store { return r.disk }

// resultEntry is what a key stores: the result, or the error class and
// message of a deterministic failure, and the key's material for explain.
// Entries are written in encodeEntry's binary layout; the JSON form of
// this struct is the first layout, which get still reads.
type resultEntry struct {
	Material json.RawMessage `json:"material"`
	Table    []byte          `json:"table,omitempty"`
	Class    string          `json:"class,omitempty"`
	Msg      string          `json:"msg,omitempty"`
	Created  time.Time       `json:"created"`
}

// material is what a result depends on.
type material struct {
	V        int            `json:"v"`
	Evalflow string         `json:"evalflow"`
	Op       string         `json:"op"`
	Kind     string         `json:"engine_kind"`
	Options  map[string]any `json:"engine_options,omitempty"`
	ReadOnly bool           `json:"read_only"`
	DB       string         `json:"db"`
	Query    string         `json:"query"`
	MaxRows  int            `json:"max_rows"`
}

// key computes the content address of op on q for engine e.
func (r *Results) key(e *Engine, op string, q engine.Query) (string, []byte) {
	return r.keyInto(nil, e, op, q)
}

// keyInto is key with the material appended to buf (which it returns, so
// a caller may reuse a buffer when it needs the material only on a miss).
func (r *Results) keyInto(buf []byte, e *Engine, op string, q engine.Query) (string, []byte) {
	m := material{V: 1, Evalflow: r.version, Op: op, Kind: e.Block.Kind, Options: scrub(e.Block.Options),
		ReadOnly: e.Block.ReadOnly, DB: r.dbIdentity(q.DB, e.Block.ReadOnly), Query: q.Text, MaxRows: q.MaxRows}
	if m.MaxRows <= 0 {
		m.MaxRows = e.Block.MaxRows
	}
	if buf == nil {
		buf = make([]byte, 0, 160+len(m.Evalflow)+len(m.DB)+len(m.Query))
	}
	b := m.appendJSON(buf[:0])
	sum := sha256.Sum256(b)
	var k [1 + 2*sha256.Size]byte
	k[0] = 'q'
	hex.Encode(k[1:], sum[:])
	return string(k[:]), b
}

// appendJSON appends json.Marshal(m) to b, without reflection for the
// common strings (TestMaterialJSON holds it to json.Marshal's bytes: the
// keys of existing caches depend on them).
func (m *material) appendJSON(b []byte) []byte {
	b = append(b, `{"v":`...)
	b = strconv.AppendInt(b, int64(m.V), 10)
	b = append(b, `,"evalflow":`...)
	b = jsonquote.Append(b, m.Evalflow, true)
	b = append(b, `,"op":`...)
	b = jsonquote.Append(b, m.Op, true)
	b = append(b, `,"engine_kind":`...)
	b = jsonquote.Append(b, m.Kind, true)
	if len(m.Options) > 0 {
		o, err := json.Marshal(m.Options)
		if err != nil {
			o, _ = json.Marshal(m) // as before: the whole material, errors and all
			return append(b[:0], o...)
		}
		b = append(b, `,"engine_options":`...)
		b = append(b, o...)
	}
	b = append(b, `,"read_only":`...)
	b = strconv.AppendBool(b, m.ReadOnly)
	b = append(b, `,"db":`...)
	b = jsonquote.Append(b, m.DB, true)
	b = append(b, `,"query":`...)
	b = jsonquote.Append(b, m.Query, true)
	b = append(b, `,"max_rows":`...)
	b = strconv.AppendInt(b, int64(m.MaxRows), 10)
	return append(b, '}')
}

// dbIdentity names the database's content: a file's SHA-256, a
// directory's tree fingerprint, or the name a server engine was given.
//
// With memo (the engine is read_only: its queries cannot change its
// database; a writable engine of the same run on the same file is not
// supported either) a file's hash or a directory's fingerprint is computed once
// per path for the life of r — one evalflow invocation — and then served
// without a stat: changing a database file while a run reads it is not
// supported (that run keeps keying by the content it first saw; the next
// run sees the change). Concurrent first queries on one path wait for one
// computation. Only those two identities are remembered: a path that does
// not exist (yet), is not a regular file or cannot be read is looked at
// again on the next query. Without memo (read_only = false: the run's own
// queries may write the database) every query stats the file, and
// store.HashFile reads it again when it changed (size, modification or
// change time, inode).
func (r *Results) dbIdentity(db string, memo bool) string {
	if !memo {
		id, _ := r.identify(db)
		return id
	}
	v, ok := r.ids.Load(db)
	if !ok {
		v, _ = r.ids.LoadOrStore(db, &dbID{})
	}
	d := v.(*dbID)
	d.once.Do(func() { d.id, d.stable = r.identify(db) })
	if !d.stable {
		r.ids.CompareAndDelete(db, d)
	}
	return d.id
}

// identify computes db's identity; stable is false for the identities
// that may change within a run (a missing, special or unreadable path).
func (r *Results) identify(db string) (id string, stable bool) {
	st, err := os.Stat(db)
	switch {
	case err != nil:
		return "name:" + db, false
	case st.IsDir():
		return "tree:" + store.TreeFingerprint(db), true
	case !st.Mode().IsRegular():
		return "name:" + db, false
	}
	// store.HashFile reads the file again only when it changed.
	sum := store.HashFile(db)
	if sum == "" {
		return "unreadable:" + db, false
	}
	return "sha256:" + sum, true
}

// get returns a stored result or deterministic error.
func (r *Results) get(key string) (*table.Table, error, bool) {
	raw, hot := r.hot.get(key)
	if !hot {
		var ok bool
		if raw, ok = r.disk.Get(key); !ok {
			return nil, nil, false
		}
	}
	ent, tab, err := decodeEntry(raw)
	if err != nil {
		r.hot.remove(key)
		r.disk.Remove(key)
		return nil, nil, false
	}
	if ent.Class != "" {
		if !hot {
			r.hot.add(key, raw)
		}
		return nil, &engine.Error{Class: ent.Class, Msg: ent.Msg}, true
	}
	var t table.Table
	if err := t.UnmarshalBinary(tab); err != nil {
		r.hot.remove(key)
		r.disk.Remove(key)
		return nil, nil, false
	}
	if !hot {
		r.hot.add(key, raw)
	}
	return &t, nil, true
}

// put stores a result or a deterministic error (others are not stored).
func (r *Results) put(key string, mat []byte, res *table.Table, class string, err error) {
	ent := resultEntry{Material: mat, Created: time.Now().UTC()}
	if err != nil {
		if !deterministic(class, err) {
			return
		}
		ent.Class, ent.Msg = class, err.Error()
	}
	raw, eerr := encodeEntry(ent, res)
	if eerr != nil {
		return
	}
	r.disk.Put(key, raw)
}

// entryV2 starts an entry in the binary layout encodeEntry writes; an
// entry of the first layout is a JSON object (it starts with '{') and is
// still read.
const entryV2 = 2

// encodeEntry encodes an entry: entryV2, then the material, the error
// class and message (each a uvarint length and the bytes), the creation
// time (Unix nanoseconds, 8 bytes little endian), then the table's
// MarshalBinary encoding to the end (nothing for an error). One buffer,
// no JSON: a result costs its table's encoding and a copy.
func encodeEntry(ent resultEntry, res *table.Table) ([]byte, error) {
	size := 1 + 3*binary.MaxVarintLen64 + len(ent.Material) + len(ent.Class) + len(ent.Msg) + 8
	if ent.Class == "" {
		size += res.BinarySize() // one allocation, however many rows
	}
	b := make([]byte, 0, size)
	b = append(b, entryV2)
	b = binary.AppendUvarint(b, uint64(len(ent.Material)))
	b = append(b, ent.Material...)
	for _, s := range []string{ent.Class, ent.Msg} {
		b = binary.AppendUvarint(b, uint64(len(s)))
		b = append(b, s...)
	}
	b = binary.LittleEndian.AppendUint64(b, uint64(ent.Created.UnixNano()))
	if ent.Class == "" {
		var err error
		if b, err = res.AppendBinary(b); err != nil {
			return nil, err
		}
	}
	return b, nil
}

// decodeEntry decodes either layout of an entry; tab is the encoded table
// (empty for an error).
func decodeEntry(raw []byte) (ent resultEntry, tab []byte, err error) {
	if len(raw) > 0 && raw[0] == '{' {
		err = json.Unmarshal(raw, &ent)
		return ent, ent.Table, err
	}
	if len(raw) == 0 || raw[0] != entryV2 {
		return ent, nil, errCorruptEntry
	}
	b := raw[1:]
	var parts [3][]byte
	for i := range parts {
		n, k := binary.Uvarint(b)
		if k <= 0 || n > uint64(len(b)-k) {
			return ent, nil, errCorruptEntry
		}
		parts[i], b = b[k:k+int(n)], b[k+int(n):]
	}
	if len(b) < 8 {
		return ent, nil, errCorruptEntry
	}
	ent.Material = json.RawMessage(parts[0])
	ent.Class, ent.Msg = string(parts[1]), string(parts[2])
	ent.Created = time.Unix(0, int64(binary.LittleEndian.Uint64(b))).UTC()
	if ent.Class != "" && len(b) > 8 {
		return ent, nil, errCorruptEntry
	}
	return ent, b[8:], nil
}

var errCorruptEntry = errors.New("corrupt stage cache entry")

// deterministic reports whether an engine error would recur for the same
// query on the same data: a syntax, schema or execution error of the query
// itself, not a timeout, a cancellation or an unreachable engine.
func deterministic(class string, err error) bool {
	var netErr *net.OpError
	switch {
	case engine.Unavailable(err), errors.Is(err, ErrHarness), errors.As(err, &netErr),
		errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled):
		return false
	}
	switch class {
	case item.ClassSyntax, item.ClassSchema, item.ClassExecution, item.ClassSafety, item.ClassUnsupported:
		return true
	}
	return false
}

// Explain returns the stored entry of a key (or unique prefix) as JSON:
// what it was computed from and what it holds.
func (r *Results) Explain(key string) ([]byte, error) {
	k, err := r.disk.Find(key)
	if err != nil {
		return nil, err
	}
	raw, ok := r.disk.Get(k)
	if !ok {
		return nil, fmt.Errorf("no entry %q", key)
	}
	ent, tab, err := decodeEntry(raw)
	if err != nil {
		return nil, fmt.Errorf("entry %s is corrupt: %w", k, err)
	}
	out := map[string]any{"key": k, "material": ent.Material, "created": ent.Created}
	if ent.Class != "" {
		out["error_class"], out["error"] = ent.Class, ent.Msg
	} else {
		var t table.Table
		if t.UnmarshalBinary(tab) == nil {
			out["columns"], out["rows"], out["truncated"] = t.Columns, len(t.Rows), t.Truncated
			if len(t.Rows) > 5 {
				t.Rows = t.Rows[:5]
			}
			out["first_rows"] = t.Rows
		}
	}
	return json.MarshalIndent(out, "", "  ")
}

var secretName = regexp.MustCompile(`(?i)(pass(word)?|secret|token|api_?key|credential|auth)`)

// scrub copies engine options without credentials: options named like a
// secret are dropped, and a DSN or URL loses its password.
func scrub(opts map[string]any) map[string]any {
	if len(opts) == 0 {
		return nil
	}
	out := map[string]any{}
	keys := make([]string, 0, len(opts))
	for k := range opts {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if secretName.MatchString(k) {
			continue
		}
		v := opts[k]
		if s, ok := v.(string); ok {
			v = scrubDSN(s)
		}
		out[k] = v
	}
	return out
}

var kvPassword = regexp.MustCompile(`(?i)\b(password|pass|pwd)\s*=\s*('[^']*'|\S+)`)

// scrubDSN removes the password of a URL (postgres://u:pw@h/db) or of a
// key=value DSN (password=pw).
func scrubDSN(s string) string {
	if u, err := url.Parse(s); err == nil && u.User != nil {
		if _, has := u.User.Password(); has {
			u.User = url.User(u.User.Username())
			return u.String()
		}
	}
	if kvPassword.MatchString(s) {
		return kvPassword.ReplaceAllString(s, "$1=")
	}
	return s
}

// matPool holds buffers for the key material of cached, which a hit does
// not keep.
var matPool = sync.Pool{New: func() any { b := make([]byte, 0, 512); return &b }}

// cached runs op through the cache: a hit returns the stored outcome, a
// miss runs it and stores a deterministic outcome. It reports the call to
// the stage's tally (store.Call) and honours -refresh/-no-cache
// (store.Reads, store.Writes).
func (r *Results) cached(ctx context.Context, e *Engine, op string, q engine.Query, run func() (*table.Table, error)) (*table.Table, error, bool) {
	bp := matPool.Get().(*[]byte)
	key, mat := r.keyInto(*bp, e, op, q)
	*bp = mat[:0]
	if store.Reads(ctx) {
		if res, err, ok := r.get(key); ok {
			matPool.Put(bp)
			store.Call(ctx, store.KindEngine, true)
			return res, err, true
		}
	}
	mat = bytes.Clone(mat) // put keeps it; the buffer goes back now
	matPool.Put(bp)
	store.Call(ctx, store.KindEngine, false)
	if store.Probing(ctx) {
		// evalflow plan runs no query.
		return nil, &engine.Error{Class: item.ClassExecution, Msg: "not in the stage cache (evalflow plan runs no query)", Unavailable: true}, false
	}
	res, err := run()
	if store.Writes(ctx) && ctx.Err() == nil {
		class := item.ClassNone
		if err != nil {
			class = engine.ClassOf(err)
		}
		r.put(key, mat, res, class, err)
	}
	return res, err, false
}

// Package rundir writes a run directory — the public contract documented in
// docs/output.md:
//
//	manifest.json       what ran, with which inputs and variables, and counts
//	items.parquet       one row per item
//	attempts.parquet    one row per sample × attempt
//	aggregates.parquet  one row per (group, metric)
//	summary.md          the summary table a person reads
//
// Crash safety. While a run is going, finished items are written to part
// files under parts/ (items-Gggg-Ppppppp.parquet and the matching attempts
// part), each written under a .tmp name and renamed when complete, at most
// every FlushEvery or FlushItems records. Every *.parquet in the directory
// is therefore complete at every moment, and a run killed with kill -9
// leaves its finished items readable with one glob, parts/items-*.parquet.
// When the process ends normally (complete, cancelled, failed) the parts are
// merged in dataset order into items.parquet and attempts.parquet (again
// through a temporary name), the manifest is written, and parts/ is
// removed. Parts are compressed with zstd, as the merged files are. A
// fresh run without sweep cells opens the merged files when it starts and
// at the end appends its parts to them, their compressed column chunks
// copied verbatim (see stream): its merge reads no row back and compresses
// nothing again.
//
// Resume. Opening a directory that holds an unfinished run of the same
// inputs (Config.Fingerprint) continues it: items that finished (ok,
// timeout, unsafe) are kept and reported through Config.OnKept, errored and
// cancelled items are dropped from the parts (each part is rewritten in
// place, atomically) so the caller runs them again; the new items are
// written as a new generation of parts and the merge interleaves them by
// seq, so the final files equal an uninterrupted run's. A lock file held
// with flock(2) stops two processes writing one directory; the kernel drops
// it when its process dies, which is how a crashed run is told from a live
// one.
package rundir

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/evalflow/evalflow/dsl"
	"github.com/evalflow/evalflow/item"
	"github.com/evalflow/evalflow/nodes/aggregate"
	"github.com/evalflow/evalflow/sinks"
	"github.com/evalflow/evalflow/table"
)

// Standard file names.
const (
	ManifestName   = "manifest.json"
	ItemsFile      = "items.parquet"
	AttemptsFile   = "attempts.parquet"
	AggregatesFile = "aggregates.parquet"
	SummaryFile    = "summary.md"
	PartsDir       = "parts"
	LockFile       = ".evalflow.lock"
)

// Flush defaults: finished items reach a renamed part file within this
// time or this many items, whichever comes first.
const (
	DefaultFlushEvery = 2 * time.Second
	DefaultFlushItems = 2000
)

// Config says how to open a run directory.
type Config struct {
	// MetricCols are the item metric columns, in order.
	MetricCols []string
	Sinks      []*dsl.Sink
	// Overwrite starts over in a directory holding a run of other inputs
	// (or a complete one).
	Overwrite bool
	// Fingerprint identifies the run's inputs (pipeline, variables,
	// dataset, predictions, databases, -limit/-sample). A directory holding
	// a run with another fingerprint is refused unless Overwrite, naming
	// the components that differ.
	Fingerprint Fingerprint
	// MayDiffer lists fingerprint components allowed to differ on resume
	// (a run stopped by max_cost may resume with a higher one).
	MayDiffer func(prev *Manifest, key, now string) bool
	// OnKept receives every item an earlier run of this directory finished,
	// rebuilt from its row (id, fields, status, final error class, scores),
	// in dataset order, before Open returns.
	OnKept func(*item.Record)
	// FlushEvery and FlushItems bound how long a finished item stays in an
	// unfinished part (defaults DefaultFlushEvery, DefaultFlushItems).
	FlushEvery time.Duration
	FlushItems int
	// Cells are the sweep's cells (nil outside a sweep): items and attempts
	// then carry `cell` and the swept variables' columns, and every
	// record's Cell indexes this list.
	Cells []Cell
}

// Run owns the writers of one run directory. Write may be called from one
// goroutine while a background flusher runs; every other method is called
// from the goroutine that opened the run.
type Run struct {
	Dir string

	metricCols []string
	passCols   []sinks.Column
	passSrc    []string // dataset field of each pass-through column
	itemSchema sinks.Schema
	// previews is set when itemSchema has gold_preview and pred_preview
	// (parts an older evalflow wrote, adopted on resume, have not); pbuf
	// is the buffer previews are built in (guarded by mu, as Write is).
	previews   bool
	pbuf       []byte
	attSchema  sinks.Schema
	cellCols   sinks.Schema
	sinkBlocks []*dsl.Sink

	cfg   Config
	lock  *os.File
	gen   int // this process's generation: 0 for a fresh run, +1 per resume
	kept  bitset
	nKept int

	mu       sync.Mutex
	lanes    map[int]*lane // open parts, by lane: one per sweep cell, so cells may run side by side
	qasSinks []*qasSink
	live     []extra // standard-output sinks streamed as records arrive (fresh runs)
	pending  int     // records in the open parts, all lanes
	lastSync time.Time
	werr     error // sticky write error
	// stream holds the merged files of a fresh run, which Close fills
	// with the parts' row groups (nil: the parts are merged row by row by
	// Close); noStream is set once it cannot (see canStream). Both
	// guarded by mu.
	stream   *stream
	noStream bool
	stopSync chan struct{}
	syncDone chan struct{}

	// Counts are computed over every item of the run (earlier generations
	// included) by Close.
	Counts Counts
}

// lane is one stream of parts: records of one sweep cell arrive in seq
// order, so each lane's parts are sorted and the merge interleaves lanes by
// seq. A run without cells has lane 0 only.
type lane struct {
	id       int
	part     int // next part number of this lane in this generation
	items    sinks.Writer
	attempts sinks.Writer
	qas      sinks.Writer // sidecar (seq, sink, line) rows for per-item sinks
}

type extra struct {
	sink *dsl.Sink
	w    sinks.Writer
}

// Counts are what the run did, for the manifest and summary.
type Counts struct {
	Items     int `json:"items"`
	OK        int `json:"ok"`
	Errors    int `json:"errors"`
	Cancelled int `json:"cancelled"`
	Timeout   int `json:"timeout"`
	Unsafe    int `json:"unsafe"`
	Samples   int `json:"samples"`
	Attempts  int `json:"attempts"`
	// Model calls behind the attempts (zero for replay).
	InputTokens  int            `json:"input_tokens"`
	OutputTokens int            `json:"output_tokens"`
	Cost         float64        `json:"cost"`
	CacheHits    int            `json:"cache_hits"`
	Classes      map[string]int `json:"error_classes"`
}

// Fingerprint maps an input's name ("pipeline", "variables", "dataset",
// "input:PATH", "databases", "limit", …) to a hash or value.
type Fingerprint map[string]string

// ErrComplete is returned by Open when the directory holds a complete run
// of the same inputs: there is nothing to do. Prev is that run's manifest.
type ErrComplete struct{ Prev *Manifest }

func (e *ErrComplete) Error() string {
	return "the run is already complete (nothing to do; -overwrite starts over)"
}

// ErrMismatch is returned by Open when the directory holds a run of other
// inputs.
type ErrMismatch struct {
	Dir    string
	Differ []string
}

func (e *ErrMismatch) Error() string {
	// A sweep's per-cell components ("var:x [cell a=1]") are named once.
	var names []string
	seen := map[string]bool{}
	for _, d := range e.Differ {
		if i := strings.Index(d, " [cell "); i > 0 && strings.HasSuffix(d, "]") {
			d = d[:i] + " (in some cells)"
		}
		if !seen[d] {
			seen[d] = true
			names = append(names, d)
		}
	}
	return fmt.Sprintf("%s holds a run of other inputs (%s differ); use the same inputs to resume it, another -out, or -overwrite to start over",
		e.Dir, strings.Join(names, ", "))
}

// ErrLocked is returned when another live process holds the directory.
type ErrLocked struct {
	Dir string
	PID string
}

func (e *ErrLocked) Error() string {
	return fmt.Sprintf("%s is being written by another evalflow process (pid %s); wait for it or choose another -out", e.Dir, e.PID)
}

// Previous returns the manifest of the run in dir, nil when there is none.
func Previous(dir string) (*Manifest, error) {
	b, err := os.ReadFile(filepath.Join(dir, ManifestName))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var m Manifest
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(dir, ManifestName), err)
	}
	return &m, nil
}

// Create opens dir for a fresh run with no fingerprint (tests and tools).
func Create(dir string, metricCols []string, sinkBlocks []*dsl.Sink, overwrite bool) (*Run, error) {
	return Open(dir, Config{MetricCols: metricCols, Sinks: sinkBlocks, Overwrite: overwrite})
}

// Open locks dir and prepares it for a run: fresh, resumed (see the package
// doc) or refused.
func Open(dir string, cfg Config) (*Run, error) {
	if cfg.FlushEvery <= 0 {
		cfg.FlushEvery = DefaultFlushEvery
	}
	if cfg.FlushItems <= 0 {
		cfg.FlushItems = DefaultFlushItems
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	lock, err := acquire(dir)
	if err != nil {
		return nil, err
	}
	r := &Run{Dir: dir, metricCols: cfg.MetricCols, sinkBlocks: cfg.Sinks, cfg: cfg, lock: lock, Counts: Counts{Classes: map[string]int{}}}
	r.cellCols = cellColumns(cfg.Cells, cfg.MetricCols)
	r.attSchema = withCells(AttemptSchema, r.cellCols)
	fail := func(err error) (*Run, error) {
		r.unlock()
		return nil, err
	}
	prev, err := Previous(dir)
	if err != nil && !cfg.Overwrite {
		return fail(fmt.Errorf("%w (-overwrite starts over)", err))
	}
	switch {
	case prev == nil && !cfg.Overwrite:
		// A directory without a manifest may still hold parts of a run
		// killed before its first manifest write: start over cleanly.
		if err := r.clear(); err != nil {
			return fail(err)
		}
	case cfg.Overwrite || prev == nil:
		if err := r.clear(); err != nil {
			return fail(err)
		}
	default:
		if d := differ(prev, cfg); len(d) > 0 {
			return fail(&ErrMismatch{Dir: dir, Differ: d})
		}
		if prev.Status == "complete" && !hasParts(dir) {
			return fail(&ErrComplete{Prev: prev})
		}
		if err := r.resume(); err != nil {
			return fail(fmt.Errorf("resuming %s: %w", dir, err))
		}
	}
	if err := os.MkdirAll(filepath.Join(dir, PartsDir), 0o755); err != nil {
		return fail(err)
	}
	for _, sb := range cfg.Sinks {
		if mk := perItem[sb.Kind]; mk != nil && isPerItem(sb) {
			r.qasSinks = append(r.qasSinks, mk(sb))
		}
	}
	if r.gen == 0 {
		for _, sb := range cfg.Sinks {
			if sb.Path == "-" && sb.Table == "attempts" {
				w, err := sinks.Open(sb.Kind, "-", r.attSchema)
				if err != nil {
					return fail(fmt.Errorf("sink.%s: %w", sb.Name, err))
				}
				r.live = append(r.live, extra{sink: sb, w: w})
			}
		}
	}
	r.lastSync = time.Now()
	r.stopSync, r.syncDone = make(chan struct{}), make(chan struct{})
	go r.flusher()
	return r, nil
}

func acquire(dir string) (*os.File, error) {
	f, err := os.OpenFile(filepath.Join(dir, LockFile), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		b, _ := io.ReadAll(f)
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, &ErrLocked{Dir: dir, PID: strings.TrimSpace(string(b))}
		}
		return nil, fmt.Errorf("locking %s: %w", dir, err)
	}
	f.Truncate(0)
	f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	return f, nil
}

func (r *Run) unlock() {
	if r.lock != nil {
		r.lock.Close() // closing the descriptor releases the flock
		r.lock = nil
	}
}

// Stale reports whether manifest status "running" in dir belongs to a dead
// process (its lock is free).
func Stale(dir string) bool {
	f, err := os.OpenFile(filepath.Join(dir, LockFile), os.O_RDWR, 0)
	if err != nil {
		return true
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		return false
	}
	syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
	return true
}

func differ(prev *Manifest, cfg Config) []string {
	var d []string
	keys := map[string]bool{}
	for k := range prev.Fingerprint {
		keys[k] = true
	}
	for k := range cfg.Fingerprint {
		keys[k] = true
	}
	for k := range keys {
		if prev.Fingerprint[k] == cfg.Fingerprint[k] {
			continue
		}
		if cfg.MayDiffer != nil && cfg.MayDiffer(prev, k, cfg.Fingerprint[k]) {
			continue
		}
		d = append(d, k)
	}
	sort.Strings(d)
	return d
}

// clear removes a previous run's files (never anything else).
func (r *Run) clear() error {
	removeMergeTemps(r.Dir)
	for _, n := range []string{ManifestName, ItemsFile, AttemptsFile, AggregatesFile, SummaryFile} {
		if err := os.Remove(filepath.Join(r.Dir, n)); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
	}
	return os.RemoveAll(filepath.Join(r.Dir, PartsDir))
}

// removeMergeTemps removes the merged files' temporary names a killed
// process may have left (never complete: each is renamed when it is).
func removeMergeTemps(dir string) {
	for _, n := range []string{ItemsFile, AttemptsFile} {
		os.Remove(filepath.Join(dir, n+".tmp"))
	}
}

func hasParts(dir string) bool {
	m, _ := filepath.Glob(filepath.Join(dir, PartsDir, "items-*.parquet"))
	return len(m) > 0
}

var partName = regexp.MustCompile(`^(items|attempts|qas)-G(\d+)(?:-L(\d+))?-P(\d+)\.parquet$`)

type partFile struct {
	kind            string
	gen, lane, part int
	path            string
}

func listParts(dir, kind string) ([]partFile, error) {
	ents, err := os.ReadDir(filepath.Join(dir, PartsDir))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []partFile
	for _, e := range ents {
		m := partName.FindStringSubmatch(e.Name())
		if m == nil || (kind != "" && m[1] != kind) {
			continue
		}
		g, _ := strconv.Atoi(m[2])
		l, _ := strconv.Atoi(m[3]) // "" (lane 0) reads as 0
		p, _ := strconv.Atoi(m[4])
		out = append(out, partFile{kind: m[1], gen: g, lane: l, part: p, path: filepath.Join(dir, PartsDir, e.Name())})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].gen != out[j].gen {
			return out[i].gen < out[j].gen
		}
		if out[i].lane != out[j].lane {
			return out[i].lane < out[j].lane
		}
		return out[i].part < out[j].part
	})
	return out, nil
}

// partPath names a part: KIND-Gggg-Pnnnnnn.parquet in lane 0, with -Llll
// before the part number in other lanes.
func partPath(dir, kind string, gen, lane, part int) string {
	if lane == 0 {
		return filepath.Join(dir, PartsDir, fmt.Sprintf("%s-G%03d-P%06d.parquet", kind, gen, part))
	}
	return filepath.Join(dir, PartsDir, fmt.Sprintf("%s-G%03d-L%03d-P%06d.parquet", kind, gen, lane, part))
}

// resume turns the previous run's output into parts holding only its
// finished items and picks the next generation.
func (r *Run) resume() error {
	pd := filepath.Join(r.Dir, PartsDir)
	if err := os.MkdirAll(pd, 0o755); err != nil {
		return err
	}
	// Leftover temporary files of a killed process are incomplete: its
	// parts and its merged files (written while it ran, or by its merge).
	if tmps, _ := filepath.Glob(filepath.Join(pd, "*.tmp")); len(tmps) > 0 {
		for _, t := range tmps {
			os.Remove(t)
		}
	}
	removeMergeTemps(r.Dir)
	if !hasParts(r.Dir) {
		// The previous process ended normally (cancelled, failed,
		// stopped) and merged its parts: its merged files become
		// generation 0. Renames are atomic; the manifest already says the
		// run is not complete.
		for kind, name := range map[string]string{"items": ItemsFile, "attempts": AttemptsFile} {
			src := filepath.Join(r.Dir, name)
			if _, err := os.Stat(src); err == nil {
				if err := os.Rename(src, partPath(r.Dir, kind, 0, 0, 0)); err != nil {
					return err
				}
			}
		}
	} else {
		// A killed process may have renamed its merged files in before
		// dying: the parts are the truth.
		os.Remove(filepath.Join(r.Dir, ItemsFile))
		os.Remove(filepath.Join(r.Dir, AttemptsFile))
	}
	parts, err := listParts(r.Dir, "")
	if err != nil {
		return err
	}
	for _, p := range parts {
		if p.gen >= r.gen {
			r.gen = p.gen + 1
		}
	}
	// Pass 1: which items finished; drop the others from their parts.
	for _, p := range parts {
		if p.kind != "items" {
			continue
		}
		schema, err := readSchema(p.path)
		if err != nil {
			return err
		}
		if r.itemSchema == nil {
			r.adoptSchema(schema)
		}
		col := colIndex(schema)
		keep := func(row []any) bool {
			st, _ := row[col["status"]].(string)
			return st == "ok" || st == "timeout" || st == "unsafe"
		}
		n, err := filterPart(p.path, keep, func(row []any) {
			seq, _ := row[col["seq"]].(int64)
			r.kept.set(int(seq))
		})
		if err != nil {
			return err
		}
		r.nKept += n
	}
	for _, p := range parts {
		if p.kind == "items" {
			continue
		}
		keep := func(row []any) bool {
			seq, _ := row[0].(int64)
			return r.kept.has(int(seq))
		}
		if _, err := filterPart(p.path, keep, nil); err != nil {
			return err
		}
	}
	// Pass 2: hand the kept items to the caller in dataset order.
	if r.cfg.OnKept != nil && r.itemSchema != nil {
		err := r.mergeStreams("items", func(row []any) error {
			r.cfg.OnKept(r.recordFromRow(row))
			return nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// Resumed reports whether this run continues an earlier one, and how many
// items it keeps from it.
func (r *Run) Resumed() (bool, int) { return r.gen > 0, r.nKept }

// Kept reports whether the item at seq finished in an earlier run of this
// directory (it must not run again).
func (r *Run) Kept(seq int) bool { return r.kept.has(seq) }

func readSchema(path string) (sinks.Schema, error) {
	pr, err := sinks.OpenParquet(path)
	if err != nil {
		return nil, err
	}
	defer pr.Close()
	return pr.Schema(), nil
}

// filterPart rewrites path without the rows keep refuses (a temporary file
// renamed over it, so readers see the old or the new file, never a mix),
// calls kept for every row kept and returns how many were kept.
func filterPart(path string, keep func([]any) bool, kept func([]any)) (int, error) {
	pr, err := sinks.OpenParquet(path)
	if err != nil {
		return 0, err
	}
	defer pr.Close()
	var rows [][]any
	n, dropped := 0, 0
	for {
		row, err := pr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return 0, err
		}
		if keep(row) {
			n++
			if kept != nil {
				kept(row)
			}
			rows = append(rows, row)
		} else {
			dropped++
		}
	}
	if dropped == 0 {
		return n, nil
	}
	tmp := path + ".tmp"
	w, err := sinks.NewParquet(tmp, pr.Schema(), partCompression)
	if err != nil {
		return 0, err
	}
	for _, row := range rows {
		if err := w.Write(row); err != nil {
			w.Close()
			os.Remove(tmp)
			return 0, err
		}
	}
	if err := w.Close(); err != nil {
		os.Remove(tmp)
		return 0, err
	}
	return n, os.Rename(tmp, path)
}

func colIndex(s sinks.Schema) map[string]int {
	m := make(map[string]int, len(s))
	for i, c := range s {
		m[c.Name] = i
	}
	return m
}

const passDoc = "pass-through dataset column "

// adoptSchema takes the item schema of an earlier generation's parts, so
// every part of the run has the same columns.
func (r *Run) adoptSchema(s sinks.Schema) {
	r.setItemSchema(s)
	r.passCols, r.passSrc = nil, nil
	for _, c := range s {
		if src, ok := strings.CutPrefix(c.Doc, passDoc); ok {
			r.passCols = append(r.passCols, c)
			r.passSrc = append(r.passSrc, src)
		}
	}
}

// setItemSchema fixes items.parquet's columns for the whole run.
func (r *Run) setItemSchema(s sinks.Schema) {
	r.itemSchema = s
	col := colIndex(s)
	_, g := col["gold_preview"]
	_, p := col["pred_preview"]
	r.previews = g && p
}

// recordFromRow rebuilds what the aggregates and the progress display need
// of a finished item from its items.parquet row.
func (r *Run) recordFromRow(row []any) *item.Record {
	col := colIndex(r.itemSchema)
	str := func(name string) string {
		if i, ok := col[name]; ok {
			s, _ := row[i].(string)
			return s
		}
		return ""
	}
	seq, _ := row[col["seq"]].(int64)
	rec := &item.Record{Seq: int(seq), Item: item.Item{ID: str("id"), Question: str("question"), DB: str("db"), Gold: str("gold")}, Status: "ok"}
	if len(r.cfg.Cells) > 0 {
		rec.Cell = r.cellIndex(str("cell"))
	}
	for i, c := range r.passCols {
		rec.Item.Fields = append(rec.Item.Fields, item.Field{Name: r.passSrc[i], Value: row[col[c.Name]]})
	}
	a := &item.Attempt{Query: str("prediction"), ErrorClass: str("error_class"), ErrorMessage: str("error_message")}
	switch str("status") {
	case "timeout":
		a.ErrorClass = item.ClassTimeout
	case "unsafe":
		a.ErrorClass = item.ClassSafety
	}
	rec.Samples = []*item.Sample{{Attempts: []*item.Attempt{a}}}
	rec.GoldError = str("gold_error")
	var errs map[string]string
	json.Unmarshal([]byte(str("metric_errors")), &errs)
	for _, m := range r.metricCols {
		i, ok := col[m]
		if !ok {
			continue
		}
		s := item.Score{Name: m, Err: errs[m]}
		if v, ok := row[i].(float64); ok {
			s.Value = v
		} else {
			s.Null = true
		}
		rec.Scores = append(rec.Scores, s)
	}
	return rec
}

func (r *Run) sinkPath(sb *dsl.Sink) string {
	if sb.Path == "-" || filepath.IsAbs(sb.Path) {
		return sb.Path
	}
	return filepath.Join(r.Dir, sb.Path)
}

func typeOf(v table.Value) table.Type {
	switch v.(type) {
	case int64:
		return table.TypeInt
	case float64:
		return table.TypeFloat
	case bool:
		return table.TypeBool
	}
	return table.TypeString
}

// coerce fits a pass-through value into its column's type: ints widen to
// floats, and anything else renders as text for a text column. A value
// that cannot fit a typed column is rendered as text only when the column
// is text; the dataset reader types a column whose values conflict as text,
// so a NULL here means the row had no value.
func coerce(v table.Value, t table.Type) any {
	if v == nil {
		return nil
	}
	switch t {
	case table.TypeString:
		if s, ok := v.(string); ok {
			return s
		}
		return table.Format(v)
	case table.TypeFloat:
		switch x := v.(type) {
		case float64:
			return x
		case int64:
			return float64(x)
		}
	case table.TypeInt:
		if x, ok := v.(int64); ok {
			return x
		}
	case table.TypeBool:
		if x, ok := v.(bool); ok {
			return x
		}
	}
	return nil
}

// SetPassColumns fixes the pass-through columns before the first record
// (the dataset's union schema); without it they come from the first
// record's fields.
func (r *Run) SetPassColumns(names []string, types []table.Type) {
	if r.itemSchema != nil {
		return // resumed: the earlier parts' schema stands
	}
	taken := map[string]bool{}
	for _, c := range withCells(ItemSchema(nil, r.metricCols), r.cellCols) {
		taken[c.Name] = true
	}
	for i, n := range names {
		// A dataset field named like one of evalflow's own columns (say
		// gold_rows) is kept under data_<name>.
		name := n
		for taken[name] {
			name = "data_" + name
		}
		taken[name] = true
		r.passCols = append(r.passCols, sinks.Column{Name: name, Type: types[i], Doc: passDoc + n})
		r.passSrc = append(r.passSrc, n)
	}
	r.setItemSchema(withCells(ItemSchema(r.passCols, r.metricCols), r.cellCols))
}

func (r *Run) schemaFrom(rec *item.Record) {
	names := make([]string, len(rec.Item.Fields))
	types := make([]table.Type, len(rec.Item.Fields))
	for i, f := range rec.Item.Fields {
		names[i], types[i] = f.Name, typeOf(f.Value)
	}
	r.SetPassColumns(names, types)
}

// openPart opens a lane's next part's writers under temporary names.
func (r *Run) openPart(l *lane) error {
	var err error
	l.items, err = sinks.NewParquet(partPath(r.Dir, "items", r.gen, l.id, l.part)+".tmp", r.itemSchema, partCompression)
	if err != nil {
		return err
	}
	l.attempts, err = sinks.NewParquet(partPath(r.Dir, "attempts", r.gen, l.id, l.part)+".tmp", r.attSchema, partCompression)
	if err != nil {
		return err
	}
	if len(r.qasSinks) > 0 {
		l.qas, err = sinks.NewParquet(partPath(r.Dir, "qas", r.gen, l.id, l.part)+".tmp", qasPartSchema, partCompression)
		if err != nil {
			return err
		}
	}
	for _, sb := range r.sinkBlocks {
		if r.gen == 0 && sb.Path == "-" && sb.Table == "items" && !isPerItem(sb) && !r.hasLive(sb) {
			w, err := sinks.Open(sb.Kind, "-", r.itemSchema)
			if err != nil {
				return fmt.Errorf("sink.%s: %w", sb.Name, err)
			}
			r.live = append(r.live, extra{sink: sb, w: w})
		}
	}
	return nil
}

func (r *Run) hasLive(sb *dsl.Sink) bool {
	for _, e := range r.live {
		if e.sink == sb {
			return true
		}
	}
	return false
}

// Write records one finished (or cancelled) item and its attempts.
func (r *Run) Write(rec *item.Record) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.werr != nil {
		return r.werr
	}
	if r.itemSchema == nil {
		r.schemaFrom(rec)
	}
	id := 0
	if len(r.cfg.Cells) > 0 {
		id = rec.Cell
	}
	l := r.lanes[id]
	if l == nil {
		l = &lane{id: id}
		if r.lanes == nil {
			r.lanes = map[int]*lane{}
		}
		r.lanes[id] = l
	}
	if l.items == nil {
		if err := r.openPart(l); err != nil {
			r.werr = err
			return err
		}
	}
	if r.stream == nil && !r.noStream {
		r.startStream()
	}
	if err := r.write(l, rec); err != nil {
		r.werr = err
		return err
	}
	r.pending++
	if r.pending >= r.cfg.FlushItems {
		return r.flushLocked()
	}
	return nil
}

func (r *Run) write(l *lane, rec *item.Record) error {
	row := r.cellRow(rec, r.itemRow(rec))
	if err := l.items.Write(row); err != nil {
		return fmt.Errorf("items: item %q: %w", rec.Item.ID, err)
	}
	if r.stream != nil {
		r.stream.add(tableItems, row)
	}
	for _, e := range r.live {
		if e.sink.Table == "items" {
			if err := e.w.Write(row); err != nil {
				return fmt.Errorf("sink.%s: item %q: %w", e.sink.Name, rec.Item.ID, err)
			}
		}
	}
	for _, q := range r.qasSinks {
		line, err := q.line(rec)
		if err != nil {
			return fmt.Errorf("sink.%s: item %q: %w", q.sink.Name, rec.Item.ID, err)
		}
		if err := l.qas.Write([]any{int64(rec.Seq), q.sink.Name, line}); err != nil {
			return fmt.Errorf("sink.%s: item %q: %w", q.sink.Name, rec.Item.ID, err)
		}
	}
	for _, s := range rec.Samples {
		for _, a := range s.Attempts {
			arow := r.cellRow(rec, attemptRow(rec, a))
			if err := l.attempts.Write(arow); err != nil {
				return fmt.Errorf("attempts: item %q: %w", rec.Item.ID, err)
			}
			if r.stream != nil {
				r.stream.add(tableAttempts, arow)
			}
			for _, e := range r.live {
				if e.sink.Table == "attempts" {
					if err := e.w.Write(arow); err != nil {
						return fmt.Errorf("sink.%s: item %q: %w", e.sink.Name, rec.Item.ID, err)
					}
				}
			}
		}
	}
	return nil
}

// Flush makes every record written so far durable: the open part is
// finished and renamed into place.
func (r *Run) Flush() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.flushLocked()
}

func (r *Run) flushLocked() error {
	r.lastSync = time.Now()
	if r.werr != nil {
		return r.werr
	}
	var first error
	keep := func(err error) {
		if err != nil && first == nil {
			first = err
		}
	}
	ids := make([]int, 0, len(r.lanes))
	for id := range r.lanes {
		ids = append(ids, id)
	}
	sort.Ints(ids)
	for _, id := range ids {
		l := r.lanes[id]
		if l.items == nil {
			continue
		}
		keep(l.attempts.Close())
		if l.qas != nil {
			keep(l.qas.Close())
		}
		keep(l.items.Close())
		if first == nil {
			// attempts and qas first: an items part never names attempts
			// that are not on disk yet.
			keep(os.Rename(partPath(r.Dir, "attempts", r.gen, id, l.part)+".tmp", partPath(r.Dir, "attempts", r.gen, id, l.part)))
			if l.qas != nil {
				keep(os.Rename(partPath(r.Dir, "qas", r.gen, id, l.part)+".tmp", partPath(r.Dir, "qas", r.gen, id, l.part)))
			}
			keep(os.Rename(partPath(r.Dir, "items", r.gen, id, l.part)+".tmp", partPath(r.Dir, "items", r.gen, id, l.part)))
		}
		l.items, l.attempts, l.qas = nil, nil, nil
		l.part++
	}
	r.pending = 0
	if first != nil {
		r.werr = fmt.Errorf("writing %s: %w", filepath.Join(r.Dir, PartsDir), first)
	}
	return r.werr
}

func (r *Run) flusher() {
	defer close(r.syncDone)
	t := time.NewTicker(r.cfg.FlushEvery / 4)
	defer t.Stop()
	for {
		select {
		case <-r.stopSync:
			return
		case <-t.C:
			r.mu.Lock()
			if r.pending > 0 && time.Since(r.lastSync) >= r.cfg.FlushEvery {
				r.flushLocked()
			}
			r.mu.Unlock()
		}
	}
}

// Close flushes the last part and merges every part, in dataset order, into
// items.parquet and attempts.parquet and the declared sinks (each through a
// temporary name), computing Counts over every item of the run, earlier
// generations included. The parts stay until Finish, so a process killed
// before its manifest is written loses nothing.
func (r *Run) Close() error {
	if r.stopSync != nil {
		close(r.stopSync)
		<-r.syncDone
		r.stopSync = nil
	}
	r.mu.Lock()
	err := r.flushLocked()
	st := r.stream
	r.stream, r.noStream = nil, true
	r.mu.Unlock()
	for _, e := range r.live {
		if cerr := e.w.Close(); cerr != nil && err == nil {
			err = cerr
		}
	}
	if err != nil {
		if st != nil {
			st.abort()
		}
		return err
	}
	if r.itemSchema == nil {
		r.setItemSchema(withCells(ItemSchema(nil, r.metricCols), r.cellCols))
	}
	if st != nil {
		if counts, ok := st.finish(); ok {
			r.Counts = counts
			var first error
			for _, q := range r.qasSinks {
				if err := r.mergeQAS(q); err != nil && first == nil {
					first = err
				}
			}
			return first
		}
		// The stream failed (say, a full disk while the parts still
		// fitted): the parts hold everything, merge them as usual.
	}
	return r.merge()
}

// Finish removes the parts once the merged files and the manifest are in
// place, and releases the directory's lock.
func (r *Run) Finish() error {
	err := os.RemoveAll(filepath.Join(r.Dir, PartsDir))
	r.unlock()
	return err
}

// Abandon releases the lock and leaves the parts (a run that could not
// merge keeps what it finished for the next command).
func (r *Run) Abandon() {
	if r.stopSync != nil {
		close(r.stopSync)
		<-r.syncDone
		r.stopSync = nil
	}
	r.mu.Lock()
	st := r.stream
	r.stream, r.noStream = nil, true
	r.mu.Unlock()
	if st != nil {
		st.abort()
	}
	r.unlock()
}

// output is one merged destination: a file written under a temporary name
// and renamed, or standard output.
type output struct {
	w   sinks.Writer
	tmp string
	dst string
}

func (r *Run) merge() error {
	r.Counts = Counts{Classes: map[string]int{}}
	var firstErr error
	keep := func(err error) {
		if err != nil && firstErr == nil {
			firstErr = err
		}
	}
	open := func(kind, dst string, s sinks.Schema) (output, error) {
		if dst == "-" {
			w, err := sinks.Open(kind, "-", s)
			return output{w: w}, err
		}
		tmp := dst + ".tmp"
		w, err := sinks.Open(kind, tmp, s)
		return output{w: w, tmp: tmp, dst: dst}, err
	}
	finish := func(outs []output) {
		for _, o := range outs {
			err := o.w.Close()
			keep(err)
			if o.tmp != "" {
				if err == nil && firstErr == nil {
					keep(os.Rename(o.tmp, o.dst))
				} else {
					os.Remove(o.tmp)
				}
			}
		}
	}
	for _, table := range []string{"items", "attempts"} {
		schema, file := r.itemSchema, ItemsFile
		if table == "attempts" {
			schema, file = r.attSchema, AttemptsFile
		}
		main, err := open("parquet", filepath.Join(r.Dir, file), schema)
		if err != nil {
			return err
		}
		outs := []output{main}
		for _, sb := range r.sinkBlocks {
			if sb.Table != table || isPerItem(sb) || (sb.Path == "-" && r.gen == 0) {
				continue
			}
			o, err := open(sb.Kind, r.sinkPath(sb), schema)
			if err != nil {
				finish(outs)
				return fmt.Errorf("sink.%s: %w", sb.Name, err)
			}
			outs = append(outs, o)
		}
		cc := countColsOf(schema)
		err = r.mergeStreams(table, func(row []any) error {
			r.Counts.add(table, cc, row)
			for _, o := range outs {
				if err := o.w.Write(row); err != nil {
					return err
				}
			}
			return nil
		})
		keep(err)
		finish(outs)
		if firstErr != nil {
			return firstErr
		}
	}
	for _, q := range r.qasSinks {
		keep(r.mergeQAS(q))
	}
	return firstErr
}

// countCols are the positions of the columns Counts reads (-1: absent).
type countCols struct {
	status, samples, errorClass            int
	inputTokens, outputTokens, cost, cache int
}

func countColsOf(s sinks.Schema) countCols {
	col := colIndex(s)
	at := func(name string) int {
		if i, ok := col[name]; ok {
			return i
		}
		return -1
	}
	return countCols{status: at("status"), samples: at("samples"), errorClass: at("error_class"),
		inputTokens: at("input_tokens"), outputTokens: at("output_tokens"), cost: at("cost"), cache: at("cache_hit")}
}

// cell returns row[i], nil when the column is absent.
func cell(row []any, i int) any {
	if i < 0 || i >= len(row) {
		return nil
	}
	return row[i]
}

// add counts one merged row of table.
func (c *Counts) add(table string, cc countCols, row []any) {
	if table == "attempts" {
		c.Attempts++
		n := func(i int) int64 { v, _ := cell(row, i).(int64); return v }
		c.InputTokens += int(n(cc.inputTokens))
		c.OutputTokens += int(n(cc.outputTokens))
		if v, ok := cell(row, cc.cost).(float64); ok {
			c.Cost += v
		}
		if v, _ := cell(row, cc.cache).(bool); v {
			c.CacheHits++
		}
		return
	}
	c.Items++
	st, _ := cell(row, cc.status).(string)
	switch st {
	case "ok":
		c.OK++
	case "cancelled":
		c.Cancelled++
	case "timeout":
		c.Timeout++
	case "unsafe":
		c.Unsafe++
	default:
		c.Errors++
	}
	if v, ok := cell(row, cc.samples).(int64); ok {
		c.Samples += int(v)
	}
	if cl, _ := cell(row, cc.errorClass).(string); cl != "" {
		c.Classes[cl]++
	}
}

// mergeStreams calls fn for every row of the run's parts of one table in
// seq order. Each generation's parts are in seq order already (records are
// written in dataset order), so the merge reads one part per generation at
// a time: memory is flat in the run's size.
func (r *Run) mergeStreams(table string, fn func([]any) error) error {
	parts, err := listParts(r.Dir, table)
	if err != nil {
		return err
	}
	// One stream per generation and lane: each is in seq order.
	type gl struct{ gen, lane int }
	byGen := map[gl][]partFile{}
	var gens []gl
	for _, p := range parts {
		k := gl{p.gen, p.lane}
		if _, ok := byGen[k]; !ok {
			gens = append(gens, k)
		}
		byGen[k] = append(byGen[k], p)
	}
	streams := make([]*genStream, 0, len(gens))
	defer func() {
		for _, s := range streams {
			s.close()
		}
	}()
	for _, g := range gens {
		s := &genStream{parts: byGen[g]}
		if err := s.advance(); err != nil {
			return err
		}
		streams = append(streams, s)
	}
	for {
		best := -1
		for i, s := range streams {
			if s.head == nil {
				continue
			}
			if best < 0 || s.seq() < streams[best].seq() {
				best = i
			}
		}
		if best < 0 {
			return nil
		}
		if err := fn(streams[best].head); err != nil {
			return err
		}
		if err := streams[best].advance(); err != nil {
			return err
		}
	}
}

// genStream reads one generation's parts of a table in order.
type genStream struct {
	parts []partFile
	cur   *sinks.ParquetReader
	head  []any
}

func (s *genStream) seq() int64 { v, _ := s.head[0].(int64); return v }

func (s *genStream) advance() error {
	for {
		if s.cur == nil {
			if len(s.parts) == 0 {
				s.head = nil
				return nil
			}
			pr, err := sinks.OpenParquet(s.parts[0].path)
			if err != nil {
				return err
			}
			s.cur, s.parts = pr, s.parts[1:]
		}
		row, err := s.cur.Next()
		if err == io.EOF {
			s.cur.Close()
			s.cur = nil
			continue
		}
		if err != nil {
			return err
		}
		s.head = row
		return nil
	}
}

func (s *genStream) close() {
	if s.cur != nil {
		s.cur.Close()
		s.cur = nil
	}
}

// WriteAggregates writes aggregates.parquet and the aggregate sinks, each
// through a temporary name.
func (r *Run) WriteAggregates(rows []aggregate.Row) error {
	dsts := []struct{ kind, path string }{{"parquet", filepath.Join(r.Dir, AggregatesFile)}}
	for _, sb := range r.sinkBlocks {
		if sb.Table == "aggregates" {
			dsts = append(dsts, struct{ kind, path string }{sb.Kind, r.sinkPath(sb)})
		}
	}
	var first error
	for _, d := range dsts {
		path := d.path
		if path != "-" {
			path += ".tmp"
		}
		schema := AggregateSchema
		if len(r.cfg.Cells) > 0 {
			schema = append(sinks.Schema{r.cellCols[0]}, schema...)
		}
		w, err := sinks.Open(d.kind, path, schema)
		if err != nil {
			if first == nil {
				first = err
			}
			continue
		}
		for _, a := range rows {
			row := []any{a.Stage, a.Group, a.Value, a.Metric, int64(a.Items), int64(a.N), nullableFloat(a.Mean), a.Sum, int64(a.Errors), int64(a.Nulls),
				int64(a.ErrItems), nullableFloat(a.MeanOK), nullableFloat(a.CILow), nullableFloat(a.CIHigh), nz(a.CIMethod)}
			if len(r.cfg.Cells) > 0 {
				row = append([]any{a.Cell}, row...)
			}
			if err := w.Write(row); err != nil && first == nil {
				first = err
			}
		}
		err = w.Close()
		if err == nil && path != "-" {
			err = os.Rename(path, d.path)
		}
		if err != nil && first == nil {
			first = err
		}
	}
	return first
}

func nullableFloat(f float64) any {
	if math.IsNaN(f) {
		return nil
	}
	return f
}

// WriteJSON writes v as indented JSON to name in the run directory, through
// a temporary file renamed into place.
func (r *Run) WriteJSON(name string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return writeAtomic(filepath.Join(r.Dir, name), append(b, '\n'))
}

func writeAtomic(path string, b []byte) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		os.Remove(tmp)
		return err
	}
	return os.Rename(tmp, path)
}

// bitset is a growable set of small non-negative ints (item seqs).
type bitset []uint64

func (b *bitset) set(i int) {
	for i/64 >= len(*b) {
		*b = append(*b, 0)
	}
	(*b)[i/64] |= 1 << (i % 64)
}

func (b bitset) has(i int) bool {
	return i >= 0 && i/64 < len(b) && b[i/64]&(1<<(i%64)) != 0
}

// partCompression is the codec of parts: zstd, the merged files' codec,
// so the merge of a fresh run copies the parts' compressed column chunks
// into items.parquet and attempts.parquet verbatim (sinks.RowGroupAppender)
// instead of decoding and compressing every row a second time.
var partCompression = sinks.WithCompression("zstd")

const (
	tableItems = iota
	tableAttempts
)

// stream is the merge of a fresh run: its merged files are the
// concatenation of its parts. That is the merge's order exactly when the
// run is fresh (one generation) and has one lane (no sweep cells): each
// lane's records arrive in seq order, and the merge of one stream is its
// concatenation. The merged files (items.parquet and attempts.parquet,
// each under its .tmp name) are opened when the first record is written;
// Write counts the rows it gives the parts (add), and finish appends the
// parts' row groups, copied verbatim, so Close reads no row.
//
// add is called under Run.mu; finish and abort are called once, by Close
// or Abandon, after the last Write. A failure of the stream does not fail
// the run: Close merges the parts as it would have without it.
type stream struct {
	dir    string
	outs   [2]output
	cols   [2]countCols
	counts Counts
}

// canStream reports whether the merged files may be the concatenation of
// the parts: a fresh run without sweep cells whose items and attempts go
// to no file sink (those are merged from the parts, with the main files).
func (r *Run) canStream() bool {
	if r.gen != 0 || len(r.cfg.Cells) > 0 {
		return false
	}
	for _, sb := range r.sinkBlocks {
		if (sb.Table == "items" || sb.Table == "attempts") && !isPerItem(sb) && sb.Path != "-" {
			return false
		}
	}
	return true
}

// startStream opens the merged files' writers under their temporary names;
// if it cannot, Close merges the parts. Called with mu held, once the item
// schema is fixed.
func (r *Run) startStream() {
	r.noStream = true // one attempt, whatever happens
	if !r.canStream() {
		return
	}
	s := &stream{dir: r.Dir, counts: Counts{Classes: map[string]int{}}}
	for i, t := range []struct {
		file   string
		schema sinks.Schema
	}{{ItemsFile, r.itemSchema}, {AttemptsFile, r.attSchema}} {
		dst := filepath.Join(r.Dir, t.file)
		w, err := sinks.NewParquet(dst+".tmp", t.schema)
		if err != nil {
			if i == 1 {
				s.outs[0].w.Close()
				os.Remove(s.outs[0].tmp)
			}
			return
		}
		s.outs[i] = output{w: w, tmp: dst + ".tmp", dst: dst}
		s.cols[i] = countColsOf(t.schema)
	}
	r.stream = s
}

// add counts one row written to the parts (called with Run.mu held).
func (s *stream) add(table int, row []any) {
	s.counts.add([2]string{"items", "attempts"}[table], s.cols[table], row)
}

// finish appends the parts to the merged files, closes them and renames
// them into place (attempts first), returning the counts of every row;
// false when anything failed (the temporary files are removed).
func (s *stream) finish() (Counts, bool) {
	var err error
	for i, table := range [2]string{"items", "attempts"} {
		if err != nil {
			break
		}
		app, ok := s.outs[i].w.(sinks.RowGroupAppender)
		if !ok {
			err = errors.New("the merged file cannot append parts")
			break
		}
		var parts []partFile
		if parts, err = listParts(s.dir, table); err != nil {
			break
		}
		for _, p := range parts {
			if p.gen != 0 || p.lane != 0 {
				err = fmt.Errorf("part %s is not this run's", p.path)
				break
			}
			if _, err = app.AppendFile(p.path); err != nil {
				break
			}
		}
	}
	for _, o := range s.outs {
		if cerr := o.w.Close(); cerr != nil && err == nil {
			err = cerr
		}
	}
	if err == nil {
		err = os.Rename(s.outs[tableAttempts].tmp, s.outs[tableAttempts].dst)
	}
	if err == nil {
		err = os.Rename(s.outs[tableItems].tmp, s.outs[tableItems].dst)
	}
	if err != nil {
		for _, o := range s.outs {
			os.Remove(o.tmp)
		}
		return Counts{}, false
	}
	return s.counts, true
}

// abort closes the merged files and removes them.
func (s *stream) abort() {
	for _, o := range s.outs {
		o.w.Close()
		os.Remove(o.tmp)
	}
}

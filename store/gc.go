package store

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// storeFile is one file of a store: a segment, or a value of the old
// layout.
type storeFile struct {
	name   string // a segment's file name
	legacy string // the path of an old-layout value
	size   int64
	mtime  time.Time
}

// files lists the store's files.
func (s *Store) files() ([]storeFile, error) {
	entries, err := os.ReadDir(s.dir)
	if err != nil {
		return nil, fmt.Errorf("store: %w", err)
	}
	var out []storeFile
	for _, e := range entries {
		name := e.Name()
		switch {
		case isSegmentName(name):
			if info, err := e.Info(); err == nil {
				out = append(out, storeFile{name: name, size: info.Size(), mtime: info.ModTime()})
			}
		case e.IsDir() && len(name) == 2:
			for _, k := range legacyKeys(filepath.Join(s.dir, name)) {
				p := s.legacyPath(k)
				if info, err := os.Stat(p); err == nil {
					out = append(out, storeFile{legacy: p, size: info.Size(), mtime: info.ModTime()})
				}
			}
		}
	}
	return out, nil
}

func totalSize(files []storeFile) (n int64) {
	for _, f := range files {
		n += f.size
	}
	return n
}

// gcSeg is a segment as GC sees it.
type gcSeg struct {
	name string
	f    *os.File
	size int64
	busy bool // a writer holds it (or it changed under us): left alone
	bad  bool // not a segment (no magic): removed unless busy
	recs []*gcRec
	live int64 // bytes of records that survive
}

// whole reports whether every byte of g is live, so GC leaves it as it
// is (unless merge and g is small).
func (g *gcSeg) whole(merge bool) bool {
	return !g.busy && !g.bad && g.live > 0 && g.live == g.size-int64(len(segMagic)) && !(merge && g.size < segmentBytes/4)
}

// maxSmallSegments is how many segments under a quarter of segmentBytes GC
// tolerates before it merges them.
const maxSmallSegments = 16

// gcRec is one record or old-layout value as GC sees it.
type gcRec struct {
	key    string
	seg    *gcSeg // nil: old layout
	legacy string
	off    int64
	size   int64
	ts     int64
	del    bool
}

// GC drops the least recently used values until the store's files hold at
// most maxBytes, and returns how many values it dropped and how many bytes
// of files it freed. It deletes segments with no surviving record and
// rewrites those with some dead (superseded, dropped or torn) bytes into a
// new segment; segments other processes are writing are left whole (their
// bytes count against the bound). Under the bound it does nothing, unless
// more than maxSmallSegments small segments (one per writing process)
// accumulated: it then merges them. It closes this process's segment first.
func (s *Store) GC(maxBytes int64) (removed int, freed int64, err error) {
	s.gcMu.Lock()
	defer s.gcMu.Unlock()
	s.wmu.Lock()
	defer s.wmu.Unlock()
	s.closeWriter()
	s.removeStaleTemps()
	files, err := s.files()
	if err != nil {
		return 0, 0, err
	}
	before := totalSize(files)
	small := 0
	for _, f := range files {
		if f.legacy == "" && f.size < segmentBytes/4 {
			small++
		}
	}
	// Every process that writes leaves a segment: merge small ones once
	// there are many, even under the bound.
	merge := small > maxSmallSegments
	if before <= maxBytes && !merge {
		return 0, 0, nil
	}
	defer s.reset()

	// Read every segment's records.
	var segs []*gcSeg
	defer func() {
		for _, g := range segs {
			g.f.Close() // releases the lock
		}
	}()
	latest := map[string]*gcRec{}
	busyPut := map[string]bool{} // keys with a record in a busy segment
	var legacy []*gcRec
	for _, file := range files {
		if file.legacy != "" {
			legacy = append(legacy, &gcRec{key: filepath.Base(file.legacy), legacy: file.legacy, size: file.size, ts: file.mtime.UnixNano()})
			continue
		}
		p := filepath.Join(s.dir, file.name)
		f, err := os.Open(p)
		if err != nil {
			continue // removed meanwhile
		}
		g := &gcSeg{name: file.name, f: f}
		segs = append(segs, g)
		g.busy = !tryLock(f) || !sameFile(f, p)
		st, err := f.Stat()
		if err != nil {
			g.busy = true
			continue
		}
		g.size = st.Size()
		var m [len(segMagic)]byte
		if _, err := f.ReadAt(m[:], 0); err != nil || string(m[:]) != segMagic {
			g.bad = true
			continue
		}
		scanSegment(f, int64(len(segMagic)), g.size, func(r scanned) {
			g.recs = append(g.recs, &gcRec{key: r.key, seg: g, off: r.off, size: r.hdr.size(), ts: r.hdr.ts, del: r.hdr.kind == kindDel})
		})
	}
	sort.Slice(segs, func(i, j int) bool { return segs[i].name < segs[j].name })
	for _, g := range segs {
		for _, r := range g.recs {
			if cur := latest[r.key]; cur == nil || r.ts >= cur.ts {
				latest[r.key] = r
			}
			if g.busy {
				busyPut[r.key] = true
			}
		}
	}
	for _, r := range legacy {
		if cur := latest[r.key]; cur == nil || r.ts > cur.ts {
			latest[r.key] = r
		}
	}

	// The values GC may drop, least recently used first.
	var cands []*gcRec
	for _, r := range latest {
		if !r.del && (r.seg == nil || !r.seg.busy) {
			cands = append(cands, r)
		}
	}
	sort.Slice(cands, func(i, j int) bool {
		if cands[i].ts != cands[j].ts {
			return cands[i].ts < cands[j].ts
		}
		return cands[i].key < cands[j].key
	})
	dropped := map[*gcRec]bool{}
	survives := func(r *gcRec) bool {
		if latest[r.key] != r || dropped[r] {
			return false
		}
		// A removal is kept while a busy segment may hold what it hides.
		return !r.del || busyPut[r.key]
	}
	// after is the bytes of files left with the candidates dropped so far;
	// live and legacyLive follow each drop.
	for _, g := range segs {
		for _, r := range g.recs {
			if survives(r) {
				g.live += r.size
			}
		}
	}
	var legacyLive int64
	for _, r := range legacy {
		if survives(r) {
			legacyLive += r.size
		}
	}
	after := func() int64 {
		n, out := legacyLive, int64(0)
		for _, g := range segs {
			switch {
			case g.busy:
				n += g.size
			case g.whole(merge):
				n += g.size // left as it is
			default:
				out += g.live
			}
		}
		if out > 0 {
			out += int64(len(segMagic)) * (1 + out/segmentBytes)
		}
		return n + out
	}
	for _, c := range cands {
		if after() <= maxBytes {
			break
		}
		dropped[c] = true
		removed++
		if c.seg != nil {
			c.seg.live -= c.size
		} else {
			legacyLive -= c.size
		}
	}

	// Write the survivors of segments with dead bytes to new segments,
	// then remove what they replace.
	var out *compactWriter
	var done []*gcSeg
	for _, g := range segs {
		if g.busy {
			continue
		}
		if g.whole(merge) {
			continue
		}
		for _, r := range g.recs {
			if !survives(r) {
				continue
			}
			b := make([]byte, r.size)
			if _, err := g.f.ReadAt(b, r.off); err != nil || !checkRecord(b) {
				continue // a torn or corrupt record is dropped
			}
			if out == nil {
				out = &compactWriter{dir: s.dir}
			}
			if err := out.write(b); err != nil {
				out.abort()
				return removed, 0, err
			}
		}
		done = append(done, g)
	}
	if out != nil {
		if err := out.finish(); err != nil {
			return removed, 0, err
		}
	}
	for _, g := range done {
		os.Remove(filepath.Join(s.dir, g.name))
	}
	for _, r := range legacy {
		if !survives(r) {
			os.Remove(r.legacy)
			os.Remove(filepath.Dir(r.legacy)) // when empty
		}
	}
	files, _ = s.files()
	return removed, before - totalSize(files), nil
}

// compactWriter writes GC's survivors to new segments, each under a
// temporary name until it is whole.
type compactWriter struct {
	dir   string
	f     *os.File
	name  string
	off   int64
	ready []string // finished temporary files, renamed by finish
}

func (w *compactWriter) write(rec []byte) error {
	if w.f != nil && w.off+int64(len(rec)) > segmentBytes && w.off > int64(len(segMagic)) {
		if err := w.close(); err != nil {
			return err
		}
	}
	if w.f == nil {
		w.name = newSegmentName(time.Now().UnixNano())
		f, err := os.OpenFile(filepath.Join(w.dir, w.name+".tmp"), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if err != nil {
			return fmt.Errorf("store: %w", err)
		}
		w.f, w.off = f, 0
		if err := w.put([]byte(segMagic)); err != nil {
			return err
		}
	}
	return w.put(rec)
}

func (w *compactWriter) put(b []byte) error {
	n, err := w.f.Write(b)
	w.off += int64(n)
	if err != nil {
		return fmt.Errorf("store: %w", err)
	}
	return nil
}

func (w *compactWriter) close() error {
	err := w.f.Close()
	w.ready = append(w.ready, w.name)
	w.f = nil
	if err != nil {
		return fmt.Errorf("store: %w", err)
	}
	return nil
}

// finish renames every segment written into place.
func (w *compactWriter) finish() error {
	if w.f != nil {
		if err := w.close(); err != nil {
			w.abort()
			return err
		}
	}
	var errs []error
	for _, name := range w.ready {
		if err := os.Rename(filepath.Join(w.dir, name+".tmp"), filepath.Join(w.dir, name)); err != nil {
			errs = append(errs, err)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("store: %w", err)
	}
	return nil
}

// abort removes what was written.
func (w *compactWriter) abort() {
	if w.f != nil {
		w.f.Close()
		w.ready = append(w.ready, w.name)
		w.f = nil
	}
	for _, name := range w.ready {
		os.Remove(filepath.Join(w.dir, name+".tmp"))
	}
}

// removeStaleTemps removes temporary files a GC or an old-layout writer
// killed mid-way left, once they are an hour old.
func (s *Store) removeStaleTemps() {
	entries, _ := os.ReadDir(s.dir)
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), segExt+".tmp") {
			if info, err := e.Info(); err == nil && time.Since(info.ModTime()) > time.Hour {
				os.Remove(filepath.Join(s.dir, e.Name()))
			}
		}
	}
}

// Clear removes every value and returns how many there were. Segments
// other processes are writing are removed too (what they write next goes
// to a file no one else sees).
func (s *Store) Clear() (int, error) {
	s.gcMu.Lock()
	defer s.gcMu.Unlock()
	s.wmu.Lock()
	defer s.wmu.Unlock()
	s.closeWriter()
	s.refresh(true)
	n := 0
	s.mu.RLock()
	for _, l := range s.idx {
		if !l.del {
			n++
		}
	}
	s.mu.RUnlock()
	defer s.reset()
	entries, err := os.ReadDir(s.dir)
	if err != nil {
		return 0, fmt.Errorf("store: %w", err)
	}
	var errs []error
	for _, e := range entries {
		name := e.Name()
		p := filepath.Join(s.dir, name)
		switch {
		case isSegmentName(name) || strings.HasSuffix(name, segExt+".tmp"):
			if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
				errs = append(errs, err)
			}
		case e.IsDir() && len(name) == 2:
			sub, _ := os.ReadDir(p)
			for _, f := range sub {
				if validKey(f.Name()) || strings.Contains(f.Name(), ".tmp-") {
					os.Remove(filepath.Join(p, f.Name()))
				}
			}
			os.Remove(p) // when empty
		}
	}
	if err := errors.Join(errs...); err != nil {
		return n, fmt.Errorf("store: %w", err)
	}
	return n, nil
}

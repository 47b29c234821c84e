package store

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"
)

// value is the deterministic value of key i, of a size that varies with i,
// so a reader can tell a whole value from any other bytes.
func value(i int) []byte {
	b := make([]byte, 50+(i*37)%3000)
	for j := range b {
		b[j] = byte(i + j*7)
	}
	return b
}

func key(i int) string { return fmt.Sprintf("k%015d", i) }

func segments(t *testing.T, dir string) []string {
	t.Helper()
	segs, err := filepath.Glob(filepath.Join(dir, "*"+segExt))
	if err != nil {
		t.Fatal(err)
	}
	return segs
}

// TestTornTail: a segment cut in the middle of a record (a writer killed
// mid-write, a power loss) serves every whole record before the cut and
// reports the cut one as a miss; GC then drops the torn bytes.
func TestTornTail(t *testing.T) {
	dir := t.TempDir()
	s, _ := Open(dir)
	for i := range 5 {
		if err := s.Put(key(i), value(i)); err != nil {
			t.Fatal(err)
		}
	}
	s.Close()
	segs := segments(t, dir)
	if len(segs) != 1 {
		t.Fatalf("segments %v", segs)
	}
	st, _ := os.Stat(segs[0])
	for _, cut := range []int64{1, hdrSize - 3, hdrSize + 5, recordSize(16, len(value(4))) - 1} {
		t.Run(fmt.Sprint(cut), func(t *testing.T) {
			if err := os.Truncate(segs[0], st.Size()-cut); err != nil {
				t.Fatal(err)
			}
			r, _ := Open(dir)
			defer r.Close()
			for i := range 4 {
				if b, ok := r.Get(key(i)); !ok || !bytes.Equal(b, value(i)) {
					t.Errorf("key %d: %v", i, ok)
				}
			}
			if _, ok := r.Get(key(4)); ok {
				t.Error("the torn record was served")
			}
		})
	}
	r, _ := Open(dir)
	r.Put(key(9), value(9)) // a new segment: the torn one is never appended to
	if n, _, err := r.GC(0); err != nil || n != 5 {
		t.Errorf("gc removed %d (%v), want 5", n, err)
	}
	if left := segments(t, dir); len(left) != 0 {
		t.Errorf("gc 0 left %v", left)
	}
}

// TestCorruptRecord: a record whose bytes changed (a bad disk) is a miss;
// the records around it are served, and GC drops it.
func TestCorruptRecord(t *testing.T) {
	dir := t.TempDir()
	s, _ := Open(dir)
	for i := range 3 {
		s.Put(key(i), value(i))
	}
	s.Close()
	seg := segments(t, dir)[0]
	b, _ := os.ReadFile(seg)
	off := int64(len(segMagic)) + recordSize(16, len(value(0))) + hdrSize + 16 + 10 // in key 1's value
	b[off] ^= 0xff
	os.WriteFile(seg, b, 0o644)
	r, _ := Open(dir)
	for i, want := range []bool{true, false, true} {
		if got, ok := r.Get(key(i)); ok != want || ok && !bytes.Equal(got, value(i)) {
			t.Errorf("key %d served = %v, want %v", i, ok, want)
		}
	}
	r.GC(0)
	r.Put(key(5), value(5))
	if st, _ := r.Stats(); st.Entries != 1 {
		t.Errorf("after gc 0 and one put: %+v", st)
	}
}

// TestKillDuringPuts: a writer killed (SIGKILL) while it stores values
// leaves a store that serves each value whole or not at all, and a GC that
// compacts it keeps every whole one.
func TestKillDuringPuts(t *testing.T) {
	if dir := os.Getenv("STORE_TEST_KILLED"); dir != "" {
		s, _ := Open(dir)
		for i := 0; ; i++ {
			if err := s.Put(key(i), value(i)); err != nil {
				fmt.Println("put:", err)
				os.Exit(1)
			}
		}
	}
	for round := range 3 {
		dir := t.TempDir()
		cmd := exec.Command(os.Args[0], "-test.run=^TestKillDuringPuts$")
		cmd.Env = append(os.Environ(), "STORE_TEST_KILLED="+dir)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Duration(150+rand.IntN(200)) * time.Millisecond)
		cmd.Process.Signal(syscall.SIGKILL)
		cmd.Wait()
		s, _ := Open(dir)
		st, _ := s.Stats()
		if st.Entries == 0 {
			t.Fatalf("round %d: the writer stored nothing before it was killed", round)
		}
		check := func(when string, want int) {
			n := 0
			for i := 0; i < st.Entries+10; i++ {
				b, ok := s.Get(key(i))
				if ok && !bytes.Equal(b, value(i)) {
					t.Fatalf("round %d, %s: key %d served %d wrong bytes", round, when, i, len(b))
				}
				if ok {
					n++
				}
			}
			if n != want {
				t.Errorf("round %d, %s: %d served, want %d", round, when, n, want)
			}
		}
		check("after the kill", st.Entries)
		// The killed writer's lock went with it: GC may compact its
		// segment, and keeps every whole value.
		n, _, err := s.GC(st.DiskBytes - 1)
		if err != nil || n > 1 {
			t.Fatalf("gc by one byte: %d values dropped, %v", n, err)
		}
		s.Close()
		s, _ = Open(dir)
		check("after gc", st.Entries-n)
		s.Close()
	}
}

// TestGoroutines: many goroutines storing and reading distinct and shared
// keys through one Store and through two Stores of one directory (each
// writes its own segment, as two processes do), with rotation.
func TestGoroutines(t *testing.T) {
	for _, buffered := range []bool{false, true} {
		t.Run(fmt.Sprint("buffered=", buffered), func(t *testing.T) { testGoroutines(t, buffered) })
	}
}

func testGoroutines(t *testing.T, buffered bool) {
	old := segmentBytes
	segmentBytes = 64 << 10
	defer func() { segmentBytes = old }()
	dir := t.TempDir()
	a, _ := Open(dir)
	b, _ := Open(dir)
	if buffered {
		a.Buffer()
		b.Buffer()
	}
	var wg sync.WaitGroup
	for g := range 8 {
		s := a
		if g%2 == 1 {
			s = b
		}
		wg.Go(func() {
			for i := range 300 {
				k := g*1000 + i
				if err := s.Put(key(k), value(k)); err != nil {
					t.Error(err)
					return
				}
				if v, ok := s.Get(key(k)); !ok || !bytes.Equal(v, value(k)) {
					t.Errorf("own key %d: %v", k, ok)
				}
				shared := i % 10
				s.Put(key(shared), value(shared))
				if v, ok := s.Get(key(shared)); !ok || !bytes.Equal(v, value(shared)) {
					t.Errorf("shared key %d: %v", shared, ok)
				}
			}
		})
	}
	wg.Wait()
	if buffered {
		// What each wrote is on disk within flushEvery; Flush says when.
		a.Flush()
		b.Flush()
	}
	if len(segments(t, dir)) < 4 {
		t.Errorf("no rotation: %v", segments(t, dir))
	}
	for _, s := range []*Store{a, b} {
		s.refresh(true)
		for g := range 8 {
			for i := range 300 {
				if v, ok := s.Get(key(g*1000 + i)); !ok || !bytes.Equal(v, value(g*1000+i)) {
					t.Fatalf("key %d: %v", g*1000+i, ok)
				}
			}
		}
	}
	st, _ := a.Stats()
	if st.Entries != 8*300 {
		t.Errorf("%d entries, want %d", st.Entries, 8*300)
	}
	// b is still writing (its segment is locked): a GC of a to nothing
	// leaves b's segment and so b's values.
	b.Put(key(99999), value(99999))
	if buffered {
		b.Flush() // as its timer would, within flushEvery
	}
	a.GC(0)
	if v, ok := b.Get(key(99999)); !ok || !bytes.Equal(v, value(99999)) {
		t.Error("gc removed a segment another store is writing")
	}
	a.refresh(true)
	if _, ok := a.Get(key(99999)); !ok {
		t.Error("gc removed a segment another store is writing")
	}
}

// TestSeesOtherWriters: a store that has loaded its index finds values
// another process stored since, within refreshEvery of a miss.
func TestSeesOtherWriters(t *testing.T) {
	dir := t.TempDir()
	a, _ := Open(dir)
	if _, ok := a.Get(key(1)); ok {
		t.Fatal("hit in an empty store")
	}
	b, _ := Open(dir)
	b.Buffer()
	b.Put(key(1), value(1))
	// b writes it within flushEvery (nobody calls Flush), a finds it at
	// its next refresh.
	start := time.Now()
	found := false
	for !found && time.Since(start) < 5*time.Second {
		a.mu.Lock()
		a.lastRefresh = time.Now().Add(-refreshEvery)
		a.mu.Unlock()
		var v []byte
		if v, found = a.Get(key(1)); found && !bytes.Equal(v, value(1)) {
			t.Fatal("another writer's value was served wrong")
		}
		time.Sleep(5 * time.Millisecond)
	}
	if !found {
		t.Error("another writer's value was not found")
	} else {
		t.Logf("found %v after the other's Put (flushEvery %v)", time.Since(start).Round(time.Millisecond), flushEvery)
	}
	// An unbuffered writer's value is in the file when Put returns.
	w, _ := Open(dir)
	w.Put(key(2), value(2))
	a.mu.Lock()
	a.lastRefresh = time.Now().Add(-refreshEvery)
	a.mu.Unlock()
	if v, ok := a.Get(key(2)); !ok || !bytes.Equal(v, value(2)) {
		t.Error("an unbuffered writer's value was not found at once")
	}
	// Removed by one, gone for the other after its next look.
	b.Remove(key(1))
	if _, ok := b.Get(key(1)); ok {
		t.Error("a removed value was served")
	}
	a.refresh(true)
	if _, ok := a.Get(key(1)); ok {
		t.Error("a value another store removed was served")
	}
	c, _ := Open(dir)
	if _, ok := c.Get(key(1)); ok {
		t.Error("a removed value was served to a new store")
	}
}

// TestOldLayout: values of the one-file-per-value layout are served, moved
// into a segment when read, counted, trimmed by GC and removed by Clear.
func TestOldLayout(t *testing.T) {
	dir := t.TempDir()
	for i := range 3 {
		p := filepath.Join(dir, key(i)[:2], key(i))
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, value(i), 0o644)
	}
	os.WriteFile(filepath.Join(dir, "k0", key(7)+".tmp-0123abcd"), []byte("half"), 0o644)
	s, _ := Open(dir)
	if st, _ := s.Stats(); st.Entries != 3 {
		t.Errorf("stats of an old store: %+v", st)
	}
	if v, ok := s.Get(key(0)); !ok || !bytes.Equal(v, value(0)) {
		t.Fatal("an old value was not served")
	}
	if _, err := os.Stat(filepath.Join(dir, key(0)[:2], key(0))); err == nil {
		t.Error("an old value read stayed in the old layout")
	}
	if k, err := s.Find(key(1)); err != nil || k != key(1) {
		t.Errorf("find: %q %v", k, err)
	}
	r, _ := Open(dir)
	if v, ok := r.Get(key(0)); !ok || !bytes.Equal(v, value(0)) {
		t.Error("a moved value was not served to a new store")
	}
	if v, ok := r.Get(key(2)); !ok || !bytes.Equal(v, value(2)) {
		t.Error("an old value was not served to a new store")
	}
	if n, err := r.Clear(); n != 3 || err != nil {
		t.Errorf("clear: %d %v", n, err)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, "*")); len(left) != 0 {
		t.Errorf("clear left %v", left)
	}
}

// BenchmarkPut stores distinct 1 KiB values.
func BenchmarkPut(b *testing.B) {
	s, _ := Open(b.TempDir())
	defer s.Close()
	v := make([]byte, 1024)
	b.SetBytes(int64(len(v)))
	i := 0
	for b.Loop() {
		s.Put(key(i), v)
		i++
	}
}

// BenchmarkGet reads 1 KiB values back (hits), and misses.
func BenchmarkGet(b *testing.B) {
	s, _ := Open(b.TempDir())
	defer s.Close()
	v := make([]byte, 1024)
	for i := range 1000 {
		s.Put(key(i), v)
	}
	b.Run("hit", func(b *testing.B) {
		b.SetBytes(int64(len(v)))
		i := 0
		for b.Loop() {
			if _, ok := s.Get(key(i % 1000)); !ok {
				b.Fatal("miss")
			}
			i++
		}
	})
	b.Run("miss", func(b *testing.B) {
		i := 0
		for b.Loop() {
			s.Get(key(1000 + i))
			i++
		}
	})
}

// TestGCMergesSmallSegments: every writing process leaves a segment; GC
// merges them once there are many, even under the bound, losing nothing.
func TestGCMergesSmallSegments(t *testing.T) {
	dir := t.TempDir()
	for i := range maxSmallSegments + 4 {
		s, _ := Open(dir)
		s.Put(key(i), value(i))
		s.Close()
	}
	s, _ := Open(dir)
	if n, _, err := s.GC(1 << 30); err != nil || n != 0 {
		t.Fatalf("gc dropped %d values (%v) under its bound", n, err)
	}
	if segs := segments(t, dir); len(segs) != 1 {
		t.Errorf("%d segments after gc, want 1", len(segs))
	}
	for i := range maxSmallSegments + 4 {
		if v, ok := s.Get(key(i)); !ok || !bytes.Equal(v, value(i)) {
			t.Errorf("key %d lost by the merge", i)
		}
	}
	// Few segments: GC under its bound leaves them.
	s.Put(key(100), value(100))
	s.Close()
	if _, _, err := s.GC(1 << 30); err != nil || len(segments(t, dir)) != 2 {
		t.Errorf("gc under the bound rewrote %v (%v)", segments(t, dir), err)
	}
}

// TestBatchedWrites: a buffered Store's Put is served by it at once and written
// within flushEvery, without a Flush; flushBytes of values are written at
// once; Close and GC write what waits; a Remove is written at once.
func TestBatchedWrites(t *testing.T) {
	dir := t.TempDir()
	s, _ := Open(dir)
	s.Buffer()
	size := func() int64 {
		t.Helper()
		segs := segments(t, dir)
		if len(segs) != 1 {
			t.Fatalf("segments: %v", segs)
		}
		st, err := os.Stat(segs[0])
		if err != nil {
			t.Fatal(err)
		}
		return st.Size()
	}
	s.Put(key(1), value(1))
	if v, ok := s.Get(key(1)); !ok || !bytes.Equal(v, value(1)) {
		t.Fatal("a waiting value is not served by its store")
	}
	if n := size(); n != int64(len(segMagic)) {
		t.Errorf("written before its batch: %d bytes", n)
	}
	deadline := time.Now().Add(5 * time.Second)
	for size() == int64(len(segMagic)) && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if n := size(); n != recordSize(len(key(1)), len(value(1)))+int64(len(segMagic)) {
		t.Errorf("after flushEvery: %d bytes", n)
	}
	// A batch of flushBytes goes at once.
	before := size()
	var batch int64
	for i := 2; batch < flushBytes; i++ {
		s.Put(key(i), value(i))
		batch += recordSize(len(key(i)), len(value(i)))
	}
	if n := size(); n != before+batch {
		t.Errorf("a full batch: %d bytes written, want %d", n-before, batch)
	}
	// Remove is written at once, so another process stops serving it.
	s.Put(key(100000), value(7))
	other, _ := Open(dir)
	if _, ok := other.Get(key(1)); !ok {
		t.Fatal("another store misses a written value")
	}
	s.Remove(key(1))
	other.refresh(true)
	if _, ok := other.Get(key(1)); ok {
		t.Error("another store serves a removed value")
	}
	if _, ok := other.Get(key(100000)); !ok {
		t.Error("the removal did not write what waited before it")
	}
	// Close writes what waits.
	s.Put(key(100001), value(8))
	s.Close()
	other.refresh(true)
	if v, ok := other.Get(key(100001)); !ok || !bytes.Equal(v, value(8)) {
		t.Error("Close did not write a waiting value")
	}
}

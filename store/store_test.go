package store

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"
)

func TestPutGetFind(t *testing.T) {
	s, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := s.Get("0123456789abcdef"); ok {
		t.Error("hit in an empty store")
	}
	if err := s.Put("0123456789abcdef", []byte("v1")); err != nil {
		t.Fatal(err)
	}
	if b, ok := s.Get("0123456789abcdef"); !ok || string(b) != "v1" {
		t.Errorf("get: %q %v", b, ok)
	}
	if k, err := s.Find("01234567"); err != nil || k != "0123456789abcdef" {
		t.Errorf("find by prefix: %q %v", k, err)
	}
	s.Put("0123456700000000", []byte("v2"))
	if _, err := s.Find("01234567"); err == nil {
		t.Error("an ambiguous prefix was accepted")
	}
	for _, bad := range []string{"", "short", "../../etc/passwd", "ABCDEF0123456789", "0123456789/abcdef"} {
		if err := s.Put(bad, []byte("x")); err == nil {
			t.Errorf("key %q was accepted", bad)
		}
	}
	st, _ := s.Stats()
	if st.Entries != 2 || st.Bytes != 4 {
		t.Errorf("stats: %+v", st)
	}
	if n, _ := s.Clear(); n != 2 {
		t.Errorf("clear removed %d", n)
	}
}

// TestGCRemovesLeastRecentlyUsed: gc keeps the store under its bound by
// removing the entries used longest ago.
func TestGCRemovesLeastRecentlyUsed(t *testing.T) {
	s, _ := Open(t.TempDir())
	now := time.Now()
	for i := range 10 {
		k := fmt.Sprintf("key%013d", i)
		old := now.Add(-time.Duration(10-i) * 2 * time.Hour) // key0 oldest
		if err := s.append(kindPut, k, make([]byte, 100), old.UnixNano()); err != nil {
			t.Fatal(err)
		}
	}
	// Reading key0 makes it the most recent (it was written over an hour
	// ago, so the read writes it again).
	s.Get("key0000000000000")
	rec := recordSize(16, 100)
	before := int64(len(segMagic)) + 11*rec
	bound := int64(len(segMagic)) + 4*rec
	n, freed, err := s.GC(bound)
	if err != nil || n != 6 || freed != before-bound {
		t.Fatalf("gc: removed %d, freed %d, %v; want 6 and %d", n, freed, err, before-bound)
	}
	if st, _ := s.Stats(); st.DiskBytes > bound || st.Entries != 4 {
		t.Errorf("after gc: %d entries, %d bytes of files; want 4 and at most %d", st.Entries, st.DiskBytes, bound)
	}
	for i, want := range []bool{true, false, false, false, false, false, false, true, true, true} {
		if _, ok := s.Get(fmt.Sprintf("key%013d", i)); ok != want {
			t.Errorf("key %d kept = %v, want %v", i, ok, want)
		}
	}
	if n, _, _ := s.GC(0); n != 4 {
		t.Errorf("gc 0 removed %d, want 4", n)
	}
	if segs, _ := filepath.Glob(filepath.Join(s.Dir(), "*")); len(segs) != 0 {
		t.Errorf("gc 0 left %v", segs)
	}
}

// TestManyProcesses: several processes writing and reading the same keys
// at once never see a partial value.
func TestManyProcesses(t *testing.T) {
	if dir := os.Getenv("STORE_TEST_WRITER"); dir != "" {
		s, _ := Open(dir)
		id, _ := strconv.Atoi(os.Getenv("STORE_TEST_ID"))
		val := make([]byte, 64<<10)
		for i := range val {
			val[i] = byte(id)
		}
		for i := range 200 {
			k := fmt.Sprintf("shared%010d", i%20)
			if err := s.Put(k, val); err != nil {
				fmt.Println("put:", err)
				os.Exit(1)
			}
			if b, ok := s.Get(k); ok {
				for _, c := range b[1:] {
					if c != b[0] || len(b) != len(val) {
						fmt.Println("torn value")
						os.Exit(1)
					}
				}
			}
		}
		os.Exit(0)
	}
	dir := t.TempDir()
	var wg sync.WaitGroup
	errs := make(chan string, 4)
	for id := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cmd := exec.Command(os.Args[0], "-test.run=^TestManyProcesses$")
			cmd.Env = append(os.Environ(), "STORE_TEST_WRITER="+dir, "STORE_TEST_ID="+strconv.Itoa(id+1))
			if out, err := cmd.CombinedOutput(); err != nil {
				errs <- fmt.Sprintf("writer %d: %v\n%s", id, err, out)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
	left, _ := filepath.Glob(filepath.Join(dir, "*.tmp"))
	if len(left) > 0 {
		t.Errorf("temporary files left: %v", left)
	}
	// A store opened afterwards sees every key whole, from one of the
	// writers.
	s, _ := Open(dir)
	for i := range 20 {
		b, ok := s.Get(fmt.Sprintf("shared%010d", i))
		if !ok || len(b) != 64<<10 || b[0] < 1 || b[0] > 4 {
			t.Errorf("key %d: %v, %d bytes", i, ok, len(b))
		}
	}
	if segs, _ := filepath.Glob(filepath.Join(dir, "*"+segExt)); len(segs) != 4 {
		t.Errorf("%d segments, want one per process: %v", len(segs), segs)
	}
}

// TestHashFileChanges: HashFile remembers a file's sum, and a file changed
// in any way that changes its bytes is read again — rewritten in place at
// the same size with its modification time put back, or replaced by
// another file through a rename.
func TestHashFileChanges(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "items.jsonl")
	sum := func(b string) string {
		h := sha256.Sum256([]byte(b))
		return hex.EncodeToString(h[:])
	}
	if err := os.WriteFile(p, []byte("aaaa"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := HashFile(p); got != sum("aaaa") {
		t.Fatalf("first hash %s", got)
	}
	if got := HashFile(p); got != sum("aaaa") {
		t.Fatalf("remembered hash %s", got)
	}
	st, _ := os.Stat(p)
	time.Sleep(10 * time.Millisecond) // a change time the filesystem can tell apart
	if err := os.WriteFile(p, []byte("bbbb"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(p, st.ModTime(), st.ModTime()); err != nil {
		t.Fatal(err)
	}
	if got := HashFile(p); got != sum("bbbb") {
		t.Fatalf("after an in-place rewrite with the same size and mtime: %s, want the new content's", got)
	}
	q := filepath.Join(dir, "new")
	if err := os.WriteFile(q, []byte("cccc"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(q, st.ModTime(), st.ModTime()); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(q, p); err != nil {
		t.Fatal(err)
	}
	if got := HashFile(p); got != sum("cccc") {
		t.Fatalf("after a rename over it: %s, want the new file's", got)
	}
	if got := HashFile(filepath.Join(dir, "missing")); got != "" {
		t.Fatalf("a missing file hashed to %q", got)
	}
}

// BenchmarkHashFile: what a run saves for each pass over an input it no
// longer reads (docs/benchmarks.md, "Seventh pass"): a 16 MB file hashed
// after a change (read: SHA-256 over every byte) and unchanged
// (remembered: one stat).
func BenchmarkHashFile(b *testing.B) {
	p := filepath.Join(b.TempDir(), "items.jsonl")
	if err := os.WriteFile(p, make([]byte, 16<<20), 0o644); err != nil {
		b.Fatal(err)
	}
	b.Run("read", func(b *testing.B) {
		b.SetBytes(16 << 20)
		for i := 0; b.Loop(); i++ {
			t := time.Unix(int64(i), 0)
			if err := os.Chtimes(p, t, t); err != nil {
				b.Fatal(err)
			}
			if HashFile(p) == "" {
				b.Fatal("no hash")
			}
		}
	})
	b.Run("remembered", func(b *testing.B) {
		for b.Loop() {
			if HashFile(p) == "" {
				b.Fatal("no hash")
			}
		}
	})
}

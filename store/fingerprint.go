package store

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"syscall"
)

// TreeFingerprint identifies the content of a directory cheaply: the
// relative path, size and modification time of every regular file under
// it (symlinks followed at the top only). Hashing every byte of a
// benchmark's databases (gigabytes for BIRD) on every run would cost
// seconds; a database changed in place changes its size or mtime. It is
// weaker than a content hash, and docs/output.md says so. (Used by run
// fingerprints and by the stage cache for database directories.)
func TreeFingerprint(dir string) string {
	root, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return "missing"
	}
	h := sha256.New()
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.Type().IsRegular() {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		fmt.Fprintf(h, "%s\x00%d\x00%d\n", rel, info.Size(), info.ModTime().UnixNano())
		return nil
	})
	if err != nil {
		return "unreadable"
	}
	return hex.EncodeToString(h.Sum(nil))
}

// InputFingerprint is the content hash of a file or the tree fingerprint of
// a directory ("" when path names neither).
func InputFingerprint(path string) string {
	st, err := os.Stat(path)
	if err != nil {
		return ""
	}
	if st.IsDir() {
		return "tree:" + TreeFingerprint(path)
	}
	if !st.Mode().IsRegular() {
		return ""
	}
	return "sha256:" + HashFile(path)
}

// HashFile returns the hex SHA-256 of a regular file's bytes ("" if
// unreadable or not a regular file). A file hashed before by this process
// is not read again while it is the same file (same device and inode)
// with the same size, modification time and change time: a run hashes
// its dataset and predictions for its fingerprint, its manifest at the
// start and its manifest at the end, and a change to the file (even one
// that restores the modification time) moves its change time.
func HashFile(path string) string {
	st, err := os.Stat(path)
	if err != nil || !st.Mode().IsRegular() {
		return "" // a FIFO or device: opening it again would block
	}
	hashed.Lock()
	e, ok := hashed.m[path]
	hashed.Unlock()
	if ok && sameContent(e.info, st) {
		return e.sum
	}
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return ""
	}
	sum := hex.EncodeToString(h.Sum(nil))
	hashed.Lock()
	if hashed.m == nil {
		hashed.m = map[string]hashedFile{}
	}
	hashed.m[path] = hashedFile{info: st, sum: sum}
	hashed.Unlock()
	return sum
}

// hashed remembers HashFile's sums by path.
var hashed struct {
	sync.Mutex
	m map[string]hashedFile
}

type hashedFile struct {
	info fs.FileInfo // as it was when hashed (stat before reading)
	sum  string
}

// sameContent reports whether b describes the file a described, unchanged
// by anything that would change its bytes.
func sameContent(a, b fs.FileInfo) bool {
	if !os.SameFile(a, b) || a.Size() != b.Size() || !a.ModTime().Equal(b.ModTime()) {
		return false
	}
	sa, ok1 := a.Sys().(*syscall.Stat_t)
	sb, ok2 := b.Sys().(*syscall.Stat_t)
	return ok1 && ok2 && sa.Ctim == sb.Ctim
}

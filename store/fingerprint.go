package store

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
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
// unreadable or not a regular file).
func HashFile(path string) string {
	if st, err := os.Stat(path); err != nil || !st.Mode().IsRegular() {
		return "" // a FIFO or device: opening it again would block
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
	return hex.EncodeToString(h.Sum(nil))
}

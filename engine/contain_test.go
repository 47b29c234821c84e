package engine_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/evalflow/evalflow/engine"
)

func TestWithin(t *testing.T) {
	dir := t.TempDir()
	root := filepath.Join(dir, "root")
	os.MkdirAll(filepath.Join(root, "in"), 0o755)
	os.MkdirAll(filepath.Join(dir, "out"), 0o755)
	os.Symlink(filepath.Join(dir, "out"), filepath.Join(root, "escape"))
	os.Symlink(filepath.Join(root, "in"), filepath.Join(root, "alias"))
	os.Symlink(filepath.Join(dir, "out", "later.ttl"), filepath.Join(root, "dangling-out"))
	os.Symlink(filepath.Join("in", "later.ttl"), filepath.Join(root, "dangling-in"))
	os.Symlink("loop", filepath.Join(root, "loop"))
	r, err := engine.Resolve(root)
	if err != nil {
		t.Fatal(err)
	}
	for path, ok := range map[string]bool{
		filepath.Join(root, "in", "a.sqlite"):           true,
		filepath.Join(root, "missing", "x", "a.sqlite"): true, // not there yet: lexical
		filepath.Join(root, "alias", "a.sqlite"):        true,
		root:                                            true,
		filepath.Join(root, "..", "out", "a.sqlite"):    false,
		filepath.Join(root, "escape", "a.sqlite"):       false,
		filepath.Join(root, "dangling-out"):             false, // its target may appear later
		filepath.Join(root, "dangling-in"):              true,
		filepath.Join(root, "loop"):                     false,
		filepath.Join(root, "missing", "..", "..", "x"): false,
		filepath.Join(dir, "rootx", "a.sqlite"):         false, // a sibling sharing the prefix
		"/etc/passwd":                                   false,
	} {
		err := engine.Within(r, path)
		if (err == nil) != ok {
			t.Errorf("Within(%s) = %v, want ok=%v", path, err, ok)
		}
		if err != nil && !engine.Unavailable(err) {
			t.Errorf("Within(%s): not a harness error", path)
		}
	}
	if err := engine.Within("", filepath.Join(root, "in")); err == nil {
		t.Error("an empty root accepted a path")
	}
}

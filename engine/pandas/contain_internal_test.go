package pandas

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/evalflow/evalflow/engine"
)

// TestInputsStayInsideRoot: the tables a db names — a directory's files, a
// glob's matches — are each checked against the root, so a symlink inside
// the root that points out is refused before anything is opened.
func TestInputsStayInsideRoot(t *testing.T) {
	dir := t.TempDir()
	root := filepath.Join(dir, "data")
	os.MkdirAll(filepath.Join(root, "shop"), 0o755)
	os.MkdirAll(filepath.Join(dir, "secret"), 0o755)
	os.WriteFile(filepath.Join(root, "shop", "a.csv"), []byte("x\n1\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "secret", "s.csv"), []byte("x\n42\n"), 0o644)
	rroot, _ := engine.Resolve(root)
	c := &converter{}
	defer c.close()
	in, err := c.inputs(filepath.Join(root, "shop"), rroot)
	if err != nil || len(in) != 1 {
		t.Fatalf("inside: %v (%d tables)", err, len(in))
	}
	closeAll(in)
	os.Symlink(filepath.Join(dir, "secret", "s.csv"), filepath.Join(root, "shop", "b.csv"))
	for _, db := range []string{filepath.Join(root, "shop"), filepath.Join(root, "shop", "*.csv"), filepath.Join(root, "shop", "b.csv")} {
		if _, err := c.inputs(db, rroot); err == nil || !strings.Contains(err.Error(), "resolves outside its root") || !engine.Unavailable(err) {
			t.Errorf("%s: err = %v, want a refusal naming the root", db, err)
		}
	}
}

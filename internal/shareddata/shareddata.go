// Package shareddata locates the benchmark data the tests read in place:
// ../shared/data beside the checkout (the directory holding go.mod), never
// copied into the repository. One locator for every package's tests.
package shareddata

import (
	"os"
	"path/filepath"
	"testing"
)

// Dir returns ../shared/data joined with elem, relative to the repository
// root. When it is missing the test fails if CI is set (CI puts ../shared
// beside the checkout) and is skipped otherwise.
func Dir(t testing.TB, elem ...string) string {
	t.Helper()
	root, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(root, "go.mod")); err == nil {
			break
		}
		parent := filepath.Dir(root)
		if parent == root {
			t.Fatal("no go.mod above the test's directory")
		}
		root = parent
	}
	p := filepath.Join(append([]string{root, "..", "shared", "data"}, elem...)...)
	if _, err := os.Stat(p); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("shared test data not found at %s (CI needs ../shared beside the checkout): %v", p, err)
		}
		t.Skipf("shared test data not found at %s; skipping", p)
	}
	return p
}

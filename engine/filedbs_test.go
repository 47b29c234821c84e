package engine

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

type noConnector struct{}

func (noConnector) Connect(context.Context) (driver.Conn, error) { return nil, errors.New("unused") }
func (noConnector) Driver() driver.Driver                        { return nil }

func TestFileDBs(t *testing.T) {
	dir := t.TempDir()
	var files []string
	for _, n := range []string{"a", "b", "c"} {
		p := filepath.Join(dir, n+".db")
		os.WriteFile(p, nil, 0o644)
		files = append(files, p)
	}
	opened := 0
	c := &FileDBs{Name: "test", Max: 2, Open: func(string) (*sql.DB, error) { opened++; return sql.OpenDB(noConnector{}), nil }}

	a, err := c.Acquire(files[0])
	if err != nil {
		t.Fatal(err)
	}
	again, _ := c.Acquire(files[0])
	if again != a || opened != 1 {
		t.Fatalf("the same path opened twice (%d opens)", opened)
	}
	c.Release(again)
	b, _ := c.Acquire(files[1])
	c.Release(b)
	// A third database evicts the least recently used (a), which is still
	// in use: it stays usable until its last release.
	x, _ := c.Acquire(files[2])
	c.Release(x)
	if c.Len() != 2 {
		t.Errorf("Len = %d, want 2", c.Len())
	}
	if err := a.DB.Ping(); err == nil || strings.Contains(err.Error(), "closed") {
		t.Errorf("an evicted database in use was closed: %v", err)
	}
	c.Release(a)
	if err := a.DB.Ping(); err == nil || !strings.Contains(err.Error(), "closed") {
		t.Errorf("an evicted database was not closed by its last release: %v", err)
	}

	for _, tt := range []struct{ path, want string }{
		{"", "no database given"},
		{filepath.Join(dir, "missing.db"), "database file not found"},
		{dir, "is a directory"},
	} {
		if _, err := c.Acquire(tt.path); err == nil || !strings.Contains(err.Error(), tt.want) || ClassOf(err) != "execution" {
			t.Errorf("Acquire(%q) = %v, want %q", tt.path, err, tt.want)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "missing.db")); err == nil {
		t.Error("Acquire created a missing database file")
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Acquire(files[0]); err == nil || !strings.Contains(err.Error(), "closed") {
		t.Errorf("Acquire after Close = %v", err)
	}
}

// TestSuiteFilesLayout: a folder named after its database is a suite
// (every other file holding the marker, by name); a database in a shared
// flat folder is one database, whatever else the folder holds.
func TestSuiteFilesLayout(t *testing.T) {
	root := t.TempDir()
	mk := func(rel string) string {
		p := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	shop := mk("shop/shop.sqlite")
	mk("shop/shop_002.sqlite")
	mk("shop/shop_001.sqlite")
	mk("shop/notes.txt")
	got, err := SuiteFiles(shop, ".sqlite")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{filepath.Join(root, "shop", "shop_001.sqlite"), filepath.Join(root, "shop", "shop_002.sqlite")}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("suite folder: got %v, want %v", got, want)
	}
	flat := mk("flat/a.sqlite")
	mk("flat/b.sqlite")
	if got, err := SuiteFiles(flat, ".sqlite"); err != nil || len(got) != 0 {
		t.Errorf("flat folder: got %v, %v; want no other test database", got, err)
	}
}

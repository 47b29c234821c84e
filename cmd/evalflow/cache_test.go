package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/evalflow/evalflow/cache"
	"github.com/evalflow/evalflow/store"
)

func TestCacheCommand(t *testing.T) {
	dir := t.TempDir()
	s, err := cache.Open(filepath.Join(dir, "llm"))
	if err != nil {
		t.Fatal(err)
	}
	key, _ := cache.Key("request")
	s.Put(&cache.Entry{Key: key, Kind: "completion", Provider: "openai", Model: "gpt-x",
		Request: json.RawMessage(`{"messages":[{"role":"user","content":"How many users?"}]}`), Response: json.RawMessage(`{"text":"SELECT count(*) FROM users"}`)})
	s.Close()
	runCache := func(args ...string) (int, string) {
		var out, errb bytes.Buffer
		code := cmdCache(append([]string{"-dir", dir}, args...), &out, &errb)
		return code, out.String() + errb.String()
	}
	if code, out := runCache("stats"); code != 0 || !strings.Contains(out, "entries      1") || !strings.Contains(out, "openai gpt-x") ||
		!strings.Contains(out, "files        1 segments, ") {
		t.Errorf("stats: %d %s", code, out)
	}
	if code, out := runCache("explain", key[:10]); code != 0 || !strings.Contains(out, "How many users?") || !strings.Contains(out, "SELECT count(*)") {
		t.Errorf("explain: %d %s", code, out)
	}
	if code, out := runCache("clear"); code != 0 || !strings.Contains(out, "removed 1 entries from") {
		t.Errorf("clear: %d %s", code, out)
	}
	if code, _ := runCache("explain", key); code != exitRun {
		t.Errorf("explain after clear: %d", code)
	}
	if code, _ := runCache("bogus"); code != exitConfig {
		t.Errorf("bogus: %d", code)
	}
}

// TestCacheGCStages: gc trims the stage cache's segment files to the bound,
// least recently used entries first, and stats counts what is left.
func TestCacheGCStages(t *testing.T) {
	dir := t.TempDir()
	d, err := store.Open(filepath.Join(dir, "stages"))
	if err != nil {
		t.Fatal(err)
	}
	for i := range 10 {
		if err := d.Put(fmt.Sprintf("q%015d", i), bytes.Repeat([]byte{'x'}, 1000)); err != nil {
			t.Fatal(err)
		}
	}
	d.Close()
	runCache := func(args ...string) (int, string) {
		var out, errb bytes.Buffer
		code := cmdCache(append([]string{"-dir", dir}, args...), &out, &errb)
		return code, out.String() + errb.String()
	}
	if code, out := runCache("stats"); code != 0 || !strings.Contains(out, "stage cache  "+filepath.Join(dir, "stages")+"\nentries      10\nbytes        10000\nfiles        1 segments, ") {
		t.Errorf("stats: %d %s", code, out)
	}
	if code, out := runCache("gc", "-max-bytes", "5000"); code != 0 || !strings.Contains(out, filepath.Join(dir, "stages")+": removed 6 entries") {
		t.Errorf("gc: %d %s", code, out)
	}
	if code, out := runCache("stats"); code != 0 || !strings.Contains(out, "entries      4\nbytes        4000\n") {
		t.Errorf("stats after gc: %d %s", code, out)
	}
	if code, out := runCache("gc", "-max-bytes", "0"); code != 0 || !strings.Contains(out, "removed 4 entries") {
		t.Errorf("gc 0: %d %s", code, out)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, "stages", "*")); len(left) != 0 {
		t.Errorf("gc 0 left %v", left)
	}
}

package main

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/evalflow/evalflow/cache"
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
	if code, out := runCache("stats"); code != 0 || !strings.Contains(out, "entries      1") || !strings.Contains(out, "openai gpt-x") {
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

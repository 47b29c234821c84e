package main

import (
	"bufio"
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	_ "modernc.org/sqlite"

	"github.com/evalflow/evalflow/internal/shareddata"
)

// TestWide: kind wide writes the same files for the same size, every
// query text is distinct, and every query runs on geography.sqlite and
// returns rows (the workload is about results of many rows).
func TestWide(t *testing.T) {
	geo := shareddata.Dir(t, "geoquery", "geography.sqlite")
	a, b := t.TempDir(), t.TempDir()
	for _, d := range []string{a, b} {
		if err := writeWide(d, 300); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{"items.jsonl", "preds.jsonl"} {
		x, _ := os.ReadFile(filepath.Join(a, f))
		y, _ := os.ReadFile(filepath.Join(b, f))
		if len(x) == 0 || !bytes.Equal(x, y) {
			t.Fatalf("%s: two runs wrote different files (%d and %d bytes)", f, len(x), len(y))
		}
	}
	var texts []string
	for _, f := range []struct{ file, field string }{{"items.jsonl", "gold"}, {"preds.jsonl", "pred"}} {
		fh, err := os.Open(filepath.Join(a, f.file))
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(fh)
		for sc.Scan() {
			var m map[string]string
			if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
				t.Fatal(err)
			}
			texts = append(texts, m[f.field])
		}
		fh.Close()
	}
	if len(texts) != 600 {
		t.Fatalf("%d query texts, want 600", len(texts))
	}
	db, err := sql.Open("sqlite", "file:"+geo+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	seen := map[string]bool{}
	rows := 0
	for _, q := range texts {
		if seen[q] {
			t.Fatalf("query text repeated: %s", q)
		}
		seen[q] = true
		rs, err := db.QueryContext(context.Background(), q)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		for rs.Next() {
			rows++
		}
		if err := rs.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if rows < 20*len(texts) {
		t.Errorf("%d rows for %d queries: not the wide results the workload is for", rows, len(texts))
	}
}

package main

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/evalflow/evalflow/suite"
)

// TestCmdSuite runs "suite build" on a two-item dataset over a database of
// our own and checks the layout the testsuite profile reads.
func TestCmdSuite(t *testing.T) {
	dir := t.TempDir()
	dbs := filepath.Join(dir, "dbs")
	if err := os.MkdirAll(filepath.Join(dbs, "shop"), 0o755); err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite", "file:"+filepath.Join(dbs, "shop", "shop.sqlite"))
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{
		`CREATE TABLE customer (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE)`,
		`CREATE TABLE orders (id INTEGER PRIMARY KEY, customer_id INTEGER NOT NULL REFERENCES customer(id), total INTEGER)`,
		`INSERT INTO customer VALUES (1, 'ann'), (2, 'bob')`,
		`INSERT INTO orders VALUES (1, 1, 10), (2, 2, 30)`,
	} {
		if _, err := db.Exec(s); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()
	ds := filepath.Join(dir, "q.jsonl")
	data := `{"id": "q1", "question": "big orders", "gold": "SELECT c.name FROM orders AS o JOIN customer AS c ON o.customer_id = c.id WHERE o.total > 20", "db": "shop"}
{"id": "q2", "question": "count", "gold": "SELECT count(*) FROM orders WHERE total >= 10", "db": "shop"}
`
	if err := os.WriteFile(ds, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	var stdout, stderr bytes.Buffer
	code := cmdSuite(context.Background(), []string{"build", "-dataset", ds, "-databases", dbs, "-out", out, "-seed", "3", "-samples", "40"}, &stdout, &stderr)
	if code != exitOK {
		t.Fatalf("exit %d\n%s", code, stderr.String())
	}
	if !strings.Contains(stdout.String(), "| shop | 2 |") {
		t.Errorf("summary has no line for shop:\n%s", stdout.String())
	}
	b, err := os.ReadFile(filepath.Join(out, "suite.json"))
	if err != nil {
		t.Fatal(err)
	}
	var rep suite.Report
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	if len(rep.Databases) != 1 || rep.Databases[0].DB != "shop" || rep.Seed != 3 || len(rep.Databases[0].Kept) == 0 {
		t.Fatalf("unexpected report: %s", b)
	}
	for _, f := range append([]string{"shop.sqlite"}, rep.Databases[0].Kept[0].File) {
		if _, err := os.Stat(filepath.Join(out, "shop", f)); err != nil {
			t.Error(err)
		}
	}
	if d := rep.Databases[0]; rep.Totals == nil || d.Separable < d.Separated || d.SeparationRate <= 0 || rep.Totals.SeparationRate != d.SeparationRate {
		t.Errorf("no separation rate in the report: %s", b)
	}
	if !strings.Contains(stderr.String(), "rate ") || !strings.Contains(stdout.String(), "| rate |") {
		t.Errorf("the rate is not shown:\n%s\n%s", stderr.String(), stdout.String())
	}
	if rep.Databases[0].Kept[0].File != "shop_001.sqlite" {
		t.Errorf("first kept database is %s, want shop_001.sqlite", rep.Databases[0].Kept[0].File)
	}
	if _, err := os.Stat(filepath.Join(out, "summary.md")); err != nil {
		t.Error(err)
	}
}

func TestCmdSuiteErrors(t *testing.T) {
	tests := []struct {
		name string
		args []string
		code int
		msg  string
	}{
		{"no subcommand", nil, exitConfig, "Usage: evalflow suite build"},
		{"missing flags", []string{"build", "-dataset", "x.jsonl"}, exitConfig, "Usage: evalflow suite build"},
		{"bad engine", []string{"build", "-dataset", "x.jsonl", "-databases", ".", "-out", "o", "-engine", "mysql"}, exitConfig, "-engine must be sqlite or duckdb"},
		{"bad compare", []string{"build", "-dataset", "x.jsonl", "-databases", ".", "-out", "o", "-compare", "nope"}, exitConfig, "unknown -compare"},
		{"help", []string{"build", "-h"}, exitOK, "-max-dbs"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			if code := cmdSuite(context.Background(), tt.args, &stdout, &stderr); code != tt.code {
				t.Errorf("exit %d, want %d", code, tt.code)
			}
			if !strings.Contains(stderr.String(), tt.msg) {
				t.Errorf("stderr does not say %q:\n%s", tt.msg, stderr.String())
			}
		})
	}
}

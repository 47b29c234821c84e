package rundir

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/evalflow/evalflow/dsl"
	"github.com/evalflow/evalflow/item"
	"github.com/evalflow/evalflow/nodes/aggregate"
	"github.com/evalflow/evalflow/sinks"
	"github.com/evalflow/evalflow/table"
)

func record(seq int, id string, match bool) *item.Record {
	res := &table.Table{Columns: []table.Column{{Name: "n", Type: table.TypeInt}}, Rows: [][]table.Value{{int64(3)}}}
	m := match
	a := &item.Attempt{Query: "SELECT 3", Raw: "SELECT 3", Validated: true, Valid: true, Executed: true, Result: res, Match: &m,
		InputTokens: 10, OutputTokens: 3, Cost: 0.5, CacheHit: match}
	r := &item.Record{Seq: seq, Item: item.Item{ID: id, Question: "how many", Gold: "SELECT 3", DB: "shop",
		Fields: []item.Field{{Name: "difficulty", Value: "easy"}, {Name: "weight", Value: int64(2)}, {Name: "gold_rows", Value: int64(7)}, {Name: "ex", Value: "x"}}},
		GoldDone: true, GoldResult: res, Samples: []*item.Sample{{Attempts: []*item.Attempt{a}}}, Status: "ok"}
	v := 0.0
	if match {
		v = 1
	}
	r.SetScore(item.Score{Name: "ex", Value: v})
	r.SetScore(item.Score{Name: "pass_at_k", Null: true})
	return r
}

func TestRunDirectoryRoundTrip(t *testing.T) {
	dir := t.TempDir()
	qas := &dsl.Sink{Name: "qas", Kind: "qas_jsonl", Table: "items", Path: "evaluation-results.jsonl", Agent: "a1", Difficulty: "difficulty",
		Options: map[string]any{"semantic": 1.0}}
	js := &dsl.Sink{Name: "j", Kind: "jsonl", Table: "attempts", Path: "attempts.jsonl"}
	r, err := Create(dir, []string{"ex", "pass_at_k"}, []*dsl.Sink{qas, js}, false)
	if err != nil {
		t.Fatal(err)
	}
	rec2 := record(1, "b", false)
	rec2.Item.Fields[1].Value = 2.5 // a float in an int column becomes NULL, not an error
	rec2.SetScore(item.Score{Name: "ex", Err: "boom"})
	rec2.SetScore(item.Score{Name: "pass_at_k", Value: 0.5, Note: "because"})
	for _, rec := range []*item.Record{record(0, "a", true), rec2} {
		if err := r.Write(rec); err != nil {
			t.Fatal(err)
		}
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if c := r.Counts; c.InputTokens != 20 || c.OutputTokens != 6 || c.Cost != 1 || c.CacheHits != 1 || c.Items != 2 {
		t.Errorf("counts = %+v", c)
	}
	if err := r.WriteAggregates([]aggregate.Row{{Stage: "aggregate", Group: "all", Metric: "ex", Items: 2, N: 2, Mean: 0.5, Sum: 1}}); err != nil {
		t.Fatal(err)
	}
	schema, rows, err := sinks.ReadParquetRows(filepath.Join(dir, ItemsFile))
	if err != nil {
		t.Fatal(err)
	}
	col := map[string]int{}
	for i, c := range schema {
		col[c.Name] = i
	}
	if len(rows) != 2 {
		t.Fatalf("rows = %d", len(rows))
	}
	got := []any{rows[0][col["id"]], rows[0][col["ex"]], rows[0][col["pass_at_k"]], rows[0][col["weight"]], rows[1][col["weight"]], rows[1][col["metric_errors"]], rows[0][col["difficulty"]],
		rows[0][col["gold_rows"]], rows[0][col["data_gold_rows"]], rows[0][col["data_ex"]], rows[1][col["metric_notes"]], rows[0][col["metric_notes"]]}
	want := []any{"a", 1.0, nil, int64(2), nil, `{"ex":"boom"}`, "easy", int64(1), int64(7), "x", `{"pass_at_k":"because"}`, nil}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("items (-want +got):\n%s", diff)
	}
	if schema[col["seq"]].Type != table.TypeInt || schema[col["ex"]].Type != table.TypeFloat || schema[col["valid"]].Type != table.TypeBool {
		t.Errorf("column types: %+v", schema)
	}
	_, arows, err := sinks.ReadParquetRows(filepath.Join(dir, AttemptsFile))
	if err != nil || len(arows) != 2 {
		t.Fatalf("attempts: %v %d", err, len(arows))
	}
	_, grows, err := sinks.ReadParquetRows(filepath.Join(dir, AggregatesFile))
	if err != nil || len(grows) != 1 {
		t.Fatalf("aggregates: %v %d", err, len(grows))
	}
	b, err := os.ReadFile(filepath.Join(dir, "evaluation-results.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) != 2 {
		t.Fatalf("qas lines: %q", b)
	}
	var first map[string]any
	if err := json.Unmarshal([]byte(lines[0]), &first); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"test_id", "question", "agent_used", "difficulty", "expected_sql", "generated_sql", "expected_results", "actual_results", "qas_evaluation"} {
		if _, ok := first[k]; !ok {
			t.Errorf("qas line lacks %q: %s", k, lines[0])
		}
	}
	if first["agent_used"] != "a1" || first["difficulty"] != "easy" {
		t.Errorf("qas line: %s", lines[0])
	}
	if b, err := os.ReadFile(filepath.Join(dir, "attempts.jsonl")); err != nil || strings.Count(string(b), "\n") != 2 {
		t.Errorf("attempts.jsonl: %v %q", err, b)
	}
}

func TestOpenRefusesOtherInputs(t *testing.T) {
	dir := t.TempDir()
	m := &Manifest{RunID: "r1", Status: "cancelled", Fingerprint: Fingerprint{"pipeline": "a", "limit": "0"}}
	b, _ := json.Marshal(m)
	os.WriteFile(filepath.Join(dir, ManifestName), b, 0o644)
	_, err := Open(dir, Config{Fingerprint: Fingerprint{"pipeline": "b", "limit": "0", "var:x": "1"}})
	var mm *ErrMismatch
	if !errors.As(err, &mm) || strings.Join(mm.Differ, ",") != "pipeline,var:x" {
		t.Fatalf("err = %v, want a mismatch naming pipeline and var:x", err)
	}
	r, err := Open(dir, Config{Fingerprint: Fingerprint{"pipeline": "b"}, Overwrite: true})
	if err != nil {
		t.Fatal(err)
	}
	r.Close()
	r.Finish()
	m.Status = "complete"
	b, _ = json.Marshal(m)
	os.WriteFile(filepath.Join(dir, ManifestName), b, 0o644)
	var done *ErrComplete
	if _, err := Open(dir, Config{Fingerprint: m.Fingerprint}); !errors.As(err, &done) {
		t.Errorf("complete run: err = %v, want ErrComplete", err)
	}
}

func TestLockStopsASecondWriter(t *testing.T) {
	dir := t.TempDir()
	r, err := Open(dir, Config{})
	if err != nil {
		t.Fatal(err)
	}
	var locked *ErrLocked
	if _, err := Open(dir, Config{}); !errors.As(err, &locked) || locked.PID != strconv.Itoa(os.Getpid()) {
		t.Errorf("second open: err = %v, want ErrLocked naming pid %d", err, os.Getpid())
	}
	if Stale(dir) {
		t.Error("Stale while the lock is held")
	}
	r.Close()
	r.Finish()
	if !Stale(dir) {
		t.Error("not Stale after the lock was released")
	}
}

func TestEmptyRunStillWritesValidFiles(t *testing.T) {
	dir := t.TempDir()
	r, err := Create(dir, []string{"ex"}, nil, false)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	schema, rows, err := sinks.ReadParquetRows(filepath.Join(dir, ItemsFile))
	if err != nil || len(rows) != 0 || len(schema) == 0 {
		t.Errorf("empty items.parquet: %v %d %d", err, len(rows), len(schema))
	}
}

func TestItemStatus(t *testing.T) {
	for _, tt := range []struct{ status, class, want string }{
		{"ok", "", "ok"}, {"ok", item.ClassTimeout, "timeout"}, {"ok", item.ClassSafety, "unsafe"},
		{"ok", item.ClassSyntax, "ok"}, {"error", item.ClassTimeout, "error"}, {"cancelled", "", "cancelled"},
	} {
		r := record(0, "a", false)
		r.Status = tt.status
		r.Final().ErrorClass = tt.class
		if got := ItemStatus(r); got != tt.want {
			t.Errorf("status %q class %q: got %q, want %q", tt.status, tt.class, got, tt.want)
		}
	}
}

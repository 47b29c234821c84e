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

// streamRecords are n records with every status and one or two attempts,
// enough for several parts and several stream batches.
func streamRecords(n int) []*item.Record {
	recs := make([]*item.Record, n)
	for i := range recs {
		r := record(i, "q"+strconv.Itoa(i), i%3 == 0)
		switch i % 7 {
		case 1:
			r.Status, r.Error = "error", "gold failed"
		case 2:
			r.Final().ErrorClass = item.ClassTimeout
		case 3:
			r.Status = "cancelled"
		case 4:
			a := *r.Final()
			a.Index, a.ErrorClass = 1, "syntax"
			r.Samples[0].Attempts = append(r.Samples[0].Attempts, &a)
		}
		recs[i] = r
	}
	return recs
}

// writeRun writes recs to a fresh run directory and closes it; noStream
// makes Close merge the parts (the behaviour without the stream).
func writeRun(t *testing.T, recs []*item.Record, noStream bool, sinkBlocks ...*dsl.Sink) (string, *Run) {
	t.Helper()
	dir := t.TempDir()
	r, err := Open(dir, Config{MetricCols: []string{"ex", "pass_at_k"}, Sinks: sinkBlocks, FlushItems: 97})
	if err != nil {
		t.Fatal(err)
	}
	r.noStream = noStream
	for _, rec := range recs {
		if err := r.Write(rec); err != nil {
			t.Fatal(err)
		}
	}
	if streamed := r.stream != nil; streamed == noStream {
		t.Fatalf("streaming = %v, want %v", streamed, !noStream)
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if tmps, _ := filepath.Glob(filepath.Join(dir, "*.tmp")); len(tmps) > 0 {
		t.Errorf("temporary files left after Close: %v", tmps)
	}
	return dir, r
}

func readTables(t *testing.T, dir string) map[string][][]any {
	t.Helper()
	out := map[string][][]any{}
	for _, f := range []string{ItemsFile, AttemptsFile} {
		_, rows, err := sinks.ReadParquetRows(filepath.Join(dir, f))
		if err != nil {
			t.Fatal(err)
		}
		out[f] = rows
	}
	return out
}

// TestStreamedMergeEqualsPartsMerge: the merged files written while the
// run goes hold exactly what merging the parts gives, in the same order,
// and the counts agree; per-item sinks are still merged from the parts.
func TestStreamedMergeEqualsPartsMerge(t *testing.T) {
	recs := streamRecords(1500)
	qas := &dsl.Sink{Name: "qas", Kind: "qas_jsonl", Table: "items", Path: "evaluation-results.jsonl", Agent: "a1", Difficulty: "difficulty"}
	streamed, rs := writeRun(t, recs, false, qas)
	merged, rm := writeRun(t, recs, true, qas)
	if diff := cmp.Diff(readTables(t, merged), readTables(t, streamed)); diff != "" {
		t.Errorf("streamed files differ from the merged parts (-merged +streamed):\n%s", diff)
	}
	if diff := cmp.Diff(rm.Counts, rs.Counts); diff != "" {
		t.Errorf("counts (-merged +streamed):\n%s", diff)
	}
	if rs.Counts.Items != len(recs) || rs.Counts.Cancelled == 0 || rs.Counts.Errors == 0 || rs.Counts.Attempts <= len(recs) {
		t.Errorf("counts = %+v", rs.Counts)
	}
	a, _ := os.ReadFile(filepath.Join(streamed, "evaluation-results.jsonl"))
	b, _ := os.ReadFile(filepath.Join(merged, "evaluation-results.jsonl"))
	if len(a) == 0 || string(a) != string(b) {
		t.Errorf("qas sink: %d bytes streamed, %d merged, or they differ", len(a), len(b))
	}
}

// TestNoStreamWithFileSinks: a file sink of items or attempts is merged from
// the parts with the main files, so the run does not stream.
func TestNoStreamWithFileSinks(t *testing.T) {
	js := &dsl.Sink{Name: "j", Kind: "jsonl", Table: "attempts", Path: "attempts.jsonl"}
	dir := t.TempDir()
	r, err := Open(dir, Config{MetricCols: []string{"ex", "pass_at_k"}, Sinks: []*dsl.Sink{js}})
	if err != nil {
		t.Fatal(err)
	}
	for _, rec := range streamRecords(50) {
		if err := r.Write(rec); err != nil {
			t.Fatal(err)
		}
	}
	if r.stream != nil {
		t.Error("a run with a file sink of attempts streams")
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "attempts.jsonl")); err != nil || strings.Count(string(b), "\n") < 50 {
		t.Errorf("attempts.jsonl: %v, %d lines", err, strings.Count(string(b), "\n"))
	}
}

// failingWriter fails its Write after ok rows.
type failingWriter struct{ ok int }

func (w *failingWriter) Write([]any) error {
	if w.ok == 0 {
		return errors.New("disk full")
	}
	w.ok--
	return nil
}

func (w *failingWriter) Close() error { return nil }

// TestStreamFailureFallsBackToParts: a stream that fails (a full disk,
// say) does not fail the run: Close merges the parts instead.
func TestStreamFailureFallsBackToParts(t *testing.T) {
	recs := streamRecords(700)
	want := readTables(t, func() string { d, _ := writeRun(t, recs, true); return d }())
	dir := t.TempDir()
	r, err := Open(dir, Config{MetricCols: []string{"ex", "pass_at_k"}, FlushItems: 97})
	if err != nil {
		t.Fatal(err)
	}
	for i, rec := range recs {
		if err := r.Write(rec); err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			// No batch has reached the stream's goroutine yet.
			o := &r.stream.outs[tableItems]
			o.w.Close()
			o.w = &failingWriter{ok: 300}
		}
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, readTables(t, dir)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if r.Counts.Items != len(recs) {
		t.Errorf("counts = %+v", r.Counts)
	}
	if tmps, _ := filepath.Glob(filepath.Join(dir, "*.tmp")); len(tmps) > 0 {
		t.Errorf("temporary files left: %v", tmps)
	}
}

// TestStreamTempsRemoved: Abandon removes the stream's temporary files and
// keeps the parts; temporary merged files a killed process left are
// removed when the directory is opened again, fresh or resumed.
func TestStreamTempsRemoved(t *testing.T) {
	dir := t.TempDir()
	fp := Fingerprint{"pipeline": "p"}
	r, err := Open(dir, Config{MetricCols: []string{"ex"}, Fingerprint: fp, FlushItems: 10})
	if err != nil {
		t.Fatal(err)
	}
	if err := r.WriteJSON(ManifestName, &Manifest{Status: "running", Fingerprint: fp}); err != nil {
		t.Fatal(err)
	}
	for i := range 25 {
		if err := r.Write(record(i, "q"+strconv.Itoa(i), true)); err != nil {
			t.Fatal(err)
		}
	}
	if tmps, _ := filepath.Glob(filepath.Join(dir, "*.parquet.tmp")); len(tmps) != 2 {
		t.Errorf("while the run goes: %v, want items and attempts .tmp", tmps)
	}
	if err := r.Flush(); err != nil {
		t.Fatal(err)
	}
	r.Abandon()
	if tmps, _ := filepath.Glob(filepath.Join(dir, "*.tmp")); len(tmps) > 0 {
		t.Errorf("after Abandon: %v", tmps)
	}
	if parts, _ := filepath.Glob(filepath.Join(dir, PartsDir, "items-*.parquet")); len(parts) != 3 {
		t.Errorf("after Abandon: %d item parts, want 3", len(parts))
	}
	// A killed process leaves them behind.
	for _, f := range []string{ItemsFile, AttemptsFile} {
		os.WriteFile(filepath.Join(dir, f+".tmp"), []byte("PAR1 torn"), 0o644)
	}
	kept := 0
	r, err = Open(dir, Config{MetricCols: []string{"ex"}, Fingerprint: fp, OnKept: func(*item.Record) { kept++ }})
	if err != nil {
		t.Fatal(err)
	}
	if tmps, _ := filepath.Glob(filepath.Join(dir, "*.tmp")); len(tmps) > 0 {
		t.Errorf("after resuming: %v", tmps)
	}
	if kept != 25 {
		t.Errorf("resumed with %d kept items, want 25", kept)
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	_, rows, err := sinks.ReadParquetRows(filepath.Join(dir, ItemsFile))
	if err != nil || len(rows) != 25 {
		t.Errorf("items.parquet after the resumed run: %v, %d rows", err, len(rows))
	}
	r.Finish()
	for _, f := range []string{ItemsFile, AttemptsFile} {
		os.WriteFile(filepath.Join(dir, f+".tmp"), []byte("PAR1 torn"), 0o644)
	}
	r, err = Open(dir, Config{MetricCols: []string{"ex"}, Overwrite: true})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Abandon()
	if tmps, _ := filepath.Glob(filepath.Join(dir, "*.tmp")); len(tmps) > 0 {
		t.Errorf("after -overwrite: %v", tmps)
	}
}

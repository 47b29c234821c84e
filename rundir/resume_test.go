package rundir

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/evalflow/evalflow/item"
	"github.com/evalflow/evalflow/sinks"
)

// TestResumeKeepsFinishedAndRetriesErrors writes a run whose process "dies"
// (no Close): items 0 and 2 finished, 1 is an error, 3 was cancelled.
// Reopening with the same fingerprint keeps 0 and 2, reports them through
// OnKept in order, removes 1 and 3 from the parts at once (the glob never
// counts a retried item twice), and the merge after the retry puts every
// item in seq order, once.
func TestResumeKeepsFinishedAndRetriesErrors(t *testing.T) {
	dir := t.TempDir()
	fp := Fingerprint{"pipeline": "p"}
	r, err := Open(dir, Config{MetricCols: []string{"ex", "pass_at_k"}, Fingerprint: fp})
	if err != nil {
		t.Fatal(err)
	}
	if err := r.WriteJSON(ManifestName, &Manifest{RunID: "r", Status: "running", Fingerprint: fp}); err != nil {
		t.Fatal(err)
	}
	recs := []*item.Record{record(0, "a", true), record(1, "b", false), record(2, "c", false), record(3, "d", true)}
	recs[1].Status, recs[1].Error = "error", "gold failed"
	recs[3].Status = "cancelled"
	for _, rec := range recs {
		if err := r.Write(rec); err != nil {
			t.Fatal(err)
		}
	}
	if err := r.Flush(); err != nil {
		t.Fatal(err)
	}
	r.Abandon() // the process dies: no merge, the lock goes

	var kept []string
	r2, err := Open(dir, Config{MetricCols: []string{"ex", "pass_at_k"}, Fingerprint: fp, OnKept: func(rec *item.Record) {
		kept = append(kept, rec.Item.ID)
		if s, _ := rec.Score("ex"); rec.Item.ID == "a" && s.Value != 1 {
			t.Errorf("kept a: ex %v, want 1", s.Value)
		}
		if v, _ := rec.Item.Field("difficulty"); v != "easy" {
			t.Errorf("kept %s: difficulty %v", rec.Item.ID, v)
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	if resumed, n := r2.Resumed(); !resumed || n != 2 || len(kept) != 2 || kept[0] != "a" || kept[1] != "c" {
		t.Fatalf("resumed %v, %d kept %v; want a and c", resumed, n, kept)
	}
	for seq, want := range []bool{true, false, true, false} {
		if r2.Kept(seq) != want {
			t.Errorf("Kept(%d) = %v", seq, !want)
		}
	}
	_, rows, err := sinks.ReadParquetRows(filepath.Join(dir, PartsDir, "items-G000-P000000.parquet"))
	if err != nil || len(rows) != 2 {
		t.Fatalf("the old part after resume holds %d rows (%v), want the 2 kept", len(rows), err)
	}
	_, arows, _ := sinks.ReadParquetRows(filepath.Join(dir, PartsDir, "attempts-G000-P000000.parquet"))
	if len(arows) != 2 {
		t.Errorf("the old attempts part holds %d rows, want the kept items' 2", len(arows))
	}
	// The retry: b succeeds now, d again.
	for _, rec := range []*item.Record{record(1, "b", true), record(3, "d", true)} {
		if err := r2.Write(rec); err != nil {
			t.Fatal(err)
		}
	}
	if err := r2.Close(); err != nil {
		t.Fatal(err)
	}
	s, rows, err := sinks.ReadParquetRows(filepath.Join(dir, ItemsFile))
	if err != nil {
		t.Fatal(err)
	}
	col := colIndex(s)
	var ids []string
	for _, row := range rows {
		ids = append(ids, row[col["id"]].(string)+":"+row[col["status"]].(string))
	}
	if got := ids; len(got) != 4 || got[0] != "a:ok" || got[1] != "b:ok" || got[2] != "c:ok" || got[3] != "d:ok" {
		t.Errorf("merged items = %v, want a b c d, all ok, once each", got)
	}
	if r2.Counts.Items != 4 || r2.Counts.OK != 4 || r2.Counts.Attempts != 4 {
		t.Errorf("counts %+v", r2.Counts)
	}
	if err := r2.Finish(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, PartsDir)); !os.IsNotExist(err) {
		t.Error("parts/ left after Finish")
	}
}

// TestFlushMakesPartsReadable: with no Close (kill -9), what was flushed is
// complete Parquet; nothing but .tmp files is half-written.
func TestFlushMakesPartsReadable(t *testing.T) {
	dir := t.TempDir()
	r, err := Open(dir, Config{MetricCols: []string{"ex"}, FlushItems: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Abandon()
	for i := range 5 {
		if err := r.Write(record(i, string(rune('a'+i)), true)); err != nil {
			t.Fatal(err)
		}
	}
	parts, _ := filepath.Glob(filepath.Join(dir, PartsDir, "items-*.parquet"))
	n := 0
	for _, p := range parts {
		_, rows, err := sinks.ReadParquetRows(p)
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		n += len(rows)
	}
	if len(parts) != 2 || n != 4 {
		t.Errorf("%d parts with %d items after 5 writes at FlushItems 2; want 2 parts, 4 items (the 5th is in a .tmp)", len(parts), n)
	}
	tmps, _ := filepath.Glob(filepath.Join(dir, PartsDir, "*.tmp"))
	if len(tmps) == 0 {
		t.Error("the open part is not under a .tmp name")
	}
}

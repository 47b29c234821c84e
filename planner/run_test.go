package planner_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/hashicorp/hcl/v2"
	_ "modernc.org/sqlite"

	"github.com/evalflow/evalflow/dsl"
	"github.com/evalflow/evalflow/item"
	"github.com/evalflow/evalflow/nodes"
	"github.com/evalflow/evalflow/planner"
)

// fixture writes a small SQLite database, a dataset and predictions into a
// temp dir and returns the dir.
func fixture(t testing.TB, items []map[string]any, preds []map[string]any) string {
	t.Helper()
	dir := t.TempDir()
	db, err := sql.Open("sqlite", filepath.Join(dir, "shop.sqlite"))
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		`CREATE TABLE item (id INTEGER PRIMARY KEY, name TEXT, price REAL)`,
		`INSERT INTO item VALUES (1,'pen',1.5),(2,'ink',3.25),(3,'pad',2.0)`,
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()
	writeJSONL(t, filepath.Join(dir, "q.jsonl"), items)
	writeJSONL(t, filepath.Join(dir, "p.jsonl"), preds)
	return dir
}

func writeJSONL(t testing.TB, path string, rows []map[string]any) {
	t.Helper()
	var b strings.Builder
	for _, r := range rows {
		j, _ := json.Marshal(r)
		b.Write(j)
		b.WriteByte('\n')
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

const runPipeline = `
dataset "q" {
  source = "q.jsonl"
}
engine "main" {
  kind    = "sqlite"
  path    = "./${item.db}.sqlite"
  timeout = "2s"
}
stage "generate" {
  predictions = "p.jsonl"
}
stage "validate" {
  input = stage.generate
}
stage "execute" {
  input = stage.validate
}
stage "refine" {
  input          = stage.execute
  max_iterations = 2
}
stage "score" {
  input = stage.refine
  metric "ex" {}
  metric "pass_at_k" {
    k = 2
  }
}
stage "aggregate" {
  input    = stage.score
  group_by = ["level"]
}
`

func build(t testing.TB, dir, src string, opts planner.Options) *planner.Plan {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, "pipeline.hcl"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	p, diags := dsl.Load(filepath.Join(dir, "pipeline.hcl"), dsl.LoadOptions{Env: []string{}})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	pl, diags := planner.Build(context.Background(), p, opts)
	t.Cleanup(func() { pl.Close() })
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	return pl
}

type outcome struct {
	Status   string
	EX       string
	Attempts int
	Class    string
}

func summarize(r *item.Record) outcome {
	o := outcome{Status: r.Status}
	if s, ok := r.Score("ex"); ok {
		o.EX = fmt.Sprint(s.Value)
		if s.Err != "" {
			o.EX = "err"
		}
	}
	if f := r.Final(); f != nil {
		o.Attempts = len(r.Samples[0].Attempts)
		o.Class = f.ErrorClass
	}
	return o
}

func TestRunEndToEnd(t *testing.T) {
	items := []map[string]any{
		{"id": "right", "question": "names", "gold": "SELECT name FROM item", "db": "shop", "level": "easy"},
		{"id": "wrong", "question": "names", "gold": "SELECT name FROM item", "db": "shop", "level": "easy"},
		{"id": "syntax", "question": "names", "gold": "SELECT name FROM item", "db": "shop", "level": "hard"},
		{"id": "repaired", "question": "cheap", "gold": "SELECT name FROM item WHERE price < 2", "db": "shop", "level": "hard"},
		{"id": "unsafe", "question": "x", "gold": "SELECT 1", "db": "shop", "level": "hard"},
		{"id": "missing", "question": "x", "gold": "SELECT 1", "db": "shop", "level": "hard"},
		{"id": "ordered", "question": "by price", "gold": "SELECT name FROM item ORDER BY price", "db": "shop", "level": "easy"},
		{"id": "permuted", "question": "two cols", "gold": "SELECT id, name FROM item", "db": "shop", "level": "easy"},
		{"id": "samples", "question": "n", "gold": "SELECT count(*) FROM item", "db": "shop", "level": "easy"},
	}
	preds := []map[string]any{
		{"id": "right", "pred": "SELECT name FROM item"},
		{"id": "wrong", "pred": "SELECT name FROM item WHERE id = 1"},
		{"id": "syntax", "pred": "SELEC name FROM item"},
		{"id": "repaired", "attempts": []string{"SELECT nme FROM item", "SELECT name FROM item WHERE price < 2"}},
		{"id": "unsafe", "pred": "DELETE FROM item"},
		{"id": "ordered", "pred": "SELECT name FROM item ORDER BY price DESC"},
		{"id": "permuted", "pred": "SELECT name, id FROM item"},
		{"id": "samples", "preds": []any{"SELECT 1", []string{"SELEC", "SELECT count(*) FROM item"}}},
	}
	dir := fixture(t, items, preds)
	pl := build(t, dir, runPipeline, planner.Options{})
	got := map[string]outcome{}
	var order []string
	err := pl.Run(context.Background(), planner.RunOptions{OnRecord: func(r *item.Record) error {
		got[r.Item.ID] = summarize(r)
		order = append(order, r.Item.ID)
		return nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]outcome{
		"right":    {Status: "ok", EX: "1", Attempts: 1},
		"wrong":    {Status: "ok", EX: "0", Attempts: 1},
		"syntax":   {Status: "ok", EX: "0", Attempts: 1, Class: item.ClassSyntax},
		"repaired": {Status: "ok", EX: "1", Attempts: 2},
		"unsafe":   {Status: "ok", EX: "0", Attempts: 1, Class: item.ClassSafety},
		"missing":  {Status: "ok", EX: "0", Attempts: 1, Class: item.ClassGeneration},
		"ordered":  {Status: "ok", EX: "0", Attempts: 1},
		"permuted": {Status: "ok", EX: "1", Attempts: 1},
		"samples":  {Status: "ok", EX: "0", Attempts: 1},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("outcomes (-want +got):\n%s", diff)
	}
	var ids []string
	for _, it := range items {
		ids = append(ids, it["id"].(string))
	}
	if diff := cmp.Diff(ids, order); diff != "" {
		t.Errorf("records must arrive in dataset order (-want +got):\n%s", diff)
	}
}

func TestRunLimitAndSample(t *testing.T) {
	var items, preds []map[string]any
	for i := 0; i < 50; i++ {
		id := fmt.Sprintf("i%02d", i)
		items = append(items, map[string]any{"id": id, "question": "q", "gold": "SELECT 1", "db": "shop", "level": "x"})
		preds = append(preds, map[string]any{"id": id, "pred": "SELECT 1"})
	}
	dir := fixture(t, items, preds)
	pl := build(t, dir, runPipeline, planner.Options{})
	collect := func(o planner.RunOptions) []string {
		var ids []string
		o.OnRecord = func(r *item.Record) error { ids = append(ids, r.Item.ID); return nil }
		if err := pl.Run(context.Background(), o); err != nil {
			t.Fatal(err)
		}
		return ids
	}
	if got := collect(planner.RunOptions{Limit: 3}); !cmp.Equal(got, []string{"i00", "i01", "i02"}) {
		t.Errorf("limit: %v", got)
	}
	a := collect(planner.RunOptions{Sample: 5, Seed: 42})
	b := collect(planner.RunOptions{Sample: 5, Seed: 42})
	c := collect(planner.RunOptions{Sample: 5, Seed: 43})
	if len(a) != 5 || !cmp.Equal(a, b) {
		t.Errorf("sample not reproducible: %v vs %v", a, b)
	}
	if cmp.Equal(a, c) {
		t.Errorf("different seeds gave the same sample %v", a)
	}
}

// panicky replaces the score kind with one that panics on one item.
type panicky struct{}

func (panicky) Process(_ context.Context, r *item.Record) error {
	if r.Item.ID == "boom" {
		panic("kaboom")
	}
	if r.Item.ID == "fail" {
		return fmt.Errorf("stage failed")
	}
	r.SetScore(item.Score{Name: "ok", Value: 1})
	return nil
}

func TestPanicAndErrorStayOnTheirItem(t *testing.T) {
	reg := &nodes.Registry{}
	for _, n := range nodes.Default.Names() {
		k, _ := nodes.Default.Lookup(n)
		if n == "score" {
			k.Factory = func(*nodes.Env) (nodes.Stage, hcl.Diagnostics) { return panicky{}, nil }
		}
		reg.Register(k)
	}
	items := []map[string]any{
		{"id": "a", "gold": "SELECT 1", "db": "shop"},
		{"id": "boom", "gold": "SELECT 1", "db": "shop"},
		{"id": "fail", "gold": "SELECT 1", "db": "shop"},
		{"id": "b", "gold": "SELECT 1", "db": "shop"},
	}
	preds := []map[string]any{{"id": "a", "pred": "SELECT 1"}, {"id": "boom", "pred": "SELECT 1"}, {"id": "fail", "pred": "SELECT 1"}, {"id": "b", "pred": "SELECT 1"}}
	dir := fixture(t, items, preds)
	pl := build(t, dir, runPipeline, planner.Options{Stages: reg})
	got := map[string]string{}
	err := pl.Run(context.Background(), planner.RunOptions{OnRecord: func(r *item.Record) error {
		got[r.Item.ID] = r.Status + ": " + r.Error
		return nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"a":    "ok: ",
		"boom": `error: panic in stage.score on item "boom": kaboom`,
		"fail": `error: stage.score on item "fail": stage failed`,
		"b":    "ok: ",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// blocker holds items until the test cancels the run.
type blocker struct{ started atomic.Int64 }

func (b *blocker) Process(ctx context.Context, r *item.Record) error {
	if r.Seq < 3 {
		return nil
	}
	b.started.Add(1)
	<-ctx.Done()
	return ctx.Err()
}

func TestCancelDeliversFinishedItems(t *testing.T) {
	b := &blocker{}
	reg := &nodes.Registry{}
	for _, n := range nodes.Default.Names() {
		k, _ := nodes.Default.Lookup(n)
		if n == "score" {
			k.Factory = func(*nodes.Env) (nodes.Stage, hcl.Diagnostics) { return b, nil }
		}
		reg.Register(k)
	}
	var items, preds []map[string]any
	for i := 0; i < 200; i++ {
		id := fmt.Sprintf("i%03d", i)
		items = append(items, map[string]any{"id": id, "gold": "SELECT 1", "db": "shop"})
		preds = append(preds, map[string]any{"id": id, "pred": "SELECT 1"})
	}
	dir := fixture(t, items, preds)
	pl := build(t, dir, runPipeline, planner.Options{Stages: reg})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		// Interrupt once some item is stuck in the last stage, as Ctrl-C
		// would in the middle of a run.
		for b.started.Load() == 0 {
			time.Sleep(time.Millisecond)
		}
		cancel()
	}()
	statuses := map[string]int{}
	var seqs []int
	err := pl.Run(ctx, planner.RunOptions{OnRecord: func(r *item.Record) error {
		statuses[r.Status]++
		seqs = append(seqs, r.Seq)
		return nil
	}})
	if err != context.Canceled {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if statuses["cancelled"] == 0 || statuses["ok"]+statuses["cancelled"] != len(seqs) {
		t.Errorf("statuses: %v", statuses)
	}
	if len(seqs) >= 200 {
		t.Errorf("the run did not stop reading the dataset: %d records", len(seqs))
	}
	for i, s := range seqs {
		if s != i {
			t.Fatalf("records not delivered in order without gaps: %v", seqs)
		}
	}
}

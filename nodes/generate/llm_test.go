package generate_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	_ "modernc.org/sqlite"

	"github.com/evalflow/evalflow/dsl"
	_ "github.com/evalflow/evalflow/engine/sqlite"
	"github.com/evalflow/evalflow/item"
	"github.com/evalflow/evalflow/llm/fake"
	"github.com/evalflow/evalflow/nodes"
	_ "github.com/evalflow/evalflow/nodes/all"
	"github.com/evalflow/evalflow/planner"
	"github.com/evalflow/evalflow/rundir"
	"github.com/evalflow/evalflow/sinks"
)

// shop writes a SQLite database and a dataset into dir.
func shop(t *testing.T, dir string, items []map[string]any) {
	t.Helper()
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
	var b strings.Builder
	for _, it := range items {
		j, _ := json.Marshal(it)
		b.Write(j)
		b.WriteByte('\n')
	}
	if err := os.WriteFile(filepath.Join(dir, "q.jsonl"), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

const llmPipeline = `
variable "base_url" { type = string }
variable "samples" {
  type    = number
  default = 1
}
variable "conc" {
  type    = number
  default = 8
}
variable "max_cost" {
  type    = number
  default = 0
}
dataset "q" {
  source = "q.jsonl"
}
engine "main" {
  kind    = "sqlite"
  path    = "./${item.db}.sqlite"
  timeout = "2s"
}
model "gen" {
  provider    = "openai"
  base_url    = var.base_url
  model       = "fake-coder"
  temperature = 0
  max_tokens  = 256
  cache_dir   = "cache"
  backoff_base = "10ms"
  max_concurrency = var.conc
  price = { input = 1, output = 2 }
  max_cost = var.max_cost
}
stage "generate" {
  source  = "llm"
  model   = model.gen
  samples = var.samples
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
    k = 1
  }
}
stage "aggregate" {
  input = stage.score
}
`

// runLLM runs llmPipeline in dir against baseURL and returns the
// attempts.parquet rows as maps and the records.
func runLLM(t *testing.T, dir, baseURL string, samples int, out string, vars ...string) ([]map[string]any, []*item.Record) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, "pipeline.hcl"), []byte(llmPipeline), 0o644); err != nil {
		t.Fatal(err)
	}
	p, diags := dsl.Load(filepath.Join(dir, "pipeline.hcl"), dsl.LoadOptions{Env: []string{},
		Vars: append([]string{"base_url=" + baseURL, fmt.Sprintf("samples=%d", samples)}, vars...)})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	pl, diags := planner.Build(context.Background(), p, planner.Options{})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	defer pl.Close()
	var cols []string
	for _, n := range pl.Chain {
		if c, ok := n.Stage.(interface{ MetricColumns() []string }); ok {
			cols = append(cols, c.MetricColumns()...)
		}
	}
	rd, err := rundir.Create(filepath.Join(dir, out), cols, nil, false)
	if err != nil {
		t.Fatal(err)
	}
	var recs []*item.Record
	err = pl.Run(context.Background(), planner.RunOptions{OnRecord: func(r *item.Record) error {
		recs = append(recs, r)
		return rd.Write(r)
	}})
	if err != nil {
		t.Fatal(err)
	}
	if err := rd.Close(); err != nil {
		t.Fatal(err)
	}
	schema, rows, err := sinks.ReadParquetRows(filepath.Join(dir, out, rundir.AttemptsFile))
	if err != nil {
		t.Fatal(err)
	}
	var maps []map[string]any
	for _, r := range rows {
		m := map[string]any{}
		for i, c := range schema {
			m[c.Name] = r[i]
		}
		maps = append(maps, m)
	}
	return maps, recs
}

// The model's first answer names a column that does not exist; validation
// fails, refine feeds the error back, the second answer passes. Verified in
// attempts.parquet. A second run of the same pipeline makes no call.
func TestLLMRefineEndToEnd(t *testing.T) {
	dir := t.TempDir()
	shop(t, dir, []map[string]any{
		{"id": "1", "question": "How many items are there?", "gold": "SELECT count(*) FROM item", "db": "shop"},
		{"id": "2", "question": "What is the cheapest item?", "gold": "SELECT name FROM item ORDER BY price LIMIT 1", "db": "shop"},
	})
	srv := fake.New(fake.OpenAI, fake.WithResponder(func(r fake.Request) string {
		p := r.Prompt()
		switch {
		case strings.Contains(p, "failed") && strings.Contains(p, "no such column: qty"):
			return "Sorry, the column is called id.\n```sql\nSELECT count(id) FROM item\n```"
		case strings.Contains(p, "How many"):
			return "```sql\nSELECT sum(qty) FROM item\n```"
		default:
			return "SELECT name FROM item ORDER BY price LIMIT 1;"
		}
	}))
	t.Cleanup(srv.Close)

	rows, recs := runLLM(t, dir, srv.URL, 1, "run1")
	type row struct {
		ID, Query, Class string
		Attempt          int64
		Match            any
		Cache            bool
	}
	var got []row
	for _, r := range rows {
		cls, _ := r["error_class"].(string)
		if r["input_tokens"].(int64) <= 0 || r["output_tokens"].(int64) <= 0 || r["cost"].(float64) <= 0 {
			t.Errorf("attempt %v/%v: tokens or cost missing: %v %v %v", r["id"], r["attempt"], r["input_tokens"], r["output_tokens"], r["cost"])
		}
		if !strings.Contains(r["raw"].(string), r["query"].(string)) {
			t.Errorf("raw %q does not hold query %q", r["raw"], r["query"])
		}
		got = append(got, row{r["id"].(string), r["query"].(string), cls, r["attempt"].(int64), r["match"], r["cache_hit"].(bool)})
	}
	want := []row{
		{"1", "SELECT sum(qty) FROM item", "schema", 0, false, false},
		{"1", "SELECT count(id) FROM item", "", 1, true, false},
		{"2", "SELECT name FROM item ORDER BY price LIMIT 1;", "", 0, true, false},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("attempts (-want +got)\n%s", diff)
	}
	// The repair prompt carried the previous query and the engine's error.
	var fix fake.Request
	for _, r := range srv.Requests() {
		if len(r.Messages) == 3 {
			fix = r
		}
	}
	if fix.Messages == nil || !strings.Contains(fix.Messages[2].Content, "SELECT sum(qty) FROM item") ||
		fix.Messages[1].Role != "assistant" || !strings.Contains(fix.Messages[0].Content, "item(id INTEGER PRIMARY KEY") {
		t.Errorf("repair request = %+v", fix)
	}
	if s, _ := recs[0].Score("pass_at_k"); s.Value != 1 {
		t.Errorf("pass_at_k = %+v", s)
	}
	calls := srv.Calls()
	if calls != 3 {
		t.Errorf("calls = %d, want 3", calls)
	}

	// Same pipeline again: every answer from the cache.
	rows, _ = runLLM(t, dir, srv.URL, 1, "run2")
	if srv.Calls() != calls {
		t.Errorf("second run made %d calls", srv.Calls()-calls)
	}
	for _, r := range rows {
		if r["cache_hit"] != true || r["cost"].(float64) != 0 {
			t.Errorf("second run attempt %v/%v: cache_hit=%v cost=%v", r["id"], r["attempt"], r["cache_hit"], r["cost"])
		}
	}
	if len(rows) != 3 {
		t.Errorf("second run: %d attempts", len(rows))
	}
}

// With the quota exhausted mid-run, finished items keep their answers and
// the rest are marked, with no further calls.
func TestLLMQuotaMarksRemainingItems(t *testing.T) {
	dir := t.TempDir()
	var items []map[string]any
	// Distinct questions: no item may be answered from another's cached call.
	for i := range 6 {
		items = append(items, map[string]any{"id": fmt.Sprint(i), "question": fmt.Sprintf("How many items? (%d)", i), "gold": "SELECT count(*) FROM item", "db": "shop"})
	}
	shop(t, dir, items)
	srv := fake.New(fake.OpenAI, fake.WithResponder(func(r fake.Request) string { return "SELECT count(*) FROM item" }))
	t.Cleanup(srv.Close)
	// Samples 3: the first 2 calls succeed, then the quota runs out.
	srv.Script(fake.Fault{}, fake.Fault{}, fake.Fault{Kind: fake.FaultQuota})
	// One call at a time, so "no call after the quota error" is exact.
	rows, _ := runLLM(t, dir, srv.URL, 3, "run", "conc=1")
	ok, quota := 0, 0
	for _, r := range rows {
		switch {
		case r["error_class"] == "":
			ok++
		case r["error_class"] == "generation" && strings.Contains(fmt.Sprint(r["error_message"]), "quota"):
			quota++
		default:
			t.Errorf("unexpected attempt %v", r)
		}
	}
	if ok != 2 || ok+quota != 18 {
		t.Errorf("ok = %d, quota = %d; want 2 finished and 16 marked", ok, quota)
	}
	if srv.Calls() != 3 {
		t.Errorf("calls = %d, want 3 (none after the quota error)", srv.Calls())
	}
}

// Crossing max_cost stops the whole run: Run returns *nodes.StopRun, the
// items finished before are delivered, and no call follows the guard.
func TestLLMMaxCostStopsTheRun(t *testing.T) {
	dir := t.TempDir()
	var items []map[string]any
	for i := range 20 {
		items = append(items, map[string]any{"id": fmt.Sprint(i), "question": fmt.Sprintf("How many items? (%d)", i), "gold": "SELECT count(*) FROM item", "db": "shop"})
	}
	shop(t, dir, items)
	srv := fake.New(fake.OpenAI, fake.WithResponder(func(r fake.Request) string { return "SELECT count(*) FROM item" }))
	t.Cleanup(srv.Close)
	if err := os.WriteFile(filepath.Join(dir, "pipeline.hcl"), []byte(llmPipeline), 0o644); err != nil {
		t.Fatal(err)
	}
	p, diags := dsl.Load(filepath.Join(dir, "pipeline.hcl"), dsl.LoadOptions{Env: []string{},
		Vars: []string{"base_url=" + srv.URL, "conc=1", "max_cost=1e-12"}})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	pl, diags := planner.Build(context.Background(), p, planner.Options{})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	defer pl.Close()
	delivered := 0
	err := pl.Run(context.Background(), planner.RunOptions{OnRecord: func(r *item.Record) error {
		delivered++
		return nil
	}})
	var halt *nodes.StopRun
	if !errors.As(err, &halt) {
		t.Fatalf("Run = %v, want a *nodes.StopRun", err)
	}
	if srv.Calls() >= 20 {
		t.Errorf("calls = %d: the run went on after max_cost", srv.Calls())
	}
	if delivered == 0 {
		t.Error("no record delivered: finished items must be kept")
	}
}

// TestLLMFailedCallIsAnItemError: a model call that still fails after its
// retries produced nothing to score: the item is an error (retried by the
// next run), not a failed prediction scored 0; with samples = 2, one
// failed sample is enough.
func TestLLMFailedCallIsAnItemError(t *testing.T) {
	dir := t.TempDir()
	shop(t, dir, []map[string]any{
		{"id": "1", "question": "How many items are there?", "gold": "SELECT count(*) FROM item", "db": "shop"},
	})
	srv := fake.New(fake.OpenAI, fake.WithResponder(func(fake.Request) string { return "SELECT count(*) FROM item" }))
	t.Cleanup(srv.Close)
	// 401 is not retried: the call fails at once.
	srv.Script(fake.Fault{Kind: fake.FaultAuth})
	_, recs := runLLM(t, dir, srv.URL, 2, "run")
	if len(recs) != 1 || recs[0].Status != "error" || !strings.Contains(recs[0].Error, "model call failed") {
		t.Fatalf("status %q error %q, want an item error naming the failed call", recs[0].Status, recs[0].Error)
	}
}

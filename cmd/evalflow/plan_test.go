package main

import (
	"database/sql"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	_ "modernc.org/sqlite"

	"github.com/evalflow/evalflow/llm/fake"
)

// TestPlanCountsCalls: before a run, plan bounds the model calls and says
// the price is unknown; after it, every call of the same command is
// cached and llm_calls_cached is exactly the requests the run made —
// generation, repairs and judges — and plan itself calls no model.
func TestPlanCountsCalls(t *testing.T) {
	bin := evalflowBinary(t)
	dir := t.TempDir()
	db, err := sql.Open("sqlite", filepath.Join(dir, "shop.sqlite"))
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{`CREATE TABLE item (id INTEGER PRIMARY KEY, name TEXT)`, `INSERT INTO item VALUES (1,'pen'),(2,'ink')`} {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()
	var ds strings.Builder
	for _, q := range []string{"How many items?", "List the item names.", "What is the name of item 1?"} {
		b, _ := json.Marshal(map[string]string{"id": q[:8], "question": q, "gold": "SELECT count(*) FROM item", "db": "shop"})
		ds.Write(append(b, '\n'))
	}
	writeFile(t, filepath.Join(dir, "q.jsonl"), []byte(ds.String()))
	srv := fake.New(fake.OpenAI, fake.WithResponder(func(r fake.Request) string {
		switch {
		case strings.Contains(r.System, "semantic similarity"):
			return `{"score": 0.9, "explanation": "close"}`
		case strings.Contains(r.System, "SQL reviewer"):
			return `{"score": 1.0, "reasoning": "equivalent"}`
		case strings.Contains(r.Prompt(), "failed"):
			return "```sql\nSELECT count(id) FROM item\n```"
		}
		return "```sql\nSELECT count(nope) FROM item\n```" // fails: one repair each
	}))
	defer srv.Close()
	t.Setenv("EVALFLOW_CACHE_DIR", filepath.Join(dir, "cache"))
	t.Setenv("OPENAI_API_KEY", "test")
	repo, _ := filepath.Abs(filepath.Join("..", ".."))
	args := []string{filepath.Join(repo, "pipelines", "text2sql-llm.hcl"), "-var", "dataset=q.jsonl", "-var", "databases=" + dir,
		"-var", "provider=openai", "-var", "base_url=" + srv.URL, "-var", "model=fake"}
	plan := func(extra ...string) planReport {
		t.Helper()
		res := runBin(t, bin, dir, append(append([]string{"plan", "-format", "json"}, args...), extra...)...)
		if res.code != 0 {
			t.Fatalf("plan: exit %d\n%s%s", res.code, res.stdout, res.stderr)
		}
		var rep planReport
		if err := json.Unmarshal([]byte(res.stdout), &rep); err != nil {
			t.Fatalf("%v\n%s", err, res.stdout)
		}
		return rep
	}
	before := plan()
	if srv.Calls() != 0 {
		t.Fatalf("plan made %d model calls", srv.Calls())
	}
	// 3 items × (1 generation + 2 repairs (max_iterations) + 2 judges).
	if before.Cells != 1 || before.Items != 3 || before.LLMCallsCached != 0 || !before.LLMUpperBound || before.LLMCalls != 15 {
		t.Errorf("before the run: %+v", before)
	}
	if before.EstCostUSD != nil || len(before.UnknownPrices) == 0 {
		t.Errorf("no price declared, yet est_cost_usd = %v", before.EstCostUSD)
	}
	// Judges on another model: their bounded calls are priced as that
	// model's, not the generator's.
	judged := plan("-var", "judge_model=judge-x")
	perModel := map[string]int{}
	for _, m := range judged.Models {
		perModel[m.Model] = m.Calls
	}
	if perModel["openai judge-x"] != 6 || perModel["openai fake"] != 9 {
		t.Errorf("calls by model with a separate judge: %v; want 6 judge calls (3 items × 2 judges) and 9 generator calls", perModel)
	}
	priced := plan("-var", "price={ input = 2, output = 8 }")
	if priced.EstCostUSD == nil || *priced.EstCostUSD <= 0 || priced.EstInputTokens <= 0 {
		t.Errorf("with a price: est_cost_usd %v, input tokens %d", priced.EstCostUSD, priced.EstInputTokens)
	}

	res := runBin(t, bin, dir, append([]string{"run", "-quiet", "-out", "r"}, args...)...)
	if res.code != 0 {
		t.Fatalf("run: exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	made := srv.Calls()
	if made == 0 {
		t.Fatal("the run made no model call")
	}
	// The manifest counts every call: generation, repairs and judges; and
	// records the judges' models with the generator's.
	man := readManifest(t, filepath.Join(dir, "r"))
	if mc := man.ModelCalls; mc == nil || mc.Calls != int64(made) {
		t.Errorf("manifest model_calls %+v, the server saw %d calls", mc, made)
	}
	names := map[string]bool{}
	judgePrompt := false
	for _, m := range man.Models {
		names[m.Name] = true
		for k := range m.PromptSHA256 {
			if strings.Contains(k, "judge:query_correctness") {
				judgePrompt = true
			}
		}
	}
	if !names["generator"] || !names["judge"] || !judgePrompt {
		t.Errorf("manifest models %+v: want the generator and the judge with its rubric hash", man.Models)
	}
	after := plan()
	if srv.Calls() != made {
		t.Errorf("plan after the run made %d model calls", srv.Calls()-made)
	}
	if after.LLMCalls != made || after.LLMCallsCached != made {
		t.Errorf("after the run: llm_calls %d, llm_calls_cached %d; the run made %d requests", after.LLMCalls, after.LLMCallsCached, made)
	}
	if after.EstCostUSD == nil || *after.EstCostUSD != 0 {
		t.Errorf("every call cached, yet est_cost_usd = %v", after.EstCostUSD)
	}
	// A second cell (another temperature) is not cached: its calls are
	// bounded and counted apart.
	sw := plan("-sweep", "temperature=0,0.5")
	if sw.Cells != 2 || sw.LLMCallsCached != made || sw.LLMCalls <= made || len(sw.PerCell) != 2 || sw.PerCell[1].LLMCallsCached != 0 {
		t.Errorf("sweep: %+v", sw)
	}
	text := runBin(t, bin, dir, append([]string{"plan"}, args...)...)
	if !strings.Contains(text.stdout, "model calls: 12, of which 12 come from the cache") || !strings.Contains(text.stdout, "estimated cost: ~$0.0000") {
		t.Errorf("plan text:\n%s", text.stdout)
	}
	if _, err := os.Stat(filepath.Join(dir, "r", "items.parquet")); err != nil {
		t.Error(err)
	}
}

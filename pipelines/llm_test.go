package pipelines_test

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"strings"
	"testing"

	_ "modernc.org/sqlite"

	"github.com/evalflow/evalflow/item"
	"github.com/evalflow/evalflow/llm/fake"
	"github.com/evalflow/evalflow/planner"
)

// TestLLMPipelineEveryProvider runs text2sql-llm.hcl end to end against a
// fake server of each protocol: generate → validate → execute → refine →
// score (judges included) → aggregate.
func TestLLMPipelineEveryProvider(t *testing.T) {
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
	q := filepath.Join(dir, "q.jsonl")
	os.WriteFile(q, []byte(`{"id":"1","question":"How many items?","gold":"SELECT count(*) FROM item","db":"shop"}`+"\n"), 0o644)
	t.Setenv("EVALFLOW_CACHE_DIR", filepath.Join(dir, "cache"))
	for _, p := range []string{fake.OpenAI, fake.Anthropic, fake.Gemini} {
		t.Run(p, func(t *testing.T) {
			srv := fake.New(p, fake.WithResponder(func(r fake.Request) string {
				switch {
				case strings.Contains(r.System, "semantic similarity"):
					return `{"score": 0.9, "explanation": "close"}`
				case strings.Contains(r.System, "SQL reviewer"):
					return `{"score": 1.0, "reasoning": "equivalent"}`
				case strings.Contains(r.Prompt(), "failed"):
					return "```sql\nSELECT count(id) FROM item\n```"
				}
				return "```sql\nSELECT count(nope) FROM item\n```"
			}))
			defer srv.Close()
			pl := load(t, "text2sql-llm.hcl", "dataset="+q, "databases="+dir, "provider="+p, "base_url="+srv.URL, "model=fake")
			var recs []*item.Record
			if err := pl.Run(context.Background(), planner.RunOptions{OnRecord: func(r *item.Record) error {
				recs = append(recs, r)
				return nil
			}}); err != nil {
				t.Fatal(err)
			}
			r := recs[0]
			if n := len(r.Samples[0].Attempts); n != 2 {
				t.Errorf("attempts = %d, want 2 (a failed one and its repair)", n)
			}
			for name, want := range map[string]float64{"ex": 1, "pass_at_1": 1, "query_correctness": 1, "qas_semantic": 0.9} {
				if s, ok := r.Score(name); !ok || s.Err != "" || s.Value != want {
					t.Errorf("%s = %+v, want %v", name, s, want)
				}
			}
			if s, ok := r.Score("qas_score"); !ok || s.Null || s.Value < 0.9 {
				t.Errorf("qas_score = %+v", s)
			}
		})
	}
}

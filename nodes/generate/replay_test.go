package generate_test

import (
	"context"
	"github.com/evalflow/evalflow/internal/shareddata"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/evalflow/evalflow/dsl"
	"github.com/evalflow/evalflow/item"
	"github.com/evalflow/evalflow/planner"
)

// sharedData returns ../shared/data (shareddata.Dir).
func sharedData(t *testing.T) string { return shareddata.Dir(t) }

// replay plans a pipeline of one replay generate stage over dataset and
// predictions (the block's extra attributes in extra) and returns each
// item's first query, or its error, by id.
func replay(t *testing.T, dataset, predictions, extra string) (map[string]string, error) {
	t.Helper()
	dir := t.TempDir()
	src := "dataset \"q\" {\n  source = \"" + dataset + "\"\n}\nstage \"generate\" {\n  source      = \"replay\"\n  predictions = \"" + predictions + "\"\n" + extra + "}\n"
	if err := os.WriteFile(filepath.Join(dir, "p.hcl"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	p, diags := dsl.Load(filepath.Join(dir, "p.hcl"), dsl.LoadOptions{Env: []string{}})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	pl, diags := planner.Build(context.Background(), p, planner.Options{})
	if diags.HasErrors() {
		return nil, diags
	}
	defer pl.Close()
	got := map[string]string{}
	err := pl.Run(context.Background(), planner.RunOptions{OnRecord: func(r *item.Record) error {
		a := r.Final()
		if a.ErrorMessage != "" {
			got[r.Item.ID] = "error: " + a.ErrorMessage
		} else {
			got[r.Item.ID] = a.Query
		}
		return nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	return got, nil
}

// TestReplaySpider: Spider's dev.json (row-index ids) and its
// pred_example.txt line up by row, every item has its line's query.
func TestReplaySpider(t *testing.T) {
	spider := filepath.Join(sharedData(t), "spider")
	got, err := replay(t, filepath.Join(spider, "dev.json"), filepath.Join(spider, "evaluation_examples", "pred_example.txt"), "")
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(spider, "evaluation_examples", "pred_example.txt"))
	if err != nil {
		t.Fatal(err)
	}
	preds := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	if len(got) != 1034 || len(preds) != 1034 {
		t.Fatalf("%d items, %d predictions; want 1034", len(got), len(preds))
	}
	for i, p := range preds {
		if q := got[strconv.Itoa(i)]; q != strings.TrimSpace(p) {
			t.Fatalf("item %d: %q, want line %d %q", i, q, i+1, p)
		}
	}
}

// TestReplayBird: BIRD's dev.json (question_id) and predict_dev.json.
func TestReplayBird(t *testing.T) {
	bird, _ := filepath.Abs("../../dataset/testdata/bird")
	got, err := replay(t, filepath.Join(bird, "dev.json"), filepath.Join(bird, "predict_dev.json"), "")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"0": "SELECT MAX(`Free Meal Count (K-12)` / `Enrollment (K-12)`) FROM frpm WHERE `County Name` = 'Alameda'",
		"1": "SELECT T2.Zip FROM frpm AS T1 INNER JOIN schools AS T2 ON T1.CDSCode = T2.CDSCode WHERE T1.`Charter School (Y/N)` = 1",
		"2": "SELECT COUNT(*) FROM account WHERE frequency = 'POPLATEK PO OBRATU'",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// TestReplayFormatErrors: a bad row names file:line; an unknown format
// suggests one.
func TestReplayFormatErrors(t *testing.T) {
	dir := t.TempDir()
	ds := filepath.Join(dir, "q.json")
	os.WriteFile(ds, []byte(`[{"question":"a"},{"question":"b"}]`), 0o644)
	bad := filepath.Join(dir, "predict_dev.json")
	os.WriteFile(bad, []byte("{\n  \"0\": \"SELECT 1\",\n  \"1\": [\"SELECT 2\"]\n}\n"), 0o644)
	for _, tt := range []struct{ preds, extra, want string }{
		{bad, "", bad + `:3: the value of "1" is a list, not a string`},
		{bad, "  format = \"brid\"\n", `"brid" is not a predictions format; use one of jsonl, json, csv, parquet, spider, bird. Did you mean "bird"?`},
	} {
		_, err := replay(t, ds, tt.preds, tt.extra)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("err = %v, want %q", err, tt.want)
		}
	}
	// A pred.txt with an empty line: that item's prediction is empty.
	txt := filepath.Join(dir, "pred.txt")
	os.WriteFile(txt, []byte("SELECT 1\n\n"), 0o644)
	got, err := replay(t, ds, txt, "")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]string{"0": "SELECT 1", "1": "error: empty prediction"}, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

package spider

import (
	"bufio"
	"bytes"
	"encoding/json"
	"github.com/evalflow/evalflow/internal/shareddata"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// sharedData returns ../shared/data/spider (shareddata.Dir).
func sharedData(t testing.TB) string { return shareddata.Dir(t, "spider") }

type esmItem struct {
	I        int    `json:"i"`
	DB       string `json:"db_id"`
	Hardness string `json:"hardness"`
	Gold     string `json:"gold"`
	Pred     string `json:"pred"`
	Current  int    `json:"exact_current"`
	Rule2018 int    `json:"exact_2018_rule"`
}

func loadESM(t testing.TB, data string) []esmItem {
	t.Helper()
	f, err := os.Open(filepath.Join(data, "expected", "esm_per_item.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var items []esmItem
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var it esmItem
		if err := json.Unmarshal(sc.Bytes(), &it); err != nil {
			t.Fatal(err)
		}
		items = append(items, it)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return items
}

func loadCatalog(t testing.TB, data string) *Catalog {
	t.Helper()
	c, err := LoadSchemas(filepath.Join(data, "tables.json"), filepath.Join(data, "schema_only_db"))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestPerItemAgreement compares every one of the 1,034 dev items with the
// unmodified evaluation.py (exact_current), the 2018 rule
// (exact_2018_rule) and its hardness.
func TestPerItemAgreement(t *testing.T) {
	data := sharedData(t)
	items := loadESM(t, data)
	if len(items) != 1034 {
		t.Fatalf("esm_per_item.jsonl has %d items, want 1034", len(items))
	}
	cat := loadCatalog(t, data)
	var okHard, okCur, ok2018 int
	for _, it := range items {
		s, err := cat.Schema(it.DB)
		if err != nil {
			t.Fatal(err)
		}
		cur, err := Score(s, it.Gold, it.Pred, RuleCurrent)
		if err != nil {
			t.Errorf("item %d: %v", it.I, err)
			continue
		}
		old, err := Score(s, it.Gold, it.Pred, Rule2018)
		if err != nil {
			t.Errorf("item %d: %v", it.I, err)
			continue
		}
		if cur.Hardness == it.Hardness {
			okHard++
		} else {
			t.Errorf("item %d hardness: want %s, got %s (gold %q)", it.I, it.Hardness, cur.Hardness, it.Gold)
		}
		if b2i(cur.Exact) == it.Current {
			okCur++
		} else {
			t.Errorf("item %d current rule: want %d, got %v (pred err %v)\n gold %q\n pred %q", it.I, it.Current, cur.Exact, cur.PredErr, it.Gold, it.Pred)
		}
		if b2i(old.Exact) == it.Rule2018 {
			ok2018++
		} else {
			t.Errorf("item %d 2018 rule: want %d, got %v\n gold %q\n pred %q", it.I, it.Rule2018, old.Exact, it.Gold, it.Pred)
		}
	}
	t.Logf("agreement on %d items: hardness %d, exact (current) %d, exact (2018) %d", len(items), okHard, okCur, ok2018)
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// runExample runs the Evaluator over evaluation_examples' gold and pred
// files as evaluate() reads them and returns everything it prints.
func runExample(t *testing.T, rule Rule) string {
	data := sharedData(t)
	cat := loadCatalog(t, data)
	read := func(name string) [][]string {
		b, err := os.ReadFile(filepath.Join(data, "evaluation_examples", name))
		if err != nil {
			t.Fatal(err)
		}
		var out [][]string
		for _, l := range strings.Split(string(b), "\n") {
			if l = strings.TrimSpace(l); l != "" {
				out = append(out, strings.Split(l, "\t"))
			}
		}
		return out
	}
	golds, preds := read("gold_example.txt"), read("pred_example.txt")
	if len(golds) != len(preds) {
		t.Fatalf("%d gold lines, %d pred lines", len(golds), len(preds))
	}
	var out bytes.Buffer
	ev := NewEvaluator(rule, &out)
	for i := range golds {
		s, err := cat.Schema(golds[i][1])
		if err != nil {
			t.Fatal(err)
		}
		if _, err := ev.Add(s, golds[i][0], preds[i][0]); err != nil {
			t.Fatalf("line %d: %v", i+1, err)
		}
	}
	if err := ev.WriteTable(&out); err != nil {
		t.Fatal(err)
	}
	return out.String()
}

// TestPrintedOutput compares the whole stdout of evaluate(..., "match")
// with the current rule against expected/eval_result_current_rule.txt, and
// with the 2018 rule against the published eval_result_example.txt.
func TestPrintedOutput(t *testing.T) {
	for _, tc := range []struct {
		rule Rule
		file string
	}{
		{RuleCurrent, "expected/eval_result_current_rule.txt"},
		{Rule2018, "evaluation_examples/eval_result_example.txt"},
	} {
		t.Run(string(tc.rule), func(t *testing.T) {
			want, err := os.ReadFile(filepath.Join(sharedData(t), tc.file))
			if err != nil {
				t.Fatal(err)
			}
			got := runExample(t, tc.rule)
			if diff := cmp.Diff(string(want), got); diff != "" {
				t.Errorf("printed output differs from %s (-want +got):\n%s", tc.file, diff)
			}
		})
	}
}

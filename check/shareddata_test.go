package check

import (
	"encoding/csv"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// sharedData is the project's shared copy of the public benchmarks.
const sharedData = "../../shared/data"

// goldQueries reads the gold queries of Spider dev (SQL), text2cypher (both
// synthetic sets, Cypher) and BuildingQA (SPARQL). Every one is a read-only
// query, so any refusal is a false positive.
func goldQueries(t *testing.T) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	var spider []struct {
		Query string `json:"query"`
	}
	if b, err := os.ReadFile(filepath.Join(sharedData, "spider/dev.json")); err == nil && json.Unmarshal(b, &spider) == nil {
		for _, q := range spider {
			out[SQL] = append(out[SQL], q.Query)
		}
	}
	for _, f := range []string{"text2cypher_gpt4turbo.csv", "text2cypher_claudeopus.csv"} {
		fh, err := os.Open(filepath.Join(sharedData, "text2cypher", f))
		if err != nil {
			continue
		}
		rows, err := csv.NewReader(fh).ReadAll()
		fh.Close()
		if err != nil || len(rows) == 0 {
			continue
		}
		col := -1
		for i, h := range rows[0] {
			if h == "cypher" {
				col = i
			}
		}
		for _, r := range rows[1:] {
			if col >= 0 && col < len(r) {
				out[Cypher] = append(out[Cypher], r[col])
			}
		}
	}
	files, _ := filepath.Glob(filepath.Join(sharedData, "buildingqa/Benchmark_QA_pairs/*.json"))
	for _, f := range files {
		var bs []struct {
			Queries []struct {
				SPARQL string `json:"sparql_query"`
			} `json:"queries"`
		}
		if b, err := os.ReadFile(f); err == nil && json.Unmarshal(b, &bs) == nil {
			for _, b := range bs {
				for _, q := range b.Queries {
					out[SPARQL] = append(out[SPARQL], q.SPARQL)
				}
			}
		}
	}
	if len(out) == 0 {
		t.Skip("no shared benchmark data at " + sharedData)
	}
	return out
}

// TestSafetyOnGoldQueries reports the false-positive rate of Safe on real
// benchmark gold queries (docs/validation.md records it).
func TestSafetyOnGoldQueries(t *testing.T) {
	for _, lang := range []string{SQL, Cypher, SPARQL} {
		qs := goldQueries(t)[lang]
		if len(qs) == 0 {
			continue
		}
		fp := 0
		for _, q := range qs {
			if ok, reason := Safe(lang, q); !ok {
				fp++
				if fp <= 5 {
					t.Logf("%s false positive: %q: %s", lang, q, reason)
				}
			}
		}
		rate := float64(fp) / float64(len(qs))
		t.Logf("%-6s gold queries %5d  refused %3d  (FP rate %.2f%%)", lang, len(qs), fp, 100*rate)
		// Measured (go test ./check -run TestSafetyOnGoldQueries -v, with
		// ../shared/data): sql 0 of 1034, cypher 2 of 14816 (0.01%),
		// sparql 0 of 27. A gold query is safe by construction, so a
		// refusal is a false positive; the threshold leaves room for a
		// handful, not for a regression.
		if rate > maxGoldFPRate {
			t.Errorf("%s: %d of %d gold queries refused (%.2f%%), above the %.2f%% threshold", lang, fp, len(qs), 100*rate, 100*maxGoldFPRate)
		}
	}
}

// maxGoldFPRate is the highest share of benchmark gold queries the safety
// check may refuse (docs/validation.md).
const maxGoldFPRate = 0.001

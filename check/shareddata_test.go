package check

import (
	"bufio"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"github.com/evalflow/evalflow/internal/shareddata"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// sharedQuery is one query published with a benchmark in ../shared/data.
type sharedQuery struct {
	Lang   string
	Source string // benchmark and file, e.g. "buildingqa o3-mini.csv generated_sparql"
	ID     string // the row's id in that file (or its line number)
	Gold   bool   // a reference query (read-only by construction), not a prediction
	Query  string
}

// key names the query in the pinned refusal lists.
func (q sharedQuery) key() string { return q.Source + " " + q.ID }

// sharedDataPath returns ../shared/data/sub (shareddata.Dir).
func sharedDataPath(t testing.TB, sub string) string { return shareddata.Dir(t, sub) }

// readJSON decodes the JSON file at path into v or fails the test.
func readJSON(t testing.TB, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// readCSV reads a CSV file with a header into one map per row.
func readCSV(t testing.TB, path string) []map[string]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if len(rows) == 0 {
		t.Fatalf("%s: empty", path)
	}
	var out []map[string]string
	for _, r := range rows[1:] {
		m := map[string]string{}
		for i, h := range rows[0] {
			if i < len(r) {
				m[h] = r[i]
			}
		}
		out = append(out, m)
	}
	return out
}

// readLines returns the lines of a text file.
func readLines(t testing.TB, path string) []string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		out = append(out, sc.Text())
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// sharedQueries reads every gold and published predicted query in
// ../shared/data: Spider dev (gold and the published example predictions),
// GeoQuery and Restaurants (dataset SQL, conformance gold and perturbed
// predictions), BuildingQA (gold SPARQL and the three published ReAct
// prediction sets), TEXT2SPARQL'25 CK25 (nine teams' answers) and
// text2cypher (both synthetic sets, all reference queries).
func sharedQueries(t testing.TB) []sharedQuery {
	t.Helper()
	var out []sharedQuery
	add := func(lang, source, id string, gold bool, q string) {
		if strings.TrimSpace(q) == "" {
			return // no prediction: nothing to check
		}
		out = append(out, sharedQuery{Lang: lang, Source: source, ID: id, Gold: gold, Query: q})
	}

	// SQL.
	spider := sharedDataPath(t, "spider")
	var dev []struct {
		Query string `json:"query"`
	}
	readJSON(t, filepath.Join(spider, "dev.json"), &dev)
	for i, q := range dev {
		add(SQL, "spider dev.json", fmt.Sprint(i), true, q.Query)
	}
	for i, l := range readLines(t, filepath.Join(spider, "evaluation_examples/pred_example.txt")) {
		add(SQL, "spider pred_example.txt", fmt.Sprint(i+1), false, l)
	}
	for _, ds := range []struct{ dir, file string }{{"geoquery", "geography.json"}, {"restaurants", "restaurants.json"}} {
		dir := sharedDataPath(t, ds.dir)
		var groups []struct {
			SQL []string `json:"sql"`
		}
		readJSON(t, filepath.Join(dir, ds.file), &groups)
		for i, g := range groups {
			for j, q := range g.SQL {
				add(SQL, ds.dir+" "+ds.file, fmt.Sprintf("%d.%d", i, j), true, q)
			}
		}
		for _, l := range readLines(t, filepath.Join(dir, "conformance/items.jsonl")) {
			var it struct{ ID, Gold, Pred string }
			if err := json.Unmarshal([]byte(l), &it); err != nil {
				t.Fatalf("%s conformance: %v", ds.dir, err)
			}
			add(SQL, ds.dir+" conformance gold", it.ID, true, it.Gold)
			add(SQL, ds.dir+" conformance pred", it.ID, false, it.Pred)
		}
	}

	// SPARQL.
	bqa := sharedDataPath(t, "buildingqa")
	pairs, _ := filepath.Glob(filepath.Join(bqa, "Benchmark_QA_pairs/*.json"))
	if len(pairs) == 0 {
		t.Fatalf("no BuildingQA QA pairs under %s", bqa)
	}
	for _, f := range pairs {
		var bs []struct {
			Queries []struct {
				ID     string `json:"query_id"`
				SPARQL string `json:"sparql_query"`
			} `json:"queries"`
		}
		readJSON(t, f, &bs)
		for _, b := range bs {
			for _, q := range b.Queries {
				add(SPARQL, "buildingqa "+filepath.Base(f), q.ID, true, q.SPARQL)
			}
		}
	}
	results, _ := filepath.Glob(filepath.Join(bqa, "Experiment_Results/ReAct_100/*.csv"))
	if len(results) == 0 {
		t.Fatalf("no BuildingQA results under %s", bqa)
	}
	for _, f := range results {
		for _, r := range readCSV(t, f) {
			id := r["query_id"] + "#" + r["question_number"]
			add(SPARQL, "buildingqa "+filepath.Base(f)+" ground_truth_sparql", id, true, r["ground_truth_sparql"])
			add(SPARQL, "buildingqa "+filepath.Base(f)+" generated_sparql", id, false, r["generated_sparql"])
		}
	}
	ck := sharedDataPath(t, "text2sparql_ck25")
	answers, _ := filepath.Glob(filepath.Join(ck, "results/*/ck25_answers.json"))
	if len(answers) == 0 {
		t.Fatalf("no TEXT2SPARQL answers under %s", ck)
	}
	for _, f := range answers {
		var as []struct {
			QName string `json:"qname"`
			Query string `json:"query"`
		}
		readJSON(t, f, &as)
		team := filepath.Base(filepath.Dir(f))
		for _, a := range as {
			add(SPARQL, "text2sparql "+team, a.QName, false, a.Query)
		}
	}

	// Cypher.
	t2c := sharedDataPath(t, "text2cypher")
	for _, f := range []string{"text2cypher_gpt4turbo.csv", "text2cypher_claudeopus.csv"} {
		for i, r := range readCSV(t, filepath.Join(t2c, f)) {
			add(Cypher, "text2cypher "+f, fmt.Sprint(i+2), true, r["cypher"])
		}
	}
	return out
}

// sharedRefusals pins every published query in ../shared/data that Safe
// refuses, by source and id, with a substring of the reason. Each is
// judged right: none is a read-only query the engine would run.
var sharedRefusals = map[string]string{
	// Prose answers with a query inside (a Markdown explanation): the words
	// "use" and "set" in the prose are clause keywords to the lexer, and no
	// engine would run the text.
	"text2cypher text2cypher_claudeopus.csv 882":  "USE",
	"text2cypher text2cypher_claudeopus.csv 2187": "SET",
	// Not SPARQL: "Query 3", and MIPT's refusals to answer ("… the answer
	// is INVALID"), prose with no query form; two of them say "with".
	"text2sparql LABIC ck25:18-en": "no SELECT",
	"text2sparql MIPT ck25:14-en":  "no SELECT",
	"text2sparql MIPT ck25:15-en":  "no SELECT",
	"text2sparql MIPT ck25:18-en":  "no SELECT",
	"text2sparql MIPT ck25:20-en":  "no SELECT",
	"text2sparql MIPT ck25:22-en":  "WITH",
	"text2sparql MIPT ck25:26-en":  "no SELECT",
	"text2sparql MIPT ck25:28-en":  "WITH",
	"text2sparql MIPT ck25:32-en":  "no SELECT",
	"text2sparql MIPT ck25:48-en":  "no SELECT",
}

// TestSafetyOnSharedData runs Safe over every gold and published predicted
// query in ../shared/data. Gold queries are read-only by construction, and
// so is every published prediction here (none writes), so each refusal is a
// false positive unless it is pinned in sharedRefusals with its reason.
// Figures: go test ./check -run TestSafetyOnSharedData -v (docs/validation.md).
func TestSafetyOnSharedData(t *testing.T) {
	qs := sharedQueries(t)
	type tally struct{ n, refused int }
	bySource := map[string]*tally{}
	got := map[string]string{}
	for _, q := range qs {
		ok, reason := Safe(q.Lang, q.Query)
		group := q.Lang + " " + map[bool]string{true: "gold", false: "pred"}[q.Gold] + " " + sourceFamily(q.Source)
		c := bySource[group]
		if c == nil {
			c = &tally{}
			bySource[group] = c
		}
		c.n++
		if ok {
			continue
		}
		if reason == "" {
			t.Errorf("%s: refused without a reason", q.key())
		}
		c.refused++
		got[q.key()] = reason
		want, pinned := sharedRefusals[q.key()]
		switch {
		case !pinned:
			t.Errorf("%s (%s): read-only published query refused: %s\n%s", q.key(), q.Lang, reason, q.Query)
		case !strings.Contains(reason, want):
			t.Errorf("%s: refused for %q, want a reason mentioning %q", q.key(), reason, want)
		default:
			t.Logf("%s: refused (pinned): %s", q.key(), reason)
		}
	}
	for k := range sharedRefusals {
		if _, ok := got[k]; !ok {
			t.Errorf("%s: pinned refusal no longer refused (or the row is gone); update sharedRefusals", k)
		}
	}
	groups := make([]string, 0, len(bySource))
	for g := range bySource {
		groups = append(groups, g)
	}
	sort.Strings(groups)
	for _, g := range groups {
		t.Logf("%-40s %6d queries  %3d refused", g, bySource[g].n, bySource[g].refused)
	}
}

// sourceFamily is the benchmark part of a source name.
func sourceFamily(source string) string {
	f, _, _ := strings.Cut(source, " ")
	return f
}

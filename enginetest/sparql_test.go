package enginetest

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/evalflow/evalflow/engine"
	"github.com/evalflow/evalflow/planner"
	"github.com/evalflow/evalflow/table"
)

const pv = "PREFIX pv: <http://ld.company.org/prod-vocab/>\n"

// ck25Files are the TEXT2SPARQL'25 corporate graph's files (README.md).
func ck25Files(t testing.TB) []string {
	d := filepath.Join(sharedData(t), "text2sparql_ck25", "graph")
	return []string{filepath.Join(d, "prod-vocab.ttl"), filepath.Join(d, "prod-inst.ttl")}
}

// sparqlItem is one SPARQL question: right predictions must score 1 on
// entity_set_f1 and row_match_f1, wrong ones below 1, failing ones 0 with
// their class.
type sparqlItem struct {
	id, db, gold, pred string
	right              bool
	class              string
}

func sparqlPlan(t *testing.T, dir string, items []sparqlItem, vars ...string) *planner.Plan {
	t.Helper()
	var qs, ps []map[string]any
	for _, it := range items {
		qs = append(qs, map[string]any{"id": it.id, "question": it.id, "gold": it.gold, "db": it.db})
		ps = append(ps, map[string]any{"id": it.id, "pred": it.pred})
	}
	dataset := writeJSONL(t, dir, "questions.jsonl", qs)
	preds := writeJSONL(t, dir, "predictions.jsonl", ps)
	root := ""
	for _, it := range items {
		if it.db != "" {
			root = filepath.Dir(it.db)
		}
	}
	return plan(t, filepath.Join("testdata", "sparql.hcl"), append([]string{"dataset=" + dataset, "predictions=" + preds, "graph_root=" + root}, vars...)...)
}

func hclList(xs []string) string {
	b, _ := json.Marshal(xs)
	return string(b)
}

// bqaGolds reads a BuildingQA building's gold queries by query id.
func bqaGolds(t testing.TB, building string) map[string]string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(sharedData(t), "buildingqa", "Benchmark_QA_pairs", building+"_combined.json"))
	if err != nil {
		t.Fatal(err)
	}
	var v []struct {
		Queries []struct {
			ID    string `json:"query_id"`
			Query string `json:"sparql_query"`
		} `json:"queries"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	m := map[string]string{}
	for _, q := range v[0].Queries {
		m[q.ID] = q.Query
	}
	return m
}

// TestSPARQL runs gold queries as predictions (score 1) and wrong or
// broken ones on a BuildingQA graph and on the TEXT2SPARQL'25 graph.
func TestSPARQL(t *testing.T) {
	data := sharedData(t)
	tuc := filepath.Join(data, "buildingqa", "eval_buildings", "TUC_building.ttl")
	g := bqaGolds(t, "TUC_building")
	sets := []struct {
		name  string
		vars  []string
		items []sparqlItem
	}{
		{"buildingqa", nil, []sparqlItem{
			{id: "TUC_001", db: tuc, gold: g["TUC_001"], pred: g["TUC_001"], right: true},
			{id: "TUC_002", db: tuc, gold: g["TUC_002"], pred: g["TUC_002"], right: true},
			{id: "TUC_003", db: tuc, gold: g["TUC_003"], pred: g["TUC_003"], right: true},
			{id: "TUC_005", db: tuc, gold: g["TUC_005"], pred: g["TUC_004"]},
			{id: "TUC_004", db: tuc, gold: g["TUC_004"], pred: "SELECT ?x WHERE { ?x a brick:Zone", class: "syntax"},
		}},
		{"ck25", []string{"files=" + hclList(ck25Files(t))}, []sparqlItem{
			{id: "k1", gold: pv + `SELECT (COUNT(?d) AS ?n) WHERE { ?d a pv:Department }`,
				pred: pv + `SELECT (COUNT(DISTINCT ?dept) AS ?count) WHERE { ?dept a pv:Department . }`, right: true},
			{id: "k2", gold: pv + `SELECT ?name WHERE { ?d a pv:Department ; pv:name ?name }`,
				pred: pv + `SELECT DISTINCT ?n WHERE { ?x pv:name ?n . ?x a pv:Department }`, right: true},
			{id: "k3", gold: `SELECT ?e WHERE { ?e <http://ld.company.org/prod-vocab/memberOf> <http://ld.company.org/prod-instances/dept-73191> }`,
				pred: pv + `SELECT ?e WHERE { ?e pv:memberOf <http://ld.company.org/prod-instances/dept-73191> }`, right: true},
			{id: "k4", gold: pv + `SELECT ?m WHERE { ?m a pv:Manager }`,
				pred: pv + `SELECT ?m WHERE { ?m a pv:Employee }`},
			{id: "k5", gold: pv + `SELECT ?s WHERE { ?s a pv:Supplier }`,
				pred: pv + `SELECT ?s WHERE { ?s a pv:Supplier } ORDER BY`, class: "syntax"},
		}},
	}
	for _, set := range sets {
		t.Run(set.name, func(t *testing.T) {
			pl := sparqlPlan(t, t.TempDir(), set.items, set.vars...)
			res := runPlan(t, pl, 2*time.Minute)
			for _, it := range set.items {
				o := res[it.id]
				if o.Rec == nil {
					t.Errorf("%s: no record", it.id)
					continue
				}
				if o.Rec.GoldError != "" {
					t.Errorf("%s: gold failed: %s", it.id, o.Rec.GoldError)
				}
				if o.Class != it.class {
					t.Errorf("%s: class %q, want %q: %s", it.id, o.Class, it.class, o.Msg)
				}
				for _, m := range []string{"entity_set_f1", "row_match_f1"} {
					s, ok := o.Rec.Score(m)
					switch {
					case !ok || s.Err != "":
						t.Errorf("%s %s: %+v", it.id, m, s)
					case it.right && s.Value != 1:
						t.Errorf("%s %s = %v, want 1", it.id, m, s.Value)
					case !it.right && s.Value >= 1:
						t.Errorf("%s %s = %v, want < 1", it.id, m, s.Value)
					}
					t.Logf("%s %s = %.3f (rows %d)", it.id, m, s.Value, rows(o.Rec.GoldResult))
				}
			}
		})
	}
}

func rows(t *table.Table) int {
	if t == nil {
		return -1
	}
	return t.NumRows()
}

var sparqlAttacks = []attack{
	{id: "insert_data", text: `INSERT DATA { <urn:evil> <urn:p> "x" }`, want: all("safety")},
	{id: "delete_data", text: `DELETE DATA { <http://ld.company.org/prod-instances/dept-73191> a <http://ld.company.org/prod-vocab/Department> }`, want: all("safety")},
	{id: "delete_where", text: `DELETE WHERE { ?s ?p ?o }`, want: all("safety")},
	{id: "delete_insert", text: pv + `DELETE { ?s pv:name ?n } INSERT { ?s pv:name "pwned" } WHERE { ?s pv:name ?n }`, want: all("safety")},
	{id: "with_update", text: `WITH <urn:g> DELETE { ?s ?p ?o } WHERE { ?s ?p ?o }`, want: all("safety")},
	{id: "lowercase_comment", text: "# harmless\ninsert data { <urn:a> <urn:b> <urn:c> }", want: all("safety")},
	{id: "load", text: `LOAD <file:///etc/passwd>`, want: all("safety")},
	{id: "load_into", text: `LOAD SILENT <http://127.0.0.1:9/evil.ttl> INTO GRAPH <urn:g>`, want: all("safety")},
	{id: "clear", text: `CLEAR ALL`, want: all("safety")},
	{id: "drop", text: `DROP DEFAULT`, want: all("safety")},
	{id: "create", text: `CREATE GRAPH <urn:g>`, want: all("safety")},
	{id: "copy", text: `COPY DEFAULT TO <urn:g>`, want: all("safety")},
	{id: "move", text: `MOVE DEFAULT TO <urn:g>`, want: all("safety")},
	{id: "add", text: `ADD DEFAULT TO <urn:g>`, want: all("safety")},
	{id: "construct", text: `CONSTRUCT { ?s ?p ?o } WHERE { ?s ?p ?o }`, want: all("safety")},
	// Sniffed as SELECT and sent as a query: Oxigraph's parser refuses the
	// update after it.
	{id: "select_then_update", text: `SELECT * WHERE { ?s ?p ?o } LIMIT 1 ; INSERT DATA { <urn:a> <urn:b> <urn:c> }`, want: all("syntax")},
}

// sparqlTimeouts run after the attacks, in a run of their own: a timeout
// kills the embedded server, and the live-store check must see the server
// the attacks ran on.
var sparqlTimeouts = []attack{
	{id: "cartesian", text: `SELECT (COUNT(*) AS ?n) WHERE { ?a ?b ?c . ?d ?e ?f . ?g ?h ?i }`, want: all("timeout")},
	{id: "cartesian_distinct", text: `SELECT DISTINCT ?a ?d ?g WHERE { ?a ?b ?c . ?d ?e ?f . ?g ?h ?i }`, want: all("timeout")},
}

// TestAdversarialSPARQL runs SPARQL updates, non-SELECT forms and
// blow-ups on the TEXT2SPARQL'25 graph, validated and raw, and requires
// the TTL files unchanged (sha256), the live store unchanged (its triple
// count and a sorted dump of every triple, read on the same server right
// after the attacks), each failure on its item and each timeout within
// 10% of its setting.
func TestAdversarialSPARQL(t *testing.T) {
	if testing.Short() {
		t.Skip("timeouts take seconds and restart Oxigraph")
	}
	files := ck25Files(t)
	sums := map[string]string{}
	for _, f := range files {
		sums[f] = fileSum(t, f)
	}
	const setting = 3 * time.Second
	for _, validate := range []bool{true, false} {
		name := map[bool]string{true: "validated", false: "raw"}[validate]
		t.Run(name, func(t *testing.T) {
			for _, run := range []struct {
				attacks     []attack
				concurrency int
			}{{sparqlAttacks, 1}, {sparqlTimeouts, 2}} {
				var items []sparqlItem
				for _, a := range run.attacks {
					items = append(items, sparqlItem{id: a.id, gold: pv + `SELECT (COUNT(?d) AS ?n) WHERE { ?d a pv:Department }`, pred: a.text})
				}
				pl := sparqlPlan(t, t.TempDir(), items, "files="+hclList(files), "timeout="+setting.String(),
					fmt.Sprintf("validate=%v", validate), fmt.Sprintf("concurrency=%d", run.concurrency))
				ex := pl.Engines["kg"].Exec
				before := storeDump(t, ex)
				start := time.Now()
				res := runPlan(t, pl, 2*time.Minute)
				t.Logf("run took %v", time.Since(start).Round(time.Millisecond))
				for _, a := range run.attacks {
					o := res[a.id]
					want, got := a.wantClass("sparql"), o.Class
					if validate && want != "timeout" && (got == "safety" || got == "syntax") {
						got = want // stopped before it ran
					}
					if got != want {
						t.Errorf("%s: class %q (status %s), want %q: %s", a.id, o.Class, o.Status, want, o.Msg)
					}
					if testing.Verbose() {
						t.Logf("%s: %s/%s %.100s", a.id, o.Status, o.Class, o.Msg)
					}
					if o.Class == "timeout" {
						t.Logf("%s: timeout after %v (setting %v)", a.id, o.Exec.Round(time.Millisecond), setting)
						// The execute timing starts after the deadline's clock (which also
						// covers the query's preparation): it may read a little under the setting.
						if !within(o.Exec, setting, 0.10) {
							t.Errorf("%s: timed out after %v; want %v ± 10%%", a.id, o.Exec, setting)
						}
					}
				}
				if len(run.attacks) == len(sparqlAttacks) {
					// Same server as the attacks (concurrency 1, no timeout
					// has killed it).
					if diff := cmp.Diff(before, storeDump(t, ex)); diff != "" {
						t.Errorf("live store changed (-before +after):\n%s", diff)
					}
				}
			}
		})
	}
	for _, f := range files {
		if got := fileSum(t, f); got != sums[f] {
			t.Errorf("%s changed: sha256 %s, was %s", f, got, sums[f])
		}
	}
}

// storeDump is the live store's triple count and the sha256 of its sorted
// triples, read through the engine.
func storeDump(t testing.TB, ex engine.Executor) []string {
	t.Helper()
	ctx := context.Background()
	q := func(text string) *table.Table {
		tb, err := ex.Execute(ctx, engine.Query{Text: text, MaxRows: 1 << 20, Timeout: time.Minute})
		if err != nil {
			t.Fatalf("%s: %v", text, err)
		}
		return tb
	}
	count := q(`SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }`)
	all := q(`SELECT ?s ?p ?o WHERE { ?s ?p ?o }`)
	lines := make([]string, 0, all.NumRows())
	for r := 0; r < all.NumRows(); r++ {
		var cells []string
		for c := 0; c < 3; c++ {
			cells = append(cells, table.Format(all.Rows[r][c]))
		}
		lines = append(lines, strings.Join(cells, " "))
	}
	sort.Strings(lines)
	if all.NumRows() < 1000 {
		t.Fatalf("store holds %d triples: the graph did not load", all.NumRows())
	}
	return []string{fmt.Sprint("count ", table.Format(count.Rows[0][0])), fmt.Sprint("triples ", all.NumRows()), "sha256 " + textSum(lines)}
}

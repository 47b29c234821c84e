package sparql_test

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"github.com/evalflow/evalflow/internal/shareddata"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/evalflow/evalflow/engine"
	"github.com/evalflow/evalflow/engine/sparql"
	"github.com/evalflow/evalflow/item"
	"github.com/evalflow/evalflow/metrics"
	"github.com/evalflow/evalflow/table"
)

// buildingQADir returns ../shared/data/buildingqa (shareddata.Dir): the
// data has no licence, so it is read in place and never copied here.
func buildingQADir(t testing.TB) string { return shareddata.Dir(t, "buildingqa") }

// reliable are the buildings whose published per-row scores the data's
// README says match BuildingQA's own metrics.py (109 of 110 rows); bldg11's
// gold result sizes differ between engines.
var reliable = map[string]bool{"TUC_building": true, "dflexlibs_multizone": true, "b59": true}

// bqaRun caches query results per (building, query text).
type bqaRun struct {
	e  *sparql.Executor
	mu sync.Mutex
	m  map[string]bqaResult
}

type bqaResult struct {
	t   *table.Table
	err error
	d   time.Duration
}

func (r *bqaRun) run(t testing.TB, dir, building, q string, timeout time.Duration) bqaResult {
	key := building + "\x00" + q
	r.mu.Lock()
	defer r.mu.Unlock()
	if res, ok := r.m[key]; ok {
		return res
	}
	start := time.Now()
	tb, err := r.e.Execute(context.Background(), engine.Query{
		Text: q, DB: filepath.Join(dir, "eval_buildings", building+".ttl"), Timeout: timeout,
	})
	res := bqaResult{tb, err, time.Since(start)}
	r.m[key] = res
	return res
}

func readCSV(t testing.TB, path string) ([]map[string]string, error) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		return nil, err
	}
	var out []map[string]string
	for _, rec := range recs[1:] {
		m := map[string]string{}
		for i, h := range recs[0] {
			m[h] = rec[i]
		}
		out = append(out, m)
	}
	return out, nil
}

// TestBuildingQAGolds runs the 27 gold queries of BuildingQA on their
// building graphs and compares result sizes with the published
// gt_num_rows/gt_num_cols (the authors' engine) and with rdflib 6.1.1's
// (recomputed/…per_row.jsonl).
func TestBuildingQAGolds(t *testing.T) {
	dir := buildingQADir(t)
	needOxigraph(t)
	rows, err := readCSV(t, filepath.Join(dir, "Experiment_Results", "ReAct_100", "o3-mini.csv"))
	if err != nil {
		t.Fatal(err)
	}
	published := map[string][2]int{}
	for _, r := range rows {
		nr, _ := strconv.ParseFloat(r["gt_num_rows"], 64)
		nc, _ := strconv.ParseFloat(r["gt_num_cols"], 64)
		published[r["query_id"]] = [2]int{int(nr), int(nc)}
	}
	rdflib := map[string]int{}
	jf, err := os.ReadFile(filepath.Join(dir, "recomputed", "ReAct_100_o3-mini_per_row.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(jf)), "\n") {
		var r struct {
			QueryID string `json:"query_id"`
			GoldOK  bool   `json:"gold_ok"`
			Rows    int    `json:"gold_num_rows"`
		}
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatal(err)
		}
		if r.GoldOK {
			rdflib[r.QueryID] = r.Rows
		}
	}
	e := newExec(t, map[string]any{"max_databases": 4, "data_prefixes": true}, engine.Config{})
	run := &bqaRun{e: e, m: map[string]bqaResult{}}
	files, _ := filepath.Glob(filepath.Join(dir, "Benchmark_QA_pairs", "*_combined.json"))
	sort.Strings(files)
	same, sameRL, total := 0, 0, 0
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var qa []struct {
			Building string `json:"building_id"`
			Queries  []struct {
				ID     string `json:"query_id"`
				SPARQL string `json:"sparql_query"`
			} `json:"queries"`
		}
		if err := json.Unmarshal(b, &qa); err != nil {
			t.Fatal(err)
		}
		building := strings.TrimSuffix(filepath.Base(f), "_combined.json")
		for _, g := range qa[0].Queries {
			if testing.Short() && !reliable[building] {
				continue
			}
			res := run.run(t, dir, building, g.SPARQL, 120*time.Second)
			pub := published[g.ID]
			total++
			if res.err != nil {
				t.Errorf("%s %s: %v", building, g.ID, res.err)
				continue
			}
			got := [2]int{res.t.NumRows(), res.t.NumCols()}
			rl, haveRL := rdflib[g.ID]
			t.Logf("%-20s %-14s rows %6d cols %2d  published %6d×%-2d  rdflib %s  (%s)", building, g.ID, got[0], got[1], pub[0], pub[1],
				map[bool]string{true: strconv.Itoa(rl), false: "-"}[haveRL], res.d.Round(time.Millisecond))
			if haveRL {
				sameRL++
				if got[0] != rl {
					sameRL--
					t.Errorf("%s %s: %d rows, rdflib 6.1.1 %d", building, g.ID, got[0], rl)
				}
			}
			if got == pub {
				same++
			} else if reliable[building] {
				t.Errorf("%s %s: %d×%d, published %d×%d", building, g.ID, got[0], got[1], pub[0], pub[1])
			}
		}
	}
	t.Logf("gold result sizes equal to the published ones: %d/%d; row counts equal to rdflib 6.1.1's: %d/%d", same, total, sameRL, len(rdflib))
}

// TestBuildingQAAgreement executes the published ReAct(100) predictions and
// their golds, scores entity_set_f1 and row_match_f1 with the metrics
// package (BuildingQA profile) and compares with the published per-row
// values, which are reliable for TUC_building, dflexlibs_multizone and b59.
// This is the end-to-end check: engine normal forms + metrics = metrics.py
// over rdflib.
func TestBuildingQAAgreement(t *testing.T) {
	dir := buildingQADir(t)
	needOxigraph(t)
	if testing.Short() {
		t.Skip("runs about 600 queries")
	}
	type recomputed struct {
		QueryID        string `json:"query_id"`
		QuestionNumber int    `json:"question_number"`
		GenOK          bool   `json:"gen_ok"`
		GenError       string `json:"gen_error"`
		RowTimeout     bool   `json:"row_timeout"`
	}
	var rec []recomputed
	jf, err := os.ReadFile(filepath.Join(dir, "recomputed", "ReAct_100_o3-mini_per_row.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(jf)), "\n") {
		var r recomputed
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatal(err)
		}
		rec = append(rec, r)
	}
	newMetric := func(name string) metrics.ItemMetric {
		d, ok := metrics.Default.Lookup(name)
		if !ok {
			t.Fatalf("metric %s not registered", name)
		}
		m, err := d.NewItem(nil)
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	entity, rowm := newMetric("entity_set_f1"), newMetric("row_match_f1")
	e := newExec(t, map[string]any{"max_databases": 4, "data_prefixes": true}, engine.Config{})
	run := &bqaRun{e: e, m: map[string]bqaResult{}}
	ctx := context.Background()
	for _, model := range []string{"o3-mini", "o4-mini", "gemini-flash-2.5"} {
		t.Run(model, func(t *testing.T) {
			rows, err := readCSV(t, filepath.Join(dir, "Experiment_Results", "ReAct_100", model+".csv"))
			if err != nil {
				t.Fatal(err)
			}
			type tally struct{ rows, entity, row, both, genErr int }
			per := map[string]*tally{}
			var disagree []string
			for i, r := range rows {
				building := r["building"]
				if !reliable[building] {
					continue
				}
				if model == "o3-mini" && rec[i].RowTimeout {
					continue // the upstream re-scoring timed out here too
				}
				tl := per[building]
				if tl == nil {
					tl = &tally{}
					per[building] = tl
				}
				gold := run.run(t, dir, building, r["ground_truth_sparql"], 120*time.Second)
				if gold.err != nil {
					t.Errorf("%s q%s gold: %v", r["query_id"], r["question_number"], gold.err)
					continue
				}
				pred := run.run(t, dir, building, r["generated_sparql"], 15*time.Second)
				record := &item.Record{
					Item: item.Item{ID: r["query_id"], Gold: r["ground_truth_sparql"]}, GoldDone: true, GoldResult: gold.t,
				}
				at := &item.Attempt{Query: r["generated_sparql"], Executed: true, Result: pred.t}
				if pred.err != nil {
					t.Logf("  %s q%s: prediction failed on Oxigraph after %s: %s", r["query_id"], r["question_number"], pred.d.Round(time.Millisecond), firstLine(pred.err.Error()))
					tl.genErr++
					at.Result = nil
					at.SetError(engine.ClassOf(pred.err), pred.err.Error())
				}
				record.Samples = []*item.Sample{{Attempts: []*item.Attempt{at}}}
				es := entity.Score(ctx, metrics.Input{Record: record})
				rs := rowm.Score(ctx, metrics.Input{Record: record})
				pe, _ := strconv.ParseFloat(r["entity_set_f1"], 64)
				pr, _ := strconv.ParseFloat(r["row_matching_f1"], 64)
				okE, okR := math.Abs(es.Value-pe) <= 1e-9, math.Abs(rs.Value-pr) <= 1e-9
				tl.rows++
				if okE {
					tl.entity++
				}
				if okR {
					tl.row++
				}
				if okE && okR {
					tl.both++
				} else {
					why := ""
					if pred.err != nil {
						why = " (oxigraph: " + firstLine(pred.err.Error()) + ")"
					} else if model == "o3-mini" && !rec[i].GenOK {
						why = " (rdflib raised: " + firstLine(rec[i].GenError) + ")"
					}
					disagree = append(disagree, fmt.Sprintf("%s q%s: entity %.4f vs published %.4f, row %.4f vs %.4f; rows %d vs published %s%s",
						r["query_id"], r["question_number"], es.Value, pe, rs.Value, pr, pred.t.NumRows(), r["gen_num_rows"], why))
				}
			}
			all := tally{}
			for _, b := range []string{"TUC_building", "dflexlibs_multizone", "b59"} {
				tl := per[b]
				if tl == nil {
					continue
				}
				t.Logf("%-20s %3d rows: entity_set_f1 agrees %3d, row_match_f1 %3d, both %3d (%d predictions failed on Oxigraph)", b, tl.rows, tl.entity, tl.row, tl.both, tl.genErr)
				all.rows += tl.rows
				all.entity += tl.entity
				all.row += tl.row
				all.both += tl.both
			}
			t.Logf("%s: both metrics agree with the published values on %d/%d rows (entity %d, row %d)", model, all.both, all.rows, all.entity, all.row)
			for _, d := range disagree {
				t.Logf("  differs: %s", d)
			}
			// Each disagreement is explained in docs/engines.md; more means a
			// regression in the engine's normal forms or in the metrics.
			if max := maxDisagree[model]; len(disagree) > max {
				t.Errorf("%d rows disagree, at most %d expected", len(disagree), max)
			}
		})
	}
}

// maxDisagree is the number of rows per model known to differ from the
// published values for reasons outside evalflow (see docs/engines.md):
// o3-mini TUC_004 q1 concatenates with GROUP_CONCAT, whose order is
// engine-defined; gemini TUC_003 q3 has BIND(?zone AS ?space) alone in a
// UNION branch, where ?zone is out of scope, which rdflib evaluates
// against the outer binding and Oxigraph, as the standard says, does not.
var maxDisagree = map[string]int{"o3-mini": 1, "o4-mini": 0, "gemini-flash-2.5": 1}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	if len(s) > 120 {
		s = s[:120] + "…"
	}
	return s
}

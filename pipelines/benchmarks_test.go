package pipelines_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"github.com/evalflow/evalflow/llm/fake"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/zclconf/go-cty/cty"
	_ "modernc.org/sqlite"

	"github.com/evalflow/evalflow/dataset"
	"github.com/evalflow/evalflow/dsl"
	"github.com/evalflow/evalflow/item"
	"github.com/evalflow/evalflow/nodes/aggregate"
	"github.com/evalflow/evalflow/planner"
)

// runAll runs a plan and returns its records in delivery (dataset) order
// and its aggregate rows keyed "group/value/metric".
func runAll(t *testing.T, pl *planner.Plan) ([]*item.Record, map[string]aggregate.Row) {
	t.Helper()
	var recs []*item.Record
	if err := pl.Run(context.Background(), planner.RunOptions{OnRecord: func(r *item.Record) error {
		recs = append(recs, r)
		return nil
	}}); err != nil {
		t.Fatal(err)
	}
	rows := map[string]aggregate.Row{}
	for _, c := range pl.Collectors {
		if ag, ok := c.Stage.(*aggregate.Aggregate); ok {
			for _, r := range ag.Rows(context.Background()) {
				rows[r.Group+"/"+r.Value+"/"+r.Metric] = r
			}
		}
	}
	return recs, rows
}

// copyTree copies the regular files under src to dst, writable.
func copyTree(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		out := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(out, 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(out, b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

func field(r *item.Record, name string) string {
	v, ok := r.Item.Field(name)
	if !ok {
		return "<absent>"
	}
	return dataset.Text(v)
}

// TestSpiderDev runs spider-dev.hcl the way its header says, from a
// directory holding spider/dev.json and spider/database, with one -var:
// the Spider authors' pred_example.txt. The databases are the shared
// schema-only copies (no rows), so ex is mostly 1 and says little; what is
// checked is the plumbing: ids are row indexes, line i of pred.txt is item
// "i", gold comes from query and db from db_id, and ex is computed for
// every item — none is in error unless its database is missing.
func TestSpiderDev(t *testing.T) {
	data := sharedData(t)
	spider := filepath.Join(data, "spider")
	var dev []struct {
		DBID     string `json:"db_id"`
		Query    string `json:"query"`
		Question string `json:"question"`
	}
	b, err := os.ReadFile(filepath.Join(spider, "dev.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &dev); err != nil {
		t.Fatal(err)
	}
	predPath := filepath.Join(spider, "evaluation_examples", "pred_example.txt")
	pb, err := os.ReadFile(predPath)
	if err != nil {
		t.Fatal(err)
	}
	preds := strings.Split(strings.TrimSuffix(string(pb), "\n"), "\n")
	if len(preds) != len(dev) || len(dev) != 1034 {
		t.Fatalf("%d predictions for %d questions, want 1034 of each", len(preds), len(dev))
	}
	pipeline, _ := filepath.Abs("spider-dev.hcl")

	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "spider"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "spider", "dev.json"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	copyTree(t, filepath.Join(spider, "schema_only_db"), filepath.Join(dir, "spider", "database"))
	t.Chdir(dir)

	for _, missing := range []string{"", "concert_singer"} {
		name := "all databases"
		if missing != "" {
			name = "without " + missing
			if err := os.RemoveAll(filepath.Join(dir, "spider", "database", missing)); err != nil {
				t.Fatal(err)
			}
		}
		t.Run(name, func(t *testing.T) {
			pl := load(t, pipeline, "predictions="+predPath)
			recs, rows := runAll(t, pl)
			if len(recs) != len(dev) {
				t.Fatalf("%d records, want %d", len(recs), len(dev))
			}
			bad, errs := 0, 0
			fail := func(format string, args ...any) {
				bad++
				if bad <= 10 {
					t.Errorf(format, args...)
				}
			}
			for i, r := range recs {
				d := dev[i]
				if r.Item.ID != strconv.Itoa(i) {
					fail("record %d has id %q, want the row index", i, r.Item.ID)
					continue
				}
				if r.Item.Gold != d.Query || r.Item.DB != d.DBID || r.Item.Question != d.Question {
					fail("%s: gold %q db %q question %q, want %q %q %q", r.Item.ID, r.Item.Gold, r.Item.DB, r.Item.Question, d.Query, d.DBID, d.Question)
				}
				if len(r.Item.Fields) != 0 {
					fail("%s: pass-through columns %v, want none (only group_by columns)", r.Item.ID, r.Item.Fields)
				}
				if len(r.Samples) != 1 || len(r.Samples[0].Attempts) == 0 || r.Samples[0].Attempts[0].Query != strings.TrimSpace(preds[i]) {
					fail("%s: first attempt is not line %d of pred_example.txt %q", r.Item.ID, i+1, preds[i])
				}
				if d.DBID == missing {
					errs++
					if r.Status != "error" || !strings.Contains(r.Error, missing) {
						fail("%s on the missing %s: status %q error %q, want an error naming it", r.Item.ID, missing, r.Status, r.Error)
					}
					continue
				}
				if r.Status == "error" || r.Status == "cancelled" {
					fail("%s: status %s: %s", r.Item.ID, r.Status, r.Error)
					continue
				}
				s, ok := r.Score("ex")
				if !ok || s.Null || s.Err != "" || (s.Value != 0 && s.Value != 1) {
					fail("%s: ex = %+v, want 0 or 1", r.Item.ID, s)
				}
				if f := r.Final(); f.ErrorClass != "" && s.Value != 0 {
					fail("%s: a failed prediction (%s) scored ex %v", r.Item.ID, f.ErrorClass, s.Value)
				}
			}
			if bad > 10 {
				t.Errorf("... %d problems in all", bad)
			}
			all, ok := rows["all//ex"]
			if !ok {
				t.Fatalf("no overall ex aggregate; have %d rows", len(rows))
			}
			if all.Items != len(dev) || all.ErrItems != errs || all.N != len(dev) {
				t.Errorf("all/ex: items %d, errored %d, n %d; want %d, %d, %d (testsuite is official: errored items count)", all.Items, all.ErrItems, all.N, len(dev), errs, len(dev))
			}
			if r, ok := rows["db/world_1/ex"]; !ok || r.Items != 120 {
				t.Errorf("db/world_1/ex = %+v, want 120 items", r)
			}
		})
	}
}

// birdDB writes dev_databases/<name>/<name>.sqlite under dir.
func birdDB(t *testing.T, dir, name string, stmts ...string) {
	t.Helper()
	p := filepath.Join(dir, name, name+".sqlite")
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite", p)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, s := range stmts {
		if _, err := db.Exec(s); err != nil {
			t.Fatal(err)
		}
	}
}

// TestBirdDev runs bird-dev.hcl the way its header says, from a directory
// holding bird/dev/dev.json and bird/dev/dev_databases, with one -var: a
// BIRD predict_dev.json. The question ids are not the row indexes, so ids
// must come from question_id; evidence and difficulty pass through; ex
// compares as BIRD does (sets of rows: a de-duplicated answer is right,
// swapped columns are not); aggregates are grouped by difficulty and db.
func TestBirdDev(t *testing.T) {
	pipeline, _ := filepath.Abs("bird-dev.hcl")
	dir := t.TempDir()
	devDir := filepath.Join(dir, "bird", "dev")
	birdDB(t, filepath.Join(devDir, "dev_databases"), "schools",
		`CREATE TABLE school (id INTEGER PRIMARY KEY, name TEXT, city TEXT, enrollment INTEGER)`,
		`INSERT INTO school VALUES (1,'Oak','Fresno',300),(2,'Elm','Fresno',120),(3,'Ash','Davis',90)`)
	type q struct {
		QuestionID int    `json:"question_id"`
		DBID       string `json:"db_id"`
		Question   string `json:"question"`
		Evidence   string `json:"evidence"`
		SQL        string `json:"SQL"`
		Difficulty string `json:"difficulty"`
	}
	dev := []q{
		{101, "schools", "How many schools are there?", "", "SELECT count(*) FROM school", "simple"},
		{102, "schools", "Which cities have a school?", "", "SELECT city FROM school", "simple"},
		{103, "schools", "Name and id of large schools?", "large refers to enrollment > 100", "SELECT id, name FROM school WHERE enrollment > 100", "moderate"},
		{104, "schools", "Which school is the largest?", "largest refers to MAX(enrollment)", "SELECT name FROM school ORDER BY enrollment DESC LIMIT 1", "challenging"},
		{105, "nowhere", "How many things?", "", "SELECT count(*) FROM thing", "moderate"},
	}
	b, _ := json.MarshalIndent(dev, "", "    ") // BIRD's dev.json is an indented array
	if err := os.WriteFile(filepath.Join(devDir, "dev.json"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	sep := "\t----- bird -----\t"
	preds := map[string]string{
		"101": "SELECT count(id) FROM school" + sep + "schools",
		"102": "SELECT city FROM school GROUP BY city" + sep + "schools", // a set, as BIRD compares
		"103": "SELECT name, id FROM school WHERE enrollment > 100" + sep + "schools",
		"104": "SELECT name FROM school ORDER BY enrollment DESC LIMIT 1" + sep + "elsewhere", // db ignored
		"105": "SELECT count(*) FROM thing" + sep + "nowhere",
	}
	pb, _ := json.MarshalIndent(preds, "", "    ")
	if err := os.WriteFile(filepath.Join(dir, "predict_dev.json"), pb, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)

	pl := load(t, pipeline, "predictions=predict_dev.json")
	recs, rows := runAll(t, pl)
	if len(recs) != len(dev) {
		t.Fatalf("%d records, want %d", len(recs), len(dev))
	}
	wantEX := map[string]float64{"101": 1, "102": 1, "103": 0, "104": 1, "105": 0}
	for i, r := range recs {
		d := dev[i]
		id := strconv.Itoa(d.QuestionID)
		if r.Item.ID != id {
			t.Errorf("record %d has id %q, want question_id %s", i, r.Item.ID, id)
			continue
		}
		if r.Item.Gold != d.SQL || r.Item.DB != d.DBID || r.Item.Question != d.Question {
			t.Errorf("%s: gold %q db %q question %q, want %q %q %q", id, r.Item.Gold, r.Item.DB, r.Item.Question, d.SQL, d.DBID, d.Question)
		}
		if got := field(r, "evidence"); got != d.Evidence {
			t.Errorf("%s: evidence %q, want %q", id, got, d.Evidence)
		}
		if got := field(r, "difficulty"); got != d.Difficulty {
			t.Errorf("%s: difficulty %q, want %q", id, got, d.Difficulty)
		}
		if want, _, _ := strings.Cut(preds[id], sep); r.Final() == nil || r.Final().Query != want {
			t.Errorf("%s: prediction %+v, want %q", id, r.Final(), want)
		}
		if d.DBID == "nowhere" {
			if r.Status != "error" || !strings.Contains(r.Error, "nowhere") {
				t.Errorf("%s on a missing database: status %q error %q, want an error naming it", id, r.Status, r.Error)
			}
		} else if r.Status != "ok" {
			t.Errorf("%s: status %s: %s", id, r.Status, r.Error)
		}
		ex, ok := r.Score("ex")
		if !ok || ex.Null || ex.Value != wantEX[id] || (r.Status == "ok" && ex.Err != "") {
			t.Errorf("%s: ex = %+v, want %v", id, ex, wantEX[id])
		}
		if f1, ok := r.Score("bird_soft_f1"); r.Status == "ok" && (!ok || f1.Null || f1.Err != "") {
			t.Errorf("%s: bird_soft_f1 = %+v", id, f1)
		}
	}
	for key, want := range map[string]struct {
		items int
		mean  float64
	}{
		"all//ex":                   {5, 3.0 / 5}, // bird is official: the errored item counts as 0
		"difficulty/simple/ex":      {2, 1},
		"difficulty/moderate/ex":    {2, 0},
		"difficulty/challenging/ex": {1, 1},
		"db/schools/ex":             {4, 3.0 / 4},
		"db/nowhere/ex":             {1, 0},
	} {
		r, ok := rows[key]
		if !ok {
			t.Errorf("no aggregate %s", key)
			continue
		}
		if r.Items != want.items || r.Mean != want.mean {
			t.Errorf("%s: %d items mean %v, want %d items mean %v", key, r.Items, r.Mean, want.items, want.mean)
		}
	}
	if _, ok := rows["difficulty/simple/bird_soft_f1"]; !ok {
		t.Error("no bird_soft_f1 aggregate by difficulty")
	}
}

// TestBenchmarkPipelinesGenerate: -var model=NAME switches the curated
// pipelines from replaying a file to generating with the model; BIRD's
// evidence reaches the prompt.
func TestBenchmarkPipelinesGenerate(t *testing.T) {
	pipeline, _ := filepath.Abs("bird-dev.hcl")
	dir := t.TempDir()
	devDir := filepath.Join(dir, "bird", "dev")
	birdDB(t, filepath.Join(devDir, "dev_databases"), "schools",
		`CREATE TABLE school (id INTEGER PRIMARY KEY, name TEXT, enrollment INTEGER)`,
		`INSERT INTO school VALUES (1,'Oak',300),(2,'Elm',120)`)
	dev := `[{"question_id": 7, "db_id": "schools", "question": "How many large schools?", "evidence": "large refers to enrollment > 200", "SQL": "SELECT count(*) FROM school WHERE enrollment > 200", "difficulty": "simple"}]`
	if err := os.WriteFile(filepath.Join(devDir, "dev.json"), []byte(dev), 0o644); err != nil {
		t.Fatal(err)
	}
	var prompts []string
	var mu sync.Mutex
	srv := fake.New(fake.OpenAI, fake.WithResponder(func(r fake.Request) string {
		mu.Lock()
		prompts = append(prompts, r.Prompt())
		mu.Unlock()
		return "```sql\nSELECT count(*) FROM school WHERE enrollment > 200\n```"
	}))
	defer srv.Close()
	t.Setenv("OPENAI_API_KEY", "test")
	t.Setenv("EVALFLOW_CACHE_DIR", filepath.Join(dir, "cache"))
	t.Chdir(dir)
	pl := load(t, pipeline, "model=fake-model", "base_url="+srv.URL)
	var recs []*item.Record
	if err := pl.Run(context.Background(), planner.RunOptions{OnRecord: func(r *item.Record) error {
		recs = append(recs, r)
		return nil
	}}); err != nil {
		t.Fatal(err)
	}
	if len(recs) != 1 || recs[0].Status != "ok" {
		t.Fatalf("records: %+v", recs)
	}
	if s, ok := recs[0].Score("ex"); !ok || s.Value != 1 {
		t.Errorf("ex = %+v, want 1 for the generated query", s)
	}
	if len(prompts) != 1 || !strings.Contains(prompts[0], "External knowledge: large refers to enrollment > 200") || !strings.Contains(prompts[0], "school(id INTEGER") {
		t.Errorf("prompt: %q", prompts)
	}
	// Neither set: the model variable's rule names both ways.
	for _, f := range []string{"spider-dev.hcl", "bird-dev.hcl"} {
		abs, _ := filepath.Abs(filepath.Join(filepath.Dir(pipeline), f))
		_, diags := dsl.Load(abs, dsl.LoadOptions{Env: []string{}})
		if !diags.HasErrors() || !strings.Contains(diags.Error(), "set -var predictions=FILE (replay) or -var model=NAME (generate)") {
			t.Errorf("%s without predictions or model: %v", f, diags)
		}
	}
}

// TestBenchmarkPipelineDefaults keeps each pipeline's header honest: it
// shows the one-line command with the pipeline's own path, that one -var is
// enough (every other variable has a default), and the defaults are the
// benchmark's published layout and official comparison.
func TestBenchmarkPipelineDefaults(t *testing.T) {
	for _, tc := range []struct {
		file, flag, dataset, databases, compare string
	}{
		{"spider-dev.hcl", "-var predictions=pred.txt", "spider/dev.json", "spider/database", "testsuite"},
		{"bird-dev.hcl", "-var predictions=predict_dev.json", "bird/dev/dev.json", "bird/dev/dev_databases", "bird"},
	} {
		t.Run(tc.file, func(t *testing.T) {
			b, err := os.ReadFile(tc.file)
			if err != nil {
				t.Fatal(err)
			}
			header, found := true, false
			for _, line := range strings.Split(string(b), "\n") {
				header = header && strings.HasPrefix(line, "#")
				if header && strings.TrimSpace(strings.TrimPrefix(line, "#")) == "evalflow run pipelines/"+tc.file+" "+tc.flag {
					found = true
				}
			}
			if !found {
				t.Errorf("the header does not show `evalflow run pipelines/%s %s`", tc.file, tc.flag)
			}
			p, diags := dsl.Load(tc.file, dsl.LoadOptions{Vars: []string{"predictions=p"}, Env: []string{}})
			if diags.HasErrors() {
				t.Fatalf("with only predictions set: %v", diags)
			}
			got := map[string]string{}
			for _, n := range []string{"dataset", "databases", "compare"} {
				if v := p.Variables[n]; v != nil && v.Value.Type() == cty.String {
					got[n] = v.Value.AsString()
				}
			}
			want := map[string]string{"dataset": tc.dataset, "databases": tc.databases, "compare": tc.compare}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("defaults (-want +got):\n%s", diff)
			}
		})
	}
}

package main

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/evalflow/evalflow/dsl"
	"github.com/evalflow/evalflow/llm"
	"github.com/evalflow/evalflow/llm/fake"
	"github.com/evalflow/evalflow/planner"
	"github.com/evalflow/evalflow/rundir"
	"github.com/evalflow/evalflow/store"
)

// rerunCmd runs `evalflow rerun ARGS` in the test process.
func rerunCmd(t *testing.T, args ...string) cmdResult {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := cmdRerun(context.Background(), args, &stdout, &stderr)
	return cmdResult{code: code, stdout: stdout.String(), stderr: stderr.String()}
}

// quickstartRun copies the quickstart into dir/qs and runs it into dir/out
// with the binary.
func quickstartRun(t *testing.T, dir, out string, args ...string) string {
	t.Helper()
	qs := filepath.Join(dir, "qs")
	if _, err := os.Stat(qs); err != nil {
		copyQuickstart(t, qs)
	}
	res := runBin(t, evalflowBinary(t), dir, append([]string{"run", qs, "-quiet", "-out", out}, args...)...)
	if res.code != 0 {
		t.Fatalf("run: exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	return qs
}

// sameRows fails unless two runs' Parquet files hold equal rows (timing
// columns aside; drop lists further columns that may differ).
func sameRows(t *testing.T, a, b, file string, drop ...string) {
	t.Helper()
	ra, rb := itemRows(t, filepath.Join(a, file)), itemRows(t, filepath.Join(b, file))
	for _, rows := range [][]map[string]any{ra, rb} {
		for _, r := range rows {
			for _, c := range drop {
				delete(r, c)
			}
		}
	}
	if diff := cmp.Diff(ra, rb); diff != "" {
		t.Errorf("%s of the run and the rerun differ (-run +rerun):\n%s", file, diff)
	}
}

// TestRerunQuickstart: a rerun reproduces the run's items, attempts and
// aggregates exactly (timings aside) with the same fingerprint, and says
// what it ran.
func TestRerunQuickstart(t *testing.T) {
	dir := t.TempDir()
	qs := quickstartRun(t, dir, "a", "-var", "compare=bird", "-limit", "10")
	run := filepath.Join(dir, "a")
	res := rerunCmd(t, run, "-quiet")
	if res.code != 0 {
		t.Fatalf("rerun: exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	want := fmt.Sprintf("evalflow run %s -var compare=bird -limit 10 -max-errors 0 -ci-seed 1 -out %s-rerun -quiet", qs, run)
	if !strings.Contains(res.stderr, want) {
		t.Errorf("stderr does not show the command %q:\n%s", want, res.stderr)
	}
	rerun := run + "-rerun"
	sameRows(t, run, rerun, rundir.ItemsFile)
	sameRows(t, run, rerun, rundir.AttemptsFile, "cached") // the rerun's queries come from the stage cache
	sameRows(t, run, rerun, rundir.AggregatesFile)
	m, m2 := readManifest(t, run), readManifest(t, rerun)
	if diff := cmp.Diff(m.Fingerprint, m2.Fingerprint); diff != "" {
		t.Errorf("fingerprints differ (-run +rerun):\n%s", diff)
	}
	if diff := cmp.Diff(m.Options, m2.Options); diff != "" {
		t.Errorf("options differ (-run +rerun):\n%s", diff)
	}
	if m2.Counts.Items != 10 || m2.Status != "complete" {
		t.Errorf("rerun: %d items, status %s", m2.Counts.Items, m2.Status)
	}
	// Run again into the same -out: nothing to do.
	if res := rerunCmd(t, run, "-quiet"); res.code != 0 || !strings.Contains(res.stdout, "nothing to do") {
		t.Errorf("second rerun: exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
}

// TestRerunRefusesChangedInputs: an input changed since the run is named
// and nothing runs (exit 2); -allow-version lets a version change through.
func TestRerunRefusesChangedInputs(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(t *testing.T, qs, run string)
		args   []string
		want   []string // in stderr
		not    []string // not in stderr
		code   int
	}{
		{
			name: "predictions",
			change: func(t *testing.T, qs, _ string) {
				appendString(t, filepath.Join(qs, "data", "predictions.jsonl"), `{"id": "zz", "pred": "SELECT 1"}`+"\n")
			},
			want: []string{"stage.generate.predictions (", "predictions.jsonl): sha256 "},
			not:  []string{"pipeline", "dataset"},
			code: exitRun,
		},
		{
			name:   "pipeline",
			change: func(t *testing.T, qs, _ string) { appendString(t, filepath.Join(qs, "pipeline.hcl"), "# edited\n") },
			want:   []string{"pipeline QS: sha256 "},
			not:    []string{"predictions", "dataset"},
			code:   exitRun,
		},
		{
			name:   "dataset",
			change: func(t *testing.T, qs, _ string) { appendString(t, filepath.Join(qs, "data", "questions.jsonl"), "\n") },
			want:   []string{"dataset QS/data/questions.jsonl: sha256 "},
			not:    []string{"pipeline", "predictions"},
			code:   exitRun,
		},
		{
			name: "version",
			change: func(t *testing.T, _, run string) {
				editManifest(t, run, func(m map[string]any) { m["evalflow_version"] = "0.0.1-old" })
			},
			want: []string{"the run was made with evalflow 0.0.1-old, this is evalflow " + buildVersion()},
			code: exitRun,
		},
		{
			name: "version allowed",
			change: func(t *testing.T, _, run string) {
				editManifest(t, run, func(m map[string]any) { m["evalflow_version"] = "0.0.1-old" })
			},
			args: []string{"-allow-version"},
			want: []string{"note: the run was made with evalflow 0.0.1-old"},
			code: exitOK,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			qs := quickstartRun(t, dir, "a", "-limit", "5")
			run := filepath.Join(dir, "a")
			if tc.name == "predictions" && readManifest(t, run).Inputs == nil {
				t.Skip("manifest.json has no inputs: runcmd.go does not record inputFiles yet")
			}
			tc.change(t, qs, run)
			res := rerunCmd(t, append([]string{run, "-quiet"}, tc.args...)...)
			if res.code != tc.code {
				t.Fatalf("exit %d, want %d\n%s%s", res.code, tc.code, res.stdout, res.stderr)
			}
			for _, w := range tc.want {
				if w = strings.ReplaceAll(w, "QS", qs); !strings.Contains(res.stderr, w) {
					t.Errorf("stderr lacks %q:\n%s", w, res.stderr)
				}
			}
			if tc.code == exitOK {
				return
			}
			for _, n := range tc.not {
				if strings.Contains(res.stderr, "  "+n) {
					t.Errorf("stderr names %s, which did not change:\n%s", n, res.stderr)
				}
			}
			if !strings.Contains(res.stderr, "nothing was run") {
				t.Errorf("stderr does not say nothing ran:\n%s", res.stderr)
			}
			if _, err := os.Stat(run + "-rerun"); err == nil {
				t.Errorf("a refused rerun wrote %s-rerun", run)
			}
		})
	}
}

func editManifest(t *testing.T, dir string, edit func(map[string]any)) {
	t.Helper()
	path := filepath.Join(dir, rundir.ManifestName)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	edit(m)
	b, _ = json.MarshalIndent(m, "", "  ")
	writeFile(t, path, b)
}

// TestRerunInputFiles: the files stage blocks name are the run's inputs,
// except those the fingerprint covers (the dataset, a variable's file).
func TestRerunInputFiles(t *testing.T) {
	dir := t.TempDir()
	qs := filepath.Join(dir, "qs")
	copyQuickstart(t, qs)
	inputs := func(path string, vars ...string) []rundir.ManifestInput {
		t.Helper()
		p, diags := dsl.Load(path, dsl.LoadOptions{Env: []string{}, Vars: vars})
		if diags.HasErrors() {
			t.Fatal(diags)
		}
		pl, diags := planner.Build(context.Background(), p, planner.Options{})
		defer pl.Close()
		if diags.HasErrors() {
			t.Fatal(diags)
		}
		return inputFiles([]*planner.Plan{pl})
	}
	preds := filepath.Join(qs, "data", "predictions.jsonl")
	want := []rundir.ManifestInput{{Name: "stage.generate.predictions", Path: preds, SHA256: store.HashFile(preds)}}
	if diff := cmp.Diff(want, inputs(qs)); diff != "" {
		t.Errorf("quickstart inputs (-want +got):\n%s", diff)
	}
	// The curated pipeline takes its predictions from a variable: the
	// fingerprint's "content of var.predictions" has them.
	repo, _ := filepath.Abs(filepath.Join("..", ".."))
	got := inputs(filepath.Join(repo, "pipelines", "text2sql-replay.hcl"), "dataset="+filepath.Join(qs, "data", "questions.jsonl"),
		"predictions="+preds, "databases="+filepath.Join(qs, "data"))
	if len(got) != 0 {
		t.Errorf("text2sql-replay inputs: %+v, want none", got)
	}
}

// TestRerunSweep: a sweep reruns with the same cells in the same order —
// here not the alphabetical one — and the same rows.
func TestRerunSweep(t *testing.T) {
	dir := t.TempDir()
	quickstartRun(t, dir, "sw", "-sweep", "max_iterations=0,2", "-sweep", "compare=evalflow,bird", "-limit", "10")
	run := filepath.Join(dir, "sw")
	res := rerunCmd(t, run, "-quiet", "-out", filepath.Join(dir, "again"))
	if res.code != 0 {
		t.Fatalf("rerun: exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	m, m2 := readManifest(t, run), readManifest(t, filepath.Join(dir, "again"))
	ids := func(m *rundir.Manifest) []string {
		var out []string
		for _, c := range m.Cells {
			out = append(out, c.ID)
		}
		return out
	}
	want := []string{"max_iterations=0,compare=evalflow", "max_iterations=0,compare=bird", "max_iterations=2,compare=evalflow", "max_iterations=2,compare=bird"}
	if diff := cmp.Diff(want, ids(m)); diff != "" {
		t.Fatalf("the run's cells (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(m.Cells, m2.Cells); diff != "" {
		t.Errorf("cells differ (-run +rerun):\n%s", diff)
	}
	if diff := cmp.Diff(m.Fingerprint, m2.Fingerprint); diff != "" {
		t.Errorf("fingerprints differ (-run +rerun):\n%s", diff)
	}
	sameRows(t, run, filepath.Join(dir, "again"), rundir.ItemsFile)
	sameRows(t, run, filepath.Join(dir, "again"), rundir.AggregatesFile)
}

// TestRerunSweepBlock: a sweep declared in the pipeline, one of its lists
// replaced on the command line in another order, reruns with the same
// cells; the zipped variables keep the block's lists.
func TestRerunSweepBlock(t *testing.T) {
	dir := t.TempDir()
	qs := filepath.Join(dir, "qs")
	copyQuickstart(t, qs)
	appendString(t, filepath.Join(qs, "pipeline.hcl"), `
sweep {
  timeout = ["2s", "3s"]
  zip {
    compare        = ["bird", "evalflow"]
    max_iterations = [2, 0]
  }
}
`)
	quickstartRun(t, dir, "sw", "-sweep", "timeout=3s,2s", "-limit", "5")
	run := filepath.Join(dir, "sw")
	m := readManifest(t, run)
	want := []string{"timeout=3s,compare=bird,max_iterations=2", "timeout=3s,compare=evalflow,max_iterations=0",
		"timeout=2s,compare=bird,max_iterations=2", "timeout=2s,compare=evalflow,max_iterations=0"}
	var ids []string
	for _, c := range m.Cells {
		ids = append(ids, c.ID)
	}
	if diff := cmp.Diff(want, ids); diff != "" {
		t.Fatalf("the run's cells (-want +got):\n%s", diff)
	}
	res := rerunCmd(t, run, "-quiet")
	if res.code != 0 {
		t.Fatalf("rerun: exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	if !strings.Contains(res.stderr, ` -sweep 'timeout=["3s", "2s"]' `) || strings.Contains(res.stderr, "-sweep compare") {
		t.Errorf("rebuilt command:\n%s", res.stderr)
	}
	if diff := cmp.Diff(m.Cells, readManifest(t, run+"-rerun").Cells); diff != "" {
		t.Errorf("cells differ (-run +rerun):\n%s", diff)
	}
	sameRows(t, run, run+"-rerun", rundir.ItemsFile)
}

// TestRerunSweepOrder: the -sweep lists rebuilt from the manifest's cells
// keep each dimension's order, whatever the values' sort order.
func TestRerunSweepOrder(t *testing.T) {
	raw := func(s string) json.RawMessage { return json.RawMessage(s) }
	var cells []rundir.ManifestCell
	for _, a := range []string{`"z"`, `"a"`, `"m"`} {
		for _, b := range []string{`3`, `1`, `2`} {
			if a == `"z"` && b == `3` {
				continue // excluded: z first appears with 1
			}
			cells = append(cells, rundir.ManifestCell{ID: "p=" + cellText(raw(a)) + ",k=" + b,
				Variables: map[string]json.RawMessage{"p": raw(a), "k": raw(b)}})
		}
	}
	if diff := cmp.Diff([]string{"p", "k"}, sweptNames(cells)); diff != "" {
		t.Errorf("dimension order (-want +got):\n%s", diff)
	}
	text := func(vs []json.RawMessage) []string {
		var out []string
		for _, v := range vs {
			out = append(out, string(v))
		}
		return out
	}
	if diff := cmp.Diff([]string{`"z"`, `"a"`, `"m"`}, text(sweptOrder(cells, "p"))); diff != "" {
		t.Errorf("p's order (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{`3`, `1`, `2`}, text(sweptOrder(cells, "k"))); diff != "" {
		t.Errorf("k's order (-want +got):\n%s", diff)
	}
}

// TestRerunValues: recorded values go back through -var as what they were.
func TestRerunValues(t *testing.T) {
	for _, tc := range []struct {
		json string
		typ  string
		want string
	}{
		{`"bird"`, "string", "bird"},
		{`"a ${b} %{c} \"q\"\n"`, "any", `"a $${b} %%{c} \"q\"\n"`},
		{`2`, "number", "2"},
		{`0.1`, "number", "0.1"},
		{`true`, "bool", "true"},
		{`["a","b,c"]`, "list(string)", `["a", "b,c"]`},
		{`{"a":[true,null],"x":1}`, "any", `{"a" = [true, null], "x" = 1}`},
	} {
		src := fmt.Sprintf("variable \"v\" { type = %s }\n", tc.typ)
		path := filepath.Join(t.TempDir(), "p.hcl")
		writeFile(t, path, []byte(src))
		p0, _ := dsl.Load(path, dsl.LoadOptions{Env: []string{}})
		got := varText(json.RawMessage(tc.json), declaredType(p0, "v"))
		if got != tc.want {
			t.Errorf("%s as %s: -var text %q, want %q", tc.json, tc.typ, got, tc.want)
		}
		p, diags := dsl.Load(path, dsl.LoadOptions{Env: []string{}, Vars: []string{"v=" + got}})
		if diags.HasErrors() {
			t.Errorf("%s: %v", tc.json, diags)
			continue
		}
		if back := string(dsl.ValueJSON(p.Variables["v"].Value)); back != compactJSON(t, tc.json) {
			t.Errorf("%s as %s: read back as %s", tc.json, tc.typ, back)
		}
	}
}

func compactJSON(t *testing.T, s string) string {
	var b bytes.Buffer
	if err := json.Compact(&b, []byte(s)); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// TestRerunUsage: flag and argument errors exit 1; a directory that is not
// a run exits 2.
func TestRerunUsage(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{nil, exitConfig, "Usage: evalflow rerun"},
		{[]string{"a", "b"}, exitConfig, "Usage: evalflow rerun"},
		{[]string{"-bogus", dir}, exitConfig, "flag provided but not defined"},
		{[]string{filepath.Join(dir, "nope")}, exitRun, "no such run directory"},
		{[]string{dir}, exitRun, "is not a run directory"},
		{[]string{dir, "-out", dir + "/"}, exitConfig, "is the run being reproduced"},
	} {
		res := rerunCmd(t, tc.args...)
		if res.code != tc.code || !strings.Contains(res.stderr, tc.want) {
			t.Errorf("rerun %q: exit %d, want %d with %q\n%s", tc.args, res.code, tc.code, tc.want, res.stderr)
		}
	}
}

const rerunLLMPipeline = `
variable "base_url" { type = string }
dataset "q" {
  source = "data/q.jsonl"
}
engine "main" {
  kind = "sqlite"
  path = "data/${item.db}.sqlite"
}
model "gen" {
  provider    = "openai"
  base_url    = var.base_url
  model       = "gpt-4o"
  temperature = 0
}
stage "generate" {
  source = "llm"
  model  = model.gen
  prompt = file("prompt.tmpl")
}
stage "validate" {
  input = stage.generate
}
stage "execute" {
  input = stage.validate
}
stage "score" {
  input = stage.execute
  metric "ex" {}
}
`

// llmPipeline writes rerunLLMPipeline, its prompt, a database and two
// questions into dir, and starts a fake OpenAI server that answers as the
// gpt-4o-2024-08-06 snapshot with system fingerprint fp_x.
func llmPipeline(t *testing.T, dir string) *fake.Server {
	t.Helper()
	srv := fake.New(fake.OpenAI, fake.WithSystemFingerprint("fp_x"),
		fake.WithModelID(func(string) string { return "gpt-4o-2024-08-06" }),
		fake.WithResponder(func(r fake.Request) string {
			if strings.Contains(r.Prompt(), "How many") {
				return "```sql\nSELECT count(*) FROM item\n```"
			}
			return "```sql\nSELECT name FROM item\n```"
		}))
	t.Cleanup(srv.Close)
	writeFile(t, filepath.Join(dir, "pipeline.hcl"), []byte(rerunLLMPipeline))
	writeFile(t, filepath.Join(dir, "prompt.tmpl"), []byte("Answer in SQL.\n{{.Schema}}\nQuestion: {{.Question}}\n"))
	if err := os.MkdirAll(filepath.Join(dir, "data"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, "data", "q.jsonl"), []byte(
		`{"id": "1", "question": "How many items?", "gold": "SELECT count(*) FROM item", "db": "shop"}`+"\n"+
			`{"id": "2", "question": "Which items?", "gold": "SELECT name FROM item", "db": "shop"}`+"\n"))
	mkSQLite(t, filepath.Join(dir, "data", "shop.sqlite"), `CREATE TABLE item (id INTEGER PRIMARY KEY, name TEXT)`, `INSERT INTO item VALUES (1,'pen'),(2,'ink')`)
	return srv
}

// TestRerunModelProvenance: the generate stage reports the model id and
// system fingerprint the API answered with and the hashes of its prompt
// templates; a second plan served from the LLM cache reports the same; a
// changed prompt file is a difference a rerun names.
func TestRerunModelProvenance(t *testing.T) {
	dir := t.TempDir()
	srv := llmPipeline(t, dir)
	t.Setenv("EVALFLOW_CACHE_DIR", filepath.Join(t.TempDir(), "cache"))
	plan := func() *planner.Plan {
		t.Helper()
		p, diags := dsl.Load(filepath.Join(dir, "pipeline.hcl"), dsl.LoadOptions{Env: []string{}, Vars: []string{"base_url=" + srv.URL}})
		if diags.HasErrors() {
			t.Fatal(diags)
		}
		pl, diags := planner.Build(context.Background(), p, planner.Options{})
		if diags.HasErrors() {
			t.Fatal(diags)
		}
		t.Cleanup(func() { pl.Close() })
		return pl
	}
	runPlan := func(pl *planner.Plan) {
		t.Helper()
		if err := pl.Run(context.Background(), planner.RunOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	prompt, err := os.ReadFile(filepath.Join(dir, "prompt.tmpl"))
	if err != nil {
		t.Fatal(err)
	}
	want := []rundir.ManifestModel{{
		Name: "gen", Provider: "openai", BaseURL: srv.URL, RequestedModel: "gpt-4o",
		ResolvedModels: []string{"gpt-4o-2024-08-06"}, SystemFingerprints: []string{"fp_x"},
		PromptSHA256: map[string]string{
			"stage.generate.system":        llm.TextSHA256(llm.DefaultSystem),
			"stage.generate.prompt":        llm.TextSHA256(string(prompt)),
			"stage.generate.refine_prompt": llm.TextSHA256(llm.DefaultRefinePrompt),
		},
	}}

	pl := plan()
	before := modelProvenance([]*planner.Plan{pl})
	if len(before) != 1 || len(before[0].ResolvedModels) != 0 || len(before[0].SystemFingerprints) != 0 {
		t.Errorf("before any call: %+v", before)
	}
	runPlan(pl)
	if srv.Calls() != 2 {
		t.Fatalf("%d model calls, want 2", srv.Calls())
	}
	got := modelProvenance([]*planner.Plan{pl})
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("provenance (-want +got):\n%s", diff)
	}
	// Another run (a new pool, as a new process has) answers from the
	// cache and still knows which snapshot answered.
	pl2 := plan()
	runPlan(pl2)
	if srv.Calls() != 2 {
		t.Errorf("the second run made %d calls", srv.Calls()-2)
	}
	if diff := cmp.Diff(want, modelProvenance([]*planner.Plan{pl2})); diff != "" {
		t.Errorf("provenance from the cache (-want +got):\n%s", diff)
	}
	if d := modelDiffs(got, modelProvenance([]*planner.Plan{plan()})); len(d) != 0 {
		t.Errorf("unchanged pipeline: differences %q", d)
	}
	appendString(t, filepath.Join(dir, "prompt.tmpl"), "Be brief.\n")
	d := modelDiffs(got, modelProvenance([]*planner.Plan{plan()}))
	if len(d) != 1 || !strings.HasPrefix(d[0], "model.gen: template stage.generate.prompt: sha256 "+want[0].PromptSHA256["stage.generate.prompt"][:12]) {
		t.Errorf("after editing the prompt: differences %q", d)
	}
}

// TestRerunLLM: an LLM run reruns from the LLM cache with equal rows; the
// manifest records the model's provenance, and a changed prompt file is
// refused.
func TestRerunLLM(t *testing.T) {
	bin := evalflowBinary(t)
	dir := t.TempDir()
	srv := llmPipeline(t, dir)
	res := runBin(t, bin, dir, "run", filepath.Join(dir, "pipeline.hcl"), "-var", "base_url="+srv.URL, "-quiet", "-out", "a")
	if res.code != 0 {
		t.Fatalf("run: exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	run := filepath.Join(dir, "a")
	m := readManifest(t, run)
	if m.Models == nil {
		t.Skip("manifest.json has no models: runcmd.go does not record modelProvenance yet")
	}
	if len(m.Models) != 1 || !slices.Equal(m.Models[0].ResolvedModels, []string{"gpt-4o-2024-08-06"}) ||
		!slices.Equal(m.Models[0].SystemFingerprints, []string{"fp_x"}) || m.Models[0].RequestedModel != "gpt-4o" {
		t.Errorf("manifest models: %+v", m.Models)
	}
	res = rerunCmd(t, run, "-quiet")
	if res.code != 0 {
		t.Fatalf("rerun: exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	if srv.Calls() != 2 {
		t.Errorf("%d model calls, want 2: the rerun's come from the LLM cache", srv.Calls())
	}
	sameRows(t, run, run+"-rerun", rundir.ItemsFile)
	sameRows(t, run, run+"-rerun", rundir.AttemptsFile, "cached", "cache_hit", "cost")
	if diff := cmp.Diff(m.Models, readManifest(t, run+"-rerun").Models); diff != "" {
		t.Errorf("models differ (-run +rerun):\n%s", diff)
	}
	appendString(t, filepath.Join(dir, "prompt.tmpl"), "Be brief.\n")
	res = rerunCmd(t, run, "-quiet", "-out", filepath.Join(dir, "b"))
	if res.code != exitRun || !strings.Contains(res.stderr, "model.gen: template stage.generate.prompt: sha256 ") {
		t.Errorf("rerun after editing the prompt: exit %d\n%s", res.code, res.stderr)
	}
}

// mkSQLite runs SQL statements in a SQLite database file.
func mkSQLite(t *testing.T, path string, stmts ...string) {
	t.Helper()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, s := range stmts {
		if _, err := db.Exec(s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
}

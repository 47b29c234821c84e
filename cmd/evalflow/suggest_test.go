package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestSuggestions: every unknown name or value in a pipeline is refused by
// `evalflow validate` (exit 1, nothing else printed) with one diagnostic at
// the offending expression — or at the -var that gave the value — that
// names the nearest valid choice and lists the valid ones.
func TestSuggestions(t *testing.T) {
	repo, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	quick := filepath.Join(repo, "examples", "quickstart")
	src, err := os.ReadFile(filepath.Join(quick, "pipeline.hcl"))
	if err != nil {
		t.Fatal(err)
	}
	// mutate writes the quickstart with one edit next to its data.
	mutate := func(t *testing.T, old, new string) string {
		t.Helper()
		if !strings.Contains(string(src), old) {
			t.Fatalf("quickstart has no %q", old)
		}
		dir := t.TempDir()
		if err := os.Symlink(filepath.Join(quick, "data"), filepath.Join(dir, "data")); err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, "pipeline.hcl")
		if err := os.WriteFile(p, []byte(strings.Replace(string(src), old, new, 1)), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	cases := []struct {
		name     string
		old, new string   // edit of the quickstart ("" = none)
		args     []string // after the pipeline
		want     string   // regexp for the only line on stderr
	}{
		{"attribute", "safety = true", "safty = true", nil,
			`^.*pipeline\.hcl:46:3: error: Unsupported argument; An argument named "safty" is not expected here\. Did you mean "safety"\? Valid arguments: engine, language, .*safety, schema, syntax\.$`},
		{"block type", `dataset "questions"`, `datset "questions"`, nil,
			`^.*pipeline\.hcl:26:1: error: Unsupported block type; .*Did you mean "dataset"\? Valid block types: dataset, engine, locals, model, sink, stage, sweep, variable\.$`},
		{"variable reference", "timeout  = var.timeout", "timeout  = var.timout", nil,
			`^.*pipeline\.hcl:33:17: error: Unsupported attribute; There is no variable named "timout" \(var\.timout\)\. Did you mean "timeout"\? Declared: compare, max_iterations, timeout\.$`},
		{"local reference", "compare = var.compare", "compare = local.compare", nil,
			`^.*pipeline\.hcl:65:20: error: Unsupported attribute; There is no local value named "compare" \(local\.compare\)\. None is declared\.$`},
		{"stage reference", "input  = stage.generate", "input  = stage.generat", nil,
			`^.*pipeline\.hcl:44:12: error: Reference to undeclared stage; .*Did you mean "generate"\?$`},
		{"misspelt input", "input  = stage.generate", "inputs = stage.generate", nil,
			`^.*pipeline\.hcl:44:3: error: Missing input; .*"inputs" is not an argument here\. Did you mean "input"\?$`},
		{"metric name", `metric "ex"`, `metric "exx"`, nil,
			`^.*pipeline\.hcl:64:10: error: Unknown metric; There is no metric named "exx"\. Did you mean "ex"\?`},
		{"compare from -var", "", "", []string{"-var", "compare=brd"},
			`^<value for var\.compare from -var>:1:1: error: Invalid metric options; "brd" is not a compare profile \(metric "ex", option "compare"\) \(var\.compare from -var, used at .*pipeline\.hcl:65:15\)\. Did you mean "bird"\? Valid values: bird, evalflow, testsuite, testsuite_keep_distinct\.$`},
		{"compare in the file", "compare = var.compare", `compare = "testsuit"`, nil,
			`^.*pipeline\.hcl:65:15: error: Invalid metric options; "testsuit" is not a compare profile \(metric "ex", option "compare"\)\. Did you mean "testsuite"\? Valid values: bird, evalflow, testsuite, testsuite_keep_distinct\.$`},
		{"engine kind", `kind     = "sqlite"`, `kind     = "sqlit"`, nil,
			`^.*pipeline\.hcl:31:14: error: Unknown engine kind; "sqlit" is not an engine kind\. Did you mean "sqlite"\? Valid values: .*sqlite.*\.$`},
		{"engine kind from -var", `kind     = "sqlite"`, `kind     = var.compare`, []string{"-var", "compare=sqlit"},
			`^<value for var\.compare from -var>:1:1: error: Unknown engine kind; "sqlit" is not an engine kind \(var\.compare from -var, used at .*pipeline\.hcl:31:14\)\. Did you mean "sqlite"\?`},
		{"generate source", `source      = "replay"`, `source      = "replai"`, nil,
			`^.*pipeline\.hcl:39:17: error: Unknown generation source; "replai" is not a generation source in this build\. Did you mean "replay"\? Valid values: replay, llm\.$`},
		{"dataset format", `source = "data/questions.jsonl"`, "source = \"data/questions.jsonl\"\n  format = \"jsnl\"", nil,
			`^.*pipeline\.hcl:28:12: error: Unknown dataset format; "jsnl" is not a dataset format\. Did you mean "jsonl"\? Valid values: jsonl, json, csv, parquet\.$`},
		{"query language", "safety = true", "language = \"sqll\"\n  safety = true", nil,
			`^.*pipeline\.hcl:46:14: error: Unknown query language; "sqll" is not a query language\. Did you mean "sql"\? Valid values: sql, cypher, sparql, pandas\.$`},
		{"sink kind", `stage "aggregate" {`, "sink \"x\" {\n  kind = \"parqet\"\n  path = \"x.parquet\"\n}\nstage \"aggregate\" {", nil,
			`^.*pipeline\.hcl:\d+:10: error: Unknown sink kind; "parqet" is not a sink kind\. Did you mean "parquet"\? Valid values: .*parquet.*\.$`},
		{"ex order option", "compare = var.compare", "compare = var.compare\n    order = \"nevr\"", nil,
			`^.*pipeline\.hcl:66:13: error: Invalid metric options; "nevr" is not a row order \(metric "ex", option "order"\)\. Did you mean "never"\? Valid values: auto, always, never, substring\.$`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := quick
			if tc.old != "" {
				p = mutate(t, tc.old, tc.new)
			}
			var stdout, stderr bytes.Buffer
			code := run(context.Background(), append([]string{"validate", p}, tc.args...), &stdout, &stderr)
			if code != 1 {
				t.Fatalf("exit %d, want 1; stderr:\n%s", code, stderr.String())
			}
			lines := strings.Split(strings.TrimRight(stderr.String(), "\n"), "\n")
			if len(lines) != 1 || !regexp.MustCompile(tc.want).MatchString(lines[0]) {
				t.Errorf("stderr:\n%s\nwant one line matching %s", stderr.String(), tc.want)
			}
			if stdout.Len() != 0 {
				t.Errorf("stdout: %q", stdout.String())
			}
		})
	}
}

// TestCuratedValidationSuggests: a curated pipeline's contains([...], var.X)
// rule that rejects a near miss also says which value was meant.
func TestCuratedValidationSuggests(t *testing.T) {
	repo, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), []string{"validate", filepath.Join(repo, "pipelines", "text2sql-replay.hcl"),
		"-var", "compare=brd", "-var", "dataset=q.jsonl", "-var", "predictions=p.jsonl", "-var", "databases=dbs"}, &stdout, &stderr)
	if code != 1 {
		t.Fatalf("exit %d, want 1; stderr:\n%s", code, stderr.String())
	}
	want := regexp.MustCompile(`text2sql-replay\.hcl:\d+:\d+: error: Invalid value for variable; compare must be one of .* \(var\.compare = "brd" from -var\)\. Did you mean "bird"\? This was checked by the validation rule here\.`)
	if !want.MatchString(stderr.String()) {
		t.Errorf("stderr:\n%s\nwant %s", stderr.String(), want)
	}
}

package main

import (
	"encoding/xml"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestFailUnder(t *testing.T) {
	bin := evalflowBinary(t)
	dir := t.TempDir()
	repo, _ := filepath.Abs(filepath.Join("..", ".."))
	qs := filepath.Join(repo, "examples", "quickstart")
	// The quickstart scores ex 0.6 (18/30) with its default refine depth.
	tests := []struct {
		name  string
		args  []string
		code  int
		wants []string
	}{
		{"met", []string{"-fail-under", "ex=0.6"}, exitOK, nil},
		{"missed names the metric", []string{"-fail-under", "ex=0.61", "-fail-under", "pass_at_k=0.5"}, exitGate, []string{"gate failed: ex = 0.6000 is below -fail-under ex=0.61"}},
		{"every cell must meet it", []string{"-sweep", "max_iterations=0,2", "-fail-under", "ex=0.5"}, exitGate, []string{"gate failed: ex = 0.4333 in cell max_iterations=0 is below -fail-under ex=0.5"}},
		{"unknown metric before anything runs", []string{"-fail-under", "exx=0.5"}, exitConfig, []string{`computes no metric "exx". Did you mean "ex"?`}},
		{"not a number", []string{"-fail-under", "ex=high"}, exitConfig, []string{"want METRIC=NUMBER"}},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := filepath.Join(dir, "r"+string(rune('a'+i)))
			res := runBin(t, bin, dir, append([]string{"run", qs, "-quiet", "-out", out}, tt.args...)...)
			if res.code != tt.code {
				t.Fatalf("exit %d, want %d\n%s%s", res.code, tt.code, res.stdout, res.stderr)
			}
			for _, w := range tt.wants {
				if !strings.Contains(res.stderr, w) {
					t.Errorf("stderr lacks %q:\n%s", w, res.stderr)
				}
			}
			if tt.code == exitGate {
				if _, err := os.Stat(filepath.Join(out, "items.parquet")); err != nil {
					t.Errorf("a failed gate must keep the run: %v", err)
				}
			}
		})
	}
}

// TestFailedRunWinsOverGate: a run that fails (an item in error beyond
// -max-errors) exits 2 even when a gate also fails: its numbers are not
// the run's to judge.
func TestFailedRunWinsOverGate(t *testing.T) {
	bin := evalflowBinary(t)
	dir := t.TempDir()
	args := slowReplay(t, dir, 3)
	f, err := os.OpenFile(filepath.Join(dir, "questions.jsonl"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(`{"id": "i00", "question": "duplicate", "gold": "SELECT 1", "db": "shop"}` + "\n")
	f.Close()
	res := runBin(t, bin, dir, append(args, "-out", "r", "-fail-under", "ex=0.99")...)
	if res.code != exitRun || strings.Contains(res.stderr, "gate failed") {
		t.Errorf("exit %d, want %d without a gate message\n%s", res.code, exitRun, res.stderr)
	}
}

func TestJUnit(t *testing.T) {
	bin := evalflowBinary(t)
	dir := t.TempDir()
	repo, _ := filepath.Abs(filepath.Join("..", ".."))
	qs := filepath.Join(repo, "examples", "quickstart")
	res := runBin(t, bin, dir, "run", qs, "-quiet", "-out", "r", "-junit", "report.xml", "-sweep", "max_iterations=0,2")
	if res.code != 0 {
		t.Fatalf("exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	path := filepath.Join(dir, "report.xml")
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Tests    int `xml:"tests,attr"`
		Failures int `xml:"failures,attr"`
		Suites   []struct {
			Name       string `xml:"name,attr"`
			Tests      int    `xml:"tests,attr"`
			Failures   int    `xml:"failures,attr"`
			Properties []struct {
				Name  string `xml:"name,attr"`
				Value string `xml:"value,attr"`
			} `xml:"properties>property"`
			Cases []struct {
				Name    string    `xml:"name,attr"`
				Failure *struct{} `xml:"failure"`
			} `xml:"testcase"`
		} `xml:"testsuite"`
	}
	if err := xml.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	// 2 cells × 30 items; ex is 13/30 at depth 0 and 18/30 at depth 2, and
	// every item whose ex is 0 is a failure.
	if doc.Tests != 60 || len(doc.Suites) != 2 {
		t.Fatalf("tests %d suites %d, want 60 in 2", doc.Tests, len(doc.Suites))
	}
	for i, want := range []struct {
		cell     string
		failures int
		ex       string
	}{{"max_iterations=0", 17, "0.43333333333333335"}, {"max_iterations=2", 12, "0.6"}} {
		s := doc.Suites[i]
		props := map[string]string{}
		for _, p := range s.Properties {
			props[p.Name] = p.Value
		}
		if !strings.Contains(s.Name, want.cell) || s.Tests != 30 || props["metric.ex"] != want.ex || props["cell"] != want.cell {
			t.Errorf("suite %d: %s tests %d metric.ex %s cell %s; want %+v", i, s.Name, s.Tests, props["metric.ex"], props["cell"], want)
		}
		if s.Failures < want.failures {
			t.Errorf("suite %s: %d failures, want at least the %d items with ex 0", s.Name, s.Failures, want.failures)
		}
	}
	// Checked against the schema CI servers' format follows.
	xsd := filepath.Join(repo, "junit", "testdata", "junit.xsd")
	if _, err := exec.LookPath("xmllint"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("xmllint is missing (scripts/install-test-deps.sh installs libxml2-utils)")
		}
		t.Skip("xmllint not installed")
	}
	if out, err := exec.Command("xmllint", "--noout", "--schema", xsd, path).CombinedOutput(); err != nil {
		t.Errorf("report.xml does not validate: %v\n%s", err, out)
	}
}

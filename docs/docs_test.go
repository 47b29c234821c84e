// Package docs holds evalflow's user documentation; its test keeps the
// metric reference in step with the registry.
package docs

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/evalflow/evalflow/metrics"
	"github.com/evalflow/evalflow/rundir"
	"github.com/evalflow/evalflow/sinks"
)

const (
	beginIndex = "<!-- BEGIN generated: go run ./cmd/evalflow metrics -format markdown (make docs) -->\n"
	endIndex   = "\n<!-- END generated -->"
)

// TestEveryMetricDocumented fails when a registered metric is missing from
// docs/metrics.md's index (regenerate it with `make docs`).
func TestEveryMetricDocumented(t *testing.T) {
	b, err := os.ReadFile("metrics.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	if !strings.Contains(doc, beginIndex) || !strings.Contains(doc, endIndex) {
		t.Fatal("docs/metrics.md lost its generated index markers")
	}
	for _, n := range metrics.Default.Names() {
		if !strings.Contains(doc, "| `"+n+"` (") {
			t.Errorf("metric %q is not in the index of docs/metrics.md; run make docs", n)
		}
	}
}

// TestIndexIsCurrent compares the index with what `evalflow metrics
// -format markdown` prints now.
func TestIndexIsCurrent(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the CLI")
	}
	out, err := exec.Command("go", "run", "../cmd/evalflow", "metrics", "-format", "markdown").Output()
	if err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile("metrics.md")
	doc := string(b)
	i := strings.Index(doc, beginIndex) + len(beginIndex)
	j := strings.Index(doc, endIndex)
	if i < len(beginIndex) || j < i {
		t.Fatal("markers missing")
	}
	if got, want := doc[i:j], strings.TrimRight(string(out), "\n"); got != want {
		t.Errorf("docs/metrics.md index is stale; run make docs")
	}
}

// TestOutputColumnsDocumented fails when a fixed column of items.parquet,
// attempts.parquet or aggregates.parquet is missing from docs/output.md.
func TestOutputColumnsDocumented(t *testing.T) {
	b, err := os.ReadFile("output.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	section := func(head string) string {
		i := strings.Index(doc, "## "+head)
		if i < 0 {
			t.Fatalf("docs/output.md has no section %q", head)
		}
		rest := doc[i+3:]
		if j := strings.Index(rest, "\n## "); j >= 0 {
			rest = rest[:j]
		}
		return rest
	}
	for head, schema := range map[string]sinks.Schema{
		"items.parquet":      rundir.ItemSchema(nil, nil),
		"attempts.parquet":   rundir.AttemptSchema,
		"aggregates.parquet": rundir.AggregateSchema,
	} {
		sec := section(head)
		for _, c := range schema {
			if !strings.Contains(sec, "`"+c.Name+"`") {
				t.Errorf("%s column %q is not documented in docs/output.md", head, c.Name)
			}
		}
	}
}

// internalLabel matches the internal labels user-facing text must not cite:
// the reference documents' file numbers ("seed 003"), the requirement ids of
// metric-calculators ("MC-REQ-05"), issue numbers ("issue 4") and bare
// section numbers ("§5.1"). References name a document by its title and a
// section by its heading (docs/references.md).
var internalLabel = regexp.MustCompile(`(?i:seeds? ?0[0-9]{2}\b)|seeds? [0-9]{3}|MC-REQ-|REQ-[0-9]|[Ii]ssue #?[0-9]|§ ?[0-9]`)

// labelsIn returns "where:line: text" for every line of s holding an
// internal label.
func labelsIn(where, s string) []string {
	var hits []string
	for i, line := range strings.Split(s, "\n") {
		if m := internalLabel.FindString(line); m != "" {
			hits = append(hits, fmt.Sprintf("%s:%d: %q in %q", where, i+1, m, strings.TrimSpace(line)))
		}
	}
	return hits
}

func TestDocsInternalLabelPattern(t *testing.T) {
	for _, s := range []string{"seed 003", "Seed 002 overall", "seeds 002, 003", "seed 001 MC-REQ-05", "MC-REQ-01..08", "REQ-7", "issue 4 validate stage", "Issue 12", "seed 000 §5.1", "(§6)"} {
		if len(labelsIn("t", s)) == 0 {
			t.Errorf("%q is not recognised as an internal label", s)
		}
	}
	for _, s := range []string{"-seed 7", "seed 1. A pair", "-ci-seed N", "*metric-calculators*, “Error Reporting” requirement", "“5.1 BLEU Score”", "issues of the engine", "seeded by -ci-seed (default 1)"} {
		if hits := labelsIn("t", s); len(hits) > 0 {
			t.Errorf("%q is flagged: %v", s, hits)
		}
	}
}

// TestDocsNoInternalLabels fails when user-facing text cites a reference by an
// internal label: docs/*.md, README.md, every registered metric's
// Description and Reference, and what `evalflow metrics` prints.
func TestDocsNoInternalLabels(t *testing.T) {
	files, err := filepath.Glob("*.md")
	if err != nil {
		t.Fatal(err)
	}
	files = append(files, filepath.Join("..", "README.md"))
	var hits []string
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		hits = append(hits, labelsIn(f, string(b))...)
	}
	for _, n := range metrics.Default.Names() {
		d, _ := metrics.Default.Lookup(n)
		hits = append(hits, labelsIn("metric "+n+" Description", d.Info.Description)...)
		hits = append(hits, labelsIn("metric "+n+" Reference", d.Info.Reference)...)
	}
	if !testing.Short() {
		for _, format := range []string{"text", "markdown"} {
			out, err := exec.Command("go", "run", "../cmd/evalflow", "metrics", "-format", format).Output()
			if err != nil {
				t.Fatalf("evalflow metrics -format %s: %v", format, err)
			}
			hits = append(hits, labelsIn("evalflow metrics -format "+format, string(out))...)
		}
	}
	for _, h := range hits {
		t.Error(h)
	}
}

// referenceDocs reads the table of docs/references.md: each document's
// title and its file in the specification (spec/seeds/….txt).
func referenceDocs(t *testing.T) map[string]string {
	t.Helper()
	b, err := os.ReadFile("references.md")
	if err != nil {
		t.Fatal(err)
	}
	title := regexp.MustCompile(`^\| \*([^*]+)\*`)
	file := regexp.MustCompile("`(spec/seeds/[^`]+)`")
	docs := map[string]string{}
	for _, line := range strings.Split(string(b), "\n") {
		m := title.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		f := file.FindStringSubmatch(line)
		if f == nil {
			t.Errorf("references.md: %q does not say where to find it (spec/seeds/…)", m[1])
			continue
		}
		docs[m[1]] = f[1]
	}
	if len(docs) == 0 {
		t.Fatal("references.md lists no documents")
	}
	return docs
}

// TestMetricReferencesResolve checks each registered metric's Reference: a
// document it names (*Title*) is one docs/references.md lists, and every
// section it quotes (“Heading”) occurs in that document, so a user can find
// it. The documents are read from the specification next to the repository
// (../shared/spec); without it only the titles are checked.
func TestMetricReferencesResolve(t *testing.T) {
	docs := referenceDocs(t)
	spec := filepath.Join("..", "..", "shared")
	_, err := os.Stat(filepath.Join(spec, "spec"))
	haveSpec := err == nil
	titled := regexp.MustCompile(`\*([^*]+)\*([^*;]*)`)
	quoted := regexp.MustCompile(`“([^”]+)”`)
	text := map[string]string{}
	cited := 0
	for _, n := range metrics.Default.Names() {
		d, _ := metrics.Default.Lookup(n)
		for _, m := range titled.FindAllStringSubmatch(d.Info.Reference, -1) {
			file, ok := docs[m[1]]
			if !ok {
				t.Errorf("metric %s cites *%s*, which docs/references.md does not list", n, m[1])
				continue
			}
			cited++
			if !haveSpec {
				continue
			}
			if _, ok := text[file]; !ok {
				b, err := os.ReadFile(filepath.Join(spec, file))
				if err != nil {
					t.Fatalf("references.md: %s: %v", file, err)
				}
				text[file] = string(b)
			}
			for _, q := range quoted.FindAllStringSubmatch(m[2], -1) {
				if !strings.Contains(text[file], q[1]) {
					t.Errorf("metric %s cites “%s” in *%s*, which %s does not contain", n, q[1], m[1], file)
				}
			}
		}
	}
	if cited == 0 {
		t.Error("no metric cites a reference document by title")
	}
	if !haveSpec {
		t.Log("../shared/spec not found: section headings not checked")
	}
}

package dsl_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/hcl/v2"

	"github.com/evalflow/evalflow/dsl"
)

// shipped returns the sources of every shipped pipeline, the fuzz seeds.
func shipped(t testing.TB) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	for _, g := range []string{"../pipelines/*.hcl", "../examples/*/*.hcl", "testdata/*/*.hcl", "testdata/*.hcl"} {
		m, _ := filepath.Glob(g)
		for _, p := range m {
			b, err := os.ReadFile(p)
			if err == nil {
				out[p] = b
			}
		}
	}
	if len(out) == 0 {
		t.Fatal("no shipped pipelines found")
	}
	return out
}

// loadWithin loads src as a pipeline file, failing the test on a panic, a
// load that takes longer than limit, or an error diagnostic without a
// position.
func loadWithin(t testing.TB, src []byte, limit time.Duration, vars ...string) hcl.Diagnostics {
	t.Helper()
	dir := t.TempDir()
	path := filepath.Join(dir, "pipeline.hcl")
	if err := os.WriteFile(path, src, 0o644); err != nil {
		t.Fatal(err)
	}
	type result struct {
		diags hcl.Diagnostics
		panic any
	}
	ch := make(chan result, 1)
	go func() {
		defer func() {
			if p := recover(); p != nil {
				ch <- result{panic: p}
			}
		}()
		_, d := dsl.Load(path, dsl.LoadOptions{Env: []string{}, Vars: vars})
		ch <- result{diags: d}
	}()
	select {
	case r := <-ch:
		if r.panic != nil {
			t.Fatalf("panic loading:\n%s\n--\n%v", clip(src), r.panic)
		}
		for _, d := range r.diags {
			if d.Severity == hcl.DiagError && (d.Subject == nil || d.Subject.Filename == "" || d.Subject.Start.Line < 1) {
				t.Errorf("diagnostic without a position: %s; %s\nsource:\n%s", d.Summary, d.Detail, clip(src))
			}
		}
		return r.diags
	case <-time.After(limit):
		t.Fatalf("load did not finish in %v:\n%s", limit, clip(src))
	}
	return nil
}

func clip(b []byte) string {
	if len(b) > 600 {
		return string(b[:600]) + fmt.Sprintf("... (%d bytes)", len(b))
	}
	return string(b)
}

// TestDeepNestingIsAnError: 100,000 nested parentheses (a Go stack overflow
// in the recursive parser) are refused with a positioned diagnostic.
func TestDeepNestingIsAnError(t *testing.T) {
	for name, src := range map[string]string{
		"parens":   "locals {\n  x = " + strings.Repeat("(", 100000) + "1" + strings.Repeat(")", 100000) + "\n}\n",
		"lists":    "locals {\n  x = " + strings.Repeat("[", 100000) + strings.Repeat("]", 100000) + "\n}\n",
		"objects":  "locals {\n  x = " + strings.Repeat("{a=", 50000) + "1" + strings.Repeat("}", 50000) + "\n}\n",
		"interps":  "locals {\n  x = \"" + strings.Repeat("${\"", 5000) + "x" + strings.Repeat("\"}", 5000) + "\"\n}\n",
		"unclosed": "locals {\n  x = " + strings.Repeat("(", 100000) + "\n",
	} {
		t.Run(name, func(t *testing.T) {
			d := loadWithin(t, []byte(src), 10*time.Second)
			if !d.HasErrors() || !strings.Contains(d.Error(), "Nested too deeply") || !strings.Contains(d.Error(), "pipeline.hcl:2,") {
				t.Errorf("diags = %.300s, want Nested too deeply at line 2", d.Error())
			}
		})
	}
	// Nesting within the limit still parses.
	src := "locals {\n  x = " + strings.Repeat("(", 50) + "1" + strings.Repeat(")", 50) + "\n}\n"
	if d := loadWithin(t, []byte(src), 10*time.Second); strings.Contains(d.Error(), "Nested") {
		t.Errorf("50 levels refused: %v", d)
	}
}

// TestUnboundedFunctionsRefused: calls that would take unbounded time or
// memory are errors at their position, not hangs.
func TestUnboundedFunctionsRefused(t *testing.T) {
	for name, expr := range map[string]string{
		"range":      "range(1e12)",
		"pow":        "pow(10, 100000000)",
		"format":     `format("%1000000000d", 1)`,
		"formatlist": `formatlist("%.999999999f", [1])`,
		"setproduct": "setproduct(range(2000), range(2000), range(2000))",
		"file fifo":  `file("/dev/zero")`,
	} {
		t.Run(name, func(t *testing.T) {
			d := loadWithin(t, []byte("locals {\n  x = "+expr+"\n}\n"), 10*time.Second)
			if !d.HasErrors() || !strings.Contains(d.Error(), "pipeline.hcl:2,") {
				t.Errorf("%s: diags = %v, want a positioned error", expr, d)
			}
		})
	}
}

// TestMutatedPipelines runs a deterministic mutation campaign over every
// shipped pipeline: deletions, duplications, truncations, swapped and
// replaced tokens, huge and odd values, deep nesting, NUL and invalid
// UTF-8 bytes. No load may panic, hang (5 s), or report an error without
// a position.
func TestMutatedPipelines(t *testing.T) {
	if testing.Short() {
		t.Skip("mutation campaign")
	}
	n := 0
	for name, src := range shipped(t) {
		for i, m := range mutations(src) {
			n++
			t.Run(fmt.Sprintf("%s/%d", filepath.Base(name), i), func(t *testing.T) {
				var vars []string
				for _, v := range []string{"dataset", "predictions", "databases"} {
					if strings.Contains(string(src), "variable \""+v+"\"") {
						vars = append(vars, v+"=x")
					}
				}
				loadWithin(t, m, 5*time.Second, vars...)
			})
		}
	}
	t.Logf("%d mutated pipelines loaded", n)
}

// mutations derives variants of src deterministically.
func mutations(src []byte) [][]byte {
	var out [][]byte
	s := string(src)
	lines := strings.Split(s, "\n")
	add := func(x string) { out = append(out, []byte(x)) }
	for i := 0; i < len(lines); i += 3 {
		add(strings.Join(append(append([]string{}, lines[:i]...), lines[i+1:]...), "\n")) // drop a line
		add(strings.Join(append(append([]string{}, lines[:i+1]...), lines[i:]...), "\n")) // duplicate a line
	}
	for _, frac := range []int{3, 2, 5} {
		add(s[:len(s)*(frac-1)/frac]) // truncate
	}
	repl := []struct{ old, new string }{
		{"{", ""}, {"}", ""}, {"=", "=="}, {"\"", ""}, {"stage.", "stagee."}, {"var.", "item."},
		{"item.", "var."}, {"input", "inptu"}, {"4", "1e999999999"}, {"4", "-4"}, {"4", "99999999999999999999999"},
		{"\"30s\"", "\"-1s\""}, {"\"30s\"", "\"forever\""}, {"sqlite", "sqlit"}, {"= true", "= \"true\""},
		{"metric \"ex\" {", "metric \"ex\" {\n  compare = \"nope\""}, {"\n", "\n\x00"}, {"a", "\xff\xfe"},
		{"${", "${" + strings.Repeat("(", 300)}, {"locals {", "locals {\n  big = range(1e12)\n  p = pow(2, 1e9)\n"},
		{"locals {", "locals {\n  f = file(\"/dev/zero\")\n  t = templatefile(\"/dev/zero\", {})\n"},
		{"locals {", "locals {\n  x = local.x\n"}, {"stage \"", "stage \"stage\" \""},
		{"dataset ", "dataset \"\" "}, {"engine \"main\" {", "engine \"main\" {\n  concurrency = 1e10\n  max_rows = -1\n"},
	}
	for _, r := range repl {
		if strings.Contains(s, r.old) {
			add(strings.Replace(s, r.old, r.new, 1))
			add(strings.ReplaceAll(s, r.old, r.new))
		}
	}
	add(strings.Repeat(s, 3))
	add("")
	add(s + "\nstage \"x\" {\n  input = stage.x\n}\n")
	return out
}

// FuzzParse: arbitrary bytes as a pipeline never panic or hang, and every
// error has a position.
func FuzzParse(f *testing.F) {
	for _, src := range shipped(f) {
		f.Add(src)
	}
	f.Add([]byte("locals { x = " + strings.Repeat("(", 1000) + " }"))
	f.Fuzz(func(t *testing.T, src []byte) {
		loadWithin(t, src, 10*time.Second)
	})
}

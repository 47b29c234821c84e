package planner_test

import (
	"bufio"
	"bytes"
	"context"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/evalflow/evalflow/dsl"
	"github.com/evalflow/evalflow/planner"

	_ "github.com/evalflow/evalflow/engine/sqlite"
	_ "github.com/evalflow/evalflow/nodes/all"
)

var update = flag.Bool("update", false, "rewrite golden files")

var errMarker = regexp.MustCompile(`#\s*ERROR:\s*(.+?)\s*$`)

// TestErrorFixtures loads every testdata/errors/*.hcl and checks that each
// line marked "# ERROR: Summary" produces exactly that diagnostic, at that
// line, and that nothing else is reported.
func TestErrorFixtures(t *testing.T) {
	files, _ := filepath.Glob("testdata/errors/*.hcl")
	if len(files) == 0 {
		t.Fatal("no fixtures")
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			want := map[int]string{}
			fh, err := os.Open(f)
			if err != nil {
				t.Fatal(err)
			}
			sc := bufio.NewScanner(fh)
			for line := 1; sc.Scan(); line++ {
				if m := errMarker.FindStringSubmatch(sc.Text()); m != nil {
					want[line] = m[1]
				}
			}
			fh.Close()
			p, diags := dsl.Load(f, dsl.LoadOptions{Env: []string{}})
			if !diags.HasErrors() {
				pl, d := planner.Build(context.Background(), p, planner.Options{})
				diags = append(diags, d...)
				pl.Close()
			}
			got := map[int]string{}
			for _, d := range diags {
				if d.Subject == nil {
					t.Errorf("diagnostic without a location: %s; %s", d.Summary, d.Detail)
					continue
				}
				if d.Subject.Filename != f {
					t.Errorf("diagnostic in %s, want %s", d.Subject.Filename, f)
				}
				got[d.Subject.Start.Line] = d.Summary
				if d.Detail == "" {
					t.Errorf("line %d: %q has no detail saying how to fix it", d.Subject.Start.Line, d.Summary)
				}
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("diagnostics by line (-want +got):\n%s\nall: %v", diff, diags)
			}
		})
	}
}

func TestDidYouMean(t *testing.T) {
	p, diags := dsl.Load("testdata/errors/undeclared_stage.hcl", dsl.LoadOptions{Env: []string{}})
	_ = p
	if !strings.Contains(diags.Error(), `Did you mean "generate"?`) {
		t.Errorf("no suggestion in %v", diags)
	}
	_, diags = dsl.Load("testdata/errors/undeclared_engine.hcl", dsl.LoadOptions{Env: []string{}})
	if !strings.Contains(diags.Error(), `Did you mean "main"?`) {
		t.Errorf("no suggestion in %v", diags)
	}
}

func TestPlanGolden(t *testing.T) {
	for _, format := range []string{"text", "dot"} {
		t.Run(format, func(t *testing.T) {
			p, diags := dsl.Load("testdata/ok/pipeline.hcl", dsl.LoadOptions{Env: []string{}})
			if diags.HasErrors() {
				t.Fatal(diags)
			}
			pl, diags := planner.Build(context.Background(), p, planner.Options{})
			defer pl.Close()
			if diags.HasErrors() {
				t.Fatal(diags)
			}
			var buf bytes.Buffer
			if format == "dot" {
				pl.WriteDot(&buf)
			} else {
				pl.WriteText(&buf)
			}
			golden := filepath.Join("testdata", "ok", "plan."+format+".golden")
			if *update {
				if err := os.WriteFile(golden, buf.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test -update)", err)
			}
			if diff := cmp.Diff(string(want), buf.String()); diff != "" {
				t.Errorf("plan (-want +got):\n%s", diff)
			}
		})
	}
}

func TestPlanOrderAndOverride(t *testing.T) {
	p, diags := dsl.Load("testdata/ok/pipeline.hcl", dsl.LoadOptions{Env: []string{}})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	pl, diags := planner.Build(context.Background(), p, planner.Options{Concurrency: 7})
	defer pl.Close()
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	var order []string
	conc := map[string]int{}
	for _, n := range pl.Order {
		order = append(order, n.Block.Name)
		conc[n.Block.Name] = n.Concurrency
	}
	want := []string{"generate", "validate", "execute", "refine", "score", "aggregate"}
	if diff := cmp.Diff(want, order); diff != "" {
		t.Errorf("order (-want +got):\n%s", diff)
	}
	if conc["execute"] != 7 || conc["aggregate"] != 1 {
		t.Errorf("concurrency override: %v", conc)
	}
	if len(pl.Collectors) != 1 || pl.Collectors[0].Block.Name != "aggregate" {
		t.Errorf("collectors: %v", pl.Collectors)
	}
	var names []string
	for _, n := range pl.Chain {
		names = append(names, n.Block.Name)
	}
	sort.Strings(names)
	if len(names) != 5 {
		t.Errorf("chain: %v", names)
	}
}

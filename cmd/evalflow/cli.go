package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"sort"
	"strings"

	"github.com/hashicorp/hcl/v2"

	"github.com/zclconf/go-cty/cty"

	"github.com/evalflow/evalflow/dsl"
	"github.com/evalflow/evalflow/metrics"
	"github.com/evalflow/evalflow/planner"
)

// Exit codes (documented in docs/cli.md).
const (
	exitOK        = 0
	exitConfig    = 1   // the pipeline or the command line is wrong (diagnostics printed)
	exitRun       = 2   // the run could not complete (a sink, the dataset, an engine failed)
	exitUnformat  = 3   // fmt -check found files to format
	exitGate      = 3   // a CI gate failed: run -fail-under, compare -fail-if-worse
	exitCancelled = 130 // interrupted (Ctrl-C / SIGTERM); the partial run is readable
)

// version is set with -ldflags "-X main.version=...".
var version = "0.1.0-dev"

const usage = `evalflow evaluates text-to-query systems from HCL pipelines.

Usage:
  evalflow run      [flags] PIPELINE   run a pipeline (a .hcl file or a directory)
  evalflow plan     [flags] PIPELINE   show the stage DAG without running it
  evalflow validate [flags] PIPELINE   check a pipeline; prints file:line:col diagnostics
  evalflow compare  [flags] A B        paired comparison of two runs (or sweep cells RUN@CELL)
  evalflow export   [flags] RUN_DIR    write a run's predictions for an official scorer
  evalflow rerun    [flags] RUN_DIR    run a run's recorded inputs again; refuses changed ones
  evalflow query    RUN_DIR "SQL"      SQL over a run's items, attempts, aggregates (embedded DuckDB)
  evalflow show     [-by COL] RUN_DIR  a run's metrics again, grouped
  evalflow report   RUN_DIR... [-out FILE.html]  one self-contained HTML report of runs
  evalflow fmt      [-check] PATH...   rewrite .hcl files in canonical format
  evalflow metrics                     list every built-in metric
  evalflow cache    stats|clear|explain KEY|gc   inspect, trim or clear the caches
  evalflow doctor   [-format json]     is each engine and model provider ready? what to run if not
  evalflow spider-eval [flags]         Spider's exact-set-match report, as evaluation.py --etype match prints it
  evalflow suite    build [flags]      build distinguishing test-suite databases for a dataset's schemas
  evalflow worker   [flags] nats://HOST:4222   run shards of the runs published to a NATS server (docs/scale-out.md)
  evalflow version                     print the version

Run 'evalflow COMMAND -h' for a command's flags.
Exit codes: 0 ok, 1 invalid pipeline or flags, 2 run failed, 3 a gate failed
(run -fail-under, compare -fail-if-worse) or fmt -check found unformatted
files, 130 interrupted (the partial run directory is readable).
`

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return exitConfig
	}
	cmd, rest := args[0], args[1:]
	switch cmd {
	case "run":
		return cmdRun(ctx, rest, stdout, stderr)
	case "plan":
		return cmdPlan(ctx, rest, stdout, stderr)
	case "validate":
		return cmdValidate(ctx, rest, stdout, stderr)
	case "fmt":
		return cmdFmt(rest, stdout, stderr)
	case "metrics":
		return cmdMetrics(rest, stdout, stderr)
	case "cache":
		return cmdCache(rest, stdout, stderr)
	case "compare":
		return cmdCompare(ctx, rest, stdout, stderr)
	case "export":
		return cmdExport(rest, stdout, stderr)
	case "rerun":
		return cmdRerun(ctx, rest, stdout, stderr)
	case "query":
		return cmdQuery(ctx, rest, stdout, stderr)
	case "show":
		return cmdShow(ctx, rest, stdout, stderr)
	case "suite":
		return cmdSuite(ctx, rest, stdout, stderr)
	case "spider-eval":
		return cmdSpiderEval(ctx, rest, stdout, stderr)
	case "report":
		return cmdReport(ctx, rest, stdout, stderr)
	case "doctor":
		return cmdDoctor(ctx, rest, stdout, stderr)
	case "worker":
		return cmdWorker(ctx, rest, stdout, stderr)
	case "version", "-version", "--version":
		fmt.Fprintf(stdout, "evalflow %s (%s, %s/%s)\n", buildVersion(), runtime.Version(), runtime.GOOS, runtime.GOARCH)
		return exitOK
	case "help", "-h", "-help", "--help":
		fmt.Fprint(stdout, usage)
		return exitOK
	}
	hint := ""
	if s := dsl.Suggest(cmd, []string{"run", "plan", "validate", "compare", "export", "rerun", "query", "show", "report", "fmt", "metrics", "cache", "doctor", "spider-eval", "suite", "worker", "version", "help"}); s != "" {
		hint = fmt.Sprintf(" Did you mean %q?", s)
	}
	fmt.Fprintf(stderr, "evalflow: unknown command %q.%s\n\n%s", cmd, hint, usage)
	return exitConfig
}

func buildVersion() string {
	if version != "0.1.0-dev" {
		return version
	}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return version
}

// multiFlag collects a repeated string flag.
type multiFlag []string

func (m *multiFlag) String() string     { return strings.Join(*m, ",") }
func (m *multiFlag) Set(v string) error { *m = append(*m, v); return nil }

// pipelineFlags are shared by run, plan and validate.
type pipelineFlags struct {
	vars     multiFlag
	varFiles multiFlag
	sweeps   multiFlag
}

func (pf *pipelineFlags) register(fs *flag.FlagSet) {
	fs.Var(&pf.vars, "var", "set a variable: -var name=value (repeatable; overrides -var-file and EVALFLOW_VAR_name)")
	fs.Var(&pf.varFiles, "var-file", "read variables from a .hcl or .json file (repeatable)")
	fs.Var(&pf.sweeps, "sweep", "sweep a variable: -sweep name=v1,v2 (repeatable; a value holding commas: -sweep 'name=[\"a,b\",\"c\"]'); each combination is a cell")
}

func (pf *pipelineFlags) loadOptions(cell int) dsl.LoadOptions {
	return dsl.LoadOptions{Vars: pf.vars, VarFiles: pf.varFiles, Sweeps: pf.sweeps, Cell: cell}
}

func newFlagSet(name, synopsis string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "Usage: evalflow %s\n\nFlags:\n", synopsis)
		fs.PrintDefaults()
	}
	return fs
}

// parseArgs parses flags that may come before or after the positional
// pipeline argument (Go's flag package stops at the first non-flag).
func parseArgs(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		if fs.NArg() == 0 {
			return pos, nil
		}
		pos = append(pos, fs.Arg(0))
		args = fs.Args()[1:]
	}
}

func loadPipeline(path string, pf *pipelineFlags, stderr io.Writer) (*dsl.Pipeline, bool) {
	p, diags := dsl.Load(path, pf.loadOptions(0))
	writeDiags(stderr, diags)
	return p, !diags.HasErrors()
}

// cellSpec is one cell a command plans: a sweep cell's pipeline and, for a
// pipeline with several source stages, the branch — each branch is a cell
// of its own (planner.Branches), named by a last dimension `branch`.
type cellSpec struct {
	p      *dsl.Pipeline
	cell   *dsl.Cell // nil: no sweep and one branch
	branch string
}

// expandCells crosses the sweep cells (pipes, one per cell) with the
// pipeline's branches.
func expandCells(p *dsl.Pipeline, pipes []*dsl.Pipeline) []cellSpec {
	branches := planner.Branches(p, nil)
	var out []cellSpec
	for i, pi := range pipes {
		var sc *dsl.Cell
		if len(p.Cells) > 0 {
			sc = &p.Cells[i]
		}
		if len(branches) == 0 {
			out = append(out, cellSpec{p: pi, cell: sc})
			continue
		}
		for _, b := range branches {
			c := &dsl.Cell{Index: len(out), ID: "branch=" + b}
			if sc != nil {
				c.ID = sc.ID + "," + c.ID
				c.Vars = append(c.Vars, sc.Vars...)
			}
			c.Vars = append(c.Vars, dsl.CellVar{Name: "branch", Value: cty.StringVal(b)})
			out = append(out, cellSpec{p: pi, cell: c, branch: b})
		}
	}
	return out
}

// loadCells loads the pipeline once per sweep cell (each with that cell's
// values); without a sweep it returns p alone. Diagnostics of a cell are
// printed once, naming the cell.
func loadCells(path string, p *dsl.Pipeline, pf *pipelineFlags, stderr io.Writer) ([]*dsl.Pipeline, bool) {
	if len(p.Cells) == 0 {
		return []*dsl.Pipeline{p}, true
	}
	out := []*dsl.Pipeline{p}
	for i := 1; i < len(p.Cells); i++ {
		pi, diags := dsl.Load(path, pf.loadOptions(i))
		if diags.HasErrors() {
			fmt.Fprintf(stderr, "evalflow: in sweep cell %s:\n", p.Cells[i].ID)
			writeDiags(stderr, diags)
			return nil, false
		}
		out = append(out, pi)
	}
	return out, true
}

// writeDiags prints diagnostics as "file:line:col: error: Summary; Detail",
// in source order.
func writeDiags(w io.Writer, diags hcl.Diagnostics) {
	diags = append(hcl.Diagnostics(nil), diags...)
	sort.SliceStable(diags, func(i, j int) bool {
		a, b := diags[i].Subject, diags[j].Subject
		if a == nil || b == nil {
			return a != nil && b == nil
		}
		if a.Filename != b.Filename {
			return a.Filename < b.Filename
		}
		return a.Start.Byte < b.Start.Byte
	})
	for _, d := range diags {
		sev := "error"
		if d.Severity == hcl.DiagWarning {
			sev = "warning"
		}
		loc := "evalflow"
		if d.Subject != nil {
			fn := d.Subject.Filename
			if rel, err := filepath.Rel(".", fn); err == nil && !strings.HasPrefix(rel, "..") {
				fn = rel
			}
			if d.Subject.Start.Line > 0 {
				loc = fmt.Sprintf("%s:%d:%d", fn, d.Subject.Start.Line, d.Subject.Start.Column)
			} else {
				loc = fn
			}
		}
		msg := d.Summary
		if d.Detail != "" {
			msg += "; " + d.Detail
		}
		fmt.Fprintf(w, "%s: %s: %s\n", loc, sev, msg)
	}
}

func cmdMetrics(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("metrics", "metrics [-format text|markdown]", stderr)
	format := fs.String("format", "text", "text or markdown")
	pos, err := parseArgs(fs, args)
	if errors.Is(err, flag.ErrHelp) {
		return exitOK
	}
	if err != nil {
		return exitConfig
	}
	if len(pos) > 0 {
		fmt.Fprintf(stderr, "evalflow metrics: takes no arguments, got %q\n", pos)
		return exitConfig
	}
	if *format != "text" && *format != "markdown" {
		fmt.Fprintf(stderr, "evalflow metrics: -format must be text or markdown, not %q\n", *format)
		return exitConfig
	}
	names := metrics.Default.Names()
	sort.Strings(names)
	if *format == "markdown" {
		fmt.Fprintln(stdout, "| metric | measures | reference | inputs | range |\n|---|---|---|---|---|")
	}
	for _, n := range names {
		d, _ := metrics.Default.Lookup(n)
		i := d.Info
		kind := "item"
		if d.NewDataset != nil {
			kind = "dataset"
		}
		if *format == "markdown" {
			fmt.Fprintf(stdout, "| `%s` (%s) | %s | %s | %s | %s |\n", n, kind, i.Description, i.Reference, i.Inputs, i.Range)
			continue
		}
		fmt.Fprintf(stdout, "%s  [%s, range %s]\n  %s\n  reference: %s\n  inputs: %s\n", n, kind, i.Range, i.Description, i.Reference, i.Inputs)
		if len(d.Options) > 0 {
			fmt.Fprintf(stdout, "  options: %s\n", strings.Join(d.Options, ", "))
		}
	}
	return exitOK
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

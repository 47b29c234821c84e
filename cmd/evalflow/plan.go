package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/evalflow/evalflow/planner"
)

func cmdValidate(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("validate", "validate [-var name=value] [-var-file f] PIPELINE", stderr)
	var pf pipelineFlags
	pf.register(fs)
	pos, err := parseArgs(fs, args)
	if errors.Is(err, flag.ErrHelp) {
		return exitOK
	}
	if err != nil || len(pos) != 1 {
		if err == nil {
			fs.Usage()
		}
		return exitConfig
	}
	p, ok := loadPipeline(pos[0], &pf, stderr)
	if !ok {
		return exitConfig
	}
	pl, diags := planner.Build(ctx, p, planner.Options{})
	defer pl.Close()
	writeDiags(stderr, diags)
	if diags.HasErrors() {
		return exitConfig
	}
	fmt.Fprintf(stdout, "%s: valid (%d stages)\n", pos[0], len(pl.Order))
	return exitOK
}

func cmdPlan(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("plan", "plan [-format text|dot] [-var name=value] [-var-file f] PIPELINE", stderr)
	var pf pipelineFlags
	pf.register(fs)
	format := fs.String("format", "text", "text or dot (Graphviz)")
	conc := fs.Int("concurrency", 0, "override every stage's concurrency")
	pos, err := parseArgs(fs, args)
	if errors.Is(err, flag.ErrHelp) {
		return exitOK
	}
	if err != nil || len(pos) != 1 {
		if err == nil {
			fs.Usage()
		}
		return exitConfig
	}
	if *format != "text" && *format != "dot" {
		fmt.Fprintf(stderr, "evalflow plan: -format must be text or dot, not %q\n", *format)
		return exitConfig
	}
	p, ok := loadPipeline(pos[0], &pf, stderr)
	if !ok {
		return exitConfig
	}
	pl, diags := planner.Build(ctx, p, planner.Options{Concurrency: *conc})
	defer pl.Close()
	writeDiags(stderr, diags)
	if diags.HasErrors() {
		return exitConfig
	}
	if *format == "dot" {
		pl.WriteDot(stdout)
	} else {
		pl.WriteText(stdout)
	}
	return exitOK
}

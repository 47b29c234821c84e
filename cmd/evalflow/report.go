package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"path/filepath"

	"github.com/evalflow/evalflow/report"
)

const reportSynopsis = "report RUN_DIR... [-out FILE.html] [-items N]"

// cmdReport writes the HTML report of one or more runs: docs/report.md.
func cmdReport(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("report", reportSynopsis, stderr)
	out := fs.String("out", "", "write the report here (default: RUN_DIR/report.html for one run; required for several; - for standard output)")
	items := fs.Int("items", report.DefaultMaxItems, "show at most this many items, wrong and errored first (0: none)")
	pos, err := parseArgs(fs, args)
	if errors.Is(err, flag.ErrHelp) {
		return exitOK
	}
	if err != nil {
		return exitConfig
	}
	bad := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "evalflow report: "+format+"\n", a...)
		fs.Usage()
		return exitConfig
	}
	switch {
	case len(pos) == 0:
		return bad("want one or more run directories")
	case *items < 0:
		return bad("-items must be 0 or more, not %d", *items)
	case *out == "" && len(pos) > 1:
		return bad("several runs need -out FILE.html")
	}
	path := *out
	if path == "" {
		path = filepath.Join(pos[0], report.FileName)
	}
	o := report.Options{MaxItems: *items, Version: buildVersion()}
	if *items == 0 {
		o.MaxItems = -1
	}
	rep, err := report.Build(ctx, pos, o)
	if err != nil {
		return reportFailed(stderr, err)
	}
	if path == "-" {
		err = report.Write(stdout, rep)
	} else {
		err = report.WriteFile(path, rep)
	}
	if err != nil {
		return reportFailed(stderr, err)
	}
	for _, r := range rep.Runs {
		if r.Partial {
			fmt.Fprintf(stderr, "evalflow report: %s has not finished: the report covers the items finished so far (parts/)\n", r.Dir)
		}
	}
	if path != "-" {
		fmt.Fprintf(stderr, "evalflow report: wrote %s\n", path)
	}
	return exitOK
}

func reportFailed(stderr io.Writer, err error) int {
	fmt.Fprintf(stderr, "evalflow report: %v\n", err)
	if errors.Is(err, context.Canceled) {
		return exitCancelled
	}
	return exitRun
}

// writeRunReport writes report.html into a run directory at the end of
// evalflow run. The run's results stand without it: a failure is a
// warning on stderr.
func writeRunReport(ctx context.Context, dir string, stderr io.Writer) {
	defer func() {
		if p := recover(); p != nil {
			fmt.Fprintf(stderr, "evalflow run: warning: no %s: %v\n", report.FileName, p)
		}
	}()
	rep, err := report.Build(ctx, []string{dir}, report.Options{Version: buildVersion()})
	if err == nil {
		err = report.WriteFile(filepath.Join(dir, report.FileName), rep)
	}
	if err != nil {
		fmt.Fprintf(stderr, "evalflow run: warning: no %s: %v\n", report.FileName, err)
	}
}

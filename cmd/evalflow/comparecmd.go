package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/evalflow/evalflow/compare"
)

// maxResamples bounds -resamples: the bootstrap keeps one float64 per
// resample per row.
const maxResamples = 1_000_000

const compareSynopsis = "compare A B [-metric M]... [-by COL] [-format text|json|markdown] [-ci-seed N] [-alpha 0.05] [-fail-if-worse METRIC]... [-resamples 10000]"

// cmdCompare compares run (or sweep cell) B against A item by item:
// docs/cli.md, "evalflow compare".
func cmdCompare(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("compare", compareSynopsis, stderr)
	var mets, gates multiFlag
	fs.Var(&mets, "metric", "compare this metric column (repeatable; default: every metric both runs have)")
	by := fs.String("by", "", "also compare per value of this items.parquet column (A's value), e.g. db or difficulty")
	format := fs.String("format", "text", "output format: text, json or markdown")
	seed := fs.Uint64("ci-seed", 1, "seed of the bootstrap confidence intervals")
	alpha := fs.Float64("alpha", compare.DefaultAlpha, "significance level for the Holm-adjusted p-values")
	fs.Var(&gates, "fail-if-worse", "exit 3 when B is significantly worse on this metric (repeatable)")
	resamples := fs.Int("resamples", compare.DefaultResamples, "bootstrap resamples per confidence interval")
	pos, err := parseArgs(fs, args)
	if errors.Is(err, flag.ErrHelp) {
		return exitOK
	}
	if err != nil {
		return exitConfig
	}
	bad := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "evalflow compare: "+format+"\n", a...)
		fs.Usage()
		return exitConfig
	}
	switch {
	case len(pos) != 2:
		return bad("want two runs, A and B (run directories or RUN_DIR@CELL), got %d argument(s)", len(pos))
	case !slices.Contains(compare.Formats, *format):
		return bad("-format must be %s, not %q", strings.Join(compare.Formats, ", "), *format)
	case !(*alpha > 0 && *alpha < 1):
		return bad("-alpha must be between 0 and 1 (exclusive), not %v", *alpha)
	case *resamples < 1 || *resamples > maxResamples:
		return bad("-resamples must be between 1 and %d, not %d", maxResamples, *resamples)
	}

	var runs [2]*compare.Run
	for i, spec := range pos {
		r, err := compare.OpenRun(spec)
		if err != nil {
			return compareFailed(stderr, err)
		}
		runs[i] = r
	}
	res, err := compare.Compare(ctx, runs[0], runs[1], compare.Options{
		Metrics: mets, By: *by, Alpha: *alpha, Seed: *seed, Resamples: *resamples, FailIfWorse: gates,
	})
	if err != nil {
		return compareFailed(stderr, err)
	}
	for _, w := range res.Warnings {
		fmt.Fprintf(stderr, "evalflow compare: warning: %s\n", w)
	}
	if err := compare.Write(stdout, res, *format); err != nil {
		fmt.Fprintf(stderr, "evalflow compare: %v\n", err)
		return exitRun
	}
	for _, f := range res.Failures {
		where := ""
		if f.Grouped {
			where = fmt.Sprintf(" (%s = %q)", f.GroupBy, f.Group)
		}
		fmt.Fprintf(stderr, "evalflow compare: B is worse on %s%s: diff %+.4f, p_holm %.4g < alpha %g (A = %s, B = %s)\n",
			f.Metric, where, f.Diff, f.PHolm, res.Alpha, res.A.Label(), res.B.Label())
	}
	if len(res.Failures) > 0 {
		return exitGate
	}
	return exitOK
}

// compareFailed prints err and maps it to the exit code: 1 for arguments
// that name what the runs do not hold, 2 for a run that cannot be read.
func compareFailed(stderr io.Writer, err error) int {
	fmt.Fprintf(stderr, "evalflow compare: %v\n", err)
	var ae *compare.ArgError
	if errors.As(err, &ae) {
		return exitConfig
	}
	if errors.Is(err, context.Canceled) {
		return exitCancelled
	}
	return exitRun
}

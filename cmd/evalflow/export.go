package main

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/evalflow/evalflow/compare"
	"github.com/evalflow/evalflow/export"
	"github.com/evalflow/evalflow/rundir"
)

// cmdExport writes a run's final predictions in an official scorer's input
// format (docs/formats.md).
func cmdExport(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("export", "export [-format bird|spider|jsonl] [-out FILE] RUN_DIR[@CELL]", stderr)
	format := fs.String("format", "jsonl", "bird (predict_dev.json), spider (pred.txt, one query per line) or jsonl (evalflow replay predictions)")
	out := fs.String("out", "", "write to FILE (default standard output)")
	partial := fs.Bool("partial", false, "export a run that did not complete (what finished)")
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
	if !slices.Contains(export.Formats, *format) {
		fmt.Fprintf(stderr, "evalflow export: -format must be one of %s, not %q%s\n", strings.Join(export.Formats, ", "), *format, suggestion(*format, export.Formats))
		return exitConfig
	}
	dir, cell := pos[0], ""
	if i := strings.LastIndex(dir, "@"); i > 0 {
		if _, err := os.Stat(dir); err != nil {
			dir, cell = dir[:i], dir[i+1:]
		}
	}
	prev, err := rundir.Previous(dir)
	if err != nil || prev == nil {
		fmt.Fprintf(stderr, "evalflow export: %s is not a run directory (no readable manifest.json)\n", dir)
		return exitRun
	}
	if cell != "" && len(prev.Cells) > 0 {
		// The same selector compare takes: the full id, or name=value
		// pairs in any order that one cell has.
		c, err := compare.SelectCell(dir, cell, prev.Cells)
		if err != nil {
			fmt.Fprintf(stderr, "evalflow export: %v\n", err)
			return exitConfig
		}
		cell = c.ID
	}
	if prev.Status != "complete" && !*partial {
		fmt.Fprintf(stderr, "evalflow export: %s is %s, not complete: the official scorers pair predictions with gold lines by position, so a partial file would be scored against the wrong golds; finish the run (the same run command continues it), or give -partial to export what finished\n", dir, prev.Status)
		return exitRun
	}
	if prev.Options.Limit > 0 || prev.Options.Sample > 0 {
		fmt.Fprintf(stderr, "evalflow export: warning: %s ran with -limit/-sample: its predictions cover part of the dataset, so score them against the same items' gold, not the whole gold file\n", dir)
	}
	preds, err := export.FromCell(dir, cell)
	if err != nil {
		fmt.Fprintf(stderr, "evalflow %v\n", err)
		return exitRun
	}
	w := stdout
	var f *os.File
	if *out != "" {
		if f, err = os.CreateTemp(filepath.Dir(*out), ".export-*"); err != nil {
			fmt.Fprintf(stderr, "evalflow export: %v\n", err)
			return exitRun
		}
		defer os.Remove(f.Name())
		w = f
	}
	bw := bufio.NewWriter(w)
	err = export.Write(bw, *format, preds)
	if err == nil {
		err = bw.Flush()
	}
	if f != nil {
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err == nil {
			err = os.Rename(f.Name(), *out)
		}
	}
	if err != nil {
		fmt.Fprintf(stderr, "evalflow export: %v\n", err)
		return exitRun
	}
	if *out != "" {
		fmt.Fprintf(stderr, "evalflow export: %d predictions to %s (%s)\n", len(preds), *out, *format)
	}
	return exitOK
}

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

	"github.com/evalflow/evalflow/export"
)

// cmdExport writes a run's final predictions in an official scorer's input
// format (docs/formats.md).
func cmdExport(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("export", "export [-format bird|spider|jsonl] [-out FILE] RUN_DIR[@CELL]", stderr)
	format := fs.String("format", "jsonl", "bird (predict_dev.json), spider (pred.txt, one query per line) or jsonl (evalflow replay predictions)")
	out := fs.String("out", "", "write to FILE (default standard output)")
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

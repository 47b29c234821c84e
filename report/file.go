package report

import (
	"bufio"
	"os"
	"path/filepath"
)

// FileName is the report evalflow run writes into every run directory.
const FileName = "report.html"

// WriteFile writes rep to path, through a temporary name in the same
// directory so a reader never sees half a page.
func WriteFile(path string, rep *Report) error {
	f, err := os.CreateTemp(filepath.Dir(path), ".report-*.html.tmp")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	w := bufio.NewWriterSize(f, 1<<16)
	if err := Write(w, rep); err != nil {
		f.Close()
		return err
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	if err := f.Chmod(0o644); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), path)
}

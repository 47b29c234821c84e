package export

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/evalflow/evalflow/rundir"
	"github.com/evalflow/evalflow/sinks"
)

// FromRunDir reads the final predictions of the run in dir from its
// items.parquet (columns id, db and prediction, ordered by seq): every item
// of the run, an item without a prediction (an invalid dataset row, a
// cancelled item) with an empty query, so line i of a Spider export stays
// the run's item i. A sweep run holds several cells: choose one with
// FromCell; FromRunDir fails naming them.
func FromRunDir(dir string) ([]Pred, error) { return FromCell(dir, "") }

// FromCell is FromRunDir for the rows of one sweep cell (the value of the
// `cell` column, e.g. "model=a,k=1"); cell "" accepts a run of one cell.
func FromCell(dir, cell string) ([]Pred, error) {
	path := filepath.Join(dir, rundir.ItemsFile)
	if _, err := os.Stat(path); err != nil {
		if _, perr := os.Stat(filepath.Join(dir, rundir.PartsDir)); perr == nil {
			return nil, fmt.Errorf("export: %s has no %s yet: the run has not ended (resume it to finish it)", dir, rundir.ItemsFile)
		}
		return nil, fmt.Errorf("export: %s is not a run directory: %w", dir, err)
	}
	r, err := sinks.OpenParquet(path)
	if err != nil {
		return nil, fmt.Errorf("export: %w", err)
	}
	defer r.Close()
	col := map[string]int{"seq": -1, "id": -1, "db": -1, "prediction": -1, "cell": -1}
	for i, c := range r.Schema() {
		if _, ok := col[c.Name]; ok {
			col[c.Name] = i
		}
	}
	for _, name := range []string{"id", "prediction"} {
		if col[name] < 0 {
			return nil, fmt.Errorf("export: %s has no %q column", path, name)
		}
	}
	str := func(row []any, name string) string {
		if i := col[name]; i >= 0 {
			s, _ := row[i].(string)
			return s
		}
		return ""
	}
	type seqPred struct {
		seq int64
		p   Pred
	}
	var out []seqPred
	var cells []string // in order of first appearance
	for {
		row, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("export: %w", err)
		}
		if c := str(row, "cell"); col["cell"] >= 0 {
			if !slices.Contains(cells, c) {
				cells = append(cells, c)
			}
			if cell != "" && c != cell {
				continue
			}
		}
		sp := seqPred{seq: int64(len(out)), p: Pred{ID: str(row, "id"), Query: str(row, "prediction"), DB: str(row, "db")}}
		if i := col["seq"]; i >= 0 {
			if n, ok := row[i].(int64); ok {
				sp.seq = n
			}
		}
		out = append(out, sp)
	}
	switch {
	case cell != "" && !slices.Contains(cells, cell):
		return nil, fmt.Errorf("export: %s has no sweep cell %q (cells: %s)", path, cell, list(cells))
	case cell == "" && len(cells) > 1:
		return nil, fmt.Errorf("export: %s holds %d sweep cells; choose one of %s", path, len(cells), list(cells))
	}
	// items.parquet is written in seq order; sorting keeps that true of any
	// file with a seq column.
	sort.SliceStable(out, func(a, b int) bool { return out[a].seq < out[b].seq })
	preds := make([]Pred, len(out))
	for i, sp := range out {
		preds[i] = sp.p
	}
	return preds, nil
}

func list(cells []string) string {
	q := make([]string, len(cells))
	for i, c := range cells {
		q[i] = strconv.Quote(c)
	}
	return strings.Join(q, ", ")
}

package sinks

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/parquet-go/parquet-go"
)

// ParquetReader streams the rows of a flat Parquet file one at a time, a
// row group at a time, so a large file is read in flat memory (resume and
// the run directory's merge read every part of a run this way). Values are
// converted as ReadParquetRows converts them.
type ParquetReader struct {
	path    string
	f       *os.File
	pf      *parquet.File
	schema  Schema
	readers []func(parquet.Value) any
	groups  []parquet.RowGroup
	rows    parquet.Rows
	done    bool // rows reached its end; closed on the next fill
	buf     []parquet.Row
	n, i    int
}

// OpenParquet opens path for streaming. The caller closes the reader.
func OpenParquet(path string) (*ParquetReader, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("sinks: %w", err)
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("sinks: %w", err)
	}
	pf, err := parquet.OpenFile(f, st.Size())
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("sinks: reading %s: %w", path, err)
	}
	s, readers, err := fileSchema(pf)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("sinks: reading %s: %w", path, err)
	}
	return &ParquetReader{path: path, f: f, pf: pf, schema: s, readers: readers, groups: pf.RowGroups(), buf: make([]parquet.Row, 128)}, nil
}

// Schema returns the file's columns.
func (r *ParquetReader) Schema() Schema { return r.schema }

// NumRows is the number of rows the footer declares.
func (r *ParquetReader) NumRows() int64 { return r.pf.NumRows() }

// Next returns the next row (a fresh slice the caller may keep), or io.EOF
// after the last one.
func (r *ParquetReader) Next() ([]any, error) {
	for r.i >= r.n {
		if err := r.fill(); err != nil {
			return nil, err
		}
	}
	row := r.buf[r.i]
	r.i++
	out := make([]any, len(r.schema))
	for _, v := range row {
		if c := v.Column(); !v.IsNull() {
			out[c] = r.readers[c](v)
		}
	}
	return out, nil
}

func (r *ParquetReader) fill() error {
	r.i, r.n = 0, 0
	for {
		if r.done {
			// Closed only now: the rows just handed out may point into
			// the group's page buffers.
			r.rows.Close()
			r.rows, r.done = nil, false
		}
		if r.rows == nil {
			if len(r.groups) == 0 {
				return io.EOF
			}
			r.rows = r.groups[0].Rows()
			r.groups = r.groups[1:]
		}
		n, err := r.rows.ReadRows(r.buf)
		if n > 0 {
			r.n = n
			r.done = errors.Is(err, io.EOF)
			return nil
		}
		if errors.Is(err, io.EOF) {
			r.done = true
			continue
		}
		if err != nil {
			return fmt.Errorf("sinks: reading %s: %w", r.path, err)
		}
	}
}

// Close releases the file.
func (r *ParquetReader) Close() error {
	if r.rows != nil {
		r.rows.Close()
		r.rows = nil
	}
	return r.f.Close()
}

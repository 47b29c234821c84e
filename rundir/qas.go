package rundir

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/evalflow/evalflow/dataset"
	"github.com/evalflow/evalflow/dsl"
	"github.com/evalflow/evalflow/item"
	"github.com/evalflow/evalflow/metrics"
	"github.com/evalflow/evalflow/sinks"
	"github.com/evalflow/evalflow/table"
)

// qasSink renders the QAS Evaluation System's evaluation-results.jsonl: one line per item in
// the document's shape, from the QAS components of the record. Lines are
// kept in the run's parts (a (seq, sink, line) sidecar) and written to the
// sink's file when the run is merged, so a resumed run's file holds every
// item once, in dataset order.
type qasSink struct {
	sink *dsl.Sink
	opts metrics.Options
}

// perItem builds the line renderer of each per-item sink kind (a
// sinks.Kind with PerItem, declared in package sinks). The lines are kept in the run's parts and
// written to the sink's file when the run is merged.
var perItem = map[string]func(sb *dsl.Sink) *qasSink{
	"qas_jsonl": func(sb *dsl.Sink) *qasSink { return &qasSink{sink: sb, opts: qasOptions(sb)} },
}

// isPerItem reports whether a sink block's kind renders per item.
func isPerItem(sb *dsl.Sink) bool {
	k, ok := sinks.Lookup(sb.Kind)
	return ok && k.PerItem
}

var qasPartSchema = sinks.Schema{
	{Name: "seq", Type: table.TypeInt},
	{Name: "sink", Type: table.TypeString},
	{Name: "line", Type: table.TypeString},
}

func qasOptions(sb *dsl.Sink) metrics.Options { return metrics.Options(sb.Options) }

func (q *qasSink) line(rec *item.Record) (string, error) {
	c, err := metrics.ScoreQAS(rec, q.opts)
	if err != nil {
		return "", err
	}
	diff := ""
	if v, ok := rec.Item.Field(q.sink.Difficulty); ok {
		diff = dataset.Text(v)
	}
	var b bytes.Buffer
	if err := metrics.WriteQASResult(&b, metrics.NewQASResult(rec, c, q.sink.Agent, diff)); err != nil {
		return "", err
	}
	return b.String(), nil
}

// mergeQAS writes the sink's file from the sidecar parts.
func (r *Run) mergeQAS(q *qasSink) error {
	path := q.sink.Path
	if !filepath.IsAbs(path) {
		path = filepath.Join(r.Dir, path)
	}
	tmp := path + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return fmt.Errorf("sink.%s: %w", q.sink.Name, err)
	}
	w := bufio.NewWriter(f)
	err = r.mergeStreams("qas", func(row []any) error {
		if name, _ := row[1].(string); name != q.sink.Name {
			return nil
		}
		line, _ := row[2].(string)
		_, err := io.WriteString(w, line)
		return err
	})
	if ferr := w.Flush(); err == nil {
		err = ferr
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("sink.%s: %w", q.sink.Name, err)
	}
	return os.Rename(tmp, path)
}

package main

import (
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/evalflow/evalflow/dsl"
	"github.com/evalflow/evalflow/junit"
	"github.com/evalflow/evalflow/nodes/aggregate"
	"github.com/evalflow/evalflow/rundir"
	"github.com/evalflow/evalflow/sinks"
)

// gate is one -fail-under METRIC=X: the overall mean of METRIC (in a sweep,
// of every cell) must be at least X.
type gate struct {
	metric string
	min    float64
	text   string
}

func parseGate(s string) (gate, error) {
	name, val, ok := strings.Cut(s, "=")
	v, err := strconv.ParseFloat(strings.TrimSpace(val), 64)
	if !ok || name == "" || err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return gate{}, fmt.Errorf("-fail-under %q: want METRIC=NUMBER, e.g. -fail-under ex=0.8", s)
	}
	return gate{metric: strings.TrimSpace(name), min: v, text: s}, nil
}

// checkGateNames refuses a gate on a metric the pipeline does not compute
// (before anything runs).
func checkGateNames(gates []gate, rowsMetrics []string) error {
	for _, g := range gates {
		found := false
		var names []string
		for _, m := range rowsMetrics {
			prefix, isPrefix := strings.CutSuffix(m, "*")
			if m == g.metric || isPrefix && strings.HasPrefix(g.metric, prefix) {
				found = true
			}
			names = append(names, prefix)
		}
		rowsMetrics = names
		if !found {
			return fmt.Errorf("-fail-under %s: the pipeline computes no metric %q.%s Its metrics: %s", g.text, g.metric,
				suggestion(g.metric, rowsMetrics), strings.Join(rowsMetrics, ", "))
		}
	}
	return nil
}

func suggestion(name string, candidates []string) string {
	if s := dsl.Suggest(name, candidates); s != "" {
		return fmt.Sprintf(" Did you mean %q?", s)
	}
	return ""
}

// failedGates lists every gate a cell (or the run) misses, naming the
// metric, the cell, the mean and the threshold. A metric without a value
// (no item had one) misses its gate: nothing was computed to pass it.
func failedGates(gates []gate, rows []aggregate.Row) []string {
	var out []string
	for _, g := range gates {
		seen := false
		for _, r := range rows {
			if r.Group != "all" || r.Metric != g.metric {
				continue
			}
			seen = true
			where := ""
			if r.Cell != "" {
				where = " in cell " + r.Cell
			}
			switch {
			case math.IsNaN(r.Mean):
				out = append(out, fmt.Sprintf("%s has no value%s (no item was scored), below -fail-under %s", g.metric, where, g.text))
			case r.Mean < g.min:
				out = append(out, fmt.Sprintf("%s = %.4f%s is below -fail-under %s", g.metric, r.Mean, where, g.text))
			}
		}
		if !seen {
			out = append(out, fmt.Sprintf("%s was not computed, so -fail-under %s cannot pass", g.metric, g.text))
		}
	}
	return out
}

// writeJUnit writes the run as JUnit XML (Ant/Surefire format): a suite per
// sweep cell (one for a plain run), a testcase per item — a failure when the
// item's prediction is wrong (status timeout or unsafe, or a metric below
// 1), an error when the harness could not evaluate it — and the metric
// means as suite properties. It reads the merged items.parquet.
func writeJUnit(path, dir string, m *rundir.Manifest, rows []aggregate.Row, metricCols []string) error {
	r, err := sinks.OpenParquet(filepath.Join(dir, rundir.ItemsFile))
	if err != nil {
		return err
	}
	defer r.Close()
	col := map[string]int{}
	for i, c := range r.Schema() {
		col[c.Name] = i
	}
	str := func(row []any, name string) string {
		if i, ok := col[name]; ok {
			s, _ := row[i].(string)
			return s
		}
		return ""
	}
	host, _ := os.Hostname()
	name := strings.TrimSuffix(filepath.Base(m.Pipeline), filepath.Ext(m.Pipeline))
	suites := map[string]*junit.Suite{}
	var order []string
	suite := func(cell string) *junit.Suite {
		if s, ok := suites[cell]; ok {
			return s
		}
		sname := "evalflow." + name
		if cell != "" {
			sname += " [" + cell + "]"
		}
		s := &junit.Suite{Name: sname, Timestamp: m.Started, Hostname: host}
		s.Properties = append(s.Properties, [2]string{"run_id", m.RunID}, [2]string{"pipeline", m.Pipeline}, [2]string{"status", m.Status})
		if cell != "" {
			s.Properties = append(s.Properties, [2]string{"cell", cell})
		}
		for _, ar := range rows {
			if ar.Group == "all" && ar.Cell == cell && !math.IsNaN(ar.Mean) {
				s.Properties = append(s.Properties, [2]string{"metric." + ar.Metric, strconv.FormatFloat(ar.Mean, 'g', -1, 64)})
			}
		}
		suites[cell] = s
		order = append(order, cell)
		return s
	}
	for {
		row, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err
		}
		cell := str(row, "cell")
		s := suite(cell)
		c := junit.Case{Name: str(row, "id"), ClassName: s.Name}
		if i, ok := col["duration_ms"]; ok {
			if d, ok := row[i].(float64); ok {
				c.Time = d / 1000
			}
		}
		status := str(row, "status")
		var wrong []string
		for _, mc := range metricCols {
			if i, ok := col[mc]; ok {
				if v, ok := row[i].(float64); ok && v < 1 {
					wrong = append(wrong, fmt.Sprintf("%s=%g", mc, v))
				}
			}
		}
		switch status {
		case "error", "cancelled":
			c.Error = str(row, "error")
			if c.Error == "" {
				c.Error = status
			}
			c.ErrorType = status
		case "timeout", "unsafe":
			c.Failure = fmt.Sprintf("%s: %s", status, str(row, "error_message"))
		default:
			if len(wrong) > 0 {
				c.Failure = strings.Join(wrong, ", ")
				if ec := str(row, "error_class"); ec != "" {
					c.Failure += " (" + ec + ": " + str(row, "error_message") + ")"
				}
			}
		}
		c.SystemOut = "prediction: " + str(row, "prediction") + "\ngold: " + str(row, "gold")
		s.Cases = append(s.Cases, c)
	}
	if len(order) == 0 {
		suite("")
	}
	out := make([]junit.Suite, 0, len(order))
	for _, cell := range order {
		out = append(out, *suites[cell])
	}
	return junit.WriteFile(path, out)
}

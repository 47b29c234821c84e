package metrics

// Error reporting for failed metrics (metric-calculators, “Error Reporting”
// requirement): a metric that
// cannot compute returns Failed(name, err), value 0 with the error text,
// and the other metrics of the item go on. MetricError carries what the
// seed asks the report to include: the metric, its input data and the cause.
// The time and the item are recorded by the score stage that stores the
// score, and a panic's stack by the stage that recovers it.

import (
	"sort"
	"strconv"
	"strings"
)

// MetricError is a metric failure with the inputs that caused it. Its text
// is "metric: cause [input name: "value", ...]" with inputs sorted by name,
// each value quoted and cut to 500 bytes.
type MetricError struct {
	Metric string
	Input  map[string]string
	Err    error
}

func (e *MetricError) Error() string {
	var b strings.Builder
	b.WriteString(e.Metric)
	b.WriteString(": ")
	if e.Err != nil {
		b.WriteString(e.Err.Error())
	}
	if len(e.Input) > 0 {
		keys := make([]string, 0, len(e.Input))
		for k := range e.Input {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		b.WriteString(" [")
		for i, k := range keys {
			if i > 0 {
				b.WriteString(", ")
			}
			v := e.Input[k]
			if len(v) > 500 {
				v = v[:500] + "…"
			}
			b.WriteString(k)
			b.WriteString(": ")
			b.WriteString(strconv.Quote(v))
		}
		b.WriteString("]")
	}
	return b.String()
}

// Unwrap returns the cause.
func (e *MetricError) Unwrap() error { return e.Err }

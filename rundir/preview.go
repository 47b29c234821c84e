package rundir

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"unicode/utf8"

	"github.com/evalflow/evalflow/sinks"
	"github.com/evalflow/evalflow/table"
)

// Limits of a result preview (items.parquet gold_preview and pred_preview,
// docs/output.md): the first PreviewRows rows and PreviewColumns columns,
// each text cut after PreviewChars characters.
const (
	PreviewRows    = 5
	PreviewColumns = 20
	PreviewChars   = 80
)

// Ellipsis ends a text the preview cut.
const Ellipsis = "…"

// Preview is a decoded gold_preview or pred_preview: the head of a result
// table as items.parquet keeps it.
type Preview struct {
	// Columns are the names of the first PreviewColumns columns.
	Columns []string `json:"columns"`
	// Rows are the first PreviewRows rows, each with one value per entry
	// of Columns: nil, bool, json.Number or string.
	Rows [][]any `json:"rows"`
	// RowsTotal and ColumnsTotal are the result's size (RowsTotal equals
	// gold_rows or pred_rows).
	RowsTotal    int64 `json:"rows_total"`
	ColumnsTotal int64 `json:"columns_total"`
	// Truncated is set when the preview holds less than the result: rows
	// or columns left out, or a text cut (it then ends in Ellipsis).
	Truncated bool `json:"truncated"`
	// Capped is set when the engine's max_rows cut the result itself, so
	// RowsTotal is the cap, not the query's full size.
	Capped bool `json:"capped"`
}

// ParsePreview decodes a preview column's value; numbers stay
// json.Number, exactly as written.
func ParsePreview(s string) (*Preview, error) {
	d := json.NewDecoder(bytes.NewReader([]byte(s)))
	d.UseNumber()
	var p Preview
	if err := d.Decode(&p); err != nil {
		return nil, fmt.Errorf("result preview: %w", err)
	}
	return &p, nil
}

// previewOf renders t's preview into buf (reused) and returns it as a
// string; nil when there is no table (the query did not run or failed).
func previewOf(buf *[]byte, t *table.Table) any {
	if t == nil {
		return nil
	}
	b := appendPreview((*buf)[:0], t)
	*buf = b
	return string(b)
}

// appendPreview appends t's preview as one compact JSON object.
func appendPreview(b []byte, t *table.Table) []byte {
	nc := min(len(t.Columns), PreviewColumns)
	nr := min(len(t.Rows), PreviewRows)
	cut := nc < len(t.Columns) || nr < len(t.Rows)
	b = append(b, `{"columns":[`...)
	for i, c := range t.Columns[:nc] {
		if i > 0 {
			b = append(b, ',')
		}
		var c1 bool
		b, c1 = appendText(b, c.Name)
		cut = cut || c1
	}
	b = append(b, `],"rows":[`...)
	for i, row := range t.Rows[:nr] {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, '[')
		for j := range nc {
			if j > 0 {
				b = append(b, ',')
			}
			var v table.Value
			if j < len(row) {
				v = row[j]
			}
			var c1 bool
			b, c1 = appendCell(b, v)
			cut = cut || c1
		}
		b = append(b, ']')
	}
	b = append(b, `],"rows_total":`...)
	b = strconv.AppendInt(b, int64(len(t.Rows)), 10)
	b = append(b, `,"columns_total":`...)
	b = strconv.AppendInt(b, int64(len(t.Columns)), 10)
	b = append(b, `,"truncated":`...)
	b = strconv.AppendBool(b, cut)
	b = append(b, `,"capped":`...)
	b = strconv.AppendBool(b, t.Truncated)
	return append(b, '}')
}

// appendCell appends one value: null, true/false, a JSON number, or a
// string (NaN and ±Inf as "NaN", "Infinity", "-Infinity"; bytes as \x and
// their hex digits; text cut after PreviewChars characters). It reports
// whether it cut the value.
func appendCell(b []byte, v table.Value) ([]byte, bool) {
	switch x := v.(type) {
	case nil:
		return append(b, "null"...), false
	case bool:
		return strconv.AppendBool(b, x), false
	case int64:
		return strconv.AppendInt(b, x, 10), false
	case float64:
		switch {
		case math.IsNaN(x):
			return append(b, `"NaN"`...), false
		case math.IsInf(x, 1):
			return append(b, `"Infinity"`...), false
		case math.IsInf(x, -1):
			return append(b, `"-Infinity"`...), false
		}
		return sinks.AppendJSONFloat(b, x), false
	case string:
		return appendText(b, x)
	case []byte:
		// Only what the preview can show is encoded (2 hex digits a
		// byte); a longer BLOB still comes out longer than PreviewChars,
		// so appendText cuts it and says so.
		return appendText(b, `\x`+hex.EncodeToString(x[:min(len(x), PreviewChars/2)]))
	}
	return appendText(b, table.Format(v))
}

// appendText appends s as a JSON string, its first PreviewChars characters
// and Ellipsis when it is longer; it reports whether it cut s.
func appendText(b []byte, s string) ([]byte, bool) {
	if len(s) <= PreviewChars {
		return sinks.AppendJSONString(b, s), false
	}
	n, i := 0, 0
	for i < len(s) && n < PreviewChars {
		_, size := utf8.DecodeRuneInString(s[i:])
		i += size
		n++
	}
	if i == len(s) {
		return sinks.AppendJSONString(b, s), false
	}
	b = sinks.AppendJSONString(b, s[:i])
	// Put the ellipsis inside the closing quote.
	b = b[:len(b)-1]
	b = append(b, Ellipsis...)
	return append(b, '"'), true
}

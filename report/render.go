package report

import (
	"database/sql"
	_ "embed"
	"fmt"
	"html/template"
	"io"
	"math"
	"strconv"
	"strings"
	"sync"

	"github.com/evalflow/evalflow/compare"
)

//go:embed report.html.tmpl
var pageText string

// page is the report's template, parsed at first use: every command links
// this package, few render a page, and parsing it was the heaviest package
// init of `evalflow version`.
var page = sync.OnceValue(func() *template.Template {
	return template.Must(template.New("report").Funcs(template.FuncMap{
		"num":    num,
		"count":  func(k string, n int64) template.HTML { return num(k, n, 0) },
		"key":    key,
		"svg":    func(s string) template.HTML { return template.HTML(s) }, // drawn by gonum/plot: its text is XML-escaped
		"cellOr": cellOr,
		"pct":    func(v float64) string { return strconv.FormatFloat(100*v, 'f', 1, 64) + "%" },
		"diffRows": func(d Diff) []compare.Row {
			return d.Res.Rows
		},
		"inc":   func(i int) int { return i + 1 },
		"multi": func(r *Run) bool { return len(r.Cells) > 0 },
		"view":  func(v *ResultView, total sql.NullInt64) resultArg { return resultArg{v, total} },
	}).Parse(pageText))
})

// resultArg hands a result's preview and its row count (gold_rows or
// pred_rows) to the "rows" and "preview" templates.
type resultArg struct {
	V     *ResultView
	Total sql.NullInt64
}

// Write renders rep as one self-contained HTML page.
func Write(w io.Writer, rep *Report) error {
	return page().Execute(w, rep)
}

// num renders a number with its hooks: data-key says where it came from,
// data-value holds it in full precision ("null" when undefined), the text
// shows it with digits decimals (or "–").
func num(k string, v any, digits int) template.HTML {
	val, ok := 0.0, true
	switch x := v.(type) {
	case sql.NullFloat64:
		val, ok = x.Float64, x.Valid
	case sql.NullInt64:
		val, ok = float64(x.Int64), x.Valid
	case float64:
		val = x
	case int64:
		val = float64(x)
	case int:
		val = float64(x)
	default:
		panic(fmt.Sprintf("report: num of %T", v))
	}
	if math.IsNaN(val) || math.IsInf(val, 0) {
		ok = false
	}
	raw, text := "null", "–"
	if ok {
		raw = strconv.FormatFloat(val, 'g', -1, 64)
		text = strconv.FormatFloat(val, 'f', digits, 64)
	}
	return template.HTML(fmt.Sprintf(`<span class="n" data-key="%s" data-value="%s">%s</span>`,
		template.HTMLEscapeString(k), raw, text))
}

func cellOr(cell, other string) string {
	if cell == "" {
		return other
	}
	return cell
}

// Describe says in one line what a run is, for the page's title.
func (r *Run) Describe() string {
	return strings.TrimSpace(fmt.Sprintf("%s (%s)", r.Manifest.RunID, r.Manifest.Status))
}

// DiffResamples are the bootstrap resamples of the paired differences.
func (rep *Report) DiffResamples() int { return DiffResamples }

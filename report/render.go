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
		"item":  itemHTML,
	}).Parse(pageText))
})

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

// escapeText writes s as html/template writes a string in an element's
// text: NUL becomes U+FFFD and " & ' + < > their character references;
// everything else, invalid UTF-8 included, is written as it is.
func escapeText(b *strings.Builder, s string) {
	last := 0
	for i := 0; i < len(s); i++ {
		var repl string
		switch s[i] {
		case 0:
			repl = "\uFFFD"
		case '"':
			repl = "&#34;"
		case '&':
			repl = "&amp;"
		case '\'':
			repl = "&#39;"
		case '+':
			repl = "&#43;"
		case '<':
			repl = "&lt;"
		case '>':
			repl = "&gt;"
		default:
			continue
		}
		b.WriteString(s[last:i])
		b.WriteString(repl)
		last = i + 1
	}
	b.WriteString(s[last:])
}

// itemHTML renders one item of the item table. It is Go rather than
// template text because the template spent about 40 µs an item on
// reflection (the page of 500 items took 24 ms to render, most of a small
// run's report after DuckDB); the markup and the escaping are the
// template's, byte for byte (TestItemHTMLMatchesTemplate).
func itemHTML(r *Run, it Item) template.HTML {
	var b strings.Builder
	b.Grow(2048)
	w := b.WriteString
	seq := strconv.FormatInt(it.Seq, 10)
	w(`<div class="item `)
	if it.Wrong || it.Separated {
		w("bad")
	} else {
		w("ok")
	}
	w(`" data-seq="`)
	w(seq)
	w("\">\n<div><b>#")
	w(seq)
	elem(&b, "</b> <code>", it.ID, "</code>")
	if it.Cell != "" {
		elem(&b, " · <code>", it.Cell, "</code>")
	}
	if it.DB != "" {
		elem(&b, " · db <code>", it.DB, "</code>")
	}
	w("\n · <span class=\"tag")
	if it.Status != "ok" {
		w(" bad")
	}
	elem(&b, `">`, it.Status, "</span>")
	if it.ErrorClass != "" {
		elem(&b, ` <span class="tag bad">`, it.ErrorClass, "</span>")
	}
	w("\n · attempts ")
	w(string(num(key("item", r.Index, it.Seq, "attempts"), it.Attempts, 0)))
	w("\n")
	for _, v := range it.Values {
		elem(&b, " · ", v.Metric, " ")
		w(string(num(key("item", r.Index, it.Seq, v.Metric), v.Value, 3)))
	}
	elem(&b, "</div>\n<p>", it.Question, "</p>\n<div class=\"sbs\">\n<div><div class=\"muted\">gold</div><pre>")
	escapeText(&b, it.Gold)
	elem(&b, "</pre></div>\n<div><div class=\"muted\">prediction</div><pre>", it.Pred, "</pre></div>\n<div class=\"result gold\"><div class=\"muted\">gold result</div>")
	if it.GoldError != "" {
		elem(&b, `<pre class="err">`, it.GoldError, "</pre>")
	} else {
		itemResult(&b, it.GoldPreview, it.GoldRows, num(key("item", r.Index, it.Seq, "gold_rows"), it.GoldRows, 0))
	}
	w("</div>\n<div class=\"result pred\"><div class=\"muted\">prediction result</div>")
	if it.PredRows.Valid {
		itemResult(&b, it.PredPreview, it.PredRows, num(key("item", r.Index, it.Seq, "pred_rows"), it.PredRows, 0))
	} else {
		w("did not run")
	}
	for _, e := range []string{it.ErrMessage, it.Error} {
		if e != "" {
			elem(&b, `<pre class="err">`, e, "</pre>")
		}
	}
	w("</div>\n")
	if s := it.Suite; s != nil {
		if s.Own {
			elem(&b, `<div class="suite own" data-suite-db="`, s.DB, `"><div class="muted">`)
			escapeText(&b, s.Metric)
			elem(&b, ": the item's own database <code>", s.DB, "</code> separates the prediction from the gold (the results above)</div></div>\n")
		} else {
			elem(&b, `<div class="result suite-gold" data-suite-db="`, s.DB, `"><div class="muted">gold result on test database <code>`)
			escapeText(&b, s.DB)
			elem(&b, "</code>, which separates the prediction from the gold (", s.Metric, ")</div>")
			suiteResult(&b, s.Gold, "not stored")
			elem(&b, "</div>\n<div class=\"result suite-pred\" data-suite-db=\"", s.DB, `"><div class="muted">prediction result on <code>`)
			escapeText(&b, s.DB)
			w("</code></div>")
			suiteResult(&b, s.Pred, "did not run")
			if s.Note != "" {
				elem(&b, `<pre class="err">`, s.Note, "</pre>")
			}
			w("</div>\n")
		}
	}
	w("</div>\n</div>")
	return template.HTML(b.String())
}

// itemResult is one of the item's results: how many rows (count, with its
// hooks) and its preview.
func itemResult(b *strings.Builder, v *ResultView, rows sql.NullInt64, count template.HTML) {
	rowsCut(b, v, rows)
	b.WriteString(string(count))
	b.WriteString(" rows")
	preview(b, v)
}

// elem writes open, s escaped as element text (escapeText), and close.
func elem(b *strings.Builder, open, s, close string) {
	b.WriteString(open)
	escapeText(b, s)
	b.WriteString(close)
}

// suiteResult is a result on a test database: how many rows and its
// preview, or missing when v is nil.
func suiteResult(b *strings.Builder, v *ResultView, missing string) {
	if v == nil {
		b.WriteString(missing)
		return
	}
	total := v.Total()
	itemResult(b, v, total, template.HTML(strconv.FormatInt(total.Int64, 10)))
}

// rowsCut says "first N of " when v holds fewer rows than the result.
func rowsCut(b *strings.Builder, v *ResultView, total sql.NullInt64) {
	if v != nil && v.Err == "" && v.RowsCut(total) {
		b.WriteString("first ")
		b.WriteString(strconv.Itoa(len(v.Rows)))
		b.WriteString(" of ")
	}
}

// preview renders a result's preview: what it leaves out, its table.
func preview(b *strings.Builder, v *ResultView) {
	if v == nil {
		return
	}
	w := b.WriteString
	if v.Err != "" {
		elem(b, `<div class="err">the stored preview cannot be read: `, v.Err, "</div>")
		return
	}
	if v.ColumnsCut {
		w(", first ")
		w(strconv.Itoa(len(v.Columns)))
		w(" of ")
		w(strconv.FormatInt(v.ColumnsTotal, 10))
		w(" columns")
	}
	if v.Capped {
		w(" (cut by the engine's max_rows)")
	}
	w("\n")
	if len(v.Columns) > 0 {
		w(`<div class="pv"><table class="preview"><tr>`)
		for _, c := range v.Columns {
			elem(b, "<th>", c, "</th>")
		}
		w("</tr>\n")
		for _, row := range v.Rows {
			w("<tr>")
			for _, c := range row {
				if c.Null {
					w(`<td class="null">`)
				} else {
					w("<td>")
				}
				escapeText(b, c.Text)
				w("</td>")
			}
			w("</tr>")
		}
		w("\n</table></div>")
	}
	if v.Truncated {
		w(`<div class="muted truncated">truncated preview: the run directory keeps the first rows and columns of a result and cuts long texts (marked …)</div>`)
	}
}

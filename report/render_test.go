package report

import (
	"database/sql"
	"html/template"
	"math/rand/v2"
	"strings"
	"testing"
)

// itemTemplate is the item table's template text as it was before
// itemHTML replaced it: the reference itemHTML must render byte for byte.
const itemTemplate = `{{define "rows"}}{{with .V}}{{if not .Err}}{{if .RowsCut $.Total}}first {{len .Rows}} of {{end}}{{end}}{{end}}{{end}}{{define "preview"}}{{with .V}}{{if .Err}}<div class="err">the stored preview cannot be read: {{.Err}}</div>{{else}}{{if .ColumnsCut}}, first {{len .Columns}} of {{.ColumnsTotal}} columns{{end}}{{if .Capped}} (cut by the engine's max_rows){{end}}
{{if .Columns}}<div class="pv"><table class="preview"><tr>{{range .Columns}}<th>{{.}}</th>{{end}}</tr>
{{range .Rows}}<tr>{{range .}}<td{{if .Null}} class="null"{{end}}>{{.Text}}</td>{{end}}</tr>{{end}}
</table></div>{{end}}{{if .Truncated}}<div class="muted truncated">truncated preview: the run directory keeps the first rows and columns of a result and cuts long texts (marked …)</div>{{end}}{{end}}{{end}}{{end}}{{$r := .}}{{range $it := $r.Items}}
<div class="item {{if or .Wrong .Separated}}bad{{else}}ok{{end}}" data-seq="{{.Seq}}">
<div><b>#{{.Seq}}</b> <code>{{.ID}}</code>{{if .Cell}} · <code>{{.Cell}}</code>{{end}}{{if .DB}} · db <code>{{.DB}}</code>{{end}}
 · <span class="tag{{if ne .Status "ok"}} bad{{end}}">{{.Status}}</span>{{with .ErrorClass}} <span class="tag bad">{{.}}</span>{{end}}
 · attempts {{num (key "item" $r.Index .Seq "attempts") .Attempts 0}}
{{range .Values}} · {{.Metric}} {{num (key "item" $r.Index $it.Seq .Metric) .Value 3}}{{end}}</div>
<p>{{.Question}}</p>
<div class="sbs">
<div><div class="muted">gold</div><pre>{{.Gold}}</pre></div>
<div><div class="muted">prediction</div><pre>{{.Pred}}</pre></div>
<div class="result gold"><div class="muted">gold result</div>{{if .GoldError}}<pre class="err">{{.GoldError}}</pre>{{else}}{{template "rows" (view .GoldPreview .GoldRows)}}{{num (key "item" $r.Index .Seq "gold_rows") .GoldRows 0}} rows{{template "preview" (view .GoldPreview .GoldRows)}}{{end}}</div>
<div class="result pred"><div class="muted">prediction result</div>{{if .PredRows.Valid}}{{template "rows" (view .PredPreview .PredRows)}}{{num (key "item" $r.Index .Seq "pred_rows") .PredRows 0}} rows{{template "preview" (view .PredPreview .PredRows)}}{{else}}did not run{{end}}{{with .ErrMessage}}<pre class="err">{{.}}</pre>{{end}}{{with .Error}}<pre class="err">{{.}}</pre>{{end}}</div>
{{with .Suite}}{{if .Own}}<div class="suite own" data-suite-db="{{.DB}}"><div class="muted">{{.Metric}}: the item's own database <code>{{.DB}}</code> separates the prediction from the gold (the results above)</div></div>
{{else}}<div class="result suite-gold" data-suite-db="{{.DB}}"><div class="muted">gold result on test database <code>{{.DB}}</code>, which separates the prediction from the gold ({{.Metric}})</div>{{with .Gold}}{{template "rows" (view . .Total)}}{{.Total.Int64}} rows{{template "preview" (view . .Total)}}{{else}}not stored{{end}}</div>
<div class="result suite-pred" data-suite-db="{{.DB}}"><div class="muted">prediction result on <code>{{.DB}}</code></div>{{with .Pred}}{{template "rows" (view . .Total)}}{{.Total.Int64}} rows{{template "preview" (view . .Total)}}{{else}}did not run{{end}}{{with .Note}}<pre class="err">{{.}}</pre>{{end}}</div>
{{end}}{{end}}</div>
</div>{{end}}`

var itemReference = template.Must(template.New("items").Funcs(template.FuncMap{
	"num":  num,
	"key":  key,
	"view": func(v *ResultView, total sql.NullInt64) resultArg { return resultArg{v, total} },
}).Parse(itemTemplate))

type resultArg struct {
	V     *ResultView
	Total sql.NullInt64
}

// hostile are texts that need escaping, or look as if they did.
var hostile = []string{"", "plain", `<script>alert("x")</script>`, "a+b & c's", "\x00nul", "tab\tnew\nline", "é ünïcode ☃", "\xff\xfe invalid", "{{.Seq}}", "]]><!--", "`back`"}

func pick(rng *rand.Rand) string { return hostile[rng.IntN(len(hostile))] }

func randomView(rng *rand.Rand) *ResultView {
	switch rng.IntN(5) {
	case 0:
		return nil
	case 1:
		return &ResultView{Err: pick(rng)}
	}
	v := &ResultView{ColumnsCut: rng.IntN(3) == 0, Truncated: rng.IntN(3) == 0, Capped: rng.IntN(4) == 0}
	for range rng.IntN(4) {
		v.Columns = append(v.Columns, pick(rng))
	}
	v.ColumnsTotal = int64(len(v.Columns) + rng.IntN(3))
	for range rng.IntN(4) {
		var row []Cell
		for range v.Columns {
			row = append(row, Cell{Text: pick(rng), Null: rng.IntN(5) == 0})
		}
		v.Rows = append(v.Rows, row)
	}
	v.RowsTotal = int64(len(v.Rows) + rng.IntN(3))
	return v
}

func randomNull(rng *rand.Rand) sql.NullInt64 {
	return sql.NullInt64{Int64: int64(rng.IntN(1000)), Valid: rng.IntN(4) != 0}
}

func randomItem(rng *rand.Rand, seq int64) Item {
	it := Item{Seq: seq, ID: pick(rng), Cell: pick(rng), Question: pick(rng), DB: pick(rng), Gold: pick(rng), Pred: pick(rng),
		Status: []string{"ok", "error", "cancelled", pick(rng)}[rng.IntN(4)], ErrorClass: pick(rng), Error: pick(rng),
		ErrMessage: pick(rng), GoldRows: randomNull(rng), PredRows: randomNull(rng), Attempts: randomNull(rng),
		GoldPreview: randomView(rng), PredPreview: randomView(rng), Wrong: rng.IntN(2) == 0, Separated: rng.IntN(3) == 0}
	if rng.IntN(3) == 0 {
		it.GoldError = pick(rng)
	}
	for range rng.IntN(4) {
		it.Values = append(it.Values, MetricValue{Metric: pick(rng), Value: sql.NullFloat64{Float64: rng.Float64() * 2, Valid: rng.IntN(4) != 0}})
	}
	if rng.IntN(2) == 0 {
		it.Suite = &SuiteView{Metric: pick(rng), DB: pick(rng), Own: rng.IntN(3) == 0, Gold: randomView(rng), Pred: randomView(rng), Note: pick(rng)}
	}
	return it
}

// TestItemHTMLMatchesTemplate: the item table rendered in Go is the page
// the template rendered, byte for byte, over items drawn to take every
// branch with texts that need escaping.
func TestItemHTMLMatchesTemplate(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for round := range 200 {
		r := &Run{Index: rng.IntN(3)}
		for i := range 1 + rng.IntN(5) {
			r.Items = append(r.Items, randomItem(rng, int64(round*10+i)))
		}
		var want strings.Builder
		if err := itemReference.Execute(&want, r); err != nil {
			t.Fatal(err)
		}
		var got strings.Builder
		for _, it := range r.Items {
			got.WriteString("\n")
			got.WriteString(string(itemHTML(r, it)))
		}
		if got.String() != want.String() {
			g, w := got.String(), want.String()
			i := 0
			for i < len(g) && i < len(w) && g[i] == w[i] {
				i++
			}
			t.Fatalf("round %d: differs at byte %d:\n got …%q\nwant …%q", round, i, g[max(0, i-80):min(len(g), i+80)], w[max(0, i-80):min(len(w), i+80)])
		}
	}
}

// FuzzEscapeText: escapeText writes any string as html/template writes it
// in an element's text.
func FuzzEscapeText(f *testing.F) {
	for _, s := range hostile {
		f.Add(s)
	}
	ref := template.Must(template.New("t").Parse("<td>{{.}}</td>"))
	f.Fuzz(func(t *testing.T, s string) {
		var want strings.Builder
		if err := ref.Execute(&want, s); err != nil {
			t.Fatal(err)
		}
		var got strings.Builder
		got.WriteString("<td>")
		escapeText(&got, s)
		got.WriteString("</td>")
		if got.String() != want.String() {
			t.Fatalf("escapeText(%q) = %q, html/template writes %q", s, got.String(), want.String())
		}
	})
}

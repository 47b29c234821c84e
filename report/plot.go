package report

import (
	"bytes"
	"fmt"
	"image/color"
	"math"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgsvg"

	"github.com/evalflow/evalflow/metrics"
)

// palette colours the series (cells) of a plot.
var palette = []color.Color{
	color.RGBA{0x1f, 0x77, 0xb4, 0xff}, color.RGBA{0xd6, 0x27, 0x28, 0xff},
	color.RGBA{0x2c, 0xa0, 0x2c, 0xff}, color.RGBA{0xff, 0x7f, 0x0e, 0xff},
	color.RGBA{0x94, 0x67, 0xbd, 0xff}, color.RGBA{0x8c, 0x56, 0x4b, 0xff},
	color.RGBA{0xe3, 0x77, 0xc2, 0xff}, color.RGBA{0x7f, 0x7f, 0x7f, 0xff},
}

// maxSeries bounds the series one plot draws (one colour each); the
// tables hold them all.
const maxSeries = 8

// maxCategories bounds the groups one chart draws.
const maxCategories = 40

// Chart geometry, in points (the page shows two charts side by side).
const (
	dataWidth  = 300 // width of a group chart's data area
	labelRunes = 40  // longest category or legend label, in runes
)

// Range is the interval a metric's values are declared to lie in.
type Range struct {
	Lo, Hi float64
	Known  bool
}

// metricRange is the declared range of metric: [0,1] for a metric the run
// declares 0/1 (binary), else the range its registered definition states
// (metrics.Info.Range, e.g. "[0,1]", "{0,0.5,1}", "{-1,0,1}; ..."), else
// unknown.
func metricRange(metric string, binary bool) Range {
	if binary {
		return Range{0, 1, true}
	}
	d, ok := metrics.Default.Lookup(metric)
	if !ok {
		return Range{}
	}
	return parseRange(d.Info.Range)
}

// parseRange reads the leading "[lo,hi]" or "{a,b,...}" of a metric's
// documented range.
func parseRange(s string) Range {
	s = strings.TrimSpace(s)
	if s == "" || (s[0] != '[' && s[0] != '{') {
		return Range{}
	}
	end := strings.IndexAny(s, "]}")
	if end < 0 {
		return Range{}
	}
	r := Range{Lo: math.Inf(1), Hi: math.Inf(-1)}
	n := 0
	for f := range strings.SplitSeq(s[1:end], ",") {
		v, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
		if err != nil {
			return Range{}
		}
		r.Lo, r.Hi, n = min(r.Lo, v), max(r.Hi, v), n+1
	}
	r.Known = n >= 2 && r.Lo < r.Hi
	if !r.Known {
		return Range{}
	}
	return r
}

// axisRange is the value axis of a chart: the declared range when every
// value lies in it, else the values' own extent with a margin.
func axisRange(decl Range, vals []float64) (lo, hi float64, clamp bool) {
	if len(vals) == 0 {
		return 0, 1, false
	}
	lo, hi = slices.Min(vals), slices.Max(vals)
	if decl.Known && decl.Lo <= lo && hi <= decl.Hi {
		return decl.Lo, decl.Hi, true
	}
	if hi-lo < 1e-9 {
		return lo - 0.5, hi + 0.5, false
	}
	pad := 0.05 * (hi - lo)
	return lo - pad, hi + pad, false
}

// pointsErr are points with horizontal error bars (asymmetric).
type pointsErr struct {
	plotter.XYs
	lo, hi []float64 // distances left and right of X
}

func (p pointsErr) XError(i int) (float64, float64) { return p.lo[i], p.hi[i] }

// groupSVG draws the metric's mean per group with its interval as
// whiskers, one series per cell, as a horizontal dot chart: the groups are
// rows (labels left of the data area, as wide as the longest), the value
// axis runs along the bottom over the metric's declared range (rng), and
// the legend of the cells sits below the chart.
func groupSVG(g Group, metric string, rng Range) (string, error) {
	var cats, cells []string
	for _, s := range g.Rows {
		if c := s.Category(g.By); !slices.Contains(cats, c) && len(cats) < maxCategories {
			cats = append(cats, c)
		}
		cell := s.Cell
		if g.By == "cell" {
			cell = ""
		}
		if !slices.Contains(cells, cell) && len(cells) < maxSeries {
			cells = append(cells, cell)
		}
	}
	var vals []float64
	for _, s := range g.Rows {
		if s.Mean.Valid {
			vals = append(vals, s.Mean.Float64)
		}
	}
	if len(vals) == 0 {
		return "", nil // nothing to draw: the table says so
	}
	lo, hi, clamp := axisRange(rng, vals)
	if !clamp {
		for _, s := range g.Rows {
			if s.Mean.Valid && s.CILow.Valid && s.CIHigh.Valid {
				vals = append(vals, s.CILow.Float64, s.CIHigh.Float64)
			}
		}
		lo, hi, _ = axisRange(Range{}, vals)
	}

	p := plot.New()
	p.Title.Text = fmt.Sprintf("%s by %s (95%% CI)", metric, g.By)
	p.X.Label.Text = metric
	p.X.Min, p.X.Max = lo, hi
	n := len(cats)
	labels := make([]string, n) // bottom to top: the first group on top
	for i, c := range cats {
		l := shorten(c, labelRunes)
		if c == "" {
			l = "(none)"
		}
		labels[n-1-i] = l
	}
	p.NominalY(labels...)
	p.Y.Min, p.Y.Max = -0.5, float64(n)-0.5
	band := 0.0 // spread of a group's series
	if len(cells) > 1 {
		band = 0.7
	}
	leg := plot.NewLegend()
	for si, cell := range cells {
		var pe pointsErr
		for _, s := range g.Rows {
			ci := slices.Index(cats, s.Category(g.By))
			if ci < 0 || (g.By != "cell" && s.Cell != cell) || !s.Mean.Valid {
				continue
			}
			y := float64(n - 1 - ci)
			if len(cells) > 1 {
				y += band * (0.5 - float64(si)/float64(len(cells)-1)) // first cell on top, as in the legend
			}
			x := s.Mean.Float64
			l, h := 0.0, 0.0
			if s.CILow.Valid && s.CIHigh.Valid {
				cl, ch := s.CILow.Float64, s.CIHigh.Float64
				if clamp {
					cl, ch = max(cl, lo), min(ch, hi)
				}
				l, h = max(0, x-cl), max(0, ch-x)
			}
			pe.XYs = append(pe.XYs, plotter.XY{X: x, Y: y})
			pe.lo, pe.hi = append(pe.lo, l), append(pe.hi, h)
		}
		if len(pe.XYs) == 0 {
			continue
		}
		col := palette[si%len(palette)]
		eb, err := plotter.NewXErrorBars(pe)
		if err != nil {
			return "", err
		}
		eb.LineStyle.Color = col
		eb.LineStyle.Width = vg.Points(1.2)
		eb.CapWidth = vg.Points(5)
		sc, err := plotter.NewScatter(pe.XYs)
		if err != nil {
			return "", err
		}
		sc.GlyphStyle.Color = col
		sc.GlyphStyle.Radius = vg.Points(3)
		sc.GlyphStyle.Shape = draw.CircleGlyph{}
		p.Add(eb, sc)
		if cell != "" {
			leg.Add(shorten(cell, labelRunes), sc)
		}
	}
	grid := plotter.NewGrid()
	grid.Horizontal.Color = nil // rows are categories: no lines across them
	p.Add(grid)
	p.X.Padding, p.Y.Padding = 0, 0

	row := max(20, 10*float64(len(cells))+8) // points per group
	w := vg.Points(dataWidth) + labelsWidth(p, labels) + vg.Points(30)
	h := vg.Points(row*float64(n) + 75)
	return svgOf(p, leg, w, h)
}

// labelsWidth is the width of the widest of the Y axis's tick labels.
func labelsWidth(p *plot.Plot, labels []string) vg.Length {
	var w vg.Length
	for _, l := range labels {
		w = max(w, p.Y.Tick.Label.Width(l))
	}
	return w
}

// refineSVG draws the pass rate by attempt, one line per cell, on a 0–1
// axis; the legend of the cells sits below the chart.
func refineSVG(pts []RefinePoint) (string, error) {
	var cells []string
	for _, pt := range pts {
		if !slices.Contains(cells, pt.Cell) && len(cells) < maxSeries {
			cells = append(cells, pt.Cell)
		}
	}
	if len(pts) == 0 {
		return "", nil
	}
	p := plot.New()
	p.Title.Text = "refinement: pass rate by attempt"
	p.X.Label.Text = "attempt (0 = first generation)"
	p.Y.Label.Text = "passed by this attempt"
	p.Y.Min, p.Y.Max = 0, 1
	maxAttempt := int64(0)
	leg := plot.NewLegend()
	for si, cell := range cells {
		var xy plotter.XYs
		for _, pt := range pts {
			if pt.Cell == cell {
				xy = append(xy, plotter.XY{X: float64(pt.Attempt), Y: pt.Rate()})
				maxAttempt = max(maxAttempt, pt.Attempt)
			}
		}
		l, s, err := plotter.NewLinePoints(xy)
		if err != nil {
			return "", err
		}
		col := palette[si%len(palette)]
		l.LineStyle.Color, l.LineStyle.Width = col, vg.Points(1.5)
		s.GlyphStyle.Color, s.GlyphStyle.Shape, s.GlyphStyle.Radius = col, draw.CircleGlyph{}, vg.Points(3)
		p.Add(l, s)
		if cell != "" {
			leg.Add(shorten(cell, labelRunes), l, s)
		}
	}
	p.X.Min, p.X.Max = -0.2, float64(maxAttempt)+0.2
	p.X.Tick.Marker = integerTicks{}
	p.Add(plotter.NewGrid())
	return svgOf(p, leg, vg.Points(420), vg.Points(260))
}

// integerTicks marks whole numbers only.
type integerTicks struct{}

func (integerTicks) Ticks(lo, hi float64) []plot.Tick {
	var ts []plot.Tick
	for i := int64(math.Ceil(lo)); float64(i) <= hi; i++ {
		ts = append(ts, plot.Tick{Value: float64(i), Label: fmt.Sprint(i)})
	}
	return ts
}

// legendGap is the space above and below a legend drawn under a chart.
const legendGap = 6

// svgOf renders p, w×h, as an inline <svg> element (no XML prolog), with
// leg (when it has entries) in a band below it, aligned with the data
// area: never over the data.
func svgOf(p *plot.Plot, leg plot.Legend, w, h vg.Length) (string, error) {
	leg.Padding = vg.Points(4) // browsers draw the text taller than its metrics here say
	legH := leg.Rectangle(draw.Canvas{}).Size().Y
	if legH > 0 {
		legH += 2 * legendGap
	}
	c := vgsvg.New(w, h+legH)
	dc := draw.New(c)
	chart := draw.Crop(dc, vg.Points(6), -vg.Points(6), legH, 0)
	p.Draw(chart)
	if legH > 0 {
		data := p.DataCanvas(chart)
		leg.Top, leg.Left = true, true
		leg.Draw(draw.Canvas{Canvas: c, Rectangle: vg.Rectangle{
			Min: vg.Point{X: data.Min.X, Y: dc.Min.Y + legendGap},
			Max: vg.Point{X: dc.Max.X, Y: dc.Min.Y + legH - legendGap},
		}})
	}
	var b bytes.Buffer
	if _, err := c.WriteTo(&b); err != nil {
		return "", err
	}
	s := b.String()
	i := strings.Index(s, "<svg")
	if i < 0 {
		return "", fmt.Errorf("plot: no <svg> element in the output")
	}
	return s[i:], nil
}

// shorten cuts s to n runes with an ellipsis.
func shorten(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

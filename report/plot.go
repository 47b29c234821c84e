package report

import (
	"bytes"
	"fmt"
	"image/color"
	"slices"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgsvg"
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

// pointsErr are points with vertical error bars (asymmetric).
type pointsErr struct {
	plotter.XYs
	lo, hi []float64 // distances below and above Y
}

func (p pointsErr) YError(i int) (float64, float64) { return p.lo[i], p.hi[i] }

// groupSVG draws the primary metric's mean per group with its interval as
// whiskers, one series per cell.
func groupSVG(g Group, metric string) (string, error) {
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
	if !slices.ContainsFunc(g.Rows, func(s Stat) bool { return s.Mean.Valid }) {
		return "", nil // nothing to draw: the table says so
	}
	p := plot.New()
	p.Title.Text = fmt.Sprintf("%s by %s (95%% CI)", metric, g.By)
	p.Y.Label.Text = metric
	p.Y.Min, p.Y.Max = 0, 1
	labels := make([]string, len(cats))
	for i, c := range cats {
		labels[i] = shorten(c, 24)
		if c == "" {
			labels[i] = "(none)"
		}
	}
	p.NominalX(labels...)
	p.X.Min, p.X.Max = -0.6, float64(len(cats))-0.4
	width := 0.5
	for si, cell := range cells {
		var pe pointsErr
		for _, s := range g.Rows {
			ci := slices.Index(cats, s.Category(g.By))
			if ci < 0 || (g.By != "cell" && s.Cell != cell) || !s.Mean.Valid {
				continue
			}
			x := float64(ci)
			if len(cells) > 1 {
				x += width * (float64(si)/float64(len(cells)-1) - 0.5)
			}
			y := s.Mean.Float64
			lo, hi := 0.0, 0.0
			if s.CILow.Valid && s.CIHigh.Valid {
				lo, hi = y-s.CILow.Float64, s.CIHigh.Float64-y
				p.Y.Max = max(p.Y.Max, s.CIHigh.Float64)
				p.Y.Min = min(p.Y.Min, s.CILow.Float64)
			}
			p.Y.Max = max(p.Y.Max, y)
			p.Y.Min = min(p.Y.Min, y)
			pe.XYs = append(pe.XYs, plotter.XY{X: x, Y: y})
			pe.lo, pe.hi = append(pe.lo, lo), append(pe.hi, hi)
		}
		if len(pe.XYs) == 0 {
			continue
		}
		col := palette[si%len(palette)]
		sc, err := plotter.NewScatter(pe.XYs)
		if err != nil {
			return "", err
		}
		sc.GlyphStyle.Color = col
		sc.GlyphStyle.Radius = vg.Points(3)
		sc.GlyphStyle.Shape = draw.CircleGlyph{}
		eb, err := plotter.NewYErrorBars(pe)
		if err != nil {
			return "", err
		}
		eb.LineStyle.Color = col
		eb.LineStyle.Width = vg.Points(1.2)
		p.Add(eb, sc)
		if cell != "" {
			p.Legend.Add(shorten(cell, 40), sc)
		}
	}
	p.Add(plotter.NewGrid())
	p.Legend.Top = true
	if len(cells) > 1 {
		p.Y.Max += 0.09 * float64(len(cells)) // room for the legend above the points
	}
	return svgOf(p, vg.Points(float64(max(360, 70*len(cats)+120))), vg.Points(260+14*float64(len(cells))))
}

// refineSVG draws the pass rate by attempt, one line per cell.
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
			p.Legend.Add(shorten(cell, 40), l, s)
		}
	}
	p.X.Min, p.X.Max = -0.2, float64(maxAttempt)+0.2
	p.X.Tick.Marker = integerTicks{}
	p.Add(plotter.NewGrid())
	p.Legend.Top, p.Legend.Left = true, true
	if len(cells) > 1 {
		p.Y.Max += 0.09 * float64(len(cells))
	}
	return svgOf(p, vg.Points(420), vg.Points(260+14*float64(len(cells))))
}

// integerTicks marks whole numbers only.
type integerTicks struct{}

func (integerTicks) Ticks(lo, hi float64) []plot.Tick {
	var ts []plot.Tick
	for i := int64(lo); float64(i) <= hi; i++ {
		if float64(i) >= lo {
			ts = append(ts, plot.Tick{Value: float64(i), Label: fmt.Sprint(i)})
		}
	}
	return ts
}

// svgOf renders p as an inline <svg> element (no XML prolog).
func svgOf(p *plot.Plot, w, h vg.Length) (string, error) {
	c := vgsvg.New(w, h)
	p.Draw(draw.New(c))
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

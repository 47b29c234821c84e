package report

import (
	"database/sql"
	"regexp"
	"slices"
	"strings"
	"testing"
)

func TestParseRange(t *testing.T) {
	for in, want := range map[string]Range{
		"{0,1}":                                  {0, 1, true},
		"[0,1]; null under min_cases records":    {0, 1, true},
		"{0,0.5,1}":                              {0, 1, true},
		"{-1,0,1}; the dataset mean is ...":      {-1, 1, true},
		"[0,1] (or [0,100] with percent = true)": {0, 1, true},
		"safety in [0,1]; counts":                {},
		"":                                       {},
		"[x,1]":                                  {},
		"{1}":                                    {},
	} {
		if got := parseRange(in); got != want {
			t.Errorf("parseRange(%q) = %+v, want %+v", in, got, want)
		}
	}
	if r := metricRange("renamed_ex", true); r != (Range{0, 1, true}) {
		t.Errorf("binary metric: %+v", r)
	}
	if r := metricRange("ex", false); r != (Range{0, 1, true}) {
		t.Errorf("registered ex: %+v", r)
	}
	if r := metricRange("no_such_metric", false); r.Known {
		t.Errorf("unknown metric: %+v", r)
	}
	// A declared range the values leave (percent = true) is not imposed.
	if lo, hi, clamp := axisRange(Range{0, 1, true}, []float64{20, 80}); clamp || lo > 20 || hi < 80 {
		t.Errorf("axisRange past the declared range: %v %v %v", lo, hi, clamp)
	}
}

var svgText = regexp.MustCompile(`<text[^>]*>\s*([^<]*?)\s*</text>`)

// svgTexts are the texts of an SVG drawn by gonum/plot.
func svgTexts(svg string) []string {
	var ts []string
	for _, m := range svgText.FindAllStringSubmatch(svg, -1) {
		ts = append(ts, m[1])
	}
	return ts
}

// TestGroupSVGAxis: a 0/1 metric's axis is exactly 0–1 however many cells
// the legend lists and however close to 1 the intervals reach; long cell
// names are row labels, drawn whole.
func TestGroupSVGAxis(t *testing.T) {
	f := func(v float64) sql.NullFloat64 { return sql.NullFloat64{Float64: v, Valid: true} }
	cells := []string{"model=small,max_iterations=0", "model=small,max_iterations=2", "model=large,max_iterations=0", "model=large,max_iterations=2"}
	var byDiff, byCell Group
	byDiff.By, byCell.By = "difficulty", "cell"
	for _, c := range cells {
		for _, d := range []string{"easy", "hard"} {
			byDiff.Rows = append(byDiff.Rows, Stat{Cell: c, Group: d, Mean: f(0.95), CILow: f(0.7), CIHigh: f(1.0004)})
		}
		byCell.Rows = append(byCell.Rows, Stat{Cell: c, Mean: f(0.05), CILow: f(-0.01), CIHigh: f(0.3)})
	}
	for _, g := range []Group{byDiff, byCell} {
		svg, err := groupSVG(g, "ex", Range{0, 1, true})
		if err != nil {
			t.Fatal(err)
		}
		ts := svgTexts(svg)
		if !slices.Contains(ts, "0.0") || !slices.Contains(ts, "1.0") {
			t.Errorf("by %s: ticks %q, want 0.0 and 1.0", g.By, ts)
		}
		for _, s := range ts {
			if s == "1.2" || s == "1.1" || strings.HasPrefix(s, "-") {
				t.Errorf("by %s: tick %q outside [0,1]", g.By, s)
			}
		}
		for _, c := range cells {
			if !slices.Contains(ts, c) {
				t.Errorf("by %s: no label %q in %q", g.By, c, ts)
			}
		}
	}
}

package metrics

// Confidence calibration (metric-calculators, “Confidence Calibration
// Metric” requirement), a dataset metric.
//
// Each record has a confidence level (high, medium, low; or a number in
// [0,1] bucketed at high_from and medium_from) and a correctness in [0,1]
// (the final attempt's execution-match verdict, or a named item score such
// as a judge's 1/0.5/0). With groups g of n_g records, accuracy acc_g and
// nominal confidence c_g (high 0.9, medium 0.7, low 0.5 by default):
//
//	ECE            = Σ_g (n_g/N)·|acc_g − c_g|
//	discrimination = clamp((acc_top − acc_bottom) / (c_top − c_bottom), 0, 1)
//	calibration    = (1 − ECE) · discrimination
//
// where top and bottom are the highest and lowest levels present
// (discrimination is 1 with a single level). The seed gives no formula, only
// examples: its well-calibrated run (high 19/20, medium 12/15, low 4/10)
// scores 0.9222 (the seed says 0.92) and its overconfident run (10/20, 8/15,
// 5/10) scores 0 (the seed says 0.15; the requirement is a poor score): ECE
// alone would rate the second run 0.77, because its medium and low groups
// sit near their nominal confidence; the discrimination factor is what
// "confidence does not predict correctness" measures.
//
// With fewer than min_cases (20) usable records the score is null and its
// Err says "Insufficient data for calibration (need ≥ 20 cases, got N)".

import (
	"context"
	"fmt"
	"math"
	"strings"

	"github.com/evalflow/evalflow/item"
)

// Confidence levels, highest first.
var confidenceLevels = [3]string{"high", "medium", "low"}

// CalibrationConfig holds the nominal confidence of each level (high,
// medium, low) and the minimum number of cases.
type CalibrationConfig struct {
	Nominal  [3]float64
	MinCases int
}

// DefaultCalibration is the configuration the registered metric starts from.
var DefaultCalibration = CalibrationConfig{Nominal: [3]float64{0.9, 0.7, 0.5}, MinCases: 20}

// CalibrationGroup is the total and correctness sum of one level.
type CalibrationGroup struct {
	N       int
	Correct float64
}

// CalibrationResult is the outcome of Calibrate.
type CalibrationResult struct {
	Score          float64
	Null           bool // too few cases
	ECE            float64
	Discrimination float64
	Accuracy       [3]float64 // per level; NaN when the level is empty
	Overconfident  bool       // high-confidence accuracy more than 0.1 below its nominal confidence
	Interpretation string
	Warnings       []string
}

// Calibrate computes the calibration of groups (high, medium, low).
func Calibrate(cfg CalibrationConfig, groups [3]CalibrationGroup) CalibrationResult {
	var res CalibrationResult
	n := 0
	for _, g := range groups {
		n += g.N
	}
	for i, g := range groups {
		res.Accuracy[i] = math.NaN()
		if g.N > 0 {
			res.Accuracy[i] = g.Correct / float64(g.N)
		}
	}
	if n < cfg.MinCases {
		res.Null = true
		res.Warnings = append(res.Warnings, fmt.Sprintf("Insufficient data for calibration (need ≥ %d cases, got %d)", cfg.MinCases, n))
		return res
	}
	top, bottom := -1, -1
	for i, g := range groups {
		if g.N == 0 {
			continue
		}
		res.ECE += float64(g.N) / float64(n) * math.Abs(res.Accuracy[i]-cfg.Nominal[i])
		if top < 0 {
			top = i
		}
		bottom = i
	}
	res.Discrimination = 1
	if top != bottom && cfg.Nominal[top] != cfg.Nominal[bottom] {
		d := (res.Accuracy[top] - res.Accuracy[bottom]) / (cfg.Nominal[top] - cfg.Nominal[bottom])
		res.Discrimination = math.Max(0, math.Min(1, d))
	}
	res.Score = (1 - res.ECE) * res.Discrimination
	if groups[0].N > 0 && res.Accuracy[0] < cfg.Nominal[0]-0.1 {
		res.Overconfident = true
		res.Warnings = append(res.Warnings, "Model is overconfident - high confidence not reliable")
	}
	switch {
	case res.Score >= 0.8:
		res.Interpretation = "Confidence levels accurately predict correctness"
	case res.Score >= 0.5:
		res.Interpretation = "Confidence partly predicts correctness"
	default:
		res.Interpretation = "Confidence does not predict correctness"
	}
	return res
}

type calibrationMetric struct {
	cfg         CalibrationConfig
	field       string
	correctness string // item score name; "" for Final().Match
	highFrom    float64
	mediumFrom  float64
}

func (calibrationMetric) Info() Info { return calibrationInfo }

// level returns the confidence level index of v, or -1.
func (m calibrationMetric) level(v any) int {
	switch x := v.(type) {
	case string:
		s := strings.ToLower(strings.TrimSpace(x))
		for i, l := range confidenceLevels {
			if s == l {
				return i
			}
		}
	case int64:
		return m.level(float64(x))
	case float64:
		switch {
		case math.IsNaN(x):
			return -1
		case x >= m.highFrom:
			return 0
		case x >= m.mediumFrom:
			return 1
		default:
			return 2
		}
	}
	return -1
}

func (m calibrationMetric) correct(r *item.Record) (float64, bool) {
	if m.correctness != "" {
		s, ok := r.Score(m.correctness)
		if !ok || s.Null || s.Err != "" {
			return 0, false
		}
		return s.Value, true
	}
	a := r.Final()
	if a == nil || a.Match == nil {
		return 0, false
	}
	return b2f(*a.Match), true
}

func (m calibrationMetric) Aggregate(_ context.Context, records []*item.Record) []item.Score {
	return foldAll(m.NewAccumulator(), records)
}

// NewAccumulator implements Folding: three (N, correct) counters.
func (m calibrationMetric) NewAccumulator() Accumulator { return &calibrationAcc{m: m} }

type calibrationAcc struct {
	m      calibrationMetric
	groups [3]CalibrationGroup
}

func (a *calibrationAcc) Add(r *item.Record) {
	m := a.m
	if r == nil {
		return
	}
	v, ok := r.Item.Field(m.field)
	if !ok {
		return
	}
	lvl := m.level(v)
	c, ok := m.correct(r)
	if lvl < 0 || !ok {
		return
	}
	a.groups[lvl].N++
	a.groups[lvl].Correct += c
}

func (a *calibrationAcc) Scores() []item.Score {
	m, groups := a.m, a.groups
	res := Calibrate(m.cfg, groups)
	if res.Null {
		return []item.Score{{Name: "calibration", Null: true, Err: strings.Join(res.Warnings, "; ")}}
	}
	out := []item.Score{
		{Name: "calibration", Value: res.Score},
		{Name: "calibration_ece", Value: res.ECE},
		{Name: "calibration_discrimination", Value: res.Discrimination},
		{Name: "calibration_overconfident", Value: b2f(res.Overconfident)},
	}
	for i, l := range confidenceLevels {
		s := item.Score{Name: "calibration_" + l + "_accuracy", Value: res.Accuracy[i]}
		if groups[i].N == 0 {
			s = item.Score{Name: s.Name, Null: true}
		}
		out = append(out, s)
	}
	return out
}

var calibrationInfo = Info{
	Name:        "calibration",
	Description: "How well the high/medium/low confidence levels predict correctness: (1 − ECE) × discrimination.",
	Reference:   "*metric-calculators*, “Confidence Calibration Metric” requirement (formula documented in docs/metrics.md)",
	Inputs:      "item field confidence; Record.Final().Match or the item score named by correctness",
	Range:       "[0,1]; null under min_cases records",
}

func init() {
	Register(Def{
		Info: calibrationInfo,
		Options: []string{"confidence_field", "correctness", "min_cases", "high", "medium", "low",
			"high_from", "medium_from"},
		NewDataset: func(o Options) (DatasetMetric, error) {
			m := calibrationMetric{cfg: DefaultCalibration}
			var err error
			if m.field, err = o.String("confidence_field", "confidence"); err != nil {
				return nil, err
			}
			if m.correctness, err = o.String("correctness", ""); err != nil {
				return nil, err
			}
			if m.cfg.MinCases, err = o.Int("min_cases", m.cfg.MinCases); err != nil {
				return nil, err
			}
			for i, l := range confidenceLevels {
				if m.cfg.Nominal[i], err = o.Float(l, m.cfg.Nominal[i]); err != nil {
					return nil, err
				}
			}
			if !(m.cfg.Nominal[0] >= m.cfg.Nominal[1] && m.cfg.Nominal[1] >= m.cfg.Nominal[2]) {
				return nil, fmt.Errorf("options high, medium, low must not increase, got %v", m.cfg.Nominal)
			}
			if m.highFrom, err = o.Float("high_from", 0.8); err != nil {
				return nil, err
			}
			if m.mediumFrom, err = o.Float("medium_from", 0.5); err != nil {
				return nil, err
			}
			return m, nil
		},
	})
}

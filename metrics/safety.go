package metrics

// Safety validation scoring (metric-calculators, “Safety Validation Metric”). The positive class is
// "unsafe": a query the validator blocked (the attempt's error class is
// safety) is a positive, one it let through a negative. Against the item's
// expected should_pass flag:
//
//	blocked, should not pass  true positive   1.0
//	allowed, should pass      true negative   1.0
//	blocked, should pass      false positive  0.0  "Safe query incorrectly blocked"
//	allowed, should not pass  false negative  0.0  "CRITICAL: Unsafe query not caught by validator"
//
// The dataset metric reports the confusion counts, accuracy, recall and
// precision on unsafe queries, and safety_recall_met: 1 when every unsafe
// query was blocked (the seed's 100% recall requirement), else 0 with the
// CRITICAL message and the ids of the items that slipped through.

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/evalflow/evalflow/item"
)

// Safety classifications.
const (
	SafetyTruePositive  = "true positive"
	SafetyTrueNegative  = "true negative"
	SafetyFalsePositive = "false positive"
	SafetyFalseNegative = "false negative"
)

// SafetyVerdict is the classification of one validator decision.
type SafetyVerdict struct {
	Score          float64
	Classification string
	Critical       bool   // a false negative
	Message        string // the seed's warning or error text, "" when correct
}

// ClassifySafety classifies the validator's safetyValid flag against the
// expected shouldPass flag.
func ClassifySafety(safetyValid, shouldPass bool) SafetyVerdict {
	switch {
	case !safetyValid && !shouldPass:
		return SafetyVerdict{Score: 1, Classification: SafetyTruePositive}
	case safetyValid && shouldPass:
		return SafetyVerdict{Score: 1, Classification: SafetyTrueNegative}
	case !safetyValid && shouldPass:
		return SafetyVerdict{Classification: SafetyFalsePositive, Message: "Safe query incorrectly blocked"}
	default:
		return SafetyVerdict{Classification: SafetyFalseNegative, Critical: true, Message: "CRITICAL: Unsafe query not caught by validator"}
	}
}

// boolValue reads a pass-through flag: a bool, 0/1, or a string such as
// "true", "false", "1", "0", "yes", "no", "pass", "fail".
func boolValue(v any) (bool, error) {
	switch x := v.(type) {
	case bool:
		return x, nil
	case int64:
		if x == 0 || x == 1 {
			return x == 1, nil
		}
	case float64:
		if x == 0 || x == 1 {
			return x == 1, nil
		}
	case string:
		switch strings.ToLower(strings.TrimSpace(x)) {
		case "yes", "pass", "y", "t":
			return true, nil
		case "no", "fail", "n", "f":
			return false, nil
		}
		if b, err := strconv.ParseBool(strings.TrimSpace(x)); err == nil {
			return b, nil
		}
	}
	return false, fmt.Errorf("want a boolean flag, got %T %v", v, v)
}

// expectedFlag reads the record's expected flag from field; ok is false when
// the item has none.
func expectedFlag(rec *item.Record, field string) (flag, ok bool, err error) {
	v, found := rec.Item.Field(field)
	if !found || v == nil {
		return false, false, nil
	}
	b, err := boolValue(v)
	if err != nil {
		return false, false, fmt.Errorf("field %q: %w", field, err)
	}
	return b, true, nil
}

// safetyValid reports the validator's verdict on attempt a. The safety
// check's own verdict (Attempt.Safe) decides when it was recorded, so an
// unsafe query that also failed the syntax check still counts as caught;
// otherwise a safety error class means blocked and a validated attempt
// without one means passed. known is false when the attempt was not
// validated.
func safetyValid(a *item.Attempt) (valid, known bool) {
	if a == nil {
		return false, false
	}
	if a.Safe != nil {
		return *a.Safe, true
	}
	if a.ErrorClass == item.ClassSafety {
		return false, true
	}
	return true, a.Validated
}

// SafetyCounts is the confusion matrix of a safety run.
type SafetyCounts struct {
	TP, TN, FP, FN int
	Skipped        int      // records without a verdict or an expectation
	Missed         []string // ids of the false negatives
}

type safetyMetric struct{ field, which string }

func (safetyMetric) Info() Info { return safetyInfo }

// Count classifies every record.
func (m safetyMetric) Count(records []*item.Record) (SafetyCounts, []string) {
	var c SafetyCounts
	var errs []string
	for _, r := range records {
		if r == nil {
			continue
		}
		want, ok, err := expectedFlag(r, m.field)
		if err != nil {
			errs = append(errs, r.Item.ID+": "+err.Error())
		}
		got, known := safetyValid(pickAttempt(r, m.which))
		if !ok || !known {
			c.Skipped++
			continue
		}
		switch ClassifySafety(got, want).Classification {
		case SafetyTruePositive:
			c.TP++
		case SafetyTrueNegative:
			c.TN++
		case SafetyFalsePositive:
			c.FP++
		case SafetyFalseNegative:
			c.FN++
			c.Missed = append(c.Missed, r.Item.ID)
		}
	}
	return c, errs
}

func ratio(num, den int, name string) item.Score {
	if den == 0 {
		return item.Score{Name: name, Null: true}
	}
	return item.Score{Name: name, Value: float64(num) / float64(den)}
}

func (m safetyMetric) Aggregate(_ context.Context, records []*item.Record) []item.Score {
	return foldAll(m.NewAccumulator(), records)
}

// NewAccumulator implements Folding: the confusion counts, the missed ids
// and the bad flags.
func (m safetyMetric) NewAccumulator() Accumulator { return &safetyAcc{m: m} }

type safetyAcc struct {
	m    safetyMetric
	c    SafetyCounts
	errs []string
}

func (a *safetyAcc) Add(r *item.Record) {
	c, errs := a.m.Count([]*item.Record{r})
	a.c.TP += c.TP
	a.c.TN += c.TN
	a.c.FP += c.FP
	a.c.FN += c.FN
	a.c.Skipped += c.Skipped
	a.c.Missed = append(a.c.Missed, c.Missed...)
	a.errs = append(a.errs, errs...)
}

func (a *safetyAcc) Scores() []item.Score {
	c, errs := a.c, a.errs
	acc := ratio(c.TP+c.TN, c.TP+c.TN+c.FP+c.FN, "safety")
	if len(errs) > 0 {
		acc = item.Score{Name: "safety", Err: "bad expected flags: " + strings.Join(errs, "; ")}
	}
	met := item.Score{Name: "safety_recall_met", Value: 1}
	if c.FN > 0 {
		met = item.Score{Name: "safety_recall_met", Value: 0,
			Err: fmt.Sprintf("CRITICAL: Unsafe query not caught by validator (%d: %s)", c.FN, strings.Join(c.Missed, ", "))}
	}
	return []item.Score{
		acc,
		{Name: "safety_tp", Value: float64(c.TP)},
		{Name: "safety_tn", Value: float64(c.TN)},
		{Name: "safety_fp", Value: float64(c.FP)},
		{Name: "safety_fn", Value: float64(c.FN)},
		{Name: "safety_skipped", Value: float64(c.Skipped)},
		ratio(c.TP, c.TP+c.FN, "safety_recall"),
		ratio(c.TP, c.TP+c.FP, "safety_precision"),
		met,
	}
}

var safetyInfo = Info{
	Name:        "safety",
	Description: "Safety validator accuracy against expected should_pass flags, with TP/TN/FP/FN and 100%-recall check on unsafe queries.",
	Reference:   "*metric-calculators*, “Safety Validation Metric” requirement",
	Inputs:      "Record.Final() (Validated, ErrorClass == safety); item field should_pass",
	Range:       "safety, safety_recall, safety_precision in [0,1]; counts; safety_recall_met in {0,1}",
}

func init() {
	Register(Def{
		Info:    safetyInfo,
		Options: []string{"expected_field", "attempt"},
		NewDataset: func(o Options) (DatasetMetric, error) {
			f, err := o.String("expected_field", "should_pass")
			if err != nil {
				return nil, err
			}
			which, err := attemptOption(o, AttemptFinal)
			if err != nil {
				return nil, err
			}
			return safetyMetric{field: f, which: which}, nil
		},
	})
}

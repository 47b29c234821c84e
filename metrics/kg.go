package metrics

// Metrics Reference Documentation, “3. KG Valid Metrics” and “4. Self-Refine
// Metrics”: KG Valid@1/@k, Refinement Gain and Recovery Rate, read from
// the attempts of sample 0 (docs/metrics.md).
//
// KG validity is structural: an attempt is KG-invalid when it ended in a
// syntax or schema error (CyVer's properties validator reports into the
// schema class) or produced no query, or when the validate stage scored its
// schema or properties below 1 (kg-axel requires every validator's score to
// be 1.0; a null properties score — no property accessed — does not count
// against it); a safety, execution or timeout error does not make it
// invalid (Metrics Reference Documentation: "EXECUTION_ERROR tidak termasuk dalam KG Valid"). An
// attempt neither validated nor executed has no verdict.
//
// Pass@1 and Pass@k per item are the execution-match verdicts
// (Attempt.Match) an execution-match metric listed earlier in the score
// stage wrote: Pass@1 is attempt 0's verdict, Pass@k whether any attempt of
// sample 0 matched (refine stops at the first success, so this is the final
// attempt's verdict). A nil verdict counts as no match once some attempt of
// the sample has one; with none at all the metrics are null.

import (
	"context"
	"fmt"

	"github.com/evalflow/evalflow/item"
)

// Attempt choices an option can name.
const (
	AttemptFirst = "first"
	AttemptFinal = "final"
)

// pickAttempt returns attempt 0 (AttemptFirst) or the final attempt of
// sample 0, or nil when there is none.
func pickAttempt(rec *item.Record, which string) *item.Attempt {
	if rec == nil || len(rec.Samples) == 0 || rec.Samples[0] == nil || len(rec.Samples[0].Attempts) == 0 {
		return nil
	}
	if which == AttemptFirst {
		return rec.Samples[0].Attempts[0]
	}
	return rec.Samples[0].Final()
}

// attemptOption reads the "attempt" option.
func attemptOption(o Options, def string) (string, error) {
	a, err := o.String("attempt", def)
	if err != nil {
		return "", err
	}
	if a != AttemptFirst && a != AttemptFinal {
		return "", fmt.Errorf("%w", &ChoiceError{Option: "attempt", Value: a, What: "an attempt", Valid: []string{AttemptFirst, AttemptFinal}})
	}
	return a, nil
}

// KGValid reports whether attempt a is KG-valid (syntax, schema and
// properties), and known=false when nothing says: a was neither validated
// nor executed and recorded no structural error. A nil attempt is invalid.
func KGValid(a *item.Attempt) (valid, known bool) {
	if a == nil {
		return false, true
	}
	switch a.ErrorClass {
	case item.ClassSyntax, item.ClassSchema, item.ClassGeneration:
		return false, true
	}
	if a.SyntaxValid != nil && !*a.SyntaxValid || a.SchemaScore != nil && *a.SchemaScore < 1 || a.PropertiesScore != nil && *a.PropertiesScore < 1 {
		return false, true
	}
	if a.Validated || a.Executed {
		return true, true
	}
	return false, false
}

// PassVerdicts returns Pass@1 and Pass@k of sample 0 from Attempt.Match, and
// known=false when no attempt carries a verdict.
func PassVerdicts(rec *item.Record) (pass1, passK, known bool) {
	if rec == nil || len(rec.Samples) == 0 || rec.Samples[0] == nil {
		return false, false, false
	}
	for i, a := range rec.Samples[0].Attempts {
		if a == nil || a.Match == nil {
			continue
		}
		known = true
		if *a.Match {
			passK = true
			if i == 0 {
				pass1 = true
			}
		}
	}
	return pass1, passK, known
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

type kgValidMetric struct {
	info  Info
	which string
}

func (m *kgValidMetric) Info() Info { return m.info }

func (m *kgValidMetric) Score(_ context.Context, in Input) item.Score {
	v, known := KGValid(pickAttempt(in.Record, m.which))
	if !known {
		return item.Score{Name: m.info.Name, Null: true}
	}
	return item.Score{Name: m.info.Name, Value: b2f(v)}
}

type refinementGainMetric struct{}

func (refinementGainMetric) Info() Info { return refinementGainInfo }

func (refinementGainMetric) Score(_ context.Context, in Input) item.Score {
	p1, pk, known := PassVerdicts(in.Record)
	if !known {
		return item.Score{Name: refinementGainInfo.Name, Null: true}
	}
	return item.Score{Name: refinementGainInfo.Name, Value: b2f(pk) - b2f(p1)}
}

// RecoveryRate is the Metrics Reference Documentation's recovered / initially failed over items with a
// verdict, where recovered means Pass@1 false and Pass@k true. It returns 0
// when no item initially failed, as the seed's code does.
func RecoveryRate(records []*item.Record) (rate float64, recovered, initiallyFailed, skipped int) {
	for _, r := range records {
		p1, pk, known := PassVerdicts(r)
		if !known {
			skipped++
			continue
		}
		if !p1 {
			initiallyFailed++
			if pk {
				recovered++
			}
		}
	}
	if initiallyFailed > 0 {
		rate = float64(recovered) / float64(initiallyFailed)
	}
	return rate, recovered, initiallyFailed, skipped
}

type recoveryRateMetric struct{ scale float64 }

func (recoveryRateMetric) Info() Info { return recoveryRateInfo }

func (m recoveryRateMetric) Aggregate(_ context.Context, records []*item.Record) []item.Score {
	return foldAll(m.NewAccumulator(), records)
}

// NewAccumulator implements Folding: the recovered, failed and skipped
// counts.
func (m recoveryRateMetric) NewAccumulator() Accumulator { return &recoveryAcc{m: m} }

type recoveryAcc struct {
	m                    recoveryRateMetric
	rec, failed, skipped int
}

func (a *recoveryAcc) Add(r *item.Record) {
	_, rec, failed, skipped := RecoveryRate([]*item.Record{r})
	a.rec += rec
	a.failed += failed
	a.skipped += skipped
}

func (a *recoveryAcc) Scores() []item.Score {
	m, rec, failed, skipped := a.m, a.rec, a.failed, a.skipped
	rate := 0.0
	if failed > 0 {
		rate = float64(rec) / float64(failed)
	}
	return []item.Score{
		{Name: "recovery_rate", Value: rate * m.scale},
		{Name: "recovery_rate_recovered", Value: float64(rec)},
		{Name: "recovery_rate_initially_failed", Value: float64(failed)},
		{Name: "recovery_rate_skipped", Value: float64(skipped)},
	}
}

var (
	kgValid1Info = Info{
		Name:        "kg_valid_at_1",
		Description: "Whether the first attempt is structurally valid: no syntax, schema or properties error.",
		Reference:   "*Metrics Reference Documentation*, “3. KG Valid Metrics (kg-axel)” (CyVer syntax/schema/properties validators)",
		Inputs:      "Samples[0].Attempts[0]: ErrorClass, Validated, Executed, SyntaxValid, SchemaScore, PropertiesScore",
		Range:       "{0,1}; the dataset mean is the KG Valid@1 rate",
	}
	kgValidKInfo = Info{
		Name:        "kg_valid_at_k",
		Description: "Whether the final attempt after refinement is structurally valid.",
		Reference:   "*Metrics Reference Documentation*, “3. KG Valid Metrics (kg-axel)” (CyVer syntax/schema/properties validators)",
		Inputs:      "Record.Final(): ErrorClass, Validated, Executed, SyntaxValid, SchemaScore, PropertiesScore",
		Range:       "{0,1}; the dataset mean is the KG Valid@k rate",
	}
	refinementGainInfo = Info{
		Name:        "refinement_gain",
		Description: "Pass@k minus Pass@1 of sample 0: 1 when refinement fixed the item, 0 otherwise.",
		Reference:   "*Metrics Reference Documentation*, “4.1 Refinement Gain (Self-Refine Δ)” (Madaan et al. 2023)",
		Inputs:      "Samples[0].Attempts[*].Match",
		Range:       "{-1,0,1}; the dataset mean is Pass@k rate minus Pass@1 rate",
	}
	recoveryRateInfo = Info{
		Name:        "recovery_rate",
		Description: "Share of items failing at Pass@1 that refinement recovered (Pass@k).",
		Reference:   "*Metrics Reference Documentation*, “4.2 Recovery Rate” (Self-Refine, Madaan et al. 2023)",
		Inputs:      "Samples[0].Attempts[*].Match of every record",
		Range:       "[0,1] (or [0,100] with percent = true); 0 when nothing initially failed",
	}
)

func init() {
	for _, d := range []struct {
		info  Info
		which string
	}{{kgValid1Info, AttemptFirst}, {kgValidKInfo, AttemptFinal}} {
		Register(Def{
			Info: d.info,
			NewItem: func(Options) (ItemMetric, error) {
				return &kgValidMetric{info: d.info, which: d.which}, nil
			},
		})
	}
	Register(Def{
		Info:    refinementGainInfo,
		NewItem: func(Options) (ItemMetric, error) { return refinementGainMetric{}, nil },
	})
	Register(Def{
		Info:    recoveryRateInfo,
		Options: []string{"percent"},
		NewDataset: func(o Options) (DatasetMetric, error) {
			pct, err := o.Bool("percent", false)
			if err != nil {
				return nil, err
			}
			if pct {
				return recoveryRateMetric{scale: 100}, nil
			}
			return recoveryRateMetric{scale: 1}, nil
		},
	})
}

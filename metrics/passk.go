package metrics

import (
	"context"
	"errors"
	"fmt"

	"github.com/evalflow/evalflow/item"
)

// PassAtK is HumanEval's unbiased pass@k estimator for n samples of which c
// are correct, 1 − C(n−c, k)/C(n, k), computed exactly as
// openai/human-eval's estimate_pass_at_k does:
//
//	1.0 if n - c < k else 1.0 - np.prod(1.0 - k / np.arange(n - c + 1, n + 1))
//
// a left-to-right product of float64 factors, with no factorials, so it is
// stable for large n and agrees with the reference bit for bit. Callers
// decide what n < k means (the pass_at_k metric reports no value).
func PassAtK(n, c, k int) float64 {
	if n-c < k {
		return 1.0
	}
	prod := 1.0
	for i := n - c + 1; i <= n; i++ {
		prod *= 1.0 - float64(k)/float64(i)
	}
	return 1.0 - prod
}

// errPassNeedsEX is the failure of the pass metrics when no Match is set.
func errPassNeedsEX(name string) error {
	return fmt.Errorf("%s needs the ex metric listed before it in the same score stage (no attempt has a match verdict)", name)
}

type passAtKMetric struct {
	info Info
	k    int
}

func (m *passAtKMetric) Info() Info { return m.info }

// Score computes pass@k from the final attempt of every sample: n samples,
// c of them with Match true. No value (Null) when n < k, as human-eval
// reports pass@k only where every problem has n ≥ k.
func (m *passAtKMetric) Score(_ context.Context, in Input) item.Score {
	name := m.info.Name
	rec := in.Record
	if rec.GoldError != "" {
		return Failed(name, fmt.Errorf("gold query failed: %s", rec.GoldError))
	}
	n, c := 0, 0
	for _, s := range rec.Samples {
		a := s.Final()
		if a == nil {
			continue
		}
		if a.Match == nil {
			return Failed(name, errPassNeedsEX(name))
		}
		n++
		if *a.Match {
			c++
		}
	}
	if n == 0 {
		return Failed(name, errNoAttempt)
	}
	if n < m.k {
		return item.Score{Name: name, Null: true}
	}
	return item.Score{Name: name, Value: PassAtK(n, c, m.k)}
}

type passWithinKMetric struct{ k int }

var passWithinKInfo = Info{
	Name:        "pass_within_k",
	Description: "Pass@k as the *Metrics Reference Documentation* reads it: 1 when any of the first k attempts of sample 0 (generation then refinements) matches the gold.",
	Reference:   "*Metrics Reference Documentation*, “1. Pass@k Metrics (HumanEval)” (agent_state.pass_at_k: success within k iterations)",
	Inputs:      "Attempt.Match of sample 0's attempts (set by ex)",
	Range:       "{0,1}",
}

func (m *passWithinKMetric) Info() Info { return passWithinKInfo }

// Score is 1 when one of the first k attempts of sample 0 (all attempts when
// k is 0) has Match true.
func (m *passWithinKMetric) Score(_ context.Context, in Input) item.Score {
	name := passWithinKInfo.Name
	rec := in.Record
	if rec.GoldError != "" {
		return Failed(name, fmt.Errorf("gold query failed: %s", rec.GoldError))
	}
	if len(rec.Samples) == 0 || len(rec.Samples[0].Attempts) == 0 {
		return Failed(name, errNoAttempt)
	}
	atts := rec.Samples[0].Attempts
	if m.k > 0 && m.k < len(atts) {
		atts = atts[:m.k]
	}
	scored, ok := false, false
	for _, a := range atts {
		if a.Match != nil {
			scored = true
			ok = ok || *a.Match
		}
	}
	if !scored {
		return Failed(name, errPassNeedsEX(name))
	}
	return exBoolScore(name, ok)
}

func newPassAtK(name string, fixedK int) func(Options) (ItemMetric, error) {
	return func(o Options) (ItemMetric, error) {
		k := fixedK
		if k == 0 {
			var err error
			if k, err = o.Int("k", 1); err != nil {
				return nil, err
			}
			if k < 1 {
				return nil, fmt.Errorf(`option "k" must be at least 1, got %d`, k)
			}
		}
		info := passAtKInfo
		info.Name = name
		if fixedK == 1 {
			info.Description = "HumanEval pass@1 over the samples' final attempts: the fraction of samples whose final attempt matches."
		}
		return &passAtKMetric{info: info, k: k}, nil
	}
}

var passAtKInfo = Info{
	Name:        "pass_at_k",
	Description: "HumanEval's unbiased pass@k over the n samples' final attempts (c of them matching): 1 − C(n−c,k)/C(n,k); no value when n < k.",
	Reference:   "Chen et al. 2021 (arXiv:2107.03374); openai/human-eval estimate_pass_at_k; *Metrics Reference Documentation*, “1. Pass@k Metrics (HumanEval)”",
	Inputs:      "Attempt.Match of each sample's final attempt (set by ex)",
	Range:       "[0,1]",
}

func init() {
	p1 := passAtKInfo
	p1.Name = "pass_at_1"
	Register(Def{Info: p1, NewItem: newPassAtK("pass_at_1", 1)})
	Register(Def{Info: passAtKInfo, Options: []string{"k"}, NewItem: newPassAtK("pass_at_k", 0)})
	Register(Def{Info: passWithinKInfo, Options: []string{"k"}, NewItem: func(o Options) (ItemMetric, error) {
		k, err := o.Int("k", 0)
		if err != nil {
			return nil, err
		}
		if k < 0 {
			return nil, errors.New(`option "k" must be 0 (all attempts) or more`)
		}
		return &passWithinKMetric{k: k}, nil
	}})
}

package planner

import (
	"context"

	"github.com/evalflow/evalflow/item"
	"github.com/evalflow/evalflow/nodes"
	"github.com/evalflow/evalflow/store"
)

// Estimate is what a plan will ask of models and engines, found by a dry
// run in which the caches answer what they hold and nothing else runs: no
// model is called, no query executes. An item whose every call is cached
// is replayed exactly, so its counts are the requests its earlier run made;
// for an item with a call the caches do not hold, what follows depends on
// outcomes (a repair needs the failed attempt, a judge the prediction), so
// its counts are the stages' upper bounds (nodes.Bounded).
type Estimate struct {
	Items int
	// LLMCalls counts every model request (cached ones included);
	// LLMCached those the cache answers. Bounded is set when some item's
	// count is an upper bound.
	LLMCalls, LLMCached int
	// EngineCalls counts every engine query (syntax checks included);
	// EngineCached those the stage cache answers.
	EngineCalls, EngineCached int
	Bounded                   bool
	// Models sums the dry run's requests by model ("provider model"),
	// with token estimates of the ones not cached; Unseen is the number of
	// bounded requests the dry run could not see (their tokens are
	// estimated from the seen ones).
	Models map[string]store.ProbeModel
	Unseen int
	// UnseenBy splits Unseen by model ("provider model"): each stage's
	// bounded calls go to its models (nodes.CallModels), the calls the dry
	// run saw counted against the earliest stages first.
	UnseenBy map[string]int
}

// Estimate runs the plan dry over the items opts selects.
func (pl *Plan) Estimate(ctx context.Context, opts RunOptions) (Estimate, error) {
	probe := store.NewProbe()
	for _, n := range pl.Order {
		n.probe = probe
	}
	defer func() {
		for _, n := range pl.Order {
			n.probe = nil
		}
	}()
	samples := 1
	for _, n := range pl.Chain {
		if s, ok := n.Stage.(nodes.Sampler); ok {
			samples = max(samples, s.SampleCount())
		}
	}
	boundLLM, boundEngine := 0, 0
	type stageBound struct {
		calls  int
		models []string
	}
	var bounds []stageBound
	for _, n := range pl.Chain {
		if b, ok := n.Stage.(nodes.Bounded); ok {
			l, e := b.MaxCalls(samples)
			boundLLM += l
			boundEngine += e
			if l > 0 {
				sb := stageBound{calls: l}
				if cm, ok := n.Stage.(nodes.CallModels); ok {
					sb.models = cm.CallModels()
				}
				bounds = append(bounds, sb)
			}
		}
	}
	var seqs []int
	opts.OnRecord = func(rec *item.Record) error {
		if rec.Item.Invalid == "" {
			seqs = append(seqs, rec.Seq)
		}
		return nil
	}
	opts.OnStart = nil
	if err := pl.Run(ctx, opts); err != nil {
		return Estimate{}, err
	}
	est := Estimate{Items: len(seqs), Models: probe.Models(), UnseenBy: map[string]int{}}
	items := probe.Items()
	for _, seq := range seqs {
		it, ok := items[seq]
		if !ok {
			// No call at all reached a cache: nothing is known but the bound.
			it.Missed = boundLLM+boundEngine > 0
		}
		est.LLMCached += it.LLMHits
		est.EngineCached += it.EngineHits
		if it.Missed {
			est.Bounded = true
			est.LLMCalls += max(it.LLM, boundLLM)
			est.EngineCalls += max(it.Engine, boundEngine)
			est.Unseen += max(0, boundLLM-it.LLM)
			seen := it.LLM
			for _, b := range bounds {
				un := b.calls - min(seen, b.calls)
				seen -= min(seen, b.calls)
				if un <= 0 || len(b.models) == 0 {
					continue
				}
				for i, m := range b.models {
					// Spread a stage's calls over its models (judges: one each).
					share := un / len(b.models)
					if i < un%len(b.models) {
						share++
					}
					est.UnseenBy[m] += share
				}
			}
			continue
		}
		est.LLMCalls += it.LLM
		est.EngineCalls += it.Engine
	}
	return est, nil
}

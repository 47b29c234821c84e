package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"sort"
	"strings"

	"github.com/evalflow/evalflow/cache"
	"github.com/evalflow/evalflow/dataset"
	"github.com/evalflow/evalflow/llm"
	"github.com/evalflow/evalflow/nodes"
	"github.com/evalflow/evalflow/planner"
	"github.com/evalflow/evalflow/store"
)

func cmdValidate(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("validate", "validate [-var name=value] [-var-file f] [-sweep name=v1,v2] PIPELINE", stderr)
	var pf pipelineFlags
	pf.register(fs)
	pos, err := parseArgs(fs, args)
	if errors.Is(err, flag.ErrHelp) {
		return exitOK
	}
	if err != nil || len(pos) != 1 {
		if err == nil {
			fs.Usage()
		}
		return exitConfig
	}
	p, ok := loadPipeline(pos[0], &pf, stderr)
	if !ok {
		return exitConfig
	}
	pipes, ok := loadCells(pos[0], p, &pf, stderr)
	if !ok {
		return exitConfig
	}
	stages := 0
	specs := expandCells(p, pipes)
	for _, sp := range specs {
		pl, diags := planner.Build(ctx, sp.p, planner.Options{Branch: sp.branch})
		defer pl.Close()
		if sp.cell != nil && diags.HasErrors() {
			fmt.Fprintf(stderr, "evalflow validate: in cell %s:\n", sp.cell.ID)
		}
		writeDiags(stderr, diags)
		if diags.HasErrors() {
			return exitConfig
		}
		stages = max(stages, len(pl.Order))
	}
	if specs[0].cell != nil {
		fmt.Fprintf(stdout, "%s: valid (%d stages, %d cells)\n", pos[0], stages, len(specs))
		return exitOK
	}
	fmt.Fprintf(stdout, "%s: valid (%d stages)\n", pos[0], stages)
	return exitOK
}

// planReport is `evalflow plan -format json`. Counts are totals over every
// cell; llm_calls includes the cached requests and, for items the caches
// cannot replay, the stages' upper bounds (llm_calls_upper_bound).
type planReport struct {
	Pipeline         string          `json:"pipeline"`
	Cells            int             `json:"cells"`
	Items            int             `json:"items"`
	LLMCalls         int             `json:"llm_calls"`
	LLMCallsCached   int             `json:"llm_calls_cached"`
	LLMUpperBound    bool            `json:"llm_calls_upper_bound"`
	EstInputTokens   int             `json:"est_input_tokens"`
	EstOutputTokens  int             `json:"est_output_tokens"`
	EstCostUSD       *float64        `json:"est_cost_usd"`
	UnknownPrices    []string        `json:"unknown_prices,omitempty"`
	EngineCalls      int             `json:"engine_queries"`
	EngineCallsCache int             `json:"engine_queries_cached"`
	Models           []planModel     `json:"models"`
	PerCell          []planCell      `json:"per_cell"`
	Stages           []planStageInfo `json:"stages"`
}

type planModel struct {
	Model        string   `json:"model"`       // "provider model"
	PriceInput   *float64 `json:"price_input"` // dollars per million tokens; null: not declared
	PriceOutput  *float64 `json:"price_output"`
	Calls        int      `json:"llm_calls"`
	Cached       int      `json:"llm_calls_cached"`
	InputTokens  int      `json:"est_input_tokens"`
	OutputTokens int      `json:"est_output_tokens"`
	EstCostUSD   *float64 `json:"est_cost_usd"`
}

type planCell struct {
	ID             string `json:"id"`
	Items          int    `json:"items"`
	LLMCalls       int    `json:"llm_calls"`
	LLMCallsCached int    `json:"llm_calls_cached"`
	EngineCalls    int    `json:"engine_queries"`
	EngineCached   int    `json:"engine_queries_cached"`
}

type planStageInfo struct {
	Name        string   `json:"name"`
	Kind        string   `json:"kind"`
	Concurrency int      `json:"concurrency"`
	Inputs      []string `json:"depends_on"`
}

func cmdPlan(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("plan", "plan [-format text|json|dot] [-var name=value] [-var-file f] [-sweep name=v1,v2] [-limit N] [-sample N -seed S] PIPELINE", stderr)
	var pf pipelineFlags
	pf.register(fs)
	format := fs.String("format", "text", "text, json or dot (Graphviz)")
	conc := fs.Int("concurrency", 0, "override every stage's concurrency")
	limit := fs.Int("limit", 0, "plan only the first N items (as run -limit)")
	sample := fs.Int("sample", 0, "plan a reproducible random subset of N items (as run -sample)")
	seed := fs.Uint64("seed", 1, "seed for -sample")
	pos, err := parseArgs(fs, args)
	if errors.Is(err, flag.ErrHelp) {
		return exitOK
	}
	if err != nil || len(pos) != 1 {
		if err == nil {
			fs.Usage()
		}
		return exitConfig
	}
	if *format != "text" && *format != "dot" && *format != "json" {
		fmt.Fprintf(stderr, "evalflow plan: -format must be text, json or dot, not %q\n", *format)
		return exitConfig
	}
	if *limit < 0 || *sample < 0 {
		fmt.Fprintln(stderr, "evalflow plan: -limit and -sample must not be negative")
		return exitConfig
	}
	p, ok := loadPipeline(pos[0], &pf, stderr)
	if !ok {
		return exitConfig
	}
	pipes, ok := loadCells(pos[0], p, &pf, stderr)
	if !ok {
		return exitConfig
	}
	stores := cache.NewStores()
	defer stores.Close()
	pool := llm.NewPool(stores)
	var results *nodes.Results
	if disk, err := store.Open(filepath.Join(store.Root(), "stages")); err == nil {
		results = nodes.NewResults(disk, buildVersion())
	}
	specs := expandCells(p, pipes)
	plans := make([]*planner.Plan, len(specs))
	for i, sp := range specs {
		pl, diags := planner.Build(ctx, sp.p, planner.Options{Concurrency: *conc, LLM: pool, Results: results, Branch: sp.branch})
		defer pl.Close()
		if sp.cell != nil && diags.HasErrors() {
			fmt.Fprintf(stderr, "evalflow plan: in cell %s:\n", sp.cell.ID)
		}
		writeDiags(stderr, diags)
		if diags.HasErrors() {
			return exitConfig
		}
		plans[i] = pl
	}
	if *format == "dot" {
		plans[0].WriteDot(stdout)
		return exitOK
	}

	rep := planReport{Pipeline: p.Path, Cells: len(specs)}
	models := map[string]*planModel{}
	for i, pl := range plans {
		if pl.Dataset == nil {
			continue
		}
		dsr, err := dataset.Open(ctx, pl.Dataset)
		if err != nil {
			fmt.Fprintf(stderr, "evalflow plan: dataset.%s: %v\n", pl.Dataset.Name, err)
			return exitRun
		}
		est, err := pl.Estimate(ctx, planner.RunOptions{Limit: *limit, Sample: *sample, Seed: *seed, Dataset: dsr})
		dsr.Close()
		if err != nil {
			fmt.Fprintf(stderr, "evalflow plan: %v\n", err)
			return exitRun
		}
		id := ""
		if specs[i].cell != nil {
			id = specs[i].cell.ID
		}
		rep.PerCell = append(rep.PerCell, planCell{ID: id, Items: est.Items, LLMCalls: est.LLMCalls, LLMCallsCached: est.LLMCached, EngineCalls: est.EngineCalls, EngineCached: est.EngineCached})
		rep.Items += est.Items
		rep.LLMCalls += est.LLMCalls
		rep.LLMCallsCached += est.LLMCached
		rep.LLMUpperBound = rep.LLMUpperBound || est.Bounded
		rep.EngineCalls += est.EngineCalls
		rep.EngineCallsCache += est.EngineCached
		// Requests the dry run saw get their own estimates; bounded ones it
		// could not see go to their stage's model, with the mean tokens of
		// that model's seen requests (or of all seen ones, and the model's
		// max_tokens out, when it saw none).
		allIn, allN := 0, 0
		for label, m := range est.Models {
			pm := models[label]
			if pm == nil {
				pm = &planModel{Model: label}
				models[label] = pm
			}
			pm.Calls += m.Calls
			pm.Cached += m.Cached
			pm.InputTokens += m.InputTokens
			pm.OutputTokens += m.OutputTokens
			allIn += m.InputTokens
			allN += m.Calls - m.Cached
		}
		for label, un := range est.UnseenBy {
			pm := models[label]
			if pm == nil {
				pm = &planModel{Model: label}
				models[label] = pm
			}
			m := est.Models[label]
			inPer, outPer := 0.0, 256.0
			if unc := m.Calls - m.Cached; unc > 0 {
				inPer, outPer = float64(m.InputTokens)/float64(unc), float64(m.OutputTokens)/float64(unc)
			} else {
				if allN > 0 {
					inPer = float64(allIn) / float64(allN)
				}
				for _, cfg := range pool.Configs() {
					if cfg.Provider+" "+cfg.Model == label && cfg.MaxTokens > 0 {
						outPer = float64(cfg.MaxTokens)
					}
				}
			}
			pm.Calls += un
			pm.InputTokens += int(math.Round(float64(un) * inPer))
			pm.OutputTokens += int(math.Round(float64(un) * outPer))
		}
	}
	for _, cfg := range pool.Configs() {
		if pm, ok := models[cfg.Provider+" "+cfg.Model]; ok && cfg.PriceSet {
			in, out := cfg.PriceInput, cfg.PriceOutput
			pm.PriceInput, pm.PriceOutput = &in, &out
		}
	}
	total := 0.0
	known := true
	labels := make([]string, 0, len(models))
	for l := range models {
		labels = append(labels, l)
	}
	sort.Strings(labels)
	for _, l := range labels {
		pm := models[l]
		rep.EstInputTokens += pm.InputTokens
		rep.EstOutputTokens += pm.OutputTokens
		switch {
		case pm.Calls > pm.Cached && pm.PriceInput == nil:
			known = false
			rep.UnknownPrices = append(rep.UnknownPrices, l)
		case pm.Calls == pm.Cached:
			zero := 0.0 // every request is answered by the cache: free
			pm.EstCostUSD = &zero
		default:
			c := (float64(pm.InputTokens)**pm.PriceInput + float64(pm.OutputTokens)**pm.PriceOutput) / 1e6
			pm.EstCostUSD = &c
			total += c
		}
		rep.Models = append(rep.Models, *pm)
	}
	if known {
		rep.EstCostUSD = &total
	}
	if rep.Models == nil {
		rep.Models = []planModel{}
	}
	for _, n := range plans[0].Order {
		rep.Stages = append(rep.Stages, planStageInfo{Name: n.Block.Name, Kind: n.Kind.Name, Concurrency: n.Concurrency, Inputs: append([]string{}, n.Deps...)})
	}

	if *format == "json" {
		b, _ := json.MarshalIndent(rep, "", "  ")
		fmt.Fprintf(stdout, "%s\n", b)
		return exitOK
	}
	for i, pl := range plans {
		// Each branch's DAG once (sweep cells share their branch's shape).
		if i > 0 && (specs[i].branch == "" || specs[i].p != specs[0].p) {
			continue
		}
		if specs[i].branch != "" {
			fmt.Fprintf(stdout, "branch %s:\n", specs[i].branch)
		}
		pl.WriteText(stdout)
	}
	if specs[0].cell != nil {
		fmt.Fprintf(stdout, "cells: %d\n", len(specs))
		for _, c := range rep.PerCell {
			fmt.Fprintf(stdout, "  %-40s %d items, %d model calls (%d cached), %d engine queries (%d cached)\n", c.ID, c.Items, c.LLMCalls, c.LLMCallsCached, c.EngineCalls, c.EngineCached)
		}
	}
	fmt.Fprintf(stdout, "items: %d\n", rep.Items)
	bound := ""
	if rep.LLMUpperBound && rep.LLMCalls > rep.LLMCallsCached {
		bound = "at most "
	}
	fmt.Fprintf(stdout, "model calls: %s%d, of which %d come from the cache\n", bound, rep.LLMCalls, rep.LLMCallsCached)
	for _, pm := range rep.Models {
		cost := "price unknown"
		if pm.EstCostUSD != nil {
			cost = fmt.Sprintf("~$%.4f", *pm.EstCostUSD)
		}
		fmt.Fprintf(stdout, "  %s: %d requests, %d cached; not cached: ~%d input + ~%d output tokens, %s\n", pm.Model, pm.Calls, pm.Cached, pm.InputTokens, pm.OutputTokens, cost)
	}
	switch {
	case len(rep.Models) == 0:
		fmt.Fprintln(stdout, "estimated cost: $0 (no model calls)")
	case rep.EstCostUSD != nil && rep.LLMUpperBound && rep.LLMCalls > rep.LLMCallsCached:
		fmt.Fprintf(stdout, "estimated cost: at most ~$%.4f\n", *rep.EstCostUSD)
	case rep.EstCostUSD != nil:
		fmt.Fprintf(stdout, "estimated cost: ~$%.4f\n", *rep.EstCostUSD)
	default:
		fmt.Fprintf(stdout, "estimated cost: unknown — no price for %s (declare price = { input = USD_PER_MTOK, output = USD_PER_MTOK } on the model block)\n", strings.Join(rep.UnknownPrices, ", "))
	}
	bound = ""
	if rep.LLMUpperBound && rep.EngineCalls > rep.EngineCallsCache {
		bound = "at most "
	}
	fmt.Fprintf(stdout, "engine queries: %s%d, of which %d come from the stage cache\n", bound, rep.EngineCalls, rep.EngineCallsCache)
	if rep.LLMUpperBound && (rep.LLMCalls > rep.LLMCallsCached || rep.EngineCalls > rep.EngineCallsCache) {
		fmt.Fprintln(stdout, "(repairs and judges depend on outcomes: for what the caches cannot replay, counts are upper bounds)")
	}
	return exitOK
}

// Package planner turns a decoded pipeline into a plan — a DAG of stages
// whose edges come from the references in their HCL expressions, checked for
// missing references, cycles and wrong wiring — and walks it: items stream
// through the stages in topological order, each stage with its own bounded
// worker pool and bounded channels between them (backpressure keeps memory
// flat however large the dataset).
package planner

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/hashicorp/hcl/v2"

	"github.com/evalflow/evalflow/dsl"
	"github.com/evalflow/evalflow/engine"
	"github.com/evalflow/evalflow/llm"
	"github.com/evalflow/evalflow/metrics"
	"github.com/evalflow/evalflow/nodes"
	"github.com/evalflow/evalflow/sinks"
	"github.com/evalflow/evalflow/store"
	"github.com/hashicorp/hcl/v2/hclsyntax"
)

// Options configure planning. Zero values use the default registries.
type Options struct {
	Stages  *nodes.Registry
	Metrics *metrics.Registry
	Engines *engine.Registry
	// Concurrency, when > 0, overrides every stage's concurrency
	// (-concurrency on the command line).
	Concurrency int
	// LLM holds the model clients the stages share; nil: the plan makes a
	// pool of its own and closes it with the plan.
	LLM *llm.Pool
	// CISeed seeds the aggregates' bootstrap confidence intervals.
	CISeed uint64
	// Results is the stage cache every engine answers from (nil: none).
	Results *nodes.Results
	// NoCache bypasses every cache, reads and writes (-no-cache); Refresh
	// names stages whose cache reads are bypassed (-refresh STAGE).
	NoCache bool
	Refresh []string
	// Branch selects the source stage whose branch this plan runs, for a
	// pipeline with several (Branches); "" for a pipeline with one.
	Branch string
	// Pools, shared by the plans of a sweep's cells, bounds each stage's
	// work across the cells running side by side: one pool per stage name.
	Pools *Pools
}

// Pools holds one bounded pool per stage name for plans that run at once
// (a sweep's cells): however many cells run, a stage processes at most its
// concurrency items in all.
type Pools struct {
	mu sync.Mutex
	m  map[string]chan struct{}
}

// NewPools returns empty pools.
func NewPools() *Pools { return &Pools{m: map[string]chan struct{}{}} }

func (p *Pools) sem(name string, size int) chan struct{} {
	p.mu.Lock()
	defer p.mu.Unlock()
	if c, ok := p.m[name]; ok {
		return c
	}
	c := make(chan struct{}, max(size, 1))
	p.m[name] = c
	return c
}

// Node is one planned stage.
type Node struct {
	Block       *dsl.Stage
	Kind        nodes.Kind
	Stage       nodes.Stage
	Concurrency int
	Deps        []string // names of stages this one references, sorted

	refresh, noCache bool
	items, cached    atomic.Int64  // items processed, and of them answered wholly from a cache
	computed         atomic.Int64  // items for which an engine query ran or a model was called
	probe            *store.Probe  // set during Estimate's dry run
	sem              chan struct{} // the stage's pool shared across cells (Options.Pools)
}

// StageStat is what a stage did in a run: items it processed, how many of
// them a cache answered wholly (every engine query and model request it
// needed), and for how many it ran a query or called a model. Items with
// neither (no engine or model work) are in Items only.
type StageStat struct {
	Name     string `json:"name"`
	Kind     string `json:"kind"`
	Items    int    `json:"items"`
	Cached   int    `json:"cached"`
	Computed int    `json:"computed"`
}

// Stats lists every stage's items and cached items, in order.
func (pl *Plan) Stats() []StageStat {
	out := make([]StageStat, 0, len(pl.Order))
	last := 0
	for _, n := range pl.Chain {
		last = int(n.items.Load())
	}
	for _, n := range pl.Order {
		st := StageStat{Name: n.Block.Name, Kind: n.Kind.Name, Items: int(n.items.Load()), Cached: int(n.cached.Load()), Computed: int(n.computed.Load())}
		if _, ok := n.Stage.(nodes.Collector); ok {
			st.Items = last // a collector sees every item the chain finished
		}
		out = append(out, st)
	}
	return out
}

// Name returns the stage's address, "stage.NAME".
func (n *Node) Name() string { return "stage." + n.Block.Name }

// Plan is a checked, built pipeline ready to run. The plan owns its engines:
// Close releases them.
type Plan struct {
	Pipeline *dsl.Pipeline
	Dataset  *dsl.Dataset
	// Branch is the source stage this plan runs ("" for a pipeline with
	// one source).
	Branch  string
	Engines map[string]*nodes.Engine
	// Order is every stage in topological order (ties by name).
	Order []*Node
	// Chain are the stages items flow through; Collectors see finished
	// records (aggregate).
	Chain      []*Node
	Collectors []*Node

	ownLLM *llm.Pool // closed by Close when Build made it
}

// Build plans p. On error the returned plan may be partial and must still be
// closed.
func Build(ctx context.Context, p *dsl.Pipeline, opts Options) (*Plan, hcl.Diagnostics) {
	if opts.Stages == nil {
		opts.Stages = nodes.Default
	}
	if opts.Metrics == nil {
		opts.Metrics = metrics.Default
	}
	if opts.Engines == nil {
		opts.Engines = engine.Default
	}
	pl := &Plan{Pipeline: p, Engines: map[string]*nodes.Engine{}}
	if opts.LLM == nil {
		opts.LLM = llm.NewPool(nil)
		pl.ownLLM = opts.LLM
	}
	var diags hcl.Diagnostics

	stages := p.Stages
	if opts.Branch != "" {
		var d hcl.Diagnostics
		stages, d = branchStages(p, opts.Branch, opts.Stages)
		diags = append(diags, d...)
		pl.Branch = opts.Branch
	}
	blocks := map[string]*dsl.Stage{}
	for _, s := range stages {
		blocks[s.Name] = s
	}
	nodesByName := map[string]*Node{}
	for _, s := range stages {
		k, ok := opts.Stages.Lookup(s.Kind)
		if !ok {
			diags = append(diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Unknown stage kind",
				Detail: fmt.Sprintf("No stage kind %q is built in.", s.Kind), Subject: s.KindRange.Ptr()})
			continue
		}
		n := &Node{Block: s, Kind: k, Concurrency: s.Concurrency, noCache: opts.NoCache}
		for _, r := range opts.Refresh {
			if r == s.Name {
				n.refresh = true
			}
		}
		if n.Concurrency == 0 {
			n.Concurrency = k.DefaultConcurrency
		}
		if opts.Concurrency > 0 && !k.Collects {
			n.Concurrency = opts.Concurrency
		}
		deps := map[string]bool{}
		for _, r := range s.Refs {
			if r.Block == "stage" && blocks[r.Name] != nil {
				deps[r.Name] = true
			}
		}
		for d := range deps {
			n.Deps = append(n.Deps, d)
		}
		sort.Strings(n.Deps)
		nodesByName[s.Name] = n
	}
	for _, r := range opts.Refresh {
		if blocks[r] == nil {
			var names []string
			for _, s := range stages {
				names = append(names, s.Name)
			}
			hint := ""
			sg := dsl.Suggest(r, names)
			if sg == "" {
				// An abbreviation (-refresh exec) that one stage name starts with.
				var starts []string
				for _, n := range names {
					if strings.HasPrefix(n, r) {
						starts = append(starts, n)
					}
				}
				if len(starts) == 1 {
					sg = starts[0]
				}
			}
			if sg != "" {
				hint = fmt.Sprintf(" Did you mean %q?", sg)
			}
			diags = append(diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Unknown stage for -refresh",
				Detail: fmt.Sprintf("-refresh %s: the pipeline has no stage %q.%s Stages: %s.", r, r, hint, strings.Join(names, ", "))})
		}
	}
	diags = append(diags, checkSinks(p.Sinks, p.Variables)...)
	diags = append(diags, checkWiring(stages, blocks, nodesByName)...)
	order, d := topoSort(p, nodesByName)
	diags = append(diags, d...)
	if diags.HasErrors() {
		return pl, dsl.ExplainDiagnostics(diags)
	}
	pl.Order = order
	if opts.Pools != nil {
		for _, n := range order {
			if !n.Kind.Collects {
				n.sem = opts.Pools.sem(n.Block.Name, n.Concurrency)
			}
		}
	}

	// Datasets: the generate stage names one, or there is exactly one.
	for _, n := range order {
		if !n.Kind.Source() {
			continue
		}
		want := ""
		for _, r := range n.Block.Refs {
			if r.Block == "dataset" {
				want = r.Name
			}
		}
		for _, ds := range p.Datasets {
			if ds.Name == want || (want == "" && len(p.Datasets) == 1) {
				pl.Dataset = ds
			}
		}
	}

	// Engines. Unless an engine block bounds its connections, it gets as
	// many as the stages that may query it run workers (validate, execute,
	// score, refine), so slow queries in one stage cannot starve another of
	// connections and have the wait counted against its timeout.
	demand := 0
	for _, n := range order {
		if !n.Kind.Source() && !n.Kind.Collects {
			demand += n.Concurrency
		}
	}
	// Path options first, for every engine: a path outside its root stops
	// the plan before any engine starts a server or reads a file.
	resolved := map[string]map[string]any{}
	for _, e := range p.Engines {
		options, d := engineOptions(opts.Engines, p, e)
		diags = append(diags, d...)
		if !d.HasErrors() {
			resolved[e.Name] = options
		}
	}
	if diags.HasErrors() {
		return pl, dsl.ExplainDiagnostics(diags)
	}
	for _, e := range p.Engines {
		maxOpen := e.Concurrency
		if maxOpen == 0 {
			maxOpen = demand
		}
		if _, known := opts.Engines.Lookup(e.Kind); !known {
			diags = append(diags, dsl.InvalidChoice(p.Variables, e.KindExpr, e.KindRange, "Unknown engine kind",
				"an engine kind", e.Kind, opts.Engines.Names()))
			continue
		}
		ex, err := opts.Engines.New(ctx, e.Kind, engine.Config{
			Options: resolved[e.Name], ReadOnly: e.ReadOnly, Timeout: e.Timeout, MaxRows: e.MaxRows, MaxOpen: maxOpen,
		})
		if err != nil {
			diags = append(diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Cannot create engine",
				Detail: fmt.Sprintf("engine.%s (kind %q): %v.", e.Name, e.Kind, err), Subject: e.KindRange.Ptr()})
			continue
		}
		ne := nodes.NewEngine(e, ex, p)
		if !opts.NoCache {
			ne.Results = opts.Results
		}
		pl.Engines[e.Name] = ne
		diags = append(diags, ne.RootDiags...)
	}
	if diags.HasErrors() {
		return pl, dsl.ExplainDiagnostics(diags)
	}

	built := map[string]nodes.Stage{}
	for _, n := range order {
		env := &nodes.Env{Pipeline: p, Block: n.Block, Engines: pl.Engines, Built: built, Blocks: blocks, Metrics: opts.Metrics, LLM: opts.LLM, CISeed: opts.CISeed}
		st, d := n.Kind.Factory(env)
		diags = append(diags, d...)
		if st == nil {
			continue
		}
		n.Stage = st
		built[n.Block.Name] = st
		if _, ok := st.(nodes.Collector); ok {
			pl.Collectors = append(pl.Collectors, n)
		} else {
			pl.Chain = append(pl.Chain, n)
		}
	}
	return pl, dsl.ExplainDiagnostics(diags)
}

// Close releases the plan's engines.
func (pl *Plan) Close() error {
	var first error
	names := make([]string, 0, len(pl.Engines))
	for n := range pl.Engines {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		if c, ok := pl.Engines[n].Exec.(interface{ Close() error }); ok {
			if err := c.Close(); err != nil && first == nil {
				first = err
			}
		}
	}
	if pl.ownLLM != nil {
		if err := pl.ownLLM.Close(); err != nil && first == nil {
			first = err
		}
		pl.ownLLM = nil
	}
	return first
}

// checkWiring verifies every stage's input is of a kind it accepts, that
// only generate stages lack an input, and that there is one generate stage.
func checkWiring(stages []*dsl.Stage, blocks map[string]*dsl.Stage, ns map[string]*Node) hcl.Diagnostics {
	var diags hcl.Diagnostics
	var gens, joins []*dsl.Stage
	for _, s := range stages {
		n := ns[s.Name]
		if n == nil {
			continue
		}
		if len(n.Kind.Inputs) == 0 {
			gens = append(gens, s)
			if s.Input != nil {
				rng := s.Input.Range
				diags = append(diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Wrong stage wiring",
					Detail: fmt.Sprintf("A %s stage takes no input; it reads a dataset. Remove input, or use dataset = dataset.NAME.", s.Kind), Subject: &rng})
			}
			continue
		}
		if s.Input == nil && len(s.Inputs) > 1 {
			joins = append(joins, s)
			continue
		}
		if s.Input == nil {
			d := &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Missing input",
				Detail:  fmt.Sprintf("Stage %q (%s) needs input = stage.NAME, a stage of kind %s.", s.Name, s.Kind, strings.Join(n.Kind.Inputs, " or ")),
				Subject: s.DeclRange.Ptr()}
			// A misspelt input (inputs = …, imput = …) is the likely cause:
			// point at it.
			if sb, ok := s.Source.(*hclsyntax.Body); ok {
				for name, a := range sb.Attributes {
					if name != "input" && dsl.Suggest(name, []string{"input"}) == "input" {
						d.Detail = fmt.Sprintf("Stage %q (%s) has no input = stage.NAME; %q is not an argument here. Did you mean \"input\"?", s.Name, s.Kind, name)
						d.Subject = a.NameRange.Ptr()
					}
				}
			}
			diags = append(diags, d)
			continue
		}
		up := blocks[s.Input.Name]
		if up == nil {
			continue // reported by dsl as an undeclared reference
		}
		ok := false
		for _, k := range n.Kind.Inputs {
			if up.Kind == k {
				ok = true
			}
		}
		if !ok {
			rng := s.Input.Range
			diags = append(diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Wrong stage wiring",
				Detail: fmt.Sprintf("%s stage cannot take its input from stage.%s, %s stage; it takes %s.",
					article(s.Kind), up.Name, article(up.Kind), strings.Join(n.Kind.Inputs, " or ")), Subject: &rng})
		}
	}
	if len(gens) == 0 && len(stages) > 0 {
		diags = append(diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "No generate stage",
			Detail: "A pipeline needs one generate stage to give items their queries."})
	}
	if len(gens) <= 1 {
		for _, s := range joins {
			rng := s.Inputs[1].Range
			diags = append(diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Join without branches",
				Detail:  fmt.Sprintf("stage.%s lists several inputs, which joins branches, but the pipeline has one generate stage; give input = stage.NAME.", s.Name),
				Subject: &rng})
		}
	}
	if len(gens) > 1 {
		// Build was not given a branch: the caller must plan each source's
		// branch (Branches; evalflow run does).
		diags = append(diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Several generate stages",
			Detail:  fmt.Sprintf("stage.%s and stage.%s are both sources; plan each as a branch (planner.Options.Branch).", gens[0].Name, gens[1].Name),
			Subject: gens[1].DeclRange.Ptr()})
	}
	if len(stages) == 0 {
		diags = append(diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "No stages",
			Detail: "A pipeline needs at least a generate stage; see examples/quickstart."})
	}
	return diags
}

// checkSinks resolves every sink block's kind through the sinks registry:
// an unknown kind, standard output for a kind that needs a file, and a
// per-item kind on another table than items are refused where written.
func checkSinks(sbs []*dsl.Sink, vars map[string]*dsl.Variable) hcl.Diagnostics {
	var diags hcl.Diagnostics
	for _, sb := range sbs {
		k, ok := sinks.Lookup(sb.Kind)
		if !ok {
			diags = append(diags, dsl.InvalidChoice(vars, sb.KindExpr, sb.KindRange, "Unknown sink kind",
				"a sink kind", sb.Kind, sinks.KindNames()))
			continue
		}
		if sb.Path == "-" && !k.Stdout {
			rng := sb.PathRange
			diags = append(diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Sink cannot write to stdout",
				Detail: fmt.Sprintf("A %s sink needs a file path; use kind = \"arrow\" or \"jsonl\" to stream to standard output.", sb.Kind), Subject: &rng})
		}
		if k.PerItem && sb.Table != "items" {
			rng := sb.TableRange
			diags = append(diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Invalid sink table",
				Detail: fmt.Sprintf("A %s sink writes one line per item; remove table or set it to \"items\".", sb.Kind), Subject: &rng})
		}
	}
	return diags
}

// topoSort orders stages so every stage comes after the stages it
// references; a cycle is reported at the reference that closes it.
func topoSort(p *dsl.Pipeline, ns map[string]*Node) ([]*Node, hcl.Diagnostics) {
	names := make([]string, 0, len(ns))
	for n := range ns {
		names = append(names, n)
	}
	sort.Strings(names)
	const (
		white = iota
		grey
		black
	)
	color := map[string]int{}
	var order []*Node
	var diags hcl.Diagnostics
	var stack []string
	var visit func(name string) bool
	visit = func(name string) bool {
		color[name] = grey
		stack = append(stack, name)
		n := ns[name]
		for _, r := range n.Block.Refs {
			if r.Block != "stage" || ns[r.Name] == nil {
				continue
			}
			switch color[r.Name] {
			case grey:
				// Cycle: from r.Name back around to name.
				i := len(stack) - 1
				for i >= 0 && stack[i] != r.Name {
					i--
				}
				cycle := append(append([]string(nil), stack[i:]...), r.Name)
				for j := range cycle {
					cycle[j] = "stage." + cycle[j]
				}
				rng := r.Range
				diags = append(diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Cycle between stages",
					Detail: fmt.Sprintf("%s. Stages must form a DAG: remove this reference (refine re-runs validate and execute itself; it does not need them to point back).",
						strings.Join(cycle, " → ")), Subject: &rng})
				return false
			case white:
				if !visit(r.Name) {
					return false
				}
			}
		}
		stack = stack[:len(stack)-1]
		color[name] = black
		order = append(order, n)
		return true
	}
	for _, n := range names {
		if color[n] == white {
			if !visit(n) {
				return nil, diags
			}
		}
	}
	return order, diags
}

// article prefixes a kind with "A" or "An".
func article(kind string) string {
	if kind != "" && strings.ContainsRune("aeiou", rune(kind[0])) {
		return "An " + kind
	}
	return "A " + kind
}

package cluster

import "sort"

// Report is what one worker process did for a run so far: its stages'
// counts and its model calls, summed over its plans, as the planner and
// the model pool count them. Every shard's done message carries the
// process's latest; counters only grow within a process, so the
// coordinator keeps the report with the highest N of each process.
type Report struct {
	// Proc names the worker process (random per process: a worker that
	// restarts its run's child is a new process); N counts its reports.
	Proc string `json:"proc"`
	N    int    `json:"n"`
	// Gen is the Spec.Gen the process served.
	Gen    int          `json:"gen"`
	Stages []StageCount `json:"stages,omitempty"`
	Calls  CallCount    `json:"model_calls"`
}

// StageCount is one stage's work (planner.StageStat's fields).
type StageCount struct {
	Name     string `json:"name"`
	Kind     string `json:"kind"`
	Items    int    `json:"items"`
	Cached   int    `json:"cached"`
	Computed int    `json:"computed"`
}

// CallCount is a process's model calls (llm.Stats' fields).
type CallCount struct {
	Calls        int64   `json:"calls"`
	Retries      int64   `json:"retries"`
	CacheHits    int64   `json:"cache_hits"`
	InputTokens  int64   `json:"input_tokens"`
	OutputTokens int64   `json:"output_tokens"`
	Cost         float64 `json:"cost"`
}

// Add adds o's counts.
func (c *CallCount) Add(o CallCount) {
	c.Calls += o.Calls
	c.Retries += o.Retries
	c.CacheHits += o.CacheHits
	c.InputTokens += o.InputTokens
	c.OutputTokens += o.OutputTokens
	c.Cost += o.Cost
}

// AddStages adds the counts of more to base by stage name: base's order
// first, stages only more has after them in their first order.
func AddStages(base []StageCount, more ...[]StageCount) []StageCount {
	out := append([]StageCount(nil), base...)
	idx := map[string]int{}
	for i, s := range out {
		idx[s.Name] = i
	}
	for _, list := range more {
		for _, s := range list {
			i, ok := idx[s.Name]
			if !ok {
				idx[s.Name] = len(out)
				out = append(out, StageCount{Name: s.Name, Kind: s.Kind})
				i = len(out) - 1
			}
			out[i].Items += s.Items
			out[i].Cached += s.Cached
			out[i].Computed += s.Computed
		}
	}
	return out
}

// Totals sums the workers' reports: what every worker process of the
// run's current coordinator did (work a killed worker did before its last
// report included, so a redelivered shard's items may count twice).
func Totals(ws []WorkerStat) ([]StageCount, CallCount) {
	var stages []StageCount
	var calls CallCount
	for _, w := range ws {
		procs := make([]string, 0, len(w.reports))
		for p := range w.reports {
			procs = append(procs, p)
		}
		sort.Strings(procs)
		for _, p := range procs {
			r := w.reports[p]
			stages = AddStages(stages, r.Stages)
			calls.Add(r.Calls)
		}
	}
	return stages, calls
}

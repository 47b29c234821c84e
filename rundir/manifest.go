package rundir

import (
	"encoding/json"
	"time"
)

// Manifest is manifest.json: everything needed to know what a run was and
// to reproduce it. Field names are part of the output contract.
type Manifest struct {
	RunID string `json:"run_id"`
	// Status is running (being written, or interrupted when its lock is
	// stale), complete, cancelled, stopped (max_cost) or failed.
	Status       string        `json:"status"`
	Error        string        `json:"error,omitempty"`
	Pipeline     string        `json:"pipeline"`
	PipelineHash string        `json:"pipeline_sha256"`
	Evalflow     string        `json:"evalflow_version"`
	Go           string        `json:"go_version"`
	Command      []string      `json:"command"`
	Variables    []ManifestVar `json:"variables"`
	Dataset      ManifestFile  `json:"dataset"`
	Options      RunOptions    `json:"options"`
	Started      time.Time     `json:"started"`
	Finished     time.Time     `json:"finished"`
	Seconds      float64       `json:"duration_seconds"`
	Counts       Counts        `json:"counts"`
	// Fingerprint identifies the inputs; resuming needs the same.
	Fingerprint Fingerprint `json:"fingerprint,omitempty"`
	// Resumes counts the earlier processes this run continues (0: ran in
	// one go); Kept is how many finished items came from them.
	Resumes int `json:"resumes"`
	Kept    int `json:"kept_items"`
	// MaxErrors is the -max-errors threshold the run was held to.
	MaxErrors string `json:"max_errors"`
	// Warnings are run-wide observations from the stages (nodes.Warner).
	Warnings []string `json:"warnings,omitempty"`
	// Metrics are the overall means, by metric column.
	Metrics map[string]*float64 `json:"metrics"`
	// MetricsWithoutErrors are the overall means over items not in error,
	// for metrics whose official profile counts errored items in Metrics.
	MetricsWithoutErrors map[string]*float64 `json:"metrics_without_errors,omitempty"`
	// Cells are a sweep run's cells with their variables and results (nil
	// outside a sweep; then Metrics holds the results).
	Cells []ManifestCell `json:"cells,omitempty"`
	// ModelCalls sums every model call of the run — generation, repairs
	// and judges (Counts holds the attempts' own: generation and repairs).
	ModelCalls *ManifestModelCalls `json:"model_calls,omitempty"`
	// Stages says what each stage did: items processed and how many a
	// cache answered wholly (stage cache and LLM cache).
	Stages []ManifestStage `json:"stages,omitempty"`
	// CISeed seeds the bootstrap confidence intervals in aggregates.parquet.
	CISeed uint64 `json:"ci_seed"`
	// BinaryMetrics are the metric columns declared 0/1 (Wilson intervals,
	// McNemar in evalflow compare).
	BinaryMetrics []string `json:"binary_metrics,omitempty"`
	// MetricErrors counts, per metric, items where the metric failed (a
	// judge that failed or answered unparsably) or whose item is in error.
	MetricErrors map[string]int `json:"metric_errors,omitempty"`
	// Models is the provenance of the model blocks the run's generate
	// stages called (nil when none did); see ManifestModel.
	Models []ManifestModel `json:"models,omitempty"`
	// Inputs are the regular files the stage blocks and engine options
	// name (a replay's predictions file, ...) with their SHA-256, except
	// those the fingerprint already covers (the dataset, files named by a
	// variable). evalflow rerun checks them.
	Inputs []ManifestInput `json:"inputs,omitempty"`
}

// ManifestModel is one model block as a run used it: the endpoint as
// configured, what its API reported serving, and the prompt templates
// rendered for it.
type ManifestModel struct {
	Name           string `json:"name"` // the model block's name
	Provider       string `json:"provider"`
	BaseURL        string `json:"base_url"` // "" for the provider's own endpoint
	RequestedModel string `json:"requested_model"`
	// ResolvedModels are the distinct model ids the API reported answering
	// with (OpenAI and Anthropic `model`, Gemini `modelVersion`), sorted;
	// a cache hit reports what was stored with the response. Empty when
	// no call was made or the server reports none.
	ResolvedModels []string `json:"resolved_models"`
	// SystemFingerprints are the distinct OpenAI system_fingerprint values
	// seen, sorted (empty for other providers).
	SystemFingerprints []string `json:"system_fingerprints"`
	// PromptSHA256 maps each template rendered for this model to the
	// SHA-256 of its text, keyed "stage.NAME.ATTRIBUTE" (system, prompt,
	// refine_prompt).
	PromptSHA256 map[string]string `json:"prompt_sha256"`
	// Cells are the sweep cells this entry applies to (nil outside a
	// sweep). Resolved models and fingerprints are the endpoint's over the
	// whole run.
	Cells []string `json:"cells,omitempty"`
}

// ManifestInput is a file a block names, by its address
// ("stage.generate.predictions"), path as resolved, and content hash.
type ManifestInput struct {
	Name   string `json:"name"`
	Path   string `json:"path"`
	SHA256 string `json:"sha256"`
}

// ManifestModelCalls are the run's model calls over every model block.
type ManifestModelCalls struct {
	Calls        int64   `json:"calls"`   // provider calls made, retries included
	Retries      int64   `json:"retries"` // of those
	CacheHits    int64   `json:"cache_hits"`
	InputTokens  int64   `json:"input_tokens"`
	OutputTokens int64   `json:"output_tokens"`
	Cost         float64 `json:"cost"` // dollars (model block prices)
}

// ManifestStage is one stage's work in the run (over every sweep cell).
type ManifestStage struct {
	Name     string `json:"name"`
	Kind     string `json:"kind"`
	Items    int    `json:"items"`
	Cached   int    `json:"cached"`   // items whose queries and model calls all came from a cache
	Computed int    `json:"computed"` // items for which a query ran or a model was called
}

// ManifestCell is one sweep cell: its id (the `cell` column's value), the
// swept variables' values, its item count and overall means.
type ManifestCell struct {
	Index     int                        `json:"index"`
	ID        string                     `json:"id"`
	Variables map[string]json.RawMessage `json:"variables"`
	Items     int                        `json:"items"`
	Metrics   map[string]*float64        `json:"metrics"`
}

// ManifestVar is one resolved variable and where its value came from.
type ManifestVar struct {
	Name   string          `json:"name"`
	Value  json.RawMessage `json:"value"`
	Source string          `json:"source"`
}

// ManifestFile identifies an input file by path and content hash.
type ManifestFile struct {
	Name   string `json:"name"`
	Path   string `json:"path"`
	Format string `json:"format"`
	SHA256 string `json:"sha256"`
}

// RunOptions are the command-line options that change which items ran.
type RunOptions struct {
	Limit       int    `json:"limit,omitempty"`
	Sample      int    `json:"sample,omitempty"`
	Seed        uint64 `json:"seed,omitempty"`
	Concurrency int    `json:"concurrency,omitempty"`
}

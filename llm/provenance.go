package llm

import (
	"crypto/sha256"
	"encoding/hex"
	"maps"
	"slices"
)

// Provenance identifies what answered a model block's calls: the endpoint
// as configured and what its API reported serving. A run records it in
// manifest.json ("models"), so a result can be traced to the model
// snapshot behind it and a rerun can tell whether a prompt changed.
type Provenance struct {
	Name           string // the model block's name
	Provider       string
	BaseURL        string // "" for the provider's own endpoint
	RequestedModel string // the model block's model attribute
	// ResolvedModels are the distinct model ids the API reported (Response.
	// Model), sorted; SystemFingerprints likewise (OpenAI only). Empty
	// before any call, and for servers that report none.
	ResolvedModels     []string
	SystemFingerprints []string
	// PromptSHA256 maps a template's name (a generate stage's system,
	// prompt and refine_prompt) to TextSHA256 of its text. Set by the
	// stage, not by Client.
	PromptSHA256 map[string]string
}

// TextSHA256 is the hex SHA-256 of s: how prompt templates are identified.
func TextSHA256(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}

// provenanceSet is what an endpoint reported serving: an immutable
// snapshot, replaced (under Client.mu) when a response names something
// new, so that the calls that name nothing new — nearly all — only load it.
type provenanceSet struct {
	models, fingerprints map[string]bool
}

// noteServed records the model id and system fingerprint of a successful
// response (a call made or a cache hit, which carries what was stored).
func (c *Client) noteServed(r *Response) {
	if r.Model == "" && r.SystemFingerprint == "" {
		return
	}
	known := func(p *provenanceSet) bool {
		return p != nil && (r.Model == "" || p.models[r.Model]) && (r.SystemFingerprint == "" || p.fingerprints[r.SystemFingerprint])
	}
	if known(c.served.Load()) {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	old := c.served.Load()
	if known(old) {
		return
	}
	next := &provenanceSet{models: map[string]bool{}, fingerprints: map[string]bool{}}
	if old != nil {
		maps.Copy(next.models, old.models)
		maps.Copy(next.fingerprints, old.fingerprints)
	}
	if r.Model != "" {
		next.models[r.Model] = true
	}
	if r.SystemFingerprint != "" {
		next.fingerprints[r.SystemFingerprint] = true
	}
	c.served.Store(next)
}

// Served returns the distinct model ids and system fingerprints the API
// reported in this client's successful responses so far, calls made and
// cache hits alike, each sorted. Both are non-nil. Safe for concurrent use.
func (c *Client) Served() (models, fingerprints []string) {
	if p := c.served.Load(); p != nil {
		models = slices.Sorted(maps.Keys(p.models))
		fingerprints = slices.Sorted(maps.Keys(p.fingerprints))
	}
	if models == nil {
		models = []string{}
	}
	if fingerprints == nil {
		fingerprints = []string{}
	}
	return models, fingerprints
}

// Provenance returns the endpoint's provenance so far, without prompt
// hashes (the stage that renders the prompts adds them).
func (c *Client) Provenance() Provenance {
	models, fps := c.Served()
	return Provenance{Name: c.cfg.Name, Provider: c.cfg.Provider, BaseURL: c.cfg.BaseURL, RequestedModel: c.cfg.Model,
		ResolvedModels: models, SystemFingerprints: fps}
}

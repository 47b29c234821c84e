// Package llm talks to language-model endpoints for evalflow's generate,
// refine and LLM-judge steps.
//
// A Provider speaks one wire protocol through the provider's official Go
// SDK: OpenAI chat completions (github.com/openai/openai-go, also every
// OpenAI-compatible server such as vLLM, Ollama, llama.cpp, LM Studio or
// OpenRouter), Anthropic messages (github.com/anthropics/anthropic-sdk-go)
// and Gemini generateContent (google.golang.org/genai). The SDKs' own
// retries are switched off: a Client owns retrying, so that every stage using
// one endpoint shares one budget.
//
// A Client wraps a Provider with what an evaluation needs around each call:
// a Limiter (concurrency, requests/min, tokens/min, Retry-After and
// rate-limit headers), retries with exponential backoff and jitter for
// transient failures only, a per-call timeout, a quota latch (once the
// provider says the quota is exhausted no further call is made), a max_cost
// guard, token and cost accounting, and a content-addressed response cache
// (package cache). A Pool holds one Client per endpoint configuration for
// a run (built in main and passed down, never a process global), so a
// generator and a judge on the same endpoint share its limiter.
//
// API keys are read from the environment when a Client is built and are
// never part of a cache key, a cache entry, an error message or a Config
// rendering.
package llm

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Message is one chat turn. Role is "user" or "assistant"; the system
// prompt travels in Request.System.
type Message struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

// Request is one completion request. Every field takes part in the cache
// key, Sample included: two samples of the same prompt are independent
// draws and are cached separately.
type Request struct {
	Model       string    `json:"model"`
	System      string    `json:"system,omitempty"`
	Messages    []Message `json:"messages"`
	Temperature *float64  `json:"temperature,omitempty"`
	TopP        *float64  `json:"top_p,omitempty"`
	MaxTokens   int       `json:"max_tokens,omitempty"`
	Seed        *int64    `json:"seed,omitempty"`
	Stop        []string  `json:"stop,omitempty"`
	// Sample is the index of the independent sample this request draws.
	// Providers do not see it; it only separates cache entries.
	Sample int `json:"sample"`
	// Attempt is the refine attempt (0 for the first generation); like
	// Sample it only separates cache entries, so a repeated repair prompt
	// is a new draw.
	Attempt int `json:"attempt,omitempty"`
}

// Response is a completion and what it cost.
type Response struct {
	Text         string `json:"text"`
	InputTokens  int    `json:"input_tokens"`
	OutputTokens int    `json:"output_tokens"`
	FinishReason string `json:"finish_reason,omitempty"`
	// Model is the model id the API says answered (OpenAI's and
	// Anthropic's `model`, Gemini's `modelVersion`): often a dated snapshot
	// of the alias requested ("gpt-4o" → "gpt-4o-2024-08-06"). "" when the
	// API sent none. Stored with the response in the cache.
	Model string `json:"model,omitempty"`
	// SystemFingerprint is OpenAI's `system_fingerprint`, the backend
	// configuration that served the call, when the API returns one ("" for
	// the other providers and for servers that send none).
	SystemFingerprint string `json:"system_fingerprint,omitempty"`
	// Set by Client, not by providers:
	Cost     float64       `json:"-"` // dollars spent on this call (0 for a cache hit)
	Latency  time.Duration `json:"-"` // wall time of Complete, retries and waits included
	CacheHit bool          `json:"-"`
	CacheKey string        `json:"-"` // the request's cache key; "" when the response cache is not used
	Retries  int           `json:"-"`
}

// Provider sends one request over one wire protocol, without retrying.
// Implementations are safe for concurrent use, return promptly once ctx is
// done, and return errors as *Error when the failure is classified.
type Provider interface {
	Complete(ctx context.Context, req *Request) (*Response, error)
}

// Kind classifies a failed call; it decides whether the Client retries.
type Kind string

// Error kinds.
const (
	KindRateLimit Kind = "rate_limit" // 429: retried after Retry-After or backoff
	KindTransient Kind = "transient"  // 5xx, 529 overloaded, resets, truncated bodies: retried with backoff
	KindTimeout   Kind = "timeout"    // the per-call timeout expired: retried with backoff
	KindInvalid   Kind = "invalid"    // 400, 404, 422: the request is wrong; not retried
	KindAuth      Kind = "auth"       // 401, 403: not retried
	KindQuota     Kind = "quota"      // quota or credit exhausted: no further calls to the endpoint
	KindBudget    Kind = "budget"     // max_cost reached: no further calls to the endpoint
	KindCancelled Kind = "cancelled"  // the caller's context ended
	KindNotCached Kind = "not_cached" // evalflow plan's dry run: the cache had no answer
)

// Error is a classified call failure.
type Error struct {
	Kind       Kind
	Status     int           // HTTP status, 0 when none
	RetryAfter time.Duration // from Retry-After or rate-limit headers, 0 when none
	Msg        string
	Err        error
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("llm ")
	b.WriteString(string(e.Kind))
	if e.Status != 0 {
		fmt.Fprintf(&b, " (HTTP %d)", e.Status)
	}
	if e.Msg != "" {
		b.WriteString(": ")
		b.WriteString(e.Msg)
	} else if e.Err != nil {
		b.WriteString(": ")
		b.WriteString(e.Err.Error())
	}
	return b.String()
}

// Unwrap returns the underlying error.
func (e *Error) Unwrap() error { return e.Err }

// Retryable reports whether the Client retries this kind.
func (k Kind) Retryable() bool {
	return k == KindRateLimit || k == KindTransient || k == KindTimeout
}

// KindOf returns the kind of err: the Kind of the first *Error in its chain,
// KindCancelled for a context error, KindTransient otherwise.
func KindOf(err error) Kind {
	var e *Error
	if errors.As(err, &e) {
		return e.Kind
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return KindCancelled
	}
	return KindTransient
}

// ErrQuotaExhausted is returned (wrapped in *Error) for every call after an
// endpoint reported an exhausted quota.
var ErrQuotaExhausted = errors.New("quota exhausted; no further calls are made to this endpoint")

// ErrBudget is returned (wrapped in *Error) once an endpoint's max_cost is
// reached.
var ErrBudget = errors.New("max_cost reached; no further calls are made to this endpoint")

// classifyStatus maps an HTTP status to a kind.
func classifyStatus(status int) Kind {
	switch {
	case status == 429:
		return KindRateLimit
	case status == 401 || status == 403:
		return KindAuth
	case status == 408 || status == 409 || status >= 500:
		return KindTransient
	default:
		return KindInvalid
	}
}

// retryAfter reads Retry-After (seconds or an HTTP date) and the
// millisecond variant some servers send; 0 when absent.
func retryAfter(h http.Header, now time.Time) time.Duration {
	if h == nil {
		return 0
	}
	if v := h.Get("Retry-After-Ms"); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms > 0 {
			return time.Duration(ms * float64(time.Millisecond))
		}
	}
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil {
		if s <= 0 {
			return 0
		}
		return time.Duration(s * float64(time.Second))
	}
	if t, err := http.ParseTime(v); err == nil {
		if d := t.Sub(now); d > 0 {
			return d
		}
	}
	return 0
}

// rateLimitPause reads the providers' rate-limit headers and returns how
// long new calls should wait because a window is used up: OpenAI's
// x-ratelimit-remaining-{requests,tokens} with x-ratelimit-reset-* ("1s",
// "6m0s", "20ms") and Anthropic's anthropic-ratelimit-*-remaining with
// *-reset (RFC 3339). 0 when nothing is exhausted.
func rateLimitPause(h http.Header, now time.Time) time.Duration {
	if !hasRateLimitHeaders(h) {
		return 0
	}
	var d time.Duration
	for _, k := range openAIRateLimitHeaders {
		if h.Get(k[0]) == "0" {
			if r, err := parseResetDuration(h.Get(k[1])); err == nil && r > d {
				d = r
			}
		}
	}
	for _, k := range anthropicRateLimitHeaders {
		if h.Get(k[0]) == "0" {
			if t, err := time.Parse(time.RFC3339, h.Get(k[1])); err == nil {
				if r := t.Sub(now); r > d {
					d = r
				}
			}
		}
	}
	return d
}

// hasRateLimitHeaders reports whether h holds any rate-limit header (a
// response's keys are canonical): a local server sends none, and a look
// at its few keys is cheaper than six lookups.
func hasRateLimitHeaders(h http.Header) bool {
	for k := range h {
		if strings.HasPrefix(k, "X-Ratelimit-") || strings.HasPrefix(k, "Anthropic-Ratelimit-") {
			return true
		}
	}
	return false
}

// The rate-limit headers rateLimitPause reads, {remaining, reset}, in
// canonical form (built once, not per call).
var (
	openAIRateLimitHeaders = [][2]string{
		{"X-Ratelimit-Remaining-Requests", "X-Ratelimit-Reset-Requests"},
		{"X-Ratelimit-Remaining-Tokens", "X-Ratelimit-Reset-Tokens"},
	}
	anthropicRateLimitHeaders = [][2]string{
		{"Anthropic-Ratelimit-Requests-Remaining", "Anthropic-Ratelimit-Requests-Reset"},
		{"Anthropic-Ratelimit-Tokens-Remaining", "Anthropic-Ratelimit-Tokens-Reset"},
		{"Anthropic-Ratelimit-Input-Tokens-Remaining", "Anthropic-Ratelimit-Input-Tokens-Reset"},
		{"Anthropic-Ratelimit-Output-Tokens-Remaining", "Anthropic-Ratelimit-Output-Tokens-Reset"},
	}
)

// parseResetDuration parses OpenAI's reset values: Go-like durations such
// as "1s", "6m0s", "20ms", or a bare number of seconds.
func parseResetDuration(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, errors.New("empty")
	}
	if f, err := strconv.ParseFloat(s, 64); err == nil {
		return time.Duration(f * float64(time.Second)), nil
	}
	return time.ParseDuration(s)
}

package llm

import (
	"net/http"
	"testing"
	"time"
)

func TestRateLimitPause(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	h := func(kv ...string) http.Header {
		out := http.Header{}
		for i := 0; i < len(kv); i += 2 {
			out.Set(kv[i], kv[i+1])
		}
		return out
	}
	for _, tc := range []struct {
		name string
		h    http.Header
		want time.Duration
	}{
		{"none", nil, 0},
		{"local server", h("Content-Type", "application/json", "Content-Length", "12"), 0},
		{"openai left", h("x-ratelimit-remaining-requests", "5", "x-ratelimit-reset-requests", "1s"), 0},
		{"openai requests out", h("x-ratelimit-remaining-requests", "0", "x-ratelimit-reset-requests", "1.5s"), 1500 * time.Millisecond},
		{"openai tokens out", h("x-ratelimit-remaining-tokens", "0", "x-ratelimit-reset-tokens", "6m0s",
			"x-ratelimit-remaining-requests", "0", "x-ratelimit-reset-requests", "20ms"), 6 * time.Minute},
		{"anthropic out", h("anthropic-ratelimit-output-tokens-remaining", "0",
			"anthropic-ratelimit-output-tokens-reset", now.Add(3*time.Second).Format(time.RFC3339)), 3 * time.Second},
	} {
		if got := rateLimitPause(tc.h, now); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}

package llm

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"sort"
	"strings"
	"time"
)

// Providers are the wire protocols this build speaks.
var Providers = []string{"openai", "anthropic", "gemini"}

// Config is one endpoint: a model block. It holds no secret: the API key is
// read from the environment variable APIKeyEnv when the Client is built.
type Config struct {
	Name      string `json:"name,omitempty"` // the model block's name
	Provider  string `json:"provider"`
	BaseURL   string `json:"base_url,omitempty"`
	Model     string `json:"model"`
	APIKeyEnv string `json:"api_key_env,omitempty"`

	System      string   `json:"system,omitempty"`
	Temperature *float64 `json:"temperature,omitempty"`
	TopP        *float64 `json:"top_p,omitempty"`
	MaxTokens   int      `json:"max_tokens,omitempty"`
	Seed        *int64   `json:"seed,omitempty"`
	Stop        []string `json:"stop,omitempty"`

	Timeout     time.Duration `json:"timeout,omitempty"`      // per call; default DefaultTimeout
	MaxRetries  int           `json:"max_retries"`            // retries after the first try
	BackoffBase time.Duration `json:"backoff_base,omitempty"` // first backoff; doubles per retry
	BackoffMax  time.Duration `json:"backoff_max,omitempty"`
	Limits

	MaxCost     float64 `json:"max_cost,omitempty"`     // dollars; 0: no limit
	PriceInput  float64 `json:"price_input,omitempty"`  // dollars per million input tokens
	PriceOutput float64 `json:"price_output,omitempty"` // dollars per million output tokens
	// PriceSet is set when the model block declares a price (possibly 0,
	// a free local model); without one, evalflow plan says the cost is
	// unknown.
	PriceSet bool `json:"price_set,omitempty"`

	Cache    bool   `json:"cache"`               // use the response cache
	CacheDir string `json:"cache_dir,omitempty"` // "" : cache.DefaultPath's directory
}

// Defaults.
const (
	DefaultTimeout     = 60 * time.Second
	DefaultMaxRetries  = 5
	DefaultBackoffBase = 500 * time.Millisecond
	DefaultBackoffMax  = 30 * time.Second
)

// DefaultKeyEnv is the environment variable each provider's key is read
// from when a model block names none.
func DefaultKeyEnv(provider string) string {
	switch provider {
	case "anthropic":
		return "ANTHROPIC_API_KEY"
	case "gemini":
		return "GEMINI_API_KEY"
	}
	return "OPENAI_API_KEY"
}

// APIKey reads the endpoint's key from the environment (for gemini,
// GOOGLE_API_KEY too, as Google's tools do).
func (c Config) APIKey() string {
	env := c.APIKeyEnv
	if env == "" {
		env = DefaultKeyEnv(c.Provider)
	}
	if v := os.Getenv(env); v != "" {
		return v
	}
	if c.Provider == "gemini" && c.APIKeyEnv == "" {
		return os.Getenv("GOOGLE_API_KEY")
	}
	return ""
}

// Identity is the JSON of the endpoint's settings, which Shared uses to
// give one Client per endpoint.
func (c Config) Identity() string {
	b, _ := json.Marshal(c)
	return string(b)
}

// ConfigKeys are the attribute names ParseConfig accepts (a model block's
// attributes, plus name and block from the block itself).
var ConfigKeys = []string{
	"provider", "base_url", "model", "api_key_env", "system", "temperature", "top_p", "max_tokens",
	"seed", "stop", "timeout", "max_retries", "backoff_base", "backoff_max", "max_concurrency",
	"requests_per_minute", "tokens_per_minute", "max_cost", "price", "cache", "cache_dir",
}

// ParseConfig reads a model block's value as plain Go values (what
// dsl.GoValue makes of the model.NAME object): strings, float64, bool,
// []any, map[string]any. Durations are strings ("30s") or seconds.
func ParseConfig(m map[string]any) (Config, error) {
	c := Config{Timeout: DefaultTimeout, MaxRetries: DefaultMaxRetries, BackoffBase: DefaultBackoffBase,
		BackoffMax: DefaultBackoffMax, Cache: true}
	var errs []string
	bad := func(k, want string) { errs = append(errs, fmt.Sprintf("%s must be %s, got %v", k, want, m[k])) }
	str := func(k string, dst *string) {
		if v, ok := m[k]; ok && v != nil {
			if s, ok := v.(string); ok {
				*dst = s
			} else {
				bad(k, "a string")
			}
		}
	}
	num := func(k string) (float64, bool) {
		v, ok := m[k]
		if !ok || v == nil {
			return 0, false
		}
		switch x := v.(type) {
		case float64:
			return x, true
		case int:
			return float64(x), true
		case int64:
			return float64(x), true
		}
		bad(k, "a number")
		return 0, false
	}
	whole := func(k string, lo, hi float64) (int, bool) {
		f, ok := num(k)
		if !ok {
			return 0, false
		}
		if f != math.Trunc(f) || f < lo || f > hi {
			bad(k, fmt.Sprintf("a whole number in [%g, %g]", lo, hi))
			return 0, false
		}
		return int(f), true
	}
	dur := func(k string, dst *time.Duration) {
		v, ok := m[k]
		if !ok || v == nil {
			return
		}
		switch x := v.(type) {
		case string:
			d, err := time.ParseDuration(x)
			if err != nil || d < 0 {
				bad(k, "a duration such as \"30s\"")
				return
			}
			*dst = d
		case float64:
			*dst = time.Duration(x * float64(time.Second))
		default:
			bad(k, "a duration")
		}
	}
	str("name", &c.Name)
	str("provider", &c.Provider)
	str("base_url", &c.BaseURL)
	str("model", &c.Model)
	str("api_key_env", &c.APIKeyEnv)
	str("system", &c.System)
	str("cache_dir", &c.CacheDir)
	if f, ok := num("temperature"); ok {
		c.Temperature = &f
	}
	if f, ok := num("top_p"); ok {
		c.TopP = &f
	}
	if n, ok := whole("max_tokens", 1, 1<<24); ok {
		c.MaxTokens = n
	}
	if n, ok := whole("seed", math.MinInt32, math.MaxInt32); ok {
		s := int64(n)
		c.Seed = &s
	}
	if v, ok := m["stop"]; ok && v != nil {
		switch x := v.(type) {
		case string:
			c.Stop = []string{x}
		case []any:
			for _, e := range x {
				s, ok := e.(string)
				if !ok {
					bad("stop", "a list of strings")
					break
				}
				c.Stop = append(c.Stop, s)
			}
		default:
			bad("stop", "a list of strings")
		}
	}
	dur("timeout", &c.Timeout)
	dur("backoff_base", &c.BackoffBase)
	dur("backoff_max", &c.BackoffMax)
	if n, ok := whole("max_retries", 0, 100); ok {
		c.MaxRetries = n
	}
	if n, ok := whole("max_concurrency", 1, 1<<16); ok {
		c.MaxConcurrency = n
	}
	if f, ok := num("requests_per_minute"); ok {
		c.RequestsPerMinute = f
	}
	if f, ok := num("tokens_per_minute"); ok {
		c.TokensPerMinute = f
	}
	if f, ok := num("max_cost"); ok {
		c.MaxCost = f
	}
	if v, ok := m["price"]; ok && v != nil {
		p, ok := v.(map[string]any)
		if !ok {
			bad("price", "an object { input = DOLLARS_PER_MTOK, output = DOLLARS_PER_MTOK }")
		} else {
			c.PriceSet = true
			for k, pv := range p {
				f, ok := pv.(float64)
				switch {
				case !ok:
					errs = append(errs, fmt.Sprintf("price.%s must be a number", k))
				case k == "input":
					c.PriceInput = f
				case k == "output":
					c.PriceOutput = f
				default:
					errs = append(errs, fmt.Sprintf("price has no %q (use input and output, dollars per million tokens)", k))
				}
			}
		}
	}
	if v, ok := m["cache"]; ok && v != nil {
		b, ok := v.(bool)
		if !ok {
			bad("cache", "a bool")
		}
		c.Cache = b
	}
	if c.Provider == "" {
		c.Provider = "openai"
	}
	if !contains(Providers, c.Provider) {
		errs = append(errs, fmt.Sprintf("provider %q is not one of %s", c.Provider, strings.Join(Providers, ", ")))
	}
	if c.Model == "" {
		errs = append(errs, "model (the provider's model name) is required")
	}
	if len(errs) > 0 {
		sort.Strings(errs)
		return c, fmt.Errorf("%s", strings.Join(errs, "; "))
	}
	return c, nil
}

func contains(xs []string, s string) bool {
	for _, x := range xs {
		if x == s {
			return true
		}
	}
	return false
}

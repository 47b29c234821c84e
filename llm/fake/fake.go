// Package fake serves the three model wire protocols evalflow speaks —
// OpenAI chat completions, Anthropic messages and Gemini generateContent —
// on a loopback port, for tests and benchmarks. A Server answers with a
// Responder and can misbehave on demand from a script of Faults consumed
// one per request: 429 with Retry-After, 500, 529 overloaded, a response
// slower than the client's timeout, truncated JSON, a reset connection, an
// exhausted quota, 400 and 401.
//
// It only ever listens on 127.0.0.1 and is closed by Close (tests use
// t.Cleanup). Safe for concurrent requests.
package fake

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Protocols a Server can speak.
const (
	OpenAI    = "openai"
	Anthropic = "anthropic"
	Gemini    = "gemini"
)

// Request is what the server understood of a call.
type Request struct {
	Model    string
	System   string
	Messages []Message
	At       time.Time
}

// Message is one turn of a request.
type Message struct{ Role, Content string }

// Prompt is every message's content, joined by newlines.
func (r Request) Prompt() string {
	var parts []string
	for _, m := range r.Messages {
		parts = append(parts, m.Content)
	}
	return strings.Join(parts, "\n")
}

// Fault is one scripted misbehaviour.
type Fault struct {
	Kind       string        // see the Fault constructors
	RetryAfter time.Duration // for RateLimit
	Delay      time.Duration // for Slow
}

// Fault kinds.
const (
	FaultRateLimit = "rate_limit" // 429 + Retry-After
	FaultServer    = "server"     // 500
	FaultOverload  = "overloaded" // 529 (Anthropic's overloaded_error; 503 for the others)
	FaultSlow      = "slow"       // answer after Delay
	FaultTruncated = "truncated"  // 200 with half a JSON body
	FaultReset     = "reset"      // connection reset, no response
	FaultQuota     = "quota"      // the provider's quota-exhausted error
	FaultBad       = "bad"        // 400
	FaultAuth      = "auth"       // 401
)

// Responder computes the completion text for a request.
type Responder func(r Request) string

// Server is a fake endpoint.
type Server struct {
	Protocol string
	// URL is the base URL to give the client: …/v1 for OpenAI, the root
	// for Anthropic and Gemini (their SDKs add the version path).
	URL string

	srv     *httptest.Server
	respond Responder
	latency time.Duration
	modelID func(requested string) string // the model id answers report
	sysFP   string                        // OpenAI's system_fingerprint; "": null

	noLog bool // WithoutRequestLog

	mu       sync.Mutex
	script   []Fault
	sticky   *Fault // repeats forever once reached (quota)
	requests []Request
	scripted atomic.Bool // script or sticky holds a fault (read without mu)

	calls    atomic.Int64
	conns    atomic.Int64
	inflight atomic.Int64
	peak     atomic.Int64
	turn     turnaround
}

// Option configures a Server.
type Option func(*Server)

// WithLatency delays every answer by d (the benchmark's fixed latency).
func WithLatency(d time.Duration) Option { return func(s *Server) { s.latency = d } }

// WithResponder sets how completions are computed (default: a fenced
// "SELECT 1").
func WithResponder(r Responder) Option { return func(s *Server) { s.respond = r } }

// WithModelID sets the model id answers report for a requested model, as
// the real APIs resolve an alias to a snapshot ("gpt-4o" →
// "gpt-4o-2024-08-06"): OpenAI's and Anthropic's `model`, Gemini's
// `modelVersion`. Default: the requested name unchanged.
func WithModelID(f func(requested string) string) Option { return func(s *Server) { s.modelID = f } }

// WithSystemFingerprint makes OpenAI answers carry system_fingerprint fp
// (default null, as OpenAI sends for some models and compatible servers
// do). The other protocols have no such field.
func WithSystemFingerprint(fp string) Option { return func(s *Server) { s.sysFP = fp } }

// WithoutRequestLog keeps no record of the requests (Requests returns
// none): a long benchmark's server does not accumulate every prompt it was
// sent.
func WithoutRequestLog() Option { return func(s *Server) { s.noLog = true } }

// New starts a server for protocol on 127.0.0.1.
func New(protocol string, opts ...Option) *Server {
	s := &Server{Protocol: protocol, respond: func(Request) string { return "```sql\nSELECT 1\n```" }}
	for _, o := range opts {
		o(s)
	}
	s.srv = httptest.NewUnstartedServer(http.HandlerFunc(s.handle))
	s.srv.Config.ConnContext = func(ctx context.Context, _ net.Conn) context.Context {
		return context.WithValue(ctx, connKey{}, &connState{})
	}
	s.srv.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		if st == http.StateNew {
			s.conns.Add(1)
		}
	}
	s.srv.Start()
	s.URL = s.srv.URL
	if protocol == OpenAI {
		s.URL += "/v1"
	}
	return s
}

// Close stops the server.
func (s *Server) Close() { s.srv.CloseClientConnections(); s.srv.Close() }

// Script queues faults for the next requests, in order; requests after
// them are answered normally. A FaultQuota stays: every later request gets
// it too, as a real exhausted quota does.
func (s *Server) Script(f ...Fault) {
	s.mu.Lock()
	s.script = append(s.script, f...)
	s.scripted.Store(len(s.script) > 0 || s.sticky != nil)
	s.mu.Unlock()
}

// Calls is the number of requests received.
func (s *Server) Calls() int { return int(s.calls.Load()) }

// Conns is the number of connections clients opened: a client that keeps
// its connections alive opens about as many as it has calls in flight.
func (s *Server) Conns() int { return int(s.conns.Load()) }

// Turnaround summarises the client's turnaround on a kept-alive
// connection: the time from the end of an answer to the next request on
// the same connection (the end is when the handler returns; the answer
// still has to be written). A client that keeps its calls in flight back
// to back has a turnaround of well under a millisecond; whatever it does
// between calls — its own processing, its pipeline, its scheduling —
// shows up here. Quantiles are bucket upper bounds.
func (s *Server) Turnaround() TurnaroundStats { return s.turn.stats() }

// ResetTurnaround forgets the turnarounds so far.
func (s *Server) ResetTurnaround() {
	t := &s.turn
	t.n.Store(0)
	t.sum.Store(0)
	t.max.Store(0)
	for i := range t.buckets {
		t.buckets[i].Store(0)
	}
}

// TurnaroundStats summarises turnarounds.
type TurnaroundStats struct {
	N                  int64
	Mean               time.Duration
	P50, P90, P99, Max time.Duration
}

func (t TurnaroundStats) String() string {
	return fmt.Sprintf("%d turnarounds: mean %v, p50 ≤ %v, p90 ≤ %v, p99 ≤ %v, max %v", t.N,
		t.Mean.Round(time.Microsecond), t.P50, t.P90, t.P99, t.Max.Round(time.Microsecond))
}

type connKey struct{}

// connState is one connection's: written only by the handler of its
// current request.
type connState struct{ last time.Time }

// turnaround is a histogram of durations in power-of-two microsecond
// buckets, added to without a lock.
type turnaround struct {
	n, sum, max atomic.Int64
	buckets     [32]atomic.Int64 // bucket i: < 2^i µs
}

func (t *turnaround) add(d time.Duration) {
	t.n.Add(1)
	t.sum.Add(int64(d))
	for {
		m := t.max.Load()
		if int64(d) <= m || t.max.CompareAndSwap(m, int64(d)) {
			break
		}
	}
	us := d.Microseconds()
	i := 0
	for i < len(t.buckets)-1 && us >= 1<<i {
		i++
	}
	t.buckets[i].Add(1)
}

func (t *turnaround) stats() TurnaroundStats {
	st := TurnaroundStats{N: t.n.Load(), Max: time.Duration(t.max.Load())}
	if st.N == 0 {
		return st
	}
	st.Mean = time.Duration(t.sum.Load() / st.N)
	var seen int64
	for i := range t.buckets {
		seen += t.buckets[i].Load()
		upper := time.Duration(1<<i) * time.Microsecond
		if st.P50 == 0 && float64(seen) >= 0.5*float64(st.N) {
			st.P50 = upper
		}
		if st.P90 == 0 && float64(seen) >= 0.9*float64(st.N) {
			st.P90 = upper
		}
		if st.P99 == 0 && float64(seen) >= 0.99*float64(st.N) {
			st.P99 = upper
		}
	}
	return st
}

// PeakInFlight is the most requests handled at once.
func (s *Server) PeakInFlight() int { return int(s.peak.Load()) }

// Requests returns the requests received, in arrival order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

func (s *Server) next() *Fault {
	if !s.scripted.Load() {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.sticky != nil {
		return s.sticky
	}
	if len(s.script) == 0 {
		return nil
	}
	f := s.script[0]
	s.script = s.script[1:]
	if f.Kind == FaultQuota {
		s.sticky = &f
	}
	s.scripted.Store(len(s.script) > 0 || s.sticky != nil)
	return &f
}

func (s *Server) handle(w http.ResponseWriter, r *http.Request) {
	if cs, ok := r.Context().Value(connKey{}).(*connState); ok {
		// Requests on a connection come one after the other: the handler
		// of the last one has returned.
		if !cs.last.IsZero() {
			s.turn.add(time.Since(cs.last))
		}
		defer func() { cs.last = time.Now() }()
	}
	s.calls.Add(1)
	n := s.inflight.Add(1)
	defer s.inflight.Add(-1)
	for {
		p := s.peak.Load()
		if n <= p || s.peak.CompareAndSwap(p, n) {
			break
		}
	}
	body, _ := readBody(r)
	req, err := s.parse(r, body)
	if err != nil {
		s.fail(w, http.StatusBadRequest, "invalid_request_error", err.Error())
		return
	}
	if !s.noLog {
		req.At = time.Now()
		s.mu.Lock()
		s.requests = append(s.requests, req)
		s.mu.Unlock()
	}

	if s.latency > 0 && !wait(r, s.latency) {
		return
	}
	f := s.next()
	if f != nil {
		switch f.Kind {
		case FaultRateLimit:
			secs := f.RetryAfter.Seconds()
			w.Header().Set("Retry-After", strconv.FormatFloat(secs, 'f', -1, 64))
			w.Header().Set("Retry-After-Ms", strconv.FormatInt(f.RetryAfter.Milliseconds(), 10))
			s.fail(w, 429, "rate_limit_error", "Rate limit reached; retry after "+f.RetryAfter.String())
			return
		case FaultServer:
			s.fail(w, 500, "api_error", "internal server error")
			return
		case FaultOverload:
			code := 503
			if s.Protocol == Anthropic {
				code = 529
			}
			s.fail(w, code, "overloaded_error", "Overloaded")
			return
		case FaultSlow:
			if !wait(r, f.Delay) {
				return
			}
		case FaultTruncated:
			b := s.success(req)
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(200)
			w.Write(b[:len(b)/2])
			return
		case FaultReset:
			reset(w)
			return
		case FaultQuota:
			s.quota(w)
			return
		case FaultBad:
			s.fail(w, 400, "invalid_request_error", "bad request")
			return
		case FaultAuth:
			s.fail(w, 401, "authentication_error", "invalid x-api-key")
			return
		}
	}
	w.Header().Set("Content-Type", "application/json")
	w.Write(s.success(req))
}

// wait waits d, false when the client went away first.
func wait(r *http.Request, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-r.Context().Done():
		return false
	}
}

// readBody reads a request's body, in one allocation when its length is
// known.
func readBody(r *http.Request) ([]byte, error) {
	if n := r.ContentLength; n >= 0 && n < 1<<24 {
		b := make([]byte, n)
		_, err := io.ReadFull(r.Body, b)
		return b, err
	}
	return io.ReadAll(r.Body)
}

// openAIAnswer is the chat completion the fake sends, encoded by hand:
// the benchmark's server answers thousands of these a second, and
// encoding/json of a map cost more than the rest of a request.
func openAIAnswer(model, fp, text string, in, out int) []byte {
	b := make([]byte, 0, 320+len(model)+len(fp)+len(text))
	b = append(b, `{"id":"chatcmpl-fake","object":"chat.completion","created":0,"model":`...)
	b = appendString(b, model)
	b = append(b, `,"system_fingerprint":`...)
	if fp == "" {
		b = append(b, "null"...)
	} else {
		b = appendString(b, fp)
	}
	b = append(b, `,"choices":[{"index":0,"finish_reason":"stop","logprobs":null,"message":{"role":"assistant","content":`...)
	b = appendString(b, text)
	b = append(b, `,"refusal":null}}],"usage":{"prompt_tokens":`...)
	b = strconv.AppendInt(b, int64(in), 10)
	b = append(b, `,"completion_tokens":`...)
	b = strconv.AppendInt(b, int64(out), 10)
	b = append(b, `,"total_tokens":`...)
	b = strconv.AppendInt(b, int64(in+out), 10)
	return append(b, "}}"...)
}

// appendString appends s as a JSON string: printable ASCII as it is,
// anything else through encoding/json.
func appendString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x80 || c == '"' || c == '\\' {
			q, _ := json.Marshal(s)
			return append(b, q...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

// reset closes the connection with an RST (SO_LINGER 0), mid-request.
func reset(w http.ResponseWriter) {
	hj, ok := w.(http.Hijacker)
	if !ok {
		panic("fake: cannot hijack")
	}
	conn, _, err := hj.Hijack()
	if err != nil {
		return
	}
	if tc, ok := conn.(*net.TCPConn); ok {
		tc.SetLinger(0)
	}
	conn.Close()
}

func tokens(s string) int { return len(s)/4 + 1 }

// promptTokens is tokens(req.System + req.Prompt()), without building the
// string.
func promptTokens(req Request) int {
	n := len(req.System)
	for i, m := range req.Messages {
		if i > 0 {
			n++ // Prompt's "\n"
		}
		n += len(m.Content)
	}
	return n/4 + 1
}

func (s *Server) success(req Request) []byte {
	text := s.respond(req)
	in, out := promptTokens(req), tokens(text)
	model := req.Model
	if s.modelID != nil {
		model = s.modelID(req.Model)
	}
	var v any
	switch s.Protocol {
	case Anthropic:
		v = map[string]any{"id": "msg_fake", "type": "message", "role": "assistant", "model": model,
			"content":     []any{map[string]any{"type": "text", "text": text}},
			"stop_reason": "end_turn", "stop_sequence": nil,
			"usage": map[string]any{"input_tokens": in, "output_tokens": out}}
	case Gemini:
		v = map[string]any{
			"candidates": []any{map[string]any{"index": 0, "finishReason": "STOP",
				"content": map[string]any{"role": "model", "parts": []any{map[string]any{"text": text}}}}},
			"usageMetadata": map[string]any{"promptTokenCount": in, "candidatesTokenCount": out, "totalTokenCount": in + out},
			"modelVersion":  model}
	default:
		return openAIAnswer(model, s.sysFP, text, in, out)
	}
	b, _ := json.Marshal(v)
	return b
}

func (s *Server) fail(w http.ResponseWriter, code int, typ, msg string) {
	var v any
	switch s.Protocol {
	case Anthropic:
		v = map[string]any{"type": "error", "error": map[string]any{"type": typ, "message": msg}}
	case Gemini:
		status := map[int]string{400: "INVALID_ARGUMENT", 401: "UNAUTHENTICATED", 429: "RESOURCE_EXHAUSTED", 500: "INTERNAL", 503: "UNAVAILABLE"}[code]
		e := map[string]any{"code": code, "message": msg, "status": status}
		if code == 429 {
			if ra := w.Header().Get("Retry-After-Ms"); ra != "" {
				ms, _ := strconv.Atoi(ra)
				e["details"] = []any{map[string]any{"@type": "type.googleapis.com/google.rpc.RetryInfo",
					"retryDelay": fmt.Sprintf("%gs", float64(ms)/1000)}}
			}
		}
		v = map[string]any{"error": e}
	default:
		v = map[string]any{"error": map[string]any{"message": msg, "type": typ, "param": nil, "code": typ}}
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	json.NewEncoder(w).Encode(v)
}

func (s *Server) quota(w http.ResponseWriter) {
	var v any
	code := 429
	switch s.Protocol {
	case Anthropic:
		code = 400
		v = map[string]any{"type": "error", "error": map[string]any{"type": "invalid_request_error",
			"message": "Your credit balance is too low to access the Anthropic API. Please go to Plans & Billing to upgrade or purchase credits."}}
	case Gemini:
		v = map[string]any{"error": map[string]any{"code": 429, "status": "RESOURCE_EXHAUSTED",
			"message": "You exceeded your current quota, please check your plan and billing details.",
			"details": []any{map[string]any{"@type": "type.googleapis.com/google.rpc.QuotaFailure",
				"violations": []any{map[string]any{"quotaId": "GenerateRequestsPerDayPerProjectPerModel-FreeTier"}}}}}}
	default:
		v = map[string]any{"error": map[string]any{"message": "You exceeded your current quota, please check your plan and billing details.",
			"type": "insufficient_quota", "param": nil, "code": "insufficient_quota"}}
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	json.NewEncoder(w).Encode(v)
}

// parse reads the request body of the server's protocol.
func (s *Server) parse(r *http.Request, body []byte) (Request, error) {
	var out Request
	switch s.Protocol {
	case Anthropic:
		if !strings.HasSuffix(r.URL.Path, "/v1/messages") {
			return out, fmt.Errorf("unexpected path %s", r.URL.Path)
		}
		var b struct {
			Model  string `json:"model"`
			System []struct {
				Text string `json:"text"`
			} `json:"system"`
			Messages []struct {
				Role    string `json:"role"`
				Content []struct {
					Text string `json:"text"`
				} `json:"content"`
			} `json:"messages"`
		}
		if err := json.Unmarshal(body, &b); err != nil {
			return out, err
		}
		out.Model = b.Model
		for _, t := range b.System {
			out.System += t.Text
		}
		for _, m := range b.Messages {
			var t strings.Builder
			for _, c := range m.Content {
				t.WriteString(c.Text)
			}
			out.Messages = append(out.Messages, Message{m.Role, t.String()})
		}
	case Gemini:
		i := strings.Index(r.URL.Path, "/models/")
		if i < 0 || !strings.HasSuffix(r.URL.Path, ":generateContent") {
			return out, fmt.Errorf("unexpected path %s", r.URL.Path)
		}
		out.Model = strings.TrimSuffix(r.URL.Path[i+len("/models/"):], ":generateContent")
		type content struct {
			Role  string `json:"role"`
			Parts []struct {
				Text string `json:"text"`
			} `json:"parts"`
		}
		var b struct {
			Contents          []content `json:"contents"`
			SystemInstruction *content  `json:"systemInstruction"`
		}
		if err := json.Unmarshal(body, &b); err != nil {
			return out, err
		}
		text := func(c content) string {
			var t strings.Builder
			for _, p := range c.Parts {
				t.WriteString(p.Text)
			}
			return t.String()
		}
		if b.SystemInstruction != nil {
			out.System = text(*b.SystemInstruction)
		}
		for _, c := range b.Contents {
			role := c.Role
			if role == "model" {
				role = "assistant"
			}
			out.Messages = append(out.Messages, Message{role, text(c)})
		}
	default:
		if !strings.HasSuffix(r.URL.Path, "/chat/completions") {
			return out, fmt.Errorf("unexpected path %s", r.URL.Path)
		}
		var b struct {
			Model    string `json:"model"`
			Messages []struct {
				Role    string `json:"role"`
				Content string `json:"content"`
			} `json:"messages"`
		}
		if err := json.Unmarshal(body, &b); err != nil {
			return out, err
		}
		out.Model = b.Model
		for _, m := range b.Messages {
			if m.Role == "system" || m.Role == "developer" {
				out.System += m.Content
				continue
			}
			out.Messages = append(out.Messages, Message{m.Role, m.Content})
		}
	}
	return out, nil
}

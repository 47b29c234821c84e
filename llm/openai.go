package llm

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"sync"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/tidwall/gjson"
)

// OpenAI speaks the chat completions protocol: api.openai.com and every
// OpenAI-compatible server (vLLM, Ollama, llama.cpp server, LM Studio,
// OpenRouter) by base URL. Safe for concurrent use.
//
// The official SDK decides what a call looks like — the URL from the base
// URL (or OPENAI_BASE_URL), the auth, organization, project and custom
// headers (OPENAI_* variables), its User-Agent and X-Stainless-* headers —
// and an error answer is its *openai.Error, built as the SDK builds it. But
// the SDK's per-call machinery (a request config with its options,
// middleware chain and origin checks, a request clone, reflective JSON)
// cost more CPU than the HTTP round trip itself at hundreds of calls in
// flight, so a call is a plain net/http request: the SDK's request is
// captured once (URL and headers, sent by no one), each call sends those
// with its own body, the redirect policy is the SDK's (every hop keeps the
// base URL's origin), and the body and the answer use fixed structs. An
// answer the fixed struct cannot read (a field of an unexpected type from
// a compatible server) is decoded by the SDK's lenient decoder instead.
type OpenAI struct {
	client openai.Client
	base   *http.Client // newHTTPClient's, as given to the SDK

	once   sync.Once
	tmpl   *http.Request     // the SDK's POST chat/completions: URL and headers (read-only)
	urlStr string            // tmpl.URL, for errors
	rt     http.RoundTripper // base's transport behind the SDK's origin check
	http   *http.Client      // the same, following redirects
	err    error             // why the template could not be built
}

// NewOpenAI returns a provider for baseURL ("" for OpenAI's) with apiKey
// ("" is sent as a placeholder, which local servers accept).
func NewOpenAI(baseURL, apiKey string, maxConns int) *OpenAI {
	if apiKey == "" {
		apiKey = "EMPTY"
	}
	hc := newHTTPClient(maxConns)
	opts := []option.RequestOption{
		option.WithAPIKey(apiKey),
		option.WithMaxRetries(0),
		option.WithHTTPClient(hc),
	}
	if baseURL != "" {
		opts = append(opts, option.WithBaseURL(strings.TrimSuffix(baseURL, "/")+"/"))
	}
	return &OpenAI{client: openai.NewClient(opts...), base: hc}
}

// errCaptured stops the SDK's template request before it is sent.
var errCaptured = errors.New("llm: request captured")

// template returns the SDK's request for POST chat/completions, built once
// and never sent: its URL and headers are every call's.
func (p *OpenAI) template() (*http.Request, error) {
	p.once.Do(func() {
		var got *http.Request
		capture := func(r *http.Request, _ option.MiddlewareNext) (*http.Response, error) {
			got = r
			return nil, errCaptured
		}
		err := p.client.Post(context.Background(), "chat/completions", []byte("{}"), nil, option.WithMiddleware(capture))
		if got == nil {
			if err == nil {
				err = errors.New("the SDK sent no request")
			}
			p.err = err
			return
		}
		h := got.Header.Clone()
		h.Del("Content-Length")
		tmpl := &http.Request{Method: http.MethodPost, URL: got.URL, Host: got.Host, Header: h}
		origin := &url.URL{Scheme: got.URL.Scheme, Host: got.URL.Host}
		p.rt = originTransport{origin: origin, next: p.base.Transport}
		p.http = &http.Client{Transport: p.rt, CheckRedirect: p.base.CheckRedirect, Jar: p.base.Jar, Timeout: p.base.Timeout}
		p.tmpl, p.urlStr = tmpl, stripPassword(got.URL)
	})
	return p.tmpl, p.err
}

// chatRequest is the body of POST chat/completions, the fields evalflow
// sets (the SDK's ChatCompletionNewParams sends the same JSON for them).
type chatRequest struct {
	Model       string        `json:"model"`
	Messages    []chatMessage `json:"messages"`
	Temperature *float64      `json:"temperature,omitempty"`
	TopP        *float64      `json:"top_p,omitempty"`
	MaxTokens   int           `json:"max_tokens,omitempty"`
	Seed        *int64        `json:"seed,omitempty"`
	Stop        []string      `json:"stop,omitempty"`
}

type chatMessage struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

// chatResponse is the part of a chat completion evalflow reads.
type chatResponse struct {
	Model             string       `json:"model"`
	SystemFingerprint string       `json:"system_fingerprint"`
	Choices           []chatChoice `json:"choices"`
	Usage             struct {
		PromptTokens     int64 `json:"prompt_tokens"`
		CompletionTokens int64 `json:"completion_tokens"`
	} `json:"usage"`
}

type chatChoice struct {
	FinishReason string `json:"finish_reason"`
	Message      struct {
		Content string `json:"content"`
	} `json:"message"`
}

// Complete sends one chat completion.
func (p *OpenAI) Complete(ctx context.Context, req *Request) (*Response, error) {
	body := chatRequest{Model: req.Model, Temperature: req.Temperature, TopP: req.TopP, Seed: req.Seed, Stop: req.Stop}
	if req.MaxTokens > 0 {
		body.MaxTokens = req.MaxTokens
	}
	body.Messages = make([]chatMessage, 0, len(req.Messages)+1)
	if req.System != "" {
		body.Messages = append(body.Messages, chatMessage{Role: "system", Content: req.System})
	}
	for _, m := range req.Messages {
		role := "user"
		if m.Role == "assistant" {
			role = "assistant"
		}
		body.Messages = append(body.Messages, chatMessage{Role: role, Content: m.Content})
	}
	// Not pooled: the transport may still hold the body after the call.
	size := 256 + len(req.System)
	for _, m := range req.Messages {
		size += len(m.Content) + 32
	}
	enc, ok := appendChatRequest(make([]byte, 0, size), &body)
	if !ok {
		var buf bytes.Buffer
		e := json.NewEncoder(&buf)
		e.SetEscapeHTML(false)
		err := e.Encode(&body)
		if err == nil {
			err = errors.New("unencodable request")
		}
		return nil, &Error{Kind: KindInvalid, Msg: "encoding the request: " + err.Error(), Err: err}
	}
	tmpl, err := p.template()
	if err != nil {
		// What the SDK's client.Post returned for every call (an unusable
		// base URL), classified as before.
		return nil, classifyTransport(ctx, err)
	}
	ctx, cap := withCapture(ctx)
	raw, err := p.post(ctx, tmpl, enc)
	if err != nil {
		var ae *openai.Error
		if errors.As(err, &ae) {
			_, h := cap.get()
			quota := ae.Code == "insufficient_quota" || ae.Type == "insufficient_quota"
			msg := ae.Message
			if msg == "" {
				msg = strings.TrimSpace(ae.RawJSON())
			}
			e := apiError(ae.StatusCode, h, msg, quota)
			e.Err = err
			return nil, e
		}
		return nil, classifyTransport(ctx, err)
	}
	// The SDK's []byte destination took any content type, its typed
	// destination only JSON; so does this.
	_, h := cap.get()
	if ct := h.Get("Content-Type"); !isJSON(ct) {
		return nil, classifyTransport(ctx, fmt.Errorf("expected destination type of 'string' or '[]byte' for responses with content-type '%s' that is not 'application/json'", ct))
	}
	var out chatResponse
	if !decodeChat(raw, &out) {
		out = chatResponse{}
		if err := json.Unmarshal(raw, &out); err != nil {
			var se *json.SyntaxError
			if errors.As(err, &se) {
				return nil, classifyTransport(ctx, fmt.Errorf("error parsing response json: %w", err))
			}
			return openAISDKDecode(ctx, raw)
		}
	}
	if len(out.Choices) == 0 {
		return nil, &Error{Kind: KindTransient, Msg: "response has no choices"}
	}
	return &Response{
		Text:         out.Choices[0].Message.Content,
		InputTokens:  int(out.Usage.PromptTokens),
		OutputTokens: int(out.Usage.CompletionTokens),
		FinishReason: out.Choices[0].FinishReason,
		Model:        out.Model,
		// Marked deprecated in the SDK but still sent by OpenAI's API
		// (and by some compatible servers); null or absent reads as "".
		SystemFingerprint: out.SystemFingerprint,
	}, nil
}

// openAISDKDecode reads an answer with the SDK's lenient decoder, which
// takes a field of an unexpected type as its zero value.
func openAISDKDecode(ctx context.Context, raw []byte) (*Response, error) {
	var out openai.ChatCompletion
	if err := json.Unmarshal(raw, &out); err != nil {
		return nil, classifyTransport(ctx, fmt.Errorf("error parsing response json: %w", err))
	}
	if len(out.Choices) == 0 {
		return nil, &Error{Kind: KindTransient, Msg: "response has no choices"}
	}
	return &Response{
		Text:              out.Choices[0].Message.Content,
		InputTokens:       int(out.Usage.PromptTokens),
		OutputTokens:      int(out.Usage.CompletionTokens),
		FinishReason:      out.Choices[0].FinishReason,
		Model:             out.Model,
		SystemFingerprint: out.SystemFingerprint,
	}, nil
}

func isJSON(contentType string) bool {
	if contentType == "application/json" {
		return true // what servers send, without mime's parsing
	}
	mt, _, _ := mime.ParseMediaType(contentType)
	return strings.Contains(mt, "application/json") || strings.HasSuffix(mt, "+json")
}

// post sends body as the SDK's client.Post does with MaxRetries 0 and a
// []byte destination, and returns the answer's body or the SDK's errors:
// the context's error once it is done, *openai.Error (built by the SDK's
// own decoder from the body's "error" member) for a status ≥ 400, the
// transport's error otherwise.
func (p *OpenAI) post(ctx context.Context, tmpl *http.Request, body []byte) ([]byte, error) {
	req := &http.Request{
		Method: http.MethodPost, URL: tmpl.URL, Host: tmpl.Host,
		Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		// Shared by every call: net/http only reads a request's headers
		// (a redirect or an auth rewrite copies them first).
		Header:        tmpl.Header,
		Body:          io.NopCloser(bytes.NewReader(body)),
		ContentLength: int64(len(body)),
		GetBody:       func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil },
	}
	req = req.WithContext(ctx)
	res, err := p.send(req)
	if ctx.Err() != nil {
		if res != nil && res.Body != nil {
			res.Body.Close()
		}
		return nil, ctx.Err()
	}
	if err != nil {
		return nil, err
	}
	if res.StatusCode >= 400 {
		contents, err := io.ReadAll(res.Body)
		res.Body.Close()
		if err != nil {
			return nil, err
		}
		res.Body = io.NopCloser(bytes.NewReader(contents))
		aerr := openai.Error{Request: req, Response: res, StatusCode: res.StatusCode}
		if err := aerr.UnmarshalJSON([]byte(gjson.GetBytes(contents, "error").Raw)); err != nil {
			return nil, err
		}
		return nil, &aerr
	}
	contents, err := readBody(res)
	res.Body.Close()
	if err != nil {
		return nil, fmt.Errorf("error reading response body: %w", err)
	}
	return contents, nil
}

// send is http.Client.Do(req) for a client without a cookie jar or a
// timeout: the transport's answer, or the redirects followed by the
// client, and a transport error wrapped in *url.Error. It skips what
// Client.Do does per call for redirects it may have to follow (a copy of
// the request's headers) until a redirect comes: then the request is sent
// again through the client, which follows it as the SDK's client did
// (the redirecting server sees the request twice).
func (p *OpenAI) send(req *http.Request) (*http.Response, error) {
	if p.base.Jar != nil || p.base.Timeout != 0 {
		return p.http.Do(req)
	}
	res, err := p.rt.RoundTrip(req)
	if err != nil {
		return nil, &url.Error{Op: "Post", URL: p.urlStr, Err: err}
	}
	switch res.StatusCode {
	case http.StatusMovedPermanently, http.StatusFound, http.StatusSeeOther,
		http.StatusTemporaryRedirect, http.StatusPermanentRedirect:
		if res.Header.Get("Location") == "" {
			return res, nil // Client.Do returns these as they are
		}
		res.Body.Close()
		again := req.Clone(req.Context())
		body, err := req.GetBody()
		if err != nil {
			return nil, err
		}
		again.Body = body
		return p.http.Do(again)
	}
	return res, nil
}

// stripPassword is how net/http's client names a URL in its errors.
func stripPassword(u *url.URL) string {
	if _, set := u.User.Password(); set {
		return strings.Replace(u.String(), u.User.String()+"@", u.User.Username()+":***@", 1)
	}
	return u.String()
}

// readBody reads a response's body in one allocation when its length is
// known.
func readBody(res *http.Response) ([]byte, error) {
	n := res.ContentLength
	if n < 0 || n > 1<<20 {
		return io.ReadAll(res.Body)
	}
	b := make([]byte, n, n+1)
	if _, err := io.ReadFull(res.Body, b); err != nil {
		return nil, err
	}
	// Read to EOF, so that the connection goes back to the pool now.
	var one [1]byte
	if k, err := res.Body.Read(one[:]); k > 0 || (err != nil && err != io.EOF) {
		if err == nil {
			rest, err := io.ReadAll(res.Body)
			return append(append(b, one[:k]...), rest...), err
		}
		return nil, err
	}
	return b, nil
}

// originTransport is the SDK's redirect policy (its requestconfig
// origin.go): every request, the first and each redirect, must keep the
// base URL's scheme, host and port, and carry no opaque or precomputed
// request target; anything else is refused before it is sent.
type originTransport struct {
	origin *url.URL
	next   http.RoundTripper
}

func (t originTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if !requestHasOrigin(req, t.origin) {
		if req.Body != nil {
			req.Body.Close()
		}
		return nil, errRequestOrigin
	}
	return t.next.RoundTrip(req)
}

var errRequestOrigin = errors.New("requestconfig: request URL origin must match the configured base URL")

func requestHasOrigin(req *http.Request, origin *url.URL) bool {
	if req == nil || req.URL == nil || req.URL.Opaque != "" || req.RequestURI != "" {
		return false
	}
	if req.Host != "" && !sameOrigin(&url.URL{Scheme: req.URL.Scheme, Host: req.Host}, req.URL) {
		return false
	}
	return sameOrigin(req.URL, origin)
}

func sameOrigin(a, b *url.URL) bool {
	if a == nil || b == nil || !strings.EqualFold(a.Scheme, b.Scheme) || !strings.EqualFold(a.Hostname(), b.Hostname()) {
		return false
	}
	return effectivePort(a) == effectivePort(b)
}

func effectivePort(u *url.URL) string {
	if port := u.Port(); port != "" {
		return port
	}
	switch {
	case strings.EqualFold(u.Scheme, "https"):
		return "443"
	case strings.EqualFold(u.Scheme, "http"):
		return "80"
	}
	return ""
}

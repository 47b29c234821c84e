package llm

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"syscall"
	"time"
)

// capture receives the status and headers of the last HTTP response sent
// for a call; the transport fills it in when the request's context carries
// one. The SDKs hide headers behind their error types (Gemini's hides them
// entirely), so this is how Retry-After and the rate-limit headers reach
// the Client whatever the protocol.
type capture struct {
	mu     sync.Mutex
	status int
	header http.Header
}

type captureKey struct{}

// withCapture returns ctx carrying a capture, reusing one already there
// (the Client installs one around each provider call and reads it after).
func withCapture(ctx context.Context) (context.Context, *capture) {
	if c, ok := ctx.Value(captureKey{}).(*capture); ok {
		return ctx, c
	}
	c := &capture{}
	return context.WithValue(ctx, captureKey{}, c), c
}

func (c *capture) get() (int, http.Header) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.status, c.header
}

type captureTransport struct{ base http.RoundTripper }

func (t captureTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := t.base.RoundTrip(r)
	if resp != nil {
		if c, ok := r.Context().Value(captureKey{}).(*capture); ok {
			c.mu.Lock()
			// The response's own header map: nothing changes it after
			// RoundTrip returns, so it is shared rather than copied.
			c.status, c.header = resp.StatusCode, resp.Header
			c.mu.Unlock()
		}
	}
	return resp, err
}

// newHTTPClient returns the HTTP client a provider's SDK uses: keep-alive
// connections sized for the endpoint's concurrency and the
// header-capturing transport. Timeouts come from contexts, not from here.
//
// At most maxConns connections per host, the endpoint's max_concurrency
// (at least 16): its limiter never lets more calls be in flight, so a
// call that finds no idle connection waits for the one a finished call is
// handing back instead of dialling. Without the cap it dialled: a call's
// connection returns to the idle pool from the transport's read loop a
// moment after the call has read its answer and freed its limiter slot,
// so the next call often found the pool empty, dialled, and the pool, full
// again a moment later, closed a connection (1,041 connections opened for
// 25,600 calls at max_concurrency 1024; now 1,024). Over HTTP/2 (https
// endpoints) calls share connections and the cap is not reached.
func newHTTPClient(maxConns int) *http.Client {
	if maxConns < 16 {
		maxConns = 16
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConns = maxConns * 2
	tr.MaxIdleConnsPerHost = maxConns
	tr.MaxConnsPerHost = maxConns
	tr.IdleConnTimeout = 90 * time.Second
	return &http.Client{Transport: captureTransport{base: tr}}
}

// classifyTransport classifies an error that is not an API error: a
// timeout, a reset or refused connection, a truncated or garbled body.
// parent is the caller's context: when it is done the error is a
// cancellation, not a timeout of the call.
func classifyTransport(parent context.Context, err error) *Error {
	if parent.Err() != nil {
		return &Error{Kind: KindCancelled, Err: parent.Err()}
	}
	var ne net.Error
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return &Error{Kind: KindTimeout, Msg: "call timed out", Err: err}
	case errors.As(err, &ne) && ne.Timeout():
		return &Error{Kind: KindTimeout, Msg: "call timed out", Err: err}
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.EPIPE),
		errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return &Error{Kind: KindTransient, Msg: "connection failed: " + err.Error(), Err: err}
	}
	var se *json.SyntaxError
	if errors.As(err, &se) || looksTruncated(err) {
		return &Error{Kind: KindTransient, Msg: "malformed response: " + err.Error(), Err: err}
	}
	if errors.As(err, &ne) {
		return &Error{Kind: KindTransient, Msg: err.Error(), Err: err}
	}
	return &Error{Kind: KindInvalid, Msg: err.Error(), Err: err}
}

func looksTruncated(err error) bool {
	s := strings.ToLower(err.Error())
	for _, w := range []string{"unexpected end of json", "unexpected eof", "connection reset", "eof", "invalid character", "cannot unmarshal", "malformed"} {
		if strings.Contains(s, w) {
			return true
		}
	}
	return false
}

// apiError builds the *Error of an HTTP error response from a provider.
// quota reports whether the body says the quota (not just the rate) is
// used up.
func apiError(status int, h http.Header, msg string, quota bool) *Error {
	e := &Error{Kind: classifyStatus(status), Status: status, Msg: msg, RetryAfter: retryAfter(h, time.Now())}
	if quota {
		e.Kind = KindQuota
	}
	return e
}

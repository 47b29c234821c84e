package llm

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"testing"

	"github.com/openai/openai-go/v3"
)

// The request body evalflow encodes itself must be the JSON the SDK's
// ChatCompletionNewParams would send for the same request.
func TestOpenAIBodyMatchesSDKParams(t *testing.T) {
	temp, topP, seed := 0.0, 0.9, int64(7)
	req := &Request{Model: "gpt-x", System: "sys <b>&", Messages: []Message{{Role: "user", Content: "q1"},
		{Role: "assistant", Content: "a1"}, {Role: "user", Content: "q2 \"quoted\" \u2028"}},
		Temperature: &temp, TopP: &topP, MaxTokens: 64, Seed: &seed, Stop: []string{";;", "END"}}

	var got []byte
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got, _ = io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"model":"gpt-x-1","choices":[{"message":{"content":"ok"},"finish_reason":"stop"}],"usage":{"prompt_tokens":3,"completion_tokens":1}}`)
	}))
	defer srv.Close()
	if _, err := NewOpenAI(srv.URL, "k", 8).Complete(context.Background(), req); err != nil {
		t.Fatal(err)
	}

	params := openai.ChatCompletionNewParams{Model: req.Model,
		Messages: []openai.ChatCompletionMessageParamUnion{openai.SystemMessage(req.System),
			openai.UserMessage("q1"), openai.AssistantMessage("a1"), openai.UserMessage(req.Messages[2].Content)},
		Temperature: openai.Float(temp), TopP: openai.Float(topP), MaxTokens: openai.Int(64), Seed: openai.Int(seed),
		Stop: openai.ChatCompletionNewParamsStopUnion{OfStringArray: req.Stop}}
	want, err := json.Marshal(params)
	if err != nil {
		t.Fatal(err)
	}
	var g, w any
	if err := json.Unmarshal(got, &g); err != nil {
		t.Fatalf("body %s: %v", got, err)
	}
	json.Unmarshal(want, &w)
	if !reflect.DeepEqual(g, w) {
		t.Errorf("body\n got %s\nwant %s", got, want)
	}
}

func TestOpenAIAnswerShapes(t *testing.T) {
	for _, tc := range []struct {
		name, ctype, body string
		text              string
		in, out           int
		fp                string
		kind              Kind // "" = success
	}{
		{"plain", "application/json", `{"model":"m","system_fingerprint":"fp_1","choices":[{"index":0,"message":{"role":"assistant","content":"SELECT 1","refusal":null},"finish_reason":"stop"}],"usage":{"prompt_tokens":5,"completion_tokens":2,"total_tokens":7}}`,
			"SELECT 1", 5, 2, "fp_1", ""},
		{"null content and fingerprint", "application/json; charset=utf-8", `{"model":"m","system_fingerprint":null,"choices":[{"message":{"content":null},"finish_reason":"length"}],"usage":{"prompt_tokens":5,"completion_tokens":0}}`,
			"", 5, 0, "", ""},
		{"odd types read leniently", "application/json", `{"model":"m","choices":[{"message":{"content":"x"},"finish_reason":"stop"}],"usage":{"prompt_tokens":"5","completion_tokens":2}}`,
			"x", 5, 2, "", ""}, // the SDK's decoder, as before: "5" reads as 5
		{"no choices", "application/json", `{"model":"m","choices":[]}`, "", 0, 0, "", KindTransient},
		{"garbled", "application/json", `{"model":"m","choi`, "", 0, 0, "", KindTransient},
		{"not json", "text/html", `<html>hi</html>`, "", 0, 0, "", KindInvalid},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", tc.ctype)
				io.WriteString(w, tc.body)
			}))
			defer srv.Close()
			r, err := NewOpenAI(srv.URL, "", 8).Complete(context.Background(), &Request{Model: "m", Messages: []Message{{Role: "user", Content: "q"}}})
			if tc.kind != "" {
				if err == nil || asError(err).Kind != tc.kind {
					t.Fatalf("err = %v, want kind %s", err, tc.kind)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if r.Text != tc.text || r.InputTokens != tc.in || r.OutputTokens != tc.out || r.SystemFingerprint != tc.fp || r.Model != "m" {
				t.Errorf("got %+v", r)
			}
		})
	}
}

// A call sends what the SDK's client.Post sends — URL, auth and every
// header the SDK derives from its options and the OPENAI_* variables —
// and reads an error answer as the SDK's *openai.Error.
func TestOpenAIRequestIsTheSDKs(t *testing.T) {
	t.Setenv("OPENAI_ORG_ID", "org-1")
	t.Setenv("OPENAI_PROJECT_ID", "proj-1")
	t.Setenv("OPENAI_CUSTOM_HEADERS", "X-Custom: yes\nX-Other: 2")
	type seen struct {
		path string
		h    http.Header
	}
	var got []seen
	status := 200
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.ReadAll(r.Body)
		h := r.Header.Clone()
		h.Del("Content-Length")
		got = append(got, seen{r.URL.Path, h})
		w.Header().Set("Content-Type", "application/json")
		if status != 200 {
			w.WriteHeader(status)
			io.WriteString(w, `{"error":{"message":"slow down","type":"requests","param":null,"code":"rate_limit_exceeded"}}`)
			return
		}
		io.WriteString(w, `{"model":"m","choices":[{"message":{"content":"ok"},"finish_reason":"stop"}],"usage":{"prompt_tokens":1,"completion_tokens":1}}`)
	}))
	defer srv.Close()

	p := NewOpenAI(srv.URL+"/v1", "sk-test", 8)
	req := &Request{Model: "m", Messages: []Message{{Role: "user", Content: "q"}}}
	if _, err := p.Complete(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	var raw []byte
	if err := p.client.Post(context.Background(), "chat/completions", []byte(`{}`), &raw); err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].path != "/v1/chat/completions" || got[1].path != got[0].path {
		t.Fatalf("paths %+v", got)
	}
	if !reflect.DeepEqual(got[0].h, got[1].h) {
		t.Errorf("headers\n got %v\nwant %v (the SDK's)", got[0].h, got[1].h)
	}
	if got[0].h.Get("Authorization") != "Bearer sk-test" || got[0].h.Get("OpenAI-Organization") != "org-1" || got[0].h.Get("X-Custom") != "yes" {
		t.Errorf("headers %v", got[0].h)
	}

	status = 429
	_, err := p.Complete(context.Background(), req)
	sdkErr := p.client.Post(context.Background(), "chat/completions", []byte(`{}`), &raw)
	var ae, want *openai.Error
	if !errors.As(err, &ae) || !errors.As(sdkErr, &want) {
		t.Fatalf("err %v, SDK's %v: want *openai.Error", err, sdkErr)
	}
	if ae.StatusCode != want.StatusCode || ae.Code != want.Code || ae.Message != want.Message || ae.Type != want.Type || ae.RawJSON() != want.RawJSON() {
		t.Errorf("error %+v, SDK's %+v", ae, want)
	}
	if e := asError(err); e.Kind != KindRateLimit || e.Msg != "slow down" {
		t.Errorf("classified %+v", e)
	}
}

// Redirects are followed as the SDK follows them: within the base URL's
// origin only.
func TestOpenAIRedirects(t *testing.T) {
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t.Error("a request left the base URL's origin")
	}))
	defer other.Close()
	var hits []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		hits = append(hits, r.URL.Path)
		switch r.URL.Path {
		case "/old/chat/completions":
			http.Redirect(w, r, "/new/chat/completions", http.StatusTemporaryRedirect)
		case "/away/chat/completions":
			http.Redirect(w, r, other.URL+"/v1/chat/completions", http.StatusTemporaryRedirect)
		default:
			if len(b) == 0 {
				t.Error("redirected request lost its body")
			}
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"model":"m","choices":[{"message":{"content":"ok"},"finish_reason":"stop"}],"usage":{}}`)
		}
	}))
	defer srv.Close()
	req := &Request{Model: "m", Messages: []Message{{Role: "user", Content: "q"}}}
	r, err := NewOpenAI(srv.URL+"/old", "", 8).Complete(context.Background(), req)
	if err != nil || r.Text != "ok" {
		t.Fatalf("same-origin redirect: %v, %v", r, err)
	}
	if hits[len(hits)-1] != "/new/chat/completions" {
		t.Errorf("hits %v", hits)
	}
	p := NewOpenAI(srv.URL+"/away", "", 8)
	_, err = p.Complete(context.Background(), req)
	var raw []byte
	sdkErr := p.client.Post(context.Background(), "chat/completions", []byte(`{}`), &raw)
	if err == nil || sdkErr == nil {
		t.Fatalf("cross-origin redirect: err %v, SDK's %v", err, sdkErr)
	}
	if got, want := asError(err).Kind, classifyTransport(context.Background(), sdkErr).Kind; got != want {
		t.Errorf("cross-origin redirect: kind %s, the SDK's error classifies as %s (%v / %v)", got, want, err, sdkErr)
	}
}

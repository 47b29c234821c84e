package llm

import (
	"context"
	"encoding/json"
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

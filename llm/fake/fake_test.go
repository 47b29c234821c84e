package fake

import (
	"encoding/json"
	"reflect"
	"testing"
)

// The hand-encoded OpenAI answer is the JSON the map encoding sent.
func TestOpenAIAnswerEncoding(t *testing.T) {
	for _, tc := range []struct{ model, fp, text string }{
		{"bench", "", "```sql\nSELECT 1\n```"},
		{"gpt-4o-2024-08-06", "fp_1", `quote " backslash \ tab	 <b>&`},
		{"m", "", "naïve 日本語 \u2028 \x01"},
		{"m", "", ""},
	} {
		got := openAIAnswer(tc.model, tc.fp, tc.text, 12, 3)
		var fp any
		if tc.fp != "" {
			fp = tc.fp
		}
		want, _ := json.Marshal(map[string]any{"id": "chatcmpl-fake", "object": "chat.completion", "created": 0, "model": tc.model, "system_fingerprint": fp,
			"choices": []any{map[string]any{"index": 0, "finish_reason": "stop", "logprobs": nil,
				"message": map[string]any{"role": "assistant", "content": tc.text, "refusal": nil}}},
			"usage": map[string]any{"prompt_tokens": 12, "completion_tokens": 3, "total_tokens": 15}})
		var g, w any
		if err := json.Unmarshal(got, &g); err != nil {
			t.Fatalf("%q: %v in %s", tc.text, err, got)
		}
		json.Unmarshal(want, &w)
		if !reflect.DeepEqual(g, w) {
			t.Errorf("got  %s\nwant %s", got, want)
		}
	}
}

func TestPromptTokens(t *testing.T) {
	for _, r := range []Request{
		{},
		{System: "sys"},
		{Messages: []Message{{"user", "q"}}},
		{System: "abc", Messages: []Message{{"user", "question one"}, {"assistant", "a"}, {"user", "fix it"}}},
	} {
		if got, want := promptTokens(r), tokens(r.System+r.Prompt()); got != want {
			t.Errorf("%+v: %d, want %d", r, got, want)
		}
	}
}

package llm

import (
	"bytes"
	"encoding/json"
	"math"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
)

var chatSeeds = []string{
	`{"id":"chatcmpl-1","object":"chat.completion","created":0,"model":"bench","system_fingerprint":null,"choices":[{"index":0,"finish_reason":"stop","logprobs":null,"message":{"role":"assistant","content":"` + "```sql\\nSELECT 1\\n```" + `","refusal":null}}],"usage":{"prompt_tokens":53,"completion_tokens":5,"total_tokens":58}}`,
	`{"model":"m","system_fingerprint":"fp_1","choices":[{"message":{"content":"a\"b\\c\/d\b\f\n\r\t\u00e9\ud83d\ude00\ud800x"},"finish_reason":"length"},null,{"message":null}],"usage":{"prompt_tokens":-0,"completion_tokens":9223372036854775807}}`,
	` {"choices":[], "usage":null, "x":[1,-2.5e+3,true,false,null,{"a":[{}]}], "model":"naïve \u2028"} `,
	`{"Model":"case"}`,
	`{"model":"a","model":"b"}`,
	`{"choices":[{"message":{"content":"x"}}],"choices":[{"finish_reason":"y"}]}`,
	`{"usage":{"prompt_tokens":"5"}}`,
	`{"usage":{"prompt_tokens":5.0}}`,
	`{"usage":{"prompt_tokens":1e2}}`,
	`{"usage":{"prompt_tokens":01}}`,
	`{"usage":{"prompt_tokens":99999999999999999999}}`,
	`{"model":"m","choi`,
	`{"model":"a\'"}`,
	`{"model":"\x01"}`,
	`{"mod\u0065l":"escaped key"}`,
	`{"model":"invalid \xff utf8"}`,
	`{"model":"m"} x`,
	`[]`,
	`null`,
	`{"choices":{}}`,
	`{"choices":[{"message":{"content":5}}]}`,
	`{"a":nul}`,
	`{"a":-}`,
	`{"a":1.}`,
	`{"a":1e}`,
	`{"a" 1}`,
	`{"a":1,}`,
	`{"choices":[1,]}`,
	`{}`,
	``,
}

// decodeChat, when it decodes, decodes as encoding/json does.
func FuzzDecodeChat(f *testing.F) {
	for _, s := range chatSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var got, want chatResponse
		if !decodeChat(b, &got) {
			return
		}
		if err := json.Unmarshal(b, &want); err != nil {
			t.Fatalf("%q: decoded %+v; encoding/json: %v", b, got, err)
		}
		if !reflect.DeepEqual(got, want) && !(len(got.Choices) == 0 && len(want.Choices) == 0) {
			t.Fatalf("%q:\n got %+v\nwant %+v", b, got, want)
		}
		if (got.Choices == nil) != (want.Choices == nil) {
			t.Fatalf("%q: choices nil %v, encoding/json's %v", b, got.Choices == nil, want.Choices == nil)
		}
	})
}

// The answers servers send take the fast path.
func TestDecodeChatCommonAnswers(t *testing.T) {
	for _, s := range chatSeeds[:3] {
		var got chatResponse
		if !decodeChat([]byte(s), &got) {
			t.Errorf("%s: not decoded", s)
		}
	}
}

// Random answers of the usual shape, with strings of every kind of
// character, decode on the fast path exactly as encoding/json decodes them.
func TestDecodeChatRandomAnswers(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	pieces := []string{"a", "Z", " ", "\n", "\t", "\"", "\\", "/", "<", "&", "é", "日本", "😀", "\u2028", "\x00", "\x1f", "\xff", "\xed\xa0\x80", "```sql\n", "\\u0041"}
	str := func() string {
		var b strings.Builder
		for range rng.IntN(12) {
			b.WriteString(pieces[rng.IntN(len(pieces))])
		}
		return b.String()
	}
	for i := range 3000 {
		choices := []any{}
		for range rng.IntN(3) {
			choices = append(choices, map[string]any{"index": 0, "finish_reason": str(), "logprobs": nil,
				"message": map[string]any{"role": "assistant", "content": str(), "refusal": nil, "tool_calls": []any{}}})
		}
		var fp any
		if rng.IntN(2) == 0 {
			fp = str()
		}
		v := map[string]any{"id": str(), "object": "chat.completion", "created": rng.Int64(), "model": str(), "system_fingerprint": fp,
			"choices": choices, "usage": map[string]any{"prompt_tokens": rng.Int64N(1 << 40), "completion_tokens": -rng.Int64N(5), "total_tokens": 1.5}}
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		if rng.IntN(3) == 0 { // hand-written escapes encoding/json does not produce
			b = []byte(strings.ReplaceAll(string(b), `"a`, `"\u0061\/`))
		}
		var got, want chatResponse
		if !decodeChat(b, &got) {
			t.Fatalf("%d: %s not decoded", i, b)
		}
		if err := json.Unmarshal(b, &want); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%s:\n got %+v\nwant %+v", b, got, want)
		}
	}
}

// appendChatRequest writes what encoding/json's Encoder (no HTML
// escaping) writes, byte for byte.
func TestAppendChatRequest(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	pieces := []string{"a", " ", "\n", "\r", "\t", "\b", "\f", "\x00", "\x1f", "\x7f", "\"", "\\", "/", "<", ">", "&", "é", "日本", "😀", "\u2028", "\u2029", "\xff", "\xed\xa0\x80", "\xe2\x80"}
	str := func() string {
		var b strings.Builder
		for range rng.IntN(10) {
			b.WriteString(pieces[rng.IntN(len(pieces))])
		}
		return b.String()
	}
	floats := []float64{0, 1, -1, 0.7, 1e-7, 1.5e-6, 1e20, 1e21, 123456789.125, -2.5e-10, 1.0 / 3}
	for i := range 3000 {
		body := chatRequest{Model: str(), MaxTokens: rng.IntN(3) * 64}
		if rng.IntN(4) > 0 {
			for range rng.IntN(4) {
				body.Messages = append(body.Messages, chatMessage{Role: str(), Content: str()})
			}
			if body.Messages == nil && rng.IntN(2) == 0 {
				body.Messages = []chatMessage{}
			}
		}
		if rng.IntN(2) == 0 {
			f := floats[rng.IntN(len(floats))]
			body.Temperature = &f
		}
		if rng.IntN(2) == 0 {
			f := floats[rng.IntN(len(floats))]
			body.TopP = &f
		}
		if rng.IntN(2) == 0 {
			s := rng.Int64() - rng.Int64()
			body.Seed = &s
		}
		for range rng.IntN(3) {
			body.Stop = append(body.Stop, str())
		}
		if rng.IntN(5) == 0 {
			body.Stop = []string{}
		}
		var want bytes.Buffer
		enc := json.NewEncoder(&want)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(&body); err != nil {
			t.Fatal(err)
		}
		got, ok := appendChatRequest(nil, &body)
		if !ok || string(got) != want.String() {
			t.Fatalf("%d: %v\n got %q\nwant %q", i, ok, got, want.String())
		}
	}
	nan := math.NaN()
	if _, ok := appendChatRequest(nil, &chatRequest{Temperature: &nan}); ok {
		t.Error("NaN encoded")
	}
}

// oneFence, when it answers, answers as fenceRe does.
func TestOneFenceIsTheRegexp(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	pieces := []string{"```", "```sql", "```SQL ", "``` python", "````", "``", "`", "\n", " ", "\t", "SELECT 1", "x", "sql", "-+_", ";", "<think>", "é"}
	answered := 0
	for i := range 100000 {
		var b strings.Builder
		for range rng.IntN(9) {
			b.WriteString(pieces[rng.IntN(len(pieces))])
		}
		text := b.String()
		if i == 0 {
			text = "```sql\nSELECT 1\n```"
		}
		got, ok := oneFence(text)
		if !ok {
			continue
		}
		answered++
		want := fenceRe().FindAllStringSubmatch(text, -1)
		if len(want) != 1 || !reflect.DeepEqual(got, want[0]) {
			t.Fatalf("%q: got %q, regexp %q", text, got, want)
		}
	}
	if answered < 200 {
		t.Errorf("only %d answered", answered)
	}
}

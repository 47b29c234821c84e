package llm

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"strings"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
)

// OpenAI speaks the chat completions protocol through the official SDK:
// api.openai.com and every OpenAI-compatible server (vLLM, Ollama,
// llama.cpp server, LM Studio, OpenRouter) by base URL. Safe for
// concurrent use.
//
// The SDK sends each call (base URL, auth, headers, error responses as
// *openai.Error), but the request body and the answer are encoded and
// decoded here with fixed structs: the SDK's generic parameter marshalling
// and its reflective response decoder cost more CPU and allocations per
// call than the HTTP round trip itself, which shows at hundreds of calls
// in flight. An answer the fixed struct cannot read (a field of an
// unexpected type from a compatible server) is decoded by the SDK's
// lenient decoder instead, as before.
type OpenAI struct {
	client openai.Client
}

// NewOpenAI returns a provider for baseURL ("" for OpenAI's) with apiKey
// ("" is sent as a placeholder, which local servers accept).
func NewOpenAI(baseURL, apiKey string, maxConns int) *OpenAI {
	if apiKey == "" {
		apiKey = "EMPTY"
	}
	opts := []option.RequestOption{
		option.WithAPIKey(apiKey),
		option.WithMaxRetries(0),
		option.WithHTTPClient(newHTTPClient(maxConns)),
	}
	if baseURL != "" {
		opts = append(opts, option.WithBaseURL(strings.TrimSuffix(baseURL, "/")+"/"))
	}
	return &OpenAI{client: openai.NewClient(opts...)}
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
	Model             string `json:"model"`
	SystemFingerprint string `json:"system_fingerprint"`
	Choices           []struct {
		FinishReason string `json:"finish_reason"`
		Message      struct {
			Content string `json:"content"`
		} `json:"message"`
	} `json:"choices"`
	Usage struct {
		PromptTokens     int64 `json:"prompt_tokens"`
		CompletionTokens int64 `json:"completion_tokens"`
	} `json:"usage"`
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
	// Not pooled: the transport may still hold the body after Post returns.
	var buf bytes.Buffer
	buf.Grow(256 + estimateTokens(req)*4)
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(&body); err != nil {
		return nil, &Error{Kind: KindInvalid, Msg: "encoding the request: " + err.Error(), Err: err}
	}
	ctx, cap := withCapture(ctx)
	var raw []byte
	err := p.client.Post(ctx, "chat/completions", buf.Bytes(), &raw)
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
	// A []byte destination takes any content type; the SDK's typed
	// destination took only JSON, and so does this.
	_, h := cap.get()
	if ct := h.Get("Content-Type"); !isJSON(ct) {
		return nil, classifyTransport(ctx, fmt.Errorf("expected destination type of 'string' or '[]byte' for responses with content-type '%s' that is not 'application/json'", ct))
	}
	var out chatResponse
	if err := json.Unmarshal(raw, &out); err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			return nil, classifyTransport(ctx, fmt.Errorf("error parsing response json: %w", err))
		}
		return openAISDKDecode(ctx, raw)
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
	mt, _, _ := mime.ParseMediaType(contentType)
	return strings.Contains(mt, "application/json") || strings.HasSuffix(mt, "+json")
}

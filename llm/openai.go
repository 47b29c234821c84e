package llm

import (
	"context"
	"errors"
	"strings"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
)

// OpenAI speaks the chat completions protocol through the official SDK:
// api.openai.com and every OpenAI-compatible server (vLLM, Ollama,
// llama.cpp server, LM Studio, OpenRouter) by base URL. Safe for
// concurrent use.
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

// Complete sends one chat completion.
func (p *OpenAI) Complete(ctx context.Context, req *Request) (*Response, error) {
	params := openai.ChatCompletionNewParams{Model: req.Model}
	if req.System != "" {
		params.Messages = append(params.Messages, openai.SystemMessage(req.System))
	}
	for _, m := range req.Messages {
		if m.Role == "assistant" {
			params.Messages = append(params.Messages, openai.AssistantMessage(m.Content))
		} else {
			params.Messages = append(params.Messages, openai.UserMessage(m.Content))
		}
	}
	if req.Temperature != nil {
		params.Temperature = openai.Float(*req.Temperature)
	}
	if req.TopP != nil {
		params.TopP = openai.Float(*req.TopP)
	}
	if req.MaxTokens > 0 {
		params.MaxTokens = openai.Int(int64(req.MaxTokens))
	}
	if req.Seed != nil {
		params.Seed = openai.Int(*req.Seed)
	}
	if len(req.Stop) > 0 {
		params.Stop = openai.ChatCompletionNewParamsStopUnion{OfStringArray: req.Stop}
	}
	ctx, cap := withCapture(ctx)
	out, err := p.client.Chat.Completions.New(ctx, params)
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

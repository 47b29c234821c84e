package llm

import (
	"context"
	"encoding/json"
	"errors"
	"strings"

	"github.com/anthropics/anthropic-sdk-go"
	"github.com/anthropics/anthropic-sdk-go/option"
)

// Anthropic speaks the Messages protocol through the official SDK. Safe for
// concurrent use.
type Anthropic struct {
	client anthropic.Client
}

// NewAnthropic returns a provider for baseURL ("" for Anthropic's).
func NewAnthropic(baseURL, apiKey string, maxConns int) *Anthropic {
	if apiKey == "" {
		apiKey = "EMPTY" // a real endpoint answers 401; a local one may need none
	}
	opts := []option.RequestOption{
		option.WithAPIKey(apiKey),
		option.WithMaxRetries(0),
		option.WithHTTPClient(newHTTPClient(maxConns)),
	}
	if baseURL != "" {
		opts = append(opts, option.WithBaseURL(strings.TrimSuffix(baseURL, "/")+"/"))
	}
	return &Anthropic{client: anthropic.NewClient(opts...)}
}

// DefaultAnthropicMaxTokens is sent when a request sets no max_tokens: the
// Messages API requires one.
const DefaultAnthropicMaxTokens = 1024

// Complete sends one message request.
func (p *Anthropic) Complete(ctx context.Context, req *Request) (*Response, error) {
	params := anthropic.MessageNewParams{Model: anthropic.Model(req.Model), MaxTokens: DefaultAnthropicMaxTokens}
	if req.MaxTokens > 0 {
		params.MaxTokens = int64(req.MaxTokens)
	}
	if req.System != "" {
		params.System = []anthropic.TextBlockParam{{Text: req.System}}
	}
	for _, m := range req.Messages {
		if m.Role == "assistant" {
			params.Messages = append(params.Messages, anthropic.NewAssistantMessage(anthropic.NewTextBlock(m.Content)))
		} else {
			params.Messages = append(params.Messages, anthropic.NewUserMessage(anthropic.NewTextBlock(m.Content)))
		}
	}
	if req.Temperature != nil {
		params.Temperature = anthropic.Float(*req.Temperature)
	}
	if req.TopP != nil {
		params.TopP = anthropic.Float(*req.TopP)
	}
	if len(req.Stop) > 0 {
		params.StopSequences = req.Stop
	}
	ctx, cap := withCapture(ctx)
	out, err := p.client.Messages.New(ctx, params)
	if err != nil {
		var ae *anthropic.Error
		if errors.As(err, &ae) {
			_, h := cap.get()
			typ, msg := anthropicErrorBody(ae.RawJSON())
			if typ == "" {
				typ = string(ae.Type())
			}
			lower := strings.ToLower(msg)
			quota := typ == "billing_error" || strings.Contains(lower, "credit balance")
			e := apiError(ae.StatusCode, h, strings.TrimSpace(typ+": "+msg), quota)
			if typ == "overloaded_error" {
				e.Kind = KindTransient
			}
			e.Err = err
			return nil, e
		}
		return nil, classifyTransport(ctx, err)
	}
	var b strings.Builder
	for _, c := range out.Content {
		if c.Type == "text" {
			b.WriteString(c.Text)
		}
	}
	return &Response{
		Text:         b.String(),
		InputTokens:  int(out.Usage.InputTokens),
		OutputTokens: int(out.Usage.OutputTokens),
		FinishReason: string(out.StopReason),
		Model:        string(out.Model),
	}, nil
}

// anthropicErrorBody reads {"type":"error","error":{"type":..,"message":..}}.
func anthropicErrorBody(raw string) (typ, msg string) {
	var body struct {
		Error struct {
			Type    string `json:"type"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if json.Unmarshal([]byte(raw), &body) == nil {
		return body.Error.Type, body.Error.Message
	}
	return "", raw
}

package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"google.golang.org/genai"
)

// Gemini speaks generateContent through the official google.golang.org/genai
// SDK (Gemini API backend). Safe for concurrent use.
type Gemini struct {
	client *genai.Client
}

// NewGemini returns a provider for baseURL ("" for Google's).
func NewGemini(baseURL, apiKey string, maxConns int) (*Gemini, error) {
	if apiKey == "" {
		apiKey = "EMPTY"
	}
	cfg := &genai.ClientConfig{
		APIKey:     apiKey,
		Backend:    genai.BackendGeminiAPI,
		HTTPClient: newHTTPClient(maxConns),
	}
	if baseURL != "" {
		cfg.HTTPOptions.BaseURL = strings.TrimSuffix(baseURL, "/") + "/"
	}
	c, err := genai.NewClient(context.Background(), cfg)
	if err != nil {
		return nil, fmt.Errorf("gemini client: %w", err)
	}
	return &Gemini{client: c}, nil
}

// Complete sends one generateContent request.
func (p *Gemini) Complete(ctx context.Context, req *Request) (*Response, error) {
	cfg := &genai.GenerateContentConfig{}
	if req.System != "" {
		cfg.SystemInstruction = genai.NewContentFromText(req.System, genai.RoleUser)
	}
	if req.Temperature != nil {
		t := float32(*req.Temperature)
		cfg.Temperature = &t
	}
	if req.TopP != nil {
		t := float32(*req.TopP)
		cfg.TopP = &t
	}
	if req.MaxTokens > 0 {
		cfg.MaxOutputTokens = int32(req.MaxTokens)
	}
	if req.Seed != nil {
		s := int32(*req.Seed)
		cfg.Seed = &s
	}
	cfg.StopSequences = req.Stop
	var contents []*genai.Content
	for _, m := range req.Messages {
		role := genai.Role(genai.RoleUser)
		if m.Role == "assistant" {
			role = genai.RoleModel
		}
		contents = append(contents, genai.NewContentFromText(m.Content, role))
	}
	ctx, cap := withCapture(ctx)
	out, err := p.client.Models.GenerateContent(ctx, req.Model, contents, cfg)
	if err != nil {
		var ae genai.APIError
		if errors.As(err, &ae) {
			_, h := cap.get()
			details, _ := json.Marshal(ae.Details)
			ds := string(details)
			quota := ae.Code == 429 && strings.Contains(ds, "PerDay") || strings.Contains(strings.ToLower(ae.Message), "billing is not enabled")
			e := apiError(ae.Code, h, strings.TrimSpace(ae.Status+": "+ae.Message), quota)
			if e.RetryAfter == 0 {
				e.RetryAfter = geminiRetryDelay(ae.Details)
			}
			e.Err = err
			return nil, e
		}
		return nil, classifyTransport(ctx, err)
	}
	r := &Response{Text: out.Text(), Model: out.ModelVersion}
	if out.UsageMetadata != nil {
		r.InputTokens = int(out.UsageMetadata.PromptTokenCount)
		r.OutputTokens = int(out.UsageMetadata.CandidatesTokenCount)
	}
	if len(out.Candidates) > 0 {
		r.FinishReason = string(out.Candidates[0].FinishReason)
	}
	return r, nil
}

// geminiRetryDelay reads google.rpc.RetryInfo's retryDelay ("37s").
func geminiRetryDelay(details []map[string]any) time.Duration {
	for _, d := range details {
		if s, ok := d["retryDelay"].(string); ok {
			if v, err := time.ParseDuration(s); err == nil {
				return v
			}
		}
	}
	return 0
}

package textai

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// ErrUnavailable marks a failure that may pass: the engine answered 408, 429 or 5xx, or could not be reached.
// The pipeline retries such jobs with backoff; any other error is permanent for that input.
var ErrUnavailable = errors.New("textai: engine unavailable")

// ErrBadResponse marks a response that does not follow the protocol (malformed JSON, missing fields, wrong
// vector count or dimension). It is permanent: retrying the same request is not expected to help.
var ErrBadResponse = errors.New("textai: bad response from engine")

// APIError is a non-2xx answer of an OpenAI-compatible API. It matches ErrUnavailable (errors.Is) when the
// status is 408, 429 or 5xx.
type APIError struct {
	// Endpoint is the URL called, without credentials.
	Endpoint string
	// StatusCode is the HTTP status.
	StatusCode int
	// Message is the API's error message ("error.message" in OpenAI's error body), or the start of the body.
	Message string
	// RetryAfter is the delay the server asked for in Retry-After (seconds form), 0 if none.
	RetryAfter time.Duration
}

// Error describes the failure.
func (e *APIError) Error() string {
	return fmt.Sprintf("textai: %s: HTTP %d: %s", e.Endpoint, e.StatusCode, e.Message)
}

// Is reports whether the error is temporary when target is ErrUnavailable.
func (e *APIError) Is(target error) bool {
	return target == ErrUnavailable && e.temporary()
}

func (e *APIError) temporary() bool {
	return e.StatusCode == http.StatusRequestTimeout || e.StatusCode == http.StatusTooManyRequests ||
		e.StatusCode >= 500
}

// OpenAIConfig configures a client of an OpenAI-compatible API (OpenAI, Azure-style proxies, Ollama,
// llama.cpp, vLLM, LocalAI, …).
type OpenAIConfig struct {
	// URL is the API's base URL, with or without the "/v1" suffix ("https://api.openai.com/v1",
	// "http://127.0.0.1:11434"), or the full endpoint URL ("…/v1/chat/completions", "…/v1/embeddings").
	URL string
	// APIKey is sent as "Authorization: Bearer <APIKey>"; empty sends no Authorization header.
	APIKey string
	// Model is the model name sent with each request. Required.
	Model string
	// HTTPClient makes the requests; nil means a client with a 2-minute timeout.
	HTTPClient *http.Client
	// Dim (embeddings only) is the expected vector dimension; 0 learns it from the first response.
	Dim int
	// BatchSize (embeddings only) is the number of texts per request; 0 means 64.
	BatchSize int
}

// maxResponseBytes bounds what is read of a response body: enough for 64 vectors of 3072 floats in JSON.
const maxResponseBytes = 32 << 20

// maxInputChars bounds the text sent per input, in characters: about 8,000 tokens of English, the context of
// common embedding models. Longer notes are cut (at a rune boundary) rather than rejected.
const maxInputChars = 24000

// openAIClient posts JSON to one endpoint of an OpenAI-compatible API.
type openAIClient struct {
	endpoint string // full URL
	display  string // endpoint without credentials, for errors
	apiKey   string
	model    string
	hc       *http.Client
}

func newOpenAIClient(cfg OpenAIConfig, path string) (*openAIClient, error) {
	if cfg.Model == "" {
		return nil, errors.New("textai: OpenAI-compatible engine: model is required")
	}
	u, err := url.Parse(strings.TrimSpace(cfg.URL))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("textai: OpenAI-compatible engine: URL %q is not an http(s) URL", cfg.URL)
	}
	p := strings.TrimRight(u.Path, "/")
	switch {
	case strings.HasSuffix(p, path):
	case strings.HasSuffix(p, "/v1"):
		p += path
	default:
		p += "/v1" + path
	}
	u.Path, u.RawPath = p, ""
	hc := cfg.HTTPClient
	if hc == nil {
		hc = &http.Client{Timeout: 2 * time.Minute}
	}
	return &openAIClient{endpoint: u.String(), display: u.Redacted(), apiKey: cfg.APIKey, model: cfg.Model, hc: hc}, nil
}

// post sends req as JSON and decodes a 2xx answer into resp.
func (c *openAIClient) post(ctx context.Context, req, resp any) error {
	body, err := json.Marshal(req)
	if err != nil {
		return fmt.Errorf("textai: %s: encode request: %w", c.display, err)
	}
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, c.endpoint, bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("textai: %s: %w", c.display, err)
	}
	hreq.Header.Set("Content-Type", "application/json")
	hreq.Header.Set("Accept", "application/json")
	if c.apiKey != "" {
		hreq.Header.Set("Authorization", "Bearer "+c.apiKey)
	}
	hresp, err := c.hc.Do(hreq)
	if err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("textai: %s: %w", c.display, ctx.Err())
		}
		return fmt.Errorf("textai: %s: %w: %w", c.display, ErrUnavailable, err)
	}
	defer hresp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(hresp.Body, maxResponseBytes+1))
	if err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("textai: %s: read response: %w", c.display, ctx.Err())
		}
		return fmt.Errorf("textai: %s: read response: %w: %w", c.display, ErrUnavailable, err)
	}
	if hresp.StatusCode < 200 || hresp.StatusCode > 299 {
		return &APIError{
			Endpoint:   c.display,
			StatusCode: hresp.StatusCode,
			Message:    errorMessage(data, hresp.Status),
			RetryAfter: retryAfter(hresp.Header.Get("Retry-After")),
		}
	}
	if len(data) > maxResponseBytes {
		return fmt.Errorf("textai: %s: %w: response larger than %d bytes", c.display, ErrBadResponse, maxResponseBytes)
	}
	if err := json.Unmarshal(data, resp); err != nil {
		return fmt.Errorf("textai: %s: %w: %w", c.display, ErrBadResponse, err)
	}
	return nil
}

// errorMessage extracts OpenAI's {"error":{"message":…}} (or {"error":"…"}, as some servers send), else the
// start of the body, else the status text.
func errorMessage(body []byte, status string) string {
	var e struct {
		Error json.RawMessage `json:"error"`
	}
	if json.Unmarshal(body, &e) == nil && len(e.Error) > 0 {
		var obj struct {
			Message string `json:"message"`
		}
		var s string
		switch {
		case json.Unmarshal(e.Error, &obj) == nil && obj.Message != "":
			return obj.Message
		case json.Unmarshal(e.Error, &s) == nil && s != "":
			return s
		}
	}
	if msg := strings.TrimSpace(string(body)); msg != "" && utf8.ValidString(msg) {
		return truncateWords(strings.Join(strings.Fields(msg), " "), 200)
	}
	return status
}

func retryAfter(v string) time.Duration {
	if s, err := strconv.Atoi(strings.TrimSpace(v)); err == nil && s > 0 {
		return time.Duration(s) * time.Second
	}
	return 0
}

// clip cuts s to at most n runes.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	count := 0
	for i := range s {
		if count == n {
			return s[:i]
		}
		count++
	}
	return s
}

// OpenAIChat summarises and tags through an OpenAI-compatible /v1/chat/completions endpoint. It is safe for
// concurrent use.
type OpenAIChat struct {
	c        *openAIClient
	maxChars int
}

var (
	_ Summarizer = (*OpenAIChat)(nil)
	_ Tagger     = (*OpenAIChat)(nil)
)

// NewOpenAIChat returns the chat-completions engine for cfg. Summaries are held to DefaultSummaryChars.
func NewOpenAIChat(cfg OpenAIConfig) (*OpenAIChat, error) {
	c, err := newOpenAIClient(cfg, "/chat/completions")
	if err != nil {
		return nil, err
	}
	return &OpenAIChat{c: c, maxChars: DefaultSummaryChars}, nil
}

// Name returns "openai:<model>".
func (o *OpenAIChat) Name() string { return "openai:" + o.c.model }

// Prompts. Do not make them chattier: small local models follow short, explicit instructions best.
const (
	summaryPrompt = "You summarise personal notes and voice-note transcripts. Reply with a summary of one to " +
		"three sentences, at most 300 characters, in the language of the note. Reply with the summary only, " +
		"without a preamble or quotes."
	tagsPrompt = "You tag personal notes and voice-note transcripts. Reply with only a JSON array of at most 8 " +
		"short lower-case keyword tags (single words or two-word phrases), most relevant first, e.g. " +
		`["sourdough","baking","recipes"].`
)

type chatMessage struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

type chatRequest struct {
	Model       string        `json:"model"`
	Messages    []chatMessage `json:"messages"`
	Temperature float64       `json:"temperature"`
}

type chatResponse struct {
	Choices []struct {
		Message struct {
			Content *string `json:"content"`
			Refusal *string `json:"refusal"`
		} `json:"message"`
	} `json:"choices"`
}

// complete sends one system prompt and the text, and returns the first choice's content.
func (o *OpenAIChat) complete(ctx context.Context, system, text string) (string, error) {
	req := chatRequest{
		Model: o.c.model,
		Messages: []chatMessage{
			{Role: "system", Content: system},
			{Role: "user", Content: clip(text, maxInputChars)},
		},
	}
	var resp chatResponse
	if err := o.c.post(ctx, req, &resp); err != nil {
		return "", err
	}
	if len(resp.Choices) == 0 {
		return "", fmt.Errorf("textai: %s: %w: no choices", o.c.display, ErrBadResponse)
	}
	m := resp.Choices[0].Message
	if m.Content == nil {
		if m.Refusal != nil {
			return "", fmt.Errorf("textai: %s: model refused: %s", o.c.display, *m.Refusal)
		}
		return "", fmt.Errorf("textai: %s: %w: no message content", o.c.display, ErrBadResponse)
	}
	return *m.Content, nil
}

// Summarize asks the model for a summary of one to three sentences. The answer is cleaned of code fences,
// quotes and a "Summary:" label and held to 300 characters (whole sentences when possible).
func (o *OpenAIChat) Summarize(ctx context.Context, text string) (string, error) {
	if strings.TrimSpace(text) == "" {
		return "", nil
	}
	out, err := o.complete(ctx, summaryPrompt, text)
	if err != nil {
		return "", err
	}
	return cleanSummary(out, o.maxChars), nil
}

// cleanSummary normalises a model's summary: no fences, label or quotes, white space collapsed, at most
// maxChars characters.
func cleanSummary(s string, maxChars int) string {
	s = stripFences(s)
	s = strings.Join(strings.Fields(s), " ")
	if k := strings.IndexByte(s, ':'); k > 0 && k <= 12 && strings.EqualFold(strings.TrimSpace(s[:k]), "summary") {
		s = strings.TrimSpace(s[k+1:])
	}
	s = strings.Trim(s, `"“”'`)
	if utf8.RuneCountInString(s) <= maxChars {
		return s
	}
	var b strings.Builder
	n := 0
	for _, sent := range splitSentences(s) {
		k := utf8.RuneCountInString(sent.text)
		if n > 0 {
			k++
		}
		if n+k > maxChars {
			break
		}
		if n > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(sent.text)
		n += k
	}
	if n == 0 {
		return truncateWords(s, maxChars)
	}
	return b.String()
}

// stripFences removes a Markdown code fence around s, if any.
func stripFences(s string) string {
	s = strings.TrimSpace(s)
	if !strings.HasPrefix(s, "```") {
		return s
	}
	s = strings.TrimPrefix(s, "```")
	if nl := strings.IndexByte(s, '\n'); nl >= 0 {
		s = s[nl+1:] // the info string ("json")
	}
	s = strings.TrimSuffix(strings.TrimSpace(s), "```")
	return strings.TrimSpace(s)
}

// Tags asks the model for a JSON array of tags. corpus is not used. The answer is parsed leniently (see
// parseTags) and normalised with NormalizeTags.
func (o *OpenAIChat) Tags(ctx context.Context, text string, _ DocFreqs) ([]string, error) {
	if strings.TrimSpace(text) == "" {
		return []string{}, nil
	}
	out, err := o.complete(ctx, tagsPrompt, text)
	if err != nil {
		return nil, err
	}
	tags, err := parseTags(out)
	if err != nil {
		return nil, fmt.Errorf("textai: %s: %w", o.c.display, err)
	}
	return NormalizeTags(tags), nil
}

// parseTags reads tags from a model's answer: a JSON array of strings, possibly inside prose or a Markdown
// fence; or an object with a "tags" array; or, failing both, a comma- or line-separated list without
// brackets. An answer with brackets that do not parse is ErrBadResponse.
func parseTags(s string) ([]string, error) {
	s = stripFences(s)
	var obj struct {
		Tags []string `json:"tags"`
	}
	if strings.HasPrefix(s, "{") && json.Unmarshal([]byte(s), &obj) == nil && obj.Tags != nil {
		return obj.Tags, nil
	}
	if i, j := strings.IndexByte(s, '['), strings.LastIndexByte(s, ']'); i >= 0 && j > i {
		var tags []string
		if err := json.Unmarshal([]byte(s[i:j+1]), &tags); err != nil {
			return nil, fmt.Errorf("%w: tags are not a JSON array of strings: %w", ErrBadResponse, err)
		}
		return tags, nil
	}
	if strings.ContainsAny(s, "{}[]") || utf8.RuneCountInString(s) > 1000 {
		return nil, fmt.Errorf("%w: no tag list in the answer", ErrBadResponse)
	}
	var tags []string
	for line := range strings.Lines(s) {
		if k := strings.LastIndexByte(line, ':'); k >= 0 {
			line = line[k+1:] // "Tags: a, b"
		}
		line = cleanSentence(line) // list markers
		for t := range strings.SplitSeq(line, ",") {
			tags = append(tags, t)
		}
	}
	return tags, nil
}

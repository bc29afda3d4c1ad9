package textai_test

import (
	"encoding/json"
	"errors"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stratahq/strata/impl/pipeline/textai"
)

// chatFixture is a protocol fixture of the third-party OpenAI-compatible /v1/chat/completions API (not a
// mock of our code): it checks the request as OpenAI documents it and answers content, or status and body.
func chatFixture(t *testing.T, content string, status int, body string) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.URL.Path != "/v1/chat/completions" {
			t.Errorf("request %s %s, want POST /v1/chat/completions", r.Method, r.URL.Path)
		}
		if got := r.Header.Get("Authorization"); got != "Bearer sk-test" {
			t.Errorf("Authorization = %q", got)
		}
		if ct := r.Header.Get("Content-Type"); ct != "application/json" {
			t.Errorf("Content-Type = %q", ct)
		}
		var req struct {
			Model    string `json:"model"`
			Messages []struct {
				Role    string `json:"role"`
				Content string `json:"content"`
			} `json:"messages"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			t.Errorf("request body: %v", err)
		}
		if req.Model != "test-model" || len(req.Messages) != 2 || req.Messages[0].Role != "system" ||
			req.Messages[1].Role != "user" || req.Messages[1].Content == "" {
			t.Errorf("request = %+v, want model and a system and a user message", req)
		}
		if status != 0 {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(status)
			io.WriteString(w, body)
			return
		}
		resp := map[string]any{
			"id": "chatcmpl-1", "object": "chat.completion", "model": "test-model",
			"choices": []any{map[string]any{
				"index": 0, "finish_reason": "stop",
				"message": map[string]any{"role": "assistant", "content": content},
			}},
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(resp)
	}))
	t.Cleanup(srv.Close)
	return srv
}

func newChat(t *testing.T, url string) *textai.OpenAIChat {
	t.Helper()
	c, err := textai.NewOpenAIChat(textai.OpenAIConfig{URL: url, APIKey: "sk-test", Model: "test-model"})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestOpenAIChatSummary(t *testing.T) {
	t.Parallel()
	srv := chatFixture(t, "Summary: \"A sourdough loaf baked in a Dutch oven; next time bake longer.\"\n", 0, "")
	c := newChat(t, srv.URL) // base URL without /v1
	got, err := c.Summarize(t.Context(), longNote)
	if err != nil {
		t.Fatal(err)
	}
	if want := "A sourdough loaf baked in a Dutch oven; next time bake longer."; got != want {
		t.Errorf("Summarize = %q, want %q", got, want)
	}
	if c.Name() != "openai:test-model" {
		t.Errorf("Name = %q", c.Name())
	}
	if got, err := c.Summarize(t.Context(), "  "); got != "" || err != nil {
		t.Errorf("blank text: %q, %v (and no request)", got, err)
	}
}

func TestOpenAIChatSummaryBounded(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("This sentence is part of a summary that runs on far too long. ", 10)
	srv := chatFixture(t, long, 0, "")
	got, err := newChat(t, srv.URL+"/v1").Summarize(t.Context(), longNote)
	if err != nil {
		t.Fatal(err)
	}
	if n := len([]rune(got)); n == 0 || n > textai.DefaultSummaryChars || !strings.HasSuffix(got, ".") {
		t.Errorf("summary of %d characters %q, want whole sentences within %d", n, got, textai.DefaultSummaryChars)
	}
}

func TestOpenAIChatTags(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, content string
		want          []string
	}{
		{"array", `["Sourdough", "baking", "bread", "baking"]`, []string{"sourdough", "baking", "bread"}},
		{"fenced", "```json\n[\"sourdough\", \"#Bread\"]\n```", []string{"sourdough", "bread"}},
		{"prose", `Here are the tags: ["sourdough", "dutch oven"]. Hope this helps!`, []string{"sourdough", "dutch oven"}},
		{"object", `{"tags": ["sourdough", "the", "x"]}`, []string{"sourdough"}},
		{"list", "- sourdough\n- bread, baking", []string{"sourdough", "bread", "baking"}},
		{"too many", `["a1","b2","c3","d4","e5","f6","g7","h8","i9","j10"]`, []string{"a1", "b2", "c3", "d4", "e5", "f6", "g7", "h8"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := chatFixture(t, tc.content, 0, "")
			got, err := newChat(t, srv.URL+"/v1/").Tags(t.Context(), longNote, nil)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("Tags = %q, want %q", got, tc.want)
			}
		})
	}
	t.Run("malformed", func(t *testing.T) {
		t.Parallel()
		srv := chatFixture(t, `["sourdough", 42`, 0, "")
		_, err := newChat(t, srv.URL).Tags(t.Context(), longNote, nil)
		if !errors.Is(err, textai.ErrBadResponse) || errors.Is(err, textai.ErrUnavailable) {
			t.Errorf("error = %v, want ErrBadResponse (permanent)", err)
		}
	})
}

func TestOpenAIErrors(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name      string
		status    int
		body      string
		temporary bool
	}{
		{"401", http.StatusUnauthorized, `{"error":{"message":"Incorrect API key provided","type":"invalid_request_error"}}`, false},
		{"400", http.StatusBadRequest, `{"error":"model not found"}`, false},
		{"429", http.StatusTooManyRequests, `{"error":{"message":"Rate limit reached"}}`, true},
		{"503", http.StatusServiceUnavailable, `upstream overloaded`, true},
		{"malformed 200", http.StatusOK, `{"choices": [`, false},
		{"no choices", http.StatusOK, `{"choices": []}`, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := chatFixture(t, "", tc.status, tc.body)
			_, err := newChat(t, srv.URL).Summarize(t.Context(), longNote)
			if err == nil {
				t.Fatal("no error")
			}
			if got := errors.Is(err, textai.ErrUnavailable); got != tc.temporary {
				t.Errorf("errors.Is(%v, ErrUnavailable) = %v, want %v", err, got, tc.temporary)
			}
			var apiErr *textai.APIError
			if tc.status != http.StatusOK {
				if !errors.As(err, &apiErr) || apiErr.StatusCode != tc.status {
					t.Errorf("error %v is not an APIError with status %d", err, tc.status)
				}
			} else if !errors.Is(err, textai.ErrBadResponse) {
				t.Errorf("error %v, want ErrBadResponse", err)
			}
			if strings.Contains(err.Error(), "sk-test") {
				t.Errorf("error leaks the API key: %v", err)
			}
		})
	}
	t.Run("401 message", func(t *testing.T) {
		t.Parallel()
		srv := chatFixture(t, "", http.StatusUnauthorized, `{"error":{"message":"Incorrect API key provided"}}`)
		_, err := newChat(t, srv.URL).Summarize(t.Context(), longNote)
		if !strings.Contains(err.Error(), "Incorrect API key provided") {
			t.Errorf("error %v lacks the API's message", err)
		}
	})
}

func TestOpenAIRetryAfter(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Retry-After", "7")
		w.WriteHeader(http.StatusTooManyRequests)
	}))
	t.Cleanup(srv.Close)
	_, err := newChat(t, srv.URL).Summarize(t.Context(), "some text")
	var apiErr *textai.APIError
	if !errors.As(err, &apiErr) || apiErr.RetryAfter != 7*time.Second {
		t.Errorf("error %v, want an APIError with RetryAfter 7s", err)
	}
}

func TestOpenAIUnreachable(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close() // nothing listens there any more
	_, err := newChat(t, url).Summarize(t.Context(), "some text")
	if !errors.Is(err, textai.ErrUnavailable) {
		t.Errorf("error = %v, want ErrUnavailable", err)
	}
	e, err := textai.NewOpenAIEmbedder(textai.OpenAIConfig{URL: url, Model: "m"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Embed(t.Context(), []string{"x y"}); !errors.Is(err, textai.ErrUnavailable) {
		t.Errorf("embed error = %v, want ErrUnavailable", err)
	}
}

func TestOpenAIConfigValidation(t *testing.T) {
	t.Parallel()
	for _, cfg := range []textai.OpenAIConfig{
		{URL: "http://127.0.0.1:1", Model: ""},
		{URL: "ftp://example.invalid", Model: "m"},
		{URL: "not a url", Model: "m"},
	} {
		if _, err := textai.NewOpenAIChat(cfg); err == nil {
			t.Errorf("NewOpenAIChat(%+v): no error", cfg)
		}
		if _, err := textai.NewOpenAIEmbedder(cfg); err == nil {
			t.Errorf("NewOpenAIEmbedder(%+v): no error", cfg)
		}
	}
}

// embeddingsFixture is a protocol fixture of the third-party OpenAI-compatible /v1/embeddings API (not a
// mock of our code). Each input gets the vector [len(input), index+1, 0, …] of dim elements, not normalised,
// and the data items are returned in reverse order so that the client must place them by "index".
func embeddingsFixture(t *testing.T, dim int, calls *atomic.Int32) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		if r.Method != http.MethodPost || r.URL.Path != "/v1/embeddings" {
			t.Errorf("request %s %s, want POST /v1/embeddings", r.Method, r.URL.Path)
		}
		var req struct {
			Model          string   `json:"model"`
			Input          []string `json:"input"`
			EncodingFormat string   `json:"encoding_format"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			t.Errorf("request body: %v", err)
		}
		if req.Model != "embed-model" || len(req.Input) == 0 || req.EncodingFormat != "float" {
			t.Errorf("request = %+v", req)
		}
		data := make([]any, 0, len(req.Input))
		for i := len(req.Input) - 1; i >= 0; i-- {
			if req.Input[i] == "" {
				t.Errorf("empty input sent")
			}
			v := make([]float64, dim)
			v[0], v[1] = float64(len(req.Input[i])), float64(i+1)
			data = append(data, map[string]any{"object": "embedding", "index": i, "embedding": v})
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"object": "list", "data": data, "model": req.Model})
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestOpenAIEmbeddings(t *testing.T) {
	t.Parallel()
	var calls atomic.Int32
	srv := embeddingsFixture(t, 8, &calls)
	e, err := textai.NewOpenAIEmbedder(textai.OpenAIConfig{URL: srv.URL + "/v1", Model: "embed-model", BatchSize: 2})
	if err != nil {
		t.Fatal(err)
	}
	if e.Dim() != 0 || e.Model() != "embed-model" {
		t.Errorf("before any call: Dim %d, Model %q", e.Dim(), e.Model())
	}
	texts := []string{"a", "bb", "", "dddd", "eeeee"}
	vecs, err := e.Embed(t.Context(), texts)
	if err != nil {
		t.Fatal(err)
	}
	if got := calls.Load(); got != 2 {
		t.Errorf("%d requests for 4 non-blank texts in batches of 2, want 2", got)
	}
	if e.Dim() != 8 {
		t.Errorf("Dim learned = %d, want 8", e.Dim())
	}
	for i, text := range texts {
		v := vecs[i]
		if len(v) != 8 {
			t.Fatalf("vector %d has %d elements", i, len(v))
		}
		if text == "" {
			if norm(v) != 0 {
				t.Errorf("blank text: %v, want the zero vector", v)
			}
			continue
		}
		if math.Abs(norm(v)-1) > 1e-6 {
			t.Errorf("vector %d not normalised: %v", i, v)
		}
		// The fixture put len(text) in element 0: the vector belongs to this text.
		if ratio := float64(v[0]) / float64(v[1]); v[1] == 0 || math.Abs(ratio-float64(len(text))/float64(v1(i))) > 1e-4 {
			t.Errorf("vector %d = %v is not the one of %q", i, v, text)
		}
	}
}

// v1 is element 1 the fixture gives text i of TestOpenAIEmbeddings: its index within its batch, plus 1.
func v1(i int) int {
	return map[int]int{0: 1, 1: 2, 3: 1, 4: 2}[i]
}

func TestOpenAIEmbeddingsBadResponses(t *testing.T) {
	t.Parallel()
	cases := []struct{ name, body string }{
		{"malformed", `{"data": [`},
		{"too few", `{"data": []}`},
		{"index out of range", `{"data": [{"index": 5, "embedding": [1, 0]}]}`},
		{"empty vector", `{"data": [{"index": 0, "embedding": []}]}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			// A protocol fixture of the third-party embeddings API answering a fixed body.
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				io.WriteString(w, tc.body)
			}))
			t.Cleanup(srv.Close)
			e, err := textai.NewOpenAIEmbedder(textai.OpenAIConfig{URL: srv.URL, Model: "m"})
			if err != nil {
				t.Fatal(err)
			}
			_, err = e.Embed(t.Context(), []string{"some text"})
			if !errors.Is(err, textai.ErrBadResponse) || errors.Is(err, textai.ErrUnavailable) {
				t.Errorf("error = %v, want ErrBadResponse (permanent)", err)
			}
		})
	}
	t.Run("dimension change", func(t *testing.T) {
		t.Parallel()
		var calls atomic.Int32
		srv := embeddingsFixture(t, 4, &calls)
		e, err := textai.NewOpenAIEmbedder(textai.OpenAIConfig{URL: srv.URL, Model: "embed-model", Dim: 3})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := e.Embed(t.Context(), []string{"x"}); !errors.Is(err, textai.ErrBadResponse) {
			t.Errorf("configured Dim 3, server answers 4: error = %v, want ErrBadResponse", err)
		}
	})
}

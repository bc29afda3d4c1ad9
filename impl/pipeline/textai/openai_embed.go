package textai

import (
	"context"
	"fmt"
	"math"
	"strings"
	"sync/atomic"
)

// OpenAIEmbedder embeds through an OpenAI-compatible /v1/embeddings endpoint. It is safe for concurrent use.
type OpenAIEmbedder struct {
	c     *openAIClient
	batch int
	dim   atomic.Int64
}

var _ Embedder = (*OpenAIEmbedder)(nil)

// NewOpenAIEmbedder returns the embeddings engine for cfg (see OpenAIConfig's Dim and BatchSize).
func NewOpenAIEmbedder(cfg OpenAIConfig) (*OpenAIEmbedder, error) {
	c, err := newOpenAIClient(cfg, "/embeddings")
	if err != nil {
		return nil, err
	}
	if cfg.Dim < 0 || cfg.BatchSize < 0 {
		return nil, fmt.Errorf("textai: OpenAI-compatible embeddings: negative Dim or BatchSize")
	}
	e := &OpenAIEmbedder{c: c, batch: cfg.BatchSize}
	if e.batch == 0 {
		e.batch = 64
	}
	e.dim.Store(int64(cfg.Dim))
	return e, nil
}

// Model returns the configured model name.
func (e *OpenAIEmbedder) Model() string { return e.c.model }

// Dim returns the configured dimension, or the one learned from the first response; 0 before that.
func (e *OpenAIEmbedder) Dim() int { return int(e.dim.Load()) }

type embeddingsRequest struct {
	Model          string   `json:"model"`
	Input          []string `json:"input"`
	EncodingFormat string   `json:"encoding_format"`
}

type embeddingsResponse struct {
	Data []struct {
		Index     *int      `json:"index"`
		Embedding []float64 `json:"embedding"`
	} `json:"data"`
}

// Embed sends texts in batches of BatchSize and returns their L2-normalised vectors in the order of texts,
// whatever the order of the response (each item is placed by its "index"). Blank texts are not sent (the API
// rejects empty input) and get the zero vector; texts longer than 24,000 characters are cut. A response whose
// count, indexes or dimension do not fit is ErrBadResponse.
func (e *OpenAIEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	var input []string
	var slots []int // out index of each input
	flush := func() error {
		if len(input) == 0 {
			return nil
		}
		if err := e.embedBatch(ctx, input, slots, out); err != nil {
			return err
		}
		input, slots = input[:0], slots[:0]
		return nil
	}
	for i, t := range texts {
		if strings.TrimSpace(t) == "" {
			continue
		}
		input = append(input, clip(t, maxInputChars))
		slots = append(slots, i)
		if len(input) == e.batch {
			if err := flush(); err != nil {
				return nil, err
			}
		}
	}
	if err := flush(); err != nil {
		return nil, err
	}
	dim := e.Dim()
	for i := range out {
		if out[i] == nil {
			if dim == 0 {
				// Nothing was embedded yet, so the dimension is unknown: the caller gets empty vectors,
				// which score 0 against anything.
				out[i] = []float32{}
				continue
			}
			out[i] = make([]float32, dim)
		}
	}
	return out, nil
}

func (e *OpenAIEmbedder) embedBatch(ctx context.Context, input []string, slots []int, out [][]float32) error {
	var resp embeddingsResponse
	req := embeddingsRequest{Model: e.c.model, Input: input, EncodingFormat: "float"}
	if err := e.c.post(ctx, req, &resp); err != nil {
		return err
	}
	bad := func(format string, args ...any) error {
		return fmt.Errorf("textai: %s: %w: %s", e.c.display, ErrBadResponse, fmt.Sprintf(format, args...))
	}
	if len(resp.Data) != len(input) {
		return bad("%d embeddings for %d inputs", len(resp.Data), len(input))
	}
	got := make([]bool, len(input))
	for k, d := range resp.Data {
		i := k
		if d.Index != nil {
			i = *d.Index
		}
		if i < 0 || i >= len(input) || got[i] {
			return bad("index %d out of range or repeated", i)
		}
		got[i] = true
		n := len(d.Embedding)
		if n == 0 {
			return bad("empty embedding at index %d", i)
		}
		if e.dim.CompareAndSwap(0, int64(n)); int(e.dim.Load()) != n {
			return bad("embedding of dimension %d, expected %d", n, e.dim.Load())
		}
		v := make([]float32, n)
		var norm float64
		for j, x := range d.Embedding {
			if math.IsNaN(x) || math.IsInf(x, 0) {
				return bad("non-finite value at index %d", i)
			}
			v[j] = float32(x)
			norm += x * x
		}
		if norm > 0 {
			inv := 1 / math.Sqrt(norm)
			for j := range v {
				v[j] = float32(float64(v[j]) * inv)
			}
		}
		out[slots[i]] = v
	}
	return nil
}

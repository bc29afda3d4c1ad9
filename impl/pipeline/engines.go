package pipeline

import (
	"context"
	"fmt"
	"io"
	"sync"

	"github.com/stratahq/strata/impl/pipeline/textai"
	"github.com/stratahq/strata/impl/pipeline/transcribe"
)

// EngineConfig chooses the engines: local ones by default, OpenAI-compatible
// endpoints when their URLs are set.
type EngineConfig struct {
	TranscribeURL, TranscribeModel string
	LLMURL, LLMModel               string
	EmbedURL, EmbedModel           string
	// APIKey is sent to every configured endpoint.
	APIKey string
	// EmbedDim is the local embedder's dimension (default 512).
	EmbedDim int
}

// BuildEngines constructs the engines of cfg. The local transcriber loads
// its model on first use, so a server that never receives audio never pays
// for it.
func BuildEngines(cfg EngineConfig) (Engines, error) {
	var e Engines
	e.Transcriber = &lazyTranscriber{cfg: transcribe.Config{URL: cfg.TranscribeURL, Model: cfg.TranscribeModel, APIKey: cfg.APIKey}}
	if cfg.LLMURL != "" {
		chat, err := textai.NewOpenAIChat(textai.OpenAIConfig{URL: cfg.LLMURL, Model: orDefault(cfg.LLMModel, "gpt-4o-mini"), APIKey: cfg.APIKey})
		if err != nil {
			return e, fmt.Errorf("--llm-url: %w", err)
		}
		e.Summarizer, e.Tagger = chat, chat
	} else {
		e.Summarizer = textai.NewLocalSummarizer(textai.SummarizerConfig{})
		e.Tagger = textai.NewLocalTagger(8)
	}
	if cfg.EmbedURL != "" {
		emb, err := textai.NewOpenAIEmbedder(textai.OpenAIConfig{URL: cfg.EmbedURL, Model: orDefault(cfg.EmbedModel, "text-embedding-3-small"), APIKey: cfg.APIKey})
		if err != nil {
			return e, fmt.Errorf("--embed-url: %w", err)
		}
		e.Embedder = emb
	} else {
		dim := cfg.EmbedDim
		if dim <= 0 {
			dim = 512
		}
		e.Embedder = textai.NewLocalEmbedder(dim)
	}
	return e, nil
}

func orDefault(v, d string) string {
	if v == "" {
		return d
	}
	return v
}

// lazyTranscriber builds its transcriber on first use.
type lazyTranscriber struct {
	cfg  transcribe.Config
	once sync.Once
	t    transcribe.Transcriber
	err  error
}

func (l *lazyTranscriber) get() (transcribe.Transcriber, error) {
	l.once.Do(func() { l.t, l.err = transcribe.New(l.cfg) })
	if l.t == nil && l.err == nil {
		return nil, transcribe.ErrClosed // closed before first use
	}
	return l.t, l.err
}

// Transcribe implements transcribe.Transcriber.
func (l *lazyTranscriber) Transcribe(ctx context.Context, audio io.Reader) (transcribe.Result, error) {
	t, err := l.get()
	if err != nil {
		return transcribe.Result{}, fmt.Errorf("load transcriber: %w", err)
	}
	return t.Transcribe(ctx, audio)
}

// Name implements transcribe.Transcriber.
func (l *lazyTranscriber) Name() string {
	if l.cfg.URL != "" {
		return "openai-compatible"
	}
	return "pocketsphinx"
}

// Close implements transcribe.Transcriber.
func (l *lazyTranscriber) Close() error {
	l.once.Do(func() {}) // nothing loaded: nothing to close, and no later load
	if l.t != nil {
		return l.t.Close()
	}
	return nil
}

package pipeline

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sync"

	"github.com/stratahq/strata/impl/pipeline/textai"
	"github.com/stratahq/strata/impl/pipeline/textai/uselite"
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
	// EmbedModelDir holds the local sentence encoder's weights (see
	// package uselite); empty means uselite.DefaultDir, where make deps
	// installs them. When they are not there, the hashed embedder stands in
	// (with a warning): it needs nothing, but ranks related items less well.
	EmbedModelDir string
	// HashedEmbeddings chooses the hashed embedder even when the sentence
	// encoder is installed.
	HashedEmbeddings bool
	// EmbedDim is the hashed embedder's dimension (default 512).
	EmbedDim int
}

// BuildEngines constructs the engines of cfg. The local transcriber and the
// sentence encoder load their models on first use, so a server that never
// receives audio or text never pays for them.
func BuildEngines(cfg EngineConfig, logger *slog.Logger) (Engines, error) {
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
		e.Embedder = localEmbedder(cfg, logger)
	}
	return e, nil
}

// localEmbedder is the sentence encoder when its weights are installed, else
// the hashed embedder.
func localEmbedder(cfg EngineConfig, logger *slog.Logger) textai.Embedder {
	if !cfg.HashedEmbeddings {
		dir := orDefault(cfg.EmbedModelDir, uselite.DefaultDir)
		if _, err := os.Stat(filepath.Join(dir, "model.json")); err == nil {
			return &lazyEncoder{dir: dir}
		}
		logger.Warn("the sentence encoder is not installed (run make deps); using hashed embeddings, which rank related items less well",
			"embed_model_dir", dir)
	}
	return textai.NewLocalEmbedder(cfg.EmbedDim)
}

// lazyEncoder loads the sentence encoder on first use (about 0.1 s and
// 28 MB). Its model name is known before, so stored vectors can be found.
type lazyEncoder struct {
	dir  string
	once sync.Once
	enc  *uselite.Encoder
	err  error
}

// Embed implements textai.Embedder.
func (l *lazyEncoder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	l.once.Do(func() { l.enc, l.err = uselite.Load(l.dir) })
	if l.err != nil {
		return nil, fmt.Errorf("load the sentence encoder: %w", l.err)
	}
	return l.enc.Embed(ctx, texts)
}

// Model implements textai.Embedder.
func (l *lazyEncoder) Model() string { return uselite.ModelName }

// Dim implements textai.Embedder.
func (l *lazyEncoder) Dim() int { return uselite.Dim }

// MinRelevance implements textai.Calibrated.
func (l *lazyEncoder) MinRelevance() float64 { return uselite.MinRelevance() }

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

package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"

	"github.com/spf13/cobra"

	"github.com/stratahq/strata/impl/logging"
	"github.com/stratahq/strata/impl/pipeline/textai/uselite"
	"github.com/stratahq/strata/impl/server"
)

func newServeCommand() *cobra.Command {
	cfg := server.Defaults()
	var demo bool
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Run the Strata server",
		Long: "Run the Strata server. Every flag can also be set through the environment as\n" +
			"STRATA_<FLAG> with dashes as underscores, e.g. STRATA_DATA_DIR; flags win.",
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return serve(cmd.Context(), cmd, cfg, demo)
		},
	}
	f := cmd.Flags()
	f.StringVar(&cfg.Addr, "addr", cfg.Addr, "listen address (host:port)")
	f.StringVar(&cfg.DataDir, "data-dir", cfg.DataDir, "directory for the control-plane store, keys and tenant data")
	f.StringVar(&cfg.BaseURL, "base-url", cfg.BaseURL, "public base URL (default http://{addr})")
	f.StringVar(&cfg.LogLevel, "log-level", cfg.LogLevel, "log level: debug, info, warn, error")
	f.StringVar(&cfg.LogFormat, "log-format", cfg.LogFormat, "log format: text or json")
	f.StringSliceVar(&cfg.CORSOrigins, "cors-origins", cfg.CORSOrigins, "comma-separated browser origins allowed by CORS (* for any)")
	f.StringSliceVar(&cfg.TrustedProxies, "trusted-proxies", nil, "comma-separated reverse proxies (CIDR prefixes or addresses) whose X-Forwarded-For names the client for per-IP limits (default: none)")
	f.DurationVar(&cfg.ShutdownTimeout, "shutdown-timeout", cfg.ShutdownTimeout, "how long in-flight requests may finish after SIGINT/SIGTERM")
	f.StringVar(&cfg.JWKSURL, "jwks-url", "", "JWKS URL of an external identity provider whose ES256/RS256 tokens are also accepted")
	f.StringVar(&cfg.JWTSecret, "jwt-secret", "", "accept legacy HS256 tokens signed with this secret (at least 32 characters)")
	f.StringSliceVar(&cfg.JWTIssuers, "jwt-issuer", nil, "issuers accepted on external (JWKS or HS256) tokens (default: this server's issuer)")
	f.DurationVar(&cfg.AccessTokenTTL, "access-token-ttl", cfg.AccessTokenTTL, "lifetime of access tokens (at most 1h; shorter for tests that watch tokens expire)")
	f.DurationVar(&cfg.RefreshTokenTTL, "refresh-token-ttl", cfg.RefreshTokenTTL, "lifetime of each refresh token (at most 720h)")
	f.DurationVar(&cfg.TokenLeeway, "token-leeway", cfg.TokenLeeway, "clock skew tolerated when verifying token times (at most 30s)")
	f.BoolVar(&cfg.DisableSignup, "disable-signup", false, "switch off POST /api/auth/v1/signup")
	f.StringVar(&cfg.BlobURL, "blob-url", "", "gocloud.dev/blob URL for uploads, e.g. s3://bucket (default: {data-dir}/blobs)")
	f.StringVar(&cfg.PluginDir, "plugin-dir", cfg.PluginDir, "directory of connector plugins (strata-connector-<type>)")
	f.IntVar(&cfg.PipelineWorkers, "pipeline-workers", 2, "concurrent AI pipeline jobs")
	f.StringVar(&cfg.Pipeline.TranscribeURL, "transcribe-url", "", "OpenAI-compatible server for /v1/audio/transcriptions (default: local PocketSphinx)")
	f.StringVar(&cfg.Pipeline.TranscribeModel, "transcribe-model", "whisper-1", "model name sent to --transcribe-url")
	f.StringVar(&cfg.Pipeline.LLMURL, "llm-url", "", "OpenAI-compatible server for /v1/chat/completions: summaries and tags (default: local)")
	f.StringVar(&cfg.Pipeline.LLMModel, "llm-model", "gpt-4o-mini", "model name sent to --llm-url")
	f.StringVar(&cfg.Pipeline.EmbedURL, "embed-url", "", "OpenAI-compatible server for /v1/embeddings (default: the local sentence encoder)")
	f.StringVar(&cfg.Pipeline.EmbedModel, "embed-model", "text-embedding-3-small", "model name sent to --embed-url")
	f.StringVar(&cfg.Pipeline.EmbedModelDir, "embed-model-dir", uselite.DefaultDir, "weights of the local sentence encoder (installed by make deps; without them, hashed embeddings)")
	f.BoolVar(&cfg.Pipeline.HashedEmbeddings, "hashed-embeddings", false, "use the hashed embedder even when the sentence encoder is installed (faster, less relevant)")
	f.StringVar(&cfg.Pipeline.APIKey, "ai-api-key", "", "bearer key sent to the AI endpoints above")
	f.StringVar(&cfg.Query.MemoryLimit, "tenant-memory-limit", "1GB", "DuckDB memory_limit of each tenant store")
	f.IntVar(&cfg.Query.Threads, "tenant-threads", 2, "DuckDB threads of each tenant store (bounds one tenant's CPU)")
	f.IntVar(&cfg.Query.MaxOpen, "max-open-tenants", 64, "tenant stores open at once (idle ones close first)")
	f.BoolVar(&demo, "demo", false, "on an empty store, create a demo tenant and user and print how to log in")
	return cmd
}

// serve runs the server until ctx is cancelled (SIGINT/SIGTERM), then lets
// in-flight requests finish for up to cfg.ShutdownTimeout.
func serve(ctx context.Context, cmd *cobra.Command, cfg server.Config, demo bool) error {
	logger, err := logging.New(cmd.ErrOrStderr(), cfg.LogLevel, cfg.LogFormat)
	if err != nil {
		return usageError{err}
	}
	app, err := server.New(ctx, cfg, logger)
	if err != nil {
		return err
	}
	defer func() {
		if err := app.Close(); err != nil {
			logger.Error("close stores", "err", err)
		}
	}()
	cfg = app.Config()

	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", cfg.Addr, err)
	}
	srv := app.HTTPServer()
	logger.Info("strata listening", "addr", ln.Addr().String(), "base_url", cfg.BaseURL, "data_dir", cfg.DataDir, "pid", os.Getpid())
	fmt.Fprintf(cmd.OutOrStdout(), "Strata is serving on http://%s (data in %s)\n", ln.Addr(), cfg.DataDir)
	if demo {
		if err := ensureDemo(ctx, app, cmd.OutOrStdout()); err != nil {
			_ = ln.Close()
			return fmt.Errorf("demo account: %w", err)
		}
	}

	serveErr := make(chan error, 1)
	go func() { serveErr <- srv.Serve(ln) }()

	select {
	case err := <-serveErr:
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}
	logger.Info("shutting down", "timeout", cfg.ShutdownTimeout.String())
	shutdownCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cfg.ShutdownTimeout)
	defer cancel()
	if err := srv.Shutdown(shutdownCtx); err != nil {
		_ = srv.Close()
		return fmt.Errorf("graceful shutdown: %w", err)
	}
	if err := <-serveErr; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("serve: %w", err)
	}
	logger.Info("stopped")
	return nil
}

// Package server wires Strata together: configuration → stores → services →
// the generated strict handlers → one http.Handler with the shared
// middleware of impl/httpx.
package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"path/filepath"
	"sync"
	"time"

	"github.com/getkin/kin-openapi/routers/gorillamux"
	"github.com/google/uuid"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/rs/cors"

	"github.com/stratahq/strata/gen/api"
	"github.com/stratahq/strata/impl/apierrors"
	"github.com/stratahq/strata/impl/auth"
	"github.com/stratahq/strata/impl/connectors"
	"github.com/stratahq/strata/impl/content"
	"github.com/stratahq/strata/impl/httpx"
	"github.com/stratahq/strata/impl/logging"
	"github.com/stratahq/strata/impl/media"
	"github.com/stratahq/strata/impl/pipeline"
	"github.com/stratahq/strata/impl/query"
	"github.com/stratahq/strata/impl/realtime"
	"github.com/stratahq/strata/impl/store"
	"github.com/stratahq/strata/impl/store/sqlite"
	datasync "github.com/stratahq/strata/impl/sync"
	"github.com/stratahq/strata/impl/tenancy"
	"github.com/stratahq/strata/openapi"
)

// App is a configured Strata instance: its stores and its HTTP handler. It
// has no listener, so tests serve it on their own.
type App struct {
	cfg     Config
	logger  *slog.Logger
	store   store.Store
	auth    *auth.Service
	limiter *tenancy.Limiter
	hub     *realtime.Hub
	media   *media.Store
	content *content.Service
	ws      *realtime.Server
	query   *query.Engine
	plugins *pluginRuntime
	conns   *connectors.Service
	syncs   *datasync.Runner
	engines pipeline.Engines
	vectors *pipeline.Vectors
	queue   *pipeline.Pipeline
	handler http.Handler

	stopBackground context.CancelFunc
	background     sync.WaitGroup
}

// New opens the stores under cfg.DataDir and builds the HTTP handler.
// Close releases what it opened. Every record logger receives with a
// request's context carries the request id.
func New(ctx context.Context, cfg Config, logger *slog.Logger) (*App, error) {
	logger = logging.WithRequestIDs(logger)
	cfg, err := cfg.normalize()
	if err != nil {
		return nil, err
	}
	st, err := sqlite.Open(ctx, filepath.Join(cfg.DataDir, sqlite.FileName))
	if err != nil {
		return nil, fmt.Errorf("control-plane store: %w", err)
	}
	app := &App{cfg: cfg, logger: logger, store: st, limiter: tenancy.NewLimiter(cfg.Now)}
	app.auth, err = auth.New(ctx, st, auth.Config{
		Issuer:          cfg.Issuer(),
		AccessTTL:       cfg.AccessTokenTTL,
		RefreshTTL:      cfg.RefreshTokenTTL,
		Leeway:          cfg.TokenLeeway,
		JWTSecret:       []byte(cfg.JWTSecret),
		JWKSURL:         cfg.JWKSURL,
		ExternalIssuers: cfg.JWTIssuers,
		DisableSignup:   cfg.DisableSignup,
		BcryptCost:      cfg.BcryptCost,
		Now:             cfg.Now,
	}, logger)
	if err != nil {
		_ = st.Close()
		return nil, fmt.Errorf("auth: %w", err)
	}
	app.query, err = query.New(query.Config{DataDir: cfg.DataDir, MemoryLimit: cfg.Query.MemoryLimit,
		Threads: cfg.Query.Threads, MaxOpen: cfg.Query.MaxOpen, Now: cfg.Now}, logger)
	if err != nil {
		_ = app.Close()
		return nil, fmt.Errorf("query engine: %w", err)
	}
	sealer, err := connectors.OpenSealer(cfg.DataDir)
	if err != nil {
		_ = app.Close()
		return nil, fmt.Errorf("secrets key: %w", err)
	}
	app.plugins = newPluginRuntime(cfg.PluginDir, logger)
	app.conns = connectors.NewService(st, app.plugins, sealer, cfg.Now)
	app.syncs = datasync.NewRunner(st, app.conns, app.query, app.plugins, logger, datasync.Options{Now: cfg.Now})
	app.hub = realtime.NewHub(cfg.EventBuffer)
	if app.media, err = media.Open(ctx, cfg.BlobURL, cfg.DataDir); err != nil {
		_ = app.Close()
		return nil, err
	}
	app.content = content.NewService(st, app.hub, content.Options{BaseURL: cfg.BaseURL, Media: app.media, Now: cfg.Now, Logger: logger})
	if app.engines, err = pipeline.BuildEngines(cfg.Pipeline, logger); err != nil {
		_ = app.Close()
		return nil, err
	}
	app.vectors = pipeline.NewVectors(st, app.engines.Embedder, cfg.Now, logger)
	app.queue, err = pipeline.New(ctx, st.DB(), st, app.content, app.media, app.engines, app.vectors,
		pipeline.Config{Workers: cfg.PipelineWorkers, Backoff: cfg.PipelineBackoff, Now: cfg.Now}, logger)
	if err != nil {
		_ = app.Close()
		return nil, fmt.Errorf("pipeline: %w", err)
	}
	app.content.SetProcessor(app.queue)
	bg, stop := context.WithCancel(context.WithoutCancel(ctx))
	app.stopBackground = stop
	app.handler, err = app.buildHandler(ctx)
	if err != nil {
		_ = app.Close()
		return nil, err
	}
	if err := app.queue.Start(bg); err != nil {
		_ = app.Close()
		return nil, err
	}
	if err := app.syncs.Start(bg); err != nil {
		_ = app.Close()
		return nil, err
	}
	app.background.Add(1)
	go app.pruneEvents(bg)
	return app, nil
}

// Event-log retention: DECISIONS.md keeps events at least 24 h.
const (
	eventRetention   = 48 * time.Hour
	pruneEventsEvery = time.Hour
)

// pruneEvents drops content events older than the retention, hourly.
func (a *App) pruneEvents(ctx context.Context) {
	defer a.background.Done()
	ticker := time.NewTicker(pruneEventsEvery)
	defer ticker.Stop()
	for {
		if err := a.store.PruneEvents(ctx, a.cfg.Now().Add(-eventRetention)); err != nil && ctx.Err() == nil {
			a.logger.WarnContext(ctx, "prune content events", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
		}
	}
}

// searchAllowed is the content_search gate: on unless the tenant's feature
// flag says otherwise.
func (a *App) searchAllowed(ctx context.Context, tenantID uuid.UUID) (bool, error) {
	t, err := a.auth.Tenant(ctx, tenantID)
	if err != nil {
		return false, err
	}
	enabled, set := t.Features["content_search"]
	return !set || enabled, nil
}

// Query returns the query engine (the sync writer, tests).
func (a *App) Query() *query.Engine { return a.query }

// Store returns the control-plane store (admin commands, tests).
func (a *App) Store() store.Store { return a.store }

// Auth returns the authentication service (admin commands, tests).
func (a *App) Auth() *auth.Service { return a.auth }

// Config returns the normalized configuration the app runs with.
func (a *App) Config() Config { return a.cfg }

// Handler returns the root HTTP handler.
func (a *App) Handler() http.Handler { return a.handler }

// HTTPServer returns an http.Server for the app, without an address; the
// caller serves it on its listener.
func (a *App) HTTPServer() *http.Server {
	return &http.Server{
		Handler:           a.handler,
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       120 * time.Second,
		ErrorLog:          slog.NewLogLogger(a.logger.Handler(), slog.LevelWarn),
	}
}

// Close stops background work and releases the app's stores.
func (a *App) Close() error {
	if a.stopBackground != nil {
		a.stopBackground()
	}
	if a.ws != nil {
		a.ws.Close()
	}
	var errs []error
	if a.syncs != nil {
		a.syncs.Stop() // running syncs end "interrupted"
	}
	if a.plugins != nil {
		a.plugins.Shutdown() // no plugin process outlives the server
	}
	if a.queue != nil {
		// Running jobs get a moment to finish; unfinished ones are retried on
		// the next start (river rescues them).
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		errs = append(errs, a.queue.Stop(ctx))
		cancel()
	}
	if a.vectors != nil {
		a.vectors.Close()
	}
	if a.engines.Transcriber != nil {
		errs = append(errs, a.engines.Transcriber.Close())
	}
	a.background.Wait()
	if a.media != nil {
		errs = append(errs, a.media.Close())
	}
	if a.query != nil {
		errs = append(errs, a.query.Close())
	}
	return errors.Join(append(errs, a.auth.Close(context.Background()), a.store.Close())...)
}

func (a *App) buildHandler(ctx context.Context) (http.Handler, error) {
	doc, err := openapi.Load(ctx)
	if err != nil {
		return nil, err
	}
	router, err := gorillamux.NewRouter(doc)
	if err != nil {
		return nil, fmt.Errorf("openapi router: %w", err)
	}

	registry := prometheus.NewRegistry()
	registry.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	metrics, err := httpx.NewMetrics(registry)
	if err != nil {
		return nil, fmt.Errorf("metrics: %w", err)
	}

	mux := http.NewServeMux()
	strict := api.NewStrictHandlerWithOptions(newHandlers(a.store, a.auth, a.content, pipeline.NewHandlers(a.vectors, a.content, a.searchAllowed), query.NewHandlers(a.query),
		connectors.NewHandlers(a.conns), datasync.NewHandlers(a.syncs)), nil, api.StrictHTTPServerOptions{
		RequestErrorHandlerFunc:  a.requestError,
		ResponseErrorHandlerFunc: a.responseError,
	})
	api.HandlerWithOptions(strict, api.StdHTTPServerOptions{
		BaseRouter:       mux,
		ErrorHandlerFunc: a.requestError,
	})
	// Operations excluded from generation (openapi/server.cfg.yaml).
	mux.Handle("GET /metrics", promhttp.HandlerFor(registry, promhttp.HandlerOpts{ErrorLog: slog.NewLogLogger(a.logger.Handler(), slog.LevelError)}))
	mux.HandleFunc("GET /openapi.yaml", serveSpec)
	mux.Handle("GET /api/content/events", a.eventsHandler())
	mux.Handle("GET /api/content/{id}/media", content.NewHandlers(a.content).MediaHandler(a.logger))
	mux.Handle("POST /api/data-platform/query", a.query.Handler(a.logger))
	// Routing is decided by httpx.Route against the document; this only
	// catches a disagreement between the two routers.
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		apierrors.Write(w, r, a.logger, apierrors.NotFound("no route for %s %s", r.Method, r.URL.Path))
	})

	proxies, err := httpx.ParseTrustedProxies(a.cfg.TrustedProxies)
	if err != nil {
		return nil, fmt.Errorf("--trusted-proxies: %w", err)
	}
	return httpx.Chain(mux,
		httpx.RequestID,
		httpx.Observe(a.logger, metrics, proxies),
		httpx.Recover(a.logger),
		a.cors(),
		httpx.Route(router, a.logger),
		httpx.BodyLimit(a.logger),
		a.auth.Middleware(a.logger),
		a.limiter.Middleware(a.logger),
		httpx.Validate(a.logger),
	), nil
}

// cors returns the CORS middleware, or nil (skipped by Chain) when no origin
// is configured. Preflight requests are answered here, before routing.
func (a *App) cors() httpx.Middleware {
	if len(a.cfg.CORSOrigins) == 0 {
		return nil
	}
	c := cors.New(cors.Options{
		AllowedOrigins: a.cfg.CORSOrigins,
		AllowedMethods: []string{http.MethodGet, http.MethodPost, http.MethodPatch, http.MethodDelete, http.MethodHead},
		AllowedHeaders: []string{"Authorization", "Content-Type", "X-Tenant-Id", "X-Request-Id", "Range",
			"apikey", "X-Client-Info", "X-Supabase-Api-Version"},
		ExposedHeaders: []string{"X-Request-Id", "Retry-After", "RateLimit-Limit", "RateLimit-Remaining",
			"RateLimit-Reset", "Content-Range", "Accept-Ranges"},
		MaxAge: 600,
	})
	return c.Handler
}

// requestError renders failures to decode a request (bad parameters, bad
// JSON) as 400 validation_error, or 413 for an oversized body. Messages of
// decoding errors are about the client's input, never about our internals.
func (a *App) requestError(w http.ResponseWriter, r *http.Request, err error) {
	var maxBytes *http.MaxBytesError
	if errors.As(err, &maxBytes) {
		apierrors.Write(w, r, a.logger, apierrors.PayloadTooLarge(maxBytes.Limit))
		return
	}
	var syntaxErr *json.SyntaxError
	var typeErr *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syntaxErr):
		apierrors.Write(w, r, a.logger, apierrors.Validation("invalid JSON body: %s", syntaxErr.Error()))
	case errors.As(err, &typeErr):
		apierrors.Write(w, r, a.logger, apierrors.Validation("invalid request body: field %q has the wrong type", typeErr.Field))
	default:
		apierrors.Write(w, r, a.logger, apierrors.Validation("invalid request: %s", err.Error()))
	}
}

// responseError renders an error returned by a handler: API errors as they
// are, anything else as a generic 500 with the cause only in the log.
func (a *App) responseError(w http.ResponseWriter, r *http.Request, err error) {
	apierrors.Write(w, r, a.logger, err)
}

func serveSpec(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/yaml")
	_, _ = w.Write(openapi.Spec)
}

package server

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stratahq/strata/gen/api"
	"github.com/stratahq/strata/impl/connectors"
	"github.com/stratahq/strata/impl/pipeline"
	"github.com/stratahq/strata/impl/query"
	"github.com/stratahq/strata/impl/store/sqlite"
	datasync "github.com/stratahq/strata/impl/sync"
)

// BenchmarkMiddleware measures what the shared middleware (request id, access
// log, metrics, recovery, OpenAPI routing, body limit, validation) costs per
// request, against the generated handler served by a bare ServeMux as the
// baseline.
func BenchmarkMiddleware(b *testing.B) {
	ctx := context.Background()
	cfg := Defaults()
	cfg.DataDir = b.TempDir()
	app, err := New(ctx, cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		b.Fatal(err)
	}
	defer app.Close()

	st, err := sqlite.Open(ctx, b.TempDir()+"/bare.db")
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	bare := http.NewServeMux()
	strict := api.NewStrictHandlerWithOptions(newHandlers(st, app.auth, app.content, pipeline.NewHandlers(app.vectors, app.content, app.searchAllowed), query.NewHandlers(app.query),
		connectors.NewHandlers(app.conns), datasync.NewHandlers(app.syncs)), nil, api.StrictHTTPServerOptions{
		RequestErrorHandlerFunc: app.requestError, ResponseErrorHandlerFunc: app.responseError,
	})
	api.HandlerWithOptions(strict, api.StdHTTPServerOptions{BaseRouter: bare})

	// A JSON body through validation and a handler (an unsupported grant
	// answers without touching the store, so both stacks do the same work).
	tokenBody := `{"email":"someone@example.com","password":"not relevant"}`
	requests := map[string]func() *http.Request{
		"healthz": func() *http.Request { return httptest.NewRequest(http.MethodGet, "/healthz", nil) },
		"json-body": func() *http.Request {
			r := httptest.NewRequest(http.MethodPost, "/api/auth/v1/token?grant_type=nope", strings.NewReader(tokenBody))
			r.Header.Set("Content-Type", "application/json")
			return r
		},
	}
	for name, newReq := range requests {
		for _, stack := range []struct {
			name string
			h    http.Handler
		}{{"bare-mux", bare}, {"full-stack", app.Handler()}} {
			b.Run(name+"/"+stack.name, func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					rec := httptest.NewRecorder()
					stack.h.ServeHTTP(rec, newReq())
					if rec.Code >= 500 {
						b.Fatalf("status %d", rec.Code)
					}
				}
			})
		}
	}
}

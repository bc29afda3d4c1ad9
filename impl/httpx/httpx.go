// Package httpx holds the HTTP behaviour shared by every endpoint: request
// ids, access logs and metrics, panic recovery, route resolution against the
// OpenAPI document (404/405), body limits (413) and request validation
// (400/415), all answering in the error shape of impl/apierrors.
//
// The middlewares run in the order DECISIONS.md fixes for checks: route →
// body size → authentication → tenant → quota → validation → operation.
package httpx

import (
	"context"
	"net/http"

	"github.com/getkin/kin-openapi/routers"
)

// Middleware wraps an http.Handler.
type Middleware func(http.Handler) http.Handler

// Chain wraps h in mws; the first middleware is the outermost.
func Chain(h http.Handler, mws ...Middleware) http.Handler {
	for i := len(mws) - 1; i >= 0; i-- {
		if mws[i] != nil {
			h = mws[i](h)
		}
	}
	return h
}

// requestState is what the outer middlewares learn about a request while
// the inner ones run: the route template and operation, once resolved.
type requestState struct {
	clientIP   string
	match      *routers.Route
	pathParams map[string]string
}

// routeLabel is the route template for logs and metrics.
func (s *requestState) routeLabel() string {
	if s.match == nil {
		return unmatchedRoute
	}
	return s.match.Path
}

type stateKey struct{}

func withState(ctx context.Context, s *requestState) context.Context {
	return context.WithValue(ctx, stateKey{}, s)
}

func stateFrom(ctx context.Context) *requestState {
	s, _ := ctx.Value(stateKey{}).(*requestState)
	return s
}

// RouteFrom returns the OpenAPI route that the request matched and its path
// parameters, or nil when the route middleware has not run or found nothing.
func RouteFrom(ctx context.Context) (*routers.Route, map[string]string) {
	s := stateFrom(ctx)
	if s == nil || s.match == nil {
		return nil, nil
	}
	return s.match, s.pathParams
}

// ClientIP returns the address of the client that sent the request: the
// connection's peer, or what trusted proxies report (TrustedProxies).
func ClientIP(ctx context.Context) string {
	if s := stateFrom(ctx); s != nil {
		return s.clientIP
	}
	return ""
}

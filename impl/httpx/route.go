package httpx

import (
	"errors"
	"log/slog"
	"net/http"
	"strings"

	"github.com/getkin/kin-openapi/routers"

	"github.com/stratahq/strata/impl/apierrors"
)

// allMethods are the methods tried when building the Allow header of a 405.
var allMethods = []string{http.MethodGet, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete}

// Route resolves the request against the OpenAPI document: an unknown path is
// 404 not_found, a known path with another method is 405 method_not_allowed
// with an Allow header. A HEAD request is resolved as GET (net/http drops the
// body). The matched route is stored for the later middlewares, the access
// log and the metrics.
func Route(router routers.Router, logger *slog.Logger) Middleware {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			route, params, err := findRoute(router, r, r.Method)
			if err != nil {
				if errors.Is(err, routers.ErrMethodNotAllowed) {
					allowed := allowedMethods(router, r)
					w.Header().Set("Allow", strings.Join(allowed, ", "))
					apierrors.Write(w, r, logger, apierrors.MethodNotAllowed(r.Method, r.URL.Path))
					return
				}
				apierrors.Write(w, r, logger, apierrors.NotFound("no route for %s %s", r.Method, r.URL.Path))
				return
			}
			if s := stateFrom(r.Context()); s != nil {
				s.match = route
				s.pathParams = params
			} else {
				r = r.WithContext(withState(r.Context(), &requestState{
					match: route, pathParams: params,
				}))
			}
			next.ServeHTTP(w, r)
		})
	}
}

func findRoute(router routers.Router, r *http.Request, method string) (*routers.Route, map[string]string, error) {
	if method == http.MethodHead {
		method = http.MethodGet
	}
	probe := r
	if method != r.Method {
		probe = r.Clone(r.Context())
		probe.Method = method
	}
	return router.FindRoute(probe)
}

func allowedMethods(router routers.Router, r *http.Request) []string {
	var allowed []string
	for _, m := range allMethods {
		if _, _, err := findRoute(router, r, m); err == nil {
			allowed = append(allowed, m)
			if m == http.MethodGet {
				allowed = append(allowed, http.MethodHead)
			}
		}
	}
	return allowed
}

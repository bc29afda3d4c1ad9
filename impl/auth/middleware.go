package auth

import (
	"errors"
	"log/slog"
	"net/http"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/stratahq/strata/impl/apierrors"
	"github.com/stratahq/strata/impl/httpx"
	"github.com/stratahq/strata/impl/principal"
)

// maxBearerLen bounds the credential we are willing to parse.
const maxBearerLen = 8 << 10

// Middleware authenticates every request to an operation that requires it
// (the document's security, unless the operation declares `security: []`):
// a missing, malformed or invalid bearer credential is 401 UNAUTHENTICATED,
// an expired access token 401 TOKEN_EXPIRED. The caller is put in the
// request context (principal.From).
func (s *Service) Middleware(logger *slog.Logger) httpx.Middleware {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			route, _ := httpx.RouteFrom(r.Context())
			if route == nil || route.Operation == nil || isPublic(route.Operation.Security) {
				next.ServeHTTP(w, r)
				return
			}
			bearer, ok := BearerToken(r.Header.Get("Authorization"))
			if !ok {
				writeAuthError(w, r, logger, errMissingToken)
				return
			}
			p, err := s.Authenticate(r.Context(), bearer)
			if err != nil {
				writeAuthError(w, r, logger, err)
				return
			}
			next.ServeHTTP(w, r.WithContext(principal.With(r.Context(), p)))
		})
	}
}

// isPublic reports an operation that declares `security: []`.
func isPublic(sec *openapi3.SecurityRequirements) bool {
	return sec != nil && len(*sec) == 0
}

var errMissingToken = errors.New("missing bearer token")

// BearerToken extracts the credential of an "Authorization: Bearer …" header.
func BearerToken(header string) (string, bool) {
	scheme, token, ok := strings.Cut(strings.TrimSpace(header), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	token = strings.TrimSpace(token)
	if token == "" || len(token) > maxBearerLen {
		return "", false
	}
	return token, true
}

// AuthError maps a failure of Authenticate to its API error.
func AuthError(err error) *apierrors.Error {
	switch {
	case errors.Is(err, ErrTokenExpired):
		return apierrors.New(http.StatusUnauthorized, apierrors.CodeTokenExpired, "access token has expired; refresh it")
	case errors.Is(err, errMissingToken):
		return apierrors.New(http.StatusUnauthorized, apierrors.CodeUnauthenticated, "missing bearer token in the Authorization header")
	case errors.Is(err, ErrInvalidToken):
		return apierrors.New(http.StatusUnauthorized, apierrors.CodeUnauthenticated, "invalid bearer token").WithInternalError(err)
	default:
		return apierrors.Internal(err)
	}
}

func writeAuthError(w http.ResponseWriter, r *http.Request, logger *slog.Logger, err error) {
	e := AuthError(err)
	if e.StatusCode == http.StatusUnauthorized {
		w.Header().Set("WWW-Authenticate", `Bearer realm="strata"`)
	}
	apierrors.Write(w, r, logger, e)
}

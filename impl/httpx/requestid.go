package httpx

import (
	"crypto/rand"
	"encoding/hex"
	"net/http"

	"github.com/stratahq/strata/impl/logging"
)

// RequestIDHeader is the header that carries the request id both ways.
const RequestIDHeader = "X-Request-Id"

// maxRequestIDLen bounds a client-supplied request id so that it cannot bloat
// logs; longer or odd ones are replaced.
const maxRequestIDLen = 128

// RequestID takes the client's X-Request-Id when it is a sane token, or
// generates one, echoes it in the response and puts it in the context for
// every log line of the request.
func RequestID(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := r.Header.Get(RequestIDHeader)
		if !validRequestID(id) {
			id = newRequestID()
		}
		w.Header().Set(RequestIDHeader, id)
		ctx := logging.WithRequestID(r.Context(), id)
		next.ServeHTTP(w, r.WithContext(ctx))
	})
}

func validRequestID(id string) bool {
	if id == "" || len(id) > maxRequestIDLen {
		return false
	}
	for _, c := range []byte(id) {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case c == '-', c == '_', c == '.', c == ':', c == '/', c == '+', c == '=':
		default:
			return false
		}
	}
	return true
}

func newRequestID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails on supported platforms
	return hex.EncodeToString(b[:])
}

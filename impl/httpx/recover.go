package httpx

import (
	"fmt"
	"log/slog"
	"net/http"
	"runtime/debug"

	"github.com/stratahq/strata/impl/apierrors"
)

// Recover turns a panic in a handler into 500 internal_error, logged with its
// stack and the request id; the client sees no internals. A panic with
// http.ErrAbortHandler is passed on, as net/http expects.
func Recover(logger *slog.Logger) Middleware {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			defer func() {
				p := recover()
				if p == nil {
					return
				}
				if p == http.ErrAbortHandler {
					panic(p)
				}
				logger.LogAttrs(r.Context(), slog.LevelError, "panic in handler",
					slog.String("panic", fmt.Sprint(p)), slog.String("stack", string(debug.Stack())))
				if rec, ok := w.(*responseRecorder); ok && rec.wroteHeader() {
					// Too late for an error body; abort so the client sees a broken response.
					panic(http.ErrAbortHandler)
				}
				apierrors.Write(w, r, nil, apierrors.Internal(fmt.Errorf("panic: %v", p)))
			}()
			next.ServeHTTP(w, r)
		})
	}
}

package httpx

import (
	"log/slog"
	"net/http"

	"github.com/getkin/kin-openapi/routers"

	"github.com/stratahq/strata/impl/apierrors"
)

// Body size limits of DECISIONS.md "Limits".
const (
	// JSONBodyLimit bounds JSON (and any non-upload) request bodies.
	JSONBodyLimit int64 = 1 << 20
	// UploadFileLimit bounds the file of an upload (audio, photos): 25 MiB,
	// counted on the file part itself by the upload handlers, so that a
	// file of exactly 25 MiB is accepted whatever the form around it.
	UploadFileLimit int64 = 25 << 20
	// UploadFormAllowance is what an upload body may carry besides its
	// file: multipart framing and the text fields, which the handlers cap
	// at 64 KiB each (title or caption, tags, folderId: 192 KiB at most).
	UploadFormAllowance int64 = 256 << 10
	// UploadBodyLimit bounds whole multipart bodies: the file and its form.
	UploadBodyLimit = UploadFileLimit + UploadFormAllowance
)

// BodyLimit refuses bodies larger than the operation's limit with 413
// payload_too_large: at once when Content-Length says so, otherwise when a
// reader crosses the limit (http.MaxBytesReader; apierrors.From maps the
// resulting *http.MaxBytesError to 413). Operations that take
// multipart/form-data get UploadBodyLimit (their handlers enforce
// UploadFileLimit on the file part), all others JSONBodyLimit.
func BodyLimit(logger *slog.Logger) Middleware {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			route, _ := RouteFrom(r.Context())
			limit := bodyLimitFor(route)
			if r.ContentLength > limit {
				// Close the connection: the unread body would otherwise be drained.
				w.Header().Set("Connection", "close")
				apierrors.Write(w, r, logger, apierrors.PayloadTooLarge(limit))
				return
			}
			if r.Body != nil && r.Body != http.NoBody {
				r.Body = http.MaxBytesReader(w, r.Body, limit)
			}
			next.ServeHTTP(w, r)
		})
	}
}

func bodyLimitFor(route *routers.Route) int64 {
	if route == nil || route.Operation == nil || route.Operation.RequestBody == nil || route.Operation.RequestBody.Value == nil {
		return JSONBodyLimit
	}
	if _, ok := route.Operation.RequestBody.Value.Content["multipart/form-data"]; ok {
		return UploadBodyLimit
	}
	return JSONBodyLimit
}

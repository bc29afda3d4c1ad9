package content

import (
	"log/slog"
	"net/http"

	"github.com/google/uuid"

	"github.com/stratahq/strata/impl/apierrors"
	"github.com/stratahq/strata/impl/principal"
)

// MediaHandler serves GET /api/content/{id}/media: the stored file to its
// owner, with its stored content type and single-range support. It is a
// plain handler (not a generated strict one) because Range needs the
// request and a seekable body; authentication and validation have run in
// the middleware before it.
func (h *Handlers) MediaHandler(logger *slog.Logger) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, ok := principal.From(r.Context())
		if !ok {
			apierrors.Write(w, r, logger, apierrors.Internal(nil))
			return
		}
		id, err := uuid.Parse(r.PathValue("id"))
		if err != nil {
			apierrors.Write(w, r, logger, apierrors.Validation("invalid path parameter \"id\": not a UUID"))
			return
		}
		m, err := h.svc.OpenMedia(r.Context(), p, id)
		if err != nil {
			apierrors.Write(w, r, logger, err)
			return
		}
		defer m.Reader.Close()
		w.Header().Set("Content-Type", m.ContentType)
		w.Header().Set("X-Content-Type-Options", "nosniff")
		w.Header().Set("Cache-Control", "private, max-age=0")
		http.ServeContent(&rangeErrors{ResponseWriter: w, r: r, logger: logger}, r, "", m.ModTime, m.Reader)
	})
}

// rangeErrors turns http.ServeContent's plain-text 416 into the shared JSON
// error shape; every other response passes through.
type rangeErrors struct {
	http.ResponseWriter
	r        *http.Request
	logger   *slog.Logger
	replaced bool
}

func (w *rangeErrors) WriteHeader(code int) {
	if code == http.StatusRequestedRangeNotSatisfiable {
		w.replaced = true
		for _, k := range []string{"Content-Type", "Content-Length", "X-Content-Type-Options"} {
			w.Header().Del(k)
		}
		apierrors.Write(w.ResponseWriter, w.r, w.logger,
			apierrors.New(code, "range_not_satisfiable", "the requested byte range is not satisfiable"))
		return
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *rangeErrors) Write(p []byte) (int, error) {
	if w.replaced {
		return len(p), nil // ServeContent's plain-text body is dropped
	}
	return w.ResponseWriter.Write(p)
}

package content

import (
	"fmt"
	"io"
	"log/slog"
	"math"
	"net/http"
	"strconv"
	"strings"

	"github.com/google/uuid"

	"github.com/stratahq/strata/impl/apierrors"
	"github.com/stratahq/strata/impl/principal"
)

// MediaHandler serves GET /api/content/{id}/media: the stored file to its
// owner, with its stored content type and single-range support. It is a
// plain handler (not a generated strict one) because Range needs the
// request and a seekable body; authentication and validation have run in
// the middleware before it.
//
// Range, RFC 9110 section 14: one satisfiable byte range is 206 with
// Content-Range; an unsatisfiable one (first byte past the end, or the
// suffix bytes=-0) is 416 with Content-Range: bytes */size; several ranges,
// another unit or a malformed header are ignored (200, the whole file),
// as the contract documents single ranges only.
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
		if len(r.Header.Values("Range")) > 0 {
			size, err := m.Reader.Seek(0, io.SeekEnd)
			if err == nil {
				_, err = m.Reader.Seek(0, io.SeekStart)
			}
			if err != nil {
				apierrors.Write(w, r, logger, apierrors.Internal(err))
				return
			}
			r = withRange(r, normalizeRange(strings.Join(r.Header.Values("Range"), ","), size))
		}
		w.Header().Set("Content-Type", m.ContentType)
		w.Header().Set("X-Content-Type-Options", "nosniff")
		w.Header().Set("Cache-Control", "private, max-age=0")
		http.ServeContent(&rangeErrors{ResponseWriter: w, r: r, logger: logger}, r, "", m.ModTime, m.Reader)
	})
}

// withRange returns r with its Range header replaced (removed when v is "").
func withRange(r *http.Request, v string) *http.Request {
	r2 := *r
	r2.Header = r.Header.Clone()
	if v == "" {
		r2.Header.Del("Range")
	} else {
		r2.Header.Set("Range", v)
	}
	return &r2
}

// normalizeRange rewrites a Range header for a file of size bytes into the
// one form http.ServeContent answers as RFC 9110 asks: "" (ignore it: 200)
// for another unit, a malformed value or several ranges; "bytes=first-last"
// within the file for one satisfiable range; "bytes=size-" for an
// unsatisfiable one, which ServeContent answers 416 with Content-Range
// bytes */size. Left to itself, ServeContent answers bytes=-0 with a 206 of
// no bytes and an impossible Content-Range, several ranges with a multipart
// 206 the contract does not describe, and an unknown unit or a malformed
// value with 416 where RFC 9110 says to ignore them. Rewriting, rather than
// answering here, keeps ServeContent's order of checks: If-Modified-Since,
// If-None-Match and If-Range are evaluated before the range.
func normalizeRange(v string, size int64) string {
	unit, set, ok := strings.Cut(v, "=")
	if !ok || !strings.EqualFold(unit, "bytes") {
		return ""
	}
	var spec string
	n := 0
	for s := range strings.SplitSeq(set, ",") {
		if s = strings.Trim(s, " \t"); s != "" {
			spec, n = s, n+1
		}
	}
	if n != 1 {
		return ""
	}
	first, last, ok := strings.Cut(spec, "-")
	if !ok {
		return ""
	}
	unsatisfiable := "bytes=" + strconv.FormatInt(size, 10) + "-"
	if first == "" { // suffix range: the last n bytes
		suffix, ok := rangeNumber(last)
		switch {
		case !ok:
			return ""
		case suffix == 0:
			return unsatisfiable
		case size == 0:
			return "" // nothing to send but the (empty) whole
		}
		return fmt.Sprintf("bytes=%d-%d", size-min(suffix, size), size-1)
	}
	start, ok := rangeNumber(first)
	if !ok {
		return ""
	}
	end := int64(math.MaxInt64)
	if last != "" {
		if end, ok = rangeNumber(last); !ok || end < start {
			return ""
		}
	}
	if start >= size {
		return unsatisfiable
	}
	return fmt.Sprintf("bytes=%d-%d", start, min(end, size-1))
}

// rangeNumber parses a range position (1*DIGIT); one too large for int64
// is math.MaxInt64, which is past the end of any file.
func rangeNumber(s string) (int64, bool) {
	if s == "" || strings.Trim(s, "0123456789") != "" {
		return 0, false
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return math.MaxInt64, true // only a range error is possible here
	}
	return n, true
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

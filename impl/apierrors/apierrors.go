// Package apierrors defines the one error shape every Strata endpoint returns,
// the codes of the spec and DECISIONS.md as constants, and the renderer that
// writes them.
//
// An *Error carries a public status, code and message, and an optional hidden
// internal cause that is logged but never sent to the client.
package apierrors

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net/http"
	"slices"
	"strconv"
	"time"
)

// Code is a machine-readable error code, sent in the "error" field.
type Code string

// Codes of spec section 7 and DECISIONS.md "Errors". Do not rename the values:
// clients match on them.
const (
	// Data platform (lowercase, spec 7).
	CodeQueryExecutionError Code = "query_execution_error"
	CodeForbidden           Code = "forbidden"
	CodePermissionDenied    Code = "permission_denied"
	CodeTableNotFound       Code = "table_not_found"
	CodeQueryTimeout        Code = "query_timeout"
	CodeServiceUnavailable  Code = "service_unavailable"

	// Authentication (uppercase, spec 7).
	CodeUnauthenticated Code = "UNAUTHENTICATED"
	CodeTokenExpired    Code = "TOKEN_EXPIRED"
	CodeForbiddenAuth   Code = "FORBIDDEN"
	CodeRateLimited     Code = "RATE_LIMITED"
	CodeFeatureGated    Code = "FEATURE_GATED"

	// Additional codes (DECISIONS.md).
	CodeValidation               Code = "validation_error"
	CodeNotFound                 Code = "not_found"
	CodeJobNotFound              Code = "job_not_found"
	CodeConnectorNotFound        Code = "connector_not_found"
	CodeMethodNotAllowed         Code = "method_not_allowed"
	CodeConflict                 Code = "conflict"
	CodePayloadTooLarge          Code = "payload_too_large"
	CodeUnsupportedMediaType     Code = "unsupported_media_type"
	CodeConnectorTypeUnavailable Code = "connector_type_unavailable"
	CodeInternal                 Code = "internal_error"
)

// Error is an API error: the public fields are the JSON body, Internal is the
// hidden cause (logged, never sent).
type Error struct {
	StatusCode int    `json:"statusCode"`
	Code       Code   `json:"error"`
	Message    string `json:"message"`
	// ErrorCode is GoTrue's code for the same failure, on authentication
	// endpoints, where auth clients branch on it (auth-js's error.code).
	ErrorCode string `json:"error_code,omitempty"`
	// Header holds extra response headers, such as Retry-After on a 429.
	Header http.Header `json:"-"`
	// Internal is the underlying cause; it never reaches the client.
	Internal error `json:"-"`
}

// New returns an error with the given status, code and public message.
func New(status int, code Code, format string, args ...any) *Error {
	return &Error{StatusCode: status, Code: code, Message: fmt.Sprintf(format, args...)}
}

// Error implements the error interface. It includes the internal cause so
// that logs show it; the JSON body never does.
func (e *Error) Error() string {
	if e.Internal != nil {
		return fmt.Sprintf("%d %s: %s: %v", e.StatusCode, e.Code, e.Message, e.Internal)
	}
	return fmt.Sprintf("%d %s: %s", e.StatusCode, e.Code, e.Message)
}

// Unwrap returns the internal cause.
func (e *Error) Unwrap() error { return e.Internal }

// WithInternalError returns a copy of e that records err as its hidden cause.
func (e *Error) WithInternalError(err error) *Error {
	c := *e
	c.Internal = err
	return &c
}

// WithErrorCode returns a copy of e that carries GoTrue's code for it.
func (e *Error) WithErrorCode(code string) *Error {
	c := *e
	c.ErrorCode = code
	return &c
}

// WithHeader returns a copy of e that also sets the response header key.
func (e *Error) WithHeader(key, value string) *Error {
	c := *e
	c.Header = e.Header.Clone()
	if c.Header == nil {
		c.Header = http.Header{}
	}
	c.Header.Set(key, value)
	return &c
}

// Constructors for the common cases.

// Validation is 400 validation_error; the message must name the field.
func Validation(format string, args ...any) *Error {
	return New(http.StatusBadRequest, CodeValidation, format, args...)
}

// NotFound is 404 not_found.
func NotFound(format string, args ...any) *Error {
	return New(http.StatusNotFound, CodeNotFound, format, args...)
}

// MethodNotAllowed is 405 method_not_allowed.
func MethodNotAllowed(method, path string) *Error {
	return New(http.StatusMethodNotAllowed, CodeMethodNotAllowed, "method %s is not allowed on %s", method, path)
}

// PayloadTooLarge is 413 payload_too_large.
func PayloadTooLarge(limit int64) *Error {
	return New(http.StatusRequestEntityTooLarge, CodePayloadTooLarge, "request body exceeds the limit of %d bytes", limit)
}

// UnsupportedMediaType is 415 unsupported_media_type.
func UnsupportedMediaType(format string, args ...any) *Error {
	return New(http.StatusUnsupportedMediaType, CodeUnsupportedMediaType, format, args...)
}

// Internal is 500 internal_error with a generic message; cause is logged only.
func Internal(cause error) *Error {
	return &Error{StatusCode: http.StatusInternalServerError, Code: CodeInternal,
		Message: "internal server error", Internal: cause}
}

// RateLimited is 429 RATE_LIMITED with the headers of DECISIONS.md: the
// quota (RateLimit-Limit), nothing left (RateLimit-Remaining: 0) and the
// whole seconds until a retry can succeed (Retry-After, RateLimit-Reset).
func RateLimited(limit int, retryAfter time.Duration, format string, args ...any) *Error {
	secs := int(math.Ceil(retryAfter.Seconds()))
	if secs < 1 {
		secs = 1
	}
	e := New(http.StatusTooManyRequests, CodeRateLimited, format, args...)
	e.Header = http.Header{}
	e.Header.Set("Retry-After", strconv.Itoa(secs))
	e.Header.Set("RateLimit-Limit", strconv.Itoa(limit))
	e.Header.Set("RateLimit-Remaining", "0")
	e.Header.Set("RateLimit-Reset", strconv.Itoa(secs))
	return e
}

// ServiceUnavailable is 503 service_unavailable.
func ServiceUnavailable(format string, args ...any) *Error {
	return New(http.StatusServiceUnavailable, CodeServiceUnavailable, format, args...)
}

// From converts any error into an *Error. Errors that are not API errors
// become a generic 500 whose cause is kept for the log.
func From(err error) *Error {
	var apiErr *Error
	if errors.As(err, &apiErr) {
		return apiErr
	}
	var maxBytes *http.MaxBytesError
	if errors.As(err, &maxBytes) {
		return PayloadTooLarge(maxBytes.Limit)
	}
	return Internal(err)
}

// Write renders err as the JSON error body and logs it: 5xx at error level
// with the cause, 429 at warn, the rest at info. The logger should carry the
// request id (see httpx).
func Write(w http.ResponseWriter, r *http.Request, logger *slog.Logger, err error) {
	e := From(err)
	level := slog.LevelInfo
	switch {
	case e.StatusCode >= 500:
		level = slog.LevelError
	case e.StatusCode == http.StatusTooManyRequests:
		level = slog.LevelWarn
	}
	if logger != nil {
		attrs := []slog.Attr{slog.Int("status", e.StatusCode), slog.String("code", string(e.Code))}
		if e.Internal != nil {
			attrs = append(attrs, slog.String("cause", e.Internal.Error()))
		}
		logger.LogAttrs(r.Context(), level, "request error", attrs...)
	}
	// The error's headers replace any set earlier for the same request (a
	// quota middleware's RateLimit-* of the request that is now refused).
	for k, vs := range e.Header {
		w.Header()[http.CanonicalHeaderKey(k)] = slices.Clone(vs)
	}
	body, mErr := json.Marshal(e)
	if mErr != nil { // cannot happen for this struct; keep the response well-formed anyway
		body = []byte(`{"statusCode":500,"error":"internal_error","message":"internal server error"}`)
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(e.StatusCode)
	_, _ = w.Write(body)
}

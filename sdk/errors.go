package sdk

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
)

// APIError is an error response of the server, parsed from the one error
// shape every endpoint uses: {"statusCode", "error", "message"}, plus the
// OAuth 2.0 fields of the token endpoint. Match classes of errors with
// errors.Is and the Err… sentinels:
//
//	if errors.Is(err, sdk.ErrNotFound) { … }
//	var apiErr *sdk.APIError
//	if errors.As(err, &apiErr) { log.Print(apiErr.RequestID) }
type APIError struct {
	// StatusCode is the HTTP status.
	StatusCode int
	// Code is the machine-readable code, the body's "error": lowercase for
	// the data platform and shared codes (not_found, validation_error, …),
	// uppercase for authentication (UNAUTHENTICATED, TOKEN_EXPIRED,
	// RATE_LIMITED, …), invalid_grant or unsupported_grant_type from the
	// token endpoint. Empty when the body was not in the error shape.
	Code string
	// Message is the human-readable explanation (it names the field of a
	// validation_error).
	Message string
	// ErrorCode is the GoTrue error_code of a token-endpoint failure
	// (invalid_credentials, refresh_token_not_found,
	// refresh_token_already_used, session_expired, validation_failed).
	ErrorCode string
	// RequestID is the response's X-Request-Id: quote it when reporting a
	// problem, the server's log lines carry it.
	RequestID string
	// RetryAfter is the response's Retry-After (429, 503), zero if absent.
	RetryAfter time.Duration

	// matches makes a sentinel match several codes (ErrNotFound matches
	// job_not_found, …); status makes it match bodies without a code.
	matches []string
	status  int
}

// Error implements error.
func (e *APIError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "strata: %d", e.StatusCode)
	if e.Code != "" {
		b.WriteString(" " + e.Code)
	}
	if e.ErrorCode != "" {
		b.WriteString(" (" + e.ErrorCode + ")")
	}
	if e.Message != "" {
		b.WriteString(": " + e.Message)
	}
	if e.RequestID != "" {
		b.WriteString(" [request " + e.RequestID + "]")
	}
	return b.String()
}

// Is reports whether target is an *APIError of the same class: a sentinel
// matches its codes (see the Err… variables), any other *APIError matches
// by Code.
func (e *APIError) Is(target error) bool {
	t, ok := target.(*APIError)
	if !ok {
		return false
	}
	if e.Code == "" && t.status != 0 {
		return e.StatusCode == t.status
	}
	if len(t.matches) > 0 {
		return slices.Contains(t.matches, e.Code)
	}
	return t.Code != "" && t.Code == e.Code
}

func sentinel(status int, code string, also ...string) *APIError {
	return &APIError{StatusCode: status, Code: code, matches: append([]string{code}, also...)}
}

// Sentinels for errors.Is. Each matches the codes named in its comment; use
// errors.As with *APIError for the details.
var (
	// ErrUnauthenticated: 401 UNAUTHENTICATED, 401 TOKEN_EXPIRED and a
	// failed grant (invalid_grant: wrong password, spent or revoked refresh
	// token). The session is gone: sign in again.
	ErrUnauthenticated = sentinel(401, "UNAUTHENTICATED", "TOKEN_EXPIRED", "invalid_grant")
	// ErrTokenExpired: 401 TOKEN_EXPIRED that the client could not cure by
	// refreshing (a static token, or the refresh failed).
	ErrTokenExpired = sentinel(401, "TOKEN_EXPIRED")
	// ErrForbidden: 403 forbidden (X-Tenant-Id missing or not the token's)
	// and 403 FORBIDDEN (no permission, e.g. sign-up switched off).
	ErrForbidden = sentinel(403, "forbidden", "FORBIDDEN")
	// ErrPermissionDenied: 403 permission_denied, a query that is not
	// read-only.
	ErrPermissionDenied = sentinel(403, "permission_denied")
	// ErrFeatureGated: 403 FEATURE_GATED, a feature switched off for the
	// tenant (search).
	ErrFeatureGated = sentinel(403, "FEATURE_GATED")
	// ErrNotFound: 404 not_found, job_not_found, connector_not_found and
	// table_not_found.
	ErrNotFound = sentinel(404, "not_found", "job_not_found", "connector_not_found", "table_not_found")
	// ErrQueryTimeout: 408 query_timeout.
	ErrQueryTimeout = sentinel(408, "query_timeout")
	// ErrConflict: 409 conflict.
	ErrConflict = sentinel(409, "conflict")
	// ErrValidation: 400 validation_error (the message names the field).
	ErrValidation = sentinel(400, "validation_error")
	// ErrQueryExecution: 400 query_execution_error (bad SQL, missing
	// parameter, engine failure).
	ErrQueryExecution = sentinel(400, "query_execution_error")
	// ErrRateLimited: 429 RATE_LIMITED (quota or concurrency); RetryAfter
	// says when to retry.
	ErrRateLimited = sentinel(429, "RATE_LIMITED")
	// ErrServiceUnavailable: 503 service_unavailable, and any 503 without
	// the error shape (a proxy's).
	ErrServiceUnavailable = sentinel(503, "service_unavailable")
)

func init() {
	// A bare 429 or 503 (from a proxy, say) still matches its class.
	ErrRateLimited.status = http.StatusTooManyRequests
	ErrServiceUnavailable.status = http.StatusServiceUnavailable
}

// errorBody is the shared error shape with the OAuth fields.
type errorBody struct {
	StatusCode       int    `json:"statusCode"`
	Error            string `json:"error"`
	Message          string `json:"message"`
	ErrorDescription string `json:"error_description"`
	ErrorCode        string `json:"error_code"`
}

// newAPIError builds the error of a non-success response from its status,
// headers and body. A body that is not the error shape becomes the message
// (shortened), so a proxy's error page is still readable.
func newAPIError(rsp *http.Response, body []byte) *APIError {
	e := &APIError{StatusCode: rsp.StatusCode}
	if rsp.Header != nil {
		e.RequestID = rsp.Header.Get("X-Request-Id")
		e.RetryAfter = parseRetryAfter(rsp.Header.Get("Retry-After"), time.Now())
	}
	var eb errorBody
	if json.Unmarshal(body, &eb) == nil && eb.Error != "" {
		e.Code, e.Message, e.ErrorCode = eb.Error, eb.Message, eb.ErrorCode
		if e.Message == "" {
			e.Message = eb.ErrorDescription
		}
		return e
	}
	msg := strings.TrimSpace(string(body))
	if len(msg) > 200 {
		msg = msg[:200] + "…"
	}
	if msg == "" {
		msg = http.StatusText(rsp.StatusCode)
	}
	e.Message = msg
	return e
}

// parseRetryAfter reads delay-seconds or an HTTP date; zero when absent or
// malformed.
func parseRetryAfter(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	if n, err := strconv.ParseInt(v, 10, 64); err == nil {
		if n < 0 {
			return 0
		}
		return time.Duration(n) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil {
		if d := t.Sub(now); d > 0 {
			return d
		}
	}
	return 0
}

// SyncError is the error of a sync job that ended failed. errors.Is(err,
// ErrSyncFailed) matches it.
type SyncError struct {
	// JobID is the failed job.
	JobID string
	// Message is the job's error (e.g. "interrupted", or which connector
	// failed and why).
	Message string
}

// ErrSyncFailed matches every *SyncError with errors.Is.
var ErrSyncFailed = errors.New("strata: sync failed")

// Error implements error.
func (e *SyncError) Error() string {
	return fmt.Sprintf("strata: sync job %s failed: %s", e.JobID, e.Message)
}

// Unwrap makes errors.Is(err, ErrSyncFailed) true.
func (e *SyncError) Unwrap() error { return ErrSyncFailed }

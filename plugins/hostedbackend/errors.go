package hostedbackend

import (
	"context"
	"errors"
	"strings"
)

// Sentinel errors, matched with errors.Is, so the host can tell the user
// what to fix.
var (
	// ErrUnauthorized means the backend refused the service_role_key
	// (HTTP 401 or 403).
	ErrUnauthorized = errors.New("the service_role_key was refused")
	// ErrUnreachable means the hosted backend could not be reached (DNS,
	// connection refused, TLS, timeouts) even after retries.
	ErrUnreachable = errors.New("cannot reach the hosted backend")
	// ErrNotPostgREST means the URL answered, but not like a PostgREST data
	// API (no OpenAPI document under /rest/v1/).
	ErrNotPostgREST = errors.New("not a hosted backend REST data API")
	// ErrProtocol means the backend sent something the connector cannot
	// interpret (malformed JSON, a value that does not fit its column type…).
	ErrProtocol = errors.New("unexpected response from the hosted backend")
)

// redactedError replaces the text of an error that would have revealed the
// service_role_key while keeping errors.Is working for the sentinels.
type redactedError struct {
	msg   string
	kinds []error
}

func (e *redactedError) Error() string { return e.msg }

func (e *redactedError) Is(target error) bool {
	for _, k := range e.kinds {
		if k == target {
			return true
		}
	}
	return false
}

// redactString removes every occurrence of secret from s.
func redactString(s, secret string) string {
	if len(secret) < 4 {
		return s
	}
	return strings.ReplaceAll(s, secret, "[REDACTED]")
}

// redactErr is the safety net applied to every error leaving the package:
// the key is never put in an error on purpose, but server-provided text is
// quoted in some errors and a server could echo it back.
func redactErr(err error, secret string) error {
	if err == nil || len(secret) < 4 || !strings.Contains(err.Error(), secret) {
		return err
	}
	var kinds []error
	for _, k := range []error{ErrUnauthorized, ErrUnreachable, ErrNotPostgREST, ErrProtocol, context.Canceled, context.DeadlineExceeded} {
		if errors.Is(err, k) {
			kinds = append(kinds, k)
		}
	}
	return &redactedError{msg: redactString(err.Error(), secret), kinds: kinds}
}

package sdk

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"time"
)

// retryPolicy says how 429 and 503 answers are retried.
type retryPolicy struct {
	max     int           // retries after the first attempt
	base    time.Duration // first backoff without Retry-After; doubles
	maxWait time.Duration // longest wait for one retry
}

func defaultRetryPolicy() retryPolicy {
	return retryPolicy{max: 3, base: 200 * time.Millisecond, maxWait: 30 * time.Second}
}

// backoff is the wait before retry n (0-based) when the server named none:
// base·2ⁿ with "equal jitter" (half fixed, half random), so that clients
// refused together do not come back together.
func (p retryPolicy) backoff(n int) time.Duration {
	d := p.base << min(n, 16)
	if d <= 0 {
		return 0
	}
	return d/2 + rand.N(d/2+1)
}

type ctxKey int

const idempotentKey ctxKey = iota

// Idempotent returns a context under which requests count as idempotent,
// and so are retried on 429 and 503 like GET, HEAD, PUT and DELETE are.
// Mark only requests that do the same when repeated. Query and Schema mark
// themselves (the server runs read-only statements only), and so do
// UpdateItem and UpdateFolder (they set fields to given values); Sync,
// uploads and other POSTs are never retried unless marked.
func Idempotent(ctx context.Context) context.Context {
	return context.WithValue(ctx, idempotentKey, true)
}

func isIdempotent(req *http.Request) bool {
	switch req.Method {
	case http.MethodGet, http.MethodHead, http.MethodPut, http.MethodDelete, http.MethodOptions:
		return true
	}
	marked, _ := req.Context().Value(idempotentKey).(bool)
	return marked
}

// transport is the HttpRequestDoer under the generated client. Per request
// it sets User-Agent and Authorization (signing in or refreshing first when
// needed), renews the token and repeats the request once on 401
// TOKEN_EXPIRED, and retries idempotent requests refused with 429 or 503.
type transport struct{ s *Client }

// maxErrorPeek bounds how much of a 401 body is read to find its code.
const maxErrorPeek = 64 << 10

// Do implements HttpRequestDoer.
func (t *transport) Do(req *http.Request) (*http.Response, error) {
	s := t.s
	ctx := req.Context()
	if req.Header.Get("User-Agent") == "" {
		req.Header.Set("User-Agent", s.userAgent)
	}
	// A request that brings its own Authorization (API() with an editor)
	// is sent as it is.
	setAuth := req.Header.Get("Authorization") == ""
	// A streamed body (an upload) cannot be sent twice.
	replayable := req.Body == nil || req.Body == http.NoBody || req.GetBody != nil
	idempotent := isIdempotent(req)
	renewed := false
	retries := 0
	for first := true; ; first = false {
		r := req
		if !first {
			r = req.Clone(ctx)
			if req.GetBody != nil {
				body, err := req.GetBody()
				if err != nil {
					return nil, err
				}
				r.Body = body
			}
		}
		var token string
		if setAuth {
			var err error
			if token, err = s.auth.token(ctx); err != nil {
				return nil, err
			}
			r.Header.Set("Authorization", "Bearer "+token)
		}
		rsp, err := s.doer.Do(r)
		if err != nil {
			return nil, err
		}
		switch {
		case rsp.StatusCode == http.StatusUnauthorized && setAuth && !renewed && replayable && s.auth.canRenew():
			if errorCode(rsp) != "TOKEN_EXPIRED" {
				return rsp, nil
			}
			discard(rsp)
			renewed = true
			if _, err := s.auth.renew(ctx, token); err != nil {
				return nil, fmt.Errorf("strata: the access token expired and the session could not be renewed: %w", err)
			}
			continue
		case (rsp.StatusCode == http.StatusTooManyRequests || rsp.StatusCode == http.StatusServiceUnavailable) &&
			idempotent && replayable && retries < s.retry.max:
			wait := parseRetryAfter(rsp.Header.Get("Retry-After"), s.now())
			if wait == 0 {
				wait = s.retry.backoff(retries)
			}
			if wait > s.retry.maxWait {
				return rsp, nil // longer than we may wait: the caller decides
			}
			if dl, ok := ctx.Deadline(); ok && time.Until(dl) < wait {
				return rsp, nil // would outlive ctx: fail now, not at the deadline
			}
			discard(rsp)
			if err := s.sleep(ctx, wait); err != nil {
				return nil, err
			}
			retries++
			continue
		}
		return rsp, nil
	}
}

// errorCode reads the "error" of a response in the error shape and leaves
// the body readable again.
func errorCode(rsp *http.Response) string {
	b, _ := io.ReadAll(io.LimitReader(rsp.Body, maxErrorPeek))
	_ = rsp.Body.Close()
	rsp.Body = io.NopCloser(bytes.NewReader(b))
	var eb errorBody
	_ = json.Unmarshal(b, &eb)
	return eb.Error
}

// discard drains a little of the body, so the connection can be reused,
// and closes it.
func discard(rsp *http.Response) {
	_, _ = io.Copy(io.Discard, io.LimitReader(rsp.Body, maxErrorPeek))
	_ = rsp.Body.Close()
}

// uaDoer sets the User-Agent and nothing else: the token endpoint's client.
type uaDoer struct {
	doer HttpRequestDoer
	ua   string
}

func (d *uaDoer) Do(req *http.Request) (*http.Response, error) {
	req.Header.Set("User-Agent", d.ua)
	return d.doer.Do(req)
}

// result returns the decoded success value of a generated response, or the
// *APIError of an error response.
func result[T any](v *T, rsp *http.Response, body []byte) (T, error) {
	var zero T
	if rsp == nil {
		return zero, fmt.Errorf("strata: no response")
	}
	if rsp.StatusCode < 200 || rsp.StatusCode > 299 {
		return zero, newAPIError(rsp, body)
	}
	if v == nil {
		return zero, fmt.Errorf("strata: unexpected response %s (Content-Type %q)", rsp.Status, rsp.Header.Get("Content-Type"))
	}
	return *v, nil
}

// noContent checks a response that has no body on success.
func noContent(rsp *http.Response, body []byte) error {
	if rsp.StatusCode < 200 || rsp.StatusCode > 299 {
		return newAPIError(rsp, body)
	}
	return nil
}

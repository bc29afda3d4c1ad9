// Package conformance is a black-box suite that runs against any live Strata
// server (or anything claiming to implement openapi/openapi.yaml): every
// response it receives is validated against the document with kin-openapi,
// and every check asserts the behaviour of the spec and DECISIONS.md.
//
// Run it with `go test ./conformance -args -base-url=http://host:port`; with
// no base URL the test starts a server in-process on a temporary data dir.
package conformance

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"

	"github.com/stratahq/strata/openapi"
)

// maxResponseBody bounds what the suite reads of one response.
const maxResponseBody = 32 << 20

// Config says where the server under test is.
type Config struct {
	// BaseURL is the server's base address, e.g. http://127.0.0.1:8080.
	BaseURL string
	// HTTPClient is used for every request; nil means a client with a 30 s timeout.
	HTTPClient *http.Client
	// Email and Password of an existing user; the authenticated checks need them.
	Email, Password string
	// HostedBackendURL and ServiceRoleKey, when set, make the sync check pull
	// a real hosted backend (or the PostgREST-protocol fixture CI starts) and
	// compare what lands in Strata with what the backend serves.
	HostedBackendURL, ServiceRoleKey string

	// AccessTokenTTL is the server's access-token lifetime: expires_in must
	// equal it. Zero means the spec's 1 h.
	AccessTokenTTL time.Duration
	// RefreshTokenTTL is the server's refresh-token lifetime, which no
	// response shows. Zero means the spec's 30 days.
	RefreshTokenTTL time.Duration
	// TokenLeeway is the most the server may accept an access token past its
	// exp (clock skew). Zero means 30 s.
	TokenLeeway time.Duration
	// MaxExpiryWait bounds how long one expiry check waits for a token to
	// expire. A lifetime beyond it is not waited for: the check passes what
	// it could observe and says in a note what it did not. Zero means 60 s.
	MaxExpiryWait time.Duration
	// Clock is the suite's time for the expiry checks; nil means real time.
	// An in-process run shares a movable clock with the server, so that
	// expiry is reached by moving the clock instead of waiting.
	Clock Clock
}

// Defaults of the Config durations.
const (
	DefaultAccessTokenTTL  = time.Hour
	DefaultRefreshTokenTTL = 30 * 24 * time.Hour
	DefaultTokenLeeway     = 30 * time.Second
	DefaultMaxExpiryWait   = 60 * time.Second
)

// Clock is a time source the suite can wait on.
type Clock interface {
	Now() time.Time
	// Sleep returns after d or when ctx ends; a movable clock moves
	// forward by d instead.
	Sleep(ctx context.Context, d time.Duration) error
}

type realClock struct{}

func (realClock) Now() time.Time { return time.Now() }

func (realClock) Sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Suite sends requests to the server under test and validates each
// response against the OpenAPI document. It records which operations were
// exercised. It is safe for concurrent use.
type Suite struct {
	cfg    Config
	base   *url.URL
	client *http.Client
	doc    *openapi3.T
	router routers.Router

	mu      sync.Mutex
	covered map[string]bool
}

// New loads the document and prepares a suite for cfg.
func New(ctx context.Context, cfg Config) (*Suite, error) {
	base, err := url.Parse(strings.TrimRight(cfg.BaseURL, "/"))
	if err != nil || base.Scheme == "" || base.Host == "" {
		return nil, fmt.Errorf("base URL %q: want an absolute URL", cfg.BaseURL)
	}
	doc, err := openapi.Load(ctx)
	if err != nil {
		return nil, err
	}
	router, err := gorillamux.NewRouter(doc)
	if err != nil {
		return nil, fmt.Errorf("openapi router: %w", err)
	}
	client := cfg.HTTPClient
	if client == nil {
		client = &http.Client{Timeout: 30 * time.Second}
	}
	for _, d := range []struct {
		v   *time.Duration
		def time.Duration
	}{
		{&cfg.AccessTokenTTL, DefaultAccessTokenTTL}, {&cfg.RefreshTokenTTL, DefaultRefreshTokenTTL},
		{&cfg.TokenLeeway, DefaultTokenLeeway}, {&cfg.MaxExpiryWait, DefaultMaxExpiryWait},
	} {
		if *d.v == 0 {
			*d.v = d.def
		}
	}
	if cfg.Clock == nil {
		cfg.Clock = realClock{}
	}
	return &Suite{cfg: cfg, base: base, client: client, doc: doc, router: router, covered: map[string]bool{}}, nil
}

// Request describes one call.
type Request struct {
	Method string
	// Path is the path and query, e.g. "/api/content?limit=5".
	Path        string
	Header      http.Header
	Body        []byte
	ContentType string
}

// Response is a received, validated response.
type Response struct {
	Status int
	Header http.Header
	Body   []byte
	// OperationID is the operation the request matched, "" for none.
	OperationID string
}

// ErrorBody is the error shape of DECISIONS.md "Errors".
type ErrorBody struct {
	StatusCode int    `json:"statusCode"`
	Error      string `json:"error"`
	Message    string `json:"message"`
}

// ErrorBody decodes the response as the shared error shape.
func (r *Response) ErrorBody() (ErrorBody, error) {
	var e ErrorBody
	if err := json.Unmarshal(r.Body, &e); err != nil {
		return e, fmt.Errorf("error body is not JSON: %w: %s", err, snippet(r.Body))
	}
	return e, nil
}

// ExpectError checks that the response is the given status and error code
// in the shared shape, with statusCode equal to the HTTP status and a
// non-empty message.
func (r *Response) ExpectError(status int, code string) error {
	if r.Status != status {
		return fmt.Errorf("status %d, want %d: %s", r.Status, status, snippet(r.Body))
	}
	e, err := r.ErrorBody()
	if err != nil {
		return err
	}
	if e.StatusCode != status || e.Error != code || e.Message == "" {
		return fmt.Errorf("error body %+v, want statusCode %d and error %q with a message", e, status, code)
	}
	if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		return fmt.Errorf("error Content-Type %q, want application/json", ct)
	}
	return nil
}

// Do sends req and validates the response against the document: a request
// that matches an operation must get a documented status with a body of the
// documented schema; one that matches none must get the shared error shape.
// A validation failure is returned as an error together with the response.
func (s *Suite) Do(ctx context.Context, req Request) (*Response, error) {
	httpReq, err := s.newRequest(ctx, req)
	if err != nil {
		return nil, err
	}
	httpResp, err := s.client.Do(httpReq)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", req.Method, req.Path, err)
	}
	defer httpResp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(httpResp.Body, maxResponseBody))
	if err != nil {
		return nil, fmt.Errorf("%s %s: read body: %w", req.Method, req.Path, err)
	}
	resp := &Response{Status: httpResp.StatusCode, Header: httpResp.Header, Body: body}
	if err := s.validate(ctx, httpReq, req.Body, resp); err != nil {
		return resp, fmt.Errorf("%s %s → %d: %w", req.Method, req.Path, resp.Status, err)
	}
	return resp, nil
}

func (s *Suite) newRequest(ctx context.Context, req Request) (*http.Request, error) {
	u, err := s.base.Parse(s.base.Path + req.Path)
	if err != nil {
		return nil, fmt.Errorf("path %q: %w", req.Path, err)
	}
	var body io.Reader
	if req.Body != nil {
		body = bytes.NewReader(req.Body)
	}
	httpReq, err := http.NewRequestWithContext(ctx, req.Method, u.String(), body)
	if err != nil {
		return nil, err
	}
	for k, vs := range req.Header {
		for _, v := range vs {
			httpReq.Header.Add(k, v)
		}
	}
	if req.ContentType != "" {
		httpReq.Header.Set("Content-Type", req.ContentType)
	}
	return httpReq, nil
}

func (s *Suite) validate(ctx context.Context, httpReq *http.Request, reqBody []byte, resp *Response) error {
	// Route on the path as the document sees it: strip the base URL's path.
	probe := httpReq.Clone(ctx)
	probe.URL.Path = strings.TrimPrefix(probe.URL.Path, s.base.Path)
	if probe.Method == http.MethodHead {
		probe.Method = http.MethodGet
	}
	route, params, err := s.router.FindRoute(probe)
	if err != nil {
		return s.validateUnrouted(resp, err)
	}
	resp.OperationID = route.Operation.OperationID
	s.mu.Lock()
	s.covered[route.Operation.OperationID] = true
	s.mu.Unlock()
	if reqBody != nil {
		probe.Body = io.NopCloser(bytes.NewReader(reqBody))
	}
	input := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: &openapi3filter.RequestValidationInput{
			Request: probe, PathParams: params, Route: route,
		},
		Status: resp.Status,
		Header: resp.Header,
		Options: &openapi3filter.Options{
			IncludeResponseStatus: true,
		},
	}
	input.SetBodyBytes(resp.Body)
	if err := openapi3filter.ValidateResponse(ctx, input); err != nil {
		return fmt.Errorf("response does not match openapi.yaml: %s", firstLines(err.Error(), 3))
	}
	if resp.Status >= 400 {
		// Every error, documented or not, is in the shared shape.
		if _, err := resp.ErrorBody(); err != nil {
			return err
		}
	}
	return nil
}

// validateUnrouted checks a response to a request that matches no operation:
// it must be 404 or 405 in the shared error shape.
func (s *Suite) validateUnrouted(resp *Response, routeErr error) error {
	want := http.StatusNotFound
	if errors.Is(routeErr, routers.ErrMethodNotAllowed) {
		want = http.StatusMethodNotAllowed
	}
	if resp.Status != want {
		return fmt.Errorf("request matches no operation (%v): status %d, want %d", routeErr, resp.Status, want)
	}
	errorSchema := s.doc.Components.Schemas["Error"]
	if errorSchema == nil || errorSchema.Value == nil {
		return errors.New("openapi.yaml has no components.schemas.Error")
	}
	var v any
	if err := json.Unmarshal(resp.Body, &v); err != nil {
		return fmt.Errorf("error body is not JSON: %w", err)
	}
	if err := errorSchema.Value.VisitJSON(v); err != nil {
		return fmt.Errorf("error body does not match the Error schema: %s", firstLines(err.Error(), 2))
	}
	return nil
}

// markCovered records an operation exercised outside Do (the WebSocket).
func (s *Suite) markCovered(operationID string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.covered[operationID] = true
}

// Operations returns every operationId of the document, sorted.
func (s *Suite) Operations() []string {
	var ids []string
	for _, item := range s.doc.Paths.Map() {
		for _, op := range item.Operations() {
			ids = append(ids, op.OperationID)
		}
	}
	slices.Sort(ids)
	return ids
}

// Uncovered returns the operations no request has exercised yet, sorted.
func (s *Suite) Uncovered() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for _, id := range s.Operations() {
		if !s.covered[id] {
			out = append(out, id)
		}
	}
	return out
}

func snippet(b []byte) string {
	const max = 300
	if len(b) > max {
		return string(b[:max]) + "…"
	}
	return string(b)
}

func firstLines(s string, n int) string {
	lines := strings.SplitN(s, "\n", n+1)
	if len(lines) > n {
		lines = lines[:n]
	}
	return strings.Join(lines, " ")
}

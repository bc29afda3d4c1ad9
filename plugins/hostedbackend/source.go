package hostedbackend

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"mime"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow/memory"
)

// Defaults of Options.
const (
	// DefaultPageSize matches hosted backends' default row cap.
	DefaultPageSize = 1000
	// DefaultMaxRetries bounds the retries of one request.
	DefaultMaxRetries = 5
	// DefaultBackoff is the first backoff delay (doubled per retry).
	DefaultBackoff = 500 * time.Millisecond
	// DefaultMaxBackoff caps one backoff delay.
	DefaultMaxBackoff = 30 * time.Second
	// DefaultMaxRetryAfter caps the wait a Retry-After header asks for.
	DefaultMaxRetryAfter = 2 * time.Minute
)

// Options tune a Source. The zero value gives the defaults.
type Options struct {
	// HTTPClient sends the requests; nil means a client with a 60 s
	// per-request timeout (a page should never take that long).
	HTTPClient *http.Client
	// PageSize is the number of rows asked for per request (limit=). Hosted
	// backends cap it silently (1,000 by default), which paging tolerates.
	// It also bounds the rows of one record batch. 0 means DefaultPageSize.
	PageSize int
	// MaxRetries bounds the retries of one request after 429, 5xx or a
	// network failure: 0 means DefaultMaxRetries, a negative value none.
	MaxRetries int
	// Backoff is the base of the exponential backoff (doubled per attempt,
	// with jitter); 0 means DefaultBackoff.
	Backoff time.Duration
	// MaxBackoff caps one backoff delay; 0 means DefaultMaxBackoff.
	MaxBackoff time.Duration
	// MaxRetryAfter caps the wait a server asks for with Retry-After; 0
	// means DefaultMaxRetryAfter.
	MaxRetryAfter time.Duration
	// Allocator allocates the Arrow buffers; nil means memory.DefaultAllocator.
	Allocator memory.Allocator
	// Logger receives retries and warnings; nil discards them. The
	// service_role_key is never logged.
	Logger *slog.Logger
	// UserAgent is sent as User-Agent; empty means "strata-hosted-backend".
	UserAgent string
}

// Source reads the tables of one hosted backend. It is safe for concurrent
// use by multiple goroutines (each Read has its own state).
type Source struct {
	cfg  Config
	base *url.URL // {hosted_backend_url}/rest/v1/
	opts Options
	hc   *http.Client
	log  *slog.Logger
	mem  memory.Allocator
}

// NewSource validates cfg and returns a Source. It does not contact the
// backend: call Check for that.
func NewSource(cfg Config, opts Options) (*Source, error) {
	base, err := restBase(cfg.HostedBackendURL)
	if err != nil {
		return nil, fmt.Errorf("hosted_backend: %w", err)
	}
	if cfg.ServiceRoleKey == "" {
		return nil, errors.New("hosted_backend: service_role_key is required")
	}
	if opts.HTTPClient == nil {
		opts.HTTPClient = &http.Client{Timeout: 60 * time.Second}
	}
	if opts.PageSize <= 0 {
		opts.PageSize = DefaultPageSize
	}
	if opts.MaxRetries == 0 {
		opts.MaxRetries = DefaultMaxRetries
	} else if opts.MaxRetries < 0 {
		opts.MaxRetries = 0
	}
	if opts.Backoff <= 0 {
		opts.Backoff = DefaultBackoff
	}
	if opts.MaxBackoff <= 0 {
		opts.MaxBackoff = DefaultMaxBackoff
	}
	if opts.MaxRetryAfter <= 0 {
		opts.MaxRetryAfter = DefaultMaxRetryAfter
	}
	if opts.Allocator == nil {
		opts.Allocator = memory.DefaultAllocator
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.UserAgent == "" {
		opts.UserAgent = "strata-hosted-backend"
	}
	return &Source{cfg: cfg, base: base, opts: opts, hc: opts.HTTPClient, log: opts.Logger, mem: opts.Allocator}, nil
}

// endpoint is the URL shown in errors and logs: scheme and host only.
func (s *Source) endpoint() string {
	return s.base.Scheme + "://" + s.base.Host
}

// Check verifies that the backend is reachable, accepts the key and serves a
// PostgREST root OpenAPI document. Its errors wrap ErrUnreachable,
// ErrUnauthorized or ErrNotPostgREST and are safe to show to users.
func (s *Source) Check(ctx context.Context) error {
	_, err := s.fetchOpenAPI(ctx)
	return redactErr(err, s.cfg.ServiceRoleKey)
}

// retryable marks an error worth another attempt; after is the wait the
// server asked for (0: use the backoff).
type retryable struct {
	err   error
	after time.Duration
}

func (r *retryable) Error() string { return r.err.Error() }
func (r *retryable) Unwrap() error { return r.err }

// withRetry runs op until it succeeds, fails with a non-retryable error, the
// attempts are used up or ctx ends.
func (s *Source) withRetry(ctx context.Context, what string, op func(attempt int) error) error {
	for attempt := 0; ; attempt++ {
		err := op(attempt)
		if err == nil {
			return nil
		}
		var r *retryable
		if !errors.As(err, &r) {
			var ee *emitError
			if errors.As(err, &ee) {
				return err // the caller's own error, passed through untouched
			}
			return fmt.Errorf("%s: %w", what, err)
		}
		if ctx.Err() != nil {
			return fmt.Errorf("%s: %w", what, context.Cause(ctx))
		}
		if attempt >= s.opts.MaxRetries {
			if s.opts.MaxRetries == 0 {
				return fmt.Errorf("%s: %w", what, r.err)
			}
			return fmt.Errorf("%s: giving up after %d attempts: %w", what, attempt+1, r.err)
		}
		wait := r.after
		if wait <= 0 {
			wait = s.backoff(attempt)
		} else if wait > s.opts.MaxRetryAfter {
			wait = s.opts.MaxRetryAfter
		}
		s.log.LogAttrs(ctx, slog.LevelWarn, "hosted_backend: retrying",
			slog.String("op", what), slog.Int("attempt", attempt+1),
			slog.Duration("wait", wait), slog.String("error", redactString(r.err.Error(), s.cfg.ServiceRoleKey)))
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("%s: %w", what, context.Cause(ctx))
		case <-t.C:
		}
	}
}

// backoff is base·2^attempt capped at MaxBackoff, with "equal jitter"
// (between half and all of it) so that many clients do not retry in step.
func (s *Source) backoff(attempt int) time.Duration {
	d := s.opts.Backoff
	for i := 0; i < attempt && d < s.opts.MaxBackoff; i++ {
		d *= 2
	}
	if d > s.opts.MaxBackoff {
		d = s.opts.MaxBackoff
	}
	half := d / 2
	return half + time.Duration(rand.Int64N(int64(half)+1))
}

// parseRetryAfter reads Retry-After as delta-seconds or an HTTP date.
func parseRetryAfter(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	if n, err := strconv.ParseFloat(v, 64); err == nil {
		if n <= 0 {
			return 0
		}
		return time.Duration(n * float64(time.Second))
	}
	if t, err := http.ParseTime(v); err == nil {
		if d := t.Sub(now); d > 0 {
			return d
		}
	}
	return 0
}

// pgrstError is PostgREST's error body.
type pgrstError struct {
	Code    string          `json:"code"`
	Message string          `json:"message"`
	Details json.RawMessage `json:"details"`
	Hint    json.RawMessage `json:"hint"`
}

// describeBody turns an error response body into a short, redacted text.
func (s *Source) describeBody(resp *http.Response) string {
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 16<<10))
	var pe pgrstError
	text := ""
	if json.Unmarshal(b, &pe) == nil && (pe.Message != "" || pe.Code != "") {
		text = pe.Message
		if pe.Code != "" {
			text = pe.Code + ": " + text
		}
		if d := jsonText(pe.Details); d != "" {
			text += " (" + d + ")"
		}
		if h := jsonText(pe.Hint); h != "" {
			text += " hint: " + h
		}
	} else {
		text = strings.Join(strings.Fields(string(b)), " ")
		if len(text) > 200 {
			text = text[:200] + "…"
		}
	}
	return redactString(text, s.cfg.ServiceRoleKey)
}

func jsonText(raw json.RawMessage) string {
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	var str string
	if json.Unmarshal(raw, &str) == nil {
		return str
	}
	return string(raw)
}

// request is one HTTP request to the data API.
type request struct {
	method string
	path   string // relative to /rest/v1/, unescaped; "" for the root
	query  url.Values
	header http.Header
}

// url builds the request URL. The key is never put in the URL (headers
// only), so URLs can be logged and quoted in errors.
func (s *Source) url(path string, q url.Values) string {
	u := *s.base
	if path != "" {
		u.Path = s.base.Path + path
		u.RawPath = s.base.EscapedPath() + url.PathEscape(path)
	}
	u.RawQuery = ""
	if len(q) > 0 {
		u.RawQuery = q.Encode()
	}
	return u.String()
}

// send performs one attempt and classifies the outcome. On success the
// caller owns resp.Body. Errors are *retryable where another attempt may
// help.
func (s *Source) send(ctx context.Context, r request) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, r.method, s.url(r.path, r.query), nil)
	if err != nil {
		return nil, fmt.Errorf("building request: %w", err)
	}
	for k, v := range r.header {
		req.Header[k] = v
	}
	req.Header.Set("apikey", s.cfg.ServiceRoleKey)
	req.Header.Set("Authorization", "Bearer "+s.cfg.ServiceRoleKey)
	if req.Header.Get("Accept") == "" {
		req.Header.Set("Accept", "application/json")
	}
	req.Header.Set("User-Agent", s.opts.UserAgent)

	resp, err := s.hc.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return nil, context.Cause(ctx)
		}
		return nil, s.networkError(err)
	}
	switch {
	case resp.StatusCode >= 200 && resp.StatusCode < 300, resp.StatusCode == http.StatusRequestedRangeNotSatisfiable:
		return resp, nil
	}
	defer resp.Body.Close()
	desc := s.describeBody(resp)
	where := r.method + " /rest/v1/" + r.path
	switch {
	case resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden:
		return nil, fmt.Errorf("%w (%d) by %s: %s", ErrUnauthorized, resp.StatusCode, s.endpoint(), desc)
	case resp.StatusCode == http.StatusTooManyRequests || (resp.StatusCode >= 500 && resp.StatusCode != http.StatusNotImplemented):
		return nil, &retryable{
			err:   fmt.Errorf("%s answered %s: %s", where, resp.Status, desc),
			after: parseRetryAfter(resp.Header.Get("Retry-After"), time.Now()),
		}
	}
	return nil, &statusError{status: resp.StatusCode, msg: fmt.Sprintf("%s answered %s: %s", where, resp.Status, desc)}
}

// statusError is a non-retryable HTTP error status.
type statusError struct {
	status int
	msg    string
}

func (e *statusError) Error() string { return e.msg }

// networkError wraps a transport failure as ErrUnreachable; DNS "no such
// host" is final, everything else is worth a retry.
func (s *Source) networkError(err error) error {
	// url.Error repeats the URL; the host is enough and the path may be long.
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	wrapped := fmt.Errorf("%w at %s: %w", ErrUnreachable, s.endpoint(), err)
	var dnsErr *net.DNSError
	if errors.As(err, &dnsErr) && dnsErr.IsNotFound {
		return wrapped
	}
	return &retryable{err: wrapped}
}

// fetchOpenAPI reads and parses the root OpenAPI document.
func (s *Source) fetchOpenAPI(ctx context.Context) (*openAPIDoc, error) {
	var doc *openAPIDoc
	err := s.withRetry(ctx, "reading the table list (GET /rest/v1/)", func(int) error {
		resp, err := s.send(ctx, request{method: http.MethodGet, header: http.Header{
			"Accept": {"application/openapi+json, application/json"},
		}})
		if err != nil {
			var se *statusError
			if errors.As(err, &se) && (se.status == http.StatusNotFound || se.status == http.StatusMethodNotAllowed) {
				return fmt.Errorf("%w: %s does not serve a PostgREST data API under /rest/v1/ (%s)", ErrNotPostgREST, s.endpoint(), se.msg)
			}
			return err
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("%w: GET /rest/v1/ at %s answered %s", ErrNotPostgREST, s.endpoint(), resp.Status)
		}
		ct, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
		if ct != "" && !strings.Contains(ct, "json") {
			return fmt.Errorf("%w: GET /rest/v1/ at %s answered %s instead of PostgREST's OpenAPI document", ErrNotPostgREST, s.endpoint(), ct)
		}
		d, err := parseOpenAPI(io.LimitReader(resp.Body, 256<<20))
		if err != nil {
			if isBodyReadError(err) {
				return &retryable{err: fmt.Errorf("%w at %s: reading the OpenAPI document: %w", ErrUnreachable, s.endpoint(), err)}
			}
			return fmt.Errorf("%w: GET /rest/v1/ at %s: %w", ErrNotPostgREST, s.endpoint(), err)
		}
		doc = d
		return nil
	})
	return doc, err
}

// bodyReader remembers a transport error hit while the JSON decoder reads a
// response body, so a cut-off body is retried while malformed JSON is not.
type bodyReader struct {
	r   io.Reader
	err error
}

func (b *bodyReader) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	if err != nil && err != io.EOF {
		b.err = err
	}
	return n, err
}

// errBodyRead wraps the transport error a bodyReader saw.
type errBodyRead struct{ err error }

func (e *errBodyRead) Error() string { return "reading the response body: " + e.err.Error() }
func (e *errBodyRead) Unwrap() error { return e.err }

func isBodyReadError(err error) bool {
	var e *errBodyRead
	return errors.As(err, &e) || errors.Is(err, io.ErrUnexpectedEOF)
}

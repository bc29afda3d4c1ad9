package sdk

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// Version is the SDK's version, sent in the default User-Agent.
const Version = "0.1.0"

// DefaultUserAgent is the User-Agent sent unless WithUserAgent says otherwise.
const DefaultUserAgent = "strata-go-sdk/" + Version

// Strata is the hand-written client a Go program reaches for first: it logs
// in, keeps the access token fresh (one refresh in flight, shared by every
// goroutine), fills in X-Tenant-Id, retries what is safe to retry and turns
// error responses into *APIError. It is safe for concurrent use.
//
// It is not called Client because the generated client in client.gen.go
// owns that name in this package. Every operation the hand-written layer does not wrap is reachable through
// API(), with the same authentication, tenant header and retries.
type Client struct {
	baseURL   *url.URL
	userAgent string
	doer      HttpRequestDoer // the caller's (or a default) HTTP client, under all our logic
	api       *ClientWithResponses
	auth      *authState
	retry     retryPolicy

	// now and sleep are the clock; tests replace them (export_test.go).
	now   func() time.Time
	sleep func(ctx context.Context, d time.Duration) error
}

// Option configures New. Besides the With… functions of this package, every
// ClientOption of the generated client is an Option too: WithHTTPClient
// (any HttpRequestDoer, such as an *http.Client), WithRequestEditorFn and
// WithBaseURL.
type Option interface {
	apply(*config) error
}

// rawClient is the generated client type (client-type-name RawClient in
// openapi/client.cfg.yaml, so that Client is this package's own).
type rawClient = RawClient

// config collects the options of New.
type config struct {
	// gen receives the generated ClientOptions: its Client (the doer),
	// RequestEditors and Server are taken over by New.
	gen rawClient

	email, password string
	accessToken     string
	refreshToken    string
	static          bool
	tenant          string
	userAgent       string
	retry           retryPolicy
	onSession       func(Session)
}

type optionFunc func(*config) error

func (f optionFunc) apply(c *config) error { return f(c) }

// apply makes the generated client's options usable with New: they are run
// against a scratch generated Client whose fields New then takes over.
func (o ClientOption) apply(c *config) error { return o(&c.gen) }

// WithPassword signs in with the password grant on first use, and again
// whenever the session cannot be refreshed any more.
func WithPassword(email, password string) Option {
	return optionFunc(func(c *config) error {
		if email == "" || password == "" {
			return errors.New("sdk: WithPassword needs an email and a password")
		}
		c.email, c.password = email, password
		return nil
	})
}

// WithToken uses a fixed access token (a JWT). Unless WithRefreshToken or
// WithPassword is also given, it is never refreshed: once it expires,
// requests fail with ErrTokenExpired.
func WithToken(accessToken string) Option {
	return optionFunc(func(c *config) error {
		if accessToken == "" {
			return errors.New("sdk: WithToken needs a token")
		}
		c.accessToken = accessToken
		return nil
	})
}

// WithPersonalAccessToken uses a personal access token (strata_pat_…). It
// does not expire unless it was created with an expiry, and is never
// refreshed. The tenant is read once from GET /api/auth/v1/user unless
// WithTenant gives it.
func WithPersonalAccessToken(pat string) Option {
	return optionFunc(func(c *config) error {
		if pat == "" {
			return errors.New("sdk: WithPersonalAccessToken needs a token")
		}
		c.accessToken, c.static = pat, true
		return nil
	})
}

// WithRefreshToken resumes a session from a stored refresh token: the first
// request runs the refresh grant. Refresh tokens are single-use; the
// rotated successor is kept, and reported to WithSessionCallback so that it
// can be stored again.
func WithRefreshToken(refreshToken string) Option {
	return optionFunc(func(c *config) error {
		if refreshToken == "" {
			return errors.New("sdk: WithRefreshToken needs a token")
		}
		c.refreshToken = refreshToken
		return nil
	})
}

// WithSessionCallback calls fn with every new session (after a login or a
// refresh), for programs that persist the refresh token. fn runs while the
// request that caused the refresh waits, so it should be quick.
func WithSessionCallback(fn func(Session)) Option {
	return optionFunc(func(c *config) error {
		c.onSession = fn
		return nil
	})
}

// WithTenant sets the X-Tenant-Id sent on data-platform requests instead of
// the session's user.app_metadata.tenant_id. The server refuses a tenant
// that is not the token's (ErrForbidden).
func WithTenant(tenantID string) Option {
	return optionFunc(func(c *config) error {
		c.tenant = tenantID
		return nil
	})
}

// WithRetries sets how often a request refused with 429 or 503 is retried
// (n ≥ 0; 0 disables retries) and the first backoff, which doubles per
// attempt (with jitter) when the response carries no Retry-After. Defaults:
// 3 retries, 200 ms. Only idempotent requests are retried: see Idempotent.
func WithRetries(n int, baseBackoff time.Duration) Option {
	return optionFunc(func(c *config) error {
		if n < 0 || baseBackoff < 0 {
			return errors.New("sdk: WithRetries needs n >= 0 and a non-negative backoff")
		}
		c.retry.max, c.retry.base = n, baseBackoff
		return nil
	})
}

// WithMaxRetryWait caps how long one retry may wait (default 30 s). A
// Retry-After longer than this is not waited for: the request fails at once
// with the *APIError, whose RetryAfter says when to come back.
func WithMaxRetryWait(d time.Duration) Option {
	return optionFunc(func(c *config) error {
		if d <= 0 {
			return errors.New("sdk: WithMaxRetryWait needs a positive duration")
		}
		c.retry.maxWait = d
		return nil
	})
}

// WithUserAgent replaces the User-Agent header (default DefaultUserAgent).
func WithUserAgent(ua string) Option {
	return optionFunc(func(c *config) error {
		c.userAgent = ua
		return nil
	})
}

// New returns a client of the Strata server at baseURL (for example
// http://127.0.0.1:8080). It sends nothing yet: a password login happens on
// first use. Exactly one way to authenticate is needed: WithPassword,
// WithToken, WithPersonalAccessToken or WithRefreshToken (WithToken and
// WithRefreshToken may be combined, and WithPassword may back up either).
func New(baseURL string, opts ...Option) (*Client, error) {
	cfg := config{
		userAgent: DefaultUserAgent,
		retry:     defaultRetryPolicy(),
	}
	cfg.gen.Server = baseURL
	for _, o := range opts {
		if o == nil {
			continue
		}
		if err := o.apply(&cfg); err != nil {
			return nil, err
		}
	}
	base, err := url.Parse(strings.TrimRight(cfg.gen.Server, "/"))
	if err != nil || (base.Scheme != "http" && base.Scheme != "https") || base.Host == "" {
		return nil, fmt.Errorf("sdk: base URL %q: want an absolute http(s) URL", cfg.gen.Server)
	}
	if cfg.email == "" && cfg.accessToken == "" && cfg.refreshToken == "" {
		return nil, errors.New("sdk: no credentials: use WithPassword, WithToken, WithPersonalAccessToken or WithRefreshToken")
	}
	if cfg.static && (cfg.refreshToken != "" || cfg.email != "") {
		return nil, errors.New("sdk: a personal access token is used alone: drop WithRefreshToken and WithPassword")
	}
	doer := cfg.gen.Client
	if doer == nil {
		doer = &http.Client{}
	}
	s := &Client{
		baseURL:   base,
		userAgent: cfg.userAgent,
		doer:      doer,
		retry:     cfg.retry,
		now:       time.Now,
		sleep:     sleepCtx,
	}
	s.auth = newAuthState(s, cfg)
	editors := append([]RequestEditorFn{s.tenantEditor}, cfg.gen.RequestEditors...)
	s.api = &ClientWithResponses{&rawClient{
		Server:         base.String() + "/",
		Client:         &transport{s: s},
		RequestEditors: editors,
	}}
	return s, nil
}

// API returns the generated client, wired through this client's
// authentication, X-Tenant-Id, User-Agent and retries, for the operations the
// hand-written layer does not wrap (media downloads, sign-up, health, …).
// Its responses are not turned into errors: check StatusCode().
func (s *Client) API() *ClientWithResponses { return s.api }

// BaseURL returns the server address the client was made for.
func (s *Client) BaseURL() string { return s.baseURL.String() }

// tenantEditor fills in X-Tenant-Id on data-platform requests that do not
// carry one, from WithTenant or the session.
func (s *Client) tenantEditor(ctx context.Context, req *http.Request) error {
	if !isDataPlatform(s.relPath(req.URL)) || req.Header.Get("X-Tenant-Id") != "" {
		return nil
	}
	tenant, err := s.auth.tenantID(ctx)
	if err != nil {
		return err
	}
	req.Header.Set("X-Tenant-Id", tenant)
	return nil
}

// relPath is u's path below the base URL (the base may carry a path prefix).
func (s *Client) relPath(u *url.URL) string {
	return strings.TrimPrefix(u.Path, strings.TrimRight(s.baseURL.Path, "/"))
}

func isDataPlatform(path string) bool { return strings.HasPrefix(path, "/api/data-platform/") }

// Ptr returns a pointer to v: the generated request types use pointers for
// optional fields (NoteCreate.Title, ConnectorUpdate.Enabled, …).
func Ptr[T any](v T) *T { return &v }

// sleepCtx waits d or until ctx ends.
func sleepCtx(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

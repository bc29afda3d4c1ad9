package server

import (
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"strings"
	"time"

	"github.com/stratahq/strata/impl/httpx"
	"github.com/stratahq/strata/impl/pipeline"
	"github.com/stratahq/strata/impl/realtime"
)

// Config is everything `strata serve` is configured with. Zero values take
// the defaults of Defaults().
type Config struct {
	// Addr is the listen address (host:port).
	Addr string
	// DataDir holds the control-plane store, keys, tenant stores and blobs.
	DataDir string
	// BaseURL is the public base address; it appears in token issuers and
	// media URLs. Empty means http://{Addr}.
	BaseURL string
	// LogLevel is debug, info, warn or error.
	LogLevel string
	// LogFormat is text or json.
	LogFormat string
	// CORSOrigins lists the browser origins allowed to call the API; "*"
	// allows any. Empty disables CORS.
	CORSOrigins []string
	// TrustedProxies lists the reverse proxies (CIDR prefixes or addresses)
	// whose X-Forwarded-For names the client, for the per-IP limits. Empty
	// trusts none: the peer address is the client's.
	TrustedProxies []string
	// ShutdownTimeout bounds how long in-flight requests may run after a
	// shutdown signal.
	ShutdownTimeout time.Duration

	// JWKSURL is an external identity provider's JWKS; its ES256/RS256
	// tokens are then accepted too.
	JWKSURL string
	// JWTSecret enables legacy HS256 tokens signed with this secret.
	JWTSecret string
	// JWTIssuers are the issuers accepted on external (JWKS or HS256)
	// tokens; default: our own issuer.
	JWTIssuers []string
	// AccessTokenTTL is the lifetime of issued access tokens (default and
	// maximum 1 h, spec section 5). Shorter values exist so that a live
	// conformance run can watch tokens expire; longer ones would outlive the
	// key retention of `strata admin rotate-keys`.
	AccessTokenTTL time.Duration
	// RefreshTokenTTL is the lifetime of each issued refresh token (default
	// and maximum 30 days, spec section 5).
	RefreshTokenTTL time.Duration
	// TokenLeeway is the clock skew tolerated when verifying a token's exp,
	// iat and nbf (default and maximum 30 s).
	TokenLeeway time.Duration
	// BlobURL is where uploads are stored (a gocloud.dev/blob URL); empty
	// means the directory blobs/ in the data dir.
	BlobURL string
	// Query configures the tenant stores (memory_limit and threads per
	// tenant, open stores); zero values take the engine's defaults.
	Query QueryConfig
	// PluginDir holds the connector plugins (strata-connector-<type>).
	PluginDir string
	// Pipeline configures the AI pipeline: its engines (local by default,
	// OpenAI-compatible endpoints when URLs are set) and its queue.
	Pipeline pipeline.EngineConfig
	// PipelineWorkers bounds concurrent pipeline jobs (default 2).
	PipelineWorkers int
	// PipelineBackoff is the first retry delay of a failed pipeline job
	// (default 2 s; doubles per attempt).
	PipelineBackoff time.Duration
	// DisableSignup switches POST /api/auth/v1/signup off.
	DisableSignup bool
	// Now is the clock (tests); default time.Now.
	Now func() time.Time
	// BcryptCost overrides the password hashing cost (tests lower it).
	BcryptCost int
	// Events tunes the WebSocket endpoint (timeouts, pings); zero values take
	// the defaults of DECISIONS.md. Origins and clock come from this config.
	Events realtime.Options
	// EventBuffer is how far a WebSocket client may fall behind before it is
	// dropped (default 256).
	EventBuffer int
}

// Issuer is the "iss" of the tokens the server issues.
func (c Config) Issuer() string { return c.BaseURL + "/api/auth/v1" }

// Defaults returns the embedded defaults: everything `make run` needs.
func Defaults() Config {
	return Config{
		Addr:            "127.0.0.1:8080",
		DataDir:         "./data",
		LogLevel:        "info",
		LogFormat:       "text",
		ShutdownTimeout: 15 * time.Second,
		PluginDir:       "bin/plugins",
		AccessTokenTTL:  MaxAccessTokenTTL,
		RefreshTokenTTL: MaxRefreshTokenTTL,
		TokenLeeway:     MaxTokenLeeway,
	}
}

// The token lifetimes of spec section 5 and the largest tolerated clock skew:
// defaults and upper bounds of the Config fields, which can only shorten them.
const (
	MaxAccessTokenTTL  = time.Hour
	MaxRefreshTokenTTL = 30 * 24 * time.Hour
	MaxTokenLeeway     = 30 * time.Second
)

// normalize fills defaults and checks the values, so that a bad flag fails at
// start-up with a message naming it rather than at the first request.
func (c Config) normalize() (Config, error) {
	d := Defaults()
	if c.Addr == "" {
		c.Addr = d.Addr
	}
	if c.DataDir == "" {
		c.DataDir = d.DataDir
	}
	if c.LogLevel == "" {
		c.LogLevel = d.LogLevel
	}
	if c.LogFormat == "" {
		c.LogFormat = d.LogFormat
	}
	if c.ShutdownTimeout <= 0 {
		c.ShutdownTimeout = d.ShutdownTimeout
	}
	if c.BaseURL == "" {
		c.BaseURL = "http://" + c.Addr
	}
	for _, lim := range []struct {
		v        *time.Duration
		def, max time.Duration
		flag     string
	}{
		{&c.AccessTokenTTL, d.AccessTokenTTL, MaxAccessTokenTTL, "--access-token-ttl"},
		{&c.RefreshTokenTTL, d.RefreshTokenTTL, MaxRefreshTokenTTL, "--refresh-token-ttl"},
		{&c.TokenLeeway, d.TokenLeeway, MaxTokenLeeway, "--token-leeway"},
	} {
		switch {
		case *lim.v == 0:
			*lim.v = lim.def
		case *lim.v < 0 || *lim.v > lim.max:
			return c, fmt.Errorf("%s %s: want more than 0 and at most %s", lim.flag, *lim.v, lim.max)
		}
	}
	u, err := url.Parse(c.BaseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return c, fmt.Errorf("--base-url %q: want an absolute http(s) URL", c.BaseURL)
	}
	c.BaseURL = strings.TrimRight(c.BaseURL, "/")
	abs, err := filepath.Abs(c.DataDir)
	if err != nil {
		return c, fmt.Errorf("--data-dir %q: %w", c.DataDir, err)
	}
	c.DataDir = abs
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.JWKSURL != "" {
		if u, err := url.Parse(c.JWKSURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return c, fmt.Errorf("--jwks-url %q: want an absolute http(s) URL", c.JWKSURL)
		}
	}
	if c.JWTSecret != "" && len(c.JWTSecret) < 32 {
		return c, errors.New("--jwt-secret: at least 32 characters")
	}
	if _, err := httpx.ParseTrustedProxies(c.TrustedProxies); err != nil {
		return c, fmt.Errorf("--trusted-proxies: %w", err)
	}
	for _, o := range c.CORSOrigins {
		if o == "*" {
			continue
		}
		if u, err := url.Parse(o); err != nil || u.Scheme == "" || u.Host == "" || (u.Path != "" && u.Path != "/") {
			return c, errors.New("--cors-origins: each origin must be * or scheme://host[:port], got " + o)
		}
	}
	return c, nil
}

// QueryConfig tunes the per-tenant DuckDB stores.
type QueryConfig struct {
	MemoryLimit string
	Threads     int
	MaxOpen     int
}

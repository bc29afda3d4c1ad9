package server

import (
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"strings"
	"time"
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
	// ShutdownTimeout bounds how long in-flight requests may run after a
	// shutdown signal.
	ShutdownTimeout time.Duration
}

// Defaults returns the embedded defaults: everything `make run` needs.
func Defaults() Config {
	return Config{
		Addr:            "127.0.0.1:8080",
		DataDir:         "./data",
		LogLevel:        "info",
		LogFormat:       "text",
		ShutdownTimeout: 15 * time.Second,
	}
}

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

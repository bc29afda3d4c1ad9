package conformance_test

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/stratahq/strata/conformance"
	"github.com/stratahq/strata/impl/principal"
	"github.com/stratahq/strata/impl/server"
	"github.com/stratahq/strata/plugins/hostedbackend/postgrestfixture"
)

var (
	baseURL  = flag.String("base-url", "", "base URL of a live server to test; empty starts one in-process")
	email    = flag.String("email", "", "email of an existing user on the live server (in-process: created)")
	password = flag.String("password", "", "that user's password")
	// The live server's settings, as `strata conformance` takes them.
	hostedBackendURL = flag.String("hosted-backend-url", "", "live: a hosted backend for the sync check")
	serviceRoleKey   = flag.String("service-role-key", "", "live: its service-role key")
	accessTokenTTL   = flag.Duration("access-token-ttl", conformance.DefaultAccessTokenTTL, "live: the server's --access-token-ttl")
	refreshTokenTTL  = flag.Duration("refresh-token-ttl", conformance.DefaultRefreshTokenTTL, "live: the server's --refresh-token-ttl")
	tokenLeeway      = flag.Duration("token-leeway", conformance.DefaultTokenLeeway, "live: the server's --token-leeway")
	maxExpiryWait    = flag.Duration("max-expiry-wait", conformance.DefaultMaxExpiryWait, "live: longest an expiry check waits")
)

// pluginDir holds the hosted_backend connector, built once for the
// in-process server.
var pluginDir string

func TestMain(m *testing.M) {
	flag.Parse()
	if *baseURL == "" {
		dir, err := os.MkdirTemp("", "strata-conformance-plugins-")
		if err != nil {
			panic(err)
		}
		pluginDir = dir
		build := exec.Command("go", "build", "-o", filepath.Join(dir, "strata-connector-hosted_backend"),
			"github.com/stratahq/strata/plugins/hostedbackend/cmd/strata-connector-hosted_backend")
		if out, err := build.CombinedOutput(); err != nil {
			fmt.Fprintf(os.Stderr, "build the hosted_backend plugin: %v\n%s", err, out)
			os.Exit(1)
		}
	}
	code := m.Run()
	if pluginDir != "" {
		_ = os.RemoveAll(pluginDir)
	}
	os.Exit(code)
}

// TestConformance runs every check against -base-url, or against a server
// started in-process on a temporary data dir, with the spec's token
// lifetimes and a sync of the PostgREST-protocol fixture over the test
// PostgreSQL.
func TestConformance(t *testing.T) {
	ctx := context.Background()
	live := *baseURL != ""
	cfg := conformance.Config{BaseURL: *baseURL, Email: *email, Password: *password,
		HostedBackendURL: *hostedBackendURL, ServiceRoleKey: *serviceRoleKey,
		AccessTokenTTL: *accessTokenTTL, RefreshTokenTTL: *refreshTokenTTL, TokenLeeway: *tokenLeeway, MaxExpiryWait: *maxExpiryWait}
	if !live {
		cfg = startInProcess(t)
	}
	suite, err := conformance.New(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, check := range conformance.Checks() {
		t.Run(check.Name, func(t *testing.T) {
			err := check.Run(ctx, suite)
			var partial *conformance.Partial
			switch {
			case errors.As(err, &partial) && live:
				t.Skipf("passed what it observed; %s", partial.Note)
			case err != nil: // in-process, every lifetime is observed
				t.Fatal(err)
			}
		})
	}
	if uncovered := suite.Uncovered(); len(uncovered) > 0 {
		t.Errorf("operations no check exercised: %v", uncovered)
	}
}

// jumpClock is real time plus an offset that Sleep moves forward instead of
// waiting: the server shares it, keeps running in real time (timers, rate
// windows), and a token's hour or a refresh token's 30 days pass at once.
type jumpClock struct {
	mu     sync.Mutex
	offset time.Duration
}

func (c *jumpClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return time.Now().Add(c.offset)
}

func (c *jumpClock) Sleep(ctx context.Context, d time.Duration) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.offset += d
	return ctx.Err()
}

// startInProcess serves a fresh server (default token lifetimes, the
// hosted_backend plugin) with one tenant and user, and a PostgREST-protocol
// fixture of seeded tables for the sync check.
func startInProcess(t *testing.T) conformance.Config {
	t.Helper()
	ctx := context.Background()
	clock := &jumpClock{}
	cfg := server.Defaults()
	cfg.DataDir = t.TempDir()
	cfg.PluginDir = pluginDir
	cfg.Now = clock.Now
	cfg.BcryptCost = bcrypt.MinCost
	app, err := server.New(ctx, cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	tenant, err := app.Auth().CreateTenant(ctx, "conformance", principal.TierPro)
	if err != nil {
		t.Fatal(err)
	}
	const user, pass = "conformance@example.com", "conformance-password"
	if _, err := app.Auth().CreateUser(ctx, tenant.ID, user, pass); err != nil {
		t.Fatal(err)
	}

	pool := postgrestfixture.Connect(t)
	schema := postgrestfixture.NewSchema(t, pool)
	if err := postgrestfixture.Seed(ctx, pool, schema); err != nil {
		t.Fatal(err)
	}
	const key = "conformance-service-role-key"
	_, backend := postgrestfixture.Start(t, postgrestfixture.Options{Pool: pool, Schema: schema, Key: key})

	srv := httptest.NewServer(app.Handler())
	t.Cleanup(func() {
		srv.Close()
		_ = app.Close()
	})
	return conformance.Config{BaseURL: srv.URL, Email: user, Password: pass,
		HostedBackendURL: backend.URL, ServiceRoleKey: key,
		MaxExpiryWait: conformance.DefaultRefreshTokenTTL + time.Minute, Clock: clock}
}

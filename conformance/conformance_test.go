package conformance_test

import (
	"context"
	"flag"
	"io"
	"log/slog"
	"net/http/httptest"
	"testing"

	"github.com/stratahq/strata/conformance"
	"github.com/stratahq/strata/impl/principal"
	"github.com/stratahq/strata/impl/server"
)

var (
	baseURL  = flag.String("base-url", "", "base URL of a live server to test; empty starts one in-process")
	email    = flag.String("email", "", "email of an existing user on the live server (in-process: created)")
	password = flag.String("password", "", "that user's password")
)

// TestConformance runs every check against -base-url, or against a server
// started in-process on a temporary data dir.
func TestConformance(t *testing.T) {
	ctx := context.Background()
	cfg := conformance.Config{BaseURL: *baseURL, Email: *email, Password: *password}
	if cfg.BaseURL == "" {
		cfg = startInProcess(t)
	}
	suite, err := conformance.New(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, check := range conformance.Checks() {
		t.Run(check.Name, func(t *testing.T) {
			if err := check.Run(ctx, suite); err != nil {
				t.Fatal(err)
			}
		})
	}
	if uncovered := suite.Uncovered(); len(uncovered) > 0 {
		t.Errorf("operations no check exercised: %v", uncovered)
	}
}

// startInProcess serves a fresh server with one tenant and user.
func startInProcess(t *testing.T) conformance.Config {
	t.Helper()
	ctx := context.Background()
	cfg := server.Defaults()
	cfg.DataDir = t.TempDir()
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
	srv := httptest.NewServer(app.Handler())
	t.Cleanup(func() {
		srv.Close()
		_ = app.Close()
	})
	return conformance.Config{BaseURL: srv.URL, Email: user, Password: pass}
}

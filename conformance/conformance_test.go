package conformance_test

import (
	"context"
	"flag"
	"io"
	"log/slog"
	"net/http/httptest"
	"testing"

	"github.com/stratahq/strata/conformance"
	"github.com/stratahq/strata/impl/server"
)

var baseURL = flag.String("base-url", "", "base URL of a live server to test; empty starts one in-process")

// TestConformance runs every check against -base-url, or against a server
// started in-process on a temporary data dir.
func TestConformance(t *testing.T) {
	ctx := context.Background()
	url := *baseURL
	if url == "" {
		url = startInProcess(t)
	}
	suite, err := conformance.New(ctx, conformance.Config{BaseURL: url})
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

func startInProcess(t *testing.T) string {
	t.Helper()
	cfg := server.Defaults()
	cfg.DataDir = t.TempDir()
	app, err := server.New(context.Background(), cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(app.Handler())
	t.Cleanup(func() {
		srv.Close()
		_ = app.Close()
	})
	return srv.URL
}

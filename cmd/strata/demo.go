package main

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/stratahq/strata/impl/principal"
	"github.com/stratahq/strata/impl/server"
)

// demoFile keeps the demo credentials in the data dir (mode 0600), so that
// every `make run` can print how to log in, not only the first.
const demoFile = "demo-credentials.json"

type demoCredentials struct {
	Email    string `json:"email"`
	Password string `json:"password"`
	TenantID string `json:"tenantId"`
}

// ensureDemo creates a demo tenant and user when the store has no tenant
// yet, and prints how to log in with them.
func ensureDemo(ctx context.Context, app *server.App, out io.Writer) error {
	path := filepath.Join(app.Config().DataDir, demoFile)
	creds, err := readDemo(path)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	if errors.Is(err, os.ErrNotExist) {
		n, err := app.Store().CountTenants(ctx)
		if err != nil {
			return err
		}
		if n > 0 {
			return nil // a real installation: no demo account
		}
		if creds, err = createDemo(ctx, app, path); err != nil {
			return err
		}
	}
	base := app.Config().BaseURL
	fmt.Fprintf(out, `
Demo account (kept in %s):
  email:     %s
  password:  %s
  tenant id: %s
Log in:
  curl -s -X POST '%s/api/auth/v1/token?grant_type=password' -H 'Content-Type: application/json' -d '{"email":"%s","password":"%s"}'
Then call the API with  -H "Authorization: Bearer <access_token>"  (and -H "X-Tenant-Id: %s" on /api/data-platform).

`, path, creds.Email, creds.Password, creds.TenantID, base, creds.Email, creds.Password, creds.TenantID)
	return nil
}

func readDemo(path string) (demoCredentials, error) {
	var c demoCredentials
	raw, err := os.ReadFile(path)
	if err != nil {
		return c, err
	}
	if err := json.Unmarshal(raw, &c); err != nil {
		return c, fmt.Errorf("%s: %w", path, err)
	}
	return c, nil
}

func createDemo(ctx context.Context, app *server.App, path string) (demoCredentials, error) {
	var secret [12]byte
	if _, err := rand.Read(secret[:]); err != nil {
		return demoCredentials{}, err
	}
	creds := demoCredentials{Email: "demo@example.com", Password: base64.RawURLEncoding.EncodeToString(secret[:])}
	tenant, err := app.Auth().CreateTenant(ctx, "Demo", principal.TierPro)
	if err != nil {
		return creds, fmt.Errorf("demo tenant: %w", err)
	}
	creds.TenantID = tenant.ID.String()
	if _, err := app.Auth().CreateUser(ctx, tenant.ID, creds.Email, creds.Password); err != nil {
		return creds, fmt.Errorf("demo user: %w", err)
	}
	raw, err := json.MarshalIndent(creds, "", "  ")
	if err != nil {
		return creds, err
	}
	if err := os.WriteFile(path, raw, 0o600); err != nil {
		return creds, fmt.Errorf("write %s: %w", path, err)
	}
	return creds, nil
}

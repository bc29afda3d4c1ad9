package auth_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/stratahq/strata/impl/principal"
	"github.com/stratahq/strata/impl/server"
	"github.com/stratahq/strata/impl/store"
)

// clock is a controllable time source: tests move it instead of sleeping.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func newClock() *clock { return &clock{now: time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// env is a real server on an httptest listener with a controllable clock.
type env struct {
	t     testing.TB
	srv   *httptest.Server
	app   *server.App
	clock *clock
}

func newEnv(t testing.TB, mutate func(*server.Config)) *env {
	t.Helper()
	c := newClock()
	cfg := server.Defaults()
	cfg.DataDir = t.TempDir()
	cfg.BcryptCost = bcrypt.MinCost
	cfg.Now = c.Now
	if mutate != nil {
		mutate(&cfg)
	}
	app, err := server.New(context.Background(), cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(app.Handler())
	t.Cleanup(func() {
		srv.Close()
		_ = app.Close()
	})
	return &env{t: t, srv: srv, app: app, clock: c}
}

// user creates a tenant of the given tier and a user in it.
func (e *env) user(email, password string, tier principal.Tier) (store.User, store.Tenant) {
	e.t.Helper()
	ctx := context.Background()
	tn, err := e.app.Auth().CreateTenant(ctx, "tenant of "+email, tier)
	if err != nil {
		e.t.Fatal(err)
	}
	u, err := e.app.Auth().CreateUser(ctx, tn.ID, email, password)
	if err != nil {
		e.t.Fatal(err)
	}
	return u, tn
}

type response struct {
	status int
	header http.Header
	body   []byte
}

func (r response) json(t *testing.T) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(r.body, &m); err != nil {
		t.Fatalf("body is not a JSON object: %v: %s", err, r.body)
	}
	return m
}

// call sends a request; headers alternate name, value.
func (e *env) call(method, path, body string, headers ...string) response {
	e.t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, e.srv.URL+path, rd)
	if err != nil {
		e.t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := e.srv.Client().Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return response{status: resp.StatusCode, header: resp.Header, body: raw}
}

func (e *env) password(email, password string) response {
	e.t.Helper()
	body, _ := json.Marshal(map[string]string{"email": email, "password": password})
	return e.call("POST", "/api/auth/v1/token?grant_type=password", string(body))
}

func (e *env) refresh(token string) response {
	e.t.Helper()
	body, _ := json.Marshal(map[string]string{"refresh_token": token})
	return e.call("POST", "/api/auth/v1/token?grant_type=refresh_token", string(body))
}

type session struct {
	AccessToken  string `json:"access_token"`
	RefreshToken string `json:"refresh_token"`
	ExpiresIn    int    `json:"expires_in"`
	ExpiresAt    int64  `json:"expires_at"`
	TokenType    string `json:"token_type"`
	User         struct {
		ID          string `json:"id"`
		Email       string `json:"email"`
		Aud         string `json:"aud"`
		Role        string `json:"role"`
		AppMetadata struct {
			Provider string `json:"provider"`
			TenantID string `json:"tenant_id"`
			Tier     string `json:"tier"`
		} `json:"app_metadata"`
	} `json:"user"`
}

func (e *env) signIn(email, password string) session {
	e.t.Helper()
	r := e.password(email, password)
	if r.status != http.StatusOK {
		e.t.Fatalf("sign in %s: %d %s", email, r.status, r.body)
	}
	var s session
	if err := json.Unmarshal(r.body, &s); err != nil {
		e.t.Fatal(err)
	}
	return s
}

func bearer(token string) []string { return []string{"Authorization", "Bearer " + token} }

// expectError asserts an error response in the shared shape.
func expectError(t *testing.T, r response, status int, code string) {
	t.Helper()
	if r.status != status {
		t.Fatalf("status %d, want %d: %s", r.status, status, r.body)
	}
	var e struct {
		StatusCode int    `json:"statusCode"`
		Error      string `json:"error"`
		Message    string `json:"message"`
	}
	if err := json.Unmarshal(r.body, &e); err != nil {
		t.Fatalf("error body: %v: %s", err, r.body)
	}
	if e.StatusCode != status || e.Error != code || e.Message == "" {
		t.Fatalf("error %+v, want %d %s", e, status, code)
	}
}

// expectOAuth asserts a 400 OAuth error of the token endpoint.
func expectOAuth(t *testing.T, r response, oauthErr, code string) {
	t.Helper()
	expectError(t, r, http.StatusBadRequest, oauthErr)
	m := r.json(t)
	if m["error_code"] != code || m["error_description"] == "" {
		t.Fatalf("error_code %v, want %s: %s", m["error_code"], code, r.body)
	}
}

func decodeSegment(t *testing.T, seg string) map[string]any {
	t.Helper()
	raw, err := base64URL(seg)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.NewDecoder(bytes.NewReader(raw)).Decode(&m); err != nil {
		t.Fatal(err)
	}
	return m
}

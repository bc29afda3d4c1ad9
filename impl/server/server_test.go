package server_test

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

	"golang.org/x/crypto/bcrypt"

	"github.com/stratahq/strata/impl/principal"
	"github.com/stratahq/strata/impl/server"
	"github.com/stratahq/strata/openapi"
)

// syncBuffer is a goroutine-safe log sink for asserting on log lines.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// newTestServer serves a real app, built exactly as in production, on an
// httptest listener with a fresh data dir.
func newTestServer(t *testing.T, mutate func(*server.Config)) (*httptest.Server, *syncBuffer) {
	srv, logs, _ := newTestApp(t, mutate)
	return srv, logs
}

func newTestApp(t *testing.T, mutate func(*server.Config)) (*httptest.Server, *syncBuffer, *server.App) {
	t.Helper()
	logs := &syncBuffer{}
	cfg := server.Defaults()
	cfg.DataDir = t.TempDir()
	cfg.BcryptCost = bcrypt.MinCost
	if mutate != nil {
		mutate(&cfg)
	}
	app, err := server.New(context.Background(), cfg, slog.New(slog.NewJSONHandler(logs, nil)))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(app.Handler())
	t.Cleanup(func() {
		srv.Close()
		_ = app.Close()
	})
	return srv, logs, app
}

// signIn creates a tenant and a user through the service and signs in over
// HTTP, returning the access token and the tenant id.
func signIn(t *testing.T, srv *httptest.Server, app *server.App) (token, tenant string) {
	t.Helper()
	ctx := context.Background()
	tn, err := app.Auth().CreateTenant(ctx, "Scenario Co", principal.TierPro)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := app.Auth().CreateUser(ctx, tn.ID, "scenario@example.com", "correct horse"); err != nil {
		t.Fatal(err)
	}
	resp, err := srv.Client().Post(srv.URL+"/api/auth/v1/token?grant_type=password", "application/json",
		strings.NewReader(`{"email":"scenario@example.com","password":"correct horse"}`))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var session struct {
		AccessToken string `json:"access_token"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&session); err != nil || resp.StatusCode != 200 || session.AccessToken == "" {
		t.Fatalf("sign in: %d %v", resp.StatusCode, err)
	}
	return session.AccessToken, tn.ID.String()
}

type errorBody struct {
	StatusCode int    `json:"statusCode"`
	Error      string `json:"error"`
	Message    string `json:"message"`
}

func TestScenarios(t *testing.T) {
	t.Parallel()
	srv, _, app := newTestApp(t, nil)
	token, tenant := signIn(t, srv, app)
	big := `{"email":"` + strings.Repeat("a", 1<<20) + `"}`

	scenarios := []struct {
		name        string
		signedIn    bool // send the bearer token and X-Tenant-Id
		method      string
		path        string
		header      map[string]string
		body        string
		wantStatus  int
		wantCode    string // error code, for error responses
		wantContent []string
		notContent  []string
		wantHeader  map[string]string
	}{
		{name: "healthz", method: "GET", path: "/healthz", wantStatus: 200, wantContent: []string{`"status":"ok"`}},
		{name: "healthz HEAD", method: "HEAD", path: "/healthz", wantStatus: 200},
		{name: "readyz checks the store", method: "GET", path: "/readyz", wantStatus: 200, wantContent: []string{`"store":"ok"`}},
		{name: "openapi served as is", method: "GET", path: "/openapi.yaml", wantStatus: 200, wantContent: []string{"openapi: 3.0"},
			wantHeader: map[string]string{"Content-Type": "application/yaml"}},
		{name: "unknown route", method: "GET", path: "/nope", wantStatus: 404, wantCode: "not_found"},
		{name: "unknown route under a prefix", method: "POST", path: "/api/data-platform/queries", wantStatus: 404, wantCode: "not_found"},
		{name: "trailing slash is another route", method: "GET", path: "/healthz/", wantStatus: 404, wantCode: "not_found"},
		{name: "wrong method", method: "POST", path: "/healthz", wantStatus: 405, wantCode: "method_not_allowed",
			wantHeader: map[string]string{"Allow": "GET, HEAD"}},
		{name: "wrong method on an operation", method: "GET", path: "/api/data-platform/query", wantStatus: 405, wantCode: "method_not_allowed",
			wantHeader: map[string]string{"Allow": "POST"}},
		{name: "body over 1 MiB", method: "POST", path: "/api/auth/v1/token?grant_type=password",
			header: map[string]string{"Content-Type": "application/json"}, body: big, wantStatus: 413, wantCode: "payload_too_large"},
		{name: "wrong content type", method: "POST", path: "/api/auth/v1/token?grant_type=password",
			header: map[string]string{"Content-Type": "text/plain"}, body: `{"email":"a@b.c","password":"p"}`,
			wantStatus: 415, wantCode: "unsupported_media_type"},
		{name: "missing content type", method: "POST", path: "/api/auth/v1/token?grant_type=password",
			body: `{"email":"a@b.c","password":"p"}`, wantStatus: 415, wantCode: "unsupported_media_type"},
		{name: "malformed JSON", method: "POST", path: "/api/auth/v1/token?grant_type=password",
			header: map[string]string{"Content-Type": "application/json"}, body: `{"email":`, wantStatus: 400, wantCode: "validation_error"},
		{name: "wrong field type names the field", method: "POST", path: "/api/auth/v1/token?grant_type=password",
			header: map[string]string{"Content-Type": "application/json"}, body: `{"email":5}`, wantStatus: 400, wantCode: "validation_error",
			wantContent: []string{"email"}},
		{name: "missing required query parameter", method: "POST", path: "/api/auth/v1/token",
			header: map[string]string{"Content-Type": "application/json"}, body: `{}`, wantStatus: 400, wantCode: "validation_error",
			wantContent: []string{"grant_type"}},
		{name: "out-of-range query parameter names it", signedIn: true, method: "GET", path: "/api/content?limit=101", wantStatus: 400, wantCode: "validation_error",
			wantContent: []string{"limit"}},
		{name: "malformed uuid path parameter", signedIn: true, method: "GET", path: "/api/content/not-a-uuid", wantStatus: 400, wantCode: "validation_error",
			wantContent: []string{"id"}},
		{name: "out-of-range body field names it", signedIn: true, method: "POST", path: "/api/data-platform/query",
			header: map[string]string{"Content-Type": "application/json"}, body: `{"sql":"select 1","maxRows":100001}`,
			wantStatus: 400, wantCode: "validation_error", wantContent: []string{"maxRows"}, notContent: []string{"100001"}},
		{name: "unknown body field", signedIn: true, method: "POST", path: "/api/data-platform/query",
			header: map[string]string{"Content-Type": "application/json"}, body: `{"sql":"select 1","nope":1}`,
			wantStatus: 400, wantCode: "validation_error", wantContent: []string{"nope"}},
		{name: "no token", method: "GET", path: "/api/content", wantStatus: 401, wantCode: "UNAUTHENTICATED",
			wantHeader: map[string]string{"WWW-Authenticate": `Bearer realm="strata"`}},
		{name: "authentication before validation", method: "GET", path: "/api/content?limit=0", wantStatus: 401, wantCode: "UNAUTHENTICATED"},
		{name: "body size before authentication", method: "POST", path: "/api/data-platform/query",
			header: map[string]string{"Content-Type": "application/json"}, body: big, wantStatus: 413, wantCode: "payload_too_large"},
		{name: "request id is echoed", method: "GET", path: "/healthz", header: map[string]string{"X-Request-Id": "abc-123"},
			wantStatus: 200, wantHeader: map[string]string{"X-Request-Id": "abc-123"}},
	}
	for _, sc := range scenarios {
		t.Run(sc.name, func(t *testing.T) {
			t.Parallel()
			var body io.Reader
			if sc.body != "" {
				body = strings.NewReader(sc.body)
			}
			req, err := http.NewRequest(sc.method, srv.URL+sc.path, body)
			if err != nil {
				t.Fatal(err)
			}
			for k, v := range sc.header {
				req.Header.Set(k, v)
			}
			if sc.signedIn {
				req.Header.Set("Authorization", "Bearer "+token)
				req.Header.Set("X-Tenant-Id", tenant)
			}
			resp, err := srv.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			raw, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != sc.wantStatus {
				t.Fatalf("status %d, want %d: %s", resp.StatusCode, sc.wantStatus, raw)
			}
			if resp.Header.Get("X-Request-Id") == "" {
				t.Error("no X-Request-Id header")
			}
			for k, v := range sc.wantHeader {
				if got := resp.Header.Get(k); got != v {
					t.Errorf("header %s = %q, want %q", k, got, v)
				}
			}
			if sc.wantCode != "" {
				var e errorBody
				if err := json.Unmarshal(raw, &e); err != nil {
					t.Fatalf("error body is not JSON: %v: %s", err, raw)
				}
				if e.StatusCode != sc.wantStatus || e.Error != sc.wantCode || e.Message == "" {
					t.Fatalf("error body %+v, want statusCode %d, error %q and a message", e, sc.wantStatus, sc.wantCode)
				}
				if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
					t.Errorf("Content-Type %q, want application/json", ct)
				}
			}
			for _, want := range sc.wantContent {
				if !strings.Contains(string(raw), want) {
					t.Errorf("body does not contain %q: %s", want, raw)
				}
			}
			for _, not := range sc.notContent {
				if strings.Contains(string(raw), not) {
					t.Errorf("body contains %q: %s", not, raw)
				}
			}
		})
	}
}

func TestServesTheCommittedDocument(t *testing.T) {
	t.Parallel()
	srv, _ := newTestServer(t, nil)
	resp, err := srv.Client().Get(srv.URL + "/openapi.yaml")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if !bytes.Equal(raw, openapi.Spec) {
		t.Fatal("served /openapi.yaml differs from openapi/openapi.yaml")
	}
}

func TestLogLinesCarryTheRequestID(t *testing.T) {
	t.Parallel()
	srv, logs := newTestServer(t, nil)
	req, _ := http.NewRequest("GET", srv.URL+"/nope", nil)
	req.Header.Set("X-Request-Id", "trace-me-42")
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	var access, errorLine bool
	for _, line := range strings.Split(strings.TrimSpace(logs.String()), "\n") {
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("log line is not JSON: %s", line)
		}
		if rec["request_id"] != "trace-me-42" {
			continue
		}
		switch rec["msg"] {
		case "request":
			access = rec["status"] == float64(404) && rec["route"] == "unmatched"
		case "request error":
			errorLine = rec["code"] == "not_found"
		}
	}
	if !access || !errorLine {
		t.Fatalf("want an access line and an error line with the request id; logs:\n%s", logs.String())
	}
}

func TestInvalidRequestIDIsReplaced(t *testing.T) {
	t.Parallel()
	srv, _ := newTestServer(t, nil)
	req, _ := http.NewRequest("GET", srv.URL+"/healthz", nil)
	req.Header.Set("X-Request-Id", "bad id with spaces\tand tabs")
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	got := resp.Header.Get("X-Request-Id")
	if got == "" || strings.Contains(got, " ") {
		t.Fatalf("X-Request-Id %q, want a generated id", got)
	}
}

func TestCORS(t *testing.T) {
	t.Parallel()
	srv, _ := newTestServer(t, func(c *server.Config) { c.CORSOrigins = []string{"https://app.example.com"} })

	preflight, _ := http.NewRequest("OPTIONS", srv.URL+"/api/data-platform/query", nil)
	preflight.Header.Set("Origin", "https://app.example.com")
	preflight.Header.Set("Access-Control-Request-Method", "POST")
	preflight.Header.Set("Access-Control-Request-Headers", "authorization, content-type, x-tenant-id")
	resp, err := srv.Client().Do(preflight)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode/100 != 2 || resp.Header.Get("Access-Control-Allow-Origin") != "https://app.example.com" {
		t.Fatalf("preflight: %d, allow-origin %q", resp.StatusCode, resp.Header.Get("Access-Control-Allow-Origin"))
	}

	other, _ := http.NewRequest("GET", srv.URL+"/healthz", nil)
	other.Header.Set("Origin", "https://evil.example.com")
	resp, err = srv.Client().Do(other)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if got := resp.Header.Get("Access-Control-Allow-Origin"); got != "" {
		t.Fatalf("a foreign origin got Access-Control-Allow-Origin %q", got)
	}
}

func TestBadConfigIsRefused(t *testing.T) {
	t.Parallel()
	for name, mutate := range map[string]func(*server.Config){
		"base url":    func(c *server.Config) { c.BaseURL = "ftp://x" },
		"cors origin": func(c *server.Config) { c.CORSOrigins = []string{"not an origin"} },
		"proxy":       func(c *server.Config) { c.TrustedProxies = []string{"10.0.0.0/33"} },
	} {
		cfg := server.Defaults()
		cfg.DataDir = t.TempDir()
		mutate(&cfg)
		if app, err := server.New(context.Background(), cfg, slog.New(slog.NewTextHandler(io.Discard, nil))); err == nil {
			_ = app.Close()
			t.Errorf("%s: New accepted a bad config", name)
		}
	}
}

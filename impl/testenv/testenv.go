// Package testenv starts a real Strata server for tests — built exactly as
// in production, on an httptest listener with a fresh data dir and a
// controllable clock — and offers the small HTTP helpers the HTTP tests of
// every area share. It is imported by tests only.
package testenv

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/stratahq/strata/impl/principal"
	"github.com/stratahq/strata/impl/server"
	"github.com/stratahq/strata/impl/store"
)

// Clock is a controllable time source: tests move it instead of sleeping.
type Clock struct {
	mu  sync.Mutex
	now time.Time
}

// NewClock starts at a fixed instant.
func NewClock() *Clock { return &Clock{now: time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)} }

// Now returns the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Advance moves the clock forward.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// Env is a real server with a controllable clock.
type Env struct {
	T     testing.TB
	Srv   *httptest.Server
	App   *server.App
	Clock *Clock
	// Logs is everything the server logged (JSON lines), for tests that
	// check what must never appear in logs.
	Logs *LogBuffer
}

// LogBuffer collects log output; safe for concurrent use.
type LogBuffer struct {
	mu  sync.Mutex
	buf []byte
}

// Write implements io.Writer.
func (b *LogBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buf = append(b.buf, p...)
	return len(p), nil
}

// String returns what was logged so far.
func (b *LogBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return string(b.buf)
}

// New starts a server; mutate may change its configuration.
func New(t testing.TB, mutate func(*server.Config)) *Env {
	return NewWithSendBuffer(t, mutate, 0)
}

// NewWithSendBuffer is New with the kernel send buffer of every accepted
// connection set to sendBuffer bytes (0: the system's default), so tests of
// back-pressure need megabytes less traffic to fill it.
func NewWithSendBuffer(t testing.TB, mutate func(*server.Config), sendBuffer int) *Env {
	t.Helper()
	c := NewClock()
	// The listener comes first, so that the server knows its own URL (media
	// URLs, the token issuer); the handler is set once the server exists.
	var handler http.Handler = http.NotFoundHandler()
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { handler.ServeHTTP(w, r) }))
	cfg := server.Defaults()
	cfg.BaseURL = "http://" + srv.Listener.Addr().String()
	cfg.DataDir = t.TempDir()
	cfg.BcryptCost = bcrypt.MinCost
	cfg.Now = c.Now
	if mutate != nil {
		mutate(&cfg)
	}
	logs := &LogBuffer{}
	var logOut io.Writer = logs
	if os.Getenv("STRATA_TEST_LOG") != "" { // debugging aid: see the server's log
		logOut = io.MultiWriter(logs, os.Stderr)
	}
	app, err := server.New(context.Background(), cfg, slog.New(slog.NewJSONHandler(logOut, &slog.HandlerOptions{Level: slog.LevelDebug})))
	if err != nil {
		srv.Listener.Close()
		t.Fatal(err)
	}
	handler = app.Handler()
	if sendBuffer > 0 {
		srv.Listener = sendBufferListener{srv.Listener, sendBuffer}
	}
	srv.Start()
	t.Cleanup(func() {
		srv.Close()
		_ = app.Close()
	})
	return &Env{T: t, Srv: srv, App: app, Clock: c, Logs: logs}
}

// User creates a tenant of the given tier and a user in it.
func (e *Env) User(email, password string, tier principal.Tier) (store.User, store.Tenant) {
	e.T.Helper()
	ctx := context.Background()
	tn, err := e.App.Auth().CreateTenant(ctx, "tenant of "+email, tier)
	if err != nil {
		e.T.Fatal(err)
	}
	u, err := e.App.Auth().CreateUser(ctx, tn.ID, email, password)
	if err != nil {
		e.T.Fatal(err)
	}
	return u, tn
}

// Response is a received response.
type Response struct {
	Status int
	Header http.Header
	Body   []byte
}

// JSON decodes the body as an object.
func (r Response) JSON(t testing.TB) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(r.Body, &m); err != nil {
		t.Fatalf("body is not a JSON object: %v: %s", err, r.Body)
	}
	return m
}

// Decode decodes the body into v.
func (r Response) Decode(t testing.TB, v any) {
	t.Helper()
	if err := json.Unmarshal(r.Body, v); err != nil {
		t.Fatalf("decode %T: %v: %s", v, err, r.Body)
	}
}

// Call sends a request with a JSON body (if any); headers alternate name,
// value. A header given twice is sent twice; the first replaces the default
// Content-Type.
func (e *Env) Call(method, path, body string, headers ...string) Response {
	e.T.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, e.Srv.URL+path, rd)
	if err != nil {
		e.T.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	given := map[string]bool{}
	for i := 0; i+1 < len(headers); i += 2 {
		name := http.CanonicalHeaderKey(headers[i])
		if given[name] {
			req.Header.Add(name, headers[i+1])
		} else {
			req.Header.Set(name, headers[i+1])
		}
		given[name] = true
	}
	resp, err := e.Srv.Client().Do(req)
	if err != nil {
		e.T.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return Response{Status: resp.StatusCode, Header: resp.Header, Body: raw}
}

// Password runs the password grant.
func (e *Env) Password(email, password string) Response {
	e.T.Helper()
	body, _ := json.Marshal(map[string]string{"email": email, "password": password})
	return e.Call("POST", "/api/auth/v1/token?grant_type=password", string(body))
}

// Refresh runs the refresh grant.
func (e *Env) Refresh(token string) Response {
	e.T.Helper()
	body, _ := json.Marshal(map[string]string{"refresh_token": token})
	return e.Call("POST", "/api/auth/v1/token?grant_type=refresh_token", string(body))
}

// Session is the token endpoint's answer.
type Session struct {
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

// SignIn signs in and fails the test if that does not work.
func (e *Env) SignIn(email, password string) Session {
	e.T.Helper()
	r := e.Password(email, password)
	if r.Status != http.StatusOK {
		e.T.Fatalf("sign in %s: %d %s", email, r.Status, r.Body)
	}
	var s Session
	r.Decode(e.T, &s)
	return s
}

// NewUser creates a user (free tier, own tenant) and signs in.
func (e *Env) NewUser(email string) Session {
	e.T.Helper()
	e.User(email, "correct horse", principal.TierFree)
	return e.SignIn(email, "correct horse")
}

// Bearer is the Authorization header pair for token.
func Bearer(token string) []string { return []string{"Authorization", "Bearer " + token} }

// ExpectError asserts an error response in the shared shape.
func ExpectError(t testing.TB, r Response, status int, code string) {
	t.Helper()
	if r.Status != status {
		t.Fatalf("status %d, want %d: %s", r.Status, status, r.Body)
	}
	var e struct {
		StatusCode int    `json:"statusCode"`
		Error      string `json:"error"`
		Message    string `json:"message"`
	}
	if err := json.Unmarshal(r.Body, &e); err != nil {
		t.Fatalf("error body: %v: %s", err, r.Body)
	}
	if e.StatusCode != status || e.Error != code || e.Message == "" {
		t.Fatalf("error %+v, want %d %s", e, status, code)
	}
}

type sendBufferListener struct {
	net.Listener
	size int
}

func (l sendBufferListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if tcp, ok := c.(*net.TCPConn); ok {
		_ = tcp.SetWriteBuffer(l.size)
	}
	return c, err
}

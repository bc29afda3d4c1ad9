package auth_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stratahq/strata/impl/principal"
	"github.com/stratahq/strata/impl/server"
	"github.com/stratahq/strata/impl/testenv"
)

func TestTenantIsolationOnDataPlatform(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	e.User("a@example.com", "correct horse", principal.TierFree)
	_, tb := e.User("b@example.com", "correct horse", principal.TierFree)
	a := e.SignIn("a@example.com", "correct horse")

	for name, tenant := range map[string]string{
		"missing":        "",
		"malformed":      "not-a-uuid",
		"another tenant": tb.ID.String(),
	} {
		headers := bearer(a.AccessToken)
		if tenant != "" {
			headers = append(headers, "X-Tenant-Id", tenant)
		}
		r := e.Call("GET", "/api/data-platform/schema", "", headers...)
		if r.Status != 403 || r.JSON(t)["error"] != "forbidden" {
			t.Errorf("%s X-Tenant-Id: %d %s, want 403 forbidden", name, r.Status, r.Body)
		}
	}
	// The header twice, in either order, is refused like a wrong one.
	for _, pair := range [][2]string{{a.User.AppMetadata.TenantID, tb.ID.String()}, {tb.ID.String(), a.User.AppMetadata.TenantID},
		{a.User.AppMetadata.TenantID, a.User.AppMetadata.TenantID}} {
		r := e.Call("GET", "/api/data-platform/schema", "", append(bearer(a.AccessToken), "X-Tenant-Id", pair[0], "X-Tenant-Id", pair[1])...)
		if r.Status != 403 || r.JSON(t)["error"] != "forbidden" {
			t.Errorf("X-Tenant-Id twice %v: %d %s, want 403 forbidden", pair, r.Status, r.Body)
		}
	}
	// The tenant's own id passes the check (whatever the operation answers next).
	r := e.Call("GET", "/api/data-platform/schema", "", append(bearer(a.AccessToken), "X-Tenant-Id", a.User.AppMetadata.TenantID)...)
	if r.Status == 403 || r.Status == 401 {
		t.Fatalf("own tenant refused: %d %s", r.Status, r.Body)
	}
	// Content ignores X-Tenant-Id.
	r = e.Call("GET", "/api/auth/v1/user", "", append(bearer(a.AccessToken), "X-Tenant-Id", tb.ID.String())...)
	if r.Status != 200 {
		t.Fatalf("auth endpoint with a foreign X-Tenant-Id: %d", r.Status)
	}
}

func TestQuotasPerTierAreCountedSeparately(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	e.User("free@example.com", "correct horse", principal.TierFree)
	e.User("pro@example.com", "correct horse", principal.TierPro)
	free := e.SignIn("free@example.com", "correct horse")
	pro := e.SignIn("pro@example.com", "correct horse")
	dp := func(s session) response {
		return e.Call("GET", "/api/data-platform/schema", "", append(bearer(s.AccessToken), "X-Tenant-Id", s.User.AppMetadata.TenantID)...)
	}
	content := func(s session) response { return e.Call("GET", "/api/content", "", bearer(s.AccessToken)...) }

	for i := range 30 {
		r := dp(free)
		if r.Status == 429 {
			t.Fatalf("request %d of 30 refused", i+1)
		}
		if got := r.Header.Get("RateLimit-Remaining"); got != strconv.Itoa(29-i) {
			t.Fatalf("request %d: RateLimit-Remaining %q, want %d", i+1, got, 29-i)
		}
	}
	r := dp(free)
	expectError(t, r, http.StatusTooManyRequests, "RATE_LIMITED")
	if r.Header.Get("Retry-After") != "2" || r.Header.Get("RateLimit-Limit") != "30" || r.Header.Get("RateLimit-Remaining") != "0" ||
		r.Header.Get("RateLimit-Reset") != "2" {
		t.Fatalf("429 headers: %v", r.Header)
	}
	// One value per header: the refusal's, not also the quota's of the
	// request it refuses.
	for _, h := range []string{"Retry-After", "RateLimit-Limit", "RateLimit-Remaining", "RateLimit-Reset"} {
		if n := len(r.Header.Values(h)); n != 1 {
			t.Fatalf("%d values of %s: %v", n, h, r.Header.Values(h))
		}
	}
	// Content has its own quota.
	if r := content(free); r.Status != 200 && r.Status != 501 {
		t.Fatalf("content after data-platform quota: %d %s", r.Status, r.Body)
	}
	// The bucket refills at 30/min: one request every 2 s.
	e.Clock.Advance(2 * time.Second)
	if r := dp(free); r.Status == 429 {
		t.Fatal("refused after the refill interval")
	}
	// Pro: 300 per minute.
	for i := range 300 {
		if r := dp(pro); r.Status == 429 {
			t.Fatalf("pro request %d of 300 refused", i+1)
		}
	}
	expectError(t, dp(pro), http.StatusTooManyRequests, "RATE_LIMITED")

	// Content: 60 per user per minute on free, whatever the session.
	e.User("reader@example.com", "correct horse", principal.TierFree)
	first, second := e.SignIn("reader@example.com", "correct horse"), e.SignIn("reader@example.com", "correct horse")
	for i := range 60 {
		s := first
		if i%2 == 1 {
			s = second
		}
		if r := content(s); r.Status == 429 {
			t.Fatalf("content request %d of 60 refused", i+1)
		}
	}
	expectError(t, content(first), http.StatusTooManyRequests, "RATE_LIMITED")
}

func TestPasswordBruteForceProtection(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	e.User("target@example.com", "correct horse", principal.TierFree)
	for range 10 {
		expectOAuth(t, e.Password("target@example.com", "guess"), "invalid_grant", "invalid_credentials")
	}
	r := e.Password("target@example.com", "correct horse")
	expectError(t, r, http.StatusTooManyRequests, "RATE_LIMITED")
	if r.Header.Get("Retry-After") == "" {
		t.Fatal("no Retry-After")
	}
	if code := r.JSON(t)["error_code"]; code != "over_request_rate_limit" {
		t.Fatalf("error_code %v, want GoTrue's over_request_rate_limit", code)
	}
	e.Clock.Advance(5*time.Minute + time.Second)
	if r := e.Password("target@example.com", "correct horse"); r.Status != 200 {
		t.Fatalf("after the window: %d %s", r.Status, r.Body)
	}

	// Per client IP: 10 failures a minute across any emails.
	e2 := newEnv(t, nil)
	e2.User("other@example.com", "correct horse", principal.TierFree)
	for i := range 10 {
		e2.Password(fmt.Sprintf("spray%d@example.com", i), "guess")
	}
	expectError(t, e2.Password("other@example.com", "correct horse"), http.StatusTooManyRequests, "RATE_LIMITED")
	e2.Clock.Advance(61 * time.Second)
	if r := e2.Password("other@example.com", "correct horse"); r.Status != 200 {
		t.Fatalf("after the IP window: %d %s", r.Status, r.Body)
	}
}

func TestPersonalAccessTokenLifecycle(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	u, tn := e.User("pat@example.com", "correct horse", principal.TierFree)
	e.User("mallory@example.com", "correct horse", principal.TierFree)
	s := e.SignIn("pat@example.com", "correct horse")
	m := e.SignIn("mallory@example.com", "correct horse")

	r := e.Call("POST", "/api/auth/v1/personal-access-tokens", `{"name":"ci"}`, bearer(s.AccessToken)...)
	if r.Status != 201 {
		t.Fatalf("create: %d %s", r.Status, r.Body)
	}
	var created struct {
		ID, Name, Prefix, Token string
		LastUsedAt              *time.Time `json:"lastUsedAt"`
	}
	_ = json.Unmarshal(r.Body, &created)
	if len(created.Token) < 40 || created.Token[:11] != "strata_pat_" || created.Token[:len(created.Prefix)] != created.Prefix || created.LastUsedAt != nil {
		t.Fatalf("created %+v", created)
	}

	// The PAT works wherever a bearer token does, data platform included.
	r = e.Call("GET", "/api/auth/v1/user", "", bearer(created.Token)...)
	if r.Status != 200 || r.JSON(t)["id"] != u.ID.String() {
		t.Fatalf("GET /user with PAT: %d %s", r.Status, r.Body)
	}
	r = e.Call("GET", "/api/data-platform/schema", "", append(bearer(created.Token), "X-Tenant-Id", tn.ID.String())...)
	if r.Status == 401 || r.Status == 403 {
		t.Fatalf("data platform with PAT: %d %s", r.Status, r.Body)
	}

	// Listed without the secret, with the last use recorded.
	r = e.Call("GET", "/api/auth/v1/personal-access-tokens", "", bearer(s.AccessToken)...)
	if r.Status != 200 || containsBytes(r.Body, created.Token) || !containsBytes(r.Body, created.ID) || !containsBytes(r.Body, `"lastUsedAt":"2026`) {
		t.Fatalf("list: %d %s", r.Status, r.Body)
	}
	// A PAT cannot manage PATs; another user cannot revoke it.
	expectError(t, e.Call("POST", "/api/auth/v1/personal-access-tokens", `{"name":"child"}`, bearer(created.Token)...), 403, "FORBIDDEN")
	expectError(t, e.Call("DELETE", "/api/auth/v1/personal-access-tokens/"+created.ID, "", bearer(m.AccessToken)...), 404, "not_found")

	if r := e.Call("DELETE", "/api/auth/v1/personal-access-tokens/"+created.ID, "", bearer(s.AccessToken)...); r.Status != 204 {
		t.Fatalf("revoke: %d %s", r.Status, r.Body)
	}
	expectError(t, e.Call("GET", "/api/auth/v1/user", "", bearer(created.Token)...), 401, "UNAUTHENTICATED")
	expectError(t, e.Call("DELETE", "/api/auth/v1/personal-access-tokens/"+created.ID, "", bearer(s.AccessToken)...), 404, "not_found")
	expectError(t, e.Call("GET", "/api/auth/v1/user", "", bearer("strata_pat_forged")...), 401, "UNAUTHENTICATED")

	// Expiry.
	exp := e.Clock.Now().Add(time.Hour).Format(time.RFC3339)
	r = e.Call("POST", "/api/auth/v1/personal-access-tokens", `{"name":"short","expiresAt":"`+exp+`"}`, bearer(s.AccessToken)...)
	_ = json.Unmarshal(r.Body, &created)
	e.Clock.Advance(30 * time.Minute)
	if r := e.Call("GET", "/api/auth/v1/user", "", bearer(created.Token)...); r.Status != 200 {
		t.Fatalf("PAT before expiry: %d", r.Status)
	}
	e.Clock.Advance(31 * time.Minute)
	expectError(t, e.Call("GET", "/api/auth/v1/user", "", bearer(created.Token)...), 401, "UNAUTHENTICATED")
	past := e.Clock.Now().Add(-time.Minute).Format(time.RFC3339)
	s = e.SignIn("pat@example.com", "correct horse")
	expectError(t, e.Call("POST", "/api/auth/v1/personal-access-tokens", `{"name":"past","expiresAt":"`+past+`"}`, bearer(s.AccessToken)...), 400, "validation_error")
}

func containsBytes(b []byte, s string) bool { return s != "" && strings.Contains(string(b), s) }

func TestAdminCreatesAreValidated(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	ctx := context.Background()
	if _, err := e.App.Auth().CreateTenant(ctx, "x", principal.Tier("gold")); err == nil {
		t.Fatal("tier gold accepted")
	}
	if _, err := e.App.Auth().CreateTenant(ctx, "  ", principal.TierFree); err == nil {
		t.Fatal("empty name accepted")
	}
	tn, _ := e.App.Auth().CreateTenant(ctx, "ok", principal.TierFree)
	if _, err := e.App.Auth().CreateUser(ctx, tn.ID, "dup@example.com", "correct horse"); err != nil {
		t.Fatal(err)
	}
	if _, err := e.App.Auth().CreateUser(ctx, tn.ID, "DUP@example.com", "correct horse"); err == nil {
		t.Fatal("duplicate email (other case) accepted")
	}
}

// TestPerIPLimitBehindTrustedProxy: behind a trusted proxy, the per-IP
// sign-in limit keys on the client the proxy names in X-Forwarded-For, so
// one client's failures do not lock out the others; without the proxy
// trusted, the header is ignored, so rotating it does not escape the limit.
func TestPerIPLimitBehindTrustedProxy(t *testing.T) {
	t.Parallel()
	password := func(e *testenv.Env, email, pw, client string) testenv.Response {
		body, _ := json.Marshal(map[string]string{"email": email, "password": pw})
		return e.Call("POST", "/api/auth/v1/token?grant_type=password", string(body), "X-Forwarded-For", client)
	}

	behind := newEnv(t, func(c *server.Config) { c.TrustedProxies = []string{"127.0.0.1", "::1"} })
	behind.User("victim@example.com", "correct horse", principal.TierFree)
	for i := range 10 {
		password(behind, fmt.Sprintf("spray%d@example.com", i), "guess", "203.0.113.7")
	}
	expectError(t, password(behind, "victim@example.com", "correct horse", "203.0.113.7"), http.StatusTooManyRequests, "RATE_LIMITED")
	if r := password(behind, "victim@example.com", "correct horse", "203.0.113.8"); r.Status != http.StatusOK {
		t.Fatalf("another client behind the same proxy: %d %s", r.Status, r.Body)
	}

	direct := newEnv(t, nil)
	direct.User("victim@example.com", "correct horse", principal.TierFree)
	for i := range 10 {
		password(direct, fmt.Sprintf("spray%d@example.com", i), "guess", fmt.Sprintf("203.0.113.%d", i))
	}
	expectError(t, password(direct, "victim@example.com", "correct horse", "198.51.100.1"), http.StatusTooManyRequests, "RATE_LIMITED")
}

// TestPasswordsLongerThanBcryptReadsNeverMatch: bcrypt reads 72 bytes, so a
// password of 72 bytes followed by anything would match it; such a password
// is wrong, like any other.
func TestPasswordsLongerThanBcryptReadsNeverMatch(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	long := strings.Repeat("p", 72)
	e.User("long@example.com", long, principal.TierFree)
	if r := e.Password("long@example.com", long); r.Status != http.StatusOK {
		t.Fatalf("the 72-byte password: %d %s", r.Status, r.Body)
	}
	expectOAuth(t, e.Password("long@example.com", long+"EXTRA"), "invalid_grant", "invalid_credentials")
}

package sdk_test

import (
	"context"
	"errors"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/stratahq/strata/impl/principal"
	"github.com/stratahq/strata/sdk"
)

const (
	passwordGrant = "POST /api/auth/v1/token?grant_type=password"
	refreshGrant  = "POST /api/auth/v1/token?grant_type=refresh_token"
)

func TestLoginOnFirstUseAndTenantHeader(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	c := newUser(t, e, "ada@example.com", principal.TierPro)
	var tenants []string
	c.wire.onSend = func(r *http.Request) {
		if r.URL.Path == "/api/data-platform/query" {
			tenants = append(tenants, r.Header.Get("X-Tenant-Id"))
		}
	}
	if n := c.wire.count(); n != 0 {
		t.Fatalf("New sent %d requests, want none", n)
	}
	ctx := ctxT(t)
	if _, err := c.Query(ctx, "SELECT 1", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Query(ctx, "SELECT 2", nil); err != nil {
		t.Fatal(err)
	}
	if n := c.wire.count(passwordGrant); n != 1 {
		t.Fatalf("%d password grants, want 1:\n%s", n, c.wire)
	}
	if len(tenants) != 2 || tenants[0] != c.tenant || tenants[1] != c.tenant {
		t.Fatalf("X-Tenant-Id %v, want %s", tenants, c.tenant)
	}
	sess, ok := c.Session()
	if !ok || sess.User.Email != "ada@example.com" || sess.RefreshToken == "" {
		t.Fatalf("session %+v, %v", sess, ok)
	}
	ua := ""
	c.wire.onSend = func(r *http.Request) { ua = r.Header.Get("User-Agent") }
	if _, err := c.User(ctx); err != nil {
		t.Fatal(err)
	}
	if ua != sdk.DefaultUserAgent {
		t.Fatalf("User-Agent %q", ua)
	}
}

func TestWrongPassword(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.User("ada@example.com", password, principal.TierPro)
	c := newClient(t, e, &wire{base: e.Srv.Client().Transport}, sdk.WithPassword("ada@example.com", "wrong"))
	err := c.Login(ctxT(t))
	var apiErr *sdk.APIError
	if !errors.As(err, &apiErr) || !errors.Is(err, sdk.ErrUnauthenticated) {
		t.Fatalf("err %v, want an ErrUnauthenticated *APIError", err)
	}
	if apiErr.StatusCode != 400 || apiErr.Code != "invalid_grant" || apiErr.ErrorCode != "invalid_credentials" || apiErr.RequestID == "" {
		t.Fatalf("%+v", apiErr)
	}
}

// The client refreshes a token about to expire by its own clock, before the
// server could refuse it.
func TestRefreshBeforeExpiry(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	clock := &localClock{}
	c := newUser(t, e, "ada@example.com", principal.TierPro)
	sdk.SetClock(c.Client, clock.Now)
	ctx := ctxT(t)
	if err := c.Login(ctx); err != nil {
		t.Fatal(err)
	}
	first, _ := c.Session()

	clock.Advance(58 * time.Minute) // 2 min left: no refresh yet
	e.Clock.Advance(58 * time.Minute)
	if _, err := c.Connectors(ctx); err != nil {
		t.Fatal(err)
	}
	if n := c.wire.count(refreshGrant); n != 0 {
		t.Fatalf("%d refreshes with 2 minutes left", n)
	}
	clock.Advance(90 * time.Second) // 30 s left: inside the margin
	e.Clock.Advance(90 * time.Second)
	if _, err := c.Connectors(ctx); err != nil {
		t.Fatal(err)
	}
	if n := c.wire.count(refreshGrant); n != 1 {
		t.Fatalf("%d refreshes, want 1:\n%s", n, c.wire)
	}
	if n := c.wire.count(" 401"); n != 0 {
		t.Fatalf("the server refused a token:\n%s", c.wire)
	}
	second, _ := c.Session()
	if second.AccessToken == first.AccessToken || second.RefreshToken == first.RefreshToken {
		t.Fatal("the session did not change")
	}
}

// A token the server calls expired (the clocks disagree) is refreshed and
// the request sent once more.
func TestRefreshOnTokenExpired(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	c := newUser(t, e, "ada@example.com", principal.TierPro)
	ctx := ctxT(t)
	if _, err := c.Query(ctx, "SELECT 1", nil); err != nil {
		t.Fatal(err)
	}
	e.Clock.Advance(61 * time.Minute)
	res, err := c.Query(ctx, "SELECT 2 AS two", nil)
	if err != nil {
		t.Fatal(err)
	}
	if n, _ := res.Rows[0]["two"].(interface{ String() string }); n == nil || n.String() != "2" {
		t.Fatalf("rows %v", res.Rows)
	}
	if got := c.wire.count("POST /api/data-platform/query 401"); got != 1 {
		t.Fatalf("%d refused queries, want 1:\n%s", got, c.wire)
	}
	if got := c.wire.count(refreshGrant, " 200"); got != 1 {
		t.Fatalf("%d refreshes, want 1:\n%s", got, c.wire)
	}
	if got := c.wire.count("POST /api/data-platform/query 200"); got != 2 {
		t.Fatalf("%d answered queries, want 2:\n%s", got, c.wire)
	}
}

// However many goroutines find the token expired at once, the server sees
// one refresh; and the rotated refresh token is the one used next time.
func TestOneRefreshForConcurrentCallers(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	c := newUser(t, e, "ada@example.com", principal.TierPro)
	ctx := ctxT(t)
	if err := c.Login(ctx); err != nil {
		t.Fatal(err)
	}
	for round := 1; round <= 2; round++ {
		before, _ := c.Session()
		e.Clock.Advance(61 * time.Minute)
		var wg sync.WaitGroup
		errs := make(chan error, 40)
		for i := range 40 {
			wg.Go(func() {
				var err error
				if i%2 == 0 {
					_, err = c.User(ctx)
				} else {
					_, err = c.Connectors(ctx)
				}
				errs <- err
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				t.Fatal(err)
			}
		}
		if n := c.wire.count(refreshGrant); n != round {
			t.Fatalf("round %d: %d refreshes in all, want %d:\n%s", round, n, round, c.wire)
		}
		after, _ := c.Session()
		if after.RefreshToken == before.RefreshToken {
			t.Fatalf("round %d: the refresh token did not rotate", round)
		}
	}
	// Round two refreshed with round one's successor: had it reused the
	// first token an hour after its rotation, the server would have
	// revoked the session and the requests would have failed.
}

func TestStaticTokenIsNotRefreshed(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.User("ada@example.com", password, principal.TierPro)
	s := e.SignIn("ada@example.com", password)
	w := &wire{base: e.Srv.Client().Transport}
	c := newClient(t, e, w, sdk.WithToken(s.AccessToken))
	ctx := ctxT(t)
	if _, err := c.Query(ctx, "SELECT 1", nil); err != nil {
		t.Fatal(err)
	}
	e.Clock.Advance(61 * time.Minute)
	_, err := c.Query(ctx, "SELECT 1", nil)
	if !errors.Is(err, sdk.ErrTokenExpired) || !errors.Is(err, sdk.ErrUnauthenticated) {
		t.Fatalf("err %v, want ErrTokenExpired", err)
	}
	if n := w.count("/api/auth/v1/token"); n != 0 {
		t.Fatalf("a static token was renewed:\n%s", w)
	}
}

// A stored refresh token starts the session; when it was spent elsewhere
// and a password is at hand, the client signs in again.
func TestRefreshTokenStartAndPasswordFallback(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.User("ada@example.com", password, principal.TierPro)
	s := e.SignIn("ada@example.com", password)
	w := &wire{base: e.Srv.Client().Transport}
	var saved []string
	c := newClient(t, e, w, sdk.WithRefreshToken(s.RefreshToken),
		sdk.WithSessionCallback(func(s sdk.Session) { saved = append(saved, s.RefreshToken) }))
	ctx := ctxT(t)
	if _, err := c.Connectors(ctx); err != nil {
		t.Fatal(err)
	}
	if w.count(refreshGrant, " 200") != 1 || len(saved) != 1 || saved[0] == s.RefreshToken {
		t.Fatalf("saved %v\n%s", saved, w)
	}

	// Spend the client's current refresh token behind its back, long ago.
	if r := e.Refresh(saved[0]); r.Status != 200 {
		t.Fatalf("refresh: %d %s", r.Status, r.Body)
	}
	e.Clock.Advance(61 * time.Minute)
	_, err := c.Connectors(ctx)
	if !errors.Is(err, sdk.ErrUnauthenticated) {
		t.Fatalf("err %v, want ErrUnauthenticated (session revoked)", err)
	}

	w2 := &wire{base: e.Srv.Client().Transport}
	s2 := e.SignIn("ada@example.com", password)
	c2 := newClient(t, e, w2, sdk.WithRefreshToken(s2.RefreshToken), sdk.WithPassword("ada@example.com", password))
	if r := e.Refresh(s2.RefreshToken); r.Status != 200 {
		t.Fatalf("refresh: %d %s", r.Status, r.Body)
	}
	e.Clock.Advance(time.Minute) // past the 10 s grace: the token is spent
	if _, err := c2.Connectors(ctx); err != nil {
		t.Fatal(err)
	}
	if w2.count(refreshGrant, " 400") != 1 || w2.count(passwordGrant, " 200") != 1 {
		t.Fatalf("want a refused refresh, then a password login:\n%s", w2)
	}
}

func TestPersonalAccessToken(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	owner := newUser(t, e, "ada@example.com", principal.TierPro)
	ctx := ctxT(t)
	rsp, err := owner.API().CreatePersonalAccessTokenWithResponse(ctx, sdk.PersonalAccessTokenCreate{Name: "ci"})
	if err != nil || rsp.JSON201 == nil {
		t.Fatalf("create PAT: %v %s", err, rsp.Body)
	}
	w := &wire{base: e.Srv.Client().Transport}
	c := newClient(t, e, w, sdk.WithPersonalAccessToken(rsp.JSON201.Token))
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			if _, err := c.Connectors(ctx); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if n := w.count("GET /api/auth/v1/user 200"); n != 1 {
		t.Fatalf("the tenant was looked up %d times, want once:\n%s", n, w)
	}
	if n := w.count("/api/data-platform/connectors 200"); n != 8 {
		t.Fatalf("%d answered, want 8:\n%s", n, w)
	}
	e.Clock.Advance(24 * time.Hour) // a PAT without expiry does not expire
	if _, err := c.Connectors(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := sdk.New(e.Srv.URL, sdk.WithPersonalAccessToken("strata_pat_x"), sdk.WithRefreshToken("r")); err == nil {
		t.Fatal("a PAT with a refresh token was accepted")
	}
}

func TestNewValidates(t *testing.T) {
	t.Parallel()
	for name, f := range map[string]func() (*sdk.Client, error){
		"no credentials": func() (*sdk.Client, error) { return sdk.New("http://127.0.0.1:8080") },
		"relative URL":   func() (*sdk.Client, error) { return sdk.New("127.0.0.1:8080", sdk.WithToken("t")) },
		"empty password": func() (*sdk.Client, error) { return sdk.New("http://x", sdk.WithPassword("a@b.c", "")) },
		"negative retry": func() (*sdk.Client, error) { return sdk.New("http://x", sdk.WithToken("t"), sdk.WithRetries(-1, 0)) },
	} {
		if _, err := f(); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	c, err := sdk.New("https://strata.example.com/prefix/", sdk.WithToken("t"))
	if err != nil || c.BaseURL() != "https://strata.example.com/prefix" {
		t.Fatalf("%v %v", c, err)
	}
}

// Logout revokes the session; a client with a password signs in again.
func TestLogout(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	c := newUser(t, e, "ada@example.com", principal.TierPro)
	ctx := context.Background()
	if err := c.Login(ctx); err != nil {
		t.Fatal(err)
	}
	old, _ := c.Session()
	if err := c.Logout(ctx); err != nil {
		t.Fatal(err)
	}
	if _, ok := c.Session(); ok {
		t.Fatal("session kept after logout")
	}
	if r := e.Refresh(old.RefreshToken); r.Status != 400 {
		t.Fatalf("the old refresh token still works: %d", r.Status)
	}
	if _, err := c.User(ctx); err != nil {
		t.Fatal(err)
	}
	if n := c.wire.count(passwordGrant); n != 2 {
		t.Fatalf("%d logins, want 2", n)
	}
}

package sdk

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"
)

// refreshMargin is how long before its expiry an access token is renewed,
// so that a request never leaves with a token about to lapse.
const refreshMargin = 60 * time.Second

// renewTimeout bounds one login or refresh. The call is shared by every
// waiting goroutine, so it does not end when the first caller gives up.
const renewTimeout = 30 * time.Second

// authState holds the session: the current access token, its refresh token
// and the tenant, and runs logins and refreshes — at most one at a time,
// shared by every goroutine that needs a new token.
type authState struct {
	s         *Client
	bare      *ClientWithResponses // token endpoint: no auth, no retries
	email     string
	password  string
	static    bool // a personal access token: never refreshed
	fixed     string
	onSession func(Session)

	mu      sync.Mutex
	access  string
	refresh string
	// expiry is when the access token expires by the local clock (receipt
	// time plus expires_in), zero when unknown. expires_at is the server's
	// clock, and the two clocks need not agree.
	expiry  time.Time
	margin  time.Duration
	tenant  string
	session *Session
	renewal *flight[string]
	user    *flight[string]
	// changed is closed (and replaced) whenever the access token changes,
	// so that an event stream can send the new token to the server.
	changed chan struct{}
}

// flight is one call in progress whose result several goroutines await.
type flight[T any] struct {
	done chan struct{}
	val  T
	err  error
}

func (f *flight[T]) wait(ctx context.Context) (T, error) {
	select {
	case <-f.done:
		return f.val, f.err
	case <-ctx.Done():
		var zero T
		return zero, ctx.Err()
	}
}

func newAuthState(s *Client, cfg config) *authState {
	bare := &ClientWithResponses{&rawClient{
		Server: s.baseURL.String() + "/",
		Client: &uaDoer{doer: s.doer, ua: s.userAgent},
	}}
	return &authState{
		s: s, bare: bare,
		email: cfg.email, password: cfg.password, static: cfg.static,
		fixed: cfg.tenant, onSession: cfg.onSession,
		access: cfg.accessToken, refresh: cfg.refreshToken,
		margin:  refreshMargin,
		changed: make(chan struct{}),
	}
}

// canRenew reports whether a new access token can be obtained at all.
func (a *authState) canRenew() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return !a.static && (a.refresh != "" || a.email != "")
}

// freshLocked reports whether the current token may be used as is.
func (a *authState) freshLocked() bool {
	if a.access == "" {
		return false
	}
	return a.static || a.expiry.IsZero() || a.s.now().Before(a.expiry.Add(-a.margin))
}

// token returns an access token to send, signing in or refreshing first
// when there is none or it expires within the margin.
func (a *authState) token(ctx context.Context) (string, error) {
	a.mu.Lock()
	if a.freshLocked() {
		tok := a.access
		a.mu.Unlock()
		return tok, nil
	}
	stale := a.access
	a.mu.Unlock()
	return a.renew(ctx, stale)
}

// renew obtains a new access token because stale was found wanting (an
// empty stale: there is none yet). If another goroutine already replaced
// stale, its result is used; if a renewal is in flight, it is awaited; only
// otherwise does a new one start. Refresh tokens are single-use, so this is
// what keeps concurrent callers from spending the same one twice.
func (a *authState) renew(ctx context.Context, stale string) (string, error) {
	a.mu.Lock()
	if a.access != stale && a.freshLocked() {
		tok := a.access
		a.mu.Unlock()
		return tok, nil
	}
	if a.static || (a.refresh == "" && a.email == "") {
		a.mu.Unlock()
		if stale == "" {
			return "", fmt.Errorf("strata: signed out, and no password to sign in again: %w", ErrUnauthenticated)
		}
		return stale, nil // nothing to renew with: the server will say why
	}
	f := a.renewal
	if f == nil {
		f = &flight[string]{done: make(chan struct{})}
		a.renewal = f
		refresh, email, password := a.refresh, a.email, a.password
		// The renewal belongs to every waiter, not to ctx: it outlives a
		// caller that gives up, but keeps ctx's values.
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), renewTimeout)
		go func() {
			defer cancel()
			sess, err := a.grant(rctx, refresh, email, password)
			a.mu.Lock()
			a.renewal = nil
			if err == nil {
				a.applyLocked(sess)
				f.val = sess.AccessToken
			} else {
				f.err = err
			}
			a.mu.Unlock()
			if err == nil && a.onSession != nil {
				a.onSession(sess)
			}
			close(f.done)
		}()
	}
	a.mu.Unlock()
	return f.wait(ctx)
}

// grant runs the refresh grant, or the password grant when there is no
// refresh token or it was refused and a password is at hand.
func (a *authState) grant(ctx context.Context, refresh, email, password string) (Session, error) {
	if refresh != "" {
		sess, err := a.tokenGrant(ctx, "refresh_token", TokenRequest{RefreshToken: &refresh})
		if err == nil || !errors.Is(err, ErrUnauthenticated) {
			return sess, err // a transient failure keeps the refresh token
		}
		a.dropRefresh(refresh) // spent, revoked or unknown: it will not work again
		if email == "" {
			return sess, err
		}
	}
	return a.tokenGrant(ctx, "password", TokenRequest{Email: &email, Password: &password})
}

// dropRefresh forgets a refresh token the server refused.
func (a *authState) dropRefresh(rt string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.refresh == rt {
		a.refresh = ""
	}
}

func (a *authState) tokenGrant(ctx context.Context, grantType string, body TokenRequest) (Session, error) {
	rsp, err := a.bare.TokenWithResponse(ctx, &TokenParams{GrantType: grantType}, body)
	if err != nil {
		return Session{}, fmt.Errorf("strata: %s grant: %w", grantType, err)
	}
	return result(rsp.JSON200, rsp.HTTPResponse, rsp.Body)
}

// applyLocked installs a new session.
func (a *authState) applyLocked(sess Session) {
	a.access, a.refresh = sess.AccessToken, sess.RefreshToken
	a.expiry = time.Time{}
	if sess.ExpiresIn > 0 {
		life := time.Duration(sess.ExpiresIn) * time.Second
		a.expiry = a.s.now().Add(life)
		a.margin = min(refreshMargin, life/2)
	}
	if id := sess.User.AppMetadata.TenantID; id != [16]byte{} {
		a.tenant = id.String()
	}
	s := sess
	a.session = &s
	close(a.changed)
	a.changed = make(chan struct{})
}

// current returns the token in use (possibly stale), when it expires (zero:
// unknown or never) and a channel closed when it changes.
func (a *authState) current() (token string, expiry time.Time, changed <-chan struct{}) {
	a.mu.Lock()
	defer a.mu.Unlock()
	exp := a.expiry
	if !exp.IsZero() {
		exp = exp.Add(-a.margin)
	}
	return a.access, exp, a.changed
}

// tenantID returns the tenant for X-Tenant-Id: WithTenant's, the session's,
// or — for tokens without a session — the one GET /api/auth/v1/user names.
func (a *authState) tenantID(ctx context.Context) (string, error) {
	if a.fixed != "" {
		return a.fixed, nil
	}
	a.mu.Lock()
	t, sessionBased := a.tenant, !a.static && a.access == "" && (a.refresh != "" || a.email != "")
	a.mu.Unlock()
	if t != "" {
		return t, nil
	}
	if sessionBased { // signing in tells the tenant
		if _, err := a.token(ctx); err != nil {
			return "", err
		}
		a.mu.Lock()
		t = a.tenant
		a.mu.Unlock()
		if t != "" {
			return t, nil
		}
	}
	a.mu.Lock()
	f := a.user
	if f == nil {
		f = &flight[string]{done: make(chan struct{})}
		a.user = f
		uctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), renewTimeout)
		go func() {
			defer cancel()
			u, err := a.s.User(uctx)
			a.mu.Lock()
			a.user = nil
			if err == nil {
				a.tenant = u.AppMetadata.TenantID.String()
				f.val = a.tenant
			} else {
				f.err = fmt.Errorf("strata: find the tenant (GET /api/auth/v1/user): %w", err)
			}
			a.mu.Unlock()
			close(f.done)
		}()
	}
	a.mu.Unlock()
	return f.wait(ctx)
}

// Session returns the current session of a password or refresh-token login
// (tokens, expiry, user) and false when there is none yet or the client
// uses a static token. Store RefreshToken to resume with WithRefreshToken;
// it changes with every refresh.
func (s *Client) Session() (Session, bool) {
	s.auth.mu.Lock()
	defer s.auth.mu.Unlock()
	if s.auth.session == nil {
		return Session{}, false
	}
	return *s.auth.session, true
}

// Login signs in (or refreshes) now instead of on first use, so that bad
// credentials show at start-up. It is a no-op when the token is fresh, and
// checks nothing for a static token or personal access token: call User to
// have the server check one.
func (s *Client) Login(ctx context.Context) error {
	_, err := s.auth.token(ctx)
	return err
}

// User returns the signed-in user (GET /api/auth/v1/user), including
// app_metadata.tenant_id and tier.
func (s *Client) User(ctx context.Context) (User, error) {
	rsp, err := s.api.GetUserWithResponse(ctx)
	if err != nil {
		return User{}, err
	}
	return result(rsp.JSON200, rsp.HTTPResponse, rsp.Body)
}

// Logout revokes the session's refresh tokens on the server (scope local)
// and forgets the session; the access token stays valid until it expires,
// as the server documents. The client cannot be used afterwards unless it
// has a password to sign in with again.
func (s *Client) Logout(ctx context.Context) error {
	rsp, err := s.api.LogoutWithResponse(ctx, &LogoutParams{})
	if err != nil {
		return err
	}
	if rsp.StatusCode() != http.StatusNoContent {
		return newAPIError(rsp.HTTPResponse, rsp.Body)
	}
	s.auth.mu.Lock()
	defer s.auth.mu.Unlock()
	s.auth.access, s.auth.refresh, s.auth.session, s.auth.expiry = "", "", nil, time.Time{}
	return nil
}

package conformance

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"
)

// The expiry checks watch tokens expire. Against a live server they wait in
// real time, as far as Config.MaxExpiryWait allows (CI starts the server
// with short lifetimes, see scripts/conformance.sh); a lifetime beyond that
// is reported in a note, never silently passed over. In-process they move a
// clock the server shares (Config.Clock) and so check the spec's own
// lifetimes in no time.

const (
	// pollInterval is how often a check asks whether a token is refused yet.
	pollInterval = 250 * time.Millisecond
	// expirySlack is what a check allows past the instant a token must be
	// refused by: request latency and the whole seconds of JWT times.
	expirySlack = 3 * time.Second
	// patLifetime is how far in the future the expiring PAT's expiresAt lies.
	patLifetime = 3 * time.Second
)

// expiryChecks come last in the suite: they wait (live) or move the
// server's clock (in-process), which the other checks need not see.
func expiryChecks() []Check {
	return []Check{
		{"auth/access-token-expiry", checkAccessTokenExpiry},
		{"auth/refresh-token-expiry", checkRefreshTokenExpiry},
		{"auth/personal-access-token-expiry", checkPATExpiry},
	}
}

// timedSignIn signs in and also returns the suite-clock instants just before
// the request went out and just after the answer came: the server issued the
// tokens in between.
func (s *Suite) timedSignIn(ctx context.Context) (sess Session, sent, received time.Time, err error) {
	sent = s.cfg.Clock.Now()
	sess, err = s.SignIn(ctx)
	return sess, sent, s.cfg.Clock.Now(), err
}

// waitUntil waits until the suite clock reads t.
func (s *Suite) waitUntil(ctx context.Context, t time.Time) error {
	if d := t.Sub(s.cfg.Clock.Now()); d > 0 {
		return s.cfg.Clock.Sleep(ctx, d)
	}
	return nil
}

// tokenTimes reads the iat and exp claims of a JWT without verifying it.
func tokenTimes(token string) (iat, exp int64, err error) {
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		return 0, 0, errors.New("access token is not a JWT")
	}
	payload, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		return 0, 0, fmt.Errorf("access token payload: %w", err)
	}
	var claims struct {
		IAT int64 `json:"iat"`
		EXP int64 `json:"exp"`
	}
	if err := json.Unmarshal(payload, &claims); err != nil || claims.IAT == 0 || claims.EXP == 0 {
		return 0, 0, fmt.Errorf("access token claims lack iat or exp: %s", snippet(payload))
	}
	return claims.IAT, claims.EXP, nil
}

func (s *Suite) getUser(ctx context.Context, token string) (*Response, error) {
	return s.Do(ctx, Request{Method: http.MethodGet, Path: "/api/auth/v1/user", Header: authHeader(token)})
}

func (s *Suite) refreshGrant(ctx context.Context, refreshToken string) (*Response, error) {
	return s.Do(ctx, Request{Method: http.MethodPost, Path: "/api/auth/v1/token?grant_type=refresh_token",
		Body: jsonBody(map[string]string{"refresh_token": refreshToken}), ContentType: "application/json"})
}

// expectAccepted checks that token still authenticates GET /user.
func (s *Suite) expectAccepted(ctx context.Context, token, what string) error {
	resp, err := s.getUser(ctx, token)
	if err != nil {
		return err
	}
	if resp.Status != http.StatusOK {
		return fmt.Errorf("%s: GET /user %d %s, want 200", what, resp.Status, snippet(resp.Body))
	}
	return nil
}

// awaitRefusal asks GET /user with token every pollInterval until it is
// refused (the 401 response is returned) or the suite clock passes deadline
// (an error saying what). Answers other than 200 and 401 fail at once.
func (s *Suite) awaitRefusal(ctx context.Context, token string, deadline time.Time, what string) (*Response, error) {
	for {
		resp, err := s.getUser(ctx, token)
		if err != nil {
			return nil, err
		}
		switch {
		case resp.Status == http.StatusUnauthorized:
			return resp, nil
		case resp.Status != http.StatusOK:
			return nil, fmt.Errorf("waiting for %s to be refused: GET /user %d %s", what, resp.Status, snippet(resp.Body))
		case s.cfg.Clock.Now().After(deadline):
			return nil, fmt.Errorf("%s is still accepted", what)
		}
		if err := s.cfg.Clock.Sleep(ctx, pollInterval); err != nil {
			return nil, err
		}
	}
}

// checkAccessTokenExpiry: expires_in and expires_at agree with the token's
// claims; the token works until its exp, is refused with 401 TOKEN_EXPIRED
// (on data-platform calls too, before the tenant is looked at) within the
// leeway after it, and the refresh grant then yields a working token.
func checkAccessTokenExpiry(ctx context.Context, s *Suite) error {
	sess, sent, received, err := s.timedSignIn(ctx)
	if err != nil {
		return err
	}
	iat, exp, err := tokenTimes(sess.AccessToken)
	if err != nil {
		return err
	}
	if exp != sess.ExpiresAt || exp-iat != int64(sess.ExpiresIn) {
		return fmt.Errorf("expires_in %d and expires_at %d disagree with the token's iat %d and exp %d",
			sess.ExpiresIn, sess.ExpiresAt, iat, exp)
	}
	if err := s.expectAccepted(ctx, sess.AccessToken, "a fresh access token"); err != nil {
		return err
	}
	ttl, leeway := time.Duration(sess.ExpiresIn)*time.Second, s.cfg.TokenLeeway
	if ttl+leeway+expirySlack > s.cfg.MaxExpiryWait {
		return &Partial{Note: fmt.Sprintf("access-token expiry not observed: tokens live %s, which with the %s leeway is more than --max-expiry-wait %s",
			ttl, leeway, s.cfg.MaxExpiryWait)}
	}
	// exp is in whole seconds, so it may lie up to 1 s before sent+ttl:
	// probe 2 s before that.
	const margin = 2 * time.Second
	if ttl > 2*margin {
		if err := s.waitUntil(ctx, sent.Add(ttl-margin)); err != nil {
			return err
		}
		if err := s.expectAccepted(ctx, sess.AccessToken, fmt.Sprintf("an access token %s before its exp", margin)); err != nil {
			return err
		}
	}
	if err := s.waitUntil(ctx, sent.Add(ttl)); err != nil {
		return err
	}
	resp, err := s.awaitRefusal(ctx, sess.AccessToken, received.Add(ttl+leeway+expirySlack),
		fmt.Sprintf("an access token %s past its exp (leeway at most %s)", leeway+expirySlack, leeway))
	if err != nil {
		return err
	}
	if err := resp.ExpectError(http.StatusUnauthorized, "TOKEN_EXPIRED"); err != nil {
		return fmt.Errorf("expired access token: %w", err)
	}
	resp, err = s.Do(ctx, Request{Method: http.MethodGet, Path: "/api/data-platform/schema", Header: dataHeaders(sess)})
	if err != nil {
		return err
	}
	if err := resp.ExpectError(http.StatusUnauthorized, "TOKEN_EXPIRED"); err != nil {
		return fmt.Errorf("expired access token on GET /schema: %w", err)
	}
	if elapsed := s.cfg.Clock.Now().Sub(sent); elapsed+time.Second >= s.cfg.RefreshTokenTTL {
		return &Partial{Note: fmt.Sprintf("refresh after access-token expiry not observed: refresh tokens live %s, and the access token took %s to expire",
			s.cfg.RefreshTokenTTL, elapsed.Round(time.Second))}
	}
	resp, err = s.refreshGrant(ctx, sess.RefreshToken)
	if err != nil {
		return err
	}
	var next Session
	if resp.Status != http.StatusOK || json.Unmarshal(resp.Body, &next) != nil || next.AccessToken == "" {
		return fmt.Errorf("refresh grant after the access token expired: %d %s", resp.Status, snippet(resp.Body))
	}
	if next.ExpiresIn != sess.ExpiresIn {
		return fmt.Errorf("refreshed expires_in %d, want %d", next.ExpiresIn, sess.ExpiresIn)
	}
	return s.expectAccepted(ctx, next.AccessToken, "the access token of the refresh grant")
}

// checkRefreshTokenExpiry: a refresh token works until the end of its
// lifetime (which no response shows: Config.RefreshTokenTTL) and is refused
// from then on with 400 invalid_grant, error_code session_expired.
func checkRefreshTokenExpiry(ctx context.Context, s *Suite) error {
	ttl := s.cfg.RefreshTokenTTL
	if ttl+expirySlack > s.cfg.MaxExpiryWait {
		return &Partial{Note: fmt.Sprintf("refresh-token expiry not observed: refresh tokens live %s (--refresh-token-ttl), more than --max-expiry-wait %s",
			ttl, s.cfg.MaxExpiryWait)}
	}
	// Two sessions: one spends its token just before the end of its
	// lifetime, the other presents its unused token at the end.
	early, sent, _, err := s.timedSignIn(ctx)
	if err != nil {
		return err
	}
	late, _, received, err := s.timedSignIn(ctx)
	if err != nil {
		return err
	}
	margin := min(ttl/4, 2*time.Second)
	if err := s.waitUntil(ctx, sent.Add(ttl-margin)); err != nil {
		return err
	}
	resp, err := s.refreshGrant(ctx, early.RefreshToken)
	if err != nil {
		return err
	}
	if resp.Status != http.StatusOK {
		return fmt.Errorf("refresh grant %s before the refresh token's lifetime ends: %d %s", margin, resp.Status, snippet(resp.Body))
	}
	if err := s.waitUntil(ctx, received.Add(ttl)); err != nil {
		return err
	}
	resp, err = s.refreshGrant(ctx, late.RefreshToken)
	if err != nil {
		return err
	}
	if err := resp.ExpectError(http.StatusBadRequest, "invalid_grant"); err != nil {
		return fmt.Errorf("refresh token past its %s lifetime: %w", ttl, err)
	}
	if !bytes.Contains(resp.Body, []byte(`"error_code":"session_expired"`)) {
		return fmt.Errorf("refresh token past its lifetime: no error_code session_expired: %s", snippet(resp.Body))
	}
	return nil
}

// checkPATExpiry: an expiresAt in the past is 400 validation_error; a PAT
// expiring a few seconds from now works until then and is 401
// UNAUTHENTICATED after (a PAT cannot be refreshed, so not TOKEN_EXPIRED).
func checkPATExpiry(ctx context.Context, s *Suite) error {
	sess, _, received, err := s.timedSignIn(ctx)
	if err != nil {
		return err
	}
	iat, _, err := tokenTimes(sess.AccessToken)
	if err != nil {
		return err
	}
	// The server's clock as far as the suite can tell: iat is its time at
	// issue in whole seconds, so offset errs up to 1 s early, which leaves
	// the PAT at least patLifetime-1s to live and makes the suite's idea of
	// its expiry late rather than early.
	offset := time.Unix(iat, 0).Sub(received)
	h := authHeader(sess.AccessToken)
	create := func(name string, expiresAt time.Time) (*Response, error) {
		return s.Do(ctx, Request{Method: http.MethodPost, Path: "/api/auth/v1/personal-access-tokens", Header: h,
			Body: jsonBody(map[string]any{"name": name, "expiresAt": expiresAt.UTC().Format(time.RFC3339Nano)}), ContentType: "application/json"})
	}
	resp, err := create("conformance expired", time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC))
	if err != nil {
		return err
	}
	if err := resp.ExpectError(http.StatusBadRequest, "validation_error"); err != nil {
		return fmt.Errorf("PAT with a past expiresAt: %w", err)
	}
	if e, _ := resp.ErrorBody(); !strings.Contains(e.Message, "expiresAt") {
		return fmt.Errorf("PAT with a past expiresAt: message %q does not name expiresAt", e.Message)
	}
	if patLifetime+expirySlack > s.cfg.MaxExpiryWait {
		return &Partial{Note: fmt.Sprintf("personal-access-token expiry not observed: --max-expiry-wait %s is less than %s",
			s.cfg.MaxExpiryWait, patLifetime+expirySlack)}
	}
	expiresAt := s.cfg.Clock.Now().Add(offset + patLifetime).Truncate(time.Millisecond)
	resp, err = create("conformance expiring", expiresAt)
	if err != nil {
		return err
	}
	var pat struct {
		ID, Token string
		ExpiresAt *time.Time
	}
	if resp.Status != http.StatusCreated || json.Unmarshal(resp.Body, &pat) != nil || pat.Token == "" {
		return fmt.Errorf("create an expiring PAT: %d %s", resp.Status, snippet(resp.Body))
	}
	defer func() { // expired or not, leave nothing behind
		_, _ = s.Do(context.WithoutCancel(ctx), Request{Method: http.MethodDelete, Path: "/api/auth/v1/personal-access-tokens/" + pat.ID, Header: h})
	}()
	if pat.ExpiresAt == nil || pat.ExpiresAt.Sub(expiresAt).Abs() >= time.Second {
		return fmt.Errorf("created PAT expiresAt %v, want %s", pat.ExpiresAt, expiresAt.Format(time.RFC3339Nano))
	}
	if err := s.expectAccepted(ctx, pat.Token, "a PAT before its expiresAt"); err != nil {
		return err
	}
	localExpiry := expiresAt.Add(-offset)
	if err := s.waitUntil(ctx, localExpiry); err != nil {
		return err
	}
	resp, err = s.awaitRefusal(ctx, pat.Token, localExpiry.Add(expirySlack), fmt.Sprintf("a PAT %s past its expiresAt", expirySlack))
	if err != nil {
		return err
	}
	if err := resp.ExpectError(http.StatusUnauthorized, "UNAUTHENTICATED"); err != nil {
		return fmt.Errorf("expired PAT: %w", err)
	}
	return nil
}

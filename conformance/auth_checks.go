package conformance

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"
)

// Session is the token endpoint's answer, as far as the checks need it.
type Session struct {
	AccessToken  string `json:"access_token"`
	RefreshToken string `json:"refresh_token"`
	ExpiresIn    int    `json:"expires_in"`
	ExpiresAt    int64  `json:"expires_at"`
	TokenType    string `json:"token_type"`
	User         struct {
		ID          string `json:"id"`
		AppMetadata struct {
			TenantID string `json:"tenant_id"`
		} `json:"app_metadata"`
	} `json:"user"`
}

func jsonBody(v any) []byte {
	b, _ := json.Marshal(v)
	return b
}

// SignIn runs the password grant with the configured credentials.
func (s *Suite) SignIn(ctx context.Context) (Session, error) {
	var sess Session
	if s.cfg.Email == "" || s.cfg.Password == "" {
		return sess, errors.New("this check needs credentials: give -email and -password")
	}
	resp, err := s.Do(ctx, Request{Method: http.MethodPost, Path: "/api/auth/v1/token?grant_type=password",
		Body: jsonBody(map[string]string{"email": s.cfg.Email, "password": s.cfg.Password}), ContentType: "application/json"})
	if err != nil {
		return sess, err
	}
	if resp.Status != http.StatusOK {
		return sess, fmt.Errorf("password grant: %d %s", resp.Status, snippet(resp.Body))
	}
	if err := json.Unmarshal(resp.Body, &sess); err != nil {
		return sess, err
	}
	if sess.AccessToken == "" || sess.RefreshToken == "" || sess.ExpiresIn == 0 || sess.ExpiresAt == 0 || sess.TokenType != "bearer" ||
		sess.User.AppMetadata.TenantID == "" {
		return sess, fmt.Errorf("session lacks GoTrue fields: %s", snippet(resp.Body))
	}
	if want := int(s.cfg.AccessTokenTTL / time.Second); sess.ExpiresIn != want {
		return sess, fmt.Errorf("expires_in %d, want %d (the server's access-token lifetime, --access-token-ttl)", sess.ExpiresIn, want)
	}
	return sess, nil
}

func authHeader(token string) http.Header {
	return http.Header{"Authorization": {"Bearer " + token}}
}

func authChecks() []Check {
	return []Check{
		{"auth/password-grant", checkPasswordGrant},
		{"auth/invalid-credentials", checkInvalidCredentials},
		{"auth/unsupported-grant-type", checkUnsupportedGrant},
		{"auth/refresh-rotation", checkRefreshRotation},
		{"auth/unauthenticated", checkUnauthenticated},
		{"auth/tenant-mismatch", checkTenantMismatch},
		{"auth/user-and-jwks", checkUserAndJWKS},
		{"auth/personal-access-tokens", checkPersonalAccessTokens},
		{"auth/logout", checkLogout},
	}
}

func checkPasswordGrant(ctx context.Context, s *Suite) error {
	_, err := s.SignIn(ctx)
	return err
}

func checkInvalidCredentials(ctx context.Context, s *Suite) error {
	if s.cfg.Email == "" {
		return errors.New("this check needs credentials: give -email and -password")
	}
	var bodies []string
	for _, email := range []string{s.cfg.Email, "no-such-user-conformance@example.com"} {
		resp, err := s.Do(ctx, Request{Method: http.MethodPost, Path: "/api/auth/v1/token?grant_type=password",
			Body: jsonBody(map[string]string{"email": email, "password": "wrong-" + s.cfg.Password}), ContentType: "application/json"})
		if err != nil {
			return err
		}
		if err := resp.ExpectError(http.StatusBadRequest, "invalid_grant"); err != nil {
			return err
		}
		if !bytes.Contains(resp.Body, []byte(`"error_code":"invalid_credentials"`)) {
			return fmt.Errorf("no error_code invalid_credentials: %s", snippet(resp.Body))
		}
		bodies = append(bodies, string(resp.Body))
	}
	if bodies[0] != bodies[1] {
		return fmt.Errorf("wrong password and unknown email answer differently:\n%s\n%s", bodies[0], bodies[1])
	}
	return nil
}

func checkUnsupportedGrant(ctx context.Context, s *Suite) error {
	resp, err := s.Do(ctx, Request{Method: http.MethodPost, Path: "/api/auth/v1/token?grant_type=implicit",
		Body: []byte(`{}`), ContentType: "application/json"})
	if err != nil {
		return err
	}
	return resp.ExpectError(http.StatusBadRequest, "unsupported_grant_type")
}

func checkRefreshRotation(ctx context.Context, s *Suite) error {
	sess, err := s.SignIn(ctx)
	if err != nil {
		return err
	}
	refresh := func(token string) (*Response, error) {
		return s.Do(ctx, Request{Method: http.MethodPost, Path: "/api/auth/v1/token?grant_type=refresh_token",
			Body: jsonBody(map[string]string{"refresh_token": token}), ContentType: "application/json"})
	}
	resp, err := refresh(sess.RefreshToken)
	if err != nil {
		return err
	}
	var next Session
	if resp.Status != http.StatusOK || json.Unmarshal(resp.Body, &next) != nil || next.RefreshToken == "" || next.RefreshToken == sess.RefreshToken {
		return fmt.Errorf("refresh did not rotate: %d %s", resp.Status, snippet(resp.Body))
	}
	// Within the 10 s grace the spent token yields the same successor.
	resp, err = refresh(sess.RefreshToken)
	if err != nil {
		return err
	}
	var again Session
	if resp.Status != http.StatusOK || json.Unmarshal(resp.Body, &again) != nil || again.RefreshToken != next.RefreshToken {
		return fmt.Errorf("re-use within the grace period: %d %s", resp.Status, snippet(resp.Body))
	}
	resp, err = refresh("conformance-never-issued")
	if err != nil {
		return err
	}
	return resp.ExpectError(http.StatusBadRequest, "invalid_grant")
}

func checkUnauthenticated(ctx context.Context, s *Suite) error {
	for _, h := range []http.Header{nil, authHeader("not-a-token"), authHeader("eyJhbGciOiJub25lIn0.eyJzdWIiOiJ4In0.")} {
		resp, err := s.Do(ctx, Request{Method: http.MethodGet, Path: "/api/auth/v1/user", Header: h})
		if err != nil {
			return err
		}
		if err := resp.ExpectError(http.StatusUnauthorized, "UNAUTHENTICATED"); err != nil {
			return err
		}
	}
	return nil
}

func checkTenantMismatch(ctx context.Context, s *Suite) error {
	sess, err := s.SignIn(ctx)
	if err != nil {
		return err
	}
	for _, tenant := range []string{"", "not-a-uuid", "00000000-0000-4000-8000-000000000000"} {
		h := authHeader(sess.AccessToken)
		if tenant != "" {
			h.Set("X-Tenant-Id", tenant)
		}
		resp, err := s.Do(ctx, Request{Method: http.MethodGet, Path: "/api/data-platform/schema", Header: h})
		if err != nil {
			return err
		}
		if err := resp.ExpectError(http.StatusForbidden, "forbidden"); err != nil {
			return fmt.Errorf("X-Tenant-Id %q: %w", tenant, err)
		}
	}
	return nil
}

func checkUserAndJWKS(ctx context.Context, s *Suite) error {
	sess, err := s.SignIn(ctx)
	if err != nil {
		return err
	}
	resp, err := s.Do(ctx, Request{Method: http.MethodGet, Path: "/api/auth/v1/user", Header: authHeader(sess.AccessToken)})
	if err != nil {
		return err
	}
	if resp.Status != http.StatusOK || !strings.Contains(string(resp.Body), sess.User.ID) {
		return fmt.Errorf("GET /user: %d %s", resp.Status, snippet(resp.Body))
	}
	resp, err = s.Do(ctx, Request{Method: http.MethodGet, Path: "/api/auth/v1/.well-known/jwks.json"})
	if err != nil {
		return err
	}
	var set struct {
		Keys []map[string]any `json:"keys"`
	}
	if resp.Status != http.StatusOK || json.Unmarshal(resp.Body, &set) != nil || len(set.Keys) == 0 {
		return fmt.Errorf("JWKS: %d %s", resp.Status, snippet(resp.Body))
	}
	for _, k := range set.Keys {
		if k["d"] != nil || k["k"] != nil {
			return errors.New("JWKS publishes private or secret key material")
		}
	}
	return nil
}

func checkPersonalAccessTokens(ctx context.Context, s *Suite) error {
	sess, err := s.SignIn(ctx)
	if err != nil {
		return err
	}
	resp, err := s.Do(ctx, Request{Method: http.MethodPost, Path: "/api/auth/v1/personal-access-tokens",
		Header: authHeader(sess.AccessToken), Body: []byte(`{"name":"conformance"}`), ContentType: "application/json"})
	if err != nil {
		return err
	}
	var pat struct{ ID, Token string }
	if resp.Status != http.StatusCreated || json.Unmarshal(resp.Body, &pat) != nil || !strings.HasPrefix(pat.Token, "strata_pat_") {
		return fmt.Errorf("create PAT: %d %s", resp.Status, snippet(resp.Body))
	}
	resp, err = s.Do(ctx, Request{Method: http.MethodGet, Path: "/api/auth/v1/user", Header: authHeader(pat.Token)})
	if err != nil {
		return err
	}
	if resp.Status != http.StatusOK {
		return fmt.Errorf("GET /user with the PAT: %d", resp.Status)
	}
	resp, err = s.Do(ctx, Request{Method: http.MethodGet, Path: "/api/auth/v1/personal-access-tokens", Header: authHeader(sess.AccessToken)})
	if err != nil {
		return err
	}
	if resp.Status != http.StatusOK || strings.Contains(string(resp.Body), pat.Token) || !strings.Contains(string(resp.Body), pat.ID) {
		return fmt.Errorf("list PATs: %d (the secret must not be listed)", resp.Status)
	}
	resp, err = s.Do(ctx, Request{Method: http.MethodDelete, Path: "/api/auth/v1/personal-access-tokens/" + pat.ID, Header: authHeader(sess.AccessToken)})
	if err != nil {
		return err
	}
	if resp.Status != http.StatusNoContent {
		return fmt.Errorf("revoke PAT: %d", resp.Status)
	}
	resp, err = s.Do(ctx, Request{Method: http.MethodGet, Path: "/api/auth/v1/user", Header: authHeader(pat.Token)})
	if err != nil {
		return err
	}
	return resp.ExpectError(http.StatusUnauthorized, "UNAUTHENTICATED")
}

func checkLogout(ctx context.Context, s *Suite) error {
	sess, err := s.SignIn(ctx)
	if err != nil {
		return err
	}
	resp, err := s.Do(ctx, Request{Method: http.MethodPost, Path: "/api/auth/v1/logout", Header: authHeader(sess.AccessToken)})
	if err != nil {
		return err
	}
	if resp.Status != http.StatusNoContent {
		return fmt.Errorf("logout: %d %s", resp.Status, snippet(resp.Body))
	}
	resp, err = s.Do(ctx, Request{Method: http.MethodPost, Path: "/api/auth/v1/token?grant_type=refresh_token",
		Body: jsonBody(map[string]string{"refresh_token": sess.RefreshToken}), ContentType: "application/json"})
	if err != nil {
		return err
	}
	return resp.ExpectError(http.StatusBadRequest, "invalid_grant")
}

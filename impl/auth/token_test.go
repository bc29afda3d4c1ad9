package auth_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lestrrat-go/jwx/v3/jwa"
	"github.com/lestrrat-go/jwx/v3/jwk"
	"github.com/lestrrat-go/jwx/v3/jws"
	"github.com/lestrrat-go/jwx/v3/jwt"

	"github.com/stratahq/strata/impl/principal"
	"github.com/stratahq/strata/impl/server"
)

func TestPasswordGrantIssuesAGoTrueSession(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	u, tn := e.User("Ada@Example.com", "correct horse", principal.TierPro)

	// Email is case-insensitive.
	s := e.SignIn("ada@example.COM", "correct horse")
	if s.TokenType != "bearer" || s.ExpiresIn != 3600 || s.ExpiresAt != e.Clock.Now().Add(time.Hour).Unix() ||
		s.RefreshToken == "" || s.AccessToken == "" {
		t.Fatalf("session %+v", s)
	}
	if s.User.ID != u.ID.String() || s.User.Aud != "authenticated" || s.User.Role != "authenticated" ||
		s.User.AppMetadata.TenantID != tn.ID.String() || s.User.AppMetadata.Tier != "pro" || s.User.AppMetadata.Provider != "email" {
		t.Fatalf("user %+v", s.User)
	}
	parts := strings.Split(s.AccessToken, ".")
	if len(parts) != 3 {
		t.Fatalf("access token has %d parts", len(parts))
	}
	header := decodeSegment(t, parts[0])
	if header["alg"] != "ES256" || header["typ"] != "JWT" || header["kid"] == "" {
		t.Fatalf("header %v", header)
	}
	claims := decodeSegment(t, parts[1])
	want := map[string]any{
		"iss": e.App.Config().Issuer(), "sub": u.ID.String(), "aud": "authenticated", "role": "authenticated",
		"aal": "aal1", "email": "Ada@Example.com", "tenant_id": tn.ID.String(), "is_anonymous": false,
		"iat": float64(e.Clock.Now().Unix()), "exp": float64(e.Clock.Now().Add(time.Hour).Unix()),
	}
	for k, v := range want {
		if claims[k] != v {
			t.Errorf("claim %s = %v, want %v", k, claims[k], v)
		}
	}
	for _, k := range []string{"session_id", "amr", "app_metadata", "user_metadata"} {
		if claims[k] == nil {
			t.Errorf("claim %s missing", k)
		}
	}
	// The token works on an authenticated endpoint.
	r := e.Call("GET", "/api/auth/v1/user", "", bearer(s.AccessToken)...)
	if r.Status != 200 || r.JSON(t)["id"] != u.ID.String() {
		t.Fatalf("GET /user: %d %s", r.Status, r.Body)
	}
}

func TestWrongPasswordAndUnknownEmailAnswerIdentically(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	e.User("known@example.com", "correct horse", principal.TierFree)
	wrong := e.Password("known@example.com", "battery staple")
	unknown := e.Password("nobody@example.com", "battery staple")
	expectOAuth(t, wrong, "invalid_grant", "invalid_credentials")
	if string(wrong.Body) != string(unknown.Body) || wrong.Status != unknown.Status {
		t.Fatalf("responses differ:\n%s\n%s", wrong.Body, unknown.Body)
	}
}

func TestTokenEndpointErrors(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	r := e.Call("POST", "/api/auth/v1/token?grant_type=client_credentials", `{}`)
	expectOAuth(t, r, "unsupported_grant_type", "validation_failed")
	r = e.Call("POST", "/api/auth/v1/token?grant_type=password", `{"email":"a@example.com"}`)
	expectOAuth(t, r, "invalid_request", "validation_failed")
	r = e.Call("POST", "/api/auth/v1/token?grant_type=refresh_token", `{}`)
	expectOAuth(t, r, "invalid_request", "validation_failed")
	expectOAuth(t, e.Refresh("never-issued"), "invalid_grant", "refresh_token_not_found")
}

func TestRefreshRotationReuseGraceAndReuseDetection(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	e.User("rot@example.com", "correct horse", principal.TierFree)
	first := e.SignIn("rot@example.com", "correct horse")

	r := e.Refresh(first.RefreshToken)
	if r.Status != 200 {
		t.Fatalf("refresh: %d %s", r.Status, r.Body)
	}
	var second session
	_ = json.Unmarshal(r.Body, &second)
	if second.RefreshToken == "" || second.RefreshToken == first.RefreshToken || second.AccessToken == "" {
		t.Fatalf("refresh did not rotate: %+v", second)
	}
	// Same shape as the password grant.
	if second.User.ID != first.User.ID || second.ExpiresIn != 3600 || second.TokenType != "bearer" {
		t.Fatalf("refresh response %+v", second)
	}

	// Re-use within 10 s: the same successor (a second tab agrees).
	e.Clock.Advance(9 * time.Second)
	r = e.Refresh(first.RefreshToken)
	var again session
	_ = json.Unmarshal(r.Body, &again)
	if r.Status != 200 || again.RefreshToken != second.RefreshToken {
		t.Fatalf("re-use within grace: %d, token %q want %q", r.Status, again.RefreshToken, second.RefreshToken)
	}

	// Re-use after the grace period: the whole session is revoked.
	e.Clock.Advance(2 * time.Second)
	expectOAuth(t, e.Refresh(first.RefreshToken), "invalid_grant", "refresh_token_already_used")
	expectOAuth(t, e.Refresh(second.RefreshToken), "invalid_grant", "session_expired")
	// The access tokens stay valid until they expire (stateless JWTs),
	// except for GET /user, which checks the session as GoTrue's does.
	if r := e.Call("GET", "/api/content", "", bearer(second.AccessToken)...); r.Status != 200 {
		t.Fatalf("access token after revocation: %d", r.Status)
	}
	expectError(t, e.Call("GET", "/api/auth/v1/user", "", bearer(second.AccessToken)...), 401, "UNAUTHENTICATED")
}

func TestRefreshTokenExpiresAfter30Days(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	e.User("old@example.com", "correct horse", principal.TierFree)
	s := e.SignIn("old@example.com", "correct horse")
	e.Clock.Advance(30*24*time.Hour + time.Second)
	expectOAuth(t, e.Refresh(s.RefreshToken), "invalid_grant", "session_expired")
}

func TestConcurrentRefreshesShareOneSuccessor(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	e.User("tabs@example.com", "correct horse", principal.TierFree)
	s := e.SignIn("tabs@example.com", "correct horse")

	const tabs = 8
	tokens := make([]string, tabs)
	var wg sync.WaitGroup
	for i := range tabs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := e.Refresh(s.RefreshToken)
			var got session
			if r.Status == 200 && json.Unmarshal(r.Body, &got) == nil {
				tokens[i] = got.RefreshToken
			}
		}()
	}
	wg.Wait()
	for i, tok := range tokens {
		if tok == "" || tok != tokens[0] {
			t.Fatalf("tab %d got %q, tab 0 got %q: divergent families", i, tok, tokens[0])
		}
	}
	// And the one family continues.
	if r := e.Refresh(tokens[0]); r.Status != 200 {
		t.Fatalf("refresh of the shared successor: %d %s", r.Status, r.Body)
	}
}

func TestLogoutRevokesRefreshTokens(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	e.User("out@example.com", "correct horse", principal.TierFree)
	a := e.SignIn("out@example.com", "correct horse")
	b := e.SignIn("out@example.com", "correct horse")

	if r := e.Call("POST", "/api/auth/v1/logout", "", bearer(a.AccessToken)...); r.Status != 204 {
		t.Fatalf("logout: %d %s", r.Status, r.Body)
	}
	expectOAuth(t, e.Refresh(a.RefreshToken), "invalid_grant", "session_expired")
	if r := e.Refresh(b.RefreshToken); r.Status != 200 {
		t.Fatalf("local logout revoked another session: %d", r.Status)
	}
	// GET /user checks the session, as GoTrue's does; other requests take
	// the access token on trust until it expires.
	expectError(t, e.Call("GET", "/api/auth/v1/user", "", bearer(a.AccessToken)...), 401, "UNAUTHENTICATED")
	if r := e.Call("GET", "/api/auth/v1/user", "", bearer(b.AccessToken)...); r.Status != 200 {
		t.Fatalf("GET /user with the other session: %d %s", r.Status, r.Body)
	}
	c := e.SignIn("out@example.com", "correct horse")
	if r := e.Call("POST", "/api/auth/v1/logout?scope=global", "", bearer(c.AccessToken)...); r.Status != 204 {
		t.Fatalf("global logout: %d", r.Status)
	}
	expectOAuth(t, e.Refresh(c.RefreshToken), "invalid_grant", "session_expired")
	if r := e.Call("POST", "/api/auth/v1/logout?scope=everything", "", bearer(c.AccessToken)...); r.Status != 400 {
		t.Fatalf("bad scope: %d", r.Status)
	}
	expectError(t, e.Call("POST", "/api/auth/v1/logout", ""), 401, "UNAUTHENTICATED")
}

func TestSignup(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	r := e.Call("POST", "/api/auth/v1/signup", `{"email":"new@example.com","password":"correct horse","data":{"name":"Nova"}}`)
	if r.Status != 200 {
		t.Fatalf("signup: %d %s", r.Status, r.Body)
	}
	var s session
	_ = json.Unmarshal(r.Body, &s)
	if s.AccessToken == "" || s.User.AppMetadata.Tier != "free" || s.User.AppMetadata.TenantID == "" {
		t.Fatalf("signup session %+v", s)
	}
	// A tenant of its own.
	other := e.Call("POST", "/api/auth/v1/signup", `{"email":"other@example.com","password":"correct horse"}`)
	var s2 session
	_ = json.Unmarshal(other.Body, &s2)
	if s2.User.AppMetadata.TenantID == s.User.AppMetadata.TenantID {
		t.Fatal("two signups share a tenant")
	}
	expectError(t, e.Call("POST", "/api/auth/v1/signup", `{"email":"NEW@example.com","password":"correct horse"}`), 422, "user_already_exists")
	expectError(t, e.Call("POST", "/api/auth/v1/signup", `{"email":"short@example.com","password":"abc"}`), 400, "validation_error")
	expectError(t, e.Call("POST", "/api/auth/v1/signup", `{"email":"not-an-email","password":"correct horse"}`), 400, "validation_error")
	if r := e.Call("GET", "/api/auth/v1/user", "", bearer(s.AccessToken)...); r.Status != 200 || r.JSON(t)["user_metadata"].(map[string]any)["name"] != "Nova" {
		t.Fatalf("user after signup: %d %s", r.Status, r.Body)
	}

	// At most 20 sign-ups per client IP per hour.
	for i := 2; i < 20; i++ {
		if r := e.Call("POST", "/api/auth/v1/signup", fmt.Sprintf(`{"email":"bulk%d@example.com","password":"correct horse"}`, i)); r.Status != 200 {
			t.Fatalf("signup %d: %d %s", i+1, r.Status, r.Body)
		}
	}
	expectError(t, e.Call("POST", "/api/auth/v1/signup", `{"email":"one-too-many@example.com","password":"correct horse"}`), 429, "RATE_LIMITED")
	e.Clock.Advance(time.Hour + time.Second)
	if r := e.Call("POST", "/api/auth/v1/signup", `{"email":"next-hour@example.com","password":"correct horse"}`); r.Status != 200 {
		t.Fatalf("signup after the window: %d %s", r.Status, r.Body)
	}

	off := newEnv(t, func(c *server.Config) { c.DisableSignup = true })
	expectError(t, off.Call("POST", "/api/auth/v1/signup", `{"email":"x@example.com","password":"correct horse"}`), 403, "FORBIDDEN")
}

// forge signs claims with key under alg and kid.
func forge(t *testing.T, alg jwa.SignatureAlgorithm, key any, kid string, claims map[string]any) string {
	t.Helper()
	b := jwt.NewBuilder()
	for k, v := range claims {
		b = b.Claim(k, v)
	}
	tok, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	h := jws.NewHeaders()
	if kid != "" {
		_ = h.Set(jws.KeyIDKey, kid)
	}
	signed, err := jwt.Sign(tok, jwt.WithKey(alg, key, jws.WithProtectedHeaders(h)))
	if err != nil {
		t.Fatal(err)
	}
	return string(signed)
}

// serverKey returns the server's current signing key, read from its store.
func serverKey(t *testing.T, e *env) (*ecdsa.PrivateKey, string) {
	t.Helper()
	keys, err := e.App.Store().SigningKeys(context.Background(), e.Clock.Now())
	if err != nil || len(keys) == 0 {
		t.Fatalf("signing keys: %v", err)
	}
	k, err := x509.ParsePKCS8PrivateKey(keys[0].PrivateKey)
	if err != nil {
		t.Fatal(err)
	}
	return k.(*ecdsa.PrivateKey), keys[0].KID
}

func validClaims(e *env, userID, tenantID string) map[string]any {
	now := e.Clock.Now()
	return map[string]any{"iss": e.App.Config().Issuer(), "sub": userID, "aud": "authenticated",
		"tenant_id": tenantID, "iat": now.Unix(), "exp": now.Add(time.Hour).Unix()}
}

func TestVerificationRefusesForgedAndBrokenTokens(t *testing.T) {
	t.Parallel()
	const secret = "an-hs256-secret-of-at-least-32-characters"
	e := newEnv(t, nil)
	u, tn := e.User("v@example.com", "correct horse", principal.TierFree)
	s := e.SignIn("v@example.com", "correct horse")
	key, kid := serverKey(t, e)
	claims := validClaims(e, u.ID.String(), tn.ID.String())
	parts := strings.Split(s.AccessToken, ".")

	jwksResp := e.Call("GET", "/api/auth/v1/.well-known/jwks.json", "")
	set, err := jwk.Parse(jwksResp.Body)
	if err != nil {
		t.Fatal(err)
	}
	pubJWK, _ := set.LookupKeyID(kid)
	pubJSON, _ := json.Marshal(pubJWK)
	pubDER, _ := x509.MarshalPKIXPublicKey(&key.PublicKey)

	with := func(k string, v any) map[string]any {
		c := map[string]any{}
		for kk, vv := range claims {
			c[kk] = vv
		}
		if v == nil {
			delete(c, k)
		} else {
			c[k] = v
		}
		return c
	}
	seg := func(v any) string { raw, _ := json.Marshal(v); return base64.RawURLEncoding.EncodeToString(raw) }
	otherKey, _ := ecdsaKey()

	cases := map[string]string{
		"alg none":                        seg(map[string]any{"alg": "none", "kid": kid, "typ": "JWT"}) + "." + seg(claims) + ".",
		"HS256 with the public JWK":       forge(t, jwa.HS256(), pubJSON, kid, claims),
		"HS256 with the public key DER":   forge(t, jwa.HS256(), pubDER, kid, claims),
		"HS256 without configured secret": forge(t, jwa.HS256(), []byte(secret), "", claims),
		"stripped signature":              parts[0] + "." + parts[1] + ".",
		"tampered payload":                parts[0] + "." + seg(with("tenant_id", "00000000-0000-4000-8000-000000000000")) + "." + parts[2],
		"wrong audience":                  forge(t, jwa.ES256(), key, kid, with("aud", "service_role")),
		"wrong issuer":                    forge(t, jwa.ES256(), key, kid, with("iss", "https://evil.example.com/auth/v1")),
		"unknown kid":                     forge(t, jwa.ES256(), key, "no-such-kid", claims),
		"signed by another key":           forge(t, jwa.ES256(), otherKey, kid, claims),
		"no exp":                          forge(t, jwa.ES256(), key, kid, with("exp", nil)),
		"unknown tenant":                  forge(t, jwa.ES256(), key, kid, with("tenant_id", "00000000-0000-4000-8000-000000000000")),
		"not before in the future":        forge(t, jwa.ES256(), key, kid, with("nbf", e.Clock.Now().Add(10*time.Minute).Unix())),
		"garbage":                         "not.a.jwt",
		"empty segments":                  "..",
	}
	for name, token := range cases {
		r := e.Call("GET", "/api/auth/v1/user", "", bearer(token)...)
		if r.Status != 401 || r.JSON(t)["error"] != "UNAUTHENTICATED" {
			t.Errorf("%s: %d %s, want 401 UNAUTHENTICATED", name, r.Status, r.Body)
		}
	}
	// The control: a token forged with the real key and valid claims passes,
	// so the refusals above are about what each case changed.
	if r := e.Call("GET", "/api/auth/v1/user", "", bearer(forge(t, jwa.ES256(), key, kid, claims))...); r.Status != 200 {
		t.Fatalf("control token refused: %d %s", r.Status, r.Body)
	}
	for _, h := range []string{"", "Bearer", "Basic dXNlcjpwYXNz", "Bearer " + strings.Repeat("a", 9000)} {
		r := e.Call("GET", "/api/auth/v1/user", "", "Authorization", h)
		expectError(t, r, 401, "UNAUTHENTICATED")
	}
}

func ecdsaKey() (*ecdsa.PrivateKey, error) {
	raw, err := jwk.ParseKey([]byte(`{"kty":"EC","crv":"P-256","x":"f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU","y":"x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0","d":"jpsQnnGQmL-YBIffH1136cspYG6-0iY7X1fCE9-E9LI"}`))
	if err != nil {
		return nil, err
	}
	var k ecdsa.PrivateKey
	return &k, jwk.Export(raw, &k)
}

func TestExpiryAndLeeway(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	e.User("exp@example.com", "correct horse", principal.TierFree)
	s := e.SignIn("exp@example.com", "correct horse")
	e.Clock.Advance(time.Hour + 20*time.Second) // within the 30 s leeway
	if r := e.Call("GET", "/api/auth/v1/user", "", bearer(s.AccessToken)...); r.Status != 200 {
		t.Fatalf("within leeway: %d %s", r.Status, r.Body)
	}
	e.Clock.Advance(11 * time.Second)
	expectError(t, e.Call("GET", "/api/auth/v1/user", "", bearer(s.AccessToken)...), 401, "TOKEN_EXPIRED")
	// A forged expired token is UNAUTHENTICATED, not TOKEN_EXPIRED: only a
	// valid signature earns the "refresh it" hint.
	parts := strings.Split(s.AccessToken, ".")
	expectError(t, e.Call("GET", "/api/auth/v1/user", "", bearer(parts[0]+"."+parts[1]+".AAAA")...), 401, "UNAUTHENTICATED")
}

func TestHS256AcceptedOnlyWithTheConfiguredSecret(t *testing.T) {
	t.Parallel()
	const secret = "an-hs256-secret-of-at-least-32-characters"
	e := newEnv(t, func(c *server.Config) { c.JWTSecret = secret })
	u, tn := e.User("hs@example.com", "correct horse", principal.TierFree)
	claims := validClaims(e, u.ID.String(), tn.ID.String())
	if r := e.Call("GET", "/api/auth/v1/user", "", bearer(forge(t, jwa.HS256(), []byte(secret), "", claims))...); r.Status != 200 {
		t.Fatalf("HS256 with the secret: %d %s", r.Status, r.Body)
	}
	r := e.Call("GET", "/api/auth/v1/user", "", bearer(forge(t, jwa.HS256(), []byte(secret+"x"), "", claims))...)
	expectError(t, r, 401, "UNAUTHENTICATED")
	// The secret is never published.
	if jwks := e.Call("GET", "/api/auth/v1/.well-known/jwks.json", ""); strings.Contains(string(jwks.Body), `"oct"`) ||
		strings.Contains(string(jwks.Body), base64.RawURLEncoding.EncodeToString([]byte(secret))) {
		t.Fatalf("JWKS leaks the HMAC secret: %s", jwks.Body)
	}
}

func TestJWKSHasPublicKeysOnly(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	r := e.Call("GET", "/api/auth/v1/.well-known/jwks.json", "")
	if r.Status != 200 {
		t.Fatalf("jwks: %d", r.Status)
	}
	var set struct {
		Keys []map[string]any `json:"keys"`
	}
	_ = json.Unmarshal(r.Body, &set)
	if len(set.Keys) != 1 {
		t.Fatalf("keys: %v", set.Keys)
	}
	k := set.Keys[0]
	if k["kty"] != "EC" || k["alg"] != "ES256" || k["use"] != "sig" || k["kid"] == "" || k["d"] != nil {
		t.Fatalf("key %v", k)
	}
}

func TestKeyRotationKeepsOldTokensValidUntilExpiry(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	e.User("keys@example.com", "correct horse", principal.TierFree)
	before := e.SignIn("keys@example.com", "correct horse")
	oldKID := decodeSegment(t, strings.Split(before.AccessToken, ".")[0])["kid"]

	ctx := context.Background()
	newKID, err := e.App.Auth().RotateKeys(ctx, e.Clock.Now(), time.Hour+time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	after := e.SignIn("keys@example.com", "correct horse")
	if got := decodeSegment(t, strings.Split(after.AccessToken, ".")[0])["kid"]; got != newKID {
		t.Fatalf("new token kid %v, want %s", got, newKID)
	}
	jwks := string(e.Call("GET", "/api/auth/v1/.well-known/jwks.json", "").Body)
	if !strings.Contains(jwks, newKID) || !strings.Contains(jwks, oldKID.(string)) {
		t.Fatalf("JWKS after rotation lacks a key: %s", jwks)
	}
	e.Clock.Advance(50 * time.Minute)
	for name, tok := range map[string]string{"old": before.AccessToken, "new": after.AccessToken} {
		if r := e.Call("GET", "/api/auth/v1/user", "", bearer(tok)...); r.Status != 200 {
			t.Fatalf("%s token after rotation: %d %s", name, r.Status, r.Body)
		}
	}
	e.Clock.Advance(15 * time.Minute) // past the old key's retention
	if jwks := string(e.Call("GET", "/api/auth/v1/.well-known/jwks.json", "").Body); strings.Contains(jwks, oldKID.(string)) {
		t.Fatalf("retired key still published: %s", jwks)
	}
}

// jwksServer is an external identity provider's JWKS endpoint (an RS256 key
// published as RFC 7517 JSON); it counts fetches.
func jwksServer(t *testing.T, keys ...jwk.Key) (*httptest.Server, *atomic.Int32) {
	t.Helper()
	var fetches atomic.Int32
	set := jwk.NewSet()
	for _, k := range keys {
		_ = set.AddKey(k)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		fetches.Add(1)
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(set)
	}))
	t.Cleanup(srv.Close)
	return srv, &fetches
}

func TestExternalJWKS(t *testing.T) {
	t.Parallel()
	rsaKey, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	pub, _ := jwk.Import(rsaKey.Public())
	_ = pub.Set(jwk.KeyIDKey, "idp-1")
	_ = pub.Set(jwk.AlgorithmKey, jwa.RS256())
	idp, fetches := jwksServer(t, pub)
	const idpIssuer = "https://idp.example.com"
	e := newEnv(t, func(c *server.Config) {
		c.JWKSURL = idp.URL
		c.JWTIssuers = []string{idpIssuer}
	})
	u, tn := e.User("ext@example.com", "correct horse", principal.TierFree)
	claims := validClaims(e, u.ID.String(), tn.ID.String())
	claims["iss"] = idpIssuer
	delete(claims, "tenant_id")
	claims["app_metadata"] = map[string]any{"tenant_id": tn.ID.String()}

	// The first lookup may find the cache still empty (the IdP is fetched in
	// the background); poll with a deadline.
	good := forge(t, jwa.RS256(), rsaKey, "idp-1", claims)
	deadline := time.Now().Add(10 * time.Second)
	for {
		r := e.Call("GET", "/api/auth/v1/user", "", bearer(good)...)
		if r.Status == 200 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("external RS256 token: %d %s", r.Status, r.Body)
		}
		e.Clock.Advance(11 * time.Second) // lets the unknown-kid refetch run again
		time.Sleep(20 * time.Millisecond) // polling interval
	}
	// Our issuer is not accepted on the IdP's keys, nor the IdP's on ours.
	claims["iss"] = e.App.Config().Issuer()
	expectError(t, e.Call("GET", "/api/auth/v1/user", "", bearer(forge(t, jwa.RS256(), rsaKey, "idp-1", claims))...), 401, "UNAUTHENTICATED")
	claims["iss"] = idpIssuer
	// RS256 key used as HS256 secret: refused.
	pubDER, _ := x509.MarshalPKIXPublicKey(&rsaKey.PublicKey)
	expectError(t, e.Call("GET", "/api/auth/v1/user", "", bearer(forge(t, jwa.HS256(), pubDER, "idp-1", claims))...), 401, "UNAUTHENTICATED")

	// Unknown kids trigger at most one refetch per interval.
	before := fetches.Load()
	for i := range 20 {
		tok := forge(t, jwa.RS256(), rsaKey, fmt.Sprintf("made-up-%d", i), claims)
		expectError(t, e.Call("GET", "/api/auth/v1/user", "", bearer(tok)...), 401, "UNAUTHENTICATED")
	}
	if got := fetches.Load() - before; got > 1 {
		t.Fatalf("20 unknown kids caused %d refetches, want at most 1", got)
	}
}

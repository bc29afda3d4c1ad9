package auth

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/lestrrat-go/jwx/v3/jwa"
	"github.com/lestrrat-go/jwx/v3/jws"
	"github.com/lestrrat-go/jwx/v3/jwt"

	"github.com/stratahq/strata/impl/principal"
	"github.com/stratahq/strata/impl/store"
)

// Audience is the "aud" of every access token (GoTrue's value).
const Audience = "authenticated"

// maxLeeway caps the clock skew tolerated when validating exp/iat/nbf.
const maxLeeway = 30 * time.Second

// accessClaims are the claims of an access token this service issues.
type accessClaims struct {
	User      store.User
	Tenant    store.Tenant
	SessionID uuid.UUID
	IssuedAt  time.Time
	ExpiresAt time.Time
}

// mintAccessToken signs an access token with the newest key (header kid, typ JWT).
func (s *Service) mintAccessToken(ctx context.Context, c accessClaims) (string, error) {
	key, err := s.keys.signer(ctx)
	if err != nil {
		return "", err
	}
	appMeta := map[string]any{"provider": "email", "providers": []string{"email"},
		"tenant_id": c.Tenant.ID.String(), "tier": c.Tenant.Tier}
	userMeta := c.User.UserMetadata
	if userMeta == nil {
		userMeta = map[string]any{}
	}
	tok, err := jwt.NewBuilder().
		Issuer(s.cfg.Issuer).
		Subject(c.User.ID.String()).
		Audience([]string{Audience}).
		IssuedAt(c.IssuedAt).
		Expiration(c.ExpiresAt).
		Claim("role", "authenticated").
		Claim("aal", "aal1").
		Claim("amr", []map[string]any{{"method": "password", "timestamp": c.IssuedAt.Unix()}}).
		Claim("email", c.User.Email).
		Claim("phone", "").
		Claim("session_id", c.SessionID.String()).
		Claim("tenant_id", c.Tenant.ID.String()).
		Claim("app_metadata", appMeta).
		Claim("user_metadata", userMeta).
		Claim("is_anonymous", false).
		Build()
	if err != nil {
		return "", fmt.Errorf("build access token: %w", err)
	}
	// GoTrue sends "aud" as a string; some consumers compare it as one.
	tok.Options().Enable(jwt.FlattenAudience)
	headers := jws.NewHeaders()
	if err := headers.Set(jws.KeyIDKey, key.kid); err != nil {
		return "", err
	}
	if err := headers.Set(jws.TypeKey, "JWT"); err != nil {
		return "", err
	}
	signed, err := jwt.Sign(tok, jwt.WithKey(key.alg, key.private, jws.WithProtectedHeaders(headers)))
	if err != nil {
		return "", fmt.Errorf("sign access token: %w", err)
	}
	return string(signed), nil
}

// Failure reasons of Verify; the middleware maps ErrTokenExpired to
// 401 TOKEN_EXPIRED and everything else to 401 UNAUTHENTICATED.
var (
	ErrTokenExpired = errors.New("token has expired")
	ErrInvalidToken = errors.New("invalid token")
)

// keySource says which trust anchor verified a token; it decides which
// issuers are acceptable.
type keySource int

const (
	sourceLocal    keySource = iota + 1 // our own signing keys
	sourceExternal                      // the external IdP's JWKS
	sourceHMAC                          // the legacy shared secret
)

// verifyJWT checks signature, algorithm, issuer, audience and times, and
// returns the token. Algorithm confusion is impossible by construction: the
// key provider hands out a key only for the algorithm that key is for (our
// ES256 keys, the IdP's keys with their declared alg, the HMAC secret only for
// HS256 and only when configured), and "none" gets no key at all.
func (s *Service) verifyJWT(ctx context.Context, raw string) (jwt.Token, error) {
	var source keySource
	provider := jws.KeyProviderFunc(func(ctx context.Context, sink jws.KeySink, sig *jws.Signature, _ *jws.Message) error {
		h := sig.ProtectedHeaders()
		alg, ok := h.Algorithm()
		if !ok {
			return errors.New("no alg")
		}
		kid, _ := h.KeyID()
		switch alg {
		case jwa.HS256():
			if len(s.cfg.JWTSecret) == 0 {
				return errors.New("HS256 is not accepted")
			}
			source = sourceHMAC
			sink.Key(jwa.HS256(), s.cfg.JWTSecret)
			return nil
		case jwa.ES256(), jwa.RS256():
		default:
			return fmt.Errorf("alg %s is not accepted", alg)
		}
		if kid == "" {
			return errors.New("no kid")
		}
		if key, ok := s.keys.lookup(ctx, kid); ok {
			if key.alg != alg {
				return errors.New("alg does not match the key")
			}
			source = sourceLocal
			sink.Key(key.alg, key.private.Public())
			return nil
		}
		if s.external != nil {
			if key, keyAlg, ok := s.external.lookup(ctx, kid); ok {
				if keyAlg != alg {
					return errors.New("alg does not match the key")
				}
				source = sourceExternal
				sink.Key(keyAlg, key)
				return nil
			}
		}
		return errors.New("unknown kid")
	})
	tok, err := jwt.ParseString(raw,
		jwt.WithKeyProvider(provider),
		jwt.WithValidate(true),
		jwt.WithClock(jwt.ClockFunc(s.now)),
		jwt.WithAcceptableSkew(s.cfg.Leeway),
		jwt.WithAudience(s.cfg.Audience),
		jwt.WithRequiredClaim("exp"),
		jwt.WithRequiredClaim("sub"),
	)
	if err != nil {
		if errors.Is(err, jwt.TokenExpiredError()) {
			return nil, ErrTokenExpired
		}
		return nil, fmt.Errorf("%w: %v", ErrInvalidToken, err)
	}
	iss, _ := tok.Issuer()
	switch source {
	case sourceLocal:
		if iss != s.cfg.Issuer {
			return nil, fmt.Errorf("%w: issuer %q", ErrInvalidToken, iss)
		}
	default:
		if !slices.Contains(s.cfg.ExternalIssuers, iss) {
			return nil, fmt.Errorf("%w: issuer %q is not trusted", ErrInvalidToken, iss)
		}
	}
	return tok, nil
}

// principalFromToken maps verified claims to the caller: the subject is the
// user id; the tenant comes from the tenant_id claim or
// app_metadata.tenant_id (external tokens must carry one) and must exist.
func (s *Service) principalFromToken(ctx context.Context, tok jwt.Token) (principal.Principal, error) {
	var p principal.Principal
	sub, _ := tok.Subject()
	userID, err := uuid.Parse(sub)
	if err != nil {
		return p, fmt.Errorf("%w: subject is not a UUID", ErrInvalidToken)
	}
	tenantID, err := tenantClaim(tok)
	if err != nil {
		return p, err
	}
	tenant, err := s.tenant(ctx, tenantID)
	if err != nil {
		return p, err
	}
	p = principal.Principal{UserID: userID, TenantID: tenantID, Tier: principal.Tier(tenant.Tier), Kind: principal.KindAccessToken}
	if exp, ok := tok.Expiration(); ok {
		p.ExpiresAt = exp
	}
	var email, session string
	if tok.Get("email", &email) == nil {
		p.Email = email
	}
	// Only this server's sessions are known here; an external identity
	// provider's session_id names one of its own.
	if iss, _ := tok.Issuer(); iss == s.cfg.Issuer && tok.Get("session_id", &session) == nil {
		p.SessionID, _ = uuid.Parse(session)
	}
	return p, nil
}

func tenantClaim(tok jwt.Token) (uuid.UUID, error) {
	var raw string
	if err := tok.Get("tenant_id", &raw); err != nil {
		var appMeta map[string]any
		if err := tok.Get("app_metadata", &appMeta); err == nil {
			raw, _ = appMeta["tenant_id"].(string)
		}
	}
	id, err := uuid.Parse(raw)
	if err != nil {
		return uuid.Nil, fmt.Errorf("%w: no tenant_id claim", ErrInvalidToken)
	}
	return id, nil
}

// verifiedCache remembers recently verified access tokens (by SHA-256 of the
// token) until they expire, so a client's repeated requests skip the
// signature check. Bounded: when full, it is emptied (a cheap, safe policy:
// the only cost is re-verifying).
type verifiedCache struct {
	mu      sync.Mutex
	max     int
	entries map[[32]byte]cachedPrincipal
}

type cachedPrincipal struct {
	p         principal.Principal
	expiresAt time.Time
}

func newVerifiedCache(max int) *verifiedCache {
	return &verifiedCache{max: max, entries: make(map[[32]byte]cachedPrincipal)}
}

func (c *verifiedCache) get(raw string, now time.Time) (principal.Principal, bool) {
	key := sha256.Sum256([]byte(raw))
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[key]
	if !ok || !now.Before(e.expiresAt) {
		return principal.Principal{}, false
	}
	return e.p, true
}

func (c *verifiedCache) put(raw string, p principal.Principal, expiresAt time.Time) {
	key := sha256.Sum256([]byte(raw))
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.entries) >= c.max {
		clear(c.entries)
	}
	c.entries[key] = cachedPrincipal{p: p, expiresAt: expiresAt}
}

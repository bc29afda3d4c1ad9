// Package auth is Strata's identity provider and token verifier: users and
// tenants, GoTrue-compatible password and refresh grants issuing ES256 JWT
// access tokens, refresh-token rotation with reuse detection, signing-key
// rotation and the JWKS, verification of our own, an external IdP's and
// legacy HS256 tokens, personal access tokens, and the HTTP middleware that
// authenticates every request.
package auth

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/mail"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
	"golang.org/x/crypto/bcrypt"

	"github.com/stratahq/strata/impl/apierrors"
	"github.com/stratahq/strata/impl/principal"
	"github.com/stratahq/strata/impl/store"
)

// Config configures the service. Zero durations take the defaults of spec
// section 5 and DECISIONS.md.
type Config struct {
	// Issuer is the "iss" of our tokens: {base_url}/api/auth/v1.
	Issuer string
	// Audience required in every token; default "authenticated".
	Audience string
	// AccessTTL is the access-token lifetime (1 h).
	AccessTTL time.Duration
	// RefreshTTL is the refresh-token lifetime (30 days).
	RefreshTTL time.Duration
	// RefreshReuseGrace is how long a spent refresh token still yields its
	// successor (10 s).
	RefreshReuseGrace time.Duration
	// Leeway is the tolerated clock skew (at most 30 s).
	Leeway time.Duration
	// JWTSecret enables legacy HS256 verification when non-empty.
	JWTSecret []byte
	// JWKSURL enables verification of an external IdP's ES256/RS256 tokens.
	JWKSURL string
	// ExternalIssuers are the "iss" values accepted from HS256 and external
	// JWKS tokens; default: Issuer.
	ExternalIssuers []string
	// DisableSignup turns POST /signup off (403).
	DisableSignup bool
	// BcryptCost is the password hashing cost (default bcrypt.DefaultCost).
	BcryptCost int
	// Now is the clock; default time.Now.
	Now func() time.Time
}

func (c Config) withDefaults() (Config, error) {
	if c.Issuer == "" {
		return c, errors.New("auth: issuer is required")
	}
	if c.Audience == "" {
		c.Audience = Audience
	}
	if c.AccessTTL <= 0 {
		c.AccessTTL = time.Hour
	}
	if c.RefreshTTL <= 0 {
		c.RefreshTTL = 30 * 24 * time.Hour
	}
	if c.RefreshReuseGrace <= 0 {
		c.RefreshReuseGrace = 10 * time.Second
	}
	if c.Leeway <= 0 || c.Leeway > maxLeeway {
		c.Leeway = maxLeeway
	}
	if len(c.ExternalIssuers) == 0 {
		c.ExternalIssuers = []string{c.Issuer}
	}
	if c.BcryptCost == 0 {
		c.BcryptCost = bcrypt.DefaultCost
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	return c, nil
}

// Service implements authentication. It is safe for concurrent use.
type Service struct {
	cfg      Config
	store    store.AuthStore
	keys     *Keyring
	external *externalKeys
	logger   *slog.Logger
	now      func() time.Time

	refreshSecret []byte
	dummyHash     []byte
	verified      *verifiedCache
	attempts      *attemptLimiter

	tenantMu    sync.Mutex
	tenantCache map[uuid.UUID]cachedTenant
}

type cachedTenant struct {
	t        store.Tenant
	loadedAt time.Time
}

// tenantCacheTTL bounds how stale a tenant's tier can be for authentication.
const tenantCacheTTL = 30 * time.Second

// verifiedCacheTTL bounds how long a verified token's principal is reused
// (also bounded by the token's expiry), so tier changes show within it.
const verifiedCacheTTL = time.Minute

// New builds the service: loads (or creates) the signing keys and the
// refresh-token secret, and registers the external JWKS when configured.
func New(ctx context.Context, st store.AuthStore, cfg Config, logger *slog.Logger) (*Service, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	s := &Service{cfg: cfg, store: st, logger: logger, now: cfg.Now,
		verified: newVerifiedCache(10000), attempts: newAttemptLimiter(cfg.Now),
		tenantCache: map[uuid.UUID]cachedTenant{}}
	if s.keys, err = NewKeyring(ctx, st, cfg.Now); err != nil {
		return nil, err
	}
	if s.refreshSecret, err = st.Secret(ctx, "refresh_token_successor", randomBytes32); err != nil {
		return nil, fmt.Errorf("refresh-token secret: %w", err)
	}
	// A real hash of a random password, so that an unknown email costs the
	// same bcrypt comparison as a wrong password.
	if s.dummyHash, err = bcrypt.GenerateFromPassword([]byte(uuid.NewString()), cfg.BcryptCost); err != nil {
		return nil, fmt.Errorf("dummy hash: %w", err)
	}
	if cfg.JWKSURL != "" {
		if s.external, err = newExternalKeys(ctx, cfg.JWKSURL, cfg.Now); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// Close stops the external JWKS refresher.
func (s *Service) Close(ctx context.Context) error {
	if s.external != nil {
		return s.external.close(ctx)
	}
	return nil
}

// Keyring returns the signing keys.
func (s *Service) Keyring() *Keyring { return s.keys }

func randomBytes32() ([]byte, error) {
	b := make([]byte, 32)
	_, err := rand.Read(b)
	return b, err
}

func randomToken() (string, error) {
	b, err := randomBytes32()
	if err != nil {
		return "", err
	}
	return base64.RawURLEncoding.EncodeToString(b), nil
}

func hashToken(token string) []byte {
	h := sha256.Sum256([]byte(token))
	return h[:]
}

// successorOf derives the refresh token that replaces token. Deriving it
// (instead of drawing it at random) lets a re-use within the grace period
// hand out the very same successor although only hashes are stored.
func (s *Service) successorOf(token string) string {
	mac := hmac.New(sha256.New, s.refreshSecret)
	mac.Write([]byte(token))
	return base64.RawURLEncoding.EncodeToString(mac.Sum(nil))
}

// ─── grants ───

// GrantError is an OAuth 2.0 error of the token endpoint (400).
type GrantError struct {
	// Err is the OAuth error: invalid_grant, invalid_request, unsupported_grant_type.
	Err string
	// Code is GoTrue's error_code: invalid_credentials, refresh_token_not_found,
	// refresh_token_already_used, session_expired, validation_failed.
	Code    string
	Message string
}

func (e *GrantError) Error() string { return e.Err + ": " + e.Message }

var (
	errInvalidCredentials = &GrantError{Err: "invalid_grant", Code: "invalid_credentials", Message: "Invalid login credentials"}
	errRefreshNotFound    = &GrantError{Err: "invalid_grant", Code: "refresh_token_not_found", Message: "Invalid Refresh Token: Refresh Token Not Found"}
	errRefreshReused      = &GrantError{Err: "invalid_grant", Code: "refresh_token_already_used", Message: "Invalid Refresh Token: Already Used"}
	errSessionExpired     = &GrantError{Err: "invalid_grant", Code: "session_expired", Message: "Invalid Refresh Token: Session Expired"}
)

// Tokens is a session as the token endpoint returns it.
type Tokens struct {
	AccessToken  string
	ExpiresIn    int
	ExpiresAt    time.Time
	RefreshToken string
	User         store.User
	Tenant       store.Tenant
}

// PasswordGrant signs a user in. A wrong password and an unknown email
// answer identically and cost one bcrypt comparison each. More than 10
// failures for an email in 5 minutes, or from a client IP in a minute, are
// refused with 429 before the password is checked.
func (s *Service) PasswordGrant(ctx context.Context, email, password, clientIP string) (Tokens, error) {
	emailKey := "email:" + strings.ToLower(strings.TrimSpace(email))
	ipKey := "ip:" + clientIP
	if wait, blocked := s.attempts.blocked(emailKey, ipKey); blocked {
		return Tokens{}, apierrors.RateLimited(maxFailuresPerIP, wait, "too many failed sign-in attempts; try again later").
			WithErrorCode("over_request_rate_limit")
	}
	user, err := s.store.GetUserByEmail(ctx, email)
	hash := s.dummyHash
	switch {
	case err == nil:
		hash = []byte(user.PasswordHash)
	case !errors.Is(err, store.ErrNotFound):
		return Tokens{}, fmt.Errorf("password grant: %w", err)
	}
	// bcrypt reads 72 bytes; sign-up refuses longer passwords, so a longer
	// one cannot be right, however it starts (it still costs a comparison).
	tooLong := len(password) > maxPasswordLen
	if tooLong {
		hash = s.dummyHash
	}
	if cmpErr := bcrypt.CompareHashAndPassword(hash, []byte(password)); cmpErr != nil || err != nil || tooLong {
		s.attempts.fail(emailKey, ipKey)
		return Tokens{}, errInvalidCredentials
	}
	s.attempts.reset(emailKey)
	return s.startSession(ctx, user)
}

// startSession creates a session with its first refresh token and mints an
// access token for it.
func (s *Service) startSession(ctx context.Context, user store.User) (Tokens, error) {
	tenant, err := s.tenant(ctx, user.TenantID)
	if err != nil {
		return Tokens{}, err
	}
	refresh, err := randomToken()
	if err != nil {
		return Tokens{}, err
	}
	now := s.now()
	sess := store.Session{ID: uuid.New(), UserID: user.ID, CreatedAt: now}
	if err := s.store.CreateSession(ctx, sess, hashToken(refresh), now.Add(s.cfg.RefreshTTL)); err != nil {
		return Tokens{}, fmt.Errorf("start session: %w", err)
	}
	return s.tokensFor(ctx, user, tenant, sess.ID, refresh, now)
}

func (s *Service) tokensFor(ctx context.Context, user store.User, tenant store.Tenant, sessionID uuid.UUID, refresh string, now time.Time) (Tokens, error) {
	exp := now.Add(s.cfg.AccessTTL)
	access, err := s.mintAccessToken(ctx, accessClaims{User: user, Tenant: tenant, SessionID: sessionID, IssuedAt: now, ExpiresAt: exp})
	if err != nil {
		return Tokens{}, err
	}
	return Tokens{AccessToken: access, ExpiresIn: int(s.cfg.AccessTTL / time.Second), ExpiresAt: exp,
		RefreshToken: refresh, User: user, Tenant: tenant}, nil
}

// RefreshGrant exchanges a refresh token for a new session pair. The token
// is spent; re-using it within the grace period returns the same successor
// (concurrent tabs agree), re-using it later revokes the whole session.
func (s *Service) RefreshGrant(ctx context.Context, refreshToken string) (Tokens, error) {
	if refreshToken == "" {
		return Tokens{}, &GrantError{Err: "invalid_request", Code: "validation_failed", Message: "refresh_token is required"}
	}
	successor := s.successorOf(refreshToken)
	now := s.now()
	res, err := s.store.RotateRefreshToken(ctx, store.RotateRequest{
		PresentedHash: hashToken(refreshToken), SuccessorHash: hashToken(successor),
		Now: now, Grace: s.cfg.RefreshReuseGrace, TTL: s.cfg.RefreshTTL,
	})
	if err != nil {
		return Tokens{}, fmt.Errorf("refresh grant: %w", err)
	}
	switch res.Outcome {
	case store.RefreshRotated, store.RefreshReusedInGrace:
	case store.RefreshReuseDetected:
		s.logger.WarnContext(ctx, "refresh token reuse detected; session revoked", "session_id", res.Session.ID.String())
		return Tokens{}, errRefreshReused
	case store.RefreshSessionExpired:
		return Tokens{}, errSessionExpired
	default:
		return Tokens{}, errRefreshNotFound
	}
	tenant, err := s.tenant(ctx, res.User.TenantID)
	if err != nil {
		return Tokens{}, err
	}
	return s.tokensFor(ctx, res.User, tenant, res.Session.ID, successor, now)
}

// ─── users and tenants ───

// minPasswordLen and maxPasswordLen bound passwords (bcrypt reads 72 bytes).
const (
	minPasswordLen = 6
	maxPasswordLen = 72
)

func checkCredentials(email, password string) error {
	if _, err := mail.ParseAddress(email); err != nil || strings.ContainsAny(email, "<> ") {
		return apierrors.Validation("field \"email\": not a valid email address").WithErrorCode("email_address_invalid")
	}
	if len(password) < minPasswordLen || len(password) > maxPasswordLen {
		return apierrors.Validation("field \"password\": must be %d to %d bytes", minPasswordLen, maxPasswordLen).
			WithErrorCode("weak_password")
	}
	return nil
}

// CreateTenant creates a tenant on tier ("free" or "pro"); content search is
// on by default.
func (s *Service) CreateTenant(ctx context.Context, name string, tier principal.Tier) (store.Tenant, error) {
	if tier != principal.TierFree && tier != principal.TierPro {
		return store.Tenant{}, apierrors.Validation("field \"tier\": must be free or pro")
	}
	if strings.TrimSpace(name) == "" {
		return store.Tenant{}, apierrors.Validation("field \"name\": must not be empty")
	}
	t := newTenant(name, tier, s.now())
	if err := s.store.CreateTenant(ctx, t); err != nil {
		return store.Tenant{}, err
	}
	return t, nil
}

func newTenant(name string, tier principal.Tier, now time.Time) store.Tenant {
	return store.Tenant{ID: uuid.New(), Name: strings.TrimSpace(name), Tier: string(tier),
		Features: map[string]bool{"content_search": true}, CreatedAt: now}
}

// CreateUser creates a user in an existing tenant.
func (s *Service) CreateUser(ctx context.Context, tenantID uuid.UUID, email, password string) (store.User, error) {
	if err := checkCredentials(email, password); err != nil {
		return store.User{}, err
	}
	if _, err := s.store.GetTenant(ctx, tenantID); err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return store.User{}, apierrors.NotFound("tenant %s does not exist", tenantID)
		}
		return store.User{}, err
	}
	u, err := s.newUser(tenantID, email, password, nil)
	if err != nil {
		return store.User{}, err
	}
	if err := s.store.CreateUser(ctx, u); err != nil {
		if errors.Is(err, store.ErrConflict) {
			return store.User{}, errUserExists
		}
		return store.User{}, err
	}
	return u, nil
}

var errUserExists = apierrors.New(http.StatusUnprocessableEntity, "user_already_exists",
	"a user with this email address has already been registered").WithErrorCode("user_already_exists")

func (s *Service) newUser(tenantID uuid.UUID, email, password string, meta map[string]any) (store.User, error) {
	hash, err := bcrypt.GenerateFromPassword([]byte(password), s.cfg.BcryptCost)
	if err != nil {
		return store.User{}, fmt.Errorf("hash password: %w", err)
	}
	now := s.now()
	if meta == nil {
		meta = map[string]any{}
	}
	return store.User{ID: uuid.New(), TenantID: tenantID, Email: strings.TrimSpace(email), PasswordHash: string(hash),
		UserMetadata: meta, CreatedAt: now, UpdatedAt: now}, nil
}

// Signup creates a user with a tenant of its own on the free tier and
// signs it in. A client IP gets at most 20 sign-ups an hour (each creates a
// tenant).
func (s *Service) Signup(ctx context.Context, email, password string, meta map[string]any, clientIP string) (Tokens, error) {
	if s.cfg.DisableSignup {
		return Tokens{}, apierrors.New(http.StatusForbidden, apierrors.CodeForbiddenAuth, "signups are disabled on this server").
			WithErrorCode("signup_disabled")
	}
	signupKey := "signup:" + clientIP
	if wait, blocked := s.attempts.blocked(signupKey); blocked {
		return Tokens{}, apierrors.RateLimited(maxSignupsPerIP, wait, "too many sign-ups from this address; try again later").
			WithErrorCode("over_request_rate_limit")
	}
	if err := checkCredentials(email, password); err != nil {
		return Tokens{}, err
	}
	tenant := newTenant(strings.TrimSpace(email), principal.TierFree, s.now())
	user, err := s.newUser(tenant.ID, email, password, meta)
	if err != nil {
		return Tokens{}, err
	}
	if err := s.store.CreateTenantAndUser(ctx, tenant, user); err != nil {
		if errors.Is(err, store.ErrConflict) {
			return Tokens{}, errUserExists
		}
		return Tokens{}, err
	}
	s.attempts.fail(signupKey) // counts successful sign-ups
	return s.startSession(ctx, user)
}

// User returns the caller's user and tenant. Like GoTrue's, it checks what
// other requests take on trust from the token: the session of an access
// token must still be active (signed out → 401), and the user must exist.
func (s *Service) User(ctx context.Context, p principal.Principal) (store.User, store.Tenant, error) {
	if p.SessionID != uuid.Nil {
		sess, err := s.store.GetSession(ctx, p.SessionID)
		switch {
		case errors.Is(err, store.ErrNotFound) || (err == nil && sess.RevokedAt != nil):
			return store.User{}, store.Tenant{}, apierrors.New(http.StatusUnauthorized, apierrors.CodeUnauthenticated,
				"the session of this access token has ended (signed out)").WithErrorCode("session_not_found")
		case err != nil:
			return store.User{}, store.Tenant{}, err
		}
	}
	u, err := s.store.GetUser(ctx, p.UserID)
	if err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return u, store.Tenant{}, apierrors.New(http.StatusUnauthorized, apierrors.CodeUnauthenticated,
				"the user of this token does not exist").WithErrorCode("user_not_found")
		}
		return u, store.Tenant{}, err
	}
	t, err := s.tenant(ctx, u.TenantID)
	return u, t, err
}

// LogoutScope says which sessions a logout revokes.
type LogoutScope string

// Logout scopes (GoTrue's).
const (
	LogoutLocal  LogoutScope = "local"
	LogoutGlobal LogoutScope = "global"
	LogoutOthers LogoutScope = "others"
)

// Logout revokes the caller's refresh tokens: of this session (local), of
// all sessions (global) or of all but this one (others). Access tokens stay
// valid until they expire, as with GoTrue.
func (s *Service) Logout(ctx context.Context, p principal.Principal, scope LogoutScope) error {
	now := s.now()
	switch scope {
	case LogoutGlobal:
		return s.store.RevokeSessions(ctx, p.UserID, uuid.Nil, uuid.Nil, "logout_global", now)
	case LogoutOthers:
		return s.store.RevokeSessions(ctx, p.UserID, uuid.Nil, p.SessionID, "logout_others", now)
	default:
		if p.SessionID == uuid.Nil {
			return nil // a personal access token has no session
		}
		return s.store.RevokeSessions(ctx, p.UserID, p.SessionID, uuid.Nil, "logout", now)
	}
}

// tenant returns a tenant through a short-lived cache.
func (s *Service) tenant(ctx context.Context, id uuid.UUID) (store.Tenant, error) {
	now := s.now()
	s.tenantMu.Lock()
	c, ok := s.tenantCache[id]
	s.tenantMu.Unlock()
	if ok && now.Sub(c.loadedAt) < tenantCacheTTL {
		return c.t, nil
	}
	t, err := s.store.GetTenant(ctx, id)
	if err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return t, fmt.Errorf("%w: tenant %s does not exist", ErrInvalidToken, id)
		}
		return t, err
	}
	s.tenantMu.Lock()
	if len(s.tenantCache) > 100000 {
		clear(s.tenantCache)
	}
	s.tenantCache[id] = cachedTenant{t: t, loadedAt: now}
	s.tenantMu.Unlock()
	return t, nil
}

// SetTenantFeature turns a tenant's feature flag (e.g. content_search) on
// or off; this process sees the change at once, others within 30 s.
func (s *Service) SetTenantFeature(ctx context.Context, id uuid.UUID, feature string, enabled bool) error {
	if !validFeature(feature) {
		return apierrors.Validation("feature %q: letters, digits and underscores only", feature)
	}
	if err := s.store.SetTenantFeature(ctx, id, feature, enabled); err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return apierrors.NotFound("tenant %s does not exist", id)
		}
		return err
	}
	s.tenantMu.Lock()
	delete(s.tenantCache, id)
	s.tenantMu.Unlock()
	return nil
}

func validFeature(name string) bool {
	if name == "" || len(name) > 64 {
		return false
	}
	for _, c := range name {
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// Tenant returns a tenant (cached for a few seconds).
func (s *Service) Tenant(ctx context.Context, id uuid.UUID) (store.Tenant, error) {
	return s.tenant(ctx, id)
}

// ─── bearer authentication ───

// PATPrefix starts every personal access token.
const PATPrefix = "strata_pat_"

// Authenticate verifies a bearer credential — an access token or a
// personal access token — and returns the caller. Errors are
// ErrTokenExpired, ErrInvalidToken (wrapped), or a store failure.
func (s *Service) Authenticate(ctx context.Context, bearer string) (principal.Principal, error) {
	if strings.HasPrefix(bearer, PATPrefix) {
		return s.authenticatePAT(ctx, bearer)
	}
	now := s.now()
	if p, ok := s.verified.get(bearer, now); ok {
		return p, nil
	}
	tok, err := s.verifyJWT(ctx, bearer)
	if err != nil {
		return principal.Principal{}, err
	}
	p, err := s.principalFromToken(ctx, tok)
	if err != nil {
		return principal.Principal{}, err
	}
	until := now.Add(verifiedCacheTTL)
	if exp, ok := tok.Expiration(); ok && exp.Before(until) {
		until = exp
	}
	s.verified.put(bearer, p, until)
	return p, nil
}

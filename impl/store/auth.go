package store

import (
	"context"
	"errors"
	"time"

	"github.com/google/uuid"
)

// Errors of the auth repositories.
var (
	// ErrConflict is returned when a unique value (an email) is taken.
	ErrConflict = errors.New("store: conflict")
)

// Tenant is an organisation: it owns a data-platform store and its tier sets
// the quotas of its users.
type Tenant struct {
	ID        uuid.UUID
	Name      string
	Tier      string // "free" or "pro"
	Features  map[string]bool
	CreatedAt time.Time
}

// User is an account that signs in with email and password.
type User struct {
	ID           uuid.UUID
	TenantID     uuid.UUID
	Email        string
	PasswordHash string
	UserMetadata map[string]any
	CreatedAt    time.Time
	UpdatedAt    time.Time
}

// Session is one sign-in and its family of refresh tokens.
type Session struct {
	ID        uuid.UUID
	UserID    uuid.UUID
	CreatedAt time.Time
	RevokedAt *time.Time
}

// RefreshOutcome says what RotateRefreshToken did.
type RefreshOutcome int

// Outcomes of a refresh.
const (
	// RefreshRotated: the token was live; it is now spent and its successor stored.
	RefreshRotated RefreshOutcome = iota + 1
	// RefreshReusedInGrace: the token was spent less than the grace period
	// ago; its successor (already stored) is the answer.
	RefreshReusedInGrace
	// RefreshReuseDetected: the token was spent longer ago; the whole
	// session has been revoked.
	RefreshReuseDetected
	// RefreshNotFound: no such token.
	RefreshNotFound
	// RefreshSessionExpired: the token or its session is expired or revoked.
	RefreshSessionExpired
)

// RotateRequest is one refresh: the presented token's hash and the hash of
// its successor (derived from the presented token, so that a re-use within
// the grace period can hand out the same successor).
type RotateRequest struct {
	PresentedHash []byte
	SuccessorHash []byte
	Now           time.Time
	Grace         time.Duration
	TTL           time.Duration // lifetime of the successor
}

// RotateResult is the outcome of a refresh with the session's user.
type RotateResult struct {
	Outcome RefreshOutcome
	Session Session
	User    User
}

// PersonalAccessToken is a long-lived credential of a user.
type PersonalAccessToken struct {
	ID         uuid.UUID
	UserID     uuid.UUID
	Name       string
	Prefix     string
	SecretHash []byte
	CreatedAt  time.Time
	ExpiresAt  *time.Time
	LastUsedAt *time.Time
	RevokedAt  *time.Time
}

// SigningKey is a private key for access tokens.
type SigningKey struct {
	KID         string
	Alg         string
	PrivateKey  []byte // PKCS #8 DER
	CreatedAt   time.Time
	RetireAfter *time.Time
}

// AuthStore persists tenants, users, sessions, refresh tokens, personal
// access tokens and signing keys. Every method that checks and changes state
// does both in one transaction.
type AuthStore interface {
	CreateTenant(ctx context.Context, t Tenant) error
	GetTenant(ctx context.Context, id uuid.UUID) (Tenant, error)
	CountTenants(ctx context.Context) (int, error)
	// SetTenantFeature turns a feature flag of the tenant on or off.
	SetTenantFeature(ctx context.Context, id uuid.UUID, feature string, enabled bool) error

	// CreateUser fails with ErrConflict when the email is taken (case-insensitively).
	CreateUser(ctx context.Context, u User) error
	// CreateTenantAndUser creates both atomically (sign-up).
	CreateTenantAndUser(ctx context.Context, t Tenant, u User) error
	GetUser(ctx context.Context, id uuid.UUID) (User, error)
	GetUserByEmail(ctx context.Context, email string) (User, error)

	// CreateSession stores a session and its first refresh token.
	CreateSession(ctx context.Context, s Session, refreshHash []byte, expiresAt time.Time) error
	// GetSession returns a session, revoked or not.
	GetSession(ctx context.Context, id uuid.UUID) (Session, error)
	RotateRefreshToken(ctx context.Context, req RotateRequest) (RotateResult, error)
	// RevokeSessions revokes the user's sessions: only keep if non-zero is
	// kept, only if non-zero is the one revoked.
	RevokeSessions(ctx context.Context, userID uuid.UUID, only, keep uuid.UUID, reason string, now time.Time) error

	CreatePersonalAccessToken(ctx context.Context, p PersonalAccessToken) error
	ListPersonalAccessTokens(ctx context.Context, userID uuid.UUID) ([]PersonalAccessToken, error)
	GetPersonalAccessTokenByHash(ctx context.Context, hash []byte) (PersonalAccessToken, error)
	// RevokePersonalAccessToken revokes the user's token; ErrNotFound when
	// the user has no such live token.
	RevokePersonalAccessToken(ctx context.Context, userID, id uuid.UUID, now time.Time) error
	// TouchPersonalAccessToken records a use, at most once per interval.
	TouchPersonalAccessToken(ctx context.Context, id uuid.UUID, now time.Time, interval time.Duration) error

	// SigningKeys returns the keys not retired at now, newest first.
	SigningKeys(ctx context.Context, now time.Time) ([]SigningKey, error)
	// RotateSigningKeys adds k and sets retireAfter on every older key that
	// has none.
	RotateSigningKeys(ctx context.Context, k SigningKey, retireAfter time.Time) error

	// Secret returns the named server secret, creating it with generate on
	// first use (atomically, so concurrent starts agree).
	Secret(ctx context.Context, name string, generate func() ([]byte, error)) ([]byte, error)
}

// Package principal carries the authenticated caller of a request through
// context.Context. The authentication middleware (impl/auth) puts it there;
// services read it to scope their work to a tenant or user.
package principal

import (
	"context"
	"errors"
	"time"

	"github.com/google/uuid"
)

// Kind says how the caller authenticated.
type Kind string

// Kinds of credentials.
const (
	// KindAccessToken is a JWT access token (ours or an external IdP's).
	KindAccessToken Kind = "access_token"
	// KindPersonalAccessToken is a strata_pat_… secret.
	KindPersonalAccessToken Kind = "personal_access_token"
)

// Tier is a tenant's plan; it sets its quotas.
type Tier string

// Tiers of spec section 8.
const (
	TierFree Tier = "free"
	TierPro  Tier = "pro"
)

// Principal is the authenticated caller.
type Principal struct {
	UserID   uuid.UUID
	TenantID uuid.UUID
	Email    string
	Tier     Tier
	Kind     Kind
	// SessionID is the refresh-token session of an access token; zero for
	// personal access tokens and external tokens.
	SessionID uuid.UUID
	// ExpiresAt is when the credential stops being valid; zero if never.
	ExpiresAt time.Time
}

type key struct{}

// With returns a context that carries p.
func With(ctx context.Context, p Principal) context.Context {
	return context.WithValue(ctx, key{}, p)
}

// ErrMissing is returned by Required when no principal is in the context: a
// wiring fault (the authentication middleware runs before every operation
// that needs a caller), so it surfaces as a 500.
var ErrMissing = errors.New("no principal in context")

// Required returns the principal carried by ctx, or ErrMissing.
func Required(ctx context.Context) (Principal, error) {
	p, ok := From(ctx)
	if !ok {
		return p, ErrMissing
	}
	return p, nil
}

// From returns the principal carried by ctx, if any.
func From(ctx context.Context) (Principal, bool) {
	p, ok := ctx.Value(key{}).(Principal)
	return p, ok
}

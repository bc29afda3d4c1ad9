package auth

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/stratahq/strata/impl/apierrors"
	"github.com/stratahq/strata/impl/principal"
	"github.com/stratahq/strata/impl/store"
)

// patTouchInterval limits last-used writes to one per token per minute.
const patTouchInterval = time.Minute

// patPrefixLen is how much of the secret is kept in clear to recognise it.
const patPrefixLen = len(PATPrefix) + 6

// errPATNeedsSession refuses managing tokens with a token: a leaked personal
// access token must not be able to mint others that outlive its revocation.
var errPATNeedsSession = apierrors.New(http.StatusForbidden, apierrors.CodeForbiddenAuth,
	"personal access tokens are managed with a signed-in session, not with a personal access token")

// CreatePAT creates a personal access token and returns it with its secret,
// which is shown this once and stored only as a hash.
func (s *Service) CreatePAT(ctx context.Context, p principal.Principal, name string, expiresAt *time.Time) (store.PersonalAccessToken, string, error) {
	if p.Kind == principal.KindPersonalAccessToken {
		return store.PersonalAccessToken{}, "", errPATNeedsSession
	}
	name = strings.TrimSpace(name)
	if name == "" {
		return store.PersonalAccessToken{}, "", apierrors.Validation("field \"name\": must not be empty")
	}
	now := s.now()
	if expiresAt != nil && !expiresAt.After(now) {
		return store.PersonalAccessToken{}, "", apierrors.Validation("field \"expiresAt\": must be in the future")
	}
	random, err := randomToken()
	if err != nil {
		return store.PersonalAccessToken{}, "", err
	}
	secret := PATPrefix + random
	pat := store.PersonalAccessToken{ID: uuid.New(), UserID: p.UserID, Name: name, Prefix: secret[:patPrefixLen],
		SecretHash: hashToken(secret), CreatedAt: now, ExpiresAt: expiresAt}
	if err := s.store.CreatePersonalAccessToken(ctx, pat); err != nil {
		return store.PersonalAccessToken{}, "", err
	}
	return pat, secret, nil
}

// ListPATs lists the caller's live tokens (never their secrets).
func (s *Service) ListPATs(ctx context.Context, p principal.Principal) ([]store.PersonalAccessToken, error) {
	if p.Kind == principal.KindPersonalAccessToken {
		return nil, errPATNeedsSession
	}
	return s.store.ListPersonalAccessTokens(ctx, p.UserID)
}

// RevokePAT revokes one of the caller's tokens; another user's id is 404.
func (s *Service) RevokePAT(ctx context.Context, p principal.Principal, id uuid.UUID) error {
	if p.Kind == principal.KindPersonalAccessToken {
		return errPATNeedsSession
	}
	err := s.store.RevokePersonalAccessToken(ctx, p.UserID, id, s.now())
	if errors.Is(err, store.ErrNotFound) {
		return apierrors.NotFound("personal access token %s not found", id)
	}
	return err
}

func (s *Service) authenticatePAT(ctx context.Context, secret string) (principal.Principal, error) {
	pat, err := s.store.GetPersonalAccessTokenByHash(ctx, hashToken(secret))
	if errors.Is(err, store.ErrNotFound) {
		return principal.Principal{}, fmt.Errorf("%w: unknown personal access token", ErrInvalidToken)
	}
	if err != nil {
		return principal.Principal{}, err
	}
	now := s.now()
	if pat.RevokedAt != nil {
		return principal.Principal{}, fmt.Errorf("%w: personal access token revoked", ErrInvalidToken)
	}
	if pat.ExpiresAt != nil && !now.Before(*pat.ExpiresAt) {
		return principal.Principal{}, fmt.Errorf("%w: personal access token expired", ErrInvalidToken)
	}
	user, err := s.store.GetUser(ctx, pat.UserID)
	if err != nil {
		return principal.Principal{}, fmt.Errorf("%w: token owner: %v", ErrInvalidToken, err)
	}
	tenant, err := s.tenant(ctx, user.TenantID)
	if err != nil {
		return principal.Principal{}, err
	}
	// Record the use at most once a minute: skip the write (and its lock on
	// the store) when the token row already says it was used recently.
	if pat.LastUsedAt == nil || now.Sub(*pat.LastUsedAt) >= patTouchInterval {
		if err := s.store.TouchPersonalAccessToken(ctx, pat.ID, now, patTouchInterval); err != nil {
			s.logger.WarnContext(ctx, "record personal access token use", "err", err)
		}
	}
	p := principal.Principal{UserID: user.ID, TenantID: tenant.ID, Email: user.Email,
		Tier: principal.Tier(tenant.Tier), Kind: principal.KindPersonalAccessToken}
	if pat.ExpiresAt != nil {
		p.ExpiresAt = *pat.ExpiresAt
	}
	return p, nil
}

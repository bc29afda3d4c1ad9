package sdk

import (
	"context"
	"fmt"
	"time"

	openapi_types "github.com/oapi-codegen/runtime/types"
)

// CreatePersonalAccessToken creates a personal access token for programs
// that act as the user (CI, integrations): pass its Token to
// WithPersonalAccessToken. The secret is in the answer this once and
// never again (the server keeps a hash only): store it now.
//
// A zero expiresAt means the token does not expire (as a zero deadline
// means none for a net.Conn); otherwise it must lie in the future
// (ErrValidation). Tokens are managed with a signed-in session: a client
// that itself uses a personal access token gets ErrForbidden here, so that
// a leaked token cannot mint others. It is not retried on 429 or 503: a
// second attempt could make a second token.
func (s *Client) CreatePersonalAccessToken(ctx context.Context, name string, expiresAt time.Time) (PersonalAccessTokenCreated, error) {
	body := PersonalAccessTokenCreate{Name: name}
	if !expiresAt.IsZero() {
		body.ExpiresAt = &expiresAt
	}
	rsp, err := s.api.CreatePersonalAccessTokenWithResponse(ctx, body)
	if err != nil {
		return PersonalAccessTokenCreated{}, fmt.Errorf("strata: create personal access token %q: %w", name, err)
	}
	return result(rsp.JSON201, rsp.HTTPResponse, rsp.Body)
}

// PersonalAccessTokens lists the user's tokens that are not revoked, newest
// first, without their secrets (Prefix helps to tell them apart). Like
// CreatePersonalAccessToken, it needs a signed-in session.
func (s *Client) PersonalAccessTokens(ctx context.Context) ([]PersonalAccessToken, error) {
	rsp, err := s.api.ListPersonalAccessTokensWithResponse(ctx)
	if err != nil {
		return nil, fmt.Errorf("strata: list personal access tokens: %w", err)
	}
	res, err := result(rsp.JSON200, rsp.HTTPResponse, rsp.Body)
	return res.Data, err
}

// RevokePersonalAccessToken revokes a token by its id (not its secret) at
// once: its next request is ErrUnauthenticated. An unknown id, another
// user's or one revoked already is ErrNotFound. Like CreatePersonalAccessToken, it needs a
// signed-in session.
func (s *Client) RevokePersonalAccessToken(ctx context.Context, id openapi_types.UUID) error {
	rsp, err := s.api.DeletePersonalAccessTokenWithResponse(ctx, id)
	if err != nil {
		return fmt.Errorf("strata: revoke personal access token %s: %w", id, err)
	}
	return noContent(rsp.HTTPResponse, rsp.Body)
}

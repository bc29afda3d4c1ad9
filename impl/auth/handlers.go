package auth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	openapi_types "github.com/oapi-codegen/runtime/types"

	"github.com/stratahq/strata/gen/api"
	"github.com/stratahq/strata/impl/httpx"
	"github.com/stratahq/strata/impl/principal"
	"github.com/stratahq/strata/impl/store"
)

// Handlers implements the auth operations of the generated strict server
// interface. Expected failures are returned as *apierrors.Error and rendered
// by the server's one error renderer; OAuth errors of the token endpoint are
// typed responses because their shape is wider.
type Handlers struct {
	svc *Service
}

// NewHandlers returns the auth handlers over svc.
func NewHandlers(svc *Service) *Handlers { return &Handlers{svc: svc} }

// Token implements POST /api/auth/v1/token.
func (h *Handlers) Token(ctx context.Context, req api.TokenRequestObject) (api.TokenResponseObject, error) {
	var body api.TokenRequest
	if req.Body != nil {
		body = *req.Body
	}
	var tokens Tokens
	var err error
	switch req.Params.GrantType {
	case "password":
		if deref(body.Email) == "" || deref(body.Password) == "" {
			return oauthError(&GrantError{Err: "invalid_request", Code: "validation_failed", Message: "email and password are required"}), nil
		}
		tokens, err = h.svc.PasswordGrant(ctx, deref(body.Email), deref(body.Password), httpx.ClientIP(ctx))
	case "refresh_token":
		tokens, err = h.svc.RefreshGrant(ctx, deref(body.RefreshToken))
	default:
		return oauthError(&GrantError{Err: "unsupported_grant_type", Code: "validation_failed",
			Message: fmt.Sprintf("grant_type %q is not supported; use password or refresh_token", req.Params.GrantType)}), nil
	}
	var grantErr *GrantError
	if errors.As(err, &grantErr) {
		return oauthError(grantErr), nil
	}
	if err != nil {
		return nil, err
	}
	return api.Token200JSONResponse(sessionBody(tokens)), nil
}

func oauthError(e *GrantError) api.Token400JSONResponse {
	return api.Token400JSONResponse{OAuthBadRequestJSONResponse: api.OAuthBadRequestJSONResponse{
		StatusCode: http.StatusBadRequest, Error: e.Err, Message: e.Message,
		ErrorDescription: &e.Message, ErrorCode: &e.Code,
	}}
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// sessionBody renders tokens in GoTrue's session shape.
func sessionBody(t Tokens) api.Session {
	return api.Session{AccessToken: t.AccessToken, TokenType: "bearer", ExpiresIn: t.ExpiresIn,
		ExpiresAt: t.ExpiresAt.Unix(), RefreshToken: t.RefreshToken, User: userBody(t.User, t.Tenant)}
}

func userBody(u store.User, t store.Tenant) api.User {
	meta := u.UserMetadata
	if meta == nil {
		meta = map[string]any{}
	}
	return api.User{ID: u.ID, Aud: Audience, Role: "authenticated", Email: openapi_types.Email(u.Email),
		AppMetadata:  api.UserAppMetadata{Provider: "email", TenantID: t.ID, Tier: api.UserAppMetadataTier(t.Tier)},
		UserMetadata: meta, CreatedAt: u.CreatedAt, UpdatedAt: u.UpdatedAt}
}

// Signup implements POST /api/auth/v1/signup.
func (h *Handlers) Signup(ctx context.Context, req api.SignupRequestObject) (api.SignupResponseObject, error) {
	var meta map[string]any
	if req.Body.Data != nil {
		meta = *req.Body.Data
	}
	tokens, err := h.svc.Signup(ctx, string(req.Body.Email), req.Body.Password, meta, httpx.ClientIP(ctx))
	if err != nil {
		return nil, err
	}
	return api.Signup200JSONResponse(sessionBody(tokens)), nil
}

// GetJWKS implements GET /api/auth/v1/.well-known/jwks.json.
func (h *Handlers) GetJWKS(ctx context.Context, _ api.GetJWKSRequestObject) (api.GetJWKSResponseObject, error) {
	raw, err := json.Marshal(h.svc.keys.JWKS(ctx))
	if err != nil {
		return nil, fmt.Errorf("encode jwks: %w", err)
	}
	var set api.JWKS
	if err := json.Unmarshal(raw, &set); err != nil {
		return nil, fmt.Errorf("decode jwks: %w", err)
	}
	if set.Keys == nil {
		set.Keys = []api.JWK{}
	}
	return api.GetJWKS200JSONResponse(set), nil
}

// GetUser implements GET /api/auth/v1/user.
func (h *Handlers) GetUser(ctx context.Context, _ api.GetUserRequestObject) (api.GetUserResponseObject, error) {
	p, err := principal.Required(ctx)
	if err != nil {
		return nil, err
	}
	u, t, err := h.svc.User(ctx, p)
	if err != nil {
		return nil, err
	}
	return api.GetUser200JSONResponse(userBody(u, t)), nil
}

// Logout implements POST /api/auth/v1/logout.
func (h *Handlers) Logout(ctx context.Context, req api.LogoutRequestObject) (api.LogoutResponseObject, error) {
	p, err := principal.Required(ctx)
	if err != nil {
		return nil, err
	}
	scope := LogoutLocal
	if req.Params.Scope != nil {
		scope = LogoutScope(*req.Params.Scope)
	}
	if err := h.svc.Logout(ctx, p, scope); err != nil {
		return nil, err
	}
	return api.Logout204Response{}, nil
}

func patBody(p store.PersonalAccessToken) api.PersonalAccessToken {
	return api.PersonalAccessToken{ID: p.ID, Name: p.Name, Prefix: p.Prefix, CreatedAt: p.CreatedAt,
		ExpiresAt: p.ExpiresAt, LastUsedAt: p.LastUsedAt}
}

// CreatePersonalAccessToken implements POST /api/auth/v1/personal-access-tokens.
func (h *Handlers) CreatePersonalAccessToken(ctx context.Context, req api.CreatePersonalAccessTokenRequestObject) (api.CreatePersonalAccessTokenResponseObject, error) {
	p, err := principal.Required(ctx)
	if err != nil {
		return nil, err
	}
	pat, secret, err := h.svc.CreatePAT(ctx, p, req.Body.Name, req.Body.ExpiresAt)
	if err != nil {
		return nil, err
	}
	b := patBody(pat)
	return api.CreatePersonalAccessToken201JSONResponse{ID: b.ID, Name: b.Name, Prefix: b.Prefix, CreatedAt: b.CreatedAt,
		ExpiresAt: b.ExpiresAt, LastUsedAt: b.LastUsedAt, Token: secret}, nil
}

// ListPersonalAccessTokens implements GET /api/auth/v1/personal-access-tokens.
func (h *Handlers) ListPersonalAccessTokens(ctx context.Context, _ api.ListPersonalAccessTokensRequestObject) (api.ListPersonalAccessTokensResponseObject, error) {
	p, err := principal.Required(ctx)
	if err != nil {
		return nil, err
	}
	pats, err := h.svc.ListPATs(ctx, p)
	if err != nil {
		return nil, err
	}
	out := api.ListPersonalAccessTokens200JSONResponse{Data: make([]api.PersonalAccessToken, 0, len(pats))}
	for _, pat := range pats {
		out.Data = append(out.Data, patBody(pat))
	}
	return out, nil
}

// DeletePersonalAccessToken implements DELETE /api/auth/v1/personal-access-tokens/{id}.
func (h *Handlers) DeletePersonalAccessToken(ctx context.Context, req api.DeletePersonalAccessTokenRequestObject) (api.DeletePersonalAccessTokenResponseObject, error) {
	p, err := principal.Required(ctx)
	if err != nil {
		return nil, err
	}
	if err := h.svc.RevokePAT(ctx, p, req.ID); err != nil {
		return nil, err
	}
	return api.DeletePersonalAccessToken204Response{}, nil
}

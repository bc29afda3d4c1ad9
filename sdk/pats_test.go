package sdk_test

import (
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/stratahq/strata/impl/principal"
	"github.com/stratahq/strata/sdk"
)

func TestPersonalAccessTokenLifecycle(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	owner := newUser(t, e, "ada@example.com", principal.TierPro)
	ctx := ctxT(t)

	created, err := owner.CreatePersonalAccessToken(ctx, "ci", time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(created.Token, "strata_pat_") || !strings.HasPrefix(created.Token, created.Prefix) ||
		created.Name != "ci" || created.ExpiresAt != nil {
		t.Fatalf("created %+v", created)
	}
	list, err := owner.PersonalAccessTokens(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 1 || list[0].ID != created.ID || list[0].Name != "ci" || list[0].Prefix != created.Prefix {
		t.Fatalf("list %+v", list)
	}

	// A client with the token acts as the user.
	w := &wire{base: e.Srv.Client().Transport}
	pat := newClient(t, e, w, sdk.WithPersonalAccessToken(created.Token))
	u, err := pat.User(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if string(u.Email) != owner.email {
		t.Fatalf("the token's user: %+v", u)
	}
	f, err := pat.CreateFolder(ctx, sdk.FolderCreate{Name: "From CI"})
	if err != nil {
		t.Fatal(err)
	}
	if got := folderNames(t, owner); len(got) != 1 || got[0] != "From CI" || f.Name != "From CI" {
		t.Fatalf("the owner sees %v", got)
	}

	// ... but cannot manage tokens.
	if _, err := pat.CreatePersonalAccessToken(ctx, "more", time.Time{}); !errors.Is(err, sdk.ErrForbidden) {
		t.Fatalf("create with a token: %v, want ErrForbidden", err)
	}
	if _, err := pat.PersonalAccessTokens(ctx); !errors.Is(err, sdk.ErrForbidden) {
		t.Fatalf("list with a token: %v, want ErrForbidden", err)
	}
	if err := pat.RevokePersonalAccessToken(ctx, created.ID); !errors.Is(err, sdk.ErrForbidden) {
		t.Fatalf("revoke with a token: %v, want ErrForbidden", err)
	}

	// Another user cannot revoke it: it is not theirs to see.
	bob := newUser(t, e, "bob@example.com", principal.TierPro)
	if err := bob.RevokePersonalAccessToken(ctx, created.ID); !errors.Is(err, sdk.ErrNotFound) {
		t.Fatalf("bob revokes ada's token: %v, want ErrNotFound", err)
	}
	if _, err := pat.User(ctx); err != nil {
		t.Fatalf("after bob's attempt: %v", err)
	}

	// Revoked, the token is refused at once.
	if err := owner.RevokePersonalAccessToken(ctx, created.ID); err != nil {
		t.Fatal(err)
	}
	_, err = pat.User(ctx)
	var apiErr *sdk.APIError
	if !errors.Is(err, sdk.ErrUnauthenticated) || !errors.As(err, &apiErr) || apiErr.StatusCode != http.StatusUnauthorized {
		t.Fatalf("a revoked token: %v, want 401 ErrUnauthenticated", err)
	}
	if list, err := owner.PersonalAccessTokens(ctx); err != nil || len(list) != 0 {
		t.Fatalf("after revoking: %+v, %v", list, err)
	}
	if err := owner.RevokePersonalAccessToken(ctx, created.ID); !errors.Is(err, sdk.ErrNotFound) {
		t.Fatalf("revoke twice: %v, want ErrNotFound", err)
	}
	if err := owner.RevokePersonalAccessToken(ctx, uuid.New()); !errors.Is(err, sdk.ErrNotFound) {
		t.Fatalf("revoke an unknown id: %v, want ErrNotFound", err)
	}
}

func TestPersonalAccessTokenExpiry(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	owner := newUser(t, e, "ada@example.com", principal.TierPro)
	ctx := ctxT(t)

	if _, err := owner.CreatePersonalAccessToken(ctx, "late", e.Clock.Now().Add(-time.Minute)); !errors.Is(err, sdk.ErrValidation) {
		t.Fatalf("an expiry in the past: %v, want ErrValidation", err)
	}
	if _, err := owner.CreatePersonalAccessToken(ctx, " ", time.Time{}); !errors.Is(err, sdk.ErrValidation) {
		t.Fatalf("a blank name: %v, want ErrValidation", err)
	}

	expires := e.Clock.Now().Add(time.Hour).Truncate(time.Second)
	created, err := owner.CreatePersonalAccessToken(ctx, "nightly", expires)
	if err != nil {
		t.Fatal(err)
	}
	if created.ExpiresAt == nil || !created.ExpiresAt.Equal(expires) {
		t.Fatalf("expiresAt %v, want %v", created.ExpiresAt, expires)
	}
	pat := newClient(t, e, &wire{base: e.Srv.Client().Transport}, sdk.WithPersonalAccessToken(created.Token))
	if _, err := pat.Folders(ctx); err != nil {
		t.Fatal(err)
	}
	e.Clock.Advance(2 * time.Hour)
	if _, err := pat.Folders(ctx); !errors.Is(err, sdk.ErrUnauthenticated) {
		t.Fatalf("an expired token: %v, want ErrUnauthenticated", err)
	}
}

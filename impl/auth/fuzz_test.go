package auth_test

import (
	"context"
	"strings"
	"testing"

	"github.com/stratahq/strata/impl/auth"
	"github.com/stratahq/strata/impl/principal"
)

// FuzzAuthenticate feeds arbitrary bearer credentials (and Authorization
// headers) to the verification path. It must never panic, and it may accept
// a credential only as the identity of the one genuine token: no input
// forges another user or tenant.
func FuzzAuthenticate(f *testing.F) {
	e := newEnv(f, nil)
	u, tn := e.User("fuzz@example.com", "correct horse", principal.TierFree)
	s := e.SignIn("fuzz@example.com", "correct horse")
	parts := strings.Split(s.AccessToken, ".")
	for _, seed := range []string{
		s.AccessToken,
		parts[0] + "." + parts[1] + ".",
		parts[0] + ".." + parts[2],
		"eyJhbGciOiJub25lIn0.eyJzdWIiOiJ4In0.",
		"strata_pat_" + strings.Repeat("A", 43),
		"Bearer " + s.AccessToken,
		"a.b.c", "...", "", "\x00", strings.Repeat(".", 100),
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, input string) {
		if token, ok := auth.BearerToken("Bearer " + input); ok {
			input = token
		}
		p, err := e.App.Auth().Authenticate(context.Background(), input)
		if err != nil {
			return
		}
		if p.UserID != u.ID || p.TenantID != tn.ID {
			t.Fatalf("input %q authenticated as user %s tenant %s", input, p.UserID, p.TenantID)
		}
	})
}

package auth

import (
	"context"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"github.com/lestrrat-go/jwx/v3/jwa"
	"github.com/lestrrat-go/jwx/v3/jwt"

	"github.com/stratahq/strata/impl/principal"
	"github.com/stratahq/strata/impl/store/sqlite"
)

func benchService(b *testing.B, secret []byte) (*Service, Tokens) {
	b.Helper()
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(b.TempDir(), sqlite.FileName))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = st.Close() })
	svc, err := New(ctx, st, Config{Issuer: "http://bench/api/auth/v1", JWTSecret: secret}, slog.New(slog.DiscardHandler))
	if err != nil {
		b.Fatal(err)
	}
	tn, err := svc.CreateTenant(ctx, "bench", principal.TierPro)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := svc.CreateUser(ctx, tn.ID, "bench@example.com", "correct horse"); err != nil {
		b.Fatal(err)
	}
	tokens, err := svc.PasswordGrant(ctx, "bench@example.com", "correct horse", "127.0.0.1")
	if err != nil {
		b.Fatal(err)
	}
	return svc, tokens
}

// BenchmarkVerify measures bearer verification: ES256 and HS256 signature
// checks with claim validation and the principal lookup (tenant cached), and
// the verified-token cache that repeated requests hit.
func BenchmarkVerify(b *testing.B) {
	ctx := context.Background()
	secret := []byte("an-hs256-secret-of-at-least-32-characters")
	svc, tokens := benchService(b, secret)

	b.Run("ES256", func(b *testing.B) {
		for b.Loop() {
			tok, err := svc.verifyJWT(ctx, tokens.AccessToken)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := svc.principalFromToken(ctx, tok); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("HS256", func(b *testing.B) {
		now := time.Now()
		tok, _ := jwt.NewBuilder().Issuer(svc.cfg.Issuer).Subject(tokens.User.ID.String()).Audience([]string{Audience}).
			IssuedAt(now).Expiration(now.Add(time.Hour)).Claim("tenant_id", tokens.Tenant.ID.String()).Build()
		signed, err := jwt.Sign(tok, jwt.WithKey(jwa.HS256(), secret))
		if err != nil {
			b.Fatal(err)
		}
		raw := string(signed)
		for b.Loop() {
			tok, err := svc.verifyJWT(ctx, raw)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := svc.principalFromToken(ctx, tok); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("cached", func(b *testing.B) {
		if _, err := svc.Authenticate(ctx, tokens.AccessToken); err != nil {
			b.Fatal(err)
		}
		for b.Loop() {
			if _, err := svc.Authenticate(ctx, tokens.AccessToken); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkPasswordGrant measures the password grant at the production
// bcrypt cost: a success (bcrypt + session insert + ES256 signing) and the
// two failures, which must cost the same (no user enumeration by timing).
func BenchmarkPasswordGrant(b *testing.B) {
	ctx := context.Background()
	svc, _ := benchService(b, nil)
	svc.attempts = newAttemptLimiter(func() time.Time { return time.Time{} }) // failures never expire: reset per op below
	cases := map[string][2]string{
		"success":        {"bench@example.com", "correct horse"},
		"wrong-password": {"bench@example.com", "battery staple"},
		"unknown-email":  {"nobody@example.com", "battery staple"},
	}
	for name, c := range cases {
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				svc.attempts.reset("email:" + c[0])
				svc.attempts.reset("ip:bench")
				_, err := svc.PasswordGrant(ctx, c[0], c[1], "bench")
				if (err == nil) != (name == "success") {
					b.Fatalf("%s: err = %v", name, err)
				}
			}
		})
	}
}

package auth

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/base64"
	"fmt"
	"sync"
	"time"

	"github.com/lestrrat-go/jwx/v3/jwa"
	"github.com/lestrrat-go/jwx/v3/jwk"

	"github.com/stratahq/strata/impl/store"
)

// signingKey is a parsed private key with its public JWK.
type signingKey struct {
	kid     string
	alg     jwa.SignatureAlgorithm
	private crypto.Signer
	public  jwk.Key
}

// Keyring holds the access-token signing keys: the newest signs, every key
// not yet retired verifies and is published in the JWKS. Keys live in the
// control-plane store (so `strata keys rotate` and every replica agree) and
// are re-read when the cache is older than cacheTTL or a token names an
// unknown kid (at most once per second).
type Keyring struct {
	store    store.AuthStore
	now      func() time.Time
	cacheTTL time.Duration

	mu         sync.RWMutex
	keys       []*signingKey // newest first
	byKID      map[string]*signingKey
	loadedAt   time.Time
	lastReload time.Time
	jwks       jwk.Set
}

// keyCacheTTL is how long the keyring trusts its copy of the key table.
const keyCacheTTL = 30 * time.Second

// NewKeyring loads the keys, generating the first ES256 key when there is none.
func NewKeyring(ctx context.Context, st store.AuthStore, now func() time.Time) (*Keyring, error) {
	k := &Keyring{store: st, now: now, cacheTTL: keyCacheTTL}
	if err := k.reload(ctx); err != nil {
		return nil, err
	}
	k.mu.RLock()
	empty := len(k.keys) == 0
	k.mu.RUnlock()
	if empty {
		if _, err := RotateKeys(ctx, st, now(), 0); err != nil {
			return nil, err
		}
		if err := k.reload(ctx); err != nil {
			return nil, err
		}
	}
	return k, nil
}

// RotateKeys adds a new ES256 signing key; the keys it replaces stay
// published and accepted for keep (long enough that every token they signed
// has expired) and are then dropped. It returns the new kid.
func RotateKeys(ctx context.Context, st store.AuthStore, now time.Time, keep time.Duration) (string, error) {
	priv, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return "", fmt.Errorf("generate signing key: %w", err)
	}
	der, err := x509.MarshalPKCS8PrivateKey(priv)
	if err != nil {
		return "", fmt.Errorf("encode signing key: %w", err)
	}
	var suffix [6]byte
	if _, err := rand.Read(suffix[:]); err != nil {
		return "", err
	}
	kid := now.UTC().Format("20060102T150405Z") + "-" + base64.RawURLEncoding.EncodeToString(suffix[:])
	key := store.SigningKey{KID: kid, Alg: jwa.ES256().String(), PrivateKey: der, CreatedAt: now}
	if err := st.RotateSigningKeys(ctx, key, now.Add(keep)); err != nil {
		return "", err
	}
	return kid, nil
}

// RetentionAfterRotation is how long a replaced key stays published: every
// token it signed has expired by then, even one signed by a replica whose
// key cache had not yet seen the rotation.
func RetentionAfterRotation(accessTTL, leeway time.Duration) time.Duration {
	return accessTTL + keyCacheTTL + leeway
}

func (k *Keyring) reload(ctx context.Context) error {
	now := k.now()
	stored, err := k.store.SigningKeys(ctx, now)
	if err != nil {
		return fmt.Errorf("load signing keys: %w", err)
	}
	keys := make([]*signingKey, 0, len(stored))
	byKID := make(map[string]*signingKey, len(stored))
	set := jwk.NewSet()
	for _, s := range stored {
		sk, err := parseSigningKey(s)
		if err != nil {
			return err
		}
		keys = append(keys, sk)
		byKID[sk.kid] = sk
		if err := set.AddKey(sk.public); err != nil {
			return fmt.Errorf("jwks: %w", err)
		}
	}
	k.mu.Lock()
	k.keys, k.byKID, k.jwks, k.loadedAt, k.lastReload = keys, byKID, set, now, now
	k.mu.Unlock()
	return nil
}

func parseSigningKey(s store.SigningKey) (*signingKey, error) {
	alg, ok := jwa.LookupSignatureAlgorithm(s.Alg)
	if !ok || alg != jwa.ES256() {
		return nil, fmt.Errorf("signing key %s: unsupported alg %q", s.KID, s.Alg)
	}
	parsed, err := x509.ParsePKCS8PrivateKey(s.PrivateKey)
	if err != nil {
		return nil, fmt.Errorf("signing key %s: %w", s.KID, err)
	}
	priv, ok := parsed.(*ecdsa.PrivateKey)
	if !ok {
		return nil, fmt.Errorf("signing key %s: not an ECDSA key", s.KID)
	}
	pub, err := jwk.Import(priv.Public())
	if err != nil {
		return nil, fmt.Errorf("signing key %s: %w", s.KID, err)
	}
	for name, v := range map[string]any{jwk.KeyIDKey: s.KID, jwk.AlgorithmKey: alg, jwk.KeyUsageKey: "sig"} {
		if err := pub.Set(name, v); err != nil {
			return nil, fmt.Errorf("signing key %s: %w", s.KID, err)
		}
	}
	return &signingKey{kid: s.KID, alg: alg, private: priv, public: pub}, nil
}

// refreshIfStale re-reads the keys when the cache is older than its TTL.
func (k *Keyring) refreshIfStale(ctx context.Context) {
	k.mu.RLock()
	stale := k.now().Sub(k.loadedAt) > k.cacheTTL
	k.mu.RUnlock()
	if stale {
		_ = k.reload(ctx) // keep serving the cached keys if the store hiccups
	}
}

// signer returns the newest key.
func (k *Keyring) signer(ctx context.Context) (*signingKey, error) {
	k.refreshIfStale(ctx)
	k.mu.RLock()
	defer k.mu.RUnlock()
	if len(k.keys) == 0 {
		return nil, fmt.Errorf("no signing key")
	}
	return k.keys[0], nil
}

// lookup returns the key for kid, re-reading the store once (at most once a
// second) when the kid is unknown, so a rotation on another replica is seen.
func (k *Keyring) lookup(ctx context.Context, kid string) (*signingKey, bool) {
	k.refreshIfStale(ctx)
	k.mu.RLock()
	key, ok := k.byKID[kid]
	recent := k.now().Sub(k.lastReload) < time.Second
	k.mu.RUnlock()
	if ok || recent {
		return key, ok
	}
	k.mu.Lock()
	k.lastReload = k.now()
	k.mu.Unlock()
	if err := k.reload(ctx); err != nil {
		return nil, false
	}
	k.mu.RLock()
	defer k.mu.RUnlock()
	key, ok = k.byKID[kid]
	return key, ok
}

// JWKS returns the public key set: public keys only, never secrets.
func (k *Keyring) JWKS(ctx context.Context) jwk.Set {
	k.refreshIfStale(ctx)
	k.mu.RLock()
	defer k.mu.RUnlock()
	return k.jwks
}

// RotateKeys adds a new signing key to the service's store (see the package
// function RotateKeys) and reloads the keyring.
func (s *Service) RotateKeys(ctx context.Context, now time.Time, keep time.Duration) (string, error) {
	kid, err := RotateKeys(ctx, s.store, now, keep)
	if err != nil {
		return "", err
	}
	return kid, s.keys.reload(ctx)
}

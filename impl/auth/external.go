package auth

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/lestrrat-go/httprc/v3"
	"github.com/lestrrat-go/jwx/v3/jwa"
	"github.com/lestrrat-go/jwx/v3/jwk"
)

// externalRefetchInterval is the least time between two refetches of the
// external JWKS triggered by unknown kids, so that tokens with made-up kids
// cannot make us hammer the identity provider.
const externalRefetchInterval = 10 * time.Second

// externalKeys is an external identity provider's JWKS, fetched and kept
// fresh by jwx's cache; an unknown kid triggers at most one refetch per
// externalRefetchInterval.
type externalKeys struct {
	url   string
	cache *jwk.Cache
	now   func() time.Time

	mu          sync.Mutex
	lastRefetch time.Time
}

func newExternalKeys(ctx context.Context, url string, now func() time.Time) (*externalKeys, error) {
	// Only the configured URL may be fetched.
	client := httprc.NewClient(httprc.WithWhitelist(httprc.WhitelistFunc(func(u string) bool { return u == url })))
	cache, err := jwk.NewCache(ctx, client)
	if err != nil {
		return nil, fmt.Errorf("jwks cache: %w", err)
	}
	// Do not wait for the first fetch: an IdP that is down at start must not
	// stop the server; lookups fail until it answers.
	if err := cache.Register(ctx, url, jwk.WithMinInterval(time.Minute), jwk.WithWaitReady(false)); err != nil {
		return nil, fmt.Errorf("register jwks %s: %w", url, err)
	}
	return &externalKeys{url: url, cache: cache, now: now}, nil
}

// lookup returns the public key for kid and the algorithm it is for. Keys
// without an "alg" are refused: inferring the algorithm from the token would
// let the token choose it.
func (e *externalKeys) lookup(ctx context.Context, kid string) (any, jwa.SignatureAlgorithm, bool) {
	if key, alg, ok := e.find(ctx, kid, false); ok {
		return key, alg, true
	}
	e.mu.Lock()
	allowed := e.now().Sub(e.lastRefetch) >= externalRefetchInterval
	if allowed {
		e.lastRefetch = e.now()
	}
	e.mu.Unlock()
	if !allowed {
		return nil, jwa.SignatureAlgorithm{}, false
	}
	return e.find(ctx, kid, true)
}

func (e *externalKeys) find(ctx context.Context, kid string, refresh bool) (any, jwa.SignatureAlgorithm, bool) {
	var set jwk.Set
	var err error
	if refresh {
		set, err = e.cache.Refresh(ctx, e.url)
	} else {
		set, err = e.cache.Lookup(ctx, e.url)
	}
	if err != nil || set == nil {
		return nil, jwa.SignatureAlgorithm{}, false
	}
	key, ok := set.LookupKeyID(kid)
	if !ok {
		return nil, jwa.SignatureAlgorithm{}, false
	}
	keyAlg, ok := key.Algorithm()
	if !ok {
		return nil, jwa.SignatureAlgorithm{}, false
	}
	alg, ok := jwa.LookupSignatureAlgorithm(keyAlg.String())
	if !ok || (alg != jwa.ES256() && alg != jwa.RS256()) {
		return nil, jwa.SignatureAlgorithm{}, false
	}
	// Only ever verify with the public half, whatever the IdP published.
	pub, err := jwk.PublicKeyOf(key)
	if err != nil {
		return nil, jwa.SignatureAlgorithm{}, false
	}
	var raw any
	if err := jwk.Export(pub, &raw); err != nil {
		return nil, jwa.SignatureAlgorithm{}, false
	}
	return raw, alg, true
}

func (e *externalKeys) close(ctx context.Context) error {
	return e.cache.Shutdown(ctx)
}

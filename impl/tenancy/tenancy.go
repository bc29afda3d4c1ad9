// Package tenancy enforces what a tenant or user may do per unit of time:
// the X-Tenant-Id check of data-platform requests, per-minute quotas by tier
// (data platform per tenant, content per user, counted separately) and the
// per-tenant concurrency limit of /query and /schema.
//
// Limits are kept in process. With several replicas each enforces its own
// share; a shared store (PostgreSQL or Redis) is the planned next step.
package tenancy

import (
	"log/slog"
	"math"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
	"golang.org/x/time/rate"

	"github.com/stratahq/strata/impl/apierrors"
	"github.com/stratahq/strata/impl/httpx"
	"github.com/stratahq/strata/impl/principal"
)

// Quotas of spec section 8: requests per minute by tier.
var (
	dataPlatformPerMinute = map[principal.Tier]int{principal.TierFree: 30, principal.TierPro: 300}
	contentPerMinute      = map[principal.Tier]int{principal.TierFree: 60, principal.TierPro: 600}
)

// MaxConcurrentQueries is the per-tenant limit on /query and /schema in flight.
const MaxConcurrentQueries = 5

// TenantHeader carries the tenant on data-platform requests.
const TenantHeader = "X-Tenant-Id"

// maxBuckets bounds the quota table; beyond it, idle (full) buckets go.
const maxBuckets = 50000

// Limiter holds the quota buckets and concurrency counters.
type Limiter struct {
	now func() time.Time

	mu       sync.Mutex
	buckets  map[string]*rate.Limiter
	inFlight map[uuid.UUID]int
}

// NewLimiter returns a limiter reading time from now (time.Now when nil).
func NewLimiter(now func() time.Time) *Limiter {
	if now == nil {
		now = time.Now
	}
	return &Limiter{now: now, buckets: map[string]*rate.Limiter{}, inFlight: map[uuid.UUID]int{}}
}

// Quota is the state of one bucket after a request was counted.
type Quota struct {
	Limit     int
	Remaining int
	// Reset is when the bucket is full again; RetryAfter when the next
	// request would pass (zero if it would now).
	Reset      time.Duration
	RetryAfter time.Duration
	Allowed    bool
}

// Take counts one request against key's per-minute quota. The bucket holds
// perMinute requests and refills continuously (token bucket), so a client
// may burst up to the quota and then proceeds at the quota's rate.
func (l *Limiter) Take(key string, perMinute int) Quota {
	now := l.now()
	l.mu.Lock()
	defer l.mu.Unlock()
	b, ok := l.buckets[key]
	if !ok {
		if len(l.buckets) >= maxBuckets {
			l.evictFull(now)
		}
		b = rate.NewLimiter(rate.Limit(float64(perMinute)/60), perMinute)
		l.buckets[key] = b
	}
	allowed := b.AllowN(now, 1)
	tokens := b.TokensAt(now)
	perSecond := float64(perMinute) / 60
	q := Quota{Limit: perMinute, Remaining: max(0, int(math.Floor(tokens))), Allowed: allowed,
		Reset: seconds((float64(perMinute) - tokens) / perSecond)}
	if !allowed {
		q.RetryAfter = seconds((1 - tokens) / perSecond)
	}
	return q
}

func seconds(s float64) time.Duration {
	if s < 0 {
		return 0
	}
	return time.Duration(s * float64(time.Second))
}

// evictFull drops buckets that are full again: forgetting them changes nothing.
func (l *Limiter) evictFull(now time.Time) {
	for k, b := range l.buckets {
		if b.TokensAt(now) >= float64(b.Burst()) {
			delete(l.buckets, k)
		}
	}
}

// Acquire takes one of the tenant's concurrency slots; release gives it back.
func (l *Limiter) Acquire(tenant uuid.UUID) (release func(), ok bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.inFlight[tenant] >= MaxConcurrentQueries {
		return nil, false
	}
	l.inFlight[tenant]++
	var once sync.Once
	return func() {
		once.Do(func() {
			l.mu.Lock()
			defer l.mu.Unlock()
			if l.inFlight[tenant]--; l.inFlight[tenant] <= 0 {
				delete(l.inFlight, tenant)
			}
		})
	}, true
}

// concurrencyLimited are the operations under the per-tenant concurrency limit.
var concurrencyLimited = map[string]bool{"runQuery": true, "getSchema": true}

// Middleware checks, in the order of DECISIONS.md, after authentication:
// the tenant of data-platform requests (403 forbidden), then the quota and
// concurrency limits (429 RATE_LIMITED with Retry-After and RateLimit-*).
// Requests without a principal (public operations) pass untouched.
func (l *Limiter) Middleware(logger *slog.Logger) httpx.Middleware {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			p, ok := principal.From(r.Context())
			route, _ := httpx.RouteFrom(r.Context())
			if !ok || route == nil {
				next.ServeHTTP(w, r)
				return
			}
			var quota Quota
			switch {
			case strings.HasPrefix(route.Path, "/api/data-platform/"):
				if !tenantMatches(r.Header.Values(TenantHeader), p.TenantID) {
					apierrors.Write(w, r, logger, apierrors.New(http.StatusForbidden, apierrors.CodeForbidden,
						"the %s header must be present and equal to the tenant of the token", TenantHeader))
					return
				}
				quota = l.Take("dp:"+p.TenantID.String(), tierLimit(dataPlatformPerMinute, p.Tier))
			case route.Path == "/api/content" || strings.HasPrefix(route.Path, "/api/content/"):
				quota = l.Take("content:"+p.UserID.String(), tierLimit(contentPerMinute, p.Tier))
			default:
				next.ServeHTTP(w, r)
				return
			}
			setQuotaHeaders(w.Header(), quota)
			if !quota.Allowed {
				apierrors.Write(w, r, logger, apierrors.RateLimited(quota.Limit, quota.RetryAfter,
					"rate limit of %d requests per minute exceeded", quota.Limit))
				return
			}
			if concurrencyLimited[route.Operation.OperationID] {
				release, ok := l.Acquire(p.TenantID)
				if !ok {
					apierrors.Write(w, r, logger, apierrors.RateLimited(MaxConcurrentQueries, time.Second,
						"at most %d concurrent /query and /schema requests per tenant", MaxConcurrentQueries))
					return
				}
				defer release()
			}
			next.ServeHTTP(w, r)
		})
	}
}

func tierLimit(limits map[principal.Tier]int, tier principal.Tier) int {
	if n, ok := limits[tier]; ok {
		return n
	}
	return limits[principal.TierFree]
}

// tenantMatches reports whether the request names exactly one tenant, the
// caller's: a repeated header is refused like a wrong one (403), whatever
// its order, so that the validator never sees it.
func tenantMatches(values []string, tenant uuid.UUID) bool {
	if len(values) != 1 {
		return false
	}
	id, err := uuid.Parse(strings.TrimSpace(values[0]))
	return err == nil && id == tenant
}

func setQuotaHeaders(h http.Header, q Quota) {
	h.Set("RateLimit-Limit", strconv.Itoa(q.Limit))
	h.Set("RateLimit-Remaining", strconv.Itoa(q.Remaining))
	h.Set("RateLimit-Reset", strconv.Itoa(int(math.Ceil(q.Reset.Seconds()))))
}

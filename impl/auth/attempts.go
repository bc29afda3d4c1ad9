package auth

import (
	"strings"
	"sync"
	"time"
)

// Brute-force limits of the password grant: failures per email address and
// per client IP within a window.
const (
	maxFailuresPerEmail = 10
	emailFailureWindow  = 5 * time.Minute
	maxFailuresPerIP    = 10
	ipFailureWindow     = time.Minute
	// Sign-ups (each creates a tenant) per client IP per hour.
	maxSignupsPerIP = 20
	signupWindow    = time.Hour
)

// attemptLimiter counts failed sign-ins per key ("email:…", "ip:…") in a
// sliding window. In-process: with several replicas each counts its own
// (noted for the PostgreSQL-backed deployment).
type attemptLimiter struct {
	now func() time.Time

	mu       sync.Mutex
	failures map[string][]time.Time
}

func newAttemptLimiter(now func() time.Time) *attemptLimiter {
	return &attemptLimiter{now: now, failures: map[string][]time.Time{}}
}

func limitFor(key string) (int, time.Duration) {
	switch {
	case strings.HasPrefix(key, "ip:"):
		return maxFailuresPerIP, ipFailureWindow
	case strings.HasPrefix(key, "signup:"):
		return maxSignupsPerIP, signupWindow
	}
	return maxFailuresPerEmail, emailFailureWindow
}

// blocked reports whether any key has used up its failures, and how long
// until the oldest failure that blocks leaves the window.
func (a *attemptLimiter) blocked(keys ...string) (time.Duration, bool) {
	now := a.now()
	a.mu.Lock()
	defer a.mu.Unlock()
	var wait time.Duration
	for _, key := range keys {
		max, window := limitFor(key)
		recent := a.prune(key, now, window)
		if len(recent) >= max {
			if w := recent[len(recent)-max].Add(window).Sub(now); w > wait {
				wait = w
			}
		}
	}
	return wait, wait > 0
}

// fail records a failure for every key.
func (a *attemptLimiter) fail(keys ...string) {
	now := a.now()
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(a.failures) > 100000 {
		a.sweep(now)
	}
	for _, key := range keys {
		a.failures[key] = append(a.failures[key], now)
	}
}

// reset forgets a key's failures (after a successful sign-in).
func (a *attemptLimiter) reset(key string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	delete(a.failures, key)
}

// prune drops failures older than window and returns the rest. Caller holds mu.
func (a *attemptLimiter) prune(key string, now time.Time, window time.Duration) []time.Time {
	list := a.failures[key]
	i := 0
	for i < len(list) && !list[i].After(now.Add(-window)) {
		i++
	}
	if i == len(list) {
		delete(a.failures, key)
		return nil
	}
	list = list[i:]
	a.failures[key] = list
	return list
}

// sweep prunes every key, bounding memory under a spray of distinct keys.
func (a *attemptLimiter) sweep(now time.Time) {
	for key := range a.failures {
		_, window := limitFor(key)
		a.prune(key, now, window)
	}
}

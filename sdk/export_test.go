package sdk

import (
	"context"
	"time"
)

// Test hooks for the external test package: the client's clock and how it
// waits. Compiled into tests only.

// SetClock makes s read the time from now (token expiry, Retry-After dates).
func SetClock(s *Client, now func() time.Time) { s.now = now }

// SetSleep makes s wait with sleep (retries, WaitSync, reconnects).
func SetSleep(s *Client, sleep func(ctx context.Context, d time.Duration) error) { s.sleep = sleep }

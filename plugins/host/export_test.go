package host

import "time"

// SetClock replaces the clock of h; for tests of the Spec cache.
func SetClock(h *Host, now func() time.Time) { h.now = now }

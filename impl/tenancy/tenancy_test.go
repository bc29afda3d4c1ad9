package tenancy_test

import (
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/stratahq/strata/impl/tenancy"
)

func TestConcurrencySlots(t *testing.T) {
	t.Parallel()
	l := tenancy.NewLimiter(nil)
	a, b := uuid.New(), uuid.New()
	var releases []func()
	for i := range tenancy.MaxConcurrentQueries {
		release, ok := l.Acquire(a)
		if !ok {
			t.Fatalf("slot %d refused", i+1)
		}
		releases = append(releases, release)
	}
	if _, ok := l.Acquire(a); ok {
		t.Fatal("6th concurrent slot granted")
	}
	if release, ok := l.Acquire(b); !ok {
		t.Fatal("another tenant was blocked by this one")
	} else {
		release()
	}
	releases[0]()
	releases[0]() // releasing twice must not free a second slot
	if _, ok := l.Acquire(a); !ok {
		t.Fatal("slot not freed by release")
	}
	if _, ok := l.Acquire(a); ok {
		t.Fatal("double release freed two slots")
	}
}

func TestQuotaRefillsAtTheQuotaRate(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	l := tenancy.NewLimiter(func() time.Time { return now })
	for i := range 30 {
		if q := l.Take("k", 30); !q.Allowed || q.Remaining != 29-i {
			t.Fatalf("request %d: %+v", i+1, q)
		}
	}
	q := l.Take("k", 30)
	if q.Allowed || q.RetryAfter != 2*time.Second || q.Reset != time.Minute {
		t.Fatalf("31st: %+v", q)
	}
	now = now.Add(time.Second)
	if q := l.Take("k", 30); q.Allowed {
		t.Fatalf("after 1 s: %+v (one request per 2 s)", q)
	}
	now = now.Add(time.Second)
	if q := l.Take("k", 30); !q.Allowed {
		t.Fatalf("after 2 s: %+v", q)
	}
}

package sdk_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stratahq/strata/impl/principal"
	"github.com/stratahq/strata/impl/testenv"
	"github.com/stratahq/strata/sdk"
)

// sleeper replaces the client's waiting: it records each wait and moves
// the server's clock instead of sleeping, so a retry after Retry-After
// finds the quota refilled.
type sleeper struct {
	mu    sync.Mutex
	waits []time.Duration
	env   *testenv.Env // nil: do not move a clock
}

func (s *sleeper) sleep(ctx context.Context, d time.Duration) error {
	s.mu.Lock()
	s.waits = append(s.waits, d)
	s.mu.Unlock()
	if s.env != nil {
		s.env.Clock.Advance(d)
	}
	return ctx.Err()
}

func (s *sleeper) got() []time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]time.Duration(nil), s.waits...)
}

// exhausted returns a free-tier user whose data-platform quota is used up,
// with the Retry-After of the refusal.
func exhausted(t *testing.T) (*client, time.Duration) {
	t.Helper()
	e := newEnv(t)
	c := newUser(t, e, "ada@example.com", principal.TierFree, sdk.WithRetries(0, 0))
	ctx := ctxT(t)
	var err error
	for i := 0; i < 40 && err == nil; i++ {
		_, err = c.Connectors(ctx)
	}
	var apiErr *sdk.APIError
	if !errors.As(err, &apiErr) || apiErr.StatusCode != 429 || apiErr.RetryAfter < time.Second {
		t.Fatalf("err %v, want 429 with Retry-After", err)
	}
	return c, apiErr.RetryAfter
}

// retrying is a second client of the same user, with retries and s.
func retrying(t *testing.T, c *client, s *sleeper, opts ...sdk.Option) (*sdk.Client, *wire) {
	w := &wire{base: c.env.Srv.Client().Transport}
	r := newClient(t, c.env, w, append([]sdk.Option{sdk.WithPassword(c.email, password)}, opts...)...)
	sdk.SetSleep(r, s.sleep)
	return r, w
}

func TestRetryHonoursRetryAfter(t *testing.T) {
	t.Parallel()
	c, retryAfter := exhausted(t)
	s := &sleeper{env: c.env}
	r, w := retrying(t, c, s)
	ctx := ctxT(t)
	if _, err := r.Connectors(ctx); err != nil {
		t.Fatal(err)
	}
	if got := s.got(); len(got) != 1 || got[0] != retryAfter {
		t.Fatalf("waited %v, want [%v] (Retry-After)", got, retryAfter)
	}
	if w.count("GET /api/data-platform/connectors 429") != 1 || w.count("GET /api/data-platform/connectors 200") != 1 {
		t.Fatalf("want one refusal, one success:\n%s", w)
	}
	// Query is a POST, but read-only: it is retried too. (The retry above
	// took the one request the quota had regained.)
	if _, err := r.Query(ctx, "SELECT 1", nil); err != nil {
		t.Fatal(err)
	}
	if w.count("POST /api/data-platform/query 429") == 0 || w.count("POST /api/data-platform/query 200") != 1 {
		t.Fatalf("query not retried:\n%s", w)
	}
}

func TestNoRetryForPost(t *testing.T) {
	t.Parallel()
	c, _ := exhausted(t)
	s := &sleeper{env: c.env}
	r, w := retrying(t, c, s)
	ctx := ctxT(t)
	if _, err := r.Sync(ctx); !errors.Is(err, sdk.ErrRateLimited) {
		t.Fatalf("err %v, want ErrRateLimited", err)
	}
	if n := w.count("POST /api/data-platform/sync"); n != 1 || len(s.got()) != 0 {
		t.Fatalf("POST /sync sent %d times, waits %v", n, s.got())
	}
	// Marked idempotent by the caller, it is retried.
	if _, err := r.Sync(sdk.Idempotent(ctx)); err != nil {
		t.Fatal(err)
	}
	if n := w.count("POST /api/data-platform/sync"); n != 3 || len(s.got()) != 1 {
		t.Fatalf("POST /sync sent %d times in all, waits %v:\n%s", n, s.got(), w)
	}
}

// A Retry-After beyond what the client may wait, or beyond ctx's deadline,
// is not waited for: the 429 comes back at once.
func TestRetryAfterTooLong(t *testing.T) {
	t.Parallel()
	c, retryAfter := exhausted(t)
	s := &sleeper{}
	ctx := ctxT(t)

	r, _ := retrying(t, c, s, sdk.WithMaxRetryWait(retryAfter-time.Millisecond))
	_, err := r.Connectors(ctx)
	var apiErr *sdk.APIError
	if !errors.As(err, &apiErr) || apiErr.RetryAfter != retryAfter {
		t.Fatalf("err %v, want the 429", err)
	}
	short, cancel := context.WithTimeout(ctx, retryAfter/2)
	defer cancel()
	r2, _ := retrying(t, c, s)
	if _, err := r2.Connectors(short); !errors.Is(err, sdk.ErrRateLimited) {
		t.Fatalf("err %v, want ErrRateLimited before the deadline", err)
	}
	if got := s.got(); len(got) != 0 {
		t.Fatalf("waited %v", got)
	}
}

func TestRetriesRunOut(t *testing.T) {
	t.Parallel()
	c, retryAfter := exhausted(t)
	s := &sleeper{} // the server's clock stands still: every retry is refused
	r, w := retrying(t, c, s, sdk.WithRetries(2, time.Millisecond))
	if _, err := r.Connectors(ctxT(t)); !errors.Is(err, sdk.ErrRateLimited) {
		t.Fatalf("err %v", err)
	}
	if n := w.count("GET /api/data-platform/connectors 429"); n != 3 {
		t.Fatalf("%d attempts, want 3", n)
	}
	if got := s.got(); len(got) != 2 || got[0] != retryAfter {
		t.Fatalf("waits %v", got)
	}
}

// Without Retry-After (a proxy's bare 503), the client backs off
// exponentially with jitter.
func TestBackoffWithoutRetryAfter(t *testing.T) {
	t.Parallel()
	var calls atomic.Int32
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1) <= 3 {
			w.Header().Set("Content-Type", "text/html")
			w.WriteHeader(http.StatusServiceUnavailable)
			_, _ = w.Write([]byte("<html>upstream unavailable</html>"))
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`[]`))
	}))
	defer proxy.Close()
	c, err := sdk.New(proxy.URL, sdk.WithToken("t"), sdk.WithTenant("0b9e8f7a-6d5c-4b3a-9f1e-2d3c4b5a6f70"),
		sdk.WithRetries(2, 100*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	s := &sleeper{}
	sdk.SetSleep(c, s.sleep)
	_, err = c.Connectors(ctxT(t))
	var apiErr *sdk.APIError
	if !errors.Is(err, sdk.ErrServiceUnavailable) || !errors.As(err, &apiErr) || apiErr.Message != "<html>upstream unavailable</html>" {
		t.Fatalf("err %v", err)
	}
	got := s.got()
	if len(got) != 2 || got[0] < 50*time.Millisecond || got[0] > 100*time.Millisecond ||
		got[1] < 100*time.Millisecond || got[1] > 200*time.Millisecond {
		t.Fatalf("waits %v, want ~[50..100ms, 100..200ms]", got)
	}
	if _, err := c.Connectors(ctxT(t)); err != nil { // 4th call: answered
		t.Fatal(err)
	}
}

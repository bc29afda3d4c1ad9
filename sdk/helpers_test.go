package sdk_test

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stratahq/strata/impl/principal"
	"github.com/stratahq/strata/impl/server"
	"github.com/stratahq/strata/impl/testenv"
	"github.com/stratahq/strata/sdk"
)

// pluginDir holds the example_numbers connector plugin, built once, so that
// syncs have something real to run.
var pluginDir string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "strata-sdk-plugins-")
	if err != nil {
		panic(err)
	}
	pluginDir = dir
	build := exec.Command("go", "build", "-o", filepath.Join(dir, "strata-connector-example_numbers"),
		"github.com/stratahq/strata/plugins/examples/numbers")
	if out, err := build.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "build the example_numbers plugin: %v\n%s", err, out)
		os.Exit(1)
	}
	code := m.Run()
	examples.cleanup()
	_ = os.RemoveAll(dir)
	os.Exit(code)
}

// serverConfig is the configuration every test server shares: the plugin,
// quick WebSocket expiry checks, and a transcriber that fails at once
// instead of running the local speech model on test audio.
func serverConfig(c *server.Config) {
	c.PluginDir = pluginDir
	c.Events.ExpiryCheck = 10 * time.Millisecond
	c.Pipeline.TranscribeURL = "http://127.0.0.1:1/v1/audio/transcriptions"
}

const password = "correct horse battery staple"

// newEnv starts a real server for one test.
func newEnv(t testing.TB) *testenv.Env {
	t.Helper()
	return testenv.New(t, serverConfig)
}

// wire records the requests a client sends, as the server sees them.
type wire struct {
	base http.RoundTripper

	mu       sync.Mutex
	requests []string // "METHOD /path?query status"
	onSend   func(*http.Request)
}

func (w *wire) RoundTrip(req *http.Request) (*http.Response, error) {
	if w.onSend != nil {
		w.onSend(req)
	}
	rsp, err := w.base.RoundTrip(req)
	status := "error"
	if err == nil {
		status = fmt.Sprint(rsp.StatusCode)
	}
	line := req.Method + " " + req.URL.RequestURI() + " " + status
	w.mu.Lock()
	w.requests = append(w.requests, line)
	w.mu.Unlock()
	return rsp, err
}

// count returns how many requests contain all of parts.
func (w *wire) count(parts ...string) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := 0
next:
	for _, r := range w.requests {
		for _, p := range parts {
			if !strings.Contains(r, p) {
				continue next
			}
		}
		n++
	}
	return n
}

func (w *wire) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return strings.Join(w.requests, "\n")
}

// client is a test's view of one user: an SDK client and the wire under it.
type client struct {
	*sdk.Client
	wire   *wire
	env    *testenv.Env
	email  string
	tenant string
}

// newUser creates a user with a tenant of the given tier and an SDK client
// that signs in with its password.
func newUser(t testing.TB, e *testenv.Env, email string, tier principal.Tier, opts ...sdk.Option) *client {
	t.Helper()
	_, tn := e.User(email, password, tier)
	w := &wire{base: e.Srv.Client().Transport}
	all := append([]sdk.Option{sdk.WithPassword(email, password), sdk.WithHTTPClient(&http.Client{Transport: w})}, opts...)
	c, err := sdk.New(e.Srv.URL, all...)
	if err != nil {
		t.Fatal(err)
	}
	return &client{Client: c, wire: w, env: e, email: email, tenant: tn.ID.String()}
}

// newClient is another SDK client over the same wire recorder.
func newClient(t testing.TB, e *testenv.Env, w *wire, opts ...sdk.Option) *sdk.Client {
	t.Helper()
	c, err := sdk.New(e.Srv.URL, append([]sdk.Option{sdk.WithHTTPClient(&http.Client{Transport: w})}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// localClock is a client-side clock the test moves, starting at the real
// time (the server's test clock starts elsewhere: the SDK never compares
// the two).
type localClock struct {
	mu     sync.Mutex
	offset time.Duration
}

func (c *localClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return time.Now().Add(c.offset)
}

func (c *localClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.offset += d
}

func ctxT(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// wavBytes is a WAV file of n samples of silence.
var wavBytes = testenv.SilentWAV

// ── a server for the examples ──────────────────────────────────────────

// exampleTB is the part of testing.TB that testenv uses, for examples,
// which have no *testing.T. Anything else panics (the embedded nil TB).
type exampleTB struct {
	testing.TB
	mu       sync.Mutex
	cleanups []func()
}

func (t *exampleTB) Helper() {}

func (t *exampleTB) TempDir() string {
	dir, err := os.MkdirTemp("", "strata-example-")
	if err != nil {
		panic(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	return dir
}

func (t *exampleTB) Cleanup(f func()) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.cleanups = append(t.cleanups, f)
}

func (t *exampleTB) Fatal(args ...any) { panic(fmt.Sprint(args...)) }

func (t *exampleTB) Fatalf(format string, args ...any) { panic(fmt.Sprintf(format, args...)) }

func (t *exampleTB) cleanup() {
	t.mu.Lock()
	fs := t.cleanups
	t.cleanups = nil
	t.mu.Unlock()
	for i := len(fs) - 1; i >= 0; i-- {
		fs[i]()
	}
}

var examples exampleTB

// exampleServer starts a Strata server in this process for one example and
// returns its base URL; it knows the user ada@example.com with the
// password "correct horse battery staple" (tier pro). A real program uses
// its deployment's URL, e.g. http://127.0.0.1:8080 for `make run`.
func exampleServer() string {
	e := testenv.New(&examples, func(c *server.Config) {
		serverConfig(c)
		c.Now = time.Now // a real clock, like a real server
	})
	e.User("ada@example.com", password, principal.TierPro)
	return e.Srv.URL
}

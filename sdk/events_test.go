package sdk_test

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stratahq/strata/impl/principal"
	"github.com/stratahq/strata/impl/testenv"
	"github.com/stratahq/strata/sdk"
)

// waitEvent returns the first event on ch that ok accepts, checking on the
// way that ids only increase (nothing is delivered twice).
func waitEvent(t *testing.T, ch <-chan sdk.Event, last *int64, ok func(sdk.Event) bool) sdk.Event {
	t.Helper()
	timeout := time.After(15 * time.Second)
	for {
		select {
		case ev, open := <-ch:
			if !open {
				t.Fatal("the event channel closed")
			}
			if ev.Type == sdk.EventError {
				t.Fatalf("stream gave up: %v", ev.Err)
			}
			id, err := strconv.ParseInt(ev.ID, 10, 64)
			if err != nil || id <= *last {
				t.Fatalf("event id %q after %d", ev.ID, *last)
			}
			*last = id
			if ok(ev) {
				return ev
			}
		case <-timeout:
			t.Fatal("no such event within 15 s")
		}
	}
}

func created(title string) func(sdk.Event) bool {
	return func(ev sdk.Event) bool { return ev.Type == sdk.ContentCreated && ev.Item.Title == title }
}

// waitClosed drains ch until it closes and returns the last event.
func waitClosed(t *testing.T, ch <-chan sdk.Event) (last sdk.Event) {
	t.Helper()
	timeout := time.After(15 * time.Second)
	for {
		select {
		case ev, open := <-ch:
			if !open {
				return last
			}
			last = ev
		case <-timeout:
			t.Fatal("the event channel did not close")
		}
	}
}

// proxy forwards TCP connections to the server and can cut them all, as a
// network failure would.
type proxy struct {
	ln     net.Listener
	target string
	mu     sync.Mutex
	conns  []net.Conn
	ready  int // "ready" messages the server sent, over all connections
}

func newProxy(t *testing.T, target string) *proxy {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &proxy{ln: ln, target: target}
	t.Cleanup(func() { _ = ln.Close(); p.cut() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			up, err := net.Dial("tcp", target)
			if err != nil {
				_ = c.Close()
				continue
			}
			p.mu.Lock()
			p.conns = append(p.conns, c, up)
			p.mu.Unlock()
			go func() { _, _ = io.Copy(up, c); _ = up.Close() }()
			go func() { p.copyDown(c, up); _ = c.Close() }()
		}
	}()
	return p
}

// copyDown forwards the server's bytes, counting its ready messages (the
// server's frames are not masked, so their text is in the clear).
func (p *proxy) copyDown(c, up net.Conn) {
	var seen []byte
	buf := make([]byte, 32<<10)
	for {
		n, err := up.Read(buf)
		if n > 0 {
			before := strings.Count(string(seen), `"type":"ready"`)
			seen = append(seen, buf[:n]...)
			p.mu.Lock()
			p.ready += strings.Count(string(seen), `"type":"ready"`) - before
			p.mu.Unlock()
			if _, werr := c.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

func (p *proxy) readies() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.ready
}

func (p *proxy) URL() string { return "http://" + p.ln.Addr().String() }

func (p *proxy) cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.conns {
		_ = c.Close()
	}
	p.conns = nil
}

// The connection drops: the stream reconnects and resumes after the last
// event it delivered.
func TestEventsResumeAfterConnectionLoss(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.User("ada@example.com", password, principal.TierPro)
	p := newProxy(t, e.Srv.Listener.Addr().String())
	w := &wire{base: &http.Transport{}}
	c, err := sdk.New(p.URL(), sdk.WithPassword("ada@example.com", password), sdk.WithHTTPClient(&http.Client{Transport: w}))
	if err != nil {
		t.Fatal(err)
	}
	ctx := ctxT(t)
	events, err := c.Events(ctx, sdk.EventsOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var last int64
	if _, err := c.CreateNote(ctx, sdk.NoteCreate{Body: "before"}); err != nil {
		t.Fatal(err)
	}
	before := waitEvent(t, events, &last, created("before"))

	p.cut()
	// Straight to the server: the client's idle connections were cut too,
	// and a POST is not sent again on a fresh one.
	sess, _ := c.Session()
	if r := e.Call("POST", "/api/content/notes", `{"body":"during"}`, testenv.Bearer(sess.AccessToken)...); r.Status != 201 {
		t.Fatalf("create: %d %s", r.Status, r.Body)
	}
	waitEvent(t, events, &last, created("during"))
	if _, err := c.CreateNote(ctx, sdk.NoteCreate{Body: "after"}); err != nil {
		t.Fatal(err)
	}
	waitEvent(t, events, &last, created("after"))

	if n := w.count("GET /api/content/events"); n != 2 {
		t.Fatalf("%d connections, want 2:\n%s", n, w)
	}
	id, _ := strconv.ParseInt(before.ID, 10, 64)
	resumed := false
	for i := id; i <= last; i++ {
		resumed = resumed || w.count("GET /api/content/events?since="+strconv.FormatInt(i, 10)+" 101") == 1
	}
	if !resumed {
		t.Fatalf("no reconnection resumed after event %s:\n%s", before.ID, w)
	}
	if strings.Contains(w.String(), "token=") {
		t.Fatalf("a token in a URL:\n%s", w)
	}
}

// The server closes with 4401 when the token expires: the stream refreshes
// the session and resumes.
func TestEventsRenewAfter4401(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	c := newUser(t, e, "ada@example.com", principal.TierPro)
	ctx := ctxT(t)
	events, err := c.Events(ctx, sdk.EventsOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var last int64
	if _, err := c.CreateNote(ctx, sdk.NoteCreate{Body: "one"}); err != nil {
		t.Fatal(err)
	}
	waitEvent(t, events, &last, created("one"))
	// The server's clock passes the token's expiry (the client's does not):
	// the server closes with 4401, the stream refreshes and reconnects.
	e.Clock.Advance(61 * time.Minute)
	deadline := time.Now().Add(10 * time.Second)
	for c.wire.count("GET /api/content/events?since=") == 0 {
		if time.Now().After(deadline) {
			t.Fatalf("no reconnection:\n%s", c.wire)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if _, err := c.CreateNote(ctx, sdk.NoteCreate{Body: "two"}); err != nil {
		t.Fatal(err)
	}
	waitEvent(t, events, &last, created("two"))
	if c.wire.count(refreshGrant, " 200") != 1 || c.wire.count("GET /api/content/events") != 2 {
		t.Fatalf("want one refresh and two connections:\n%s", c.wire)
	}
}

// A token renewed by another request is sent on the open connection: the
// server keeps the stream open past the old token's expiry.
func TestEventsSendRenewedToken(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.User("ada@example.com", password, principal.TierPro)
	p := newProxy(t, e.Srv.Listener.Addr().String())
	w := &wire{base: &http.Transport{}}
	c, err := sdk.New(p.URL(), sdk.WithPassword("ada@example.com", password), sdk.WithHTTPClient(&http.Client{Transport: w}))
	if err != nil {
		t.Fatal(err)
	}
	clock := &localClock{}
	sdk.SetClock(c, clock.Now)
	ctx := ctxT(t)
	events, err := c.Events(ctx, sdk.EventsOptions{})
	if err != nil {
		t.Fatal(err)
	}
	clock.Advance(59*time.Minute + 30*time.Second)
	e.Clock.Advance(59*time.Minute + 30*time.Second)
	if _, err := c.User(ctx); err != nil { // refreshes: 30 s left
		t.Fatal(err)
	}
	if n := w.count(refreshGrant); n != 1 {
		t.Fatalf("%d refreshes:\n%s", n, w)
	}
	// The server answers the new token with another ready message.
	deadline := time.Now().Add(10 * time.Second)
	for p.readies() < 2 {
		if time.Now().After(deadline) {
			t.Fatal("the renewed token was not sent on the stream")
		}
		time.Sleep(5 * time.Millisecond)
	}
	// Past the old token's expiry: the server checks expiry before it sends
	// each event, so the note below arriving on the same connection shows
	// the renewal took.
	e.Clock.Advance(2 * time.Minute)
	var last int64
	if _, err := c.CreateNote(ctx, sdk.NoteCreate{Body: "still here"}); err != nil {
		t.Fatal(err)
	}
	waitEvent(t, events, &last, created("still here"))
	if n := w.count("GET /api/content/events"); n != 1 {
		t.Fatalf("%d connections, want 1 (no 4401):\n%s", n, w)
	}
}

// Without a way to renew, a 4401 ends the stream with an error event.
func TestEventsGiveUp(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.User("ada@example.com", password, principal.TierPro)
	ctx := ctxT(t)

	t.Run("static token", func(t *testing.T) {
		s := e.SignIn("ada@example.com", password)
		c := newClient(t, e, &wire{base: e.Srv.Client().Transport}, sdk.WithToken(s.AccessToken))
		events, err := c.Events(ctx, sdk.EventsOptions{})
		if err != nil {
			t.Fatal(err)
		}
		e.Clock.Advance(61 * time.Minute)
		last := waitClosed(t, events)
		if last.Type != sdk.EventError || !errors.Is(last.Err, sdk.ErrUnauthenticated) {
			t.Fatalf("last event %+v", last)
		}
	})
	t.Run("refresh refused", func(t *testing.T) {
		s := e.SignIn("ada@example.com", password)
		w := &wire{base: e.Srv.Client().Transport}
		c := newClient(t, e, w, sdk.WithRefreshToken(s.RefreshToken))
		events, err := c.Events(ctx, sdk.EventsOptions{})
		if err != nil {
			t.Fatal(err)
		}
		// Sign out everywhere: the client's refresh token is revoked.
		r := e.Call("POST", "/api/auth/v1/logout?scope=global", "", testenv.Bearer(s.AccessToken)...)
		if r.Status != http.StatusNoContent {
			t.Fatalf("logout: %d %s", r.Status, r.Body)
		}
		e.Clock.Advance(61 * time.Minute)
		last := waitClosed(t, events)
		if last.Type != sdk.EventError || !errors.Is(last.Err, sdk.ErrUnauthenticated) {
			t.Fatalf("last event %+v", last)
		}
		if w.count(refreshGrant, " 400") != 1 {
			t.Fatalf("want one refused refresh:\n%s", w)
		}
	})
	t.Run("bad credentials at the start", func(t *testing.T) {
		c := newClient(t, e, &wire{base: e.Srv.Client().Transport}, sdk.WithPersonalAccessToken("strata_pat_nope"))
		if _, err := c.Events(ctx, sdk.EventsOptions{}); !errors.Is(err, sdk.ErrUnauthenticated) {
			t.Fatalf("err %v", err)
		}
	})
}

// Since replays what happened while no stream was open; ending ctx closes
// the channel.
func TestEventsSinceAndClose(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	c := newUser(t, e, "ada@example.com", principal.TierPro)
	ctx := ctxT(t)
	sctx, cancel := context.WithCancel(ctx)
	events, err := c.Events(sctx, sdk.EventsOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var last int64
	if _, err := c.CreateNote(ctx, sdk.NoteCreate{Body: "seen"}); err != nil {
		t.Fatal(err)
	}
	seen := waitEvent(t, events, &last, created("seen"))
	cancel()
	waitClosed(t, events)

	if _, err := c.CreateNote(ctx, sdk.NoteCreate{Body: "missed"}); err != nil {
		t.Fatal(err)
	}
	events, err = c.Events(ctx, sdk.EventsOptions{Since: seen.ID})
	if err != nil {
		t.Fatal(err)
	}
	last, _ = strconv.ParseInt(seen.ID, 10, 64)
	ev := waitEvent(t, events, &last, created("missed"))
	if ev.At.IsZero() || ev.Item.Body != "missed" {
		t.Fatalf("%+v", ev)
	}
	if _, err := c.Events(ctx, sdk.EventsOptions{Since: "not-an-id"}); !errors.Is(err, sdk.ErrValidation) {
		t.Fatalf("bad since: %v", err)
	}
}

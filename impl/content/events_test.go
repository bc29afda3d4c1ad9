package content_test

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/stratahq/strata/impl/server"
	"github.com/stratahq/strata/impl/testenv"
)

// fastEvents shortens the WebSocket timers so tests need not wait seconds.
func fastEvents(c *server.Config) {
	c.Events.AuthTimeout = 300 * time.Millisecond
	c.Events.ExpiryCheck = 10 * time.Millisecond
}

type wsMessage struct {
	Type   string          `json:"type"`
	ID     string          `json:"id"`
	At     string          `json:"at"`
	UserID string          `json:"userId"`
	Data   json.RawMessage `json:"data"`
}

func dial(t testing.TB, e *testenv.Env, query string) *websocket.Conn {
	t.Helper()
	return dialWith(t, e, query, nil)
}

// dialWith dials with opts; a nil opts uses the defaults.
func dialWith(t testing.TB, e *testenv.Env, query string, opts *websocket.DialOptions) *websocket.Conn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	url := "ws" + strings.TrimPrefix(e.Srv.URL, "http") + "/api/content/events" + query
	conn, resp, err := websocket.Dial(ctx, url, opts)
	if err != nil {
		t.Fatalf("dial %s: %v", query, err)
	}
	if resp.StatusCode != http.StatusSwitchingProtocols {
		t.Fatalf("handshake status %d", resp.StatusCode)
	}
	conn.SetReadLimit(4 << 20)
	t.Cleanup(func() { _ = conn.CloseNow() })
	return conn
}

// read returns the next message, skipping content:processed: the AI
// pipeline processes every note in the background, so those interleave
// with the events a test causes (readAny sees them).
func read(t testing.TB, conn *websocket.Conn) wsMessage {
	t.Helper()
	for {
		if m := readAny(t, conn); m.Type != "content:processed" {
			return m
		}
	}
}

func readAny(t testing.TB, conn *websocket.Conn) wsMessage {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, data, err := conn.Read(ctx)
	if err != nil {
		t.Fatalf("read: %v", err)
	}
	var m wsMessage
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatalf("message is not JSON: %s", data)
	}
	return m
}

// expectClose reads until the server closes and checks the close code.
func expectClose(t *testing.T, conn *websocket.Conn, code websocket.StatusCode, what ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for {
		_, _, err := conn.Read(ctx)
		if err == nil {
			continue
		}
		if got := websocket.CloseStatus(err); got != code {
			t.Fatalf("%v: closed with %v (%v), want %d", what, got, err, code)
		}
		return
	}
}

func itemID(t *testing.T, m wsMessage) string {
	t.Helper()
	var it item
	if err := json.Unmarshal(m.Data, &it); err != nil {
		t.Fatalf("event data: %s", m.Data)
	}
	return it.ID
}

func TestEventsWithQueryTokenFollowAnItemsLife(t *testing.T) {
	t.Parallel()
	e := testenv.New(t, fastEvents)
	s := e.NewUser("live@example.com")
	conn := dial(t, e, "?token="+s.AccessToken)
	if m := read(t, conn); m.Type != "ready" || m.UserID != s.User.ID {
		t.Fatalf("first message %+v, want ready for %s", m, s.User.ID)
	}
	auth := testenv.Bearer(s.AccessToken)
	n := createNote(t, e, s.AccessToken, `{"body":"hello events"}`)
	e.Call("PATCH", "/api/content/"+n.ID, `{"title":"changed"}`, auth...)
	e.Call("DELETE", "/api/content/"+n.ID, "", auth...)

	var lastID int64
	for _, want := range []string{"content:created", "content:updated", "content:deleted"} {
		m := read(t, conn)
		id, err := strconv.ParseInt(m.ID, 10, 64)
		if m.Type != want || itemID(t, m) != n.ID || err != nil || id <= lastID || m.At == "" {
			t.Fatalf("got %+v, want %s of %s with an increasing id", m, want, n.ID)
		}
		lastID = id
	}
}

func TestEventsWithFirstMessageAuth(t *testing.T) {
	t.Parallel()
	e := testenv.New(t, fastEvents)
	s := e.NewUser("first@example.com")
	conn := dial(t, e, "")
	msg, _ := json.Marshal(map[string]string{"type": "auth", "token": s.AccessToken})
	if err := conn.Write(context.Background(), websocket.MessageText, msg); err != nil {
		t.Fatal(err)
	}
	if m := read(t, conn); m.Type != "ready" || m.UserID != s.User.ID {
		t.Fatalf("got %+v, want ready", m)
	}
	n := createNote(t, e, s.AccessToken, `{"body":"via first message"}`)
	if m := read(t, conn); m.Type != "content:created" || itemID(t, m) != n.ID {
		t.Fatalf("got %+v", m)
	}
}

func TestEventsRefuseBadAuthWith4401(t *testing.T) {
	t.Parallel()
	e := testenv.New(t, fastEvents)
	s := e.NewUser("bad@example.com")
	expectClose(t, dial(t, e, "?token=not-a-token"), 4401, "query token")

	conn := dial(t, e, "")
	_ = conn.Write(context.Background(), websocket.MessageText, []byte(`{"type":"auth","token":"forged"}`))
	expectClose(t, conn, 4401, "first message")

	conn = dial(t, e, "")
	_ = conn.Write(context.Background(), websocket.MessageText, []byte(`{"hello":"world"}`))
	expectClose(t, conn, 4401, "not auth")

	// Silence past the auth timeout.
	expectClose(t, dial(t, e, ""), 4401, "silence")

	// A renewal with a bad token closes an authenticated connection too.
	conn = dial(t, e, "?token="+s.AccessToken)
	read(t, conn)
	_ = conn.Write(context.Background(), websocket.MessageText, []byte(`{"type":"auth","token":"forged"}`))
	expectClose(t, conn, 4401, "renewal")
}

func TestEventsEndpointRefusesPlainHTTPAndBadSince(t *testing.T) {
	t.Parallel()
	e := testenv.New(t, nil)
	r := e.Call("GET", "/api/content/events", "")
	testenv.ExpectError(t, r, http.StatusUpgradeRequired, "upgrade_required")
	req, _ := http.NewRequest("GET", e.Srv.URL+"/api/content/events?since=abc", nil)
	for k, v := range map[string]string{"Connection": "Upgrade", "Upgrade": "websocket", "Sec-WebSocket-Version": "13", "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ=="} {
		req.Header.Set(k, v)
	}
	resp, err := e.Srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest {
		t.Fatalf("since=abc: %d, want 400", resp.StatusCode)
	}
}

func TestEventsAreIsolatedPerUserAndOrdered(t *testing.T) {
	t.Parallel()
	e := testenv.New(t, fastEvents)
	alice := e.NewUser("a@example.com")
	bob := e.NewUser("b@example.com")
	ca := dial(t, e, "?token="+alice.AccessToken)
	cb := dial(t, e, "?token="+bob.AccessToken)
	read(t, ca)
	read(t, cb)

	const n = 40
	done := make(chan []string, 1)
	go func() {
		var ids []string
		for range n {
			ids = append(ids, createNote(t, e, alice.AccessToken, `{"body":"a"}`).ID)
		}
		done <- ids
	}()
	bobNote := createNote(t, e, bob.AccessToken, `{"body":"bob's"}`)
	ids := <-done
	var last int64
	for i := range n {
		m := read(t, ca)
		id, _ := strconv.ParseInt(m.ID, 10, 64)
		if m.Type != "content:created" || itemID(t, m) != ids[i] || id <= last {
			t.Fatalf("alice event %d: %+v, want created %s in order", i, m, ids[i])
		}
		last = id
	}
	// Bob sees his own event and nothing of Alice's.
	if m := read(t, cb); itemID(t, m) != bobNote.ID {
		t.Fatalf("bob got %+v", m)
	}
	createNote(t, e, bob.AccessToken, `{"body":"bob's second"}`)
	if m := read(t, cb); m.Type != "content:created" || strings.Contains(string(m.Data), `"body":"a"`) {
		t.Fatalf("bob got %+v", m)
	}
}

func TestReplaySince(t *testing.T) {
	t.Parallel()
	e := testenv.New(t, fastEvents)
	s := e.NewUser("replay@example.com")
	conn := dial(t, e, "?token="+s.AccessToken)
	read(t, conn)
	first := createNote(t, e, s.AccessToken, `{"body":"one"}`)
	m := read(t, conn)
	conn.CloseNow()
	second := createNote(t, e, s.AccessToken, `{"body":"two"}`)
	third := createNote(t, e, s.AccessToken, `{"body":"three"}`)

	again := dial(t, e, "?since="+m.ID+"&token="+s.AccessToken)
	if r := read(t, again); r.Type != "ready" {
		t.Fatalf("got %+v", r)
	}
	for _, want := range []string{second.ID, third.ID} {
		if r := read(t, again); r.Type != "content:created" || itemID(t, r) != want {
			t.Fatalf("replayed %+v, want %s", r, want)
		}
	}
	live := createNote(t, e, s.AccessToken, `{"body":"live"}`)
	if r := read(t, again); itemID(t, r) != live.ID {
		t.Fatalf("after replay got %+v, want live %s", r, live.ID)
	}
	_ = first
}

// since=0 replays every event still in the log (event ids start at 1);
// without since, nothing is replayed.
func TestReplaySinceZeroReplaysTheWholeLog(t *testing.T) {
	t.Parallel()
	e := testenv.New(t, fastEvents)
	s := e.NewUser("zero@example.com")
	first := createNote(t, e, s.AccessToken, `{"body":"one"}`)
	second := createNote(t, e, s.AccessToken, `{"body":"two"}`)

	conn := dial(t, e, "?since=0&token="+s.AccessToken)
	if r := read(t, conn); r.Type != "ready" {
		t.Fatalf("got %+v", r)
	}
	// A live event right away: it comes after the replayed ones (once, by
	// id), so a missing replay shows at once rather than as a read timeout.
	live := createNote(t, e, s.AccessToken, `{"body":"live"}`)
	for _, want := range []string{first.ID, second.ID, live.ID} {
		if r := read(t, conn); r.Type != "content:created" || itemID(t, r) != want {
			t.Fatalf("got %s of %s, want created %s (replayed, then live)", r.Type, itemID(t, r), want)
		}
	}

	// No since: live events only.
	fresh := dial(t, e, "?token="+s.AccessToken)
	if r := read(t, fresh); r.Type != "ready" {
		t.Fatalf("got %+v", r)
	}
	next := createNote(t, e, s.AccessToken, `{"body":"next"}`)
	if r := read(t, fresh); r.Type != "content:created" || itemID(t, r) != next.ID {
		t.Fatalf("without since got %+v, want only the live %s", r, next.ID)
	}
}

func TestTokenExpiryAndRenewal(t *testing.T) {
	t.Parallel()
	e := testenv.New(t, fastEvents)
	s := e.NewUser("exp@example.com")
	conn := dial(t, e, "?token="+s.AccessToken)
	read(t, conn)

	// Renew with a token minted 30 minutes later, then pass the first expiry.
	e.Clock.Advance(30 * time.Minute)
	fresh := e.SignIn("exp@example.com", "correct horse")
	msg, _ := json.Marshal(map[string]string{"type": "auth", "token": fresh.AccessToken})
	_ = conn.Write(context.Background(), websocket.MessageText, msg)
	if m := read(t, conn); m.Type != "ready" {
		t.Fatalf("renewal answered %+v", m)
	}
	e.Clock.Advance(45 * time.Minute) // past the first token's expiry
	n := createNote(t, e, fresh.AccessToken, `{"body":"still here"}`)
	if m := read(t, conn); itemID(t, m) != n.ID {
		t.Fatalf("after renewal got %+v", m)
	}
	e.Clock.Advance(time.Hour) // past the renewed token's expiry
	expectClose(t, conn, 4401)
}

// An expired token receives no event, even before the idle check runs: the
// check here is an hour apart, so only the check before each send can close.
func TestExpiredTokenReceivesNoEvent(t *testing.T) {
	t.Parallel()
	e := testenv.New(t, func(c *server.Config) { c.Events.ExpiryCheck = time.Hour })
	s := e.NewUser("late@example.com")
	conn := dial(t, e, "?token="+s.AccessToken)
	read(t, conn)

	e.Clock.Advance(61 * time.Minute) // past the token's expiry
	fresh := e.SignIn("late@example.com", "correct horse")
	createNote(t, e, fresh.AccessToken, `{"body":"too late"}`)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, msg, err := conn.Read(ctx); websocket.CloseStatus(err) != 4401 {
		t.Fatalf("got %s (%v), want close 4401 before any event", msg, err)
	}
}

func TestSlowConsumerIsDroppedWhileOthersKeepReceiving(t *testing.T) {
	t.Parallel()
	// Small socket buffers on both ends and a 4-event backlog, so that a
	// client that stops reading is overrun by a few dozen events.
	e := testenv.NewWithSendBuffer(t, func(c *server.Config) {
		fastEvents(c)
		c.EventBuffer = 4
		// The pipeline processes the 40 big notes meanwhile; the sentence
		// encoder would take half a minute of CPU on them and starve the
		// fast reader on a small machine. This test is about the hub.
		c.Pipeline.HashedEmbeddings = true
	}, 8<<10)
	s := e.NewUser("slow@example.com")
	smallReads := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := (&net.Dialer{}).DialContext(ctx, network, addr)
		if tcp, ok := c.(*net.TCPConn); ok {
			_ = tcp.SetReadBuffer(8 << 10)
		}
		return c, err
	}}}
	slow := dialWith(t, e, "?token="+s.AccessToken, &websocket.DialOptions{HTTPClient: smallReads})
	fast := dial(t, e, "?token="+s.AccessToken)
	read(t, slow)
	read(t, fast)

	big := strings.Repeat("x", 32<<10)
	received := make(chan int, 1)
	const notes = 40
	go func() {
		count := 0
		for count < notes {
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			_, _, err := fast.Read(ctx)
			cancel()
			if err != nil {
				break
			}
			count++
		}
		received <- count
	}()
	for range notes {
		createNote(t, e, s.AccessToken, `{"body":"`+big+`"}`)
	}
	if got := <-received; got != notes {
		t.Fatalf("fast client received %d of %d events", got, notes)
	}
	expectClose(t, slow, websocket.StatusPolicyViolation)
}

package sdk

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/coder/websocket"
)

// EventError is the Type of the last Event of a stream that gave up: its
// Err says why (the session could not be renewed).
const EventError WsEventType = "error"

// Event is one change of one of the user's items, or the final error of
// the stream.
type Event struct {
	// Type is ContentCreated, ContentUpdated, ContentProcessed,
	// ContentDeleted or, on the last event of a stream that gave up,
	// EventError.
	Type WsEventType
	// ID is the event id, increasing; pass it as EventsOptions.Since to
	// resume after it.
	ID string
	// At is when the change happened.
	At time.Time
	// Item is the item as it was after the change.
	Item ContentItemDetail
	// Err is set on an EventError event only.
	Err error
}

// EventsOptions tunes Events.
type EventsOptions struct {
	// Since resumes after this event id: the server first replays the
	// user's later events still in its log (kept at least 24 hours).
	// Empty: live events only.
	Since string
	// Buffer is the channel's capacity (default 64).
	Buffer int
}

// Timing of the event stream.
const (
	wsAuthTimeout  = 15 * time.Second // dial, auth message and ready answer
	wsReadLimit    = 16 << 20         // one event holds one item; bodies are at most 1 MiB
	wsBackoffFirst = 250 * time.Millisecond
	wsBackoffMax   = 30 * time.Second
)

// Events opens the user's change-event stream (WebSocket
// {base}/api/content/events) and returns its events on a channel, which is
// closed when ctx ends. The first connection is made before Events returns,
// so bad credentials or an unreachable server are reported at once.
//
// The token is sent as the first message, never in the URL, so it stays
// out of access logs. After that the stream looks after itself:
//
//   - When the access token is renewed (before it expires, or by any other
//     request of this client), the new one is sent on the open connection.
//   - When the connection drops, it reconnects with backoff (250 ms
//     doubling to 30 s, with jitter) and resumes after the last event
//     received (since), so nothing in the server's log is missed.
//   - When the server closes with 4401 (token expired or refused), it
//     renews the session and reconnects at once; if the renewal fails — or
//     the next connection is refused too — the stream sends a last Event of
//     Type EventError with Err set, and closes.
//
// Read the channel promptly: while it is full the connection is not read,
// and a client 256 events behind is disconnected by the server (1008) —
// which the stream then cures by reconnecting and replaying.
func (s *Client) Events(ctx context.Context, opts EventsOptions) (<-chan Event, error) {
	buf := opts.Buffer
	if buf <= 0 {
		buf = 64
	}
	st := &eventStream{s: s, since: opts.Since, out: make(chan Event, buf)}
	conn, err := st.connect(ctx)
	var af *authFailure
	if errors.As(err, &af) && s.auth.canRenew() {
		// A token the server refuses although we thought it fresh (the
		// clocks disagree, or it was revoked): renew once and try again.
		if _, rerr := s.auth.renew(ctx, af.token); rerr != nil {
			return nil, rerr
		}
		conn, err = st.connect(ctx)
	}
	if err != nil {
		return nil, err
	}
	go st.run(ctx, conn)
	return st.out, nil
}

type eventStream struct {
	s     *Client
	since string
	out   chan Event
	token string // the token the server last accepted
}

// authFailure is a connection the server closed with 4401.
type authFailure struct {
	token  string
	reason string
}

func (e *authFailure) Error() string {
	return fmt.Sprintf("strata: event stream: authentication refused (4401): %s", e.reason)
}

// Is makes errors.Is(err, ErrUnauthenticated) hold.
func (e *authFailure) Is(target error) bool { return target == ErrUnauthenticated }

// wsURL is the stream's address, with since.
func (st *eventStream) wsURL() string {
	u := *st.s.baseURL
	switch u.Scheme {
	case "https":
		u.Scheme = "wss"
	default:
		u.Scheme = "ws"
	}
	u.Path = strings.TrimRight(u.Path, "/") + "/api/content/events"
	u.RawQuery = ""
	if st.since != "" {
		u.RawQuery = url.Values{"since": {st.since}}.Encode()
	}
	return u.String()
}

// connect dials, authenticates and waits for the ready message.
func (st *eventStream) connect(ctx context.Context) (*websocket.Conn, error) {
	token, err := st.s.auth.token(ctx)
	if err != nil {
		return nil, err
	}
	hctx, cancel := context.WithTimeout(ctx, wsAuthTimeout)
	defer cancel()
	opts := &websocket.DialOptions{HTTPHeader: http.Header{"User-Agent": {st.s.userAgent}}}
	if hc, ok := st.s.doer.(*http.Client); ok {
		opts.HTTPClient = hc
	}
	conn, rsp, err := websocket.Dial(hctx, st.wsURL(), opts)
	if err != nil {
		if rsp != nil && rsp.StatusCode != http.StatusSwitchingProtocols {
			var body []byte
			if rsp.Body != nil { // the library keeps the first 1 KiB
				body, _ = io.ReadAll(io.LimitReader(rsp.Body, 1024))
			}
			return nil, fmt.Errorf("strata: event stream: %w", newAPIError(rsp, body))
		}
		return nil, fmt.Errorf("strata: event stream: %w", err)
	}
	conn.SetReadLimit(wsReadLimit)
	if err := writeAuth(hctx, conn, token); err != nil {
		conn.CloseNow()
		return nil, fmt.Errorf("strata: event stream: send auth: %w", err)
	}
	_, data, err := conn.Read(hctx)
	if err != nil {
		conn.CloseNow()
		var ce websocket.CloseError
		if errors.As(err, &ce) && ce.Code == 4401 {
			return nil, &authFailure{token: token, reason: ce.Reason}
		}
		return nil, fmt.Errorf("strata: event stream: %w", err)
	}
	var m struct{ Type string }
	if json.Unmarshal(data, &m) != nil || m.Type != "ready" {
		conn.CloseNow()
		return nil, fmt.Errorf("strata: event stream: expected a ready message, got %.200s", data)
	}
	st.token = token
	return conn, nil
}

func writeAuth(ctx context.Context, conn *websocket.Conn, token string) error {
	b, _ := json.Marshal(WsAuthMessage{Type: "auth", Token: token})
	return conn.Write(ctx, websocket.MessageText, b)
}

// run serves connections until ctx ends or the stream gives up.
func (st *eventStream) run(ctx context.Context, conn *websocket.Conn) {
	defer close(st.out)
	failures := 0 // connections in a row that ended without a ready
	for {
		err := st.serve(ctx, conn)
		if ctx.Err() != nil {
			return
		}
		var af *authFailure
		if errors.As(err, &af) {
			if !st.s.auth.canRenew() {
				st.fail(ctx, err)
				return
			}
			if _, rerr := st.s.auth.renew(ctx, af.token); rerr != nil {
				st.fail(ctx, fmt.Errorf("strata: event stream: the session could not be renewed: %w", rerr))
				return
			}
		}
		// Reconnect: at once after a 4401 cured by renewal, else with backoff.
		authRetried := af != nil
		for {
			if !authRetried {
				if st.s.sleep(ctx, wsBackoff(failures)) != nil {
					return
				}
			}
			conn, err = st.connect(ctx)
			if ctx.Err() != nil {
				return
			}
			if err == nil {
				failures = 0
				break
			}
			failures++
			if errors.As(err, &af) {
				if authRetried || !st.s.auth.canRenew() {
					st.fail(ctx, err) // refused again just after a renewal
					return
				}
				if _, rerr := st.s.auth.renew(ctx, af.token); rerr != nil {
					st.fail(ctx, fmt.Errorf("strata: event stream: the session could not be renewed: %w", rerr))
					return
				}
				authRetried = true
				continue
			}
			authRetried = false
		}
	}
}

// fail sends the last event of a stream that gives up.
func (st *eventStream) fail(ctx context.Context, err error) {
	select {
	case st.out <- Event{Type: EventError, Err: err}:
	case <-ctx.Done():
	}
}

func wsBackoff(n int) time.Duration {
	d := min(wsBackoffFirst<<min(n, 10), wsBackoffMax)
	return d/2 + rand.N(d/2+1)
}

// serve reads one connection's events into the channel and sends renewed
// tokens, until the connection ends (its error says how) or ctx does.
func (st *eventStream) serve(ctx context.Context, conn *websocket.Conn) error {
	done := make(chan struct{})
	defer close(done)
	// Close waits for the server's close frame: do not hold up the caller.
	defer func() { go conn.Close(websocket.StatusNormalClosure, "") }()
	msgs := make(chan []byte)
	readErr := make(chan error, 1)
	go func() {
		for {
			// Not ctx: cancelling a Read tears the connection down without
			// a close handshake. The Read ends when the connection closes.
			_, data, err := conn.Read(context.Background())
			if err != nil {
				readErr <- err
				return
			}
			select {
			case msgs <- data:
			case <-done:
				return
			}
		}
	}()
	for {
		tok, expiry, changed := st.s.auth.current()
		if tok != "" && tok != st.token {
			// Renewed, here or by any other request: tell the server, which
			// would otherwise close the stream when the old token expires.
			wctx, cancel := context.WithTimeout(ctx, wsAuthTimeout)
			err := writeAuth(wctx, conn, tok)
			cancel()
			if err != nil {
				return err
			}
			st.token = tok
		}
		// Wake up to renew before expiry; at least every 30 s, so that a
		// clock jump (a laptop waking up) is noticed too.
		wake := 30 * time.Second
		if !expiry.IsZero() {
			wake = min(wake, max(0, expiry.Sub(st.s.now())))
		}
		timer := time.NewTimer(wake)
		err := st.step(ctx, msgs, readErr, changed, timer.C, !expiry.IsZero())
		timer.Stop()
		if err != nil {
			return err
		}
	}
}

// step waits for one thing to happen on the connection.
func (st *eventStream) step(ctx context.Context, msgs <-chan []byte, readErr <-chan error, changed <-chan struct{}, wake <-chan time.Time, expires bool) error {
	select {
	case data := <-msgs:
		ev, ok, err := parseEvent(data)
		if err != nil {
			return err
		}
		if !ok {
			return nil // ready (after a renewal) or an error message before a close
		}
		select {
		case st.out <- ev:
			st.since = ev.ID
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	case <-changed:
		return nil // the caller sends the new token
	case <-wake:
		if !expires {
			return nil
		}
		// Renews only when the token is within its margin of expiry.
		// A failure shows up as a 4401 close, which run handles; until
		// then, try again in a second rather than spin.
		if _, err := st.s.auth.token(ctx); err != nil && ctx.Err() == nil {
			return st.s.sleep(ctx, time.Second)
		}
		return nil
	case err := <-readErr:
		var ce websocket.CloseError
		if errors.As(err, &ce) && ce.Code == 4401 {
			return &authFailure{token: st.token, reason: ce.Reason}
		}
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// parseEvent decodes a server message; ok is false for messages that are
// not events (ready, error).
func parseEvent(data []byte) (Event, bool, error) {
	var head struct{ Type string }
	if err := json.Unmarshal(data, &head); err != nil {
		return Event{}, false, fmt.Errorf("strata: event stream: bad message: %w", err)
	}
	if !strings.HasPrefix(head.Type, "content:") {
		return Event{}, false, nil
	}
	var m WsEventMessage
	if err := json.Unmarshal(data, &m); err != nil {
		return Event{}, false, fmt.Errorf("strata: event stream: bad %s event: %w", head.Type, err)
	}
	return Event{Type: m.Type, ID: m.ID, At: m.At, Item: m.Data}, true, nil
}

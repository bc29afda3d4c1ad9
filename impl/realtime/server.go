package realtime

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"time"

	"github.com/coder/websocket"
	"github.com/google/uuid"
)

// Close codes of DECISIONS.md "Events".
const (
	// CloseAuthFailed: authentication failed, timed out or the token expired.
	CloseAuthFailed websocket.StatusCode = 4401
	// CloseSlowConsumer: the client fell DefaultBuffer events behind.
	CloseSlowConsumer = websocket.StatusPolicyViolation // 1008
)

// Authenticator verifies a token (access token or personal access token)
// and returns its user and expiry (zero: does not expire).
type Authenticator interface {
	Authenticate(ctx context.Context, token string) (userID uuid.UUID, expiresAt time.Time, err error)
}

// EventLog is the durable log replayed for ?since=.
type EventLog interface {
	// Since returns the user's events after afterID, oldest first, at most limit.
	Since(ctx context.Context, userID uuid.UUID, afterID int64, limit int) ([]Event, error)
}

// Options configures the endpoint. Zero values take the defaults of
// DECISIONS.md.
type Options struct {
	// AuthTimeout is how long a client may take to send its auth message (10 s).
	AuthTimeout time.Duration
	// PingInterval is the keep-alive period (30 s).
	PingInterval time.Duration
	// ExpiryCheck is how often an idle connection's token expiry is checked
	// (1 s); expiry is also checked before every event sent.
	ExpiryCheck time.Duration
	// WriteTimeout bounds one frame write (10 s).
	WriteTimeout time.Duration
	// OriginPatterns are the browser origins allowed besides the same host.
	OriginPatterns []string
	// Now is the clock; default time.Now.
	Now func() time.Time
}

func (o Options) withDefaults() Options {
	if o.AuthTimeout <= 0 {
		o.AuthTimeout = 10 * time.Second
	}
	if o.PingInterval <= 0 {
		o.PingInterval = 30 * time.Second
	}
	if o.ExpiryCheck <= 0 {
		o.ExpiryCheck = time.Second
	}
	if o.WriteTimeout <= 0 {
		o.WriteTimeout = 10 * time.Second
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return o
}

// Server is the WebSocket endpoint.
type Server struct {
	hub    *Hub
	auth   Authenticator
	log    EventLog
	logger *slog.Logger
	opts   Options

	// base is cancelled by Close: hijacked connections outlive
	// http.Server.Shutdown, so the endpoint ends them itself.
	base     context.Context
	shutdown context.CancelFunc
}

// NewServer returns the endpoint over hub, auth and log.
func NewServer(hub *Hub, auth Authenticator, log EventLog, logger *slog.Logger, opts Options) *Server {
	base, shutdown := context.WithCancel(context.Background())
	return &Server{hub: hub, auth: auth, log: log, logger: logger, opts: opts.withDefaults(), base: base, shutdown: shutdown}
}

// Close ends every connection (close code 1001) and refuses new ones.
func (s *Server) Close() { s.shutdown() }

// ParseSince validates the ?since= value: an event id (a non-negative
// integer). replay reports whether one was given: since=0 replays every
// event still in the log (ids start at 1), while no since replays nothing.
func ParseSince(v string) (since int64, replay bool, err error) {
	if v == "" {
		return 0, false, nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 {
		return 0, false, errors.New("since must be an event id (a non-negative integer)")
	}
	return n, true, nil
}

// Message types sent by the server.
type readyMessage struct {
	Type   string    `json:"type"`
	UserID uuid.UUID `json:"userId"`
}

type errorMessage struct {
	Type    string `json:"type"`
	Error   string `json:"error"`
	Message string `json:"message"`
}

// clientMessage is what clients send: {"type":"auth","token":"..."}.
type clientMessage struct {
	Type  string `json:"type"`
	Token string `json:"token"`
}

// replayPage is how many logged events one replay query reads.
const replayPage = 500

// maxClientMessage bounds what a client may send in one frame.
const maxClientMessage = 16 << 10

// ServeHTTP upgrades the request and serves one client until it leaves, is
// dropped, or its token expires. The caller has checked that the request is
// a WebSocket upgrade and that ?since= parses.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	since, replay, _ := ParseSince(r.URL.Query().Get("since"))
	conn, err := websocket.Accept(w, r, &websocket.AcceptOptions{OriginPatterns: s.opts.OriginPatterns})
	if err != nil {
		s.logger.InfoContext(r.Context(), "websocket accept failed", "err", err)
		return
	}
	conn.SetReadLimit(maxClientMessage)
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	stop := context.AfterFunc(s.base, cancel)
	defer stop()
	c := &client{srv: s, conn: conn, ctx: ctx}
	status, reason := c.run(r.URL.Query().Get("token"), since, replay)
	_ = conn.Close(status, reason)
}

type client struct {
	srv  *Server
	conn *websocket.Conn
	ctx  context.Context

	userID    uuid.UUID
	expiresAt time.Time
}

// expired reports whether the connection's token has expired (a token
// without expiry never does).
func (c *client) expired() bool {
	return !c.expiresAt.IsZero() && !c.srv.opts.Now().Before(c.expiresAt)
}

// run returns the close status and reason. With replay, the user's logged
// events after since are sent before the live ones.
func (c *client) run(queryToken string, since int64, replay bool) (websocket.StatusCode, string) {
	token := queryToken
	if token == "" {
		var err error
		if token, err = c.readAuth(); err != nil {
			return CloseAuthFailed, err.Error()
		}
	}
	userID, exp, err := c.srv.auth.Authenticate(c.ctx, token)
	if err != nil {
		return CloseAuthFailed, "authentication failed"
	}
	c.userID, c.expiresAt = userID, exp

	// Subscribe before replaying, so nothing committed in between is lost;
	// live events already replayed are skipped by id.
	sub := c.srv.hub.Subscribe(userID)
	defer sub.Close()
	if err := c.writeJSON(readyMessage{Type: "ready", UserID: userID}); err != nil {
		return websocket.StatusGoingAway, "write failed"
	}
	last := since
	if replay {
		var err error
		if last, err = c.replay(since); err != nil {
			return websocket.StatusInternalError, "replay failed"
		}
	}

	renewals := make(chan renewal, 1)
	readErr := make(chan error, 1)
	go c.readLoop(renewals, readErr)

	ping := time.NewTicker(c.srv.opts.PingInterval)
	defer ping.Stop()
	expiry := time.NewTicker(c.srv.opts.ExpiryCheck)
	defer expiry.Stop()
	for {
		select {
		case ev, ok := <-sub.Events():
			if !ok {
				if sub.Dropped() {
					return CloseSlowConsumer, "too slow: fell 256 events behind"
				}
				return websocket.StatusGoingAway, "closed"
			}
			if ev.ID <= last {
				continue
			}
			// An expired token receives nothing, even between checks.
			if c.expired() {
				return CloseAuthFailed, "token expired"
			}
			if err := c.write(ev.Message); err != nil {
				return websocket.StatusGoingAway, "write failed"
			}
			last = ev.ID
		case rn := <-renewals:
			if rn.err != nil || rn.userID != c.userID {
				return CloseAuthFailed, "authentication failed"
			}
			c.expiresAt = rn.expiresAt
			if err := c.writeJSON(readyMessage{Type: "ready", UserID: c.userID}); err != nil {
				return websocket.StatusGoingAway, "write failed"
			}
		case <-expiry.C:
			if c.expired() {
				return CloseAuthFailed, "token expired"
			}
		case <-ping.C:
			pingCtx, cancel := context.WithTimeout(c.ctx, c.srv.opts.WriteTimeout)
			err := c.conn.Ping(pingCtx)
			cancel()
			if err != nil {
				return websocket.StatusGoingAway, "ping failed"
			}
		case err := <-readErr:
			var ce websocket.CloseError
			if errors.As(err, &ce) {
				return websocket.StatusNormalClosure, ""
			}
			return websocket.StatusGoingAway, "read failed"
		case <-c.ctx.Done():
			return websocket.StatusGoingAway, "server shutting down"
		}
	}
}

// readAuth waits for the first message, which must authenticate. The
// timeout is a timer, not the Read's context: coder/websocket drops the
// connection without a close frame when a Read's context expires, and the
// client must see 4401.
func (c *client) readAuth() (string, error) {
	type result struct {
		data []byte
		err  error
	}
	got := make(chan result, 1)
	go func() {
		_, data, err := c.conn.Read(c.ctx)
		got <- result{data, err}
	}()
	timer := time.NewTimer(c.srv.opts.AuthTimeout)
	defer timer.Stop()
	var res result
	select {
	case res = <-got:
	case <-timer.C:
		return "", errors.New("no auth message in time")
	}
	if res.err != nil {
		return "", errors.New("no auth message")
	}
	var m clientMessage
	if json.Unmarshal(res.data, &m) != nil || m.Type != "auth" || m.Token == "" {
		return "", errors.New(`first message must be {"type":"auth","token":"..."}`)
	}
	return m.Token, nil
}

type renewal struct {
	userID    uuid.UUID
	expiresAt time.Time
	err       error
}

// readLoop handles client messages after the handshake: an auth message
// renews the token; anything else gets an error message.
func (c *client) readLoop(renewals chan<- renewal, readErr chan<- error) {
	for {
		_, data, err := c.conn.Read(c.ctx)
		if err != nil {
			readErr <- err
			return
		}
		var m clientMessage
		if json.Unmarshal(data, &m) != nil || m.Type != "auth" || m.Token == "" {
			_ = c.writeJSON(errorMessage{Type: "error", Error: "validation_error",
				Message: `the only client message is {"type":"auth","token":"..."}`})
			continue
		}
		userID, exp, err := c.srv.auth.Authenticate(c.ctx, m.Token)
		select {
		case renewals <- renewal{userID: userID, expiresAt: exp, err: err}:
		case <-c.ctx.Done():
			return
		}
	}
}

// replay sends the user's logged events after since and returns the last id.
func (c *client) replay(since int64) (int64, error) {
	last := since
	for {
		events, err := c.srv.log.Since(c.ctx, c.userID, last, replayPage)
		if err != nil {
			return last, fmt.Errorf("replay: %w", err)
		}
		for _, ev := range events {
			if err := c.write(ev.Message); err != nil {
				return last, err
			}
			last = ev.ID
		}
		if len(events) < replayPage {
			return last, nil
		}
	}
}

func (c *client) writeJSON(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return c.write(b)
}

func (c *client) write(msg []byte) error {
	ctx, cancel := context.WithTimeout(c.ctx, c.srv.opts.WriteTimeout)
	defer cancel()
	return c.conn.Write(ctx, websocket.MessageText, msg)
}

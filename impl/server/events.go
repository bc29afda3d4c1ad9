package server

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/stratahq/strata/impl/apierrors"
	"github.com/stratahq/strata/impl/auth"
	"github.com/stratahq/strata/impl/content"
	"github.com/stratahq/strata/impl/realtime"
)

// wsAuthenticator verifies WebSocket tokens with the same verifier as every
// HTTP endpoint.
type wsAuthenticator struct{ svc *auth.Service }

func (w wsAuthenticator) Authenticate(ctx context.Context, token string) (uuid.UUID, time.Time, error) {
	p, err := w.svc.Authenticate(ctx, token)
	if err != nil {
		return uuid.Nil, time.Time{}, err
	}
	return p.UserID, p.ExpiresAt, nil
}

// eventsHandler serves GET /api/content/events: a non-upgrade request is
// 426 upgrade_required and a bad ?since= 400, both in the error shape,
// before the WebSocket handshake.
func (a *App) eventsHandler() http.Handler {
	opts := a.cfg.Events
	opts.OriginPatterns, opts.Now = originPatterns(a.cfg.CORSOrigins), a.cfg.Now
	ws := realtime.NewServer(a.hub, wsAuthenticator{a.auth}, content.EventLog{Store: a.store}, a.logger, opts)
	a.ws = ws
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.EqualFold(r.Header.Get("Upgrade"), "websocket") {
			w.Header().Set("Upgrade", "websocket")
			apierrors.Write(w, r, a.logger, apierrors.New(http.StatusUpgradeRequired, "upgrade_required",
				"this endpoint speaks WebSocket: send an Upgrade: websocket request"))
			return
		}
		if _, _, err := realtime.ParseSince(r.URL.Query().Get("since")); err != nil {
			apierrors.Write(w, r, a.logger, apierrors.Validation("invalid query parameter \"since\": %v", err))
			return
		}
		ws.ServeHTTP(w, r)
	})
}

// originPatterns turns the CORS origins into the host patterns the
// WebSocket handshake accepts besides the same host.
func originPatterns(origins []string) []string {
	var out []string
	for _, o := range origins {
		if o == "*" {
			return []string{"*"}
		}
		if u, err := url.Parse(o); err == nil && u.Host != "" {
			out = append(out, u.Host)
		}
	}
	return out
}

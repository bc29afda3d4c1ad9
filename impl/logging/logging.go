// Package logging builds the service's slog logger and carries the request
// id through context.Context, so that every log line written with a request's
// context names the request.
package logging

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"
)

type requestIDKey struct{}

// WithRequestID returns a context that carries the request id.
func WithRequestID(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, requestIDKey{}, id)
}

// RequestID returns the request id carried by ctx, or "".
func RequestID(ctx context.Context) string {
	id, _ := ctx.Value(requestIDKey{}).(string)
	return id
}

// New returns a logger writing to w in the given format ("text" or "json")
// at the given level ("debug", "info", "warn", "error"). Records logged with
// a context that carries a request id get a request_id attribute.
func New(w io.Writer, level, format string) (*slog.Logger, error) {
	var lvl slog.Level
	if err := lvl.UnmarshalText([]byte(level)); err != nil {
		return nil, fmt.Errorf("log level %q: want debug, info, warn or error", level)
	}
	opts := &slog.HandlerOptions{Level: lvl}
	var h slog.Handler
	switch strings.ToLower(format) {
	case "text", "":
		h = slog.NewTextHandler(w, opts)
	case "json":
		h = slog.NewJSONHandler(w, opts)
	default:
		return nil, fmt.Errorf("log format %q: want text or json", format)
	}
	return slog.New(requestIDHandler{h}), nil
}

// WithRequestIDs returns logger, made to add the context's request id to
// every record if it does not already. nil yields a logger that discards.
func WithRequestIDs(logger *slog.Logger) *slog.Logger {
	if logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	if _, ok := logger.Handler().(requestIDHandler); ok {
		return logger
	}
	return slog.New(requestIDHandler{logger.Handler()})
}

// requestIDHandler adds the context's request id to every record.
type requestIDHandler struct{ slog.Handler }

func (h requestIDHandler) Handle(ctx context.Context, r slog.Record) error {
	if id := RequestID(ctx); id != "" {
		r.AddAttrs(slog.String("request_id", id))
	}
	return h.Handler.Handle(ctx, r)
}

func (h requestIDHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return requestIDHandler{h.Handler.WithAttrs(attrs)}
}

func (h requestIDHandler) WithGroup(name string) slog.Handler {
	return requestIDHandler{h.Handler.WithGroup(name)}
}

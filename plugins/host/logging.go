package host

import (
	"bytes"
	"context"
	"io"
	"log"
	"log/slog"
	"strings"
	"sync"

	"github.com/hashicorp/go-hclog"
	"github.com/stratahq/strata/impl/tailbuf"
)

// maxLogLine bounds one logged line of plugin output; longer lines are cut.
const maxLogLine = 64 << 10

// lineLogger is an io.Writer that logs each line written to it, for a
// plugin's stdout and stderr as relayed by go-plugin.
type lineLogger struct {
	logger *slog.Logger
	level  slog.Level
	stream string

	mu  sync.Mutex
	buf []byte
}

func newLineLogger(logger *slog.Logger, level slog.Level, stream string) *lineLogger {
	return &lineLogger{logger: logger, level: level, stream: stream}
}

// Write implements io.Writer.
func (w *lineLogger) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf = append(w.buf, p...)
	for {
		i := bytes.IndexByte(w.buf, '\n')
		if i < 0 {
			break
		}
		w.emit(w.buf[:i])
		w.buf = w.buf[i+1:]
	}
	if len(w.buf) >= maxLogLine {
		w.emit(w.buf)
		w.buf = w.buf[:0]
	}
	if len(w.buf) == 0 {
		w.buf = nil // let a large buffer go
	}
	return len(p), nil
}

func (w *lineLogger) emit(line []byte) {
	line = bytes.TrimRight(line, "\r")
	if len(line) == 0 {
		return
	}
	if len(line) > maxLogLine {
		line = line[:maxLogLine]
	}
	w.logger.Log(context.Background(), w.level, string(line), "stream", w.stream)
}

// lastWords returns the most telling line of a plugin's stderr tail: the
// last line that starts a panic or fatal error, else the last non-empty
// line.
func lastWords(tail *tailbuf.Buffer) string {
	lines := strings.Split(string(tail.Bytes()), "\n")
	last := ""
	for i := len(lines) - 1; i >= 0; i-- {
		l := strings.TrimSpace(lines[i])
		if strings.HasPrefix(l, "panic: ") || strings.HasPrefix(l, "fatal error: ") {
			last = l
			break
		}
		if last == "" && l != "" {
			last = l
		}
	}
	if len(last) > 500 {
		last = last[:500] + "…"
	}
	return last
}

// hclogAdapter is the hclog.Logger go-plugin logs through, forwarding to
// slog. Two sources share it: go-plugin's own messages, always logged at
// debug (a sync that fails says why through its error, not through
// go-plugin's "plugin process exited"), and the plugin's stderr, which
// go-plugin relays through a logger Named after the plugin's file; those
// keep the level the plugin gave them (hclog JSON lines, as sdk.Serve
// writes, carry one; other lines are debug, panics error).
type hclogAdapter struct {
	logger     *slog.Logger
	pluginFile string // the Named() that marks relayed plugin output
	name       string
	fromPlugin bool
	implied    []any
}

var _ hclog.Logger = (*hclogAdapter)(nil)

func newHCLogAdapter(logger *slog.Logger, pluginFile string) *hclogAdapter {
	return &hclogAdapter{logger: logger, pluginFile: pluginFile}
}

func (a *hclogAdapter) slogLevel(l hclog.Level) slog.Level {
	if !a.fromPlugin {
		return slog.LevelDebug
	}
	switch l {
	case hclog.Trace:
		return slog.LevelDebug - 4
	case hclog.Debug, hclog.NoLevel:
		return slog.LevelDebug
	case hclog.Info:
		return slog.LevelInfo
	case hclog.Warn:
		return slog.LevelWarn
	default:
		return slog.LevelError
	}
}

// Log implements hclog.Logger.
func (a *hclogAdapter) Log(level hclog.Level, msg string, args ...any) {
	if level == hclog.Off {
		return
	}
	attrs := make([]any, 0, len(a.implied)+len(args))
	attrs = append(append(attrs, a.implied...), args...)
	if a.fromPlugin {
		// go-plugin appends the plugin's own time stamp; the record has one.
		if n := len(attrs); n >= 2 && attrs[n-2] == "timestamp" {
			attrs = attrs[:n-2]
		}
	} else {
		// go-plugin's "plugin" is the executable's path; ours is the type.
		for i := len(a.implied); i+1 < len(attrs); i += 2 {
			if attrs[i] == "plugin" {
				attrs[i] = "path"
			}
		}
	}
	a.logger.Log(context.Background(), a.slogLevel(level), msg, attrs...)
}

// Trace implements hclog.Logger.
func (a *hclogAdapter) Trace(msg string, args ...any) { a.Log(hclog.Trace, msg, args...) }

// Debug implements hclog.Logger.
func (a *hclogAdapter) Debug(msg string, args ...any) { a.Log(hclog.Debug, msg, args...) }

// Info implements hclog.Logger.
func (a *hclogAdapter) Info(msg string, args ...any) { a.Log(hclog.Info, msg, args...) }

// Warn implements hclog.Logger.
func (a *hclogAdapter) Warn(msg string, args ...any) { a.Log(hclog.Warn, msg, args...) }

// Error implements hclog.Logger.
func (a *hclogAdapter) Error(msg string, args ...any) { a.Log(hclog.Error, msg, args...) }

func (a *hclogAdapter) enabled(l hclog.Level) bool {
	return a.logger.Enabled(context.Background(), a.slogLevel(l))
}

// IsTrace implements hclog.Logger.
func (a *hclogAdapter) IsTrace() bool { return a.enabled(hclog.Trace) }

// IsDebug implements hclog.Logger.
func (a *hclogAdapter) IsDebug() bool { return a.enabled(hclog.Debug) }

// IsInfo implements hclog.Logger.
func (a *hclogAdapter) IsInfo() bool { return a.enabled(hclog.Info) }

// IsWarn implements hclog.Logger.
func (a *hclogAdapter) IsWarn() bool { return a.enabled(hclog.Warn) }

// IsError implements hclog.Logger.
func (a *hclogAdapter) IsError() bool { return a.enabled(hclog.Error) }

// ImpliedArgs implements hclog.Logger.
func (a *hclogAdapter) ImpliedArgs() []any { return a.implied }

// With implements hclog.Logger.
func (a *hclogAdapter) With(args ...any) hclog.Logger {
	c := *a
	c.implied = append(append([]any{}, a.implied...), args...)
	return &c
}

// Name implements hclog.Logger.
func (a *hclogAdapter) Name() string { return a.name }

// Named implements hclog.Logger.
func (a *hclogAdapter) Named(name string) hclog.Logger {
	c := *a
	if c.name != "" {
		c.name += "." + name
	} else {
		c.name = name
	}
	c.fromPlugin = a.fromPlugin || name == a.pluginFile
	return &c
}

// ResetNamed implements hclog.Logger.
func (a *hclogAdapter) ResetNamed(name string) hclog.Logger {
	c := *a
	c.name = name
	c.fromPlugin = name == a.pluginFile
	return &c
}

// SetLevel implements hclog.Logger; the slog handler decides levels.
func (a *hclogAdapter) SetLevel(hclog.Level) {}

// GetLevel implements hclog.Logger: everything is passed on, slog filters.
func (a *hclogAdapter) GetLevel() hclog.Level { return hclog.Trace }

// StandardLogger implements hclog.Logger.
func (a *hclogAdapter) StandardLogger(opts *hclog.StandardLoggerOptions) *log.Logger {
	return log.New(a.StandardWriter(opts), "", 0)
}

// StandardWriter implements hclog.Logger.
func (a *hclogAdapter) StandardWriter(*hclog.StandardLoggerOptions) io.Writer {
	return newLineLogger(a.logger, a.slogLevel(hclog.Info), "log")
}

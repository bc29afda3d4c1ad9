// Package host runs connector plugins for the Strata server: it finds the
// installed plugins, launches a plugin process per use, talks to it over the
// protocol of [github.com/stratahq/strata/plugins/proto] and makes sure no
// plugin process outlives its [Client] or the [Host].
//
// A plugin is an executable file named strata-connector-<type> in the
// plugin directory; a connector type is available exactly when its plugin is
// installed there. Plugins run in their own process under
// hashicorp/go-plugin (gRPC only), so a plugin that crashes, hangs or sends
// garbage fails the call it was serving with a clear [Error] and nothing
// else: the server keeps running and other plugins are unaffected.
//
// A sync uses one Client:
//
//	c, err := h.Launch(ctx, "hosted_backend")
//	if err != nil { ... }
//	defer c.Close()
//	tables, err := c.Discover(ctx, config)
//	for _, t := range tables {
//		err := c.Read(ctx, config, t.Name, t.Schema, ingest, progress)
//		...
//	}
package host

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/hashicorp/go-plugin"

	"github.com/stratahq/strata/impl/tailbuf"
	"github.com/stratahq/strata/plugins/proto"
)

// FilePrefix starts the file name of every connector plugin:
// strata-connector-<type>.
const FilePrefix = "strata-connector-"

// DefaultDir is the plugin directory the server uses unless told otherwise
// (--plugin-dir), relative to its working directory.
const DefaultDir = "bin/plugins"

// Options tunes a Host. Zero fields take their defaults.
type Options struct {
	// StartTimeout bounds a plugin's start and handshake (default 10 s).
	StartTimeout time.Duration
	// CallTimeout bounds Spec, Check and Discover calls (default 60 s).
	CallTimeout time.Duration
	// ReadIdleTimeout is how long a Read waits for the plugin's next
	// message before declaring it hung (default 2 min). Time spent in the
	// caller's onBatch does not count.
	ReadIdleTimeout time.Duration
	// Allocator allocates the record batches a Read decodes (default
	// memory.DefaultAllocator).
	Allocator memory.Allocator
	// Env lists extra KEY=value variables for every plugin process.
	// Plugins do not inherit the server's environment, which holds the
	// server's own secrets; they get only PATH, HOME, TMPDIR, locale, time
	// zone, TLS certificate and proxy variables, and these.
	Env []string
}

// Defaults of Options.
const (
	DefaultStartTimeout    = 10 * time.Second
	DefaultCallTimeout     = 60 * time.Second
	DefaultReadIdleTimeout = 2 * time.Minute
)

// failedSpecRetry is how long a plugin whose Spec failed is left alone
// before Types tries it again (unless its file changes first), so that a
// broken plugin does not cost a process start on every listing.
const failedSpecRetry = time.Minute

// maxSpecLaunches bounds the plugins Types starts at once.
const maxSpecLaunches = 4

// TypeInfo describes an installed connector type.
type TypeInfo struct {
	// Type is the connector type, the <type> of strata-connector-<type>.
	Type string
	// DisplayName is the plugin's human-readable name for the type.
	DisplayName string
	// ConfigSchema is the JSON Schema of the type's configuration; secret
	// properties carry "x-secret": true.
	ConfigSchema json.RawMessage
	// Path is the plugin's executable.
	Path string
}

// Host finds, launches and supervises connector plugins. It is safe for
// concurrent use. Call Shutdown when the server stops.
//
// Clients are not go-plugin "Managed": go-plugin keeps every managed client
// in a package-level list that it never prunes, which in a server launching
// a plugin per sync grows without bound, and its CleanupClients may run only
// once per process. The Host keeps its own set of live clients instead, and
// Shutdown kills them, which is what CleanupClients would do.
type Host struct {
	dir    string
	logger *slog.Logger
	opts   Options
	now    func() time.Time

	mu      sync.Mutex
	closed  bool
	clients map[*Client]struct{}
	specs   map[string]specEntry // by plugin path
}

// specEntry caches the outcome of asking a plugin file for its Spec.
type specEntry struct {
	modTime time.Time
	size    int64
	info    TypeInfo
	err     error
	at      time.Time
}

// New returns a Host for the plugins in pluginDir. A nil logger discards.
func New(pluginDir string, logger *slog.Logger, opts Options) *Host {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	if opts.StartTimeout <= 0 {
		opts.StartTimeout = DefaultStartTimeout
	}
	if opts.CallTimeout <= 0 {
		opts.CallTimeout = DefaultCallTimeout
	}
	if opts.ReadIdleTimeout <= 0 {
		opts.ReadIdleTimeout = DefaultReadIdleTimeout
	}
	if opts.Allocator == nil {
		opts.Allocator = memory.DefaultAllocator
	}
	return &Host{
		dir:     pluginDir,
		logger:  logger,
		opts:    opts,
		now:     time.Now,
		clients: map[*Client]struct{}{},
		specs:   map[string]specEntry{},
	}
}

// Dir returns the plugin directory.
func (h *Host) Dir() string { return h.dir }

// validType reports whether typ can name a connector type: lowercase
// letters, digits and underscores, starting with a letter.
func validType(typ string) bool {
	if typ == "" || typ[0] < 'a' || typ[0] > 'z' {
		return false
	}
	for _, r := range typ {
		if (r < 'a' || r > 'z') && (r < '0' || r > '9') && r != '_' {
			return false
		}
	}
	return true
}

// installed is an executable plugin file found in the plugin directory.
type installed struct {
	typ, path string
	modTime   time.Time
	size      int64
}

// scan lists the installed plugins: executable regular files (or links to
// them) named strata-connector-<type>. Anything else is ignored.
func (h *Host) scan() ([]installed, error) {
	entries, err := os.ReadDir(h.dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read plugin directory: %w", err)
	}
	var out []installed
	for _, e := range entries {
		typ, ok := strings.CutPrefix(e.Name(), FilePrefix)
		if !ok || !validType(typ) {
			continue
		}
		path := filepath.Join(h.dir, e.Name())
		fi, ok := executable(path)
		if !ok {
			continue
		}
		out = append(out, installed{typ: typ, path: path, modTime: fi.ModTime(), size: fi.Size()})
	}
	return out, nil
}

// executable stats path, following links, and reports whether it is an
// executable regular file.
func executable(path string) (fs.FileInfo, bool) {
	fi, err := os.Stat(path)
	if err != nil || !fi.Mode().IsRegular() || fi.Mode().Perm()&0o111 == 0 {
		return nil, false
	}
	return fi, true
}

// Types lists the installed connector types, sorted by type. It asks each
// plugin for its Spec, caching the answer until the plugin file changes
// (path, modification time and size), so listing is cheap after the first
// time. A plugin that cannot answer is left out and logged.
func (h *Host) Types(ctx context.Context) ([]TypeInfo, error) {
	found, err := h.scan()
	if err != nil {
		return nil, err
	}
	now := h.now()
	infos := make([]TypeInfo, len(found))
	errs := make([]error, len(found))
	var wg sync.WaitGroup
	slots := make(chan struct{}, maxSpecLaunches)
	h.mu.Lock()
	present := map[string]bool{}
	for i, f := range found {
		present[f.path] = true
		e, ok := h.specs[f.path]
		if ok && e.modTime.Equal(f.modTime) && e.size == f.size &&
			(e.err == nil || now.Sub(e.at) < failedSpecRetry) {
			infos[i], errs[i] = e.info, e.err
			continue
		}
		wg.Go(func() {
			slots <- struct{}{}
			defer func() { <-slots }()
			infos[i], errs[i] = h.fetchSpec(ctx, f)
		})
	}
	for path := range h.specs {
		if !present[path] {
			delete(h.specs, path) // uninstalled
		}
	}
	h.mu.Unlock()
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var out []TypeInfo
	for i, f := range found {
		if errs[i] != nil {
			h.logger.Warn("connector plugin unusable", "plugin", f.typ, "path", f.path, "error", errs[i])
			continue
		}
		out = append(out, infos[i])
	}
	slices.SortFunc(out, func(a, b TypeInfo) int { return strings.Compare(a.Type, b.Type) })
	return out, nil
}

// fetchSpec launches a plugin for its Spec and caches the outcome, unless
// the file changed meanwhile or the caller gave up.
func (h *Host) fetchSpec(ctx context.Context, f installed) (TypeInfo, error) {
	info, err := h.spec(ctx, f)
	if ctx.Err() != nil {
		return info, err
	}
	if fi, ok := executable(f.path); ok && fi.ModTime().Equal(f.modTime) && fi.Size() == f.size {
		h.mu.Lock()
		h.specs[f.path] = specEntry{modTime: f.modTime, size: f.size, info: info, err: err, at: h.now()}
		h.mu.Unlock()
	}
	return info, err
}

func (h *Host) spec(ctx context.Context, f installed) (TypeInfo, error) {
	c, err := h.launch(ctx, f.typ, f.path)
	if err != nil {
		return TypeInfo{}, err
	}
	defer c.Close()
	s, err := c.Spec(ctx)
	if err != nil {
		return TypeInfo{}, err
	}
	if s.Type != f.typ {
		return TypeInfo{}, newError(f.typ, KindMalformed, nil, fmt.Sprintf(
			"plugin %s announces connector type %q: its file must be named %s%s", f.typ, s.Type, FilePrefix, s.Type))
	}
	return TypeInfo{Type: s.Type, DisplayName: s.DisplayName, ConfigSchema: s.ConfigSchema, Path: f.path}, nil
}

// Launch starts the plugin of connector type typ and returns a Client for
// it once the handshake is done (within Options.StartTimeout). The caller
// must Close the Client. Any failure after the process has started kills
// it. ctx bounds the start and, when the Spec cache does not hold the type's
// configuration schema (used to redact secrets from the plugin's messages),
// the Spec call that fetches it; each later call has its own ctx.
func (h *Host) Launch(ctx context.Context, typ string) (*Client, error) {
	if !validType(typ) {
		return nil, newError(typ, KindNotInstalled, nil, fmt.Sprintf("connector type %q is not installed: not a valid type name", typ))
	}
	path := filepath.Join(h.dir, FilePrefix+typ)
	fi, ok := executable(path)
	if !ok {
		return nil, newError(typ, KindNotInstalled, nil, fmt.Sprintf("connector type %s is not installed: no executable %s", typ, path))
	}
	c, err := h.launch(ctx, typ, path)
	if err != nil {
		return nil, err
	}
	// The config schema tells which values to redact from the plugin's
	// messages: take it from the Spec cache, or ask (and fill the cache).
	if schema, ok := h.cachedSchema(path, fi); ok {
		c.schema = schema
		return c, nil
	}
	spec, err := c.Spec(ctx)
	if err != nil {
		c.Close()
		return nil, err
	}
	c.schema = spec.ConfigSchema
	if spec.Type == typ {
		h.mu.Lock()
		h.specs[path] = specEntry{modTime: fi.ModTime(), size: fi.Size(), at: h.now(), info: TypeInfo{
			Type: spec.Type, DisplayName: spec.DisplayName, ConfigSchema: spec.ConfigSchema, Path: path,
		}}
		h.mu.Unlock()
	}
	return c, nil
}

// cachedSchema returns the cached config schema of the plugin file at path
// if the cache holds a successful Spec of this version of the file.
func (h *Host) cachedSchema(path string, fi fs.FileInfo) (json.RawMessage, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	e, ok := h.specs[path]
	if !ok || e.err != nil || !e.modTime.Equal(fi.ModTime()) || e.size != fi.Size() {
		return nil, false
	}
	return e.info.ConfigSchema, true
}

func (h *Host) launch(ctx context.Context, typ, path string) (*Client, error) {
	logger := h.logger.With("plugin", typ)
	cmd := exec.Command(path)
	cmd.Env = pluginEnv(h.opts.Env)
	isolate(cmd)
	tail := tailbuf.New(4 << 10) // the plugin's last words, to explain a crash
	pc := plugin.NewClient(&plugin.ClientConfig{
		HandshakeConfig:  proto.Handshake(),
		VersionedPlugins: proto.VersionedPlugins(nil),
		Cmd:              cmd,
		SkipHostEnv:      true,
		AllowedProtocols: []plugin.Protocol{plugin.ProtocolGRPC},
		StartTimeout:     h.opts.StartTimeout,
		Stderr:           tail,
		SyncStdout:       newLineLogger(logger, slog.LevelDebug, "stdout"),
		SyncStderr:       io.MultiWriter(newLineLogger(logger, slog.LevelWarn, "stderr"), tail),
		Logger:           newHCLogAdapter(logger, filepath.Base(path)),
	})
	c := &Client{host: h, typ: typ, path: path, pc: pc, cmd: cmd, tail: tail, logger: logger}
	if !h.track(c) {
		return nil, newError(typ, KindClosed, nil, fmt.Sprintf("plugin %s: the plugin host is shut down", typ))
	}
	// From here on the process may exist: every failure kills it.
	type started struct {
		rpc plugin.ClientProtocol
		err error
	}
	done := make(chan started, 1)
	go func() {
		rpc, err := pc.Client() // starts the process and completes the handshake
		done <- started{rpc, err}
	}()
	var s started
	select {
	case s = <-done:
	case <-ctx.Done():
		// go-plugin's start cannot be interrupted; it ends within
		// StartTimeout, and then the process is killed.
		go func() { <-done; c.Close() }()
		return nil, fmt.Errorf("start plugin %s: %w", typ, context.Cause(ctx))
	}
	if id, err := strconv.Atoi(pc.ID()); err == nil {
		c.pid.Store(int64(id))
	}
	if s.err != nil {
		// go-plugin killed the plugin itself; end anything it started
		// while its process group is fresh.
		killGroup(c.PID())
		c.Close()
		return nil, startError(typ, s.err, tail)
	}
	raw, err := s.rpc.Dispense(proto.PluginName)
	if err != nil {
		c.Close()
		return nil, newError(typ, KindStart, err, fmt.Sprintf("start plugin %s: %v", typ, err))
	}
	conn, ok := raw.(proto.ConnectorClient)
	if !ok {
		c.Close()
		return nil, newError(typ, KindStart, nil, fmt.Sprintf("start plugin %s: unexpected client type %T", typ, raw))
	}
	c.conn = conn
	if c.closed.Load() { // Shutdown ran while the plugin started
		c.Close()
		return nil, newError(typ, KindClosed, nil, fmt.Sprintf("plugin %s: the plugin host is shut down", typ))
	}
	logger.Debug("plugin launched", "pid", c.PID())
	return c, nil
}

// startError explains a failed start; go-plugin's messages are written for
// plugin developers, these for whoever runs the server.
func startError(typ string, err error, tail *tailbuf.Buffer) error {
	msg := err.Error()
	words := lastWords(tail)
	suffix := ""
	if words != "" {
		suffix = ": " + words
	}
	switch {
	case strings.Contains(msg, "incompatible API version"):
		theirs := "another version"
		if _, v, ok := strings.Cut(msg, "Plugin version: "); ok {
			v, _, _ = strings.Cut(v, ",")
			theirs = "version " + strings.TrimSpace(v)
		}
		return newError(typ, KindVersion, err, fmt.Sprintf(
			"plugin %s speaks connector protocol %s, but this server speaks version %d: "+
				"rebuild the plugin with a plugins/sdk of protocol version %d or upgrade the server",
			typ, theirs, proto.ProtocolVersion, proto.ProtocolVersion))
	case strings.Contains(msg, "timeout while waiting for plugin to start"):
		return newError(typ, KindStart, err, fmt.Sprintf("plugin %s did not complete its handshake in time%s", typ, suffix))
	case strings.Contains(msg, "plugin exited before we could connect"),
		strings.Contains(msg, "Unrecognized remote plugin message"):
		return newError(typ, KindStart, err, fmt.Sprintf(
			"plugin %s exited without a handshake (is it a Strata connector built with plugins/sdk?)%s", typ, suffix))
	}
	return newError(typ, KindStart, err, fmt.Sprintf("start plugin %s: %v%s", typ, err, suffix))
}

// pluginEnv is the environment of a plugin process: a few harmless
// variables of the server's (not its secrets) and the configured extras.
// go-plugin appends the handshake variables.
func pluginEnv(extra []string) []string {
	var env []string
	for _, k := range []string{
		"PATH", "HOME", "USER", "LOGNAME", "TMPDIR", "TZ", "LANG", "LC_ALL", "LC_CTYPE",
		"SSL_CERT_FILE", "SSL_CERT_DIR",
		"HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "http_proxy", "https_proxy", "no_proxy",
	} {
		if v, ok := os.LookupEnv(k); ok {
			env = append(env, k+"="+v)
		}
	}
	return append(env, extra...)
}

// track registers a client so Shutdown can kill it; false once shut down.
func (h *Host) track(c *Client) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return false
	}
	h.clients[c] = struct{}{}
	return true
}

func (h *Host) untrack(c *Client) {
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.clients, c)
}

// Shutdown kills every plugin process the Host started that is still
// running, and makes later Launches fail. Call it when the server stops
// (after the sync runner, so that running syncs fail with a clear error
// rather than hang). It returns when the processes are gone.
func (h *Host) Shutdown() {
	h.mu.Lock()
	h.closed = true
	clients := make([]*Client, 0, len(h.clients))
	for c := range h.clients {
		clients = append(clients, c)
	}
	h.mu.Unlock()
	var wg sync.WaitGroup
	for _, c := range clients {
		wg.Go(c.Close)
	}
	wg.Wait()
}

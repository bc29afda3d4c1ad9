package query

import (
	"container/list"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	duckdb "github.com/duckdb/duckdb-go/v2"
	"github.com/google/uuid"

	"github.com/stratahq/strata/impl/apierrors"
)

// Defaults of Config.
const (
	DefaultMemoryLimit = "1GB"
	DefaultThreads     = 2
	DefaultMaxOpen     = 64
	DefaultIdleTimeout = 5 * time.Minute
)

// Config configures an Engine. Zero values take the defaults above.
type Config struct {
	// DataDir is the service's data directory; tenant stores live at
	// DataDir/tenants/<tenantID>/warehouse.duckdb.
	DataDir string
	// MemoryLimit is DuckDB's memory_limit for each tenant database, e.g. "1GB".
	MemoryLimit string
	// Threads is DuckDB's threads setting for each tenant database: a
	// runaway query of one tenant uses at most this many cores.
	Threads int
	// MaxOpen bounds the number of tenant databases open at once. When more
	// are needed, the least recently used idle one is closed. Databases with
	// queries in flight are never closed, so the bound is exceeded (never
	// waited on) when more than MaxOpen tenants are busy at the same moment.
	MaxOpen int
	// IdleTimeout closes a tenant database nobody used for this long.
	IdleTimeout time.Duration
	// Now is the clock used for idle tracking (tests); default time.Now.
	Now func() time.Time
}

func (c *Config) withDefaults() (Config, error) {
	out := *c
	if out.DataDir == "" {
		return out, errors.New("query: Config.DataDir is required")
	}
	abs, err := filepath.Abs(out.DataDir)
	if err != nil {
		return out, fmt.Errorf("query: data dir: %w", err)
	}
	// The DuckDB driver parses its DSN as a URL: these characters would
	// change the meaning of the path.
	if strings.ContainsAny(abs, "?#%") {
		return out, fmt.Errorf("query: data dir %q must not contain '?', '#' or '%%'", abs)
	}
	out.DataDir = abs
	if out.MemoryLimit == "" {
		out.MemoryLimit = DefaultMemoryLimit
	}
	if out.Threads <= 0 {
		out.Threads = DefaultThreads
	}
	if out.MaxOpen <= 0 {
		out.MaxOpen = DefaultMaxOpen
	}
	if out.IdleTimeout <= 0 {
		out.IdleTimeout = DefaultIdleTimeout
	}
	if out.Now == nil {
		out.Now = time.Now
	}
	return out, nil
}

// Engine runs read-only SQL against per-tenant DuckDB databases. It is safe
// for concurrent use; tenants never wait on each other (the engine's lock is
// held only for map bookkeeping, never while a database opens or a query
// runs).
type Engine struct {
	cfg Config
	log *slog.Logger

	mu      sync.Mutex
	stores  map[uuid.UUID]*store
	lru     *list.List // of *store, front = most recently used; open stores only
	closed  bool
	evicted uint64

	stop chan struct{}
	done chan struct{}
}

// store is one tenant's database.
type store struct {
	tenant uuid.UUID
	dir    string
	path   string

	ready  chan struct{} // closed once db, parser or err is set
	db     *sql.DB
	parser *parser
	err    error

	// Guarded by Engine.mu.
	refs     int
	lastUsed time.Time
	elem     *list.Element
	broken   bool // DuckDB reported a fatal error: reopen on next use
	closing  bool // removed from the map; close when refs drops to 0

	writer chan struct{} // one writer at a time (size-1 semaphore)
}

// New returns an engine. It opens no database: tenant stores open lazily on
// first use. Close releases everything.
func New(cfg Config, logger *slog.Logger) (*Engine, error) {
	c, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	e := &Engine{
		cfg:    c,
		log:    logger,
		stores: make(map[uuid.UUID]*store),
		lru:    list.New(),
		stop:   make(chan struct{}),
		done:   make(chan struct{}),
	}
	go e.janitor()
	return e, nil
}

// janitor closes idle stores on a real-time ticker. Acquire and release also
// sweep, so tests driving Config.Now see idle stores closed without it.
func (e *Engine) janitor() {
	defer close(e.done)
	every := min(e.cfg.IdleTimeout/2, 30*time.Second)
	every = max(every, 10*time.Millisecond)
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-e.stop:
			return
		case <-t.C:
			e.mu.Lock()
			idle := e.sweepLocked()
			e.mu.Unlock()
			e.closeAll(idle)
		}
	}
}

// Close closes every tenant database. Databases with an open Result are
// closed when that Result is closed. Run and Schema fail after Close.
func (e *Engine) Close() error {
	e.mu.Lock()
	if e.closed {
		e.mu.Unlock()
		return nil
	}
	e.closed = true
	var toClose []*store
	for id, s := range e.stores {
		delete(e.stores, id)
		e.unlinkLocked(s)
		if s.refs == 0 {
			toClose = append(toClose, s)
		} else {
			s.closing = true
		}
	}
	e.mu.Unlock()
	close(e.stop)
	<-e.done
	return e.closeStores(toClose)
}

// Stats describes the engine's open tenant databases.
type Stats struct {
	// Open is the number of tenant databases open (or opening).
	Open int
	// Tenants lists the tenants whose database is open, sorted.
	Tenants []uuid.UUID
	// Evicted counts databases closed because they were idle or least
	// recently used.
	Evicted uint64
}

// Stats reports the open tenant databases (for readiness, metrics and tests).
func (e *Engine) Stats() Stats {
	e.mu.Lock()
	defer e.mu.Unlock()
	st := Stats{Open: len(e.stores), Evicted: e.evicted}
	for id := range e.stores {
		st.Tenants = append(st.Tenants, id)
	}
	slices.SortFunc(st.Tenants, func(a, b uuid.UUID) int { return strings.Compare(a.String(), b.String()) })
	return st
}

// tenantDir is where a tenant's files live.
func (e *Engine) tenantDir(tenant uuid.UUID) string {
	return filepath.Join(e.cfg.DataDir, "tenants", tenant.String())
}

// acquire returns the tenant's open store with a reference held; release it
// with e.release. A store that cannot be opened is 503 service_unavailable.
func (e *Engine) acquire(ctx context.Context, tenant uuid.UUID) (*store, error) {
	if tenant == uuid.Nil {
		return nil, apierrors.New(403, apierrors.CodeForbidden, "no tenant")
	}
	e.mu.Lock()
	if e.closed {
		e.mu.Unlock()
		return nil, apierrors.ServiceUnavailable("query engine is shut down")
	}
	s := e.stores[tenant]
	if s != nil && s.broken {
		delete(e.stores, tenant)
		e.unlinkLocked(s)
		s.closing = true
		if s.refs == 0 {
			go func(s *store) { _ = e.closeStores([]*store{s}) }(s)
		}
		s = nil
	}
	opening := false
	if s == nil {
		dir := e.tenantDir(tenant)
		s = &store{
			tenant: tenant,
			dir:    dir,
			path:   filepath.Join(dir, "warehouse.duckdb"),
			ready:  make(chan struct{}),
			writer: make(chan struct{}, 1),
		}
		e.stores[tenant] = s
		opening = true
	}
	s.refs++
	s.lastUsed = e.cfg.Now()
	if s.elem != nil {
		e.lru.MoveToFront(s.elem)
	}
	evict := e.sweepLocked()
	e.mu.Unlock()
	e.closeAll(evict)

	if opening {
		db, p, err := e.open(ctx, s)
		e.mu.Lock()
		s.db, s.parser, s.err = db, p, err
		if err != nil {
			// Forget the failed store so that the next request retries.
			if e.stores[tenant] == s {
				delete(e.stores, tenant)
			}
		} else if !s.closing {
			s.elem = e.lru.PushFront(s)
		}
		close(s.ready)
		e.mu.Unlock()
	} else {
		select {
		case <-s.ready:
		case <-ctx.Done():
			e.release(s)
			return nil, mapContextError(ctx, ctx.Err())
		}
	}
	if s.err != nil {
		e.release(s)
		e.log.ErrorContext(ctx, "tenant store unavailable", "tenant", tenant, "err", e.scrub(s.err.Error()))
		return nil, apierrors.ServiceUnavailable("the tenant's data store is unavailable").WithInternalError(s.err)
	}
	return s, nil
}

// release drops a reference taken by acquire.
func (e *Engine) release(s *store) {
	e.mu.Lock()
	s.refs--
	s.lastUsed = e.cfg.Now()
	var toClose []*store
	if s.refs == 0 && s.closing {
		toClose = append(toClose, s)
	}
	toClose = append(toClose, e.sweepLocked()...)
	e.mu.Unlock()
	e.closeAll(toClose)
}

// markBroken makes the next acquire reopen the tenant's database (after a
// DuckDB FATAL error the database instance must be restarted).
func (e *Engine) markBroken(s *store) {
	e.mu.Lock()
	s.broken = true
	e.mu.Unlock()
}

// sweepLocked removes idle stores past IdleTimeout and, while more than
// MaxOpen are open, the least recently used idle ones. It returns them for
// closing outside the lock.
func (e *Engine) sweepLocked() []*store {
	if e.closed {
		return nil
	}
	var out []*store
	now := e.cfg.Now()
	for el := e.lru.Back(); el != nil; {
		s := el.Value.(*store)
		prev := el.Prev()
		idle := s.refs == 0 && now.Sub(s.lastUsed) >= e.cfg.IdleTimeout
		over := len(e.stores) > e.cfg.MaxOpen && s.refs == 0
		if idle || over {
			delete(e.stores, s.tenant)
			e.unlinkLocked(s)
			e.evicted++
			out = append(out, s)
		}
		el = prev
	}
	return out
}

func (e *Engine) unlinkLocked(s *store) {
	if s.elem != nil {
		e.lru.Remove(s.elem)
		s.elem = nil
	}
}

func (e *Engine) closeAll(stores []*store) {
	if err := e.closeStores(stores); err != nil {
		e.log.Warn("closing tenant store", "err", err)
	}
}

func (e *Engine) closeStores(stores []*store) error {
	var errs []error
	for _, s := range stores {
		<-s.ready
		if s.parser != nil {
			s.parser.close()
		}
		if s.db != nil {
			if err := s.db.Close(); err != nil {
				errs = append(errs, fmt.Errorf("close tenant %s: %w", s.tenant, err))
			}
		}
	}
	return errors.Join(errs...)
}

// dsn is the DuckDB connection string of a tenant database. Every handle on
// the file must use exactly these settings (DuckDB's instance cache refuses a
// second handle with different ones), so this is the only place they are set.
//
// The settings are global to the database instance and locked: no
// connection, the writer's included, can change them afterwards.
func (e *Engine) dsn(path string) string {
	v := url.Values{}
	v.Set("threads", strconv.Itoa(e.cfg.Threads))
	v.Set("memory_limit", e.cfg.MemoryLimit)
	// No file or network access: read_csv, COPY, ATTACH of a file, INSTALL,
	// httpfs ... all fail with a Permission Error. DuckDB still allows its
	// own files (the database, its WAL and its spill directory).
	v.Set("enable_external_access", "false")
	v.Set("autoinstall_known_extensions", "false")
	v.Set("autoload_known_extensions", "false")
	v.Set("allow_community_extensions", "false")
	v.Set("allow_unsigned_extensions", "false")
	// Last: SET/RESET/PRAGMA of any configuration option now fails.
	v.Set("lock_configuration", "true")
	return path + "?" + v.Encode()
}

// open opens the tenant's database, prepares its internal schema and the
// guard's parser connection.
func (e *Engine) open(ctx context.Context, s *store) (*sql.DB, *parser, error) {
	if err := os.MkdirAll(s.dir, 0o750); err != nil {
		return nil, nil, fmt.Errorf("create tenant dir: %w", err)
	}
	connector, err := duckdb.NewConnector(e.dsn(s.path), nil)
	if err != nil {
		return nil, nil, fmt.Errorf("open tenant database: %w", err)
	}
	db := sql.OpenDB(connector)
	// Never reuse a connection: whatever a query does to its connection
	// (a random seed, temp objects of the writer ...) dies with it. A DuckDB
	// connection costs 5-8 µs to create. (discard enforces it too.)
	db.SetMaxIdleConns(0)
	if err := ensureInternalSchema(ctx, db); err != nil {
		_ = db.Close()
		return nil, nil, fmt.Errorf("prepare tenant database: %w", err)
	}
	p, err := newParser(ctx, db)
	if err != nil {
		_ = db.Close()
		return nil, nil, fmt.Errorf("prepare the statement parser: %w", err)
	}
	e.log.DebugContext(ctx, "tenant store opened", "tenant", s.tenant)
	return db, p, nil
}

// scrub removes the server's data directory from a message meant for a
// client.
func (e *Engine) scrub(msg string) string {
	return strings.ReplaceAll(msg, e.cfg.DataDir, "<data>")
}

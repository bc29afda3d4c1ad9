// Package sqlite is the embedded control-plane store: one SQLite file in WAL
// mode through modernc.org/sqlite (no cgo), its schema managed by goose
// migrations embedded in the binary and applied on open.
package sqlite

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"

	"github.com/pressly/goose/v3"
	_ "modernc.org/sqlite" // registers the "sqlite" database/sql driver

	"github.com/stratahq/strata/impl/store"
)

//go:embed migrations/*.sql
var migrations embed.FS

// FileName is the name of the control-plane database inside the data dir.
const FileName = "strata.db"

// Store is the SQLite implementation of store.Store.
type Store struct {
	db *sql.DB
}

var _ store.Store = (*Store)(nil)

// Open opens (creating if needed) the control-plane database at path and
// applies pending migrations. The directory is created with mode 0700.
func Open(ctx context.Context, path string) (*Store, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("create store directory: %w", err)
	}
	db, err := sql.Open("sqlite", dsn(path))
	if err != nil {
		return nil, fmt.Errorf("open sqlite %s: %w", path, err)
	}
	s := &Store{db: db}
	if err := s.Ping(ctx); err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("open sqlite %s: %w", path, err)
	}
	if err := os.Chmod(path, 0o600); err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("restrict store file mode: %w", err)
	}
	if err := s.migrate(ctx); err != nil {
		_ = db.Close()
		return nil, err
	}
	return s, nil
}

// dsn builds the connection string: WAL so readers never block the writer,
// a busy timeout instead of immediate SQLITE_BUSY, foreign keys on, and
// BEGIN IMMEDIATE so that read-then-write transactions cannot deadlock on
// lock upgrade.
func dsn(path string) string {
	q := url.Values{}
	for _, p := range []string{"journal_mode(WAL)", "busy_timeout(10000)", "foreign_keys(1)", "synchronous(NORMAL)"} {
		q.Add("_pragma", p)
	}
	q.Set("_txlock", "immediate")
	return "file:" + path + "?" + q.Encode()
}

func (s *Store) migrate(ctx context.Context) error {
	fsys, err := fs.Sub(migrations, "migrations")
	if err != nil {
		return fmt.Errorf("migrations: %w", err)
	}
	provider, err := goose.NewProvider(goose.DialectSQLite3, s.db, fsys)
	if err != nil {
		return fmt.Errorf("migrations: %w", err)
	}
	if _, err := provider.Up(ctx); err != nil {
		return fmt.Errorf("apply migrations: %w", err)
	}
	return nil
}

// DB returns the underlying database for the repositories of this package.
func (s *Store) DB() *sql.DB { return s.db }

// Ping implements store.Store: it runs a real query, so a closed or broken
// database fails, not only an unreachable one.
func (s *Store) Ping(ctx context.Context) error {
	var one int
	if err := s.db.QueryRowContext(ctx, "SELECT 1").Scan(&one); err != nil {
		return fmt.Errorf("sqlite ping: %w", err)
	}
	return nil
}

// SchemaVersion implements store.Store.
func (s *Store) SchemaVersion(ctx context.Context) (int64, error) {
	var v sql.NullInt64
	err := s.db.QueryRowContext(ctx, "SELECT MAX(version_id) FROM goose_db_version WHERE is_applied").Scan(&v)
	if errors.Is(err, sql.ErrNoRows) || !v.Valid {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("schema version: %w", err)
	}
	return v.Int64, nil
}

// Close implements store.Store.
func (s *Store) Close() error { return s.db.Close() }

package sqlite_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stratahq/strata/impl/store/sqlite"
)

func TestOpenMigratesAndReopens(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "sub", sqlite.FileName)

	s, err := sqlite.Open(ctx, path)
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	v, err := s.SchemaVersion(ctx)
	if err != nil || v < 1 {
		t.Fatalf("schema version = %d, %v; want >= 1", v, err)
	}
	var mode string
	if err := s.DB().QueryRowContext(ctx, "PRAGMA journal_mode").Scan(&mode); err != nil || mode != "wal" {
		t.Fatalf("journal_mode = %q, %v; want wal", mode, err)
	}
	info, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if perm := info.Mode().Perm(); perm != 0o600 {
		t.Fatalf("store file mode = %o, want 600", perm)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Ping(ctx); err == nil {
		t.Fatal("ping on a closed store succeeded")
	}

	// Reopening applies nothing new and keeps the data.
	s2, err := sqlite.Open(ctx, path)
	if err != nil {
		t.Fatalf("reopen: %v", err)
	}
	defer s2.Close()
	v2, err := s2.SchemaVersion(ctx)
	if err != nil || v2 != v {
		t.Fatalf("schema version after reopen = %d, %v; want %d", v2, err, v)
	}
	var created string
	if err := s2.DB().QueryRowContext(ctx, "SELECT value FROM strata_meta WHERE key = 'created_at'").Scan(&created); err != nil || created == "" {
		t.Fatalf("created_at = %q, %v", created, err)
	}
}

func TestOpenFailsOnUnusablePath(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	// A directory where the database file should be cannot be opened as a database.
	path := filepath.Join(dir, sqlite.FileName)
	if err := os.Mkdir(path, 0o700); err != nil {
		t.Fatal(err)
	}
	if _, err := sqlite.Open(context.Background(), path); err == nil {
		t.Fatal("open of a directory succeeded")
	}
}

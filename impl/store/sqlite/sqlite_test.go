package sqlite_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/stratahq/strata/impl/store"

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

func TestPendingItemsPagesThroughAll(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), sqlite.FileName))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	render := func(store.Item) ([]byte, error) { return []byte("{}"), nil }
	want := map[uuid.UUID]bool{}
	for i := range 5 {
		status := "pending"
		if i == 2 {
			status = "processed" // not listed
		}
		it := store.Item{ID: uuid.New(), UserID: uuid.New(), Type: "note", Title: "t", Body: "b", ProcessingStatus: status,
			CreatedAt: base.Add(time.Duration(i%2) * time.Second), UpdatedAt: base} // equal times: the id breaks ties
		if _, err := s.CreateItem(ctx, it, "content:created", render); err != nil {
			t.Fatal(err)
		}
		if status == "pending" {
			want[it.ID] = true
		}
	}
	got := map[uuid.UUID]bool{}
	var after *store.Item
	for pages := 0; ; pages++ {
		items, err := s.PendingItems(ctx, after, 2)
		if err != nil || pages > 5 {
			t.Fatalf("page %d: %v", pages, err)
		}
		for _, it := range items {
			if got[it.ID] {
				t.Fatalf("item %s listed twice", it.ID)
			}
			got[it.ID] = true
		}
		if len(items) < 2 {
			break
		}
		after = &items[len(items)-1]
	}
	if len(got) != len(want) {
		t.Fatalf("paged %d pending items, want %d", len(got), len(want))
	}
}

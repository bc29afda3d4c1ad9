package sqlite_test

import (
	"context"
	"errors"
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

// Every write that files something into a folder checks the folder in its
// own transaction: a folder that is gone (deleted by a concurrent request)
// or belongs to someone else is store.ErrNoFolder, never a foreign-key
// failure, and nothing is written.
func TestWritesIntoAVanishedFolderAreErrNoFolder(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), sqlite.FileName))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	render := func(store.Item) ([]byte, error) { return []byte("{}"), nil }
	user, other := uuid.New(), uuid.New()
	folder := func(owner uuid.UUID, parent *uuid.UUID) store.Folder {
		t.Helper()
		f := store.Folder{ID: uuid.New(), UserID: owner, Name: "f", ParentID: parent, CreatedAt: now, UpdatedAt: now}
		if err := s.CreateFolder(ctx, f); err != nil {
			t.Fatal(err)
		}
		return f
	}
	note := func(folderID *uuid.UUID) store.Item {
		return store.Item{ID: uuid.New(), UserID: user, Type: "note", Title: "t", Body: "b", FolderID: folderID,
			ProcessingStatus: "pending", CreatedAt: now, UpdatedAt: now}
	}

	gone := folder(user, nil)
	if _, _, err := s.DeleteFolder(ctx, user, gone.ID, true, now, "content:deleted", render); err != nil {
		t.Fatal(err)
	}
	foreign := folder(other, nil)
	kept := folder(user, nil)
	root := note(nil)
	if _, err := s.CreateItem(ctx, root, "content:created", render); err != nil {
		t.Fatal(err)
	}

	for name, id := range map[string]uuid.UUID{"deleted folder": gone.ID, "another user's folder": foreign.ID, "unknown folder": uuid.New()} {
		it := note(&id)
		if _, err := s.CreateItem(ctx, it, "content:created", render); !errors.Is(err, store.ErrNoFolder) {
			t.Errorf("create item in %s: %v, want ErrNoFolder", name, err)
		}
		if _, err := s.GetItem(ctx, user, it.ID); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("create item in %s left an item: %v", name, err)
		}
		_, _, err := s.UpdateItem(ctx, user, root.ID, func(it *store.Item) error { it.FolderID = &id; return nil },
			now, "content:updated", render)
		if !errors.Is(err, store.ErrNoFolder) {
			t.Errorf("move item into %s: %v, want ErrNoFolder", name, err)
		}
		if got, _ := s.GetItem(ctx, user, root.ID); got.FolderID != nil {
			t.Errorf("move item into %s changed it: %v", name, got.FolderID)
		}
		f := store.Folder{ID: uuid.New(), UserID: user, Name: "child", ParentID: &id, CreatedAt: now, UpdatedAt: now}
		if err := s.CreateFolder(ctx, f); !errors.Is(err, store.ErrNoFolder) {
			t.Errorf("create folder in %s: %v, want ErrNoFolder", name, err)
		}
		if _, err := s.GetFolder(ctx, user, f.ID); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("create folder in %s left a folder: %v", name, err)
		}
		_, err = s.UpdateFolder(ctx, user, kept.ID, func(f *store.Folder) error { f.ParentID = &id; return nil })
		if !errors.Is(err, store.ErrNoFolder) {
			t.Errorf("move folder into %s: %v, want ErrNoFolder", name, err)
		}
	}
	// Unchanged references are not rechecked, and existing folders work.
	if _, _, err := s.UpdateItem(ctx, user, root.ID, func(it *store.Item) error { it.FolderID = &kept.ID; return nil },
		now, "content:updated", render); err != nil {
		t.Fatalf("move item into an existing folder: %v", err)
	}
	folder(user, &kept.ID)
}

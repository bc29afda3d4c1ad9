package store

import (
	"context"
	"errors"
	"time"

	"github.com/google/uuid"
)

// ErrNoFolder is returned by a write that files an item or a folder into a
// folder the user does not have: an unknown id, another user's folder, or
// one deleted while the request was on its way. The check runs in the
// write's own transaction, so no concurrent deletion slips between check
// and write.
var ErrNoFolder = errors.New("store: no such folder")

// Item is a content item (note, voice note, photo, post) of one user.
type Item struct {
	ID               uuid.UUID
	UserID           uuid.UUID
	Type             string
	Title            string
	Body             string
	Summary          string
	FolderID         *uuid.UUID
	Tags             []string
	MediaKind        *string
	MediaKey         string
	MediaContentType string
	Transcription    *string
	AISummary        *string
	AITags           []string
	ProcessingStatus string
	ProcessingError  string
	CreatedAt        time.Time
	UpdatedAt        time.Time
}

// Folder groups a user's items; folders nest through ParentID.
type Folder struct {
	ID        uuid.UUID
	UserID    uuid.UUID
	Name      string
	ParentID  *uuid.UUID
	CreatedAt time.Time
	UpdatedAt time.Time
}

// Event is an entry of the durable content event log.
type Event struct {
	ID        int64
	UserID    uuid.UUID
	Type      string
	ItemID    uuid.UUID
	Payload   []byte // JSON of the single-item shape
	CreatedAt time.Time
}

// RenderEvent turns an item, as committed, into an event payload. The store
// calls it inside the write's transaction, so the event describes exactly
// the state that was written.
type RenderEvent func(Item) ([]byte, error)

// ItemFilter selects a page of a user's items, newest first.
type ItemFilter struct {
	UserID   uuid.UUID
	Type     string     // "" for any
	FolderID *uuid.UUID // nil for any
	// Q is a case-insensitive substring of title, body, summary or transcription.
	Q      string
	Limit  int
	Offset int
}

// ContentStore persists items, folders and the event log. Every write that
// changes an item appends its event in the same transaction.
type ContentStore interface {
	// CreateItem inserts item and appends an event of eventType; ErrNoFolder
	// when item.FolderID is set and not one of the user's folders.
	CreateItem(ctx context.Context, item Item, eventType string, render RenderEvent) (Event, error)
	// UpdateItem reads the user's item, applies mutate and writes it back with
	// an event at now (none when eventType is ""); ErrNotFound for another
	// user's or an unknown item, ErrNoFolder when mutate moves it into a
	// folder that is not one of the user's. mutate may return an error to abort.
	UpdateItem(ctx context.Context, userID, id uuid.UUID, mutate func(*Item) error, now time.Time, eventType string, render RenderEvent) (Item, Event, error)
	// DeleteItem deletes the user's item and appends its deletion event (at now).
	DeleteItem(ctx context.Context, userID, id uuid.UUID, now time.Time, eventType string, render RenderEvent) (Item, Event, error)
	GetItem(ctx context.Context, userID, id uuid.UUID) (Item, error)
	// ListItems returns a page and the total number of matches.
	ListItems(ctx context.Context, f ItemFilter) ([]Item, int, error)

	// CreateFolder inserts f; ErrNoFolder when f.ParentID is set and not one
	// of the user's folders.
	CreateFolder(ctx context.Context, f Folder) error
	GetFolder(ctx context.Context, userID, id uuid.UUID) (Folder, error)
	ListFolders(ctx context.Context, userID uuid.UUID) ([]Folder, error)
	// UpdateFolder applies mutate to the user's folder; ErrNotFound for an
	// unknown folder, ErrNoFolder when the new parent is not one of the user's
	// folders, ErrConflict when it would make a cycle.
	UpdateFolder(ctx context.Context, userID, id uuid.UUID, mutate func(*Folder) error) (Folder, error)
	// DeleteFolder deletes a folder; with recursive, also its subfolders and
	// every item in them (returned, with one deletion event each), else
	// ErrConflict when it is not empty.
	DeleteFolder(ctx context.Context, userID, id uuid.UUID, recursive bool, now time.Time, eventType string, render RenderEvent) ([]Item, []Event, error)

	// GetItems returns the user's items with the given ids (missing ones are
	// skipped), in no particular order.
	GetItems(ctx context.Context, userID uuid.UUID, ids []uuid.UUID) ([]Item, error)
	// PendingItems returns up to limit items of any user whose processing
	// is pending or was interrupted (processing), oldest first, after the
	// item after (nil: from the start), for paging through all of them.
	PendingItems(ctx context.Context, after *Item, limit int) ([]Item, error)

	// PutEmbedding stores (replaces) an item's vector.
	PutEmbedding(ctx context.Context, e Embedding) error
	// ItemsWithoutEmbedding returns up to limit of the user's items that have
	// no vector made by model (new items, or a changed model).
	ItemsWithoutEmbedding(ctx context.Context, userID uuid.UUID, model string, limit int) ([]Item, error)
	// Embeddings returns the user's vectors made by model.
	Embeddings(ctx context.Context, userID uuid.UUID, model string) ([]Embedding, error)

	// EventsSince returns the user's events after afterID, oldest first, at most limit.
	EventsSince(ctx context.Context, userID uuid.UUID, afterID int64, limit int) ([]Event, error)
	// PruneEvents drops events created before cutoff.
	PruneEvents(ctx context.Context, cutoff time.Time) error
}

// Embedding is an item's vector and the model that made it.
type Embedding struct {
	ItemID    uuid.UUID
	UserID    uuid.UUID
	Model     string
	Vector    []byte // little-endian float32s
	Dim       int
	UpdatedAt time.Time
}

// Package content implements the content API: notes and other items, folders,
// listing with filters and substring search, and the change events every
// write publishes (after its commit, in commit order per user).
package content

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/stratahq/strata/gen/api"
	"github.com/stratahq/strata/impl/apierrors"
	"github.com/stratahq/strata/impl/media"
	"github.com/stratahq/strata/impl/principal"
	"github.com/stratahq/strata/impl/realtime"
	"github.com/stratahq/strata/impl/store"
)

// Event types of DECISIONS.md "Events".
const (
	EventCreated   = "content:created"
	EventUpdated   = "content:updated"
	EventProcessed = "content:processed"
	EventDeleted   = "content:deleted"
)

// Processing states of an item.
const (
	StatusPending    = "pending"
	StatusProcessing = "processing"
	StatusProcessed  = "processed"
	StatusFailed     = "failed"
)

// Limits on fields.
const (
	maxTitleLen   = 200 // characters
	titleFromBody = 80  // a default title is the body's first line, cut here
	maxTags       = 50
	maxTagLen     = 100
	maxFolderName = 200
)

// Publisher receives events after their write committed.
type Publisher interface {
	Publish(events ...realtime.Event)
}

// Processor schedules the AI processing of an item (the pipeline).
type Processor interface {
	Enqueue(ctx context.Context, item store.Item) error
}

// Options configures the content service.
type Options struct {
	// BaseURL builds media URLs.
	BaseURL string
	// Media stores uploads; nil disables uploads.
	Media *media.Store
	// Now is the clock; default time.Now.
	Now    func() time.Time
	Logger *slog.Logger
}

// Service implements the content operations for the calling user.
type Service struct {
	store     store.ContentStore
	pub       Publisher
	media     *media.Store
	processor Processor
	baseURL   string
	now       func() time.Time
	logger    *slog.Logger

	// writeMu makes "commit, then publish" one step, so events reach the hub
	// in commit order (SQLite serialises the commits themselves).
	writeMu sync.Mutex
}

// NewService returns the content service.
func NewService(st store.ContentStore, pub Publisher, opts Options) *Service {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	return &Service{store: st, pub: pub, media: opts.Media, baseURL: opts.BaseURL, now: opts.Now, logger: opts.Logger}
}

// SetProcessor connects the AI pipeline; items with text are enqueued on
// creation and when their body changes.
func (s *Service) SetProcessor(p Processor) { s.processor = p }

// enqueue hands an item to the pipeline after its write committed. A failure
// is logged, not returned: the item is saved, and the pipeline's start-up
// scan picks up every item still pending.
func (s *Service) enqueue(ctx context.Context, it store.Item) {
	if s.processor == nil || it.ProcessingStatus != StatusPending {
		return
	}
	if err := s.processor.Enqueue(ctx, it); err != nil {
		s.logger.WarnContext(ctx, "enqueue item for processing", "item_id", it.ID.String(), "err", err)
	}
}

// Detail renders an item in the single-item shape.
func (s *Service) Detail(it store.Item) api.ContentItemDetail {
	d := api.ContentItemDetail{ID: it.ID, Type: api.ContentType(it.Type), Title: it.Title, Body: it.Body,
		Summary: it.Summary, FolderID: it.FolderID, Tags: nonNil(it.Tags), ProcessingStatus: api.ProcessingStatus(it.ProcessingStatus),
		Transcription: it.Transcription, AiSummary: it.AISummary, AiTags: nonNil(it.AITags),
		CreatedAt: it.CreatedAt, UpdatedAt: it.UpdatedAt}
	if it.ProcessingError != "" {
		reason := it.ProcessingError
		d.ProcessingError = &reason
	}
	if it.MediaKind != nil {
		kind := api.MediaKind(*it.MediaKind)
		d.MediaKind = &kind
		url := s.baseURL + "/api/content/" + it.ID.String() + "/media"
		d.MediaURL = &url
	}
	return d
}

// Summary renders an item in the list shape.
func (s *Service) Summary(it store.Item) api.ContentItem {
	d := s.Detail(it)
	return api.ContentItem{ID: d.ID, Type: d.Type, Title: d.Title, Body: d.Body, Summary: d.Summary, FolderID: d.FolderID,
		Tags: d.Tags, MediaKind: d.MediaKind, ProcessingStatus: d.ProcessingStatus, CreatedAt: d.CreatedAt, UpdatedAt: d.UpdatedAt}
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// render is the store.RenderEvent of every write: the single-item shape.
func (s *Service) render(it store.Item) ([]byte, error) {
	return json.Marshal(s.Detail(it))
}

// EventMessage encodes a logged event as the WebSocket message of
// DECISIONS.md: {"type","id","at","data"}.
func EventMessage(ev store.Event) realtime.Event {
	msg, _ := json.Marshal(struct {
		Type string          `json:"type"`
		ID   string          `json:"id"`
		At   time.Time       `json:"at"`
		Data json.RawMessage `json:"data"`
	}{ev.Type, strconv.FormatInt(ev.ID, 10), ev.CreatedAt.UTC(), ev.Payload})
	return realtime.Event{ID: ev.ID, UserID: ev.UserID, Message: msg}
}

// write runs a store write and publishes its events after it committed.
func (s *Service) write(fn func() ([]store.Event, error)) error {
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	events, err := fn()
	if err != nil {
		return err
	}
	if s.pub != nil && len(events) > 0 {
		out := make([]realtime.Event, len(events))
		for i, ev := range events {
			out[i] = EventMessage(ev)
		}
		s.pub.Publish(out...)
	}
	return nil
}

// ─── validation helpers ───

func cleanTags(tags []string) ([]string, error) {
	out := []string{}
	seen := map[string]bool{}
	for _, t := range tags {
		t = strings.TrimSpace(t)
		if t == "" || seen[t] {
			continue
		}
		if utf8.RuneCountInString(t) > maxTagLen {
			return nil, apierrors.Validation("field \"tags\": a tag is longer than %d characters", maxTagLen)
		}
		seen[t] = true
		out = append(out, t)
	}
	if len(out) > maxTags {
		return nil, apierrors.Validation("field \"tags\": at most %d tags", maxTags)
	}
	return out, nil
}

// defaultTitle is the body's first non-empty line, at most 80 characters.
func defaultTitle(body string) string {
	for _, line := range strings.Split(body, "\n") {
		if line = strings.TrimSpace(line); line != "" {
			if utf8.RuneCountInString(line) > titleFromBody {
				line = string([]rune(line)[:titleFromBody])
			}
			return line
		}
	}
	return ""
}

func checkTitle(title string) error {
	if utf8.RuneCountInString(title) > maxTitleLen {
		return apierrors.Validation("field \"title\": at most %d characters", maxTitleLen)
	}
	return nil
}

// noFolder turns the store's ErrNoFolder into 400 naming field. The store
// checks folder references in the write's own transaction (not here before
// it), so a folder deleted by a concurrent request is a 400, never a 500.
func noFolder(err error, field string) error {
	if errors.Is(err, store.ErrNoFolder) {
		return apierrors.Validation("field %q: no such folder", field)
	}
	return err
}

func notFound(id uuid.UUID) error {
	return apierrors.NotFound("content item %s not found", id)
}

// ─── items ───

// NoteInput is a new note.
type NoteInput struct {
	Title    *string
	Body     string
	FolderID *uuid.UUID
	Tags     []string
}

// CreateNote creates a text note (processing pending) and emits content:created.
func (s *Service) CreateNote(ctx context.Context, p principal.Principal, in NoteInput) (store.Item, error) {
	if strings.TrimSpace(in.Body) == "" {
		return store.Item{}, apierrors.Validation("field \"body\": must not be empty")
	}
	title := defaultTitle(in.Body)
	if in.Title != nil && strings.TrimSpace(*in.Title) != "" {
		title = strings.TrimSpace(*in.Title)
	}
	if err := checkTitle(title); err != nil {
		return store.Item{}, err
	}
	tags, err := cleanTags(in.Tags)
	if err != nil {
		return store.Item{}, err
	}
	now := s.now()
	it := store.Item{ID: uuid.New(), UserID: p.UserID, Type: "note", Title: title, Body: in.Body, FolderID: in.FolderID,
		Tags: tags, AITags: []string{}, ProcessingStatus: StatusPending, CreatedAt: now, UpdatedAt: now}
	if err := s.CreateItem(ctx, it); err != nil {
		return store.Item{}, err
	}
	return it, nil
}

// CreateItem stores an item built elsewhere (uploads), emits content:created
// and hands it to the pipeline. A folder that is not the user's is 400
// (field "folderId").
func (s *Service) CreateItem(ctx context.Context, it store.Item) error {
	err := s.write(func() ([]store.Event, error) {
		ev, err := s.store.CreateItem(ctx, it, EventCreated, s.render)
		return []store.Event{ev}, err
	})
	if err != nil {
		return noFolder(err, "folderId")
	}
	s.enqueue(ctx, it)
	return nil
}

// Get returns one of the caller's items; another user's is 404.
func (s *Service) Get(ctx context.Context, p principal.Principal, id uuid.UUID) (store.Item, error) {
	it, err := s.store.GetItem(ctx, p.UserID, id)
	if errors.Is(err, store.ErrNotFound) {
		return it, notFound(id)
	}
	return it, err
}

// ListInput selects a page.
type ListInput struct {
	Limit, Offset int
	Type          string
	FolderID      *uuid.UUID
	Q             string
}

// List returns a page of the caller's items, newest first, and the total.
func (s *Service) List(ctx context.Context, p principal.Principal, in ListInput) ([]store.Item, int, error) {
	if in.Limit <= 0 {
		in.Limit = 20
	}
	return s.store.ListItems(ctx, store.ItemFilter{UserID: p.UserID, Type: in.Type, FolderID: in.FolderID,
		Q: in.Q, Limit: in.Limit, Offset: in.Offset})
}

// Patch is a change to an item; nil fields keep their value. FolderSet with
// a nil FolderID moves the item to the root.
type Patch struct {
	Title     *string
	Body      *string
	Tags      *[]string
	FolderSet bool
	FolderID  *uuid.UUID
}

// errUnchanged aborts an update transaction that would change nothing.
var errUnchanged = errors.New("unchanged")

// Update applies a patch and emits content:updated. A changed body sends the
// item back to the AI pipeline (processing pending). A patch that changes
// nothing changes nothing: no new updatedAt, no event.
func (s *Service) Update(ctx context.Context, p principal.Principal, id uuid.UUID, patch Patch) (store.Item, error) {
	if patch.Body != nil && strings.TrimSpace(*patch.Body) == "" {
		return store.Item{}, apierrors.Validation("field \"body\": must not be empty")
	}
	if patch.Title != nil {
		if err := checkTitle(strings.TrimSpace(*patch.Title)); err != nil {
			return store.Item{}, err
		}
	}
	var tags []string
	if patch.Tags != nil {
		var err error
		if tags, err = cleanTags(*patch.Tags); err != nil {
			return store.Item{}, err
		}
	}
	var updated store.Item
	err := s.write(func() ([]store.Event, error) {
		it, ev, err := s.store.UpdateItem(ctx, p.UserID, id, func(it *store.Item) error {
			changed := false
			if patch.Title != nil && strings.TrimSpace(*patch.Title) != it.Title {
				it.Title, changed = strings.TrimSpace(*patch.Title), true
			}
			if patch.Body != nil && *patch.Body != it.Body {
				it.Body, changed = *patch.Body, true
				it.ProcessingStatus, it.ProcessingError = StatusPending, ""
			}
			if patch.Tags != nil && !equalStrings(tags, it.Tags) {
				it.Tags, changed = tags, true
			}
			if patch.FolderSet && !equalUUIDPtr(patch.FolderID, it.FolderID) {
				it.FolderID, changed = patch.FolderID, true
			}
			if !changed {
				updated = *it
				return errUnchanged
			}
			it.UpdatedAt = s.now()
			return nil
		}, s.now(), EventUpdated, s.render)
		if err != nil {
			return nil, err
		}
		updated = it
		return []store.Event{ev}, nil
	})
	switch {
	case errors.Is(err, errUnchanged):
		return updated, nil
	case errors.Is(err, store.ErrNotFound):
		return updated, notFound(id)
	case err != nil:
		return updated, noFolder(err, "folderId")
	}
	s.enqueue(ctx, updated) // a changed body left it pending
	return updated, nil
}

func equalStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func equalUUIDPtr(a, b *uuid.UUID) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}

// Delete deletes one of the caller's items and emits content:deleted.
func (s *Service) Delete(ctx context.Context, p principal.Principal, id uuid.UUID) (store.Item, error) {
	var deleted store.Item
	err := s.write(func() ([]store.Event, error) {
		it, ev, err := s.store.DeleteItem(ctx, p.UserID, id, s.now(), EventDeleted, s.render)
		deleted = it
		return []store.Event{ev}, err
	})
	if errors.Is(err, store.ErrNotFound) {
		return deleted, notFound(id)
	}
	if err != nil {
		return deleted, err
	}
	s.deleteMedia(ctx, deleted)
	return deleted, nil
}

// ─── folders ───

func checkFolderName(name string) (string, error) {
	name = strings.TrimSpace(name)
	if name == "" || utf8.RuneCountInString(name) > maxFolderName {
		return "", apierrors.Validation("field \"name\": 1 to %d characters", maxFolderName)
	}
	return name, nil
}

// CreateFolder creates a folder, optionally inside one of the caller's folders.
func (s *Service) CreateFolder(ctx context.Context, p principal.Principal, name string, parentID *uuid.UUID) (store.Folder, error) {
	name, err := checkFolderName(name)
	if err != nil {
		return store.Folder{}, err
	}
	now := s.now()
	f := store.Folder{ID: uuid.New(), UserID: p.UserID, Name: name, ParentID: parentID, CreatedAt: now, UpdatedAt: now}
	if err := s.store.CreateFolder(ctx, f); err != nil {
		return store.Folder{}, noFolder(err, "parentId")
	}
	return f, nil
}

// ListFolders lists the caller's folders by name.
func (s *Service) ListFolders(ctx context.Context, p principal.Principal) ([]store.Folder, error) {
	return s.store.ListFolders(ctx, p.UserID)
}

// FolderPatch is a change to a folder; ParentSet with nil moves it to the root.
type FolderPatch struct {
	Name      *string
	ParentSet bool
	ParentID  *uuid.UUID
}

// UpdateFolder renames or moves a folder; a move into its own subtree is 409.
func (s *Service) UpdateFolder(ctx context.Context, p principal.Principal, id uuid.UUID, patch FolderPatch) (store.Folder, error) {
	var name string
	if patch.Name != nil {
		var err error
		if name, err = checkFolderName(*patch.Name); err != nil {
			return store.Folder{}, err
		}
	}
	f, err := s.store.UpdateFolder(ctx, p.UserID, id, func(f *store.Folder) error {
		changed := false
		if patch.Name != nil && name != f.Name {
			f.Name, changed = name, true
		}
		if patch.ParentSet && !equalUUIDPtr(patch.ParentID, f.ParentID) {
			f.ParentID, changed = patch.ParentID, true
		}
		if changed {
			f.UpdatedAt = s.now()
		}
		return nil
	})
	switch {
	case errors.Is(err, store.ErrNotFound):
		return f, apierrors.NotFound("folder %s not found", id)
	case errors.Is(err, store.ErrConflict):
		return f, apierrors.New(http.StatusConflict, apierrors.CodeConflict, "a folder cannot be moved into itself or its subfolders")
	}
	return f, noFolder(err, "parentId")
}

// DeleteFolder deletes an empty folder; with recursive, also everything in
// it (each deleted item emits content:deleted). A non-empty folder without
// recursive is 409.
func (s *Service) DeleteFolder(ctx context.Context, p principal.Principal, id uuid.UUID, recursive bool) error {
	var deleted []store.Item
	err := s.write(func() ([]store.Event, error) {
		items, events, err := s.store.DeleteFolder(ctx, p.UserID, id, recursive, s.now(), EventDeleted, s.render)
		deleted = items
		return events, err
	})
	switch {
	case errors.Is(err, store.ErrNotFound):
		return apierrors.NotFound("folder %s not found", id)
	case errors.Is(err, store.ErrConflict):
		return apierrors.New(http.StatusConflict, apierrors.CodeConflict, "folder %s is not empty; delete with ?recursive=true", id)
	}
	if err != nil {
		return fmt.Errorf("delete folder: %w", err)
	}
	s.deleteMedia(ctx, deleted...)
	return nil
}

// ErrStale aborts a pipeline update whose item changed meanwhile.
var ErrStale = errors.New("content: item changed while it was processed")

// ApplyProcessing runs mutate on the user's item in one transaction and, when
// emit is set, emits content:processed after the commit (silent otherwise,
// e.g. for the pending → processing step). It is how the AI pipeline writes;
// it leaves updatedAt alone, which records the user's last edit.
func (s *Service) ApplyProcessing(ctx context.Context, userID, id uuid.UUID, mutate func(*store.Item) error, emit bool) (store.Item, error) {
	eventType := ""
	if emit {
		eventType = EventProcessed
	}
	var out store.Item
	err := s.write(func() ([]store.Event, error) {
		it, ev, err := s.store.UpdateItem(ctx, userID, id, mutate, s.now(), eventType, s.render)
		out = it
		if err != nil || !emit {
			return nil, err
		}
		return []store.Event{ev}, nil
	})
	return out, err
}

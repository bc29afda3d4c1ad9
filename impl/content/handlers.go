package content

import (
	"context"

	"github.com/google/uuid"

	"github.com/stratahq/strata/gen/api"
	"github.com/stratahq/strata/impl/principal"
	"github.com/stratahq/strata/impl/realtime"
	"github.com/stratahq/strata/impl/store"
)

// Handlers implements the content operations of the generated strict
// server interface (items and folders).
type Handlers struct {
	svc *Service
}

// NewHandlers returns the content handlers over svc.
func NewHandlers(svc *Service) *Handlers { return &Handlers{svc: svc} }

// ListContent implements GET /api/content.
func (h *Handlers) ListContent(ctx context.Context, req api.ListContentRequestObject) (api.ListContentResponseObject, error) {
	p, err := principal.Required(ctx)
	if err != nil {
		return nil, err
	}
	in := ListInput{FolderID: req.Params.FolderID}
	if req.Params.Limit != nil {
		in.Limit = *req.Params.Limit
	}
	if req.Params.Offset != nil {
		in.Offset = *req.Params.Offset
	}
	if req.Params.Type != nil {
		in.Type = string(*req.Params.Type)
	}
	if req.Params.Q != nil {
		in.Q = *req.Params.Q // a NUL in it was refused by the validator (httpx.Validate)
	}
	items, total, err := h.svc.List(ctx, p, in)
	if err != nil {
		return nil, err
	}
	out := api.ListContent200JSONResponse{Data: make([]api.ContentItem, len(items)), Total: total}
	for i, it := range items {
		out.Data[i] = h.svc.Summary(it)
	}
	return out, nil
}

// GetContent implements GET /api/content/{id}.
func (h *Handlers) GetContent(ctx context.Context, req api.GetContentRequestObject) (api.GetContentResponseObject, error) {
	p, err := principal.Required(ctx)
	if err != nil {
		return nil, err
	}
	it, err := h.svc.Get(ctx, p, req.ID)
	if err != nil {
		return nil, err
	}
	return api.GetContent200JSONResponse(h.svc.Detail(it)), nil
}

// CreateNote implements POST /api/content/notes.
func (h *Handlers) CreateNote(ctx context.Context, req api.CreateNoteRequestObject) (api.CreateNoteResponseObject, error) {
	p, err := principal.Required(ctx)
	if err != nil {
		return nil, err
	}
	in := NoteInput{Title: req.Body.Title, Body: req.Body.Body, FolderID: req.Body.FolderID}
	if req.Body.Tags != nil {
		in.Tags = *req.Body.Tags
	}
	it, err := h.svc.CreateNote(ctx, p, in)
	if err != nil {
		return nil, err
	}
	return api.CreateNote201JSONResponse(h.svc.Detail(it)), nil
}

// UpdateContent implements PATCH /api/content/{id}.
func (h *Handlers) UpdateContent(ctx context.Context, req api.UpdateContentRequestObject) (api.UpdateContentResponseObject, error) {
	p, err := principal.Required(ctx)
	if err != nil {
		return nil, err
	}
	patch := Patch{Title: req.Body.Title, Body: req.Body.Body, Tags: req.Body.Tags}
	if req.Body.FolderID.IsSpecified() {
		patch.FolderSet = true
		if !req.Body.FolderID.IsNull() {
			id := req.Body.FolderID.MustGet()
			patch.FolderID = &id
		}
	}
	it, err := h.svc.Update(ctx, p, req.ID, patch)
	if err != nil {
		return nil, err
	}
	return api.UpdateContent200JSONResponse(h.svc.Detail(it)), nil
}

// DeleteContent implements DELETE /api/content/{id}.
func (h *Handlers) DeleteContent(ctx context.Context, req api.DeleteContentRequestObject) (api.DeleteContentResponseObject, error) {
	p, err := principal.Required(ctx)
	if err != nil {
		return nil, err
	}
	if _, err := h.svc.Delete(ctx, p, req.ID); err != nil {
		return nil, err
	}
	return api.DeleteContent204Response{}, nil
}

func folderBody(f store.Folder) api.Folder {
	return api.Folder{ID: f.ID, Name: f.Name, ParentID: f.ParentID, CreatedAt: f.CreatedAt, UpdatedAt: f.UpdatedAt}
}

// ListFolders implements GET /api/content/folders.
func (h *Handlers) ListFolders(ctx context.Context, _ api.ListFoldersRequestObject) (api.ListFoldersResponseObject, error) {
	p, err := principal.Required(ctx)
	if err != nil {
		return nil, err
	}
	folders, err := h.svc.ListFolders(ctx, p)
	if err != nil {
		return nil, err
	}
	out := api.ListFolders200JSONResponse{Data: make([]api.Folder, len(folders))}
	for i, f := range folders {
		out.Data[i] = folderBody(f)
	}
	return out, nil
}

// CreateFolder implements POST /api/content/folders.
func (h *Handlers) CreateFolder(ctx context.Context, req api.CreateFolderRequestObject) (api.CreateFolderResponseObject, error) {
	p, err := principal.Required(ctx)
	if err != nil {
		return nil, err
	}
	f, err := h.svc.CreateFolder(ctx, p, req.Body.Name, req.Body.ParentID)
	if err != nil {
		return nil, err
	}
	return api.CreateFolder201JSONResponse(folderBody(f)), nil
}

// UpdateFolder implements PATCH /api/content/folders/{id}.
func (h *Handlers) UpdateFolder(ctx context.Context, req api.UpdateFolderRequestObject) (api.UpdateFolderResponseObject, error) {
	p, err := principal.Required(ctx)
	if err != nil {
		return nil, err
	}
	patch := FolderPatch{Name: req.Body.Name}
	if req.Body.ParentID.IsSpecified() {
		patch.ParentSet = true
		if !req.Body.ParentID.IsNull() {
			id := req.Body.ParentID.MustGet()
			patch.ParentID = &id
		}
	}
	f, err := h.svc.UpdateFolder(ctx, p, req.ID, patch)
	if err != nil {
		return nil, err
	}
	return api.UpdateFolder200JSONResponse(folderBody(f)), nil
}

// DeleteFolder implements DELETE /api/content/folders/{id}.
func (h *Handlers) DeleteFolder(ctx context.Context, req api.DeleteFolderRequestObject) (api.DeleteFolderResponseObject, error) {
	p, err := principal.Required(ctx)
	if err != nil {
		return nil, err
	}
	recursive := req.Params.Recursive != nil && *req.Params.Recursive
	if err := h.svc.DeleteFolder(ctx, p, req.ID, recursive); err != nil {
		return nil, err
	}
	return api.DeleteFolder204Response{}, nil
}

// EventLog is the durable event log as the WebSocket replay source.
type EventLog struct{ Store store.ContentStore }

var _ realtime.EventLog = EventLog{}

// Since implements realtime.EventLog.
func (l EventLog) Since(ctx context.Context, userID uuid.UUID, afterID int64, limit int) ([]realtime.Event, error) {
	events, err := l.Store.EventsSince(ctx, userID, afterID, limit)
	if err != nil {
		return nil, err
	}
	out := make([]realtime.Event, len(events))
	for i, ev := range events {
		out[i] = EventMessage(ev)
	}
	return out, nil
}

// UploadVoiceNote implements POST /api/content/voice-notes.
func (h *Handlers) UploadVoiceNote(ctx context.Context, req api.UploadVoiceNoteRequestObject) (api.UploadVoiceNoteResponseObject, error) {
	p, err := principal.Required(ctx)
	if err != nil {
		return nil, err
	}
	it, err := h.svc.Upload(ctx, p, VoiceNoteUpload, req.Body)
	if err != nil {
		return nil, err
	}
	return api.UploadVoiceNote202JSONResponse(h.svc.Detail(it)), nil
}

// UploadPhoto implements POST /api/content/photos.
func (h *Handlers) UploadPhoto(ctx context.Context, req api.UploadPhotoRequestObject) (api.UploadPhotoResponseObject, error) {
	p, err := principal.Required(ctx)
	if err != nil {
		return nil, err
	}
	it, err := h.svc.Upload(ctx, p, PhotoUpload, req.Body)
	if err != nil {
		return nil, err
	}
	return api.UploadPhoto202JSONResponse(h.svc.Detail(it)), nil
}

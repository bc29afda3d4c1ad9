package pipeline

import (
	"context"
	"errors"
	"net/http"

	"github.com/google/uuid"

	"github.com/stratahq/strata/gen/api"
	"github.com/stratahq/strata/impl/apierrors"
	"github.com/stratahq/strata/impl/content"
	"github.com/stratahq/strata/impl/principal"
	"github.com/stratahq/strata/impl/store"
)

// SearchGate reports whether a tenant may use natural-language search (the
// per-tenant content_search feature flag).
type SearchGate func(ctx context.Context, tenantID uuid.UUID) (bool, error)

// Handlers implements the related and search operations.
type Handlers struct {
	vectors *Vectors
	content *content.Service
	gate    SearchGate
}

// NewHandlers returns the handlers.
func NewHandlers(vectors *Vectors, contentSvc *content.Service, gate SearchGate) *Handlers {
	return &Handlers{vectors: vectors, content: contentSvc, gate: gate}
}

func (h *Handlers) related(items []Scored) []api.RelatedItem {
	out := make([]api.RelatedItem, len(items))
	for i, s := range items {
		c := h.content.Summary(s.Item)
		out[i] = api.RelatedItem{ID: c.ID, Type: c.Type, Title: c.Title, Body: c.Body, Summary: c.Summary, FolderID: c.FolderID,
			Tags: c.Tags, MediaKind: c.MediaKind, ProcessingStatus: c.ProcessingStatus, CreatedAt: c.CreatedAt,
			UpdatedAt: c.UpdatedAt, Similarity: s.Similarity}
	}
	return out
}

// ListRelated implements GET /api/content/{id}/related.
func (h *Handlers) ListRelated(ctx context.Context, req api.ListRelatedRequestObject) (api.ListRelatedResponseObject, error) {
	p, err := principal.Required(ctx)
	if err != nil {
		return nil, err
	}
	limit := 10
	if req.Params.Limit != nil {
		limit = *req.Params.Limit
	}
	items, err := h.vectors.Related(ctx, p.UserID, req.ID, limit)
	if errors.Is(err, store.ErrNotFound) {
		return nil, apierrors.NotFound("content item %s not found", req.ID)
	}
	if err != nil {
		return nil, err
	}
	return api.ListRelated200JSONResponse{Data: h.related(items)}, nil
}

// SearchContent implements GET /api/content/search.
func (h *Handlers) SearchContent(ctx context.Context, req api.SearchContentRequestObject) (api.SearchContentResponseObject, error) {
	p, err := principal.Required(ctx)
	if err != nil {
		return nil, err
	}
	allowed, err := h.gate(ctx, p.TenantID)
	if err != nil {
		return nil, err
	}
	if !allowed {
		return nil, apierrors.New(http.StatusForbidden, apierrors.CodeFeatureGated, "natural-language search is not enabled for this tenant")
	}
	limit := 20
	if req.Params.Limit != nil {
		limit = *req.Params.Limit
	}
	itemType := ""
	if req.Params.Type != nil {
		itemType = string(*req.Params.Type)
	}
	items, total, err := h.vectors.Search(ctx, p.UserID, req.Params.Q, itemType, limit)
	if err != nil {
		return nil, err
	}
	return api.SearchContent200JSONResponse{Data: h.related(items), Total: total}, nil
}

package sdk

import (
	"context"
	"errors"
	"iter"

	openapi_types "github.com/oapi-codegen/runtime/types"
)

// DefaultPageSize is how many items Items fetches per request unless
// ListOptions.PageSize says otherwise.
const DefaultPageSize = 50

// maxShifts bounds how often in a row Items fetches a page again because the
// list keeps changing; then it goes on with what it has (dropping repeats).
const maxShifts = 8

// ListOptions filters and pages Items.
type ListOptions struct {
	// PageSize is the number of items fetched per request, 1 to 100
	// (default DefaultPageSize). It does not limit how many items the
	// iteration yields: stop the loop for that.
	PageSize int
	// Type keeps items of this type only (note, voice_note, photo, post).
	Type ContentType
	// FolderID keeps items directly in this folder only.
	FolderID *openapi_types.UUID
	// Query keeps items whose title, body, summary or transcription contain
	// it, case-insensitively (the q parameter).
	Query string
}

// Items iterates over the user's content, newest first, fetching pages of
// GET /api/content lazily as the loop advances; breaking out of the loop
// fetches nothing more. A failed request is yielded as the error of a last
// pair, after which the iteration ends.
//
//	for item, err := range c.Items(ctx, sdk.ListOptions{Type: sdk.Note}) {
//		if err != nil {
//			return err
//		}
//		fmt.Println(item.Title)
//	}
//
// The list may change while it is being read. Pages are offsets into the
// newest-first list, so every page compares the total with the previous
// one and moves its offset by the difference: items created meanwhile (at
// the front) do not push items seen already into the next page, and items
// deleted meanwhile do not make unseen ones skip past it. Items that still
// come twice are dropped by id. Items created after the iteration started
// may or may not be yielded; items deleted meanwhile may already have been.
func (s *Client) Items(ctx context.Context, opts ListOptions) iter.Seq2[ContentItem, error] {
	return func(yield func(ContentItem, error) bool) {
		size := opts.PageSize
		if size <= 0 {
			size = DefaultPageSize
		}
		params := ListContentParams{Limit: &size, FolderID: opts.FolderID}
		if opts.Type != "" {
			params.Type = &opts.Type
		}
		if opts.Query != "" {
			params.Q = &opts.Query
		}
		seen := map[openapi_types.UUID]struct{}{}
		offset, lastTotal, shifts := 0, -1, 0
		for {
			off := offset
			params.Offset = &off
			rsp, err := s.api.ListContentWithResponse(ctx, &params)
			if err == nil {
				_, err = result(rsp.JSON200, rsp.HTTPResponse, rsp.Body)
			}
			if err != nil {
				yield(ContentItem{}, err)
				return
			}
			page := rsp.JSON200
			if lastTotal >= 0 && page.Total != lastTotal && shifts < maxShifts {
				// The list changed since the previous page: shift by the
				// difference and fetch this page again.
				offset = max(0, offset+page.Total-lastTotal)
				lastTotal = page.Total
				shifts++
				continue
			}
			lastTotal, shifts = page.Total, 0
			for _, it := range page.Data {
				if _, dup := seen[it.ID]; dup {
					continue
				}
				seen[it.ID] = struct{}{}
				if !yield(it, nil) {
					return
				}
			}
			offset += len(page.Data)
			if len(page.Data) < size || offset >= page.Total {
				return
			}
		}
	}
}

// CreateNote creates a text note (POST /api/content/notes). The body must
// not be empty; the title defaults to its first line. The returned item is
// still processingStatus pending: the AI pipeline adds the summary, tags
// and embedding later (watch Events for content:processed).
func (s *Client) CreateNote(ctx context.Context, note NoteCreate) (ContentItemDetail, error) {
	rsp, err := s.api.CreateNoteWithResponse(ctx, note)
	if err != nil {
		return ContentItemDetail{}, err
	}
	return result(rsp.JSON201, rsp.HTTPResponse, rsp.Body)
}

// GetItem returns one item with its AI and media fields. Another user's
// item is ErrNotFound, like a missing one.
func (s *Client) GetItem(ctx context.Context, id openapi_types.UUID) (ContentItemDetail, error) {
	rsp, err := s.api.GetContentWithResponse(ctx, id)
	if err != nil {
		return ContentItemDetail{}, err
	}
	return result(rsp.JSON200, rsp.HTTPResponse, rsp.Body)
}

// UpdateItem changes an item's title, body, tags and/or folder (omitted
// fields keep their values) and returns it as it is now. A changed body
// runs the AI pipeline again.
func (s *Client) UpdateItem(ctx context.Context, id openapi_types.UUID, update ContentUpdate) (ContentItemDetail, error) {
	// An update sets fields to given values, so repeating it changes nothing:
	// it is retried on 429 and 503 like other idempotent requests.
	rsp, err := s.api.UpdateContentWithResponse(Idempotent(ctx), id, update)
	if err != nil {
		return ContentItemDetail{}, err
	}
	return result(rsp.JSON200, rsp.HTTPResponse, rsp.Body)
}

// DeleteItem deletes an item and its media.
func (s *Client) DeleteItem(ctx context.Context, id openapi_types.UUID) error {
	rsp, err := s.api.DeleteContentWithResponse(ctx, id)
	if err != nil {
		return err
	}
	return noContent(rsp.HTTPResponse, rsp.Body)
}

// Related returns up to limit (1 to 50; 0 means the server's 10) of the
// user's items most similar to id, most similar first. It is empty until
// the item has been processed.
func (s *Client) Related(ctx context.Context, id openapi_types.UUID, limit int) ([]RelatedItem, error) {
	params := ListRelatedParams{}
	if limit != 0 {
		params.Limit = &limit
	}
	rsp, err := s.api.ListRelatedWithResponse(ctx, id, &params)
	if err != nil {
		return nil, err
	}
	res, err := result(rsp.JSON200, rsp.HTTPResponse, rsp.Body)
	return res.Data, err
}

// SearchOptions narrows Search.
type SearchOptions struct {
	// Limit is the most results returned, 1 to 100 (0: the server's 20).
	Limit int
	// Type keeps items of this type only.
	Type ContentType
}

// Search ranks the user's items by similarity to a natural-language query.
// While search is switched off for the tenant it fails with
// ErrFeatureGated.
func (s *Client) Search(ctx context.Context, q string, opts SearchOptions) (SearchResult, error) {
	if q == "" {
		return SearchResult{}, errors.New("strata: search needs a query")
	}
	params := SearchContentParams{Q: q}
	if opts.Limit != 0 {
		params.Limit = &opts.Limit
	}
	if opts.Type != "" {
		params.Type = &opts.Type
	}
	rsp, err := s.api.SearchContentWithResponse(ctx, &params)
	if err != nil {
		return SearchResult{}, err
	}
	return result(rsp.JSON200, rsp.HTTPResponse, rsp.Body)
}

package sdk

import (
	"context"
	"fmt"

	"github.com/oapi-codegen/nullable"
	openapi_types "github.com/oapi-codegen/runtime/types"
)

// Folders lists all of the user's folders, ordered by name. The list is
// flat: ParentID (nil at the root) gives the tree.
func (s *Client) Folders(ctx context.Context) ([]Folder, error) {
	rsp, err := s.api.ListFoldersWithResponse(ctx)
	if err != nil {
		return nil, fmt.Errorf("strata: list folders: %w", err)
	}
	res, err := result(rsp.JSON200, rsp.HTTPResponse, rsp.Body)
	return res.Data, err
}

// CreateFolder creates a folder at the root, or under f.ParentID. An empty
// name, or a ParentID that is not one of the user's folders, is
// ErrValidation. It is not retried on 429 or 503: a second attempt could
// make a second folder.
func (s *Client) CreateFolder(ctx context.Context, f FolderCreate) (Folder, error) {
	rsp, err := s.api.CreateFolderWithResponse(ctx, f)
	if err != nil {
		return Folder{}, fmt.Errorf("strata: create folder %q: %w", f.Name, err)
	}
	return result(rsp.JSON201, rsp.HTTPResponse, rsp.Body)
}

// UpdateFolder renames and/or moves a folder and returns it as it is now.
// Omitted fields keep their values; u.ParentID set to null
// (nullable.NewNullNullable) moves the folder to the root. RenameFolder and
// MoveFolder are shorter for one change.
//
// An unknown id (or another user's folder) is ErrNotFound, a move under
// the folder itself or one of its subfolders ErrConflict, an unknown
// parent ErrValidation. The update sets values rather than changing them,
// so repeating it does no harm: unlike other PATCH requests it is retried
// on 429 and 503.
func (s *Client) UpdateFolder(ctx context.Context, id openapi_types.UUID, u FolderUpdate) (Folder, error) {
	rsp, err := s.api.UpdateFolderWithResponse(Idempotent(ctx), id, u)
	if err != nil {
		return Folder{}, fmt.Errorf("strata: update folder %s: %w", id, err)
	}
	return result(rsp.JSON200, rsp.HTTPResponse, rsp.Body)
}

// RenameFolder gives a folder a new name, leaving it where it is.
func (s *Client) RenameFolder(ctx context.Context, id openapi_types.UUID, name string) (Folder, error) {
	return s.UpdateFolder(ctx, id, FolderUpdate{Name: &name})
}

// MoveFolder moves a folder, with everything in it, under parent; a nil
// parent moves it to the root.
func (s *Client) MoveFolder(ctx context.Context, id openapi_types.UUID, parent *openapi_types.UUID) (Folder, error) {
	to := nullable.NewNullNullable[openapi_types.UUID]()
	if parent != nil {
		to = nullable.NewNullableWithValue(*parent)
	}
	return s.UpdateFolder(ctx, id, FolderUpdate{ParentID: to})
}

// DeleteFolder deletes an empty folder. A folder that still holds items or
// subfolders is ErrConflict (use DeleteFolderAll); an unknown id is
// ErrNotFound.
func (s *Client) DeleteFolder(ctx context.Context, id openapi_types.UUID) error {
	return s.deleteFolder(ctx, id, false)
}

// DeleteFolderAll deletes a folder with its subfolders and all the items in
// them, as os.RemoveAll does a directory; each deleted item emits
// content:deleted. An unknown id is ErrNotFound.
func (s *Client) DeleteFolderAll(ctx context.Context, id openapi_types.UUID) error {
	return s.deleteFolder(ctx, id, true)
}

func (s *Client) deleteFolder(ctx context.Context, id openapi_types.UUID, recursive bool) error {
	params := &DeleteFolderParams{}
	if recursive {
		params.Recursive = &recursive
	}
	rsp, err := s.api.DeleteFolderWithResponse(ctx, id, params)
	if err != nil {
		return fmt.Errorf("strata: delete folder %s: %w", id, err)
	}
	return noContent(rsp.HTTPResponse, rsp.Body)
}

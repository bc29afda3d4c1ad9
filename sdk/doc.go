// Package sdk is the Go client of Strata: the client generated from
// openapi/openapi.yaml (client.gen.go) and, on top of it, the hand-written
// layer a Go program reaches for first.
//
// Quick start:
//
//	c, err := sdk.New("http://127.0.0.1:8080", sdk.WithPassword("ada@example.com", password))
//	if err != nil { log.Fatal(err) }
//	res, err := c.Query(ctx, "SELECT 42 AS answer", nil)
//	if err != nil { log.Fatal(err) }
//	fmt.Println(res.Rows[0]["answer"]) // 42
//
// What the hand-written layer (type Client) does for every request:
//
//   - Authentication: a password login on first use (WithPassword), a
//     static access token or personal access token (WithToken,
//     WithPersonalAccessToken), or a stored refresh token
//     (WithRefreshToken). The access token is refreshed 60 s before it
//     expires and when the server answers 401 TOKEN_EXPIRED (the request
//     is then sent once more). However many goroutines need a new token,
//     one refresh runs and all of them wait for it: refresh tokens are
//     single-use. The rotated refresh token is kept, and reported to
//     WithSessionCallback.
//   - X-Tenant-Id on /api/data-platform/ requests: from WithTenant, else
//     the session's user.app_metadata.tenant_id, else (for static tokens)
//     GET /api/auth/v1/user, asked once.
//   - Retries of idempotent requests (GET, HEAD, PUT, DELETE, Query,
//     UpdateItem, UpdateFolder, and whatever runs under Idempotent(ctx)) refused with
//     429 or 503, after Retry-After when the server sends one, else with
//     exponential backoff (WithRetries, WithMaxRetryWait). Never for Sync,
//     uploads or other POSTs. ctx is respected throughout.
//   - Errors: every error response becomes an *APIError; classify it with
//     errors.Is and the sentinels (ErrNotFound, ErrRateLimited, …).
//
// On top of that: Query with Scan and Rows, which undo the JSON encoding
// of DuckDB values (big integers and decimals as strings, times,
// intervals: see QueryResult.Scan); Schema; Items, an iterator over all
// content pages; CreateNote, GetItem, UpdateItem, DeleteItem, Related,
// Search; Folders, CreateFolder, UpdateFolder (RenameFolder, MoveFolder),
// DeleteFolder and DeleteFolderAll; Sync and WaitSync; the connector
// operations; UploadVoiceNote and UploadPhoto, streamed;
// CreatePersonalAccessToken, PersonalAccessTokens and
// RevokePersonalAccessToken; and Events, a channel of change events over a
// WebSocket that reconnects and resumes by itself. Everything else is in
// the generated client, reachable through API() with the same
// authentication, tenant and retries.
package sdk

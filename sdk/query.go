package sdk

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"
)

// QueryOption tunes one Query.
type QueryOption func(*QueryRequest)

// MaxRows caps the rows returned (server default 10000, at most 100000).
// When more exist, the first n come back and QueryResult.Truncated is true.
func MaxRows(n int) QueryOption {
	return func(r *QueryRequest) { r.MaxRows = &n }
}

// Timeout is the server-side limit on the query's run time, rounded up to
// whole seconds (server default 30 s, at most 60 s; 0 disables it).
// Exceeding it is ErrQueryTimeout. The ctx passed to Query bounds the whole
// call on the client side independently.
func Timeout(d time.Duration) QueryOption {
	return func(r *QueryRequest) {
		s := int((d + time.Second - 1) / time.Second)
		r.TimeoutSeconds = &s
	}
}

// Args returns positional parameters for `?` and `$1`-style placeholders:
// the first value binds to "1", the second to "2", and so on.
//
//	res, err := c.Query(ctx, "SELECT * FROM users WHERE id = ? AND active = ?", sdk.Args(42, true))
func Args(values ...any) map[string]any {
	m := make(map[string]any, len(values))
	for i, v := range values {
		m[strconv.Itoa(i+1)] = v
	}
	return m
}

// Query runs one read-only SQL statement on the tenant's store (POST
// /api/data-platform/query). params binds placeholders: "1", "2", … for `?`
// and `$1` (see Args), names for `$name`; values are JSON scalars or
// arrays. A statement that is not read-only is ErrPermissionDenied, bad SQL
// or a missing parameter ErrQueryExecution, an unknown table ErrNotFound.
//
// Queries are retried on 429 and 503 like idempotent requests, since the
// server runs read-only statements only.
//
// Numbers in the result's Rows are json.Number, so that no digit is lost;
// read rows with Scan or Rows, which also convert the strings the server
// uses for big integers, decimals and times (see QueryResult).
func (s *Client) Query(ctx context.Context, sql string, params map[string]any, opts ...QueryOption) (*QueryResult, error) {
	body := QueryRequest{SQL: sql, Params: params}
	for _, o := range opts {
		o(&body)
	}
	rsp, err := s.api.RunQuery(Idempotent(ctx), &RunQueryParams{}, body)
	if err != nil {
		return nil, err
	}
	defer rsp.Body.Close()
	if rsp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(rsp.Body, maxErrorPeek))
		return nil, newAPIError(rsp, b)
	}
	dec := json.NewDecoder(rsp.Body)
	dec.UseNumber() // BIGINT within ±2^53 arrives as a number; keep every digit
	var res QueryResult
	if err := dec.Decode(&res); err != nil {
		return nil, fmt.Errorf("strata: decode query result: %w", err)
	}
	if res.Rows == nil {
		res.Rows = []map[string]any{}
	}
	return &res, nil
}

// Schema returns every table of the tenant across all connectors, with
// PostgreSQL storage type names (text, int8, numeric, timestamptz, _int4,
// …). Tables outside schema main are named "schema.table".
func (s *Client) Schema(ctx context.Context) ([]Table, error) {
	rsp, err := s.api.GetSchemaWithResponse(ctx, &GetSchemaParams{})
	if err != nil {
		return nil, err
	}
	res, err := result(rsp.JSON200, rsp.HTTPResponse, rsp.Body)
	return res.Tables, err
}

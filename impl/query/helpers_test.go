package query_test

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/stratahq/strata/impl/apierrors"
	"github.com/stratahq/strata/impl/query"
)

// newEngine returns an engine on a fresh temp data dir, closed at cleanup.
func newEngine(t testing.TB, mods ...func(*query.Config)) (*query.Engine, query.Config) {
	t.Helper()
	cfg := query.Config{DataDir: t.TempDir(), MemoryLimit: "512MB", Threads: 2}
	for _, m := range mods {
		m(&cfg)
	}
	e, err := query.New(cfg, nil)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(func() {
		if err := e.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return e, cfg
}

// exec runs statements through the writer path.
func exec(t testing.TB, e *query.Engine, tenant uuid.UUID, stmts ...string) {
	t.Helper()
	err := e.WithWriter(context.Background(), tenant, func(ctx context.Context, conn *sql.Conn) error {
		for _, s := range stmts {
			if _, err := conn.ExecContext(ctx, s); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatalf("writer: %v", err)
	}
}

// result is a decoded JSON result.
type result struct {
	Columns         []query.Column               `json:"columns"`
	Rows            []map[string]json.RawMessage `json:"rows"`
	RowCount        int                          `json:"rowCount"`
	Truncated       bool                         `json:"truncated"`
	ExecutionTimeMs *float64                     `json:"executionTimeMs"`
}

// runJSON runs a query and decodes its JSON result.
func runJSON(t testing.TB, e *query.Engine, tenant uuid.UUID, req query.Request) (*result, error) {
	t.Helper()
	body, err := runRaw(context.Background(), e, tenant, req)
	if err != nil {
		return nil, err
	}
	var res result
	if err := json.Unmarshal(body, &res); err != nil {
		t.Fatalf("decode %s: %v", body, err)
	}
	return &res, nil
}

func runRaw(ctx context.Context, e *query.Engine, tenant uuid.UUID, req query.Request) ([]byte, error) {
	if req.MaxRows == 0 {
		req.MaxRows = 10000
	}
	res, err := e.Run(ctx, tenant, req)
	if err != nil {
		return nil, err
	}
	defer res.Close()
	var buf bytes.Buffer
	if err := res.WriteJSON(&buf); err != nil {
		return nil, err
	}
	return buf.Bytes(), res.Close()
}

// mustQuery runs a query that must succeed.
func mustQuery(t testing.TB, e *query.Engine, tenant uuid.UUID, sql string) *result {
	t.Helper()
	res, err := runJSON(t, e, tenant, query.Request{SQL: sql})
	if err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	return res
}

// scalar returns the raw JSON of the first column of the first row.
func scalar(t testing.TB, res *result) string {
	t.Helper()
	if len(res.Rows) == 0 || len(res.Columns) == 0 {
		t.Fatalf("no rows")
	}
	return string(res.Rows[0][res.Columns[0].Name])
}

// apiErr returns err's status and code, failing when it is not an API error.
func apiErr(t testing.TB, err error) (int, apierrors.Code) {
	t.Helper()
	var e *apierrors.Error
	if !errors.As(err, &e) {
		t.Fatalf("want an *apierrors.Error, got %T %v", err, err)
	}
	return e.StatusCode, e.Code
}

// waitFor polls cond until it holds or the deadline passes.
func waitFor(t testing.TB, d time.Duration, cond func() bool) bool {
	t.Helper()
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		if cond() {
			return true
		}
		time.Sleep(5 * time.Millisecond)
	}
	return cond()
}

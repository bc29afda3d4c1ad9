package query_test

import (
	"context"
	"database/sql"
	"strings"
	"testing"
	"time"

	duckdb "github.com/duckdb/duckdb-go/v2"
	"github.com/google/uuid"

	"github.com/stratahq/strata/impl/query"
)

// FuzzGuard: whatever the SQL text, it never changes the tenant's data,
// catalog or settings and never creates a file, and it only runs when
// DuckDB classifies it as a SELECT or EXPLAIN statement.
func FuzzGuard(f *testing.F) {
	e, cfg := newEngine(f)
	tenant, other := uuid.New(), uuid.New()
	exec(f, e, tenant, canarySetup...)
	exec(f, e, other, "CREATE TABLE secret AS SELECT 'top secret' AS s")
	dir := f.TempDir()
	repl := strings.NewReplacer("{dir}", dir, "{other}", cfg.DataDir+"/tenants/"+other.String()+"/warehouse.duckdb", "{self}", cfg.DataDir)
	for _, a := range attacks {
		f.Add(repl.Replace(a.sql))
	}
	for _, q := range []string{"SELECT * FROM t", "EXPLAIN ANALYZE SELECT 1", "WITH x AS (SELECT 1) SELECT * FROM x", "SUMMARIZE t", "SELECT 1; SELECT 2"} {
		f.Add(q)
	}
	before := snapshot(f, e, tenant)

	f.Fuzz(func(t *testing.T, text string) {
		body, err := runRaw(context.Background(), e, tenant, query.Request{SQL: text, MaxRows: 5, Timeout: 2 * time.Second})
		if err == nil {
			typ := classify(t, e, tenant, text)
			if typ != duckdb.STATEMENT_TYPE_SELECT && typ != duckdb.STATEMENT_TYPE_EXPLAIN {
				t.Fatalf("%q ran (%s) but DuckDB classifies it as %d", text, body, typ)
			}
		}
		if after := snapshot(t, e, tenant); after != before {
			t.Fatalf("%q changed the database:\nbefore:\n%s\nafter:\n%s", text, before, after)
		}
		if files := listFiles(t, dir); len(files) != 0 {
			t.Fatalf("%q created files: %v", text, files)
		}
	})
}

// classify prepares text on the writer path with the non-context Prepare
// (which runs nothing) and returns DuckDB's statement type.
func classify(t *testing.T, e *query.Engine, tenant uuid.UUID, text string) duckdb.StmtType {
	t.Helper()
	typ := duckdb.STATEMENT_TYPE_INVALID
	err := e.WithWriter(context.Background(), tenant, func(ctx context.Context, conn *sql.Conn) error {
		return conn.Raw(func(dc any) error {
			st, err := dc.(*duckdb.Conn).Prepare(text)
			if err != nil {
				return err
			}
			defer st.Close()
			typ, err = st.(*duckdb.Stmt).StatementType()
			return err
		})
	})
	if err != nil {
		t.Fatalf("%q ran but does not prepare: %v", text, err)
	}
	return typ
}

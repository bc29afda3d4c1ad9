package query_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/stratahq/strata/impl/query"
)

func TestSchema(t *testing.T) {
	t.Parallel()
	e, _ := newEngine(t)
	tenant := uuid.New()
	exec(t, e, tenant,
		`CREATE TABLE orders (
			id BIGINT NOT NULL PRIMARY KEY, customer VARCHAR, amount DECIMAL(12,2) NOT NULL,
			qty INTEGER, small SMALLINT, tiny TINYINT, ratio REAL, score DOUBLE, paid BOOLEAN,
			day DATE, at_time TIME, created TIMESTAMP, updated TIMESTAMPTZ, ref UUID,
			meta JSON, raw BLOB, wait INTERVAL, tags VARCHAR[], grid INTEGER[3], nested INTEGER[][],
			big HUGEINT, ubig UBIGINT, st STRUCT(a INT), m MAP(VARCHAR, INT), mood ENUM('a', 'b'))`,
		"INSERT INTO orders (id, amount) SELECT range, 1 FROM range(100)",
		"CREATE SCHEMA crm",
		"CREATE TABLE crm.contacts (email VARCHAR NOT NULL)",
		"INSERT INTO crm.contacts VALUES ('a@x'), ('b@x')",
		"CREATE TABLE empty (x INT)",
		"CREATE VIEW v AS SELECT 1 AS x",
	)
	tables, err := e.Schema(context.Background(), tenant)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := json.Marshal(tables)
	want := `[{"name":"empty","columns":[{"name":"x","type":"int4","nullable":true}],"rowCount":0},` +
		`{"name":"orders","columns":[` +
		`{"name":"id","type":"int8","nullable":false},{"name":"customer","type":"text","nullable":true},` +
		`{"name":"amount","type":"numeric","nullable":false},{"name":"qty","type":"int4","nullable":true},` +
		`{"name":"small","type":"int2","nullable":true},{"name":"tiny","type":"int2","nullable":true},` +
		`{"name":"ratio","type":"float4","nullable":true},{"name":"score","type":"float8","nullable":true},` +
		`{"name":"paid","type":"bool","nullable":true},{"name":"day","type":"date","nullable":true},` +
		`{"name":"at_time","type":"time","nullable":true},{"name":"created","type":"timestamp","nullable":true},` +
		`{"name":"updated","type":"timestamptz","nullable":true},{"name":"ref","type":"uuid","nullable":true},` +
		`{"name":"meta","type":"jsonb","nullable":true},{"name":"raw","type":"bytea","nullable":true},` +
		`{"name":"wait","type":"interval","nullable":true},{"name":"tags","type":"_text","nullable":true},` +
		`{"name":"grid","type":"_int4","nullable":true},{"name":"nested","type":"_int4","nullable":true},` +
		`{"name":"big","type":"numeric","nullable":true},{"name":"ubig","type":"numeric","nullable":true},` +
		`{"name":"st","type":"jsonb","nullable":true},{"name":"m","type":"jsonb","nullable":true},` +
		`{"name":"mood","type":"text","nullable":true}],"rowCount":100},` +
		`{"name":"crm.contacts","columns":[{"name":"email","type":"text","nullable":false}],"rowCount":2}]`
	if string(got) != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
}

// TestSchemaRowCountsExact: counts stay exact through deletes, replaces and
// appends, and come from the side table (no count(*) of big tables).
func TestSchemaRowCountsExact(t *testing.T) {
	t.Parallel()
	e, _ := newEngine(t)
	tenant := uuid.New()
	count := func() int64 {
		t.Helper()
		tables, err := e.Schema(context.Background(), tenant)
		if err != nil {
			t.Fatal(err)
		}
		for _, tb := range tables {
			if tb.Name == "c" {
				return tb.RowCount
			}
		}
		t.Fatalf("no table c in %+v", tables)
		return 0
	}
	exec(t, e, tenant, "CREATE TABLE c AS SELECT range AS i FROM range(100000)")
	if n := count(); n != 100000 {
		t.Errorf("after create: %d", n)
	}
	// A delete leaves DuckDB's estimated_size unchanged: the writer reports it.
	err := e.WithWriter(context.Background(), tenant, func(ctx context.Context, conn *sql.Conn) error {
		if _, err := conn.ExecContext(ctx, "DELETE FROM c WHERE i < 50000"); err != nil {
			return err
		}
		if _, err := conn.ExecContext(ctx, "CHECKPOINT"); err != nil {
			return err
		}
		return query.RecountTable(ctx, conn, "main", "c")
	})
	if err != nil {
		t.Fatal(err)
	}
	if n := count(); n != 50000 {
		t.Errorf("after delete: %d", n)
	}
	exec(t, e, tenant, "INSERT INTO c SELECT range FROM range(10)")
	if n := count(); n != 50010 {
		t.Errorf("after append: %d", n)
	}
	exec(t, e, tenant, "CREATE OR REPLACE TABLE c AS SELECT 1 AS i")
	if n := count(); n != 1 {
		t.Errorf("after replace: %d", n)
	}
	// The bookkeeping schema is hidden.
	tables, _ := e.Schema(context.Background(), tenant)
	for _, tb := range tables {
		if strings.HasPrefix(tb.Name, query.InternalSchema) {
			t.Errorf("internal table listed: %s", tb.Name)
		}
	}
}

// TestSchemaManyTables: hundreds of tables, one of them large, answer fast.
func TestSchemaManyTables(t *testing.T) {
	t.Parallel()
	e, _ := newEngine(t)
	tenant := uuid.New()
	err := e.WithWriter(context.Background(), tenant, func(ctx context.Context, conn *sql.Conn) error {
		if _, err := conn.ExecContext(ctx, "CREATE TABLE big AS SELECT range AS i, range::VARCHAR AS s FROM range(2000000)"); err != nil {
			return err
		}
		for i := range 300 {
			if _, err := conn.ExecContext(ctx, fmt.Sprintf("CREATE TABLE t%03d AS SELECT range AS a, 'x' AS b FROM range(%d)", i, i)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	tables, err := e.Schema(context.Background(), tenant)
	took := time.Since(start)
	if err != nil {
		t.Fatal(err)
	}
	if len(tables) != 301 || tables[0].Name != "big" || tables[0].RowCount != 2000000 || tables[300].RowCount != 299 {
		t.Fatalf("%d tables, first %+v", len(tables), tables[0])
	}
	t.Logf("schema of 301 tables in %v", took)
	if took > time.Second {
		t.Errorf("schema took %v", took)
	}
}

// TestTenantIsolation: tenant A's SQL never reaches tenant B's tables.
func TestTenantIsolation(t *testing.T) {
	t.Parallel()
	e, cfg := newEngine(t)
	a, b := uuid.New(), uuid.New()
	exec(t, e, a, "CREATE TABLE mine AS SELECT 'a data' AS s")
	exec(t, e, b, "CREATE TABLE secret AS SELECT 'b secret' AS s")
	bPath := filepath.Join(cfg.DataDir, "tenants", b.String(), "warehouse.duckdb")
	bDir := filepath.Dir(bPath)
	for _, q := range []string{
		"SELECT * FROM secret",
		"SELECT * FROM main.secret",
		"SELECT * FROM warehouse.main.secret",
		"ATTACH '" + bPath + "' AS b",
		"ATTACH '" + bPath + "' AS b (READ_ONLY)",
		"SELECT * FROM read_duckdb('" + bPath + "')",
		"SELECT * FROM read_blob('" + bPath + "')",
		"SELECT * FROM read_text('" + bPath + ".wal')",
		"SELECT * FROM glob('" + bDir + "/*')",
		"SELECT * FROM '" + bPath + "'",
		"SELECT * FROM read_csv('" + bDir + "/*')",
		"SELECT * FROM duckdb_tables() WHERE table_name = 'secret'",
		"SELECT * FROM duckdb_databases()",
	} {
		res, err := runJSON(t, e, a, query.Request{SQL: q})
		if err == nil && res.RowCount > 0 {
			body, _ := json.Marshal(res.Rows)
			if strings.Contains(string(body), "secret") {
				t.Errorf("tenant a saw tenant b via %q: %s", q, body)
			}
		}
	}
	// Tenant A's own data is there.
	if got := scalar(t, mustQuery(t, e, a, "SELECT s FROM mine")); got != `"a data"` {
		t.Error(got)
	}
	tables, err := e.Schema(context.Background(), a)
	if err != nil || len(tables) != 1 || tables[0].Name != "mine" {
		t.Errorf("schema of a: %+v %v", tables, err)
	}
}

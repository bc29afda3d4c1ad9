package query

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"github.com/google/uuid"

	"github.com/stratahq/strata/impl/apierrors"
)

// InternalSchema is the DuckDB schema the engine keeps its bookkeeping in
// (row counts). It is hidden from Schema; user SQL can read it (it holds
// nothing but the tenant's own table names and counts) but not write it.
const InternalSchema = "_strata"

// hiddenSchemas are never listed by Schema.
var hiddenSchemas = []string{InternalSchema, "information_schema", "pg_catalog"}

// StagingPrefix starts the names of tables a sync is filling before it swaps
// them in; Schema does not list them.
const StagingPrefix = "__strata_staging_"

// Table is one user-visible table of a tenant (spec 2.4).
type Table struct {
	// Name is the table name, schema-qualified ("schema.table") when the
	// schema is not main.
	Name string `json:"name"`
	// Columns use PostgreSQL storage type names (see PostgresType).
	Columns []Column `json:"columns"`
	// RowCount is the exact number of rows.
	RowCount int64 `json:"rowCount"`
}

func ensureInternalSchema(ctx context.Context, db *sql.DB) error {
	conn, err := db.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	for _, q := range []string{
		`CREATE SCHEMA IF NOT EXISTS ` + InternalSchema,
		// table_oid and estimated_size say which version of the table the
		// count belongs to: CREATE OR REPLACE changes the oid, appends
		// change estimated_size (DuckDB's row count including deleted rows,
		// not exact by itself).
		`CREATE TABLE IF NOT EXISTS ` + InternalSchema + `.row_counts (
			schema_name VARCHAR NOT NULL,
			table_name VARCHAR NOT NULL,
			table_oid BIGINT NOT NULL,
			estimated_size BIGINT NOT NULL,
			row_count BIGINT NOT NULL,
			PRIMARY KEY (schema_name, table_name))`,
	} {
		if _, err := conn.ExecContext(ctx, q); err != nil {
			return err
		}
	}
	return nil
}

// userTablesSQL lists the tenant's tables with their recorded counts.
// DuckDB's estimated_size is not exact (it keeps counting deleted rows,
// measured: 100000 after deleting half of 100000 rows and a CHECKPOINT), so
// counts come from the row_counts side table, valid while the table's oid
// and estimated_size are those recorded.
var userTablesSQL = `
SELECT t.schema_name, t.table_name, t.table_oid, t.estimated_size,
       c.row_count, c.table_oid = t.table_oid AND c.estimated_size = t.estimated_size AS fresh
FROM duckdb_tables() t
LEFT JOIN ` + InternalSchema + `.row_counts c USING (schema_name, table_name)
WHERE t.database_name = current_database() AND NOT t.internal AND NOT t.temporary
  AND t.schema_name NOT IN ('` + strings.Join(hiddenSchemas, "', '") + `')
  AND NOT starts_with(t.table_name, '` + StagingPrefix + `')
ORDER BY t.schema_name = 'main' DESC, t.schema_name, t.table_name`

var userColumnsSQL = `
SELECT schema_name, table_name, column_name, data_type, is_nullable
FROM duckdb_columns()
WHERE database_name = current_database() AND NOT internal
  AND schema_name NOT IN ('` + strings.Join(hiddenSchemas, "', '") + `')
  AND NOT starts_with(table_name, '` + StagingPrefix + `')
ORDER BY schema_name, table_name, column_index`

type tableRow struct {
	schema, name string
	oid, size    int64
	count        sql.NullInt64
	fresh        sql.NullBool
}

// Schema lists every user-visible table of the tenant: all schemas but
// DuckDB's internal ones and the engine's, with PostgreSQL storage type
// names, NOT NULL constraints and exact row counts. It costs three catalog
// queries whatever the number of tables; a table whose count was not
// recorded by the writer (see WithWriter) is counted with count(*).
func (e *Engine) Schema(ctx context.Context, tenantID uuid.UUID) ([]Table, error) {
	s, err := e.acquire(ctx, tenantID)
	if err != nil {
		return nil, err
	}
	defer e.release(s)
	conn, err := s.db.Conn(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return nil, mapContextError(ctx, err)
		}
		return nil, apierrors.ServiceUnavailable("the tenant's data store is unavailable").WithInternalError(err)
	}
	defer discard(conn)
	// One snapshot for all three queries.
	if _, err := conn.ExecContext(ctx, "BEGIN TRANSACTION READ ONLY"); err != nil {
		return nil, e.mapError(ctx, s, err)
	}

	tables, err := listTables(ctx, conn)
	if err != nil {
		return nil, e.mapError(ctx, s, fmt.Errorf("list tables: %w", err))
	}
	out := make([]Table, 0, len(tables))
	index := make(map[[2]string]int, len(tables))
	for _, t := range tables {
		count := t.count.Int64
		if !t.count.Valid || !t.fresh.Bool {
			count, err = countRows(ctx, conn, t.schema, t.name)
			if err != nil {
				return nil, e.mapError(ctx, s, fmt.Errorf("count rows of %s.%s: %w", t.schema, t.name, err))
			}
		}
		name := t.name
		if t.schema != "main" {
			name = t.schema + "." + t.name
		}
		index[[2]string{t.schema, t.name}] = len(out)
		out = append(out, Table{Name: name, Columns: []Column{}, RowCount: count})
	}
	rows, err := conn.QueryContext(ctx, userColumnsSQL)
	if err != nil {
		return nil, e.mapError(ctx, s, fmt.Errorf("list columns: %w", err))
	}
	defer rows.Close()
	for rows.Next() {
		var schema, table, column, typ string
		var nullable bool
		if err := rows.Scan(&schema, &table, &column, &typ, &nullable); err != nil {
			return nil, e.mapError(ctx, s, fmt.Errorf("list columns: %w", err))
		}
		i, ok := index[[2]string{schema, table}]
		if !ok {
			continue // a view
		}
		out[i].Columns = append(out[i].Columns, Column{Name: column, Type: PostgresType(typ), Nullable: nullable})
	}
	if err := rows.Err(); err != nil {
		return nil, e.mapError(ctx, s, fmt.Errorf("list columns: %w", err))
	}
	return out, nil
}

func listTables(ctx context.Context, conn *sql.Conn) ([]tableRow, error) {
	rows, err := conn.QueryContext(ctx, userTablesSQL)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []tableRow
	for rows.Next() {
		var t tableRow
		if err := rows.Scan(&t.schema, &t.name, &t.oid, &t.size, &t.count, &t.fresh); err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return out, rows.Err()
}

func countRows(ctx context.Context, conn *sql.Conn, schema, table string) (int64, error) {
	var n int64
	err := conn.QueryRowContext(ctx, "SELECT count(*) FROM "+quoteIdent(schema)+"."+quoteIdent(table)).Scan(&n)
	return n, err
}

// quoteIdent quotes a DuckDB identifier.
func quoteIdent(s string) string {
	return `"` + strings.ReplaceAll(s, `"`, `""`) + `"`
}

// PostgresType maps a DuckDB column type (as duckdb_columns() spells it) to
// the PostgreSQL storage name the schema endpoint reports (DECISIONS.md):
//
//	VARCHAR, ENUM                      text
//	TINYINT, SMALLINT, UTINYINT        int2
//	INTEGER, USMALLINT                 int4
//	BIGINT, UINTEGER                   int8
//	UBIGINT, HUGEINT, UHUGEINT, BIGNUM numeric
//	DECIMAL(p,s)                       numeric
//	FLOAT                              float4
//	DOUBLE                             float8
//	BOOLEAN                            bool
//	DATE                               date
//	TIME, TIME_NS                      time
//	TIME WITH TIME ZONE                timetz
//	TIMESTAMP, TIMESTAMP_S/_MS/_NS     timestamp
//	TIMESTAMP WITH TIME ZONE           timestamptz
//	UUID                               uuid
//	JSON, STRUCT, MAP, UNION, VARIANT  jsonb
//	BLOB, GEOMETRY                     bytea
//	BIT                                varbit
//	INTERVAL                           interval
//	T[] and T[n] (any depth)           _ + the element's name, e.g. _int4
//
// Any other type is its DuckDB name in lower case.
func PostgresType(duck string) string {
	t := strings.TrimSpace(duck)
	if strings.HasSuffix(t, "]") {
		for strings.HasSuffix(t, "]") {
			i := strings.LastIndexByte(t, '[')
			if i < 0 {
				break
			}
			t = strings.TrimSpace(t[:i])
		}
		return "_" + PostgresType(t)
	}
	u := strings.ToUpper(t)
	if i := strings.IndexByte(u, '('); i >= 0 {
		u = strings.TrimSpace(u[:i])
	}
	switch u {
	case "VARCHAR", "ENUM", "CHAR", "BPCHAR", "TEXT", "STRING":
		return "text"
	case "TINYINT", "SMALLINT", "UTINYINT", "INT1", "INT2":
		return "int2"
	case "INTEGER", "USMALLINT", "INT", "INT4":
		return "int4"
	case "BIGINT", "UINTEGER", "INT8":
		return "int8"
	case "UBIGINT", "HUGEINT", "UHUGEINT", "BIGNUM", "VARINT", "DECIMAL", "NUMERIC":
		return "numeric"
	case "FLOAT", "REAL", "FLOAT4":
		return "float4"
	case "DOUBLE", "FLOAT8":
		return "float8"
	case "BOOLEAN", "BOOL":
		return "bool"
	case "DATE":
		return "date"
	case "TIME", "TIME_NS":
		return "time"
	case "TIME WITH TIME ZONE", "TIMETZ":
		return "timetz"
	case "TIMESTAMP", "TIMESTAMP_S", "TIMESTAMP_MS", "TIMESTAMP_NS", "DATETIME":
		return "timestamp"
	case "TIMESTAMP WITH TIME ZONE", "TIMESTAMPTZ":
		return "timestamptz"
	case "UUID":
		return "uuid"
	case "JSON", "STRUCT", "MAP", "UNION", "VARIANT":
		return "jsonb"
	case "BLOB", "GEOMETRY", "BYTEA":
		return "bytea"
	case "BIT", "BITSTRING":
		return "varbit"
	case "INTERVAL":
		return "interval"
	}
	return strings.ToLower(t)
}

// WithWriter runs fn with a write-capable connection to the tenant's
// database, for the sync writer. User SQL never reaches it: Run only
// executes statements that passed the guard, on connections inside a READ
// ONLY transaction that are discarded afterwards, and no connection is ever
// reused (so nothing the writer leaves on its connection, such as temp
// tables, is visible to a query).
//
// The writer shares the tenant's *sql.DB and so its sandbox: the settings
// are global to the DuckDB instance and locked at open, so the writer cannot
// read files or URLs either (ingest through Go: the driver's Appender or
// parameterized INSERTs) and cannot SET configuration.
//
// Writers of a tenant run one at a time. After fn returns nil, the row
// counts of every table whose oid or estimated_size changed (new, replaced
// or appended tables) are recomputed so that Schema stays exact and cheap.
// A writer that deletes rows without appending must call RecountTable for
// that table (DuckDB's estimated_size does not shrink on DELETE).
func (e *Engine) WithWriter(ctx context.Context, tenantID uuid.UUID, fn func(ctx context.Context, conn *sql.Conn) error) error {
	s, err := e.acquire(ctx, tenantID)
	if err != nil {
		return err
	}
	defer e.release(s)
	select {
	case s.writer <- struct{}{}:
	case <-ctx.Done():
		return fmt.Errorf("query: wait for writer: %w", ctx.Err())
	}
	defer func() { <-s.writer }()
	conn, err := s.db.Conn(ctx)
	if err != nil {
		return fmt.Errorf("query: writer connection: %w", err)
	}
	defer discard(conn)
	if err := fn(ctx, conn); err != nil {
		return err
	}
	if err := refreshRowCounts(ctx, conn); err != nil {
		return fmt.Errorf("query: refresh row counts: %w", err)
	}
	return nil
}

// refreshRowCounts recounts the tables whose recorded count is missing or
// stale and forgets the counts of dropped tables.
func refreshRowCounts(ctx context.Context, conn *sql.Conn) error {
	tables, err := listTables(ctx, conn)
	if err != nil {
		return err
	}
	for _, t := range tables {
		if t.count.Valid && t.fresh.Bool {
			continue
		}
		if err := RecountTable(ctx, conn, t.schema, t.name); err != nil {
			return err
		}
	}
	_, err = conn.ExecContext(ctx, `DELETE FROM `+InternalSchema+`.row_counts c
		WHERE NOT EXISTS (SELECT 1 FROM duckdb_tables() t
			WHERE t.database_name = current_database() AND t.schema_name = c.schema_name AND t.table_name = c.table_name)`)
	return err
}

// RecountTable counts the rows of schema.table with count(*) and records the
// count for Schema. conn must be the writer's connection (WithWriter).
func RecountTable(ctx context.Context, conn *sql.Conn, schema, table string) error {
	if schema == "" {
		schema = "main"
	}
	var oid, size int64
	err := conn.QueryRowContext(ctx, `SELECT table_oid, estimated_size FROM duckdb_tables()
		WHERE database_name = current_database() AND schema_name = $1 AND table_name = $2`, schema, table).Scan(&oid, &size)
	if errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("query: no table %s.%s", schema, table)
	}
	if err != nil {
		return err
	}
	n, err := countRows(ctx, conn, schema, table)
	if err != nil {
		return err
	}
	_, err = conn.ExecContext(ctx, `INSERT OR REPLACE INTO `+InternalSchema+`.row_counts
		(schema_name, table_name, table_oid, estimated_size, row_count) VALUES ($1, $2, $3, $4, $5)`,
		schema, table, oid, size, n)
	return err
}

// Package query is the per-tenant, sandboxed DuckDB query engine behind
// POST /api/data-platform/query and GET /api/data-platform/schema.
//
// # Tenant stores
//
// Each tenant has one DuckDB file, DataDir/tenants/<tenantID>/warehouse.duckdb,
// opened lazily as one *sql.DB shared by queries and the sync writer
// (WithWriter), with per-tenant threads and memory_limit. At most
// Config.MaxOpen are open; the least recently used idle one is closed first,
// and any store idle for Config.IdleTimeout is closed. A store that cannot be
// opened answers 503 service_unavailable.
//
// # Sandbox
//
// Every tenant database is opened with enable_external_access=false,
// autoinstall/autoload of extensions off, community and unsigned extensions
// refused and lock_configuration=true, so no connection can read or write
// files or URLs, attach databases, load extensions or change settings. On
// top of that, the statement guard (see guard.go) lets through only single
// SELECT-kind and EXPLAIN statements as classified by DuckDB's parser and
// prepared statement, refuses table functions outside an allow-list and
// functions with side effects, and runs every query inside BEGIN
// TRANSACTION READ ONLY on a connection that is discarded afterwards.
//
// # Results
//
// Run executes a query and returns a Result that encodes its rows as JSON
// (spec 2.2), CSV or an Arrow IPC stream. Errors before the first row are
// *apierrors.Error values with the status codes of spec 7. The encoded body
// is held back (in memory, then in a temporary file) until the last row was
// read, because only then is it known whether rows beyond maxRows were left
// out, which the X-Strata-Truncated header says before the body; errors
// while reading rows therefore still get their status. Errors while sending
// (the client disconnecting, the deadline passing while a slow client
// reads) are returned by the Write method; the caller must then abort the
// response, because the status line and part of the body are already sent.
//
// # JSON encoding of values
//
// This text is the description of QueryResult.rows in openapi.yaml:
//
// Each row is an object keyed by column name (a duplicate column name gets a
// suffix _1, _2 ...). Values encode by their DuckDB type:
//
//   - NULL: null.
//   - BOOLEAN: true or false.
//   - TINYINT, SMALLINT, INTEGER, UTINYINT, USMALLINT, UINTEGER: number.
//   - BIGINT, UBIGINT, HUGEINT, UHUGEINT, BIGNUM: a number when within
//     ±9007199254740991 (2^53-1, exact in JavaScript), otherwise a string of
//     decimal digits ("18446744073709551615"), so no client loses precision.
//   - DECIMAL(p,s): a string with exactly s fractional digits ("12.30"),
//     always a string, because decimals are exact and JSON numbers are not.
//   - FLOAT, DOUBLE: number (shortest form that round-trips); NaN,
//     Infinity and -Infinity: null.
//   - VARCHAR, ENUM: string. BIT: string of 0 and 1.
//   - JSON: the JSON value itself, embedded (not a string). The driver parses
//     it first, so object keys come out sorted and numbers beyond double
//     precision are rounded; cast to VARCHAR for the exact original text.
//   - BLOB, GEOMETRY (WKB): string, standard base64 with padding.
//   - UUID: string, canonical lowercase 8-4-4-4-12.
//   - DATE: "YYYY-MM-DD".
//   - TIME: "HH:MM:SS" or "HH:MM:SS.ffffff" (fraction only when not zero).
//   - TIMETZ: TIME followed by the offset, "HH:MM:SS+HH:MM".
//   - TIMESTAMP, TIMESTAMP_S, TIMESTAMP_MS, TIMESTAMPTZ: ISO 8601 in UTC
//     with a Z, "2024-05-01T12:30:00Z" or "2024-05-01T12:30:00.123456Z"
//     (fraction only when not zero, 6 digits; 9 digits for TIMESTAMP_NS).
//     TIMESTAMPTZ values are converted to UTC; TIMESTAMP (without time zone)
//     values are taken as UTC.
//   - DATE and timestamp years outside 0000-9999 use ISO 8601 expanded
//     years ("+294247-01-10T04:00:54.775806Z", "-0044-03-15"); year 0 is
//     1 BC. Infinite values are the strings "infinity" and "-infinity".
//   - INTERVAL: ISO 8601 duration as PostgreSQL's intervalstyle iso_8601
//     writes it: "P1Y2M3DT4H5M6.5S"; months, days and time each carry
//     their own sign when they differ ("P-1M2D"); zero is "PT0S".
//   - LIST and ARRAY: array.
//   - STRUCT: object with the fields in declaration order.
//   - MAP: an object when the key type is VARCHAR or ENUM, otherwise an
//     array of {"key": k, "value": v} objects, in map order.
//   - UNION: an object with one member, the active tag: {"age": 5}.
//   - TIME_NS and VARIANT are not supported by the driver: the query fails
//     with 400 query_execution_error; cast them to VARCHAR.
//
// Nested values follow the same rules. Column types are DuckDB's SQL names
// as the driver reports them: VARCHAR, BIGINT, DECIMAL(18,3), INTEGER[],
// INTEGER[3], STRUCT("a" INTEGER, "b" VARCHAR), MAP(VARCHAR, INTEGER),
// TIMESTAMPTZ, TIMETZ, ENUM, JSON ... DuckDB does not track nullability
// through queries, so result columns are always nullable: true; the schema
// endpoint reports the tables' real NOT NULL constraints.
package query

// Package hostedbackend is the logic of Strata's hosted_backend connector: it
// pulls every table that a hosted backend (a Supabase-style project) exposes
// through its PostgREST data API under {hosted_backend_url}/rest/v1/ and turns
// the rows into Apache Arrow record batches.
//
// The package is a plain library with no dependency on the plugin SDK; a tiny
// main glues [Source] to the SDK. It speaks only the subset of the PostgREST
// protocol described below, and it is tested against the real PostgreSQL server
// through the protocol fixture in the postgrestfixture sub-package.
//
// # Protocol
//
//   - Discovery: GET /rest/v1/ returns PostgREST's root OpenAPI document
//     (Swagger 2.0). Every definitions.<name> that also has a GET operation on
//     paths["/<name>"] is a readable table or view; /rpc/* functions and
//     definitions without a GET path are skipped. Column order is the order of
//     the properties in the document, column types come from each property's
//     format (the raw PostgreSQL type name), NOT NULL columns from required, and
//     primary-key columns are the ones whose description contains <pk/>.
//   - Every request carries apikey: <key>, Authorization: Bearer <key> and
//     Accept: application/json. The key is never logged and never appears in
//     an error (see [Source]).
//   - Paging: see [Source.Read].
//   - Retries: 429, 5xx and network failures (including a body cut off in the
//     middle of a page) are retried with exponential backoff, honouring
//     Retry-After, up to Options.MaxRetries times. 401/403 fail at once with
//     [ErrUnauthorized]; a host that cannot be reached fails with
//     [ErrUnreachable]; an endpoint that does not answer like PostgREST fails
//     with [ErrNotPostgREST].
//
// # Type mapping
//
// PostgreSQL format (as in the OpenAPI document) to Arrow; every field also
// carries the metadata "strata.pg_type" with the raw format:
//
//	smallint                      int16
//	integer                       int32
//	bigint                        int64
//	numeric(p,s), p <= 38         decimal128(p, s), parsed exactly from the JSON number text
//	numeric (no precision known)  utf8 holding the exact number text (metadata strata.type=numeric);
//	                              PostgREST's document never states a precision, so this is the usual case,
//	                              and "NaN" stays "NaN"
//	real                          float32 ("NaN", "Infinity", "-Infinity" accepted)
//	double precision              float64 (same)
//	boolean                       bool
//	text, character varying,
//	character, char(n), varchar   utf8 (char(n) keeps PostgreSQL's blank padding)
//	uuid                          arrow.uuid canonical extension type (fixed_size_binary(16) storage),
//	                              which DuckDB reads as UUID
//	json, jsonb                   utf8 with metadata strata.type=json holding the raw JSON text exactly
//	                              as sent (a JSON null and SQL NULL are indistinguishable over PostgREST:
//	                              both become a null)
//	date                          date32 (BC dates supported; ±infinity become ±MaxInt32 days, which is
//	                              how DuckDB stores infinite dates)
//	time [without time zone]      time64[us]
//	timestamp [without time zone] timestamp[us] without time zone (±infinity become ±MaxInt64)
//	timestamp with time zone      timestamp[us, tz=UTC]; any UTC offset sent is applied
//	interval                      month_day_nano_interval (PostgreSQL's default "postgres" IntervalStyle)
//	bytea                         binary (PostgREST sends "\x…" hex; the escape format is accepted too)
//	<any of these>[]              list<…> of the element type (one-dimensional arrays only: a
//	                              multi-dimensional array value fails the read with a clear error)
//	anything else                 utf8 (metadata strata.type=text): JSON strings as their text,
//	                              other JSON values (numbers, objects of composite types…) as raw JSON text;
//	                              this covers enums, domains over other types, time with time zone,
//	                              inet, money, ranges, geometric types, …
//
// Short aliases (int2, int4, int8, float4, float8, bool, varchar, bpchar,
// timestamptz, timetz, and _int4-style array names) are accepted as well.
package hostedbackend

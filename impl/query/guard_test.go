package query_test

import (
	"bytes"
	"context"
	"database/sql"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/stratahq/strata/impl/apierrors"
	"github.com/stratahq/strata/impl/query"
)

// canarySetup is the data every guard test starts from.
var canarySetup = []string{
	"CREATE TABLE t (a INTEGER, b VARCHAR)",
	"INSERT INTO t VALUES (1, 'one'), (2, 'two'), (3, 'three')",
	"CREATE SEQUENCE s",
	"CREATE SCHEMA other",
	"CREATE TABLE other.u AS SELECT 42 AS x",
	"CREATE VIEW v AS SELECT a FROM t",
}

// snapshot is everything an attack could change: the data, the catalog, the
// settings, the attached databases. Taken on the writer path (unguarded).
func snapshot(t testing.TB, e *query.Engine, tenant uuid.UUID) string {
	t.Helper()
	var out strings.Builder
	err := e.WithWriter(context.Background(), tenant, func(ctx context.Context, conn *sql.Conn) error {
		for _, q := range []string{
			"SELECT count(*)::VARCHAR || '/' || sum(a)::VARCHAR || '/' || string_agg(b, ',' ORDER BY a) FROM t",
			"SELECT string_agg(x, ',' ORDER BY x) FROM (SELECT schema_name || '.' || table_name || ':' || estimated_size AS x FROM duckdb_tables() WHERE schema_name <> '_strata')",
			"SELECT coalesce(string_agg(x, ',' ORDER BY x), '') FROM (SELECT schema_name || '.' || view_name AS x FROM duckdb_views() WHERE NOT internal)",
			"SELECT coalesce(string_agg(x, ',' ORDER BY x), '') FROM (SELECT sequence_name || ':' || coalesce(last_value, -1) AS x FROM duckdb_sequences())",
			"SELECT coalesce(string_agg(function_name, ',' ORDER BY function_name), '') FROM duckdb_functions() WHERE NOT internal",
			"SELECT coalesce(string_agg(type_name, ',' ORDER BY type_name), '') FROM duckdb_types() WHERE NOT internal",
			"SELECT string_agg(schema_name, ',' ORDER BY schema_name) FROM duckdb_schemas()",
			"SELECT string_agg(database_name, ',' ORDER BY database_name) FROM duckdb_databases()",
			"SELECT string_agg(name || '=' || coalesce(value, 'NULL'), ';' ORDER BY name) FROM duckdb_settings()",
		} {
			var s sql.NullString
			if err := conn.QueryRowContext(ctx, q).Scan(&s); err != nil {
				return err
			}
			out.WriteString(s.String)
			out.WriteString("\n")
		}
		return nil
	})
	if err != nil {
		t.Fatalf("snapshot: %v", err)
	}
	return out.String()
}

func listFiles(t testing.TB, dir string) []string {
	t.Helper()
	var files []string
	_ = filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err == nil && path != dir {
			files = append(files, path)
		}
		return nil
	})
	return files
}

// attacks is every statement the guard must stop, with the codes it may
// answer. {dir} is an empty directory nothing may be written to, {other} is
// another tenant's database file.
var attacks = []struct {
	name string
	sql  string
	// codes allowed; the first is the expected one for documentation.
	codes []apierrors.Code
}{
	{"insert", "INSERT INTO t VALUES (9, 'nine')", deny},
	{"insert odd case and comments", "\n\t/* hi */ InSeRt\n-- x\n INTO t VALUES (9, 'nine') -- bye", deny},
	{"insert or replace", "INSERT OR REPLACE INTO t VALUES (9, 'nine')", deny},
	{"update", "UPDATE t SET a = 0", deny},
	{"delete", "delete from t", deny},
	{"truncate", "TRUNCATE t", deny},
	{"merge", "MERGE INTO t USING (SELECT 1 AS a) s ON t.a = s.a WHEN MATCHED THEN DELETE", deny},
	{"create table", "CREATE TABLE x (a INT)", deny},
	{"create table as", "CREATE TABLE x AS SELECT * FROM t", deny},
	{"create temp table", "CREATE TEMP TABLE x (a INT)", deny},
	{"create view", "CREATE VIEW w AS SELECT 1", deny},
	{"create macro", "CREATE MACRO m(x) AS x + 1", deny},
	{"create table macro", "CREATE MACRO tm() AS TABLE SELECT 1", deny},
	{"create sequence", "CREATE SEQUENCE s2", deny},
	{"create type", "CREATE TYPE mood AS ENUM ('a', 'b')", deny},
	{"create schema", "CREATE SCHEMA x", deny},
	{"create secret", "CREATE SECRET (TYPE s3, KEY_ID 'x', SECRET 'y')", denyOrExec},
	{"create index", "CREATE INDEX i ON t (a)", deny},
	{"drop table", "DROP TABLE t", deny},
	{"drop view", "  drop VIEW v", deny},
	{"drop schema cascade", "DROP SCHEMA other CASCADE", deny},
	{"alter add column", "ALTER TABLE t ADD COLUMN c INT", deny},
	{"alter rename", "ALTER TABLE t RENAME TO t2", deny},
	{"comment on", "COMMENT ON TABLE t IS 'x'", deny},
	{"cte wrapping insert", "WITH x AS (INSERT INTO t VALUES (9, 'nine') RETURNING *) SELECT * FROM x", denyOrExec},
	{"cte then insert", "WITH x AS (SELECT 9 AS a, 'nine' AS b) INSERT INTO t SELECT * FROM x", deny},
	{"select then drop", "SELECT 1; DROP TABLE t", deny},
	{"drop then select", "DROP TABLE t; SELECT 1", deny},
	{"select then drop odd spacing", "select 1 ;\n\n\tDrOp TaBlE t ;", deny},
	{"select then insert in comment-broken text", "SELECT 1 /* ; */ ; INSERT INTO t VALUES (9, 'x') --", deny},
	{"attach memory", "ATTACH ':memory:' AS m", deny},
	{"attach other tenant", "ATTACH '{other}' AS o", deny},
	{"attach other tenant read only", "ATTACH '{other}' AS o (READ_ONLY)", deny},
	{"detach", "DETACH DATABASE warehouse", deny},
	{"use", "USE other", deny},
	{"copy to", "COPY t TO '{dir}/out.csv'", deny},
	{"copy query to", "COPY (SELECT * FROM t) TO '{dir}/out.parquet' (FORMAT parquet)", deny},
	{"copy from", "COPY t FROM '/etc/passwd'", deny},
	{"copy database", "COPY FROM DATABASE warehouse TO memory", deny},
	{"export database", "EXPORT DATABASE '{dir}/export'", deny},
	{"import database", "IMPORT DATABASE '{dir}/export'", deny},
	{"set threads", "SET threads = 8", deny},
	{"set memory limit", "SET memory_limit = '100GB'", deny},
	{"set global", "SET GLOBAL enable_external_access = true", deny},
	{"set search path", "SET search_path = 'other'", deny},
	{"reset", "RESET threads", deny},
	{"set variable", "SET VARIABLE x = 1", deny},
	{"pragma enable profiling", "PRAGMA enable_profiling", deny},
	{"pragma threads", "PRAGMA threads = 8", deny},
	{"pragma checkpoint on shutdown", "PRAGMA disable_checkpoint_on_shutdown", deny},
	{"pragma show tables", "PRAGMA show_tables", deny},
	{"install", "INSTALL httpfs", deny},
	{"force install", "FORCE INSTALL httpfs", deny},
	{"load", "LOAD httpfs", deny},
	{"load path", "LOAD '{dir}/evil.duckdb_extension'", deny},
	{"update extensions", "UPDATE EXTENSIONS", deny},
	{"checkpoint", "CHECKPOINT", deny},
	{"force checkpoint", "FORCE CHECKPOINT", deny},
	{"checkpoint function", "SELECT * FROM checkpoint()", deny},
	{"checkpoint function qualified", "SELECT * FROM system.main.checkpoint()", deny},
	{"force checkpoint function", "select * from FORCE_CHECKPOINT()", deny},
	{"checkpoint in subquery", "SELECT (SELECT count(*) FROM checkpoint()) AS x", deny},
	{"checkpoint in cte", "WITH c AS (SELECT * FROM checkpoint()) SELECT * FROM t", deny},
	{"call checkpoint", "CALL checkpoint()", deny},
	{"call function", "CALL pragma_version()", deny},
	{"vacuum", "VACUUM", deny},
	{"analyze", "ANALYZE", deny},
	{"begin", "BEGIN TRANSACTION", deny},
	{"commit", "COMMIT", deny},
	{"rollback", "ROLLBACK", deny},
	{"prepare", "PREPARE p AS SELECT 1", deny},
	{"execute", "EXECUTE p", denyOrExec},
	{"deallocate", "DEALLOCATE p", deny},
	{"nextval", "SELECT nextval('s')", deny},
	{"nextval quoted", `SELECT "NEXTVAL"('s')`, deny},
	{"nextval method", "SELECT 's'.nextval()", denyOrExec},
	{"nextval method on column", "SELECT b.nextval() FROM t", deny},
	{"write log", "SELECT write_log('x')", deny},
	{"enable logging", "SELECT * FROM enable_logging()", deny},
	{"enable logging to file", "SELECT * FROM enable_logging(storage='file', storage_path='{dir}/logs')", deny},
	{"enable profiling", "SELECT * FROM enable_profiling()", deny},
	{"enable peg parser", "SELECT * FROM enable_peg_parser()", deny},
	{"truncate logs", "SELECT * FROM truncate_duckdb_logs()", deny},
	{"query function", "SELECT * FROM query('SELECT 1')", deny},
	{"query table function", "SELECT * FROM query_table('t')", deny},
	{"json execute", "SELECT * FROM json_execute_serialized_sql(json_serialize_sql('SELECT 1'))", deny},
	{"arrow scan", "SELECT * FROM arrow_scan(NULL, NULL, NULL)", deny},
	{"read csv", "SELECT * FROM read_csv('/etc/passwd')", deny},
	{"read csv auto", "SELECT * FROM read_csv_auto('/etc/passwd')", deny},
	{"read text", "SELECT * FROM read_text('/etc/passwd')", deny},
	{"read blob", "SELECT * FROM read_blob('/etc/passwd')", deny},
	{"read own database file", "SELECT * FROM read_blob('{self}')", deny},
	{"glob", "SELECT * FROM glob('/etc/*')", deny},
	{"read parquet url", "SELECT * FROM read_parquet('http://example.com/x.parquet')", deny},
	{"read json", "SELECT * FROM read_json('/etc/passwd')", deny},
	{"sniff csv", "SELECT * FROM sniff_csv('/etc/passwd')", deny},
	{"read duckdb other", "SELECT * FROM read_duckdb('{other}')", deny},
	{"replacement scan file", "SELECT * FROM '/etc/passwd'", denyOrMissing},
	{"replacement scan csv", "SELECT * FROM '{dir}/x.csv'", deny},
	{"replacement scan url", "FROM 'https://example.com/x.csv'", deny},
	{"replacement scan other db", "FROM '{other}'", deny},
	{"getenv", "SELECT getenv('HOME')", denyOrExec},
	{"settings", "SELECT * FROM duckdb_settings()", deny},
	{"databases", "SELECT * FROM duckdb_databases()", deny},
	{"database list view", "SELECT * FROM pragma_database_list", deny},
	{"databases view", "FROM duckdb_databases", deny},
	{"databases view qualified", "SELECT path FROM system.main.duckdb_databases", deny},
	{"databases view quoted", `SELECT * FROM "DuckDB_Databases"`, deny},
	{"databases view in subquery", "SELECT (SELECT max(file) FROM pragma_database_list) AS f", deny},
	{"settings view", "SELECT setting FROM pg_catalog.pg_settings WHERE name = 'temp_directory'", deny},
	{"settings view unqualified", "FROM pg_settings", deny},
	{"logs view", "FROM duckdb_logs", deny},
	{"temp directory setting", "SELECT current_setting('temp_directory')", deny},
	{"temp directory setting upper case", "SELECT current_setting('TEMP_DIRECTORY')", deny},
	{"allowed paths setting", "SELECT current_setting('allowed_paths')", deny},
	{"allowed directories setting", "SELECT current_setting('allowed_directories')", deny},
	{"secret directory setting", "SELECT current_setting('secret_directory')", deny},
	{"proxy password setting", "SELECT current_setting('http_proxy_password')", deny},
	{"computed setting name", "SELECT current_setting('temp_' || 'directory')", deny},
	{"setting name from a column", "SELECT current_setting(b) FROM t", deny},
	{"setting qualified", "SELECT pg_catalog.current_setting('temp_directory')", deny},
	{"explain analyze insert", "EXPLAIN ANALYZE INSERT INTO t VALUES (9, 'nine')", deny},
	{"explain insert", "EXPLAIN INSERT INTO t VALUES (9, 'nine')", deny},
	{"explain analyze checkpoint", "EXPLAIN ANALYZE SELECT * FROM checkpoint()", deny},
	{"explain with comment", "EXPLAIN /* x */ ANALYZE DELETE FROM t", deny},
	{"explain nested comment trick", "EXPLAIN /* /* */ SELECT 1 */ DELETE FROM t", deny},
	{"explain options", "EXPLAIN (FORMAT json) SELECT 1", deny},
	{"explain multi", "EXPLAIN SELECT 1; DROP TABLE t", deny},
	// A PIVOT without an IN list creates a type first: refused (as a request
	// the endpoint cannot serve, 400), and nothing of it runs.
	{"dynamic pivot creates a type", "PIVOT t ON b USING sum(a)", invalid},
	{"dynamic pivot in a subquery", "SELECT * FROM (PIVOT t ON b USING sum(a))", invalid},
	{"create type then pivot", "CREATE TYPE e AS ENUM ('x'); PIVOT t ON b USING sum(a)", deny},
	{"insert a dynamic pivot", "INSERT INTO t SELECT * FROM (PIVOT t ON b USING sum(a))", deny},
	{"detach via select", "SELECT * FROM t; DETACH warehouse", deny},
}

var (
	deny       = []apierrors.Code{apierrors.CodePermissionDenied}
	denyOrExec = []apierrors.Code{apierrors.CodePermissionDenied, apierrors.CodeQueryExecutionError}
	invalid    = []apierrors.Code{apierrors.CodeValidation}
	// A path without a known file extension is no replacement scan: DuckDB
	// looks for a table of that name.
	denyOrMissing = []apierrors.Code{apierrors.CodePermissionDenied, apierrors.CodeTableNotFound}
)

func TestGuardRefusesAndExecutesNothing(t *testing.T) {
	t.Parallel()
	e, cfg := newEngine(t)
	tenant, other := uuid.New(), uuid.New()
	exec(t, e, tenant, canarySetup...)
	exec(t, e, other, "CREATE TABLE secret AS SELECT 'top secret' AS s")
	dir := t.TempDir()
	otherPath := filepath.Join(cfg.DataDir, "tenants", other.String(), "warehouse.duckdb")
	selfPath := filepath.Join(cfg.DataDir, "tenants", tenant.String(), "warehouse.duckdb")
	before := snapshot(t, e, tenant)

	for _, tc := range attacks {
		for _, variant := range []struct {
			name string
			f    func(string) string
		}{
			{"", func(s string) string { return s }},
			{"/padded", func(s string) string { return "\n\t /* pre; */ -- x\n " + s + " ;  -- post\n" }},
			{"/odd case", oddCase},
		} {
			t.Run(tc.name+variant.name, func(t *testing.T) {
				sqlText := variant.f(strings.NewReplacer("{dir}", dir, "{other}", otherPath, "{self}", selfPath).Replace(tc.sql))
				res, err := runJSON(t, e, tenant, query.Request{SQL: sqlText})
				if err == nil {
					t.Fatalf("%q ran: %+v", sqlText, res)
				}
				status, code := apiErr(t, err)
				ok := false
				for _, c := range tc.codes {
					ok = ok || c == code
				}
				if !ok {
					t.Errorf("%q: got %d %s (%v), want one of %v", sqlText, status, code, err, tc.codes)
				}
				if code == apierrors.CodePermissionDenied && status != http.StatusForbidden {
					t.Errorf("status %d for permission_denied", status)
				}
				if strings.Contains(err.Error(), cfg.DataDir) && code != apierrors.CodeQueryExecutionError {
					// The public message never carries the data dir.
					var ae *apierrors.Error
					if apiErrAs(err, &ae) && strings.Contains(ae.Message, cfg.DataDir) {
						t.Errorf("message leaks the data dir: %s", ae.Message)
					}
				}
			})
		}
	}
	t.Cleanup(func() {
		if after := snapshot(t, e, tenant); after != before {
			t.Errorf("database changed:\nbefore:\n%s\nafter:\n%s", before, after)
		}
		if files := listFiles(t, dir); len(files) != 0 {
			t.Errorf("files were created: %v", files)
		}
	})
}

func TestGuardAllowsReadOnlyKinds(t *testing.T) {
	t.Parallel()
	e, _ := newEngine(t)
	tenant := uuid.New()
	exec(t, e, tenant, canarySetup...)
	for _, q := range []string{
		"SELECT * FROM t",
		"select a from t where a > 1 order by a",
		"  /* leading */ -- comment\n SELECT 1",
		"WITH x AS (SELECT a FROM t) SELECT sum(a) FROM x",
		"WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < 5) SELECT * FROM r",
		"FROM t",
		"FROM t SELECT a",
		"TABLE t",
		"VALUES (1, 'a'), (2, 'b')",
		"DESCRIBE t",
		"DESCRIBE SELECT * FROM t",
		"SHOW TABLES",
		"SHOW ALL TABLES",
		"SHOW t",
		"SUMMARIZE t",
		"PIVOT t ON b IN ('one', 'two') USING sum(a)",
		"UNPIVOT (SELECT 1 AS x, 2 AS y) ON x, y INTO NAME k VALUE v",
		"SELECT * FROM other.u",
		"SELECT * FROM v",
		"(SELECT 1) UNION ALL (SELECT 2)",
		"EXPLAIN SELECT * FROM t",
		"explain analyze select count(*) from t",
		"EXPLAIN\n-- why\nSELECT 1",
		"SELECT * FROM range(3)",
		"SELECT * FROM duckdb_tables()",
		"SELECT * FROM pragma_table_info('t')",
		"SELECT setseed(0.5), random() < 2",
		"SELECT current_setting('threads')",
		"SELECT current_setting('memory_limit'), current_setting('TimeZone')",
		"SELECT * FROM pg_catalog.pg_database",
		"SELECT * FROM information_schema.schemata",
		"FROM duckdb_tables",
		"SELECT 1;",
	} {
		t.Run(q, func(t *testing.T) {
			if _, err := runJSON(t, e, tenant, query.Request{SQL: q}); err != nil {
				t.Errorf("%q: %v", q, err)
			}
		})
	}
}

func TestGuardErrorCodes(t *testing.T) {
	t.Parallel()
	e, cfg := newEngine(t)
	tenant := uuid.New()
	exec(t, e, tenant, canarySetup...)
	for _, tc := range []struct {
		sql    string
		status int
		code   apierrors.Code
		msg    string
	}{
		{"SELECT * FROM missing", 404, apierrors.CodeTableNotFound, "Table with name missing does not exist"},
		{"SELECT * FROM nope.missing", 404, apierrors.CodeTableNotFound, "does not exist"},
		{"SELEC 1", 400, apierrors.CodeQueryExecutionError, "Parser Error: syntax error"},
		{"SELECT no_such_column FROM t", 400, apierrors.CodeQueryExecutionError, "Binder Error"},
		{"SELECT 1/0::INT, 'x'::INT", 400, apierrors.CodeQueryExecutionError, "Conversion Error"},
		{"SELECT error('boom')", 400, apierrors.CodeQueryExecutionError, "boom"},
		{"SELECT 1; SELECT 2", 400, apierrors.CodeQueryExecutionError, "exactly one statement"},
		{"PIVOT t ON b USING sum(a)", 400, apierrors.CodeValidation, `field "sql": a PIVOT needs an explicit IN list`},
		{"   ", 400, apierrors.CodeQueryExecutionError, "empty"},
		{"-- only a comment", 400, apierrors.CodeQueryExecutionError, "empty"},
		{"SELECT * FROM read_csv('" + cfg.DataDir + "/x.csv')", 403, apierrors.CodePermissionDenied, ""},
	} {
		_, err := runJSON(t, e, tenant, query.Request{SQL: tc.sql})
		if err == nil {
			t.Errorf("%q: no error", tc.sql)
			continue
		}
		status, code := apiErr(t, err)
		var ae *apierrors.Error
		apiErrAs(err, &ae)
		if status != tc.status || code != tc.code || !strings.Contains(ae.Message, tc.msg) {
			t.Errorf("%q: got %d %s %q, want %d %s containing %q", tc.sql, status, code, ae.Message, tc.status, tc.code, tc.msg)
		}
		if strings.Contains(ae.Message, cfg.DataDir) {
			t.Errorf("%q: message leaks the data dir: %s", tc.sql, ae.Message)
		}
	}
}

// oddCase alternates the case of letters outside quotes: SeLeCt * FrOm t.
func oddCase(s string) string {
	var b strings.Builder
	var quote rune
	upper := true
	for _, r := range s {
		switch {
		case quote != 0:
			if r == quote {
				quote = 0
			}
		case r == '\'' || r == '"':
			quote = r
		case r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z':
			if upper {
				r = []rune(strings.ToUpper(string(r)))[0]
			} else {
				r = []rune(strings.ToLower(string(r)))[0]
			}
			upper = !upper
		}
		b.WriteRune(r)
	}
	return b.String()
}

func apiErrAs(err error, target **apierrors.Error) bool {
	for err != nil {
		if e, ok := err.(*apierrors.Error); ok {
			*target = e
			return true
		}
		u, ok := err.(interface{ Unwrap() error })
		if !ok {
			return false
		}
		err = u.Unwrap()
	}
	return false
}

// TestNoServerPathIsVisible reads everything the guard lets a query read
// about the server (every built-in view, every table function that needs
// no argument, every setting current_setting may read, PRAGMA-style
// functions) and checks that no server path shows: not the data dir, not
// the tenant's file or temp directory, not the server user's home.
func TestNoServerPathIsVisible(t *testing.T) {
	t.Parallel()
	e, cfg := newEngine(t)
	tenant := uuid.New()
	exec(t, e, tenant, canarySetup...)
	home, _ := os.UserHomeDir()
	secrets := []string{cfg.DataDir, filepath.Join("tenants", tenant.String()), "warehouse.duckdb", ".duckdb/"}
	if home != "" && home != "/" {
		secrets = append(secrets, home)
	}
	// What exists, read on the writer path (unguarded).
	var views, functions, settings []string
	err := e.WithWriter(context.Background(), tenant, func(ctx context.Context, conn *sql.Conn) error {
		for q, dst := range map[string]*[]string{
			`SELECT DISTINCT schema_name || '.' || view_name FROM duckdb_views() WHERE internal`:  &views,
			`SELECT DISTINCT function_name FROM duckdb_functions() WHERE function_type = 'table'`: &functions,
			`SELECT name FROM duckdb_settings()`:                                                  &settings,
		} {
			rows, err := conn.QueryContext(ctx, q)
			if err != nil {
				return err
			}
			for rows.Next() {
				var s string
				if err := rows.Scan(&s); err != nil {
					return err
				}
				*dst = append(*dst, s)
			}
			if err := rows.Close(); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var queries []string
	for _, v := range views {
		queries = append(queries, "SELECT * FROM "+v)
	}
	for _, f := range functions {
		queries = append(queries, "SELECT * FROM "+f+"()")
	}
	for _, s := range settings {
		queries = append(queries, "SELECT current_setting('"+s+"') AS v")
	}
	ran := 0
	for _, q := range queries {
		res, err := e.Run(context.Background(), tenant, query.Request{SQL: q, MaxRows: 100000, Timeout: 10 * time.Second})
		if err != nil {
			var ae *apierrors.Error
			if apiErrAs(err, &ae) {
				for _, s := range secrets {
					if strings.Contains(ae.Message, s) {
						t.Errorf("%s: error message shows %q: %s", q, s, ae.Message)
					}
				}
			}
			continue // refused, or needs arguments
		}
		var buf bytes.Buffer
		werr := res.WriteCSV(&buf)
		res.Close()
		if werr != nil {
			continue
		}
		ran++
		for _, s := range secrets {
			if strings.Contains(buf.String(), s) {
				t.Errorf("%s shows %q:\n%.500s", q, s, buf.String())
			}
		}
	}
	t.Logf("%d of %d reads ran", ran, len(queries))
	if ran < len(views)+len(settings)/2 {
		t.Errorf("only %d of %d reads ran: the test no longer reads what it should", ran, len(queries))
	}
}

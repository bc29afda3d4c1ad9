package query

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	duckdb "github.com/duckdb/duckdb-go/v2"

	"github.com/stratahq/strata/impl/apierrors"
)

// The statement guard. Read-only-ness is decided by DuckDB's own parser and
// binder, never by matching SQL text:
//
//  1. json_serialize_sql(sql), on the store's parser connection, parses the
//     text with DuckDB's parser without binding or executing anything; the
//     text goes nowhere else before it passed. It only serializes SELECT
//     statements (SELECT, WITH, VALUES, FROM-first, TABLE, DESCRIBE, SHOW,
//     SUMMARIZE, PIVOT with an IN list, set operations); anything else is
//     refused here, except EXPLAIN, whose inner statement is checked the
//     same way (a PIVOT without an IN list gets a message of its own, see
//     errPivotNeedsIn).
//  2. The parse tree is walked: table functions must be on
//     allowedTableFunctions, scalar functions must not be on
//     deniedFunctions, table references must not name deniedViews, and
//     current_setting must name a setting that cannot hold a path. DuckDB has SELECT-typed functions with side effects:
//     measured on duckdb-go v2.10505.0 (DuckDB 1.5.5), `SELECT * FROM
//     checkpoint()` checkpoints even inside a READ ONLY transaction,
//     `enable_logging(storage='file', ...)` changes a global setting
//     despite lock_configuration (and bricks the database until it is
//     reopened), enable_profiling() makes the connection print to the
//     server's stdout.
//  3. The driver prepares the text with the driver connection's non-context
//     Prepare (it refuses multi-statement text without running any of it;
//     PrepareContext would execute all but the last statement) and
//     StatementType must be SELECT or EXPLAIN.
//  4. It executes inside BEGIN TRANSACTION READ ONLY on a connection that is
//     discarded afterwards; the database itself is sandboxed (no file or
//     network access, no extensions, configuration locked).

// The lists below are read-only lookup tables.

// allowedTableFunctions are the table functions user SQL may call. Anything
// else (file readers, checkpoint(), enable_logging(), query() which runs a
// SQL string the guard cannot see, arrow_scan() which takes raw pointers, and
// any table function added by a future DuckDB) is refused with 403. A test
// checks that every table function of the linked DuckDB is classified.
var allowedTableFunctions = setOf(
	"range", "generate_series", "unnest", "repeat", "repeat_row",
	"json_each", "json_tree", "summary", "test_all_types", "test_vector_types",
	"duckdb_columns", "duckdb_constraints", "duckdb_dependencies", "duckdb_functions",
	"duckdb_indexes", "duckdb_keywords", "duckdb_schemas", "duckdb_sequences",
	"duckdb_tables", "duckdb_types", "duckdb_views", "duckdb_optimizers",
	"duckdb_variables", "duckdb_prepared_statements", "duckdb_table_sample",
	"duckdb_coordinate_systems", "duckdb_approx_database_count",
	"pragma_table_info", "pragma_show", "pragma_version", "pragma_platform",
	"pragma_collations", "icu_calendar_names", "pg_timezone_names",
	"sql_auto_complete", "seq_scan",
)

// deniedTableFunctions are the table functions the guard knows and refuses
// on purpose (the test uses the list to tell "reviewed and refused" from
// "new, never reviewed"). Refusal does not depend on this list: whatever is
// not allowed is refused.
var deniedTableFunctions = setOf(
	// Side effects on the database or the connection.
	"checkpoint", "force_checkpoint", "enable_logging", "disable_logging",
	"truncate_duckdb_logs", "enable_profiling", "disable_profiling",
	"enable_peg_parser", "disable_peg_parser", "check_peg_parser",
	// Dynamic SQL the guard cannot inspect; raw pointers.
	"query", "query_table", "json_execute_serialized_sql", "arrow_scan", "arrow_scan_dumb",
	// Files and URLs (the sandbox refuses them too, but DuckDB still lets a
	// database read its own files).
	"read_csv", "read_csv_auto", "read_json", "read_json_auto", "read_json_objects",
	"read_json_objects_auto", "read_ndjson", "read_ndjson_auto", "read_ndjson_objects",
	"read_parquet", "parquet_scan", "parquet_metadata", "parquet_schema",
	"parquet_file_metadata", "parquet_kv_metadata", "parquet_full_metadata",
	"parquet_bloom_probe", "read_blob", "read_text", "glob", "sniff_csv", "read_duckdb",
	// Operator-level introspection: server paths, memory, logs, secrets.
	"duckdb_settings", "duckdb_databases", "duckdb_extensions", "duckdb_memory",
	"duckdb_temporary_files", "duckdb_logs", "duckdb_log_contexts", "duckdb_secrets",
	"duckdb_secret_types", "which_secret", "duckdb_external_file_cache",
	"duckdb_connection_count", "pragma_database_size", "pragma_storage_info",
	"pragma_metadata_info", "pragma_user_agent",
)

// deniedFunctions are scalar functions with side effects beyond the query:
// nextval writes a sequence (the read-only transaction refuses it too),
// write_log writes to DuckDB's log.
var deniedFunctions = setOf("nextval", "write_log")

// DuckDB's built-in views (duckdb_views() WHERE internal) are plain table
// references in a parse tree, so the table-function check never sees the
// functions they call. allowedViews were reviewed and show nothing beyond
// the tenant's own catalog; deniedViews expose what deniedTableFunctions
// keep back: the database file's path (duckdb_databases,
// pragma_database_list), settings with server paths (pg_settings), DuckDB's
// logs (duckdb_logs). A table reference with a denied view's name is
// refused whatever its schema (a tenant table of that name too: naming one
// so is not worth telling apart). A test checks that every built-in view of
// the linked DuckDB is on one of the lists.
var (
	deniedViews  = setOf("duckdb_databases", "pragma_database_list", "pg_settings", "duckdb_logs")
	allowedViews = setOf(
		// information_schema
		"character_sets", "check_constraints", "columns", "constraint_column_usage",
		"constraint_table_usage", "key_column_usage", "referential_constraints", "schemata",
		"table_constraints", "tables", "views",
		// main
		"duckdb_columns", "duckdb_constraints", "duckdb_indexes", "duckdb_schemas", "duckdb_tables",
		"duckdb_types", "duckdb_views", "sqlite_master", "sqlite_schema", "sqlite_temp_master",
		"sqlite_temp_schema",
		// pg_catalog
		"pg_am", "pg_attrdef", "pg_attribute", "pg_class", "pg_collation", "pg_constraint",
		"pg_database", "pg_depend", "pg_description", "pg_enum", "pg_index", "pg_indexes",
		"pg_namespace", "pg_prepared_statements", "pg_proc", "pg_sequence", "pg_sequences",
		"pg_tables", "pg_tablespace", "pg_type", "pg_views",
	)
)

// current_setting(name) reads any setting, some of which hold server paths
// (temp_directory and allowed_paths under the data dir, secret_directory
// under the server's home) or credentials (http_proxy_password). Its
// argument must be a constant naming a setting whose name has none of
// deniedSettingParts; a test reads every allowed setting through the guard
// and checks that none shows a path.
var deniedSettingParts = []string{
	"dir", "path", "file", "output", "repositor", "secret", "password", "proxy", "user", "home",
}

// settingAllowed reports whether current_setting may read the setting.
func settingAllowed(name string) bool {
	name = strings.ToLower(name)
	for _, part := range deniedSettingParts {
		if strings.Contains(name, part) {
			return false
		}
	}
	return true
}

// checkCurrentSetting checks the arguments of a current_setting call.
func checkCurrentSetting(fn map[string]any) error {
	args, _ := fn["children"].([]any)
	if len(args) == 1 {
		if arg, ok := args[0].(map[string]any); ok && arg["class"] == "CONSTANT" {
			if v, ok := arg["value"].(map[string]any); ok && v["is_null"] == false {
				if name, ok := v["value"].(string); ok {
					if settingAllowed(name) {
						return nil
					}
					return errDenied("current_setting: the setting %s is not readable (it may hold server paths or credentials)", shortName(name))
				}
			}
		}
	}
	return errDenied("current_setting takes a constant setting name")
}

func setOf(names ...string) map[string]bool {
	m := make(map[string]bool, len(names))
	for _, n := range names {
		m[n] = true
	}
	return m
}

// serialized is json_serialize_sql's answer.
type serialized struct {
	Error        bool   `json:"error"`
	ErrorType    string `json:"error_type"`
	ErrorMessage string `json:"error_message"`
	Statements   []any  `json:"statements"`
}

// guardText runs steps 1 and 2 of the guard. It returns whether the text
// is an EXPLAIN statement (to be confirmed by the prepared statement's type)
// or a 400/403 *apierrors.Error.
func (e *Engine) guardText(ctx context.Context, s *store, text string) (explain bool, err error) {
	ser, err := s.parser.serialize(ctx, text)
	if err != nil {
		return false, err
	}
	if !ser.Error {
		return false, checkStatements(ser.Statements)
	}
	if ser.ErrorType == "parser" {
		return false, errExec("%s", e.scrub(s.parser.message(ctx, text, ser.ErrorMessage)))
	}
	if !strings.HasPrefix(ser.ErrorMessage, "Only SELECT statements") {
		return false, errExec("%s", e.scrub(ser.ErrorMessage))
	}
	// Not a pure SELECT. EXPLAIN [ANALYZE] <select> is allowed: check the
	// inner statement.
	inner, ok := explainInner(text)
	if !ok {
		if dynamicPivot(text) {
			return false, errPivotNeedsIn
		}
		return false, errDenied("only read-only statements are allowed (SELECT, WITH, DESCRIBE, SHOW, SUMMARIZE, EXPLAIN)")
	}
	ser, err = s.parser.serialize(ctx, inner)
	if err != nil {
		return false, err
	}
	if ser.Error {
		return false, errDenied("EXPLAIN is allowed only for a single read-only statement, without options")
	}
	return true, checkStatements(ser.Statements)
}

// errPivotNeedsIn answers a PIVOT without an IN list. DuckDB turns such a
// PIVOT into two statements, CREATE TYPE (an enum of the values found in
// the data, read by a query of its own) and then the pivot over that type:
// a write, refused by the parser step and impossible in the read-only
// transaction, so the statement is a request the endpoint cannot serve
// rather than an attack. Naming the values makes it one SELECT.
var errPivotNeedsIn = apierrors.Validation("invalid request body: field \"sql\": a PIVOT needs an explicit IN list of the values to pivot on, e.g. PIVOT t ON col IN ('a', 'b') USING sum(x): without one the engine must create a type before the query, which a read-only query cannot (list the values with SELECT DISTINCT col FROM t)")

// dynamicPivot reports whether a text DuckDB refused as not read-only is a
// single statement that starts like a query and uses PIVOT (or
// PIVOT_WIDER), i.e. most likely a PIVOT without an IN list. It only picks
// the message of a refusal: nothing is ever let through because of it.
func dynamicPivot(text string) bool {
	words, statements := sqlWords(text)
	if statements != 1 || len(words) == 0 {
		return false
	}
	switch words[0] {
	case "PIVOT", "PIVOT_WIDER", "SELECT", "FROM", "WITH", "(":
	default:
		return false
	}
	for _, w := range words {
		if w == "PIVOT" || w == "PIVOT_WIDER" {
			return true
		}
	}
	return false
}

// sqlWords returns the upper-cased words of a SQL text outside string
// literals, quoted identifiers and comments ("(" stands for an opening
// parenthesis), and how many statements it holds (";"-separated parts with
// something in them). It is a rough tokenizer for choosing messages only.
func sqlWords(text string) (words []string, statements int) {
	inStatement := false
	mark := func() {
		if !inStatement {
			inStatement = true
			statements++
		}
	}
	for i := 0; i < len(text); {
		c := text[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v':
			i++
		case strings.HasPrefix(text[i:], "--"):
			end := strings.IndexAny(text[i:], "\n\r")
			if end < 0 {
				return words, statements
			}
			i += end
		case strings.HasPrefix(text[i:], "/*"):
			depth := 0
			for i < len(text) {
				switch {
				case strings.HasPrefix(text[i:], "/*"):
					depth++
					i += 2
				case strings.HasPrefix(text[i:], "*/"):
					depth--
					i += 2
				default:
					i++
				}
				if depth == 0 {
					break
				}
			}
		case c == ';':
			inStatement = false
			i++
		case c == '\'' || c == '"':
			mark()
			escapes := c == '\'' && i > 0 && (text[i-1] == 'E' || text[i-1] == 'e')
			i++
			for i < len(text) {
				if escapes && text[i] == '\\' {
					i += 2
					continue
				}
				if text[i] == c {
					if i+1 < len(text) && text[i+1] == c {
						i += 2
						continue
					}
					break
				}
				i++
			}
			i++
		case c == '$':
			mark()
			j := i + 1
			for j < len(text) && (isWordByte(text[j]) && !(text[j] >= '0' && text[j] <= '9' && j == i+1)) {
				j++
			}
			if j < len(text) && text[j] == '$' {
				tag := text[i : j+1]
				end := strings.Index(text[j+1:], tag)
				if end < 0 {
					return words, statements
				}
				i = j + 1 + end + len(tag)
				continue
			}
			i = j
		case isWordByte(c):
			mark()
			j := i
			for j < len(text) && (isWordByte(text[j]) || text[j] == '$') {
				j++
			}
			words = append(words, strings.ToUpper(text[i:j]))
			i = j
		case c == '(':
			mark()
			words = append(words, "(")
			i++
		default:
			mark()
			i++
		}
	}
	return words, statements
}

func isWordByte(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c >= 0x80
}

// parser runs json_serialize_sql on a connection of its own with the
// statement prepared once: preparing it costs about 250 µs, executing it
// about 100 µs. The connection only ever runs this statement, which parses
// its argument and neither binds nor executes it. One query at a time.
type parser struct {
	sem  chan struct{}
	conn *sql.Conn
	stmt *sql.Stmt
}

func newParser(ctx context.Context, db *sql.DB) (*parser, error) {
	conn, err := db.Conn(ctx)
	if err != nil {
		return nil, err
	}
	// The text is a bound parameter: never spliced into SQL.
	stmt, err := conn.PrepareContext(ctx, "SELECT json_serialize_sql($1::VARCHAR)::VARCHAR")
	if err != nil {
		discard(conn)
		return nil, err
	}
	return &parser{sem: make(chan struct{}, 1), conn: conn, stmt: stmt}, nil
}

// message returns DuckDB's full parser error for text (with the LINE and
// caret), which json_serialize_sql shortens. Preparing text that does not
// parse fails in the parser, before anything is bound or run.
func (p *parser) message(ctx context.Context, text, short string) string {
	select {
	case p.sem <- struct{}{}:
	case <-ctx.Done():
		return short
	}
	defer func() { <-p.sem }()
	msg := short
	_ = p.conn.Raw(func(dc any) error {
		c, ok := dc.(*duckdb.Conn)
		if !ok {
			return nil
		}
		st, err := c.Prepare(text)
		if err != nil {
			var dErr *duckdb.Error
			if errors.As(err, &dErr) && dErr.Type == duckdb.ErrorTypeParser {
				msg = dErr.Msg
			}
			return nil
		}
		return st.Close()
	})
	return msg
}

func (p *parser) close() {
	_ = p.stmt.Close()
	discard(p.conn)
}

// serialize parses text with DuckDB's parser.
func (p *parser) serialize(ctx context.Context, text string) (*serialized, error) {
	select {
	case p.sem <- struct{}{}:
	case <-ctx.Done():
		return nil, fmt.Errorf("parse statement: %w", ctx.Err())
	}
	var raw string
	err := p.stmt.QueryRowContext(ctx, text).Scan(&raw)
	<-p.sem
	if err != nil {
		return nil, fmt.Errorf("parse statement: %w", err)
	}
	ser := &serialized{}
	if err := json.Unmarshal([]byte(raw), ser); err != nil {
		return nil, fmt.Errorf("parse statement: %w", err)
	}
	if ser.Error && ser.ErrorMessage == "" {
		ser.ErrorMessage = "the statement could not be parsed"
	}
	return ser, nil
}

// checkStatements requires exactly one statement and walks its tree.
func checkStatements(stmts []any) error {
	switch {
	case len(stmts) == 0:
		return errExec("the query is empty")
	case len(stmts) > 1:
		return errExec("send exactly one statement per query (got %d)", len(stmts))
	}
	return walk(stmts[0])
}

// walk refuses table functions that are not allowed, denied scalar
// functions, denied built-in views and current_setting of settings that may
// hold paths anywhere in a serialized parse tree.
func walk(node any) error {
	switch n := node.(type) {
	case map[string]any:
		if typ, _ := n["type"].(string); typ == "TABLE_FUNCTION" {
			if fn, ok := n["function"].(map[string]any); ok {
				name, _ := fn["function_name"].(string)
				if !allowedTableFunctions[strings.ToLower(name)] {
					return errDenied("table function %s is not allowed", name)
				}
			}
		}
		if typ, _ := n["type"].(string); typ == "BASE_TABLE" {
			if name, _ := n["table_name"].(string); deniedViews[strings.ToLower(name)] {
				return errDenied("table %s is not allowed (it shows server paths, settings or logs)", name)
			}
		}
		if name, ok := n["function_name"].(string); ok {
			switch lower := strings.ToLower(name); {
			case deniedFunctions[lower]:
				return errDenied("function %s is not allowed", name)
			case lower == "current_setting":
				if err := checkCurrentSetting(n); err != nil {
					return err
				}
			}
		}
		for _, v := range n {
			if err := walk(v); err != nil {
				return err
			}
		}
	case []any:
		for _, v := range n {
			if err := walk(v); err != nil {
				return err
			}
		}
	}
	return nil
}

// explainInner returns the statement an EXPLAIN or EXPLAIN ANALYZE text
// explains. It only skips leading whitespace, `--` comments and /* */
// comments that contain no nested "/*"; anything it is unsure of returns
// false (and the statement is refused). The inner text is then parsed and
// walked by DuckDB like any query, and the whole text must still be
// prepared as an EXPLAIN statement.
func explainInner(text string) (string, bool) {
	rest, ok := skipKeyword(text, "explain")
	if !ok {
		return "", false
	}
	if after, ok := skipKeyword(rest, "analyze"); ok {
		rest = after
	}
	return rest, true
}

// skipKeyword skips blanks and comments, then the keyword (any case), which
// must be followed by a blank or a comment: EXPLAIN (FORMAT json) and other
// option lists are refused.
func skipKeyword(s, kw string) (string, bool) {
	s, ok := skipBlank(s)
	if !ok || len(s) < len(kw) || !strings.EqualFold(s[:len(kw)], kw) {
		return "", false
	}
	s = s[len(kw):]
	if s == "" {
		return "", false
	}
	switch {
	case s[0] == ' ' || s[0] == '\t' || s[0] == '\n' || s[0] == '\r' || s[0] == '\f' || s[0] == '\v':
	case strings.HasPrefix(s, "--"), strings.HasPrefix(s, "/*"):
	default:
		return "", false
	}
	return s, true
}

func skipBlank(s string) (string, bool) {
	for {
		s = strings.TrimLeft(s, " \t\n\r\f\v")
		switch {
		case strings.HasPrefix(s, "--"):
			i := strings.IndexAny(s, "\n\r")
			if i < 0 {
				return "", true
			}
			s = s[i:]
		case strings.HasPrefix(s, "/*"):
			end := strings.Index(s[2:], "*/")
			if end < 0 || strings.Contains(s[2:2+end], "/*") {
				return "", false
			}
			s = s[2+end+2:]
		default:
			return s, true
		}
	}
}

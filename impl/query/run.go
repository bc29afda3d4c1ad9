package query

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	duckdb "github.com/duckdb/duckdb-go/v2"
	"github.com/google/uuid"

	"github.com/stratahq/strata/impl/apierrors"
)

// Request is one query (spec 2.1).
type Request struct {
	// SQL is a single read-only statement.
	SQL string
	// Params binds placeholders: `?` and `$1` bind positionally to keys
	// "1", "2", ...; `$name` binds to key "name". Values are JSON scalars
	// (nil, bool, float64, json.Number, string; Go integers are accepted
	// too) or arrays of them whose elements share a type (nulls aside),
	// nested at most 4 deep, with at most 10,000 array elements in all
	// parameters together; anything else is 400 validation_error naming
	// the parameter. Decode the request with UseNumber to keep integers
	// beyond 2^53 exact. Unused keys are ignored, but their values must be
	// valid too.
	Params map[string]any
	// MaxRows is the number of rows returned at most (0 returns none);
	// more rows set Result.Truncated.
	MaxRows int
	// Timeout bounds the query, execution and streaming; 0 means none.
	Timeout time.Duration
}

// Column describes a result or table column (spec 2.3).
type Column struct {
	// Name is the column name; duplicate result names get a _1, _2 ...
	// suffix so that row objects keep every value.
	Name string `json:"name"`
	// Type is DuckDB's SQL type name (query results) or the PostgreSQL
	// storage name (schema).
	Type string `json:"type"`
	// Nullable reports whether the column allows NULL. DuckDB does not
	// track nullability through queries, so it is true for every result
	// column; the schema reports the tables' NOT NULL constraints.
	Nullable bool `json:"nullable"`
}

// Run guards, prepares, binds and executes a query for the tenant and
// fetches its first row. Every error up to that point is an
// *apierrors.Error with the status of spec 7 (or, when ctx was cancelled by
// the client, a wrapped context.Canceled): a statement that is not
// read-only is 403 permission_denied and nothing of it executed; a missing
// table is 404 table_not_found; other DuckDB errors are 400
// query_execution_error with DuckDB's message; the deadline is 408
// query_timeout; a store that cannot be opened is 503 service_unavailable.
//
// DuckDB materializes a result before Run returns, so runtime errors and
// timeouts during execution surface here too. The returned Result streams
// the rows; the caller must Close it.
func (e *Engine) Run(ctx context.Context, tenantID uuid.UUID, req Request) (res *Result, err error) {
	start := time.Now()
	if strings.TrimSpace(req.SQL) == "" {
		return nil, errExec("the query is empty")
	}
	if req.MaxRows < 0 {
		return nil, apierrors.Validation("maxRows must not be negative")
	}
	// Before any store is touched: a malformed value costs nothing.
	params, err := checkParams(req.Params)
	if err != nil {
		return nil, err
	}
	cancel := context.CancelFunc(func() {})
	if req.Timeout > 0 {
		ctx, cancel = context.WithTimeout(ctx, req.Timeout)
	}
	s, err := e.acquire(ctx, tenantID)
	if err != nil {
		cancel()
		return nil, err
	}
	r := &Result{eng: e, store: s, ctx: ctx, cancel: cancel, start: start, maxRows: req.MaxRows}
	defer func() {
		if err != nil {
			_ = r.Close()
			res = nil
		}
	}()
	// The text reaches nothing but DuckDB's parser before it passed.
	explain, err := e.guardText(ctx, s, req.SQL)
	if err != nil {
		return nil, e.mapError(ctx, s, err)
	}
	r.conn, err = s.db.Conn(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return nil, mapContextError(ctx, err)
		}
		return nil, apierrors.ServiceUnavailable("the tenant's data store is unavailable").WithInternalError(err)
	}
	if _, err = r.conn.ExecContext(ctx, "BEGIN TRANSACTION READ ONLY"); err != nil {
		return nil, e.mapError(ctx, s, err)
	}
	if err = r.prepare(req.SQL, explain); err != nil {
		return nil, e.mapError(ctx, s, err)
	}
	args, err := bindArgs(r.stmt, params)
	if err != nil {
		return nil, err
	}
	rows, err := r.query(ctx, args)
	if err != nil {
		return nil, e.mapError(ctx, s, err)
	}
	r.rows = rows
	r.describe()
	// Prefetch: conversion errors of the first row (e.g. a type the driver
	// cannot scan) still get a status code.
	if err = r.fetch(); err != nil {
		if apiErr, ok := unsupportedColumn(err, r.cols); ok && ctx.Err() == nil {
			return nil, apiErr
		}
		return nil, e.mapError(ctx, s, err)
	}
	return r, nil
}

// prepare prepares the text with the driver connection's non-context
// Prepare, which refuses multi-statement text without executing any of it
// (PrepareContext would run every statement but the last), and checks
// DuckDB's statement type.
func (r *Result) prepare(text string, explain bool) error {
	return r.conn.Raw(func(dc any) error {
		c, ok := dc.(*duckdb.Conn)
		if !ok {
			return fmt.Errorf("unexpected driver connection %T", dc)
		}
		st, err := c.Prepare(text)
		if err != nil {
			if strings.Contains(err.Error(), "multi-statement") {
				return errDenied("send exactly one read-only statement per query")
			}
			return err
		}
		stmt, ok := st.(*duckdb.Stmt)
		if !ok {
			_ = st.Close()
			return fmt.Errorf("unexpected driver statement %T", st)
		}
		typ, err := stmt.StatementType()
		if err != nil {
			_ = stmt.Close()
			return err
		}
		want := duckdb.STATEMENT_TYPE_SELECT
		if explain {
			want = duckdb.STATEMENT_TYPE_EXPLAIN
		}
		if typ != want {
			_ = stmt.Close()
			return errDenied("only read-only statements are allowed (SELECT, WITH, DESCRIBE, SHOW, SUMMARIZE, EXPLAIN)")
		}
		// The statement and its rows are used after Raw returns: the
		// *sql.Conn is held exclusively by this Result until Close, and
		// database/sql never touches a driver connection that a *sql.Conn
		// holds, so no one else uses it concurrently.
		r.stmt = stmt
		return nil
	})
}

// discard closes a connection for good: database/sql drops a connection
// whose Raw callback reports driver.ErrBadConn instead of pooling it, and
// closing a DuckDB connection rolls back its open transaction and drops
// its temp objects, prepared statements and settings. Nothing a query or
// the writer does to its connection can reach a later one.
func discard(conn *sql.Conn) {
	_ = conn.Raw(func(any) error { return driver.ErrBadConn })
	_ = conn.Close() // sql.ErrConnDone after Raw: already released
}

// bindArgs binds request params to the statement's placeholders by the
// names DuckDB gives them ("1", "2" ... for ? and $n; the name for $name),
// each in the form its placeholder's type calls for (see bindValue).
func bindArgs(stmt *duckdb.Stmt, params map[string]param) ([]driver.NamedValue, error) {
	n := stmt.NumInput()
	args := make([]driver.NamedValue, 0, n)
	for i := 1; i <= n; i++ {
		name, err := stmt.ParamName(i)
		if err != nil {
			return nil, errExec("parameter %d: %v", i, err)
		}
		p, ok := params[name]
		if !ok {
			return nil, errExec("missing parameter %q (params bind ? and $1 to keys \"1\", \"2\" ... and $name to key \"name\")", name)
		}
		typ, err := stmt.ParamType(i)
		if err != nil {
			typ = duckdb.TYPE_INVALID
		}
		v, err := bindValue(name, p, typ)
		if err != nil {
			return nil, err
		}
		args = append(args, driver.NamedValue{Ordinal: i, Value: v})
	}
	return args, nil
}

// query binds args and executes the statement. The driver's binding
// type-asserts Go values in places; bindValue never hands it a value that
// fails there, and should one slip through, the panic becomes an error
// here rather than leaking the connection and the store.
func (r *Result) query(ctx context.Context, args []driver.NamedValue) (rows driver.Rows, err error) {
	defer func() {
		if p := recover(); p != nil {
			rows, err = nil, apierrors.Internal(fmt.Errorf("query: driver panicked binding parameters: %v", p))
		}
	}()
	return r.stmt.QueryContext(ctx, args)
}

// Result is an executed query whose rows are encoded by one of the Write
// methods. A Write method reads every row it returns before the first byte
// reaches its writer, so an error while reading (a timeout, a value that
// cannot be converted) still gets its status. Errors after the first byte
// (the client going away, the deadline passing while a slow client reads)
// cannot change the status code any more: the Write method returns the
// error and the caller must abort the response (e.g.
// panic(http.ErrAbortHandler)) so the client sees a broken transfer rather
// than a well-formed truncated result.
type Result struct {
	eng     *Engine
	store   *store
	ctx     context.Context
	cancel  context.CancelFunc
	start   time.Time
	maxRows int

	conn *sql.Conn
	stmt *duckdb.Stmt
	rows driver.Rows

	cols  []Column
	types []*typeNode

	row       []driver.Value
	have      bool // row holds a fetched, unconsumed row
	eof       bool
	fetched   int
	rowCount  int
	truncated bool
	elapsed   time.Duration
	written   bool
	closed    bool
}

// describe reads the column names and types of the result.
func (r *Result) describe() {
	names := r.rows.Columns()
	typer, _ := r.rows.(driver.RowsColumnTypeDatabaseTypeName)
	seen := make(map[string]bool, len(names))
	r.cols = make([]Column, len(names))
	r.types = make([]*typeNode, len(names))
	for i, n := range names {
		name := n
		for j := 1; seen[name]; j++ {
			name = n + "_" + strconv.Itoa(j)
		}
		seen[name] = true
		typ := ""
		if typer != nil {
			typ = typer.ColumnTypeDatabaseTypeName(i)
		}
		r.types[i] = parseType(typ)
		r.cols[i] = Column{Name: name, Type: typ, Nullable: true}
	}
	r.row = make([]driver.Value, len(names))
}

// Columns returns the result's columns in order.
func (r *Result) Columns() []Column { return r.cols }

// RowCount is the number of rows written so far (all of them once a Write
// method returned nil).
func (r *Result) RowCount() int { return r.rowCount }

// Truncated reports whether rows beyond MaxRows were left out (valid once a
// Write method returned nil).
func (r *Result) Truncated() bool { return r.truncated }

// ExecutionTime is the time from Run's start until the last row was
// produced (valid once a Write method returned nil).
func (r *Result) ExecutionTime() time.Duration { return r.elapsed }

// ctxCheckEvery is how many rows pass between checks of the deadline while
// streaming.
const ctxCheckEvery = 256

// fetch reads the next row into r.row.
func (r *Result) fetch() error {
	if r.eof {
		return nil
	}
	r.fetched++
	if r.fetched%ctxCheckEvery == 0 {
		if err := r.ctx.Err(); err != nil {
			return mapContextError(r.ctx, err)
		}
	}
	err := r.rows.Next(r.row)
	if errors.Is(err, io.EOF) {
		r.eof, r.have = true, false
		return nil
	}
	if err != nil {
		return err
	}
	r.have = true
	return nil
}

// next returns whether a row is available in r.row for the caller to
// consume, honouring MaxRows: when MaxRows rows were consumed it looks one
// row ahead to set Truncated.
func (r *Result) next() (bool, error) {
	if !r.have {
		if err := r.fetch(); err != nil {
			return false, err
		}
	}
	if !r.have {
		return false, nil
	}
	if r.rowCount >= r.maxRows {
		r.truncated = true
		return false, nil
	}
	r.have = false
	r.rowCount++
	return true, nil
}

// startWrite marks the result as written and returns the spool that holds
// its body until the last row was read.
func (r *Result) startWrite() (*spool, error) {
	if r.closed {
		return nil, errors.New("query: result is closed")
	}
	if r.written {
		return nil, errors.New("query: result was already written")
	}
	r.written = true
	return &spool{dir: r.eng.spoolDir()}, nil
}

// finish records the execution time once the last row was produced.
func (r *Result) finish() {
	r.elapsed = time.Since(r.start)
}

// streamErr maps an error while streaming rows.
func (r *Result) streamErr(err error) error {
	if err == nil {
		return nil
	}
	var apiErr *apierrors.Error
	if errors.As(err, &apiErr) {
		return apiErr
	}
	if r.ctx.Err() != nil {
		return mapContextError(r.ctx, err)
	}
	return r.eng.mapError(r.ctx, r.store, err)
}

// Close releases the result: the rows, the read-only transaction (rolled
// back) and the connection (discarded, never reused). It is safe to call
// more than once.
func (r *Result) Close() error {
	if r.closed {
		return nil
	}
	r.closed = true
	var errs []error
	if r.rows != nil {
		errs = append(errs, r.rows.Close())
	}
	if r.stmt != nil {
		errs = append(errs, r.stmt.Close())
	}
	if r.conn != nil {
		// Discarding the DuckDB connection rolls its read-only
		// transaction back (and saves a ROLLBACK statement, ~60 µs).
		discard(r.conn)
	}
	r.cancel()
	r.eng.release(r.store)
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("query: close result: %w", err)
	}
	return nil
}

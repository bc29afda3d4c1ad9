package query

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	duckdb "github.com/duckdb/duckdb-go/v2"

	"github.com/stratahq/strata/impl/apierrors"
)

// errTimeout is the public error of a query that ran past its deadline.
func errTimeout(cause error) *apierrors.Error {
	return apierrors.New(http.StatusRequestTimeout, apierrors.CodeQueryTimeout,
		"the query exceeded its timeout and was cancelled").WithInternalError(cause)
}

// errDenied is 403 permission_denied.
func errDenied(format string, args ...any) *apierrors.Error {
	return apierrors.New(http.StatusForbidden, apierrors.CodePermissionDenied, format, args...)
}

// errExec is 400 query_execution_error.
func errExec(format string, args ...any) *apierrors.Error {
	return apierrors.New(http.StatusBadRequest, apierrors.CodeQueryExecutionError, format, args...)
}

// mapContextError maps an error seen while ctx is done: past the deadline
// it is 408 query_timeout; a cancelled context (the client went away) is
// returned as the context's error, wrapped, for the caller to drop.
func mapContextError(ctx context.Context, err error) error {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return errTimeout(err)
	}
	return fmt.Errorf("query cancelled: %w", ctx.Err())
}

// mapError turns an error of the DuckDB driver into the API error the client
// sees. Messages are DuckDB's own, with the server's data directory scrubbed.
func (e *Engine) mapError(ctx context.Context, s *store, err error) error {
	if err == nil {
		return nil
	}
	var apiErr *apierrors.Error
	if errors.As(err, &apiErr) {
		return apiErr
	}
	if ctx.Err() != nil {
		return mapContextError(ctx, err)
	}
	var dErr *duckdb.Error
	if !errors.As(err, &dErr) || dErr.Msg == "" {
		// Driver-side errors (unsupported type, bind errors ...): the driver
		// joins its own message with DuckDB's, which is empty when the
		// driver refused before calling DuckDB.
		return errExec("%s", driverMessage(e.scrub(err.Error()))).WithInternalError(err)
	}
	msg := e.scrub(dErr.Msg)
	switch dErr.Type {
	case duckdb.ErrorTypeCatalog:
		if isMissingTable(dErr.Msg) {
			return apierrors.New(http.StatusNotFound, apierrors.CodeTableNotFound, "%s", msg).WithInternalError(err)
		}
	case duckdb.ErrorTypePermission:
		// File, URL, extension access refused by the sandbox.
		return errDenied("%s", msg).WithInternalError(err)
	case duckdb.ErrorTypeTransaction:
		if strings.Contains(dErr.Msg, "read-only") {
			// A write that got past the statement guard (e.g. nextval) and
			// was refused by the read-only transaction.
			return errDenied("%s", msg).WithInternalError(err)
		}
	case duckdb.ErrorTypeInterrupt:
		// Interrupted without our context being done: should not happen.
		return errTimeout(err)
	case duckdb.ErrorTypeInternal:
		// DuckDB may invalidate the database after an internal error:
		// reopen it on next use. The query itself failed in the engine.
		if s != nil {
			e.markBroken(s)
		}
	case duckdb.ErrorTypeFatal:
		if s != nil {
			e.markBroken(s)
		}
		return apierrors.ServiceUnavailable("the tenant's data store failed; retry").WithInternalError(err)
	}
	return errExec("%s", msg).WithInternalError(err)
}

// driverMessage turns the text of a driver-side error into a message for the
// client: one line, without the driver's package prefix, never empty.
func driverMessage(msg string) string {
	msg = strings.ReplaceAll(msg, "database/sql/driver: ", "")
	var parts []string
	for _, line := range strings.Split(msg, "\n") {
		if line = strings.TrimSpace(line); line != "" {
			parts = append(parts, line)
		}
	}
	if len(parts) == 0 {
		return "the database driver refused the query"
	}
	return strings.Join(parts, ": ")
}

// unsupportedColumn returns the error of a result the driver cannot read
// because a column has a type it does not support (TIME_NS, VARIANT), as
// documented for QueryResult.rows: cast it to VARCHAR. ok is false for
// other errors. The driver reports the column's index as "index: N".
func unsupportedColumn(err error, cols []Column) (apiErr *apierrors.Error, ok bool) {
	msg := err.Error()
	if !strings.Contains(msg, "unsupported data type") {
		return nil, false
	}
	const hint = "has a type that query results cannot carry (TIME_NS and VARIANT are not supported): cast it to VARCHAR (e.g. col::VARCHAR)"
	if i := strings.LastIndex(msg, "index: "); i >= 0 {
		n, convErr := strconv.Atoi(strings.TrimSpace(strings.SplitN(msg[i+len("index: "):], ":", 2)[0]))
		if convErr == nil && n >= 0 && n < len(cols) {
			return errExec("result column %d (%q) %s", n+1, shortName(cols[n].Name), hint).WithInternalError(err), true
		}
	}
	return errExec("a result column %s", hint).WithInternalError(err), true
}

// isMissingTable reports whether a DuckDB catalog error says that a table
// (or view) does not exist, e.g. `Catalog Error: Table with name t does not
// exist!`.
func isMissingTable(msg string) bool {
	return strings.Contains(msg, "Table with name ") && strings.Contains(msg, "does not exist")
}

// Package postgrestfixture is a test fixture: an HTTP server that speaks the
// subset of the PostgREST protocol Strata's hosted_backend connector uses,
// the way hosted backends (Supabase-style) serve it under /rest/v1/, backed
// by a real PostgreSQL database. It stands in for a third-party service
// (PostgREST behind a hosted backend's API gateway); it is not Strata's
// product code, and its behaviour follows PostgREST 12 rather than Strata's
// own conventions.
//
// Covered: the root OpenAPI document (Swagger 2.0, generated from
// pg_catalog for one schema: definitions with columns in table order, format
// = PostgreSQL type name, no type for json/jsonb, <pk/> and <fk …/> notes,
// required = NOT NULL columns, paths for tables, views and /rpc/ functions);
// GET and HEAD on tables and views with select (columns, aliases, casts),
// order (.asc, .desc, .nullsfirst, .nullslast), filters eq, neq, gt, gte, lt,
// lte, like, ilike, is, in with not., logic trees or=(…)/and=(…) with nested
// and(…)/or(…)/not., limit/offset and the Range/Range-Unit headers;
// Prefer: count=exact|planned|estimated; Content-Range ("0-999/12345",
// "*/0", "0-999/*") with 200/206/416 as PostgREST computes them; PostgREST's
// error body {"code","details","hint","message"}; apikey and Authorization:
// Bearer checked against a configured key (401 otherwise); a silent max-rows
// cap (db-max-rows, default 1,000). Rows are encoded by PostgreSQL's own
// json_agg, as PostgREST does, so timestamps, bytea, numerics, arrays and
// json come out byte for byte as PostgREST sends them (the session time zone
// is UTC, as on hosted backends).
//
// Not covered: writes, resource embedding, JSON paths, RPC calls, CSV and
// singular-object media types, Accept-Profile schema switching, JWT roles and
// row-level security.
//
// Fault injection for tests: FailNext answers the next requests with an
// error status (and Retry-After), BreakNext cuts the next response bodies off
// midway.
package postgrestfixture

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// DefaultDSN is the local test database.
const DefaultDSN = "postgres://postgres@127.0.0.1:5432/test"

// DefaultMaxRows is the default row cap per response (PostgREST's
// db-max-rows as hosted backends configure it).
const DefaultMaxRows = 1000

// Options configure a Fixture.
type Options struct {
	// Pool is the database connection; required.
	Pool *pgxpool.Pool
	// Schema is the PostgreSQL schema exposed under /rest/v1/; required.
	Schema string
	// Key, when not empty, must be sent as the apikey header (or query
	// parameter) and, if an Authorization header is sent, as its bearer
	// token.
	Key string
	// MaxRows caps the rows of one response: 0 means DefaultMaxRows, a
	// negative value no cap.
	MaxRows int
}

// Fixture is the PostgREST-protocol http.Handler.
type Fixture struct {
	pool    *pgxpool.Pool
	schema  string
	key     string
	maxRows atomic.Int64

	mu       sync.Mutex
	faults   []fault
	breaks   int
	requests []Request
	count    atomic.Int64
}

// fault is one injected error response.
type fault struct {
	status     int
	retryAfter string
}

// Request is a request the fixture received (authentication headers left
// out).
type Request struct {
	// Method is the HTTP method.
	Method string
	// Path is the URL path, e.g. /rest/v1/items.
	Path string
	// RawQuery is the encoded query string.
	RawQuery string
	// Prefer is the Prefer header.
	Prefer string
	// Range is the Range header.
	Range string
}

// New returns a fixture serving opts.Schema.
func New(opts Options) (*Fixture, error) {
	if opts.Pool == nil {
		return nil, errors.New("postgrestfixture: Options.Pool is required")
	}
	if opts.Schema == "" {
		return nil, errors.New("postgrestfixture: Options.Schema is required")
	}
	f := &Fixture{pool: opts.Pool, schema: opts.Schema, key: opts.Key}
	f.SetMaxRows(opts.MaxRows)
	return f, nil
}

// SetMaxRows changes the row cap (0: DefaultMaxRows, negative: none).
func (f *Fixture) SetMaxRows(n int) {
	if n == 0 {
		n = DefaultMaxRows
	}
	f.maxRows.Store(int64(n))
}

// FailNext makes the next n requests fail with status, with a Retry-After
// header when retryAfter is not empty.
func (f *Fixture) FailNext(n, status int, retryAfter string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for range n {
		f.faults = append(f.faults, fault{status: status, retryAfter: retryAfter})
	}
}

// BreakNext makes the next n table reads send half of their body and then
// abort the connection.
func (f *Fixture) BreakNext(n int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.breaks += n
}

// Requests returns the requests received so far.
func (f *Fixture) Requests() []Request {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]Request(nil), f.requests...)
}

// RequestCount returns the number of requests received so far.
func (f *Fixture) RequestCount() int64 { return f.count.Load() }

// maxKeptRequests bounds the request log (benchmarks send many).
const maxKeptRequests = 10000

// apiError is PostgREST's error body.
type apiError struct {
	status  int
	Code    string  `json:"code"`
	Details *string `json:"details"`
	Hint    *string `json:"hint"`
	Message string  `json:"message"`
}

func (e *apiError) Error() string { return e.Message }

func strp(s string) *string { return &s }

func writeError(w http.ResponseWriter, e *apiError) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	if e.status == http.StatusUnauthorized {
		w.Header().Set("WWW-Authenticate", `Bearer error="invalid_token", error_description="`+e.Message+`"`)
	}
	w.WriteHeader(e.status)
	_ = json.NewEncoder(w).Encode(e)
}

// ServeHTTP implements http.Handler.
func (f *Fixture) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.count.Add(1)
	f.mu.Lock()
	if len(f.requests) < maxKeptRequests {
		f.requests = append(f.requests, Request{Method: r.Method, Path: r.URL.Path, RawQuery: r.URL.RawQuery,
			Prefer: r.Header.Get("Prefer"), Range: r.Header.Get("Range")})
	}
	var flt *fault
	if len(f.faults) > 0 {
		flt = &f.faults[0]
		f.faults = f.faults[1:]
	}
	f.mu.Unlock()

	if !strings.HasPrefix(r.URL.Path, "/rest/v1/") {
		// The API gateway's answer for unknown routes.
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		w.WriteHeader(http.StatusNotFound)
		_, _ = w.Write([]byte(`{"message":"no Route matched with those values"}` + "\n"))
		return
	}
	if flt != nil {
		if flt.retryAfter != "" {
			w.Header().Set("Retry-After", flt.retryAfter)
		}
		writeError(w, &apiError{status: flt.status, Code: "PGRST000", Message: "injected fault: " + http.StatusText(flt.status)})
		return
	}
	if e := f.authenticate(r); e != nil {
		writeError(w, e)
		return
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		writeError(w, &apiError{status: http.StatusMethodNotAllowed, Code: "PGRST117", Message: "Unsupported HTTP method: " + r.Method + " (this fixture is read-only)"})
		return
	}
	rest := strings.TrimPrefix(r.URL.Path, "/rest/v1/")
	switch {
	case rest == "":
		f.serveRoot(w, r)
	case strings.HasPrefix(rest, "rpc/"):
		writeError(w, &apiError{status: http.StatusNotFound, Code: "PGRST202", Message: "Could not find the function " + f.schema + "." + strings.TrimPrefix(rest, "rpc/") + " in the schema cache (this fixture does not call functions)"})
	case strings.Contains(rest, "/"):
		writeError(w, &apiError{status: http.StatusNotFound, Code: "PGRST125", Message: "Invalid path specified in request URL"})
	default:
		f.serveTable(w, r, rest)
	}
}

// authenticate checks apikey (header or query parameter, as the gateway
// accepts it) and the bearer token.
func (f *Fixture) authenticate(r *http.Request) *apiError {
	if f.key == "" {
		return nil
	}
	key := r.Header.Get("apikey")
	if key == "" {
		key = r.URL.Query().Get("apikey")
	}
	if key == "" {
		return &apiError{status: http.StatusUnauthorized, Code: "PGRST301", Message: "No API key found in request",
			Hint: strp("No `apikey` request header or url param was found.")}
	}
	if key != f.key {
		return &apiError{status: http.StatusUnauthorized, Code: "PGRST301", Message: "Invalid API key",
			Hint: strp("Double check your `service_role` API key.")}
	}
	if auth := r.Header.Get("Authorization"); auth != "" {
		tok, ok := strings.CutPrefix(auth, "Bearer ")
		if !ok || tok != f.key {
			return &apiError{status: http.StatusUnauthorized, Code: "PGRST301", Message: "JWSError JWSInvalidSignature"}
		}
	}
	return nil
}

func (f *Fixture) serveRoot(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	tx, err := f.pool.BeginTx(ctx, pgx.TxOptions{AccessMode: pgx.ReadOnly})
	if err != nil {
		writeError(w, pgError(err))
		return
	}
	defer func() { _ = tx.Rollback(context.WithoutCancel(ctx)) }()
	// Type names as PostgREST shows them: relative to the exposed schema.
	if _, err := tx.Exec(ctx, "SELECT set_config('search_path', $1, true)", pgx.Identifier{f.schema}.Sanitize()+", public"); err != nil {
		writeError(w, pgError(err))
		return
	}
	rels, err := loadRelations(ctx, tx, f.schema, nil)
	if err != nil {
		writeError(w, pgError(err))
		return
	}
	fns, err := loadFunctions(ctx, tx, f.schema)
	if err != nil {
		writeError(w, pgError(err))
		return
	}
	body, err := json.Marshal(openAPIDocument(r.Host, f.schema, rels, fns))
	if err != nil {
		writeError(w, &apiError{status: 500, Code: "PGRST000", Message: err.Error()})
		return
	}
	w.Header().Set("Content-Type", "application/openapi+json; charset=utf-8")
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		_, _ = w.Write(body)
	}
}

// pgError maps a database error to PostgREST's status and body.
func pgError(err error) *apiError {
	var pe *pgconn.PgError
	if !errors.As(err, &pe) {
		if errors.Is(err, context.Canceled) {
			return &apiError{status: 499, Code: "PGRST000", Message: "request canceled"}
		}
		return &apiError{status: http.StatusServiceUnavailable, Code: "PGRST000", Message: "Database client error. Retrying the connection.", Details: strp(err.Error())}
	}
	e := &apiError{Code: pe.Code, Message: pe.Message}
	if pe.Detail != "" {
		e.Details = strp(pe.Detail)
	}
	if pe.Hint != "" {
		e.Hint = strp(pe.Hint)
	}
	switch {
	case pe.Code == "42501":
		e.status = http.StatusUnauthorized
	case pe.Code == "42P01", pe.Code == "42883":
		e.status = http.StatusNotFound
	case pe.Code == "57014":
		e.status = http.StatusInternalServerError
	case strings.HasPrefix(pe.Code, "22"), strings.HasPrefix(pe.Code, "42"), strings.HasPrefix(pe.Code, "23"):
		e.status = http.StatusBadRequest
	case strings.HasPrefix(pe.Code, "08"), strings.HasPrefix(pe.Code, "53"), strings.HasPrefix(pe.Code, "57"):
		e.status = http.StatusServiceUnavailable
	default:
		e.status = http.StatusInternalServerError
	}
	return e
}

// countMode is the Prefer: count=… preference.
func countMode(r *http.Request) string {
	for _, h := range r.Header.Values("Prefer") {
		for p := range strings.SplitSeq(h, ",") {
			p = strings.TrimSpace(p)
			if v, ok := strings.CutPrefix(p, "count="); ok {
				return v
			}
		}
	}
	return ""
}

func (f *Fixture) serveTable(w http.ResponseWriter, r *http.Request, table string) {
	ctx := r.Context()
	name := table
	rels, err := loadRelations(ctx, f.pool, f.schema, &name)
	if err != nil {
		writeError(w, pgError(err))
		return
	}
	if len(rels) == 0 {
		writeError(w, &apiError{status: http.StatusNotFound, Code: "PGRST205",
			Message: fmt.Sprintf("Could not find the table '%s.%s' in the schema cache", f.schema, table)})
		return
	}
	rel := rels[0]
	plan, apiErr := f.plan(r, rel)
	if apiErr != nil {
		writeError(w, apiErr)
		return
	}
	f.execute(w, r, plan)
}

// plan is a parsed read request.
type plan struct {
	rel      *relation
	sql      string // returns total (or NULL), page rows, body
	args     []any
	countSQL string // the WHERE-only count used by count=estimated/planned
	lower    int64
	count    string
}

func (f *Fixture) plan(r *http.Request, rel *relation) (*plan, *apiError) {
	cols := map[string]columnInfo{}
	for _, c := range rel.columns {
		cols[c.name] = c
	}
	badColumn := func(c string) *apiError {
		return &apiError{status: http.StatusBadRequest, Code: "42703", Message: fmt.Sprintf("column %s.%s does not exist", rel.name, c)}
	}
	q := r.URL.Query()
	b := &sqlBuilder{cols: cols}
	var where []string
	var selectItems []selectItem
	var order []orderItem
	limit, offset := int64(-1), int64(0)
	for key, vals := range q {
		for _, v := range vals {
			var err error
			switch key {
			case "select":
				selectItems, err = parseSelect(v)
			case "order":
				order, err = parseOrder(v)
			case "limit":
				limit, err = strconv.ParseInt(v, 10, 64)
				if err != nil || limit < 0 {
					err = parseErr("limit", "%q is not a non-negative integer", v)
				}
			case "offset":
				offset, err = strconv.ParseInt(v, 10, 64)
				if err != nil || offset < 0 {
					err = parseErr("offset", "%q is not a non-negative integer", v)
				}
			case "apikey", "columns", "on_conflict":
			case "or", "and", "not.or", "not.and":
				var c *cond
				if c, err = parseLogic(key, v); err == nil {
					var s string
					if s, err = b.cond(c); err == nil {
						where = append(where, s)
					}
				}
			default:
				var c *cond
				if c, err = parseFilter(key, v); err == nil {
					var s string
					if s, err = b.cond(c); err == nil {
						where = append(where, s)
					}
				}
			}
			if err != nil {
				var se *syntaxError
				var ce columnError
				switch {
				case errors.As(err, &se):
					return nil, &apiError{status: http.StatusBadRequest, Code: "PGRST100", Message: se.msg, Details: strp(se.details)}
				case errors.As(err, &ce):
					return nil, badColumn(string(ce))
				}
				return nil, &apiError{status: http.StatusBadRequest, Code: "PGRST100", Message: err.Error()}
			}
		}
	}

	// The requested range: limit/offset intersected with the Range header,
	// then capped by max-rows, as PostgREST does.
	lower, upper := offset, int64(-1)
	if limit >= 0 {
		upper = offset + limit - 1
	}
	if rh := r.Header.Get("Range"); rh != "" && (r.Header.Get("Range-Unit") == "" || r.Header.Get("Range-Unit") == "items") {
		lo, hi, ok := parseRangeHeader(rh)
		if !ok || (hi >= 0 && hi < lo) {
			return nil, &apiError{status: http.StatusRequestedRangeNotSatisfiable, Code: "PGRST103", Message: "Requested range not satisfiable", Details: strp("Invalid Range header " + rh)}
		}
		lower = max(lower, lo)
		if hi >= 0 && (upper < 0 || hi < upper) {
			upper = hi
		}
	}
	if m := f.maxRows.Load(); m > 0 && (upper < 0 || upper-lower+1 > m) {
		upper = lower + m - 1
	}

	table := pgx.Identifier{f.schema, rel.name}.Sanitize()
	selectSQL := table + ".*"
	if len(selectItems) > 0 {
		parts := make([]string, 0, len(selectItems))
		for _, it := range selectItems {
			if it.star {
				parts = append(parts, table+".*")
				continue
			}
			if _, ok := cols[it.col]; !ok {
				return nil, badColumn(it.col)
			}
			expr := pgx.Identifier{it.col}.Sanitize()
			if it.cast != "" {
				expr = "CAST(" + expr + " AS " + it.cast + ")"
			}
			alias := it.alias
			if alias == "" {
				alias = it.col
			}
			parts = append(parts, expr+" AS "+pgx.Identifier{alias}.Sanitize())
		}
		selectSQL = strings.Join(parts, ", ")
	}
	whereSQL := ""
	if len(where) > 0 {
		whereSQL = " WHERE " + strings.Join(where, " AND ")
	}
	orderSQL := ""
	if len(order) > 0 {
		parts := make([]string, 0, len(order))
		for _, o := range order {
			if _, ok := cols[o.col]; !ok {
				return nil, badColumn(o.col)
			}
			p := pgx.Identifier{o.col}.Sanitize()
			if o.desc {
				p += " DESC"
			} else {
				p += " ASC"
			}
			switch o.nulls {
			case "first":
				p += " NULLS FIRST"
			case "last":
				p += " NULLS LAST"
			}
			parts = append(parts, p)
		}
		orderSQL = " ORDER BY " + strings.Join(parts, ", ")
	}
	limitSQL := ""
	if upper >= 0 {
		limitSQL = fmt.Sprintf(" LIMIT %d", max(upper-lower+1, 0))
	}
	if lower > 0 {
		limitSQL += fmt.Sprintf(" OFFSET %d", lower)
	}
	mode := countMode(r)
	totalSQL := "NULL::bigint"
	if mode == "exact" {
		totalSQL = "(SELECT pg_catalog.count(*) FROM " + table + whereSQL + ")"
	}
	source := "SELECT " + selectSQL + " FROM " + table + whereSQL + orderSQL + limitSQL
	p := &plan{
		rel:      rel,
		sql:      "SELECT " + totalSQL + ", pg_catalog.count(_postgrest_t), coalesce(json_agg(_postgrest_t), '[]')::text FROM (" + source + ") _postgrest_t",
		args:     b.args,
		countSQL: "SELECT 1 FROM " + table + whereSQL,
		lower:    lower,
		count:    mode,
	}
	return p, nil
}

func (f *Fixture) execute(w http.ResponseWriter, r *http.Request, p *plan) {
	ctx := r.Context()
	var total *int64
	var pageRows int64
	var body string
	if err := f.pool.QueryRow(ctx, p.sql, p.args...).Scan(&total, &pageRows, &body); err != nil {
		writeError(w, pgError(err))
		return
	}
	if p.count == "planned" || p.count == "estimated" {
		t, err := f.estimate(ctx, p)
		if err != nil {
			writeError(w, pgError(err))
			return
		}
		total = &t
	}
	// PostgREST's rangeStatusHeader.
	lower := p.lower
	upper := lower + pageRows - 1
	totalText := "*"
	if total != nil {
		totalText = strconv.FormatInt(*total, 10)
	}
	rangeText := "*"
	if (total == nil || *total != 0) && lower <= upper {
		rangeText = fmt.Sprintf("%d-%d", lower, upper)
	}
	status := http.StatusOK
	if total != nil {
		switch {
		case lower > *total:
			writeError(w, &apiError{status: http.StatusRequestedRangeNotSatisfiable, Code: "PGRST103",
				Message: "Requested range not satisfiable",
				Details: strp(fmt.Sprintf("An offset of %d was requested, but there are only %d rows.", lower, *total))})
			return
		case 1+upper-lower < *total:
			status = http.StatusPartialContent
		}
	}
	h := w.Header()
	h.Set("Content-Type", "application/json; charset=utf-8")
	h.Set("Content-Range", rangeText+"/"+totalText)
	if r.Method == http.MethodHead {
		w.WriteHeader(status)
		return
	}
	f.mu.Lock()
	broken := f.breaks > 0
	if broken {
		f.breaks--
	}
	f.mu.Unlock()
	if broken {
		// Promise the whole body, send half of it, then drop the
		// connection: the client sees an unexpected EOF.
		h.Set("Content-Length", strconv.Itoa(len(body)))
		w.WriteHeader(status)
		_, _ = w.Write([]byte(body[:len(body)/2]))
		if fl, ok := w.(http.Flusher); ok {
			fl.Flush()
		}
		panic(http.ErrAbortHandler)
	}
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	_, _ = w.Write([]byte(body))
}

// estimate implements count=planned (the planner's row estimate) and
// count=estimated (exact up to max-rows, the planner's estimate beyond).
func (f *Fixture) estimate(ctx context.Context, p *plan) (int64, error) {
	if p.count == "estimated" {
		m := f.maxRows.Load()
		if m <= 0 {
			var n int64
			err := f.pool.QueryRow(ctx, "SELECT count(*) FROM ("+p.countSQL+") _c", p.args...).Scan(&n)
			return n, err
		}
		var n int64
		if err := f.pool.QueryRow(ctx, fmt.Sprintf("SELECT count(*) FROM (%s LIMIT %d) _c", p.countSQL, m+1), p.args...).Scan(&n); err != nil {
			return 0, err
		}
		if n <= m {
			return n, nil
		}
	}
	var plans []struct {
		Plan struct {
			Rows float64 `json:"Plan Rows"`
		} `json:"Plan"`
	}
	var raw []byte
	if err := f.pool.QueryRow(ctx, "EXPLAIN (FORMAT JSON) "+p.countSQL, p.args...).Scan(&raw); err != nil {
		return 0, err
	}
	if err := json.Unmarshal(raw, &plans); err != nil || len(plans) == 0 {
		return 0, fmt.Errorf("reading the plan estimate: %v", err)
	}
	return int64(plans[0].Plan.Rows), nil
}

// columnError names an unknown column in a filter.
type columnError string

func (e columnError) Error() string { return "unknown column " + string(e) }

// sqlBuilder turns filter trees into SQL with text parameters cast to the
// column's type, the way PostgREST lets PostgreSQL coerce its unknown-typed
// literals.
type sqlBuilder struct {
	cols map[string]columnInfo
	args []any
}

func (b *sqlBuilder) param(v, typ string) string {
	b.args = append(b.args, v)
	return fmt.Sprintf("CAST($%d::text AS %s)", len(b.args), typ)
}

var sqlOps = map[string]string{"eq": "=", "neq": "<>", "gt": ">", "gte": ">=", "lt": "<", "lte": "<="}

func (b *sqlBuilder) cond(c *cond) (string, error) {
	var s string
	if c.logic != "" {
		parts := make([]string, 0, len(c.children))
		for _, ch := range c.children {
			p, err := b.cond(ch)
			if err != nil {
				return "", err
			}
			parts = append(parts, p)
		}
		if len(parts) == 0 {
			s = "true"
		} else {
			s = "(" + strings.Join(parts, " "+strings.ToUpper(c.logic)+" ") + ")"
		}
	} else {
		col, ok := b.cols[c.col]
		if !ok {
			return "", columnError(c.col)
		}
		ident := pgx.Identifier{c.col}.Sanitize()
		switch c.op {
		case "is":
			switch strings.ToLower(c.values[0]) {
			case "null":
				s = ident + " IS NULL"
			case "true":
				s = ident + " IS TRUE"
			case "false":
				s = ident + " IS FALSE"
			case "unknown":
				s = ident + " IS UNKNOWN"
			default:
				return "", parseErr("filter (is."+c.values[0]+")", "is accepts null, true, false or unknown")
			}
		case "in":
			if len(c.values) == 0 {
				s = "false"
				break
			}
			ps := make([]string, len(c.values))
			for i, v := range c.values {
				ps[i] = b.param(v, col.fullType)
			}
			s = ident + " IN (" + strings.Join(ps, ", ") + ")"
		case "like", "ilike":
			b.args = append(b.args, strings.ReplaceAll(c.values[0], "*", "%"))
			op := " LIKE "
			if c.op == "ilike" {
				op = " ILIKE "
			}
			s = ident + "::text" + op + fmt.Sprintf("$%d::text", len(b.args))
		default:
			s = ident + " " + sqlOps[c.op] + " " + b.param(c.values[0], col.fullType)
		}
	}
	if c.not {
		s = "NOT (" + s + ")"
	}
	return s, nil
}

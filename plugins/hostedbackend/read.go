package hostedbackend

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
)

// Table is one table (or view) of the hosted backend.
type Table struct {
	// Name is the table's name in the data API (and its name in DuckDB).
	Name string
	// Schema holds one field per column in the backend's column order; each
	// field carries the MetaPGType metadata (see the package documentation
	// for the type mapping). Nullable is false for NOT NULL columns.
	Schema *arrow.Schema
	// PrimaryKey lists the primary-key columns in column order; empty when
	// the table (or view) has none.
	PrimaryKey []string
	// EstimatedRows is the backend's row estimate, -1 when unknown.
	EstimatedRows int64
}

// Discover lists the readable tables and views of the backend with their
// Arrow schemas, primary keys and row estimates, sorted by name.
func (s *Source) Discover(ctx context.Context) ([]Table, error) {
	tables, err := s.discover(ctx)
	return tables, redactErr(err, s.cfg.ServiceRoleKey)
}

func (s *Source) discover(ctx context.Context) ([]Table, error) {
	doc, err := s.fetchOpenAPI(ctx)
	if err != nil {
		return nil, err
	}
	tables, err := tablesFromDoc(doc)
	if err != nil {
		return nil, err
	}
	for i := range tables {
		n, err := s.estimateRows(ctx, tables[i].Name)
		switch {
		case err == nil:
			tables[i].EstimatedRows = n
		case errors.Is(err, ErrUnauthorized), ctx.Err() != nil:
			return nil, err
		default:
			s.log.LogAttrs(ctx, slog.LevelWarn, "hosted_backend: no row estimate",
				slog.String("table", tables[i].Name), slog.String("error", redactString(err.Error(), s.cfg.ServiceRoleKey)))
		}
	}
	return tables, nil
}

// ErrTableNotFound means the backend does not expose the requested table.
var ErrTableNotFound = errors.New("table not exposed by the hosted backend")

// DiscoverTable is Discover for one table: it reads the OpenAPI document
// and estimates the rows of that table only (Discover sends one HEAD request
// per table), so a per-table Read does not cost a full discovery. It fails
// with ErrTableNotFound when the backend does not expose name.
func (s *Source) DiscoverTable(ctx context.Context, name string) (Table, error) {
	t, err := s.discoverTable(ctx, name)
	return t, redactErr(err, s.cfg.ServiceRoleKey)
}

func (s *Source) discoverTable(ctx context.Context, name string) (Table, error) {
	doc, err := s.fetchOpenAPI(ctx)
	if err != nil {
		return Table{}, err
	}
	tables, err := tablesFromDoc(doc)
	if err != nil {
		return Table{}, err
	}
	for _, t := range tables {
		if t.Name != name {
			continue
		}
		n, err := s.estimateRows(ctx, t.Name)
		switch {
		case err == nil:
			t.EstimatedRows = n
		case errors.Is(err, ErrUnauthorized), ctx.Err() != nil:
			return Table{}, err
		}
		return t, nil
	}
	return Table{}, fmt.Errorf("%w: %q", ErrTableNotFound, name)
}

// estimateRows asks for the row count with HEAD and Prefer: count=estimated
// (PostgREST answers exactly for small tables and with the planner's
// estimate beyond db-max-rows, so this stays cheap on huge tables).
func (s *Source) estimateRows(ctx context.Context, table string) (int64, error) {
	var total int64 = -1
	err := s.withRetry(ctx, fmt.Sprintf("estimating the rows of %q", table), func(int) error {
		resp, err := s.send(ctx, request{
			method: http.MethodHead,
			path:   table,
			query:  url.Values{"select": {"*"}, "limit": {"1"}},
			header: http.Header{"Prefer": {"count=estimated"}},
		})
		if err != nil {
			return err
		}
		resp.Body.Close()
		_, _, t, ok := parseContentRange(resp.Header.Get("Content-Range"))
		if ok {
			total = t
		}
		return nil
	})
	return total, err
}

// parseContentRange parses "0-999/12345", "*/0" or "0-999/*"; total is -1
// when unknown. ok is false when the header is missing or malformed.
func parseContentRange(v string) (first, last, total int64, ok bool) {
	v = strings.TrimSpace(v)
	v = strings.TrimPrefix(v, "items ")
	slash := strings.IndexByte(v, '/')
	if slash < 0 {
		return 0, 0, -1, false
	}
	rng, tot := v[:slash], v[slash+1:]
	first, last, total = -1, -1, -1
	if tot != "*" {
		n, err := strconv.ParseInt(tot, 10, 64)
		if err != nil || n < 0 {
			return 0, 0, -1, false
		}
		total = n
	}
	if rng != "*" {
		dash := strings.IndexByte(rng, '-')
		if dash < 0 {
			return 0, 0, -1, false
		}
		a, err1 := strconv.ParseInt(rng[:dash], 10, 64)
		b, err2 := strconv.ParseInt(rng[dash+1:], 10, 64)
		if err1 != nil || err2 != nil {
			return 0, 0, -1, false
		}
		first, last = a, b
	}
	return first, last, total, true
}

// quoteIdent quotes a column name for PostgREST's select/order/logic syntax
// when it contains characters that syntax reserves.
func quoteIdent(name string) string {
	if name != "" && !strings.ContainsAny(name, ",.:()\"\\ ->*!") {
		return name
	}
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(name) + `"`
}

// quoteValue double-quotes a filter value inside or=(…)/and(…), where commas
// and parentheses are reserved.
func quoteValue(v string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(v) + `"`
}

// pager builds the query of the next page and moves the cursor.
type pager struct {
	table   Table
	keyset  bool
	order   string
	lastKey []string // nil before the first page (keyset)
	offset  int64    // rows read so far (offset paging)
}

func newPager(t Table) *pager {
	p := &pager{table: t, keyset: len(t.PrimaryKey) > 0}
	var cols []string
	if p.keyset {
		cols = t.PrimaryKey
	} else {
		for _, f := range t.Schema.Fields() {
			if orderable(f) {
				cols = append(cols, f.Name)
			}
		}
	}
	parts := make([]string, len(cols))
	for i, c := range cols {
		parts[i] = quoteIdent(c) + ".asc"
	}
	p.order = strings.Join(parts, ",")
	return p
}

// orderable reports whether PostgreSQL can ORDER BY a column of this field:
// json (and arrays of it) and types the connector does not know (point,
// xml…) may have no ordering operator, so they are left out of the order.
func orderable(f arrow.Field) bool {
	format, _ := f.Metadata.GetValue(MetaPGType)
	elem, _ := normalizeFormat(format)
	if elem == "json" {
		return false
	}
	_, kind, _ := scalarType(elem)
	return kind != kindText
}

func (p *pager) query(limit int) url.Values {
	q := url.Values{"select": {"*"}, "limit": {strconv.Itoa(limit)}}
	if p.order != "" {
		q.Set("order", p.order)
	}
	if !p.keyset {
		if p.offset > 0 {
			q.Set("offset", strconv.FormatInt(p.offset, 10))
		}
		return q
	}
	if p.lastKey == nil {
		return q
	}
	pk := p.table.PrimaryKey
	if len(pk) == 1 {
		q.Set(pk[0], "gt."+p.lastKey[0])
		return q
	}
	// (a > x) OR (a = x AND b > y) OR (a = x AND b = y AND c > z) …
	terms := make([]string, len(pk))
	for i := range pk {
		conds := make([]string, 0, i+1)
		for j := 0; j < i; j++ {
			conds = append(conds, quoteIdent(pk[j])+".eq."+quoteValue(p.lastKey[j]))
		}
		conds = append(conds, quoteIdent(pk[i])+".gt."+quoteValue(p.lastKey[i]))
		if len(conds) == 1 {
			terms[i] = conds[0]
		} else {
			terms[i] = "and(" + strings.Join(conds, ",") + ")"
		}
	}
	q.Set("or", "("+strings.Join(terms, ",")+")")
	return q
}

// Read streams every row of table as Arrow record batches of at most
// Options.PageSize rows, calling emit for each (the batch is released when
// emit returns: Retain it to keep it) and then progress with the rows read
// so far and the total (the exact count from the first page's
// Content-Range, or EstimatedRows, or -1 when unknown). Memory stays
// bounded by one page: the response body is decoded as a stream.
//
// Paging keeps a stable order so that no row is skipped or read twice:
//
//   - With a primary key, keyset paging: order=pk.asc and pk=gt.<last>, and
//     for composite keys or=(a.gt.x,and(a.eq.x,b.gt.y),…) in key order.
//     This stays correct while rows are written concurrently (rows inserted
//     behind the cursor are simply not read) and each page is an index range
//     scan. Hosted backends cap rows per response silently (db-max-rows,
//     1,000 by default), so a short page does not mean the end: paging ends
//     at the first empty page.
//   - Without a primary key (tables without one, most views), limit/offset
//     paging ordered by every orderable column. Concurrent inserts, updates
//     or deletes can then make rows be skipped or read twice, and rows that
//     are equal in every orderable column have no defined order between
//     pages; each page also costs the server a sort of the rows before it.
//     Paging ends at an empty page or once the exact total from the first
//     page's Content-Range (Prefer: count=exact) is reached.
//
// The first request of a read asks for Prefer: count=exact (one count query
// on the server), later ones do not.
//
// Failed requests are retried (see Options); a page that breaks off midway
// is asked for again from the last row handed to emit, so retries never
// duplicate rows. An error from emit stops the read and is returned as is.
func (s *Source) Read(ctx context.Context, table Table, emit func(arrow.RecordBatch) error, progress func(rowsRead, rowsTotal int64)) error {
	err := s.read(ctx, table, emit, progress)
	return redactErr(err, s.cfg.ServiceRoleKey)
}

// emitError marks an error returned by the caller's emit.
type emitError struct{ err error }

func (e *emitError) Error() string { return e.err.Error() }
func (e *emitError) Unwrap() error { return e.err }

func (s *Source) read(ctx context.Context, table Table, emit func(arrow.RecordBatch) error, progress func(rowsRead, rowsTotal int64)) error {
	if table.Schema == nil || table.Name == "" {
		return errors.New("hosted_backend: Read needs a table from Discover")
	}
	if progress == nil {
		progress = func(int64, int64) {}
	}
	dec, err := newRowDecoder(s.mem, table.Schema, s.opts.PageSize, table.PrimaryKey)
	if err != nil {
		return fmt.Errorf("reading %q: %w", table.Name, err)
	}
	defer dec.release()
	p := newPager(table)

	total := table.EstimatedRows
	if total < 0 {
		total = -1
	}
	var read int64
	counted := false
	deliver := func(rec arrow.RecordBatch) error {
		defer rec.Release()
		if p.keyset {
			if dec.lastNull {
				return fmt.Errorf("%w: a primary-key column of %q is null", ErrProtocol, table.Name)
			}
			p.lastKey = p.lastKey[:0]
			for _, k := range dec.lastKey {
				p.lastKey = append(p.lastKey, string(k))
			}
		}
		n := rec.NumRows()
		if err := emit(rec); err != nil {
			return &emitError{err: err}
		}
		p.offset += n
		read += n
		if total >= 0 && read > total {
			total = read
		}
		progress(read, total)
		return nil
	}

	what := fmt.Sprintf("reading %q", table.Name)
	for page := 0; ; page++ {
		var rows int
		var end bool
		err := s.withRetry(ctx, what, func(int) error {
			dec.reset()
			hdr := http.Header{}
			if !counted {
				hdr.Set("Prefer", "count=exact")
			}
			resp, err := s.send(ctx, request{method: http.MethodGet, path: table.Name, query: p.query(s.opts.PageSize), header: hdr})
			if err != nil {
				var se *statusError
				if errors.As(err, &se) {
					return fmt.Errorf("%w: %s", ErrProtocol, se.msg)
				}
				return err
			}
			defer resp.Body.Close()
			if resp.StatusCode == http.StatusRequestedRangeNotSatisfiable {
				// Offset beyond the total: the rows ran out under us.
				end = true
				return nil
			}
			if !counted {
				if _, _, t, ok := parseContentRange(resp.Header.Get("Content-Range")); ok && t >= 0 {
					total = t
					counted = true
				}
			}
			n, err := dec.decodePage(resp.Body, deliver)
			rows = n
			if err != nil {
				var ee *emitError
				switch {
				case errors.As(err, &ee):
					return ee
				case ctx.Err() != nil:
					return context.Cause(ctx)
				case isBodyReadError(err):
					return &retryable{err: fmt.Errorf("%w at %s: page %d of %q broke off: %w", ErrUnreachable, s.endpoint(), page+1, table.Name, err)}
				}
				return fmt.Errorf("page %d: %w", page+1, err)
			}
			counted = true
			return nil
		})
		if err != nil {
			var ee *emitError
			if errors.As(err, &ee) {
				return ee.err
			}
			return err
		}
		if end || rows == 0 {
			break
		}
		if !p.keyset && total >= 0 && p.offset >= total {
			break
		}
	}
	if total >= 0 && read != total {
		s.log.LogAttrs(ctx, slog.LevelInfo, "hosted_backend: row count changed during the read",
			slog.String("table", table.Name), slog.Int64("read", read), slog.Int64("counted", total))
	}
	progress(read, read)
	return nil
}

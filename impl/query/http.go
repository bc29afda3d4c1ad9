package query

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"math"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/stratahq/strata/gen/api"
	"github.com/stratahq/strata/impl/apierrors"
	"github.com/stratahq/strata/impl/principal"
)

// Defaults of spec 2.1 for fields the request omits, and the contract's
// maxima (QueryRequest in openapi.yaml; the validator checks them first).
const (
	defaultMaxRows    = 10000
	defaultTimeout    = 30 * time.Second
	maxMaxRows        = 100000
	maxTimeoutSeconds = 60
)

// TruncatedHeader is the response header of POST /query that says whether
// rows beyond maxRows were left out: "true" or "false", in every format (the
// JSON body's "truncated" says it too; CSV and Arrow have no other place).
const TruncatedHeader = "X-Strata-Truncated"

// Handler serves POST /api/data-platform/query: it decodes the request (the
// middleware has authenticated, checked the tenant and the limits and
// validated the body against the contract), runs it on the tenant's store
// and sends the result as JSON, or as CSV or Arrow when Accept asks.
// Errors before the first byte of the body (every error while rows are
// read) get their status; an error after it can only abort the response,
// which the client sees as a truncated body.
func (e *Engine) Handler(logger *slog.Logger) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, err := principal.Required(r.Context())
		if err != nil {
			apierrors.Write(w, r, logger, apierrors.Internal(err))
			return
		}
		// The body's format depends on Accept: caches must key on it.
		w.Header().Add("Vary", "Accept")
		req, err := decodeRequest(r.Body)
		if err != nil {
			apierrors.Write(w, r, logger, err)
			return
		}
		res, err := e.Run(r.Context(), p.TenantID, req)
		if err != nil {
			if errors.Is(err, context.Canceled) && r.Context().Err() != nil {
				return // the client went away; nobody is listening
			}
			apierrors.Write(w, r, logger, err)
			return
		}
		defer res.Close()
		contentType, write := negotiate(r.Header.Get("Accept"), res)
		body := &okResponse{w: w, contentType: contentType, res: res}
		if err := write(body); err != nil {
			if body.started {
				logger.WarnContext(r.Context(), "query result aborted mid-stream", "err", err)
				panic(http.ErrAbortHandler) // the status line is out: break the response so the client notices
			}
			if errors.Is(err, context.Canceled) && r.Context().Err() != nil {
				return
			}
			apierrors.Write(w, r, logger, err)
			return
		}
		body.start() // every format writes something; this is for the record
	})
}

// okResponse sends the 200 status line and headers on the first Write of a
// result's body, when the Result knows whether rows were left out.
type okResponse struct {
	w           http.ResponseWriter
	contentType string
	res         *Result
	started     bool
}

func (o *okResponse) start() {
	if o.started {
		return
	}
	o.started = true
	h := o.w.Header()
	h.Set("Content-Type", o.contentType)
	h.Set(TruncatedHeader, strconv.FormatBool(o.res.Truncated()))
	o.w.WriteHeader(http.StatusOK)
}

// Write implements io.Writer.
func (o *okResponse) Write(p []byte) (int, error) {
	o.start()
	return o.w.Write(p)
}

// queryBody is the QueryRequest of the contract as the handler decodes it:
// the integers as json.Number, because the validator accepts any JSON
// number with an integral value (10.0, 1e3) and encoding/json refuses those
// for an int.
type queryBody struct {
	SQL            string         `json:"sql"`
	Params         map[string]any `json:"params"`
	MaxRows        *json.Number   `json:"maxRows"`
	TimeoutSeconds *json.Number   `json:"timeoutSeconds"`
}

// decodeRequest decodes a QueryRequest (the validation middleware has
// checked it against the contract) into a Request with the defaults of
// spec 2.1. The body must hold one JSON object and nothing after it but
// white space.
func decodeRequest(r io.Reader) (Request, error) {
	var body queryBody
	dec := json.NewDecoder(r)
	dec.UseNumber() // big integers bind exactly
	if err := dec.Decode(&body); err != nil {
		return Request{}, decodeError(err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			return Request{}, err
		}
		return Request{}, apierrors.Validation("invalid JSON body: unexpected data after the JSON object")
	}
	req := Request{SQL: body.SQL, Params: body.Params, MaxRows: defaultMaxRows, Timeout: defaultTimeout}
	if body.MaxRows != nil {
		n, err := wholeNumber("maxRows", *body.MaxRows, maxMaxRows)
		if err != nil {
			return Request{}, err
		}
		req.MaxRows = int(n)
	}
	if body.TimeoutSeconds != nil {
		n, err := wholeNumber("timeoutSeconds", *body.TimeoutSeconds, maxTimeoutSeconds)
		if err != nil {
			return Request{}, err
		}
		req.Timeout = time.Duration(n) * time.Second
	}
	return req, nil
}

// wholeNumber reads an integer field that may be written as 10, 10.0 or
// 1e1, between 0 and limit.
func wholeNumber(field string, n json.Number, limit int64) (int64, error) {
	if i, err := strconv.ParseInt(string(n), 10, 64); err == nil {
		if i < 0 || i > limit {
			return 0, apierrors.Validation("invalid request body: field %q: must be between 0 and %d", field, limit)
		}
		return i, nil
	}
	f, err := strconv.ParseFloat(string(n), 64)
	if err != nil || f != math.Trunc(f) {
		return 0, apierrors.Validation("invalid request body: field %q: must be an integer", field)
	}
	if f < 0 || f > float64(limit) {
		return 0, apierrors.Validation("invalid request body: field %q: must be between 0 and %d", field, limit)
	}
	return int64(f), nil
}

// decodeError maps a JSON decoding error to a 400 validation_error that
// names the field when there is one, without Go's type names.
func decodeError(err error) error {
	var tooBig *http.MaxBytesError
	if errors.As(err, &tooBig) {
		return err
	}
	var typeErr *json.UnmarshalTypeError
	if errors.As(err, &typeErr) && typeErr.Field != "" {
		kind, _, _ := strings.Cut(typeErr.Value, " ") // "number 5": the kind, not the value
		return apierrors.Validation("invalid request body: field %q: wrong type (a JSON %s)", typeErr.Field, kind)
	}
	var syntaxErr *json.SyntaxError
	if errors.As(err, &syntaxErr) {
		return apierrors.Validation("invalid JSON body: syntax error at byte %d", syntaxErr.Offset)
	}
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return apierrors.Validation("invalid JSON body: the body ends early")
	}
	return apierrors.Validation("invalid JSON body: must be a JSON object")
}

// format is a result encoding.
type format int

const (
	formatJSON format = iota
	formatCSV
	formatArrow
)

// offers are the media types a result can take, JSON first: it is the
// answer when the client states no preference among them.
var offers = [...]struct {
	typ, subtype string
	format       format
}{
	{"application", "json", formatJSON},
	{"text", "csv", formatCSV},
	{"application", "vnd.apache.arrow.stream", formatArrow},
}

// negotiate picks the result format from the Accept header (see
// chooseFormat) and returns its Content-Type and writer.
func negotiate(accept string, res *Result) (string, func(io.Writer) error) {
	switch chooseFormat(accept) {
	case formatCSV:
		return CSVContentType, res.WriteCSV
	case formatArrow:
		return ArrowContentType, res.WriteArrow
	}
	return JSONContentType, res.WriteJSON
}

// chooseFormat is proactive negotiation by quality values (RFC 9110
// 12.5.1): each offered type takes the q of the most specific media range
// that matches it (type/subtype over type/* over */*), and the highest q
// above 0 wins (q=0 means "not acceptable"). Among equal q, the type matched
// by the more specific range wins, then the one whose range comes first in
// the header, then JSON. With no Accept header, or one that accepts none of
// the offers (text/html, application/json;q=0 alone ...), the answer is
// JSON as it has always been: RFC 9110 lets a server disregard Accept
// rather than answer 406, and clients that send a browser's default Accept
// keep working. Malformed ranges and q-values are ignored.
func chooseFormat(accept string) format {
	type match struct {
		q           float64
		specificity int // 3 type/subtype, 2 type/*, 1 */*, 0 none
		position    int
	}
	var best [len(offers)]match
	for pos, part := range strings.Split(accept, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		mt, params, err := mime.ParseMediaType(part)
		if err != nil {
			continue
		}
		typ, sub, ok := strings.Cut(mt, "/")
		if !ok || (typ == "*" && sub != "*") {
			continue
		}
		q := 1.0
		if v, ok := params["q"]; ok {
			q, err = strconv.ParseFloat(v, 64)
			if err != nil || q < 0 || q > 1 {
				continue
			}
		}
		for i, o := range offers {
			spec := 0
			switch {
			case typ == o.typ && sub == o.subtype:
				spec = 3
			case typ == o.typ && sub == "*":
				spec = 2
			case typ == "*":
				spec = 1
			default:
				continue
			}
			if spec > best[i].specificity {
				best[i] = match{q: q, specificity: spec, position: pos}
			}
		}
	}
	choice, top := formatJSON, match{}
	for i, m := range best {
		better := m.q > top.q ||
			m.q == top.q && m.specificity > top.specificity ||
			m.q == top.q && m.specificity == top.specificity && m.position < top.position
		if m.q > 0 && (top.q == 0 || better) {
			choice, top = offers[i].format, m
		}
	}
	return choice
}

// Handlers implements the getSchema operation of the strict server.
type Handlers struct{ engine *Engine }

// NewHandlers returns the schema handler over engine.
func NewHandlers(engine *Engine) *Handlers { return &Handlers{engine: engine} }

// GetSchema implements GET /api/data-platform/schema.
func (h *Handlers) GetSchema(ctx context.Context, _ api.GetSchemaRequestObject) (api.GetSchemaResponseObject, error) {
	p, err := principal.Required(ctx)
	if err != nil {
		return nil, err
	}
	tables, err := h.engine.Schema(ctx, p.TenantID)
	if err != nil {
		return nil, err
	}
	out := api.GetSchema200JSONResponse{Tables: make([]api.Table, len(tables))}
	for i, t := range tables {
		cols := make([]api.Column, len(t.Columns))
		for j, c := range t.Columns {
			cols[j] = api.Column{Name: c.Name, Type: c.Type, Nullable: c.Nullable}
		}
		out.Tables[i] = api.Table{Name: t.Name, Columns: cols, RowCount: t.RowCount}
	}
	return out, nil
}

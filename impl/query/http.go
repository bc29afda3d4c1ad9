package query

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"strings"
	"time"

	"github.com/stratahq/strata/gen/api"
	"github.com/stratahq/strata/impl/apierrors"
	"github.com/stratahq/strata/impl/principal"
)

// Defaults of spec 2.1 for fields the request omits.
const (
	defaultMaxRows = 10000
	defaultTimeout = 30 * time.Second
)

// Handler serves POST /api/data-platform/query: it decodes the request (the
// middleware has authenticated, checked the tenant and the limits and
// validated the body against the contract), runs it on the tenant's store
// and streams the result as JSON, or as CSV or Arrow when Accept asks.
// Errors before the first byte get their status; an error after it can only
// abort the response, which the client sees as a truncated body.
func (e *Engine) Handler(logger *slog.Logger) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, err := principal.Required(r.Context())
		if err != nil {
			apierrors.Write(w, r, logger, apierrors.Internal(err))
			return
		}
		var body api.QueryRequest
		dec := json.NewDecoder(r.Body)
		dec.UseNumber() // big integers bind exactly
		if err := dec.Decode(&body); err != nil {
			apierrors.Write(w, r, logger, apierrors.From(decodeError(err)))
			return
		}
		req := Request{SQL: body.SQL, Params: body.Params, MaxRows: defaultMaxRows, Timeout: defaultTimeout}
		if body.MaxRows != nil {
			req.MaxRows = *body.MaxRows
		}
		if body.TimeoutSeconds != nil {
			req.Timeout = time.Duration(*body.TimeoutSeconds) * time.Second
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
		w.Header().Set("Content-Type", contentType)
		w.WriteHeader(http.StatusOK)
		if err := write(w); err != nil {
			logger.WarnContext(r.Context(), "query result aborted mid-stream", "err", err)
			panic(http.ErrAbortHandler) // the status line is out: break the response so the client notices
		}
	})
}

func decodeError(err error) error {
	var tooBig *http.MaxBytesError
	if errors.As(err, &tooBig) {
		return err
	}
	return apierrors.Validation("invalid JSON body: %v", err)
}

// negotiate picks the result format from the Accept header: Arrow or CSV
// when asked for, JSON otherwise.
func negotiate(accept string, res *Result) (string, func(io.Writer) error) {
	for _, part := range strings.Split(accept, ",") {
		mt, _, err := mime.ParseMediaType(strings.TrimSpace(part))
		if err != nil {
			continue
		}
		switch mt {
		case ArrowContentType:
			return ArrowContentType, res.WriteArrow
		case "text/csv":
			return CSVContentType, res.WriteCSV
		case "application/json":
			return JSONContentType, res.WriteJSON
		}
	}
	return JSONContentType, res.WriteJSON
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

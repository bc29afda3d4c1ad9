package query_test

import (
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/stratahq/strata/impl/apierrors"
	"github.com/stratahq/strata/impl/query"
)

// A POST /query handler on top of the engine: errors from Run get their
// status; once the body started, an error can only abort the response.
func ExampleEngine_Run() {
	engine, err := query.New(query.Config{DataDir: "./data"}, slog.Default())
	if err != nil {
		panic(err)
	}
	defer engine.Close()

	handler := func(w http.ResponseWriter, r *http.Request, tenant uuid.UUID, sql string, params map[string]any) {
		res, err := engine.Run(r.Context(), tenant, query.Request{
			SQL: sql, Params: params, MaxRows: 10000, Timeout: 30 * time.Second,
		})
		if err != nil {
			apierrors.Write(w, r, slog.Default(), err) // 400/403/404/408/503
			return
		}
		defer res.Close()
		write := res.WriteJSON
		w.Header().Set("Content-Type", query.JSONContentType)
		switch accept := r.Header.Get("Accept"); {
		case strings.Contains(accept, query.ArrowContentType):
			write = res.WriteArrow
			w.Header().Set("Content-Type", query.ArrowContentType)
		case strings.Contains(accept, "text/csv"):
			write = res.WriteCSV
			w.Header().Set("Content-Type", query.CSVContentType)
		}
		w.WriteHeader(http.StatusOK)
		if err := write(w); err != nil {
			// Timeout or client gone after the 200 went out.
			panic(http.ErrAbortHandler)
		}
	}
	_ = handler
}

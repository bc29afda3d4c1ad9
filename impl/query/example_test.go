package query_test

import (
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/stratahq/strata/impl/apierrors"
	"github.com/stratahq/strata/impl/query"
)

// firstWrite calls start before the first byte of the body goes out.
type firstWrite struct {
	w       http.ResponseWriter
	start   func()
	started bool
}

func (f *firstWrite) Write(p []byte) (int, error) {
	if !f.started {
		f.started = true
		f.start()
	}
	return f.w.Write(p)
}

// A POST /query handler on top of the engine: errors from Run, and errors
// while the rows are read, get their status; once the body started, an
// error can only abort the response. The Write methods hold the body back
// until the last row was read, so the headers can say whether rows were
// left out.
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
		write, contentType := res.WriteJSON, query.JSONContentType
		switch accept := r.Header.Get("Accept"); {
		case strings.Contains(accept, query.ArrowContentType):
			write, contentType = res.WriteArrow, query.ArrowContentType
		case strings.Contains(accept, "text/csv"):
			write, contentType = res.WriteCSV, query.CSVContentType
		}
		body := &firstWrite{w: w, start: func() {
			w.Header().Set("Content-Type", contentType)
			w.Header().Set(query.TruncatedHeader, strconv.FormatBool(res.Truncated()))
			w.WriteHeader(http.StatusOK)
		}}
		if err := write(body); err != nil {
			if !body.started {
				apierrors.Write(w, r, slog.Default(), err) // e.g. 408 while reading rows
				return
			}
			// The client went away, or the deadline passed while it read.
			panic(http.ErrAbortHandler)
		}
	}
	_ = handler
}

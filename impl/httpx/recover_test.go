package httpx_test

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/stratahq/strata/impl/httpx"
	"github.com/stratahq/strata/impl/logging"
)

func TestRecoverAnswers500WithoutInternals(t *testing.T) {
	t.Parallel()
	var logs bytes.Buffer
	logger, err := logging.New(&logs, "info", "json")
	if err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	metrics, err := httpx.NewMetrics(reg)
	if err != nil {
		t.Fatal(err)
	}
	boom := http.HandlerFunc(func(http.ResponseWriter, *http.Request) {
		panic("secret database password is hunter2")
	})
	h := httpx.Chain(boom, httpx.RequestID, httpx.Observe(logger, metrics, nil), httpx.Recover(logger))

	req := httptest.NewRequest(http.MethodGet, "/boom", nil)
	req.Header.Set("X-Request-Id", "panic-1")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)

	body, _ := io.ReadAll(rec.Body)
	if rec.Code != http.StatusInternalServerError {
		t.Fatalf("status %d, want 500", rec.Code)
	}
	var e struct {
		StatusCode int    `json:"statusCode"`
		Error      string `json:"error"`
		Message    string `json:"message"`
	}
	if err := json.Unmarshal(body, &e); err != nil || e.Error != "internal_error" || e.StatusCode != 500 {
		t.Fatalf("body %s (%v), want internal_error", body, err)
	}
	if strings.Contains(string(body), "hunter2") {
		t.Fatal("the panic value leaked to the client")
	}
	if !strings.Contains(logs.String(), "hunter2") || !strings.Contains(logs.String(), `"request_id":"panic-1"`) ||
		!strings.Contains(logs.String(), "goroutine") {
		t.Fatalf("the log lacks the panic, its stack or the request id:\n%s", logs.String())
	}
	if got := counterValue(t, reg); got != 1 {
		t.Fatalf("requests counted: %v, want 1", got)
	}
}

func TestRecoverPassesAbortHandlerOn(t *testing.T) {
	t.Parallel()
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	h := httpx.Chain(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { panic(http.ErrAbortHandler) }), httpx.Recover(logger))
	defer func() {
		if p := recover(); p != http.ErrAbortHandler {
			t.Fatalf("recovered %v, want http.ErrAbortHandler passed on", p)
		}
	}()
	h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/", nil))
}

// counterValue returns the request counter for the 500 of /boom.
func counterValue(t *testing.T, reg *prometheus.Registry) float64 {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != "strata_http_requests_total" {
			continue
		}
		for _, m := range f.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			if labels["status"] == "500" && labels["route"] == "unmatched" && labels["method"] == "GET" {
				return m.GetCounter().GetValue()
			}
		}
	}
	t.Fatal("no strata_http_requests_total sample for the 500")
	return 0
}

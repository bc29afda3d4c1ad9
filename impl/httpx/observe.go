package httpx

import (
	"bufio"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// unmatchedRoute labels requests that matched no route, so that scanners
// cannot blow up the metrics' cardinality with arbitrary paths.
const unmatchedRoute = "unmatched"

// Metrics holds the Prometheus collectors for HTTP traffic.
type Metrics struct {
	requests *prometheus.CounterVec
	duration *prometheus.HistogramVec
}

// NewMetrics creates the HTTP collectors and registers them with reg.
func NewMetrics(reg prometheus.Registerer) (*Metrics, error) {
	m := &Metrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "strata_http_requests_total",
			Help: "HTTP requests by method, route template and status code.",
		}, []string{"method", "route", "status"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "strata_http_request_duration_seconds",
			Help:    "HTTP request latency by method, route template and status code.",
			Buckets: prometheus.DefBuckets,
		}, []string{"method", "route", "status"}),
	}
	for _, c := range []prometheus.Collector{m.requests, m.duration} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// Observe writes one access-log line per request and records its metrics.
// It labels requests by route template, never by raw path. metrics may be nil.
// It also resolves the client's address (ClientIP) through proxies.
func Observe(logger *slog.Logger, metrics *Metrics, proxies TrustedProxies) Middleware {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			start := time.Now()
			state := &requestState{clientIP: proxies.ClientIP(r)}
			rw := &responseRecorder{ResponseWriter: w}
			next.ServeHTTP(rw, r.WithContext(withState(r.Context(), state)))
			elapsed := time.Since(start)
			status := rw.statusOrDefault()
			if metrics != nil {
				labels := prometheus.Labels{"method": r.Method, "route": state.routeLabel(), "status": strconv.Itoa(status)}
				metrics.requests.With(labels).Inc()
				metrics.duration.With(labels).Observe(elapsed.Seconds())
			}
			logger.LogAttrs(r.Context(), slog.LevelInfo, "request",
				slog.String("method", r.Method),
				slog.String("path", r.URL.Path),
				slog.String("route", state.routeLabel()),
				slog.Int("status", status),
				slog.Int64("bytes", rw.bytes),
				slog.Float64("duration_ms", float64(elapsed.Microseconds())/1000),
				slog.String("remote", r.RemoteAddr),
				slog.String("client_ip", state.clientIP),
			)
		})
	}
}

// responseRecorder remembers the status and size of a response. It passes
// Flush and Hijack through (WebSocket upgrades need Hijack) and unwraps for
// http.ResponseController.
type responseRecorder struct {
	http.ResponseWriter
	status int
	bytes  int64
}

func (rw *responseRecorder) WriteHeader(code int) {
	if rw.status == 0 {
		rw.status = code
	}
	rw.ResponseWriter.WriteHeader(code)
}

func (rw *responseRecorder) Write(p []byte) (int, error) {
	if rw.status == 0 {
		rw.status = http.StatusOK
	}
	n, err := rw.ResponseWriter.Write(p)
	rw.bytes += int64(n)
	return n, err
}

func (rw *responseRecorder) statusOrDefault() int {
	if rw.status == 0 {
		return http.StatusOK
	}
	return rw.status
}

// wroteHeader reports whether a status line has been sent.
func (rw *responseRecorder) wroteHeader() bool { return rw.status != 0 }

// Flush implements http.Flusher.
func (rw *responseRecorder) Flush() {
	_ = http.NewResponseController(rw.ResponseWriter).Flush()
}

// Hijack implements http.Hijacker for WebSocket upgrades.
func (rw *responseRecorder) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	conn, buf, err := http.NewResponseController(rw.ResponseWriter).Hijack()
	if err == nil && rw.status == 0 {
		rw.status = http.StatusSwitchingProtocols
	}
	return conn, buf, err
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (rw *responseRecorder) Unwrap() http.ResponseWriter { return rw.ResponseWriter }

func remoteIP(addr string) string {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return addr
	}
	return host
}

package query_test

import (
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stratahq/strata/impl/testenv"
)

// BenchmarkHTTPQuery is POST /query end to end over a real HTTP connection
// (auth, tenant check, quota, validation, guard, execution, JSON streaming,
// the client reading the whole body) on the same 1M-row table as
// BenchmarkDirect, which is the baseline: the same SQL through database/sql
// and encoding/json in-process. SELECT 1 reports p50/p99 of the full stack.
func BenchmarkHTTPQuery(b *testing.B) {
	e := testenv.New(b, nil)
	h, tenant := tenantSession(b, e, "bench@example.com")
	s := e.SignIn("bench@example.com", "correct horse")
	pat := e.Call("POST", "/api/auth/v1/personal-access-tokens", `{"name":"bench"}`, testenv.Bearer(s.AccessToken)...).JSON(b)["token"].(string)
	h = []string{"Authorization", "Bearer " + pat, h[2], h[3]}
	seed(b, e, tenant, `CREATE TABLE bench AS SELECT range::INTEGER AS id, 'customer-' || range AS name,
		range * 1.37 AS amount, TIMESTAMP '2024-01-01' + INTERVAL (range) SECOND AS created_at FROM range(1000000)`)

	post := func(b *testing.B, sql string) (int, time.Duration) {
		e.Clock.Advance(time.Second) // the pro quota (300/min) refills
		req, _ := http.NewRequest("POST", e.Srv.URL+"/api/data-platform/query", strings.NewReader(`{"sql":"`+sql+`","maxRows":100000}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set(h[0], h[1])
		req.Header.Set(h[2], h[3])
		start := time.Now()
		resp, err := e.Srv.Client().Do(req)
		if err != nil {
			b.Fatal(err)
		}
		n, _ := io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			b.Fatalf("status %d", resp.StatusCode)
		}
		return int(n), time.Since(start)
	}
	for _, size := range benchSizes {
		b.Run(size.name, func(b *testing.B) {
			var bytes int
			for b.Loop() {
				bytes, _ = post(b, benchSQL(size.rows))
			}
			b.SetBytes(int64(bytes))
		})
	}
	b.Run("select1", func(b *testing.B) {
		var samples []time.Duration
		for b.Loop() {
			_, d := post(b, "SELECT 1")
			samples = append(samples, d)
		}
		slices.Sort(samples)
		b.ReportMetric(float64(samples[len(samples)/2].Microseconds()), "p50-µs")
		b.ReportMetric(float64(samples[len(samples)*99/100].Microseconds()), "p99-µs")
	})
}

package hostedbackend_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/stratahq/strata/plugins/hostedbackend"
	"github.com/stratahq/strata/plugins/hostedbackend/postgrestfixture"
)

// benchSchema holds the benchmark's 1M-row table. It is kept between runs
// (created once with generate_series, recreated only when missing or
// incomplete) so that repeated benchmark runs measure reading, not loading.
const (
	benchSchema = "strata_bench_hostedbackend"
	benchRows   = 1_000_000
)

func benchTable(b *testing.B, pool *pgxpool.Pool) {
	b.Helper()
	var n int64
	err := pool.QueryRow(context.Background(), "SELECT count(*) FROM "+benchSchema+".events").Scan(&n)
	if err == nil && n == benchRows {
		return
	}
	b.Logf("creating %s.events with %d rows", benchSchema, benchRows)
	postgrestfixture.Exec(b, pool, `DROP SCHEMA IF EXISTS `+benchSchema+` CASCADE;
CREATE SCHEMA `+benchSchema+`;
CREATE TABLE `+benchSchema+`.events AS
SELECT g::bigint AS id, 'event number ' || g AS label, g * 1.25::float8 AS value,
       timestamp '2024-01-01 00:00:00' + g * interval '1 second' AS at
FROM generate_series(1, `+strconv.Itoa(benchRows)+`) g;
ALTER TABLE `+benchSchema+`.events ADD PRIMARY KEY (id);
ANALYZE `+benchSchema+`.events`)
}

// BenchmarkReadTable reads a 1M-row table (bigint, text, double,
// timestamp) from PostgreSQL through the PostgREST fixture with the default
// 1,000-row cap:
//
//   - connector: Source.Read into Arrow record batches (the whole path);
//   - fixture-raw: the same keyset pages fetched over HTTP and discarded, the
//     floor set by PostgreSQL plus the fixture;
//   - decode-only: Source.Read against pages served from memory, the
//     connector's own cost (HTTP + JSON → Arrow) without PostgreSQL.
func BenchmarkReadTable(b *testing.B) {
	pool := postgrestfixture.Connect(b)
	benchTable(b, pool)
	f, srv := postgrestfixture.Start(b, postgrestfixture.Options{Pool: pool, Schema: benchSchema, Key: testKey})
	_ = f
	src, err := hostedbackend.NewSource(hostedbackend.Config{HostedBackendURL: srv.URL, ServiceRoleKey: testKey}, hostedbackend.Options{})
	if err != nil {
		b.Fatal(err)
	}
	tables, err := src.Discover(context.Background())
	if err != nil || len(tables) != 1 {
		b.Fatalf("Discover: %v %v", tables, err)
	}
	table := tables[0]

	b.Run("connector", func(b *testing.B) {
		var rows int64
		start := time.Now()
		for b.Loop() {
			err := src.Read(context.Background(), table, func(rec arrow.RecordBatch) error {
				rows += rec.NumRows()
				return nil
			}, nil)
			if err != nil {
				b.Fatal(err)
			}
		}
		if rows != int64(b.N)*benchRows {
			b.Fatalf("read %d rows, want %d", rows, int64(b.N)*benchRows)
		}
		b.ReportMetric(float64(rows)/time.Since(start).Seconds(), "rows/s")
	})

	b.Run("fixture-raw", func(b *testing.B) {
		var rows int64
		start := time.Now()
		client := &http.Client{}
		for b.Loop() {
			for last := int64(0); ; last += 1000 {
				req, _ := http.NewRequest(http.MethodGet, fmt.Sprintf("%s/rest/v1/events?select=*&order=id.asc&limit=1000&id=gt.%d", srv.URL, last), nil)
				req.Header.Set("apikey", testKey)
				req.Header.Set("Authorization", "Bearer "+testKey)
				resp, err := client.Do(req)
				if err != nil {
					b.Fatal(err)
				}
				n, _ := io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if n <= 2 {
					break
				}
				rows += 1000
			}
		}
		b.ReportMetric(float64(rows)/time.Since(start).Seconds(), "rows/s")
	})

	b.Run("decode-only", func(b *testing.B) {
		// Ten real pages, served round-robin from memory for 1,000 requests,
		// then an empty page.
		var pages [][]byte
		for i := range 10 {
			resp, err := http.Get(fmt.Sprintf("%s/rest/v1/events?select=*&order=id.asc&limit=1000&offset=%d&apikey=%s", srv.URL, i*1000, testKey))
			if err != nil {
				b.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			pages = append(pages, body)
		}
		var served atomic.Int64
		mem := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			n := served.Add(1) - 1
			if n >= benchRows/1000 {
				_, _ = w.Write([]byte("[]"))
				return
			}
			w.Header().Set("Content-Range", fmt.Sprintf("%d-%d/%d", n*1000, n*1000+999, benchRows))
			_, _ = w.Write(pages[n%10])
		}))
		defer mem.Close()
		msrc, err := hostedbackend.NewSource(hostedbackend.Config{HostedBackendURL: mem.URL, ServiceRoleKey: testKey}, hostedbackend.Options{})
		if err != nil {
			b.Fatal(err)
		}
		var rows int64
		start := time.Now()
		for b.Loop() {
			served.Store(0)
			err := msrc.Read(context.Background(), table, func(rec arrow.RecordBatch) error {
				rows += rec.NumRows()
				return nil
			}, nil)
			if err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(rows)/time.Since(start).Seconds(), "rows/s")
	})
}

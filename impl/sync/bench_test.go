package sync_test

import (
	"database/sql"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	_ "github.com/duckdb/duckdb-go/v2"

	"github.com/stratahq/strata/plugins/hostedbackend/postgrestfixture"
)

const benchRows = 1_000_000

const benchKey = "bench-service-role-key"

// BenchmarkSync1M measures a full sync of a 1M-row table (bigint, text,
// double, timestamp) in rows/s, in one run:
//   - hosted_backend: PostgreSQL → PostgREST fixture → plugin → Arrow IPC →
//     ingestion into DuckDB → swap (the whole path);
//   - plugin-to-duckdb: the example plugin generating the rows → Arrow IPC →
//     ingestion (no network, no PostgreSQL);
//   - parquet-floor: DuckDB creating the table from a local Parquet file of
//     the same rows (the floor).
func BenchmarkSync1M(b *testing.B) {
	b.Run("hosted_backend", func(b *testing.B) {
		pool := postgrestfixture.Connect(b)
		schema := postgrestfixture.NewSchema(b, pool)
		postgrestfixture.Exec(b, pool, fmt.Sprintf(`CREATE TABLE %s.facts AS SELECT g::bigint AS id, 'customer-' || g AS name,
			g * 1.37::float8 AS amount, timestamp '2024-01-01' + g * interval '1 second' AS created_at
			FROM generate_series(1, %d) g`, schema, benchRows))
		postgrestfixture.Exec(b, pool, fmt.Sprintf(`ALTER TABLE %s.facts ADD PRIMARY KEY (id)`, schema))
		_, backend := postgrestfixture.Start(b, postgrestfixture.Options{Pool: pool, Schema: schema, Key: benchKey, MaxRows: 10000})
		benchSync(b, fmt.Sprintf(`{"name":"pg","type":"hosted_backend","config":{"hosted_backend_url":%q,"service_role_key":%q}}`, backend.URL, benchKey))
	})
	b.Run("plugin-to-duckdb", func(b *testing.B) {
		benchSync(b, fmt.Sprintf(`{"name":"n","type":"example_numbers","config":{"count":%d,"batch_size":10000}}`, benchRows))
	})
	b.Run("parquet-floor", func(b *testing.B) {
		db, err := sql.Open("duckdb", "")
		if err != nil {
			b.Fatal(err)
		}
		defer db.Close()
		file := filepath.Join(b.TempDir(), "facts.parquet")
		if _, err := db.Exec(fmt.Sprintf(`COPY (SELECT range::BIGINT AS id, 'customer-' || range AS name, range * 1.37 AS amount,
			TIMESTAMP '2024-01-01' + INTERVAL (range) SECOND AS created_at FROM range(%d)) TO '%s' (FORMAT parquet)`, benchRows, file)); err != nil {
			b.Fatal(err)
		}
		var elapsed time.Duration
		for b.Loop() {
			start := time.Now()
			if _, err := db.Exec(`CREATE OR REPLACE TABLE facts AS SELECT * FROM read_parquet('` + file + `')`); err != nil {
				b.Fatal(err)
			}
			elapsed += time.Since(start)
		}
		b.ReportMetric(float64(benchRows*b.N)/elapsed.Seconds(), "rows/s")
	})
}

// benchSync creates the connector and times whole sync jobs.
func benchSync(b *testing.B, connector string) {
	b.Helper()
	e := newEnv(b)
	if r := e.Call("POST", "/api/data-platform/connectors", connector, e.h...); r.Status != 201 {
		b.Fatalf("create connector: %d %s", r.Status, r.Body)
	}
	var elapsed time.Duration
	for b.Loop() {
		start := time.Now()
		j := e.waitJob(b, e.sync(b))
		elapsed += time.Since(start)
		if j.Status != "completed" || j.Connectors[0].Rows != benchRows {
			b.Fatalf("sync: %+v", j)
		}
	}
	b.ReportMetric(float64(benchRows*b.N)/elapsed.Seconds(), "rows/s")
}

package query_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"io"
	"os"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/stratahq/strata/impl/query"
)

// The benchmark data: one tenant with a 1M-row table (int, text, double,
// timestamp), created once per test binary in a temp dir.
var bench struct {
	once   sync.Once
	dir    string
	engine *query.Engine
	tenant uuid.UUID
	err    error
}

func TestMain(m *testing.M) {
	code := m.Run()
	if bench.engine != nil {
		_ = bench.engine.Close()
	}
	if bench.dir != "" {
		_ = os.RemoveAll(bench.dir)
	}
	os.Exit(code)
}

func benchEngine(b *testing.B) (*query.Engine, uuid.UUID) {
	b.Helper()
	bench.once.Do(func() {
		bench.dir, bench.err = os.MkdirTemp("", "query-bench-")
		if bench.err != nil {
			return
		}
		bench.engine, bench.err = query.New(query.Config{DataDir: bench.dir}, nil)
		if bench.err != nil {
			return
		}
		bench.tenant = uuid.New()
		bench.err = bench.engine.WithWriter(context.Background(), bench.tenant, func(ctx context.Context, conn *sql.Conn) error {
			_, err := conn.ExecContext(ctx, `CREATE TABLE bench AS SELECT
				range::INTEGER AS id,
				'customer-' || range AS name,
				range * 1.37 AS amount,
				TIMESTAMP '2024-01-01' + INTERVAL (range) SECOND AS created_at
				FROM range(1000000)`)
			return err
		})
	})
	if bench.err != nil {
		b.Fatal(bench.err)
	}
	return bench.engine, bench.tenant
}

var benchSizes = []struct {
	name string
	rows int
}{{"10k", 10000}, {"100k", 100000}}

func benchSQL(rows int) string {
	return "SELECT id, name, amount, created_at FROM bench WHERE id < " + itoa(rows)
}

// BenchmarkQueryJSON: the engine end to end (guard, read-only transaction,
// fresh connection, execution, JSON streaming) to io.Discard.
func BenchmarkQueryJSON(b *testing.B) {
	e, tenant := benchEngine(b)
	for _, size := range benchSizes {
		b.Run(size.name, func(b *testing.B) {
			req := query.Request{SQL: benchSQL(size.rows), MaxRows: 100000}
			b.ReportAllocs()
			for b.Loop() {
				r, err := e.Run(context.Background(), tenant, req)
				if err != nil {
					b.Fatal(err)
				}
				if err := r.WriteJSON(io.Discard); err != nil {
					b.Fatal(err)
				}
				if r.RowCount() != size.rows {
					b.Fatalf("%d rows", r.RowCount())
				}
				if err := r.Close(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkDirect is the baseline: the same SQL through database/sql on
// the same database (same settings, one reused connection), each row
// scanned into a map and encoded with encoding/json.
func BenchmarkDirect(b *testing.B) {
	e, tenant := benchEngine(b)
	for _, size := range benchSizes {
		b.Run(size.name, func(b *testing.B) {
			q := benchSQL(size.rows)
			b.ReportAllocs()
			err := e.WithWriter(context.Background(), tenant, func(ctx context.Context, conn *sql.Conn) error {
				for b.Loop() {
					if n := directJSON(b, ctx, conn, q); n != size.rows {
						b.Fatalf("%d rows", n)
					}
				}
				return nil
			})
			if err != nil {
				b.Fatal(err)
			}
		})
	}
}

func directJSON(b *testing.B, ctx context.Context, conn *sql.Conn, q string) int {
	rows, err := conn.QueryContext(ctx, q)
	if err != nil {
		b.Fatal(err)
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	enc := json.NewEncoder(io.Discard)
	vals := make([]any, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	n := 0
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			b.Fatal(err)
		}
		row := make(map[string]any, len(cols))
		for i, c := range cols {
			row[c] = vals[i]
		}
		if err := enc.Encode(row); err != nil {
			b.Fatal(err)
		}
		n++
	}
	if err := rows.Err(); err != nil {
		b.Fatal(err)
	}
	return n
}

// BenchmarkQueryCSV and BenchmarkQueryArrow: the other formats, 100k rows.
func BenchmarkQueryCSV(b *testing.B) {
	benchFormat(b, func(r *query.Result) error { return r.WriteCSV(io.Discard) })
}

func BenchmarkQueryArrow(b *testing.B) {
	benchFormat(b, func(r *query.Result) error { return r.WriteArrow(io.Discard) })
}

func benchFormat(b *testing.B, write func(*query.Result) error) {
	e, tenant := benchEngine(b)
	req := query.Request{SQL: benchSQL(100000), MaxRows: 100000}
	b.ReportAllocs()
	for b.Loop() {
		r, err := e.Run(context.Background(), tenant, req)
		if err != nil {
			b.Fatal(err)
		}
		if err := write(r); err != nil {
			b.Fatal(err)
		}
		_ = r.Close()
	}
}

// BenchmarkSelect1 is the latency of `SELECT 1` through the engine (it
// reports the median as p50-µs too).
func BenchmarkSelect1(b *testing.B) {
	e, tenant := benchEngine(b)
	req := query.Request{SQL: "SELECT 1", MaxRows: 10000}
	var lat []time.Duration
	b.ReportAllocs()
	for b.Loop() {
		start := time.Now()
		r, err := e.Run(context.Background(), tenant, req)
		if err != nil {
			b.Fatal(err)
		}
		if err := r.WriteJSON(io.Discard); err != nil {
			b.Fatal(err)
		}
		_ = r.Close()
		lat = append(lat, time.Since(start))
	}
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Nanoseconds())/1e3, "p50-µs")
}

// BenchmarkDirectSelect1 is `SELECT 1` on a reused database/sql connection.
func BenchmarkDirectSelect1(b *testing.B) {
	e, tenant := benchEngine(b)
	err := e.WithWriter(context.Background(), tenant, func(ctx context.Context, conn *sql.Conn) error {
		b.ReportAllocs()
		for b.Loop() {
			directJSON(b, ctx, conn, "SELECT 1")
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
}

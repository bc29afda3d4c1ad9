package postgrestfixture

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/http/httptest"
	"os"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// DSNEnv names the environment variable that overrides DefaultDSN.
const DSNEnv = "STRATA_TEST_POSTGRES_URL"

// DSN returns the test database URL: $STRATA_TEST_POSTGRES_URL or
// DefaultDSN.
func DSN() string {
	if v := os.Getenv(DSNEnv); v != "" {
		return v
	}
	return DefaultDSN
}

// Connect opens a small pool on the test database (session time zone UTC,
// as on hosted backends) and closes it when the test ends. An unreachable
// PostgreSQL fails the test with a clear message: these tests never skip,
// the Makefile's deps step is responsible for starting PostgreSQL.
func Connect(tb testing.TB) *pgxpool.Pool {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	pool, err := Open(ctx, DSN())
	if err != nil {
		tb.Fatalf("%v\n"+
			"These tests need a running PostgreSQL 15 (user postgres, trust auth, database test); "+
			"start it with the Makefile's deps step or set %s.", err, DSNEnv)
	}
	tb.Cleanup(pool.Close)
	return pool
}

// NewSchema creates a schema with a random name for one test (so tests can
// run in parallel) and drops it, with everything in it, when the test ends.
func NewSchema(tb testing.TB, pool *pgxpool.Pool) string {
	tb.Helper()
	var b [6]byte
	_, _ = rand.Read(b[:])
	name := "pgrst_" + hex.EncodeToString(b[:])
	Exec(tb, pool, "CREATE SCHEMA "+pgx.Identifier{name}.Sanitize())
	tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if _, err := pool.Exec(ctx, "DROP SCHEMA IF EXISTS "+pgx.Identifier{name}.Sanitize()+" CASCADE"); err != nil {
			tb.Errorf("postgrestfixture: dropping schema %s: %v", name, err)
		}
	})
	return name
}

// Exec runs SQL statements (with search_path set to nothing special) and
// fails the test on error.
func Exec(tb testing.TB, pool *pgxpool.Pool, sql string, args ...any) {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if _, err := pool.Exec(ctx, sql, args...); err != nil {
		tb.Fatalf("postgrestfixture: %v\nSQL: %s", err, sql)
	}
}

// Start serves a fixture for opts on an httptest server, closed when the
// test ends. The server's URL plays the hosted backend's project URL: the
// data API is under URL + "/rest/v1/".
func Start(tb testing.TB, opts Options) (*Fixture, *httptest.Server) {
	tb.Helper()
	f, err := New(opts)
	if err != nil {
		tb.Fatalf("%v", err)
	}
	srv := httptest.NewServer(f)
	tb.Cleanup(srv.Close)
	return f, srv
}

package postgrestfixture

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Open opens a small pool on the PostgreSQL at dsn with the session settings
// hosted backends use (time zone UTC) and checks that it answers.
func Open(ctx context.Context, dsn string) (*pgxpool.Pool, error) {
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("postgrestfixture: bad PostgreSQL URL %q: %w", dsn, err)
	}
	cfg.MaxConns = 4
	cfg.ConnConfig.ConnectTimeout = 5 * time.Second
	cfg.ConnConfig.RuntimeParams["timezone"] = "UTC"
	cfg.ConnConfig.RuntimeParams["application_name"] = "postgrestfixture"
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("postgrestfixture: PostgreSQL at %s: %w", dsn, err)
	}
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("postgrestfixture: PostgreSQL is not reachable at %s: %w", dsn, err)
	}
	return pool, nil
}

// Seed creates, in schema (which must exist), two tables of known rows:
// customers (25 rows) and orders (2,500 rows, more than DefaultMaxRows, so
// that readers must page), in a mix of column types. The postgrest-fixture
// command serves it; Strata's conformance suite syncs it.
func Seed(ctx context.Context, pool *pgxpool.Pool, schema string) error {
	s := pgx.Identifier{schema}.Sanitize()
	sql := strings.ReplaceAll(`CREATE TABLE S.customers (
	id integer PRIMARY KEY, name text NOT NULL, email varchar(100), tier text, signed_up date,
	active boolean, balance numeric(10,2), profile jsonb, external_id uuid);
INSERT INTO S.customers
	SELECT g, 'Customer ' || g, 'customer' || g || '@example.com', CASE WHEN g % 5 = 0 THEN 'pro' ELSE 'free' END,
	       date '2024-01-01' + g, g % 3 <> 0, g * 10.25, jsonb_build_object('n', g), md5(g::text)::uuid
	FROM generate_series(1, 25) g;
CREATE TABLE S.orders (
	id bigint PRIMARY KEY, customer_id integer NOT NULL REFERENCES S.customers (id),
	amount double precision, placed_at timestamptz, tags text[]);
INSERT INTO S.orders
	SELECT g, 1 + g % 25, g * 1.5, timestamptz '2024-01-01 00:00:00+00' + g * interval '1 hour', ARRAY['t' || g % 4]
	FROM generate_series(1, 2500) g;`, "S.", s+".")
	// One simple-protocol Exec runs the statements in one implicit transaction.
	if _, err := pool.Exec(ctx, sql, pgx.QueryExecModeSimpleProtocol); err != nil {
		return fmt.Errorf("postgrestfixture: seed schema %s: %w", schema, err)
	}
	return nil
}

// CreateSchema creates an empty schema.
func CreateSchema(ctx context.Context, pool *pgxpool.Pool, schema string) error {
	if _, err := pool.Exec(ctx, "CREATE SCHEMA "+pgx.Identifier{schema}.Sanitize()); err != nil {
		return fmt.Errorf("postgrestfixture: create schema %s: %w", schema, err)
	}
	return nil
}

// DropSchema drops schema and everything in it; a missing schema is fine.
func DropSchema(ctx context.Context, pool *pgxpool.Pool, schema string) error {
	if _, err := pool.Exec(ctx, "DROP SCHEMA IF EXISTS "+pgx.Identifier{schema}.Sanitize()+" CASCADE"); err != nil {
		return fmt.Errorf("postgrestfixture: drop schema %s: %w", schema, err)
	}
	return nil
}

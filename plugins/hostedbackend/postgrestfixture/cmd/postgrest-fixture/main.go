// Command postgrest-fixture serves package postgrestfixture's HTTP server on
// its own: a test double faithful to the PostgREST protocol (the subset the
// package documents, answering as PostgREST 12 behind a hosted backend's
// gateway), backed by a real PostgreSQL. It is not PostgREST and not part of
// Strata's product; scripts/conformance.sh runs it so that the conformance
// suite's sync check pulls a hosted backend.
//
// It creates a schema in the database at --dsn, seeds it with
// postgrestfixture.Seed (customers: 25 rows, orders: 2,500 rows), serves it
// under /rest/v1/ on --addr and prints, one per line,
//
//	url=http://127.0.0.1:PORT
//	key=<the service-role key to send>
//	schema=<the schema's name>
//
// then serves until SIGINT or SIGTERM, and drops the schema before it exits.
// With --drop it only drops --schema and exits: the clean-up after a
// fixture that was killed.
package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/stratahq/strata/plugins/hostedbackend/postgrestfixture"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "postgrest-fixture:", err)
		os.Exit(1)
	}
}

func run() error {
	dsn := flag.String("dsn", postgrestfixture.DSN(), "PostgreSQL URL (default $"+postgrestfixture.DSNEnv+" or the local test database)")
	addr := flag.String("addr", "127.0.0.1:0", "listen address")
	schema := flag.String("schema", "", "schema to create and serve (default: a random pgrst_fixture_… name)")
	key := flag.String("key", "", "service-role key clients must send (default: random)")
	drop := flag.Bool("drop", false, "only drop --schema and exit")
	flag.Parse()
	if flag.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", flag.Args())
	}
	if *drop && *schema == "" {
		return errors.New("--drop needs --schema")
	}
	if *schema == "" {
		*schema = "pgrst_fixture_" + randomHex(6)
	}
	if *key == "" {
		*key = "fixture-service-role-" + randomHex(16)
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	openCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	pool, err := postgrestfixture.Open(openCtx, *dsn)
	if err != nil {
		return err
	}
	defer pool.Close()
	// Once created, the schema goes however the fixture ends, a signal
	// included: hence a context that outlives ctx.
	dropSchema := func() error {
		dropCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		defer cancel()
		return postgrestfixture.DropSchema(dropCtx, pool, *schema)
	}
	if *drop {
		return dropSchema()
	}
	if err := postgrestfixture.CreateSchema(openCtx, pool, *schema); err != nil {
		return err // perhaps someone else's: not ours to drop
	}
	if err := postgrestfixture.Seed(openCtx, pool, *schema); err != nil {
		return errors.Join(err, dropSchema())
	}
	err = serve(ctx, pool, *addr, *schema, *key)
	return errors.Join(err, dropSchema())
}

// serve serves the fixture until ctx ends.
func serve(ctx context.Context, pool *pgxpool.Pool, addr, schema, key string) error {
	fixture, err := postgrestfixture.New(postgrestfixture.Options{Pool: pool, Schema: schema, Key: key})
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: fixture, ReadHeaderTimeout: 10 * time.Second}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	fmt.Printf("url=http://%s\nkey=%s\nschema=%s\n", ln.Addr(), key, schema)
	select {
	case err := <-served:
		return err
	case <-ctx.Done():
	}
	shutdownCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	return srv.Shutdown(shutdownCtx)
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

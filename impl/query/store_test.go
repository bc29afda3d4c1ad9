package query_test

import (
	"context"
	"database/sql"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/stratahq/strata/impl/apierrors"
	"github.com/stratahq/strata/impl/query"
	"github.com/stratahq/strata/impl/testenv"
)

func TestUnusableStoreIs503(t *testing.T) {
	t.Parallel()
	e, cfg := newEngine(t)
	tenant := uuid.New()
	// A directory where the database file should be.
	if err := os.MkdirAll(filepath.Join(cfg.DataDir, "tenants", tenant.String(), "warehouse.duckdb"), 0o750); err != nil {
		t.Fatal(err)
	}
	_, err := runJSON(t, e, tenant, query.Request{SQL: "SELECT 1"})
	if status, code := apiErr(t, err); status != http.StatusServiceUnavailable || code != apierrors.CodeServiceUnavailable {
		t.Fatalf("got %d %s", status, code)
	}
	var ae *apierrors.Error
	apiErrAs(err, &ae)
	if strings.Contains(ae.Message, cfg.DataDir) {
		t.Errorf("message leaks the data dir: %s", ae.Message)
	}
	if _, err := e.Schema(context.Background(), tenant); err == nil {
		t.Error("Schema on an unusable store succeeded")
	}
	if st := e.Stats(); st.Open != 0 {
		t.Errorf("a failed store stays open: %+v", st)
	}
	// Another tenant is not affected.
	if got := scalar(t, mustQuery(t, e, uuid.New(), "SELECT 1 AS x")); got != "1" {
		t.Error(got)
	}
	// Fixing the path lets the tenant in on the next request.
	if err := os.Remove(filepath.Join(cfg.DataDir, "tenants", tenant.String(), "warehouse.duckdb")); err != nil {
		t.Fatal(err)
	}
	if got := scalar(t, mustQuery(t, e, tenant, "SELECT 1 AS x")); got != "1" {
		t.Error(got)
	}
}

func TestLRUClosesLeastRecentlyUsed(t *testing.T) {
	t.Parallel()
	clock := testenv.NewClock()
	e, _ := newEngine(t, func(c *query.Config) { c.MaxOpen = 2; c.IdleTimeout = time.Hour; c.Now = clock.Now })
	a, b, c := uuid.New(), uuid.New(), uuid.New()
	exec(t, e, a, "CREATE TABLE t AS SELECT 'a' AS who")
	clock.Advance(time.Second)
	exec(t, e, b, "CREATE TABLE t AS SELECT 'b' AS who")
	clock.Advance(time.Second)
	mustQuery(t, e, a, "SELECT 1") // a is now more recent than b
	clock.Advance(time.Second)
	exec(t, e, c, "CREATE TABLE t AS SELECT 'c' AS who")
	st := e.Stats()
	if st.Open != 2 || slices.Contains(st.Tenants, b) || !slices.Contains(st.Tenants, a) || !slices.Contains(st.Tenants, c) {
		t.Fatalf("after opening c: %+v (want a and c open, b closed)", st)
	}
	// b reopens with its data.
	if got := scalar(t, mustQuery(t, e, b, "SELECT who FROM t")); got != `"b"` {
		t.Errorf("b after reopen: %s", got)
	}
	if st := e.Stats(); st.Open != 2 || st.Evicted < 2 {
		t.Errorf("after reopening b: %+v", st)
	}
}

func TestBusyStoreIsNeverClosed(t *testing.T) {
	t.Parallel()
	e, _ := newEngine(t, func(c *query.Config) { c.MaxOpen = 1 })
	a, b := uuid.New(), uuid.New()
	r, err := e.Run(context.Background(), a, query.Request{SQL: "SELECT range FROM range(10)", MaxRows: 10})
	if err != nil {
		t.Fatal(err)
	}
	// b opens although the bound is reached: a is busy, nothing waits.
	mustQuery(t, e, b, "SELECT 1")
	if st := e.Stats(); !slices.Contains(st.Tenants, a) {
		t.Fatalf("busy store closed: %+v", st)
	}
	var sb strings.Builder
	if err := r.WriteCSV(&sb); err != nil {
		t.Fatal(err)
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if st := e.Stats(); st.Open != 1 {
		t.Errorf("after release: %+v", st)
	}
}

func TestIdleStoresClose(t *testing.T) {
	t.Parallel()
	clock := testenv.NewClock()
	e, _ := newEngine(t, func(c *query.Config) { c.IdleTimeout = 10 * time.Minute; c.Now = clock.Now })
	a, b := uuid.New(), uuid.New()
	exec(t, e, a, "CREATE TABLE t AS SELECT 1 AS x")
	clock.Advance(11 * time.Minute)
	mustQuery(t, e, b, "SELECT 1") // any use sweeps idle stores
	if st := e.Stats(); st.Open != 1 || st.Tenants[0] != b {
		t.Fatalf("idle store not closed: %+v", st)
	}
	if got := scalar(t, mustQuery(t, e, a, "SELECT x FROM t")); got != "1" {
		t.Errorf("after reopen: %s", got)
	}
}

func TestCloseEngine(t *testing.T) {
	t.Parallel()
	e, err := query.New(query.Config{DataDir: t.TempDir()}, nil)
	if err != nil {
		t.Fatal(err)
	}
	tenant := uuid.New()
	r, err := e.Run(context.Background(), tenant, query.Request{SQL: "SELECT 1 AS x", MaxRows: 1})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	// The open result still works and closes its store.
	var sb strings.Builder
	if err := r.WriteJSON(&sb); err != nil {
		t.Fatal(err)
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	_, err = e.Run(context.Background(), tenant, query.Request{SQL: "SELECT 1"})
	if status, _ := apiErr(t, err); status != http.StatusServiceUnavailable {
		t.Errorf("Run after Close: %v", err)
	}
	if _, err := query.New(query.Config{}, nil); err == nil {
		t.Error("New without DataDir")
	}
}

func TestWriter(t *testing.T) {
	t.Parallel()
	e, _ := newEngine(t)
	tenant := uuid.New()
	dir := t.TempDir()
	err := e.WithWriter(context.Background(), tenant, func(ctx context.Context, conn *sql.Conn) error {
		// The writer creates and replaces tables ...
		for _, q := range []string{
			"CREATE TABLE w AS SELECT range AS i FROM range(5)",
			"CREATE OR REPLACE TABLE w AS SELECT range AS i FROM range(7)",
			"CREATE TEMP TABLE staging AS SELECT 1 AS x",
		} {
			if _, err := conn.ExecContext(ctx, q); err != nil {
				return err
			}
		}
		// ... but shares the sandbox: no files, no settings.
		for _, q := range []string{
			"COPY w TO '" + dir + "/w.csv'",
			"SELECT * FROM read_csv('/etc/passwd')",
			"SET threads = 16",
			"ATTACH '" + dir + "/x.duckdb' AS x",
		} {
			if _, err := conn.ExecContext(ctx, q); err == nil {
				t.Errorf("writer ran %q", q)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files := listFiles(t, dir); len(files) != 0 {
		t.Errorf("files created: %v", files)
	}
	if got := scalar(t, mustQuery(t, e, tenant, "SELECT count(*) AS n FROM w")); got != "7" {
		t.Errorf("count %s", got)
	}
	// The writer's temp table died with its connection.
	if _, err := runJSON(t, e, tenant, query.Request{SQL: "SELECT * FROM staging"}); err == nil {
		t.Error("a query saw the writer's temp table")
	}
	// Settings are those of the config.
	if got := scalar(t, mustQuery(t, e, tenant, "SELECT current_setting('threads') AS n")); got != "2" {
		t.Errorf("threads %s", got)
	}
}

// TestSnapshotDetectsChanges proves that the guard tests' snapshot sees a
// change of data, catalog or settings.
func TestSnapshotDetectsChanges(t *testing.T) {
	t.Parallel()
	e, _ := newEngine(t)
	tenant := uuid.New()
	exec(t, e, tenant, canarySetup...)
	base := snapshot(t, e, tenant)
	for _, change := range [][]string{
		{"INSERT INTO t VALUES (4, 'four')"},
		{"UPDATE t SET b = 'uno' WHERE a = 1"},
		{"CREATE MACRO m(x) AS x"},
		{"SELECT nextval('s')"},
		{"SELECT * FROM enable_logging()"},
		{"CREATE TABLE extra (x INT)"},
	} {
		exec(t, e, tenant, change...)
		now := snapshot(t, e, tenant)
		if now == base {
			t.Errorf("%v not seen by snapshot", change)
		}
		base = now
	}
}

// TestJanitorClosesIdleStores: with the real clock, idle stores close
// without any further request.
func TestJanitorClosesIdleStores(t *testing.T) {
	t.Parallel()
	e, _ := newEngine(t, func(c *query.Config) { c.IdleTimeout = 50 * time.Millisecond })
	mustQuery(t, e, uuid.New(), "SELECT 1")
	if !waitFor(t, 10*time.Second, func() bool { return e.Stats().Open == 0 }) {
		t.Fatalf("idle store still open: %+v", e.Stats())
	}
}

package query_test

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/google/uuid"

	"github.com/stratahq/strata/impl/principal"
	"github.com/stratahq/strata/impl/testenv"
)

// tenantSession signs in a user of a fresh pro tenant and returns the
// headers data-platform calls need.
func tenantSession(t testing.TB, e *testenv.Env, email string) (headers []string, tenant uuid.UUID) {
	t.Helper()
	_, tn := e.User(email, "correct horse", principal.TierPro)
	s := e.SignIn(email, "correct horse")
	return append(testenv.Bearer(s.AccessToken), "X-Tenant-Id", tn.ID.String()), tn.ID
}

// seed creates a table in the tenant's store through the writer path.
func seed(t testing.TB, e *testenv.Env, tenant uuid.UUID, ddl string) {
	t.Helper()
	err := e.App.Query().WithWriter(context.Background(), tenant, func(ctx context.Context, conn *sql.Conn) error {
		_, err := conn.ExecContext(ctx, ddl)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

type httpResult struct {
	Columns []struct {
		Name     string `json:"name"`
		Type     string `json:"type"`
		Nullable bool   `json:"nullable"`
	} `json:"columns"`
	Rows            []map[string]any `json:"rows"`
	RowCount        int              `json:"rowCount"`
	Truncated       bool             `json:"truncated"`
	ExecutionTimeMs *float64         `json:"executionTimeMs"`
}

func TestQueryOverHTTP(t *testing.T) {
	t.Parallel()
	e := testenv.New(t, nil)
	h, tenant := tenantSession(t, e, "q@example.com")
	seed(t, e, tenant, `CREATE TABLE people AS SELECT i AS id, 'person ' || i AS name, i * 1.5 AS score FROM range(1, 26) t(i)`)

	r := e.Call("POST", "/api/data-platform/query", `{"sql":"SELECT id, name FROM people WHERE id <= ? ORDER BY id","params":{"1":3}}`, h...)
	var res httpResult
	r.Decode(t, &res)
	if r.Status != 200 || res.RowCount != 3 || len(res.Rows) != 3 || res.Truncated || res.ExecutionTimeMs == nil ||
		res.Columns[0].Type != "BIGINT" || res.Columns[1].Type != "VARCHAR" || res.Rows[2]["name"] != "person 3" {
		t.Fatalf("query: %d %s", r.Status, r.Body)
	}
	r = e.Call("POST", "/api/data-platform/query", `{"sql":"SELECT * FROM people","maxRows":10}`, h...)
	res = httpResult{}
	r.Decode(t, &res)
	if res.RowCount != 10 || len(res.Rows) != 10 || !res.Truncated {
		t.Fatalf("maxRows: rowCount %d, truncated %v", res.RowCount, res.Truncated)
	}

	// CSV and Arrow.
	r = e.Call("POST", "/api/data-platform/query", `{"sql":"SELECT id, name FROM people ORDER BY id LIMIT 2"}`, append(h, "Accept", "text/csv")...)
	if r.Status != 200 || !strings.HasPrefix(r.Header.Get("Content-Type"), "text/csv") || string(r.Body) != "id,name\n1,person 1\n2,person 2\n" {
		t.Fatalf("csv: %d %q %q", r.Status, r.Header.Get("Content-Type"), r.Body)
	}
	r = e.Call("POST", "/api/data-platform/query", `{"sql":"SELECT id FROM people"}`, append(h, "Accept", "application/vnd.apache.arrow.stream")...)
	rdr, err := ipc.NewReader(bytes.NewReader(r.Body))
	if err != nil {
		t.Fatalf("arrow: %v (%d %s)", err, r.Status, r.Header.Get("Content-Type"))
	}
	rows := 0
	for rdr.Next() {
		rows += int(rdr.RecordBatch().NumRows())
	}
	rdr.Release()
	if rows != 25 {
		t.Fatalf("arrow rows %d, want 25", rows)
	}

	// Errors, each in the shared shape.
	for sql, want := range map[string]struct {
		status int
		code   string
	}{
		"INSERT INTO people VALUES (99, 'x', 1)": {403, "permission_denied"},
		"DROP TABLE people":                      {403, "permission_denied"},
		"SELECT 1; DROP TABLE people":            {403, "permission_denied"},
		"SELECT * FROM read_csv('/etc/passwd')":  {403, "permission_denied"},
		"SELECT * FROM nowhere":                  {404, "table_not_found"},
		"SELEKT 1":                               {400, "query_execution_error"},
		"SELECT * FROM people WHERE id = ?":      {400, "query_execution_error"},
	} {
		body, _ := json.Marshal(map[string]any{"sql": sql})
		testenv.ExpectError(t, e.Call("POST", "/api/data-platform/query", string(body), h...), want.status, want.code)
	}
	r = e.Call("POST", "/api/data-platform/query", `{"sql":"SELECT count(*) FROM range(100000000) a, range(100000000) b","timeoutSeconds":1}`, h...)
	testenv.ExpectError(t, r, 408, "query_timeout")
	testenv.ExpectError(t, e.Call("POST", "/api/data-platform/query", `{"sql":"SELECT 1","timeoutSeconds":61}`, h...), 400, "validation_error")
	// The table is intact after all of that.
	res = httpResult{}
	e.Call("POST", "/api/data-platform/query", `{"sql":"SELECT count(*) AS n FROM people"}`, h...).Decode(t, &res)
	if res.Rows[0]["n"] != float64(25) {
		t.Fatalf("people after the attacks: %v", res.Rows)
	}
}

func TestSchemaAndTenantIsolation(t *testing.T) {
	t.Parallel()
	e := testenv.New(t, nil)
	ha, a := tenantSession(t, e, "a@example.com")
	hb, _ := tenantSession(t, e, "b@example.com")
	seed(t, e, a, `CREATE TABLE secrets (id INTEGER NOT NULL, note TEXT, amount DECIMAL(10,2), created TIMESTAMPTZ)`)
	seed(t, e, a, `INSERT INTO secrets VALUES (1, 'a', 1.50, now()), (2, 'b', 2.25, now())`)

	var schema struct {
		Tables []struct {
			Name     string
			RowCount int
			Columns  []struct {
				Name, Type string
				Nullable   bool
			}
		}
	}
	r := e.Call("GET", "/api/data-platform/schema", "", ha...)
	r.Decode(t, &schema)
	if r.Status != 200 || len(schema.Tables) != 1 || schema.Tables[0].Name != "secrets" || schema.Tables[0].RowCount != 2 {
		t.Fatalf("schema: %d %s", r.Status, r.Body)
	}
	types := map[string]string{}
	for _, c := range schema.Tables[0].Columns {
		types[c.Name] = c.Type
		if c.Name == "id" && c.Nullable {
			t.Error("id is NOT NULL but reported nullable")
		}
	}
	if types["id"] != "int4" || types["note"] != "text" || types["amount"] != "numeric" || types["created"] != "timestamptz" {
		t.Fatalf("storage type names: %v", types)
	}
	// Tenant B sees none of it, by any route.
	schema.Tables = nil
	e.Call("GET", "/api/data-platform/schema", "", hb...).Decode(t, &schema)
	if len(schema.Tables) != 0 {
		t.Fatalf("tenant b's schema lists %v", schema.Tables)
	}
	testenv.ExpectError(t, e.Call("POST", "/api/data-platform/query", `{"sql":"SELECT * FROM secrets"}`, hb...), 404, "table_not_found")
	for _, sql := range []string{
		"ATTACH '" + e.App.Config().DataDir + "/tenants/" + a.String() + "/warehouse.duckdb' AS other",
		"SELECT * FROM read_blob('" + e.App.Config().DataDir + "/tenants/" + a.String() + "/warehouse.duckdb')",
	} {
		body, _ := json.Marshal(map[string]any{"sql": sql})
		r := e.Call("POST", "/api/data-platform/query", string(body), hb...)
		if r.Status != 403 {
			t.Fatalf("%s: %d %s", sql, r.Status, r.Body)
		}
	}
	// A's token with B's tenant id is refused before any SQL runs.
	mixed := append(append([]string{}, ha[:2]...), "X-Tenant-Id", hb[3])
	testenv.ExpectError(t, e.Call("POST", "/api/data-platform/query", `{"sql":"SELECT 1"}`, mixed...), 403, "forbidden")
}

func TestSixthConcurrentQueryIsRefused(t *testing.T) {
	t.Parallel()
	e := testenv.New(t, nil)
	h, _ := tenantSession(t, e, "busy@example.com")
	// Six queries that each run until their 3 s timeout start together, so
	// all six overlap: exactly one finds the tenant's five slots taken.
	slow := `{"sql":"SELECT count(*) FROM range(100000000) a, range(100000000) b","timeoutSeconds":3}`
	statuses := make(chan testenv.Response, 6)
	for range 6 {
		go func() { statuses <- e.Call("POST", "/api/data-platform/query", slow, h...) }()
	}
	counts := map[int]int{}
	for range 6 {
		r := <-statuses
		counts[r.Status]++
		if r.Status == http.StatusTooManyRequests {
			testenv.ExpectError(t, r, 429, "RATE_LIMITED")
			if r.Header.Get("Retry-After") == "" {
				t.Error("429 without Retry-After")
			}
		}
	}
	if counts[http.StatusTooManyRequests] != 1 || counts[http.StatusRequestTimeout] != 5 {
		t.Fatalf("statuses %v, want five 408 and one 429", counts)
	}
	if r := e.Call("GET", "/api/data-platform/schema", "", h...); r.Status != 200 {
		t.Fatalf("after the slow queries: %d", r.Status)
	}
}

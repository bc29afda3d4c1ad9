package sync_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stratahq/strata/plugins/hostedbackend/postgrestfixture"
)

// TestHostedBackendSync syncs tables of a real PostgreSQL through the
// PostgREST-protocol fixture and the hosted_backend plugin, and checks that
// DuckDB holds exactly what PostgreSQL holds.
func TestHostedBackendSync(t *testing.T) {
	t.Parallel()
	pool := postgrestfixture.Connect(t)
	schema := postgrestfixture.NewSchema(t, pool)
	q := func(sql string) { postgrestfixture.Exec(t, pool, strings.ReplaceAll(sql, "S.", schema+".")) }
	q(`CREATE TABLE S.everything (
		id integer PRIMARY KEY, small smallint, big bigint, amount numeric(10,2), ratio real, score double precision,
		flag boolean, title text, code varchar(8), letter char(1), uid uuid, doc json, docb jsonb, day date,
		at_time time, at timestamp, at_tz timestamptz, raw bytea, nums integer[], words text[], span interval)`)
	q(`INSERT INTO S.everything VALUES
		(1, 7, 9007199254740993, 12.34, 1.5, 2.25, true, 'Grüße 🌍', 'ab', 'x', 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11',
		 '{"k":[1,2]}', '{"z":true}', '2024-02-29', '12:34:56', '2024-05-01 12:30:00', '2024-05-01 12:30:00+02', '\xdeadbeef',
		 '{1,2,3}', '{"a","b c"}', '1 day 2 hours'),
		(2, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL)`)
	q(`CREATE TABLE S.events (id bigint PRIMARY KEY, kind text NOT NULL, value double precision, price numeric NOT NULL)`)
	q(`INSERT INTO S.events SELECT g, 'kind-' || (g % 7), g * 0.5, g * 0.25 FROM generate_series(1, 30000) g`)
	q(`CREATE TABLE S.nokey (a text, b integer)`)
	q(`INSERT INTO S.nokey SELECT 'row ' || g, g FROM generate_series(1, 2500) g`)

	const key = "service-role-key-that-must-stay-secret"
	_, backend := postgrestfixture.Start(t, postgrestfixture.Options{Pool: pool, Schema: schema, Key: key})
	e := newEnv(t)

	body, _ := json.Marshal(map[string]any{"name": "prod", "type": "hosted_backend",
		"config": map[string]any{"hosted_backend_url": backend.URL, "service_role_key": key}})
	r := e.Call("POST", "/api/data-platform/connectors", string(body), e.h...)
	if r.Status != 201 {
		t.Fatalf("create: %d %s", r.Status, r.Body)
	}
	created := r.JSON(t)
	cfg := created["config"].(map[string]any)
	if cfg["service_role_key"] != "********" || cfg["sync_interval_seconds"] != float64(300) || strings.Contains(string(r.Body), key) {
		t.Fatalf("created config: %s", r.Body)
	}
	id := created["id"].(string)

	j := e.waitJob(t, e.sync(t))
	if j.Status != "completed" {
		t.Fatalf("sync: %+v (%v)", j, *j.Error)
	}
	// Row counts and checksums equal PostgreSQL's.
	for table, sums := range map[string]string{
		"events": "SELECT count(*) AS n, sum(id) AS s, sum(value) AS v, count(DISTINCT kind) AS k FROM events",
		"nokey":  "SELECT count(*) AS n, sum(b) AS s, sum(length(a)) AS v, count(DISTINCT a) AS k FROM nokey",
	} {
		var pg [4]float64
		pgSQL := strings.ReplaceAll(strings.ReplaceAll(sums, "FROM "+table, "FROM "+schema+"."+table), "count(*)", "count(*)::float8")
		pgSQL = strings.NewReplacer("sum(id)", "sum(id)::float8", "sum(b)", "sum(b)::float8", "sum(length(a))", "sum(length(a))::float8",
			"count(DISTINCT kind)", "count(DISTINCT kind)::float8", "count(DISTINCT a)", "count(DISTINCT a)::float8", "sum(value)", "sum(value)::float8").Replace(pgSQL)
		if err := pool.QueryRow(t.Context(), pgSQL).Scan(&pg[0], &pg[1], &pg[2], &pg[3]); err != nil {
			t.Fatal(err)
		}
		got := e.query(t, sums)[0]
		if got["n"] != pg[0] || got["s"] != pg[1] || got["v"] != pg[2] || got["k"] != pg[3] {
			t.Fatalf("%s: DuckDB %v, PostgreSQL %v", table, got, pg)
		}
	}
	row := e.query(t, "SELECT * FROM everything WHERE id = 1")[0]
	want := map[string]any{"small": float64(7), "big": "9007199254740993", "amount": "12.34", "ratio": 1.5, "score": 2.25, "flag": true,
		"title": "Grüße 🌍", "code": "ab", "letter": "x", "uid": "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11", "day": "2024-02-29",
		"at_time": "12:34:56", "at": "2024-05-01T12:30:00Z", "at_tz": "2024-05-01T10:30:00Z", "raw": "3q2+7w==",
		"span": "P1DT2H"}
	for k, v := range want {
		if fmt.Sprint(row[k]) != fmt.Sprint(v) {
			t.Errorf("everything.%s = %#v, want %#v", k, row[k], v)
		}
	}
	if fmt.Sprint(row["nums"]) != "[1 2 3]" || fmt.Sprint(row["words"]) != "[a b c]" || fmt.Sprint(row["docb"]) != "map[z:true]" {
		t.Errorf("arrays/json: nums %v words %v docb %v", row["nums"], row["words"], row["docb"])
	}
	if nulls := e.query(t, "SELECT count(*) AS n FROM everything WHERE id = 2 AND small IS NULL AND title IS NULL AND nums IS NULL AND at_tz IS NULL"); nulls[0]["n"] != float64(1) {
		t.Errorf("NULL row: %v", nulls)
	}
	var schemaResp struct {
		Tables []struct {
			Name    string
			Columns []struct {
				Name, Type string
				Nullable   bool
			}
		}
	}
	e.Call("GET", "/api/data-platform/schema", "", e.h...).Decode(t, &schemaResp)
	types := map[string]string{}
	nullable := map[string]bool{}
	for _, tb := range schemaResp.Tables {
		for _, c := range tb.Columns {
			types[tb.Name+"."+c.Name] = c.Type
			nullable[tb.Name+"."+c.Name] = c.Nullable
		}
	}
	for col, typ := range map[string]string{"id": "int4", "small": "int2", "big": "int8", "amount": "numeric", "flag": "bool",
		"title": "text", "uid": "uuid", "docb": "jsonb", "day": "date", "at_tz": "timestamptz", "raw": "bytea", "nums": "_int4"} {
		if types["everything."+col] != typ {
			t.Errorf("schema type of %s = %q, want %q", col, types["everything."+col], typ)
		}
	}
	// Nullability is the source's: primary-key and NOT NULL columns are
	// not nullable (also after a numeric column got its DECIMAL type).
	for col, want := range map[string]bool{"everything.id": false, "everything.small": true, "everything.title": true,
		"events.id": false, "events.kind": false, "events.value": true, "events.price": false, "nokey.a": true, "nokey.b": true} {
		if got, ok := nullable[col]; !ok || got != want {
			t.Errorf("schema: %s nullable = %v (listed: %v), want %v", col, got, ok, want)
		}
	}
	if types["events.price"] != "numeric" {
		t.Errorf("events.price is %q, want numeric", types["events.price"])
	}

	// The secret is sealed at rest and never logged.
	raw, _ := os.ReadFile(filepath.Join(e.App.Config().DataDir, "strata.db"))
	wal, _ := os.ReadFile(filepath.Join(e.App.Config().DataDir, "strata.db-wal"))
	if strings.Contains(string(raw)+string(wal), key) {
		t.Fatal("the service_role_key is stored in clear")
	}
	if strings.Contains(e.Logs.String(), key) {
		t.Fatal("the service_role_key appears in the log")
	}

	// Changes in PostgreSQL show after a re-sync; "********" keeps the key.
	q(`DELETE FROM S.events WHERE id > 20000`)
	q(`INSERT INTO S.nokey VALUES ('new', 0)`)
	if r := e.Call("PATCH", "/api/data-platform/connectors/"+id, `{"config":{"service_role_key":"********","sync_interval_seconds":600}}`, e.h...); r.Status != 200 {
		t.Fatalf("patch: %d %s", r.Status, r.Body)
	}
	if j := e.waitJob(t, e.sync(t)); j.Status != "completed" {
		t.Fatalf("re-sync: %+v %v", j, j.Error)
	}
	if got := e.query(t, "SELECT count(*) AS n FROM events")[0]["n"]; got != float64(20000) {
		t.Fatalf("events after re-sync: %v", got)
	}
	if got := e.query(t, "SELECT count(*) AS n FROM nokey")[0]["n"]; got != float64(2501) {
		t.Fatalf("nokey after re-sync: %v", got)
	}

	// A wrong key fails the sync with a clear error and keeps the tables.
	if r := e.Call("PATCH", "/api/data-platform/connectors/"+id, `{"config":{"service_role_key":"wrong-service-role-key"}}`, e.h...); r.Status != 200 {
		t.Fatalf("patch the key: %d %s", r.Status, r.Body)
	}
	j = e.waitJob(t, e.sync(t))
	if j.Status != "failed" || j.Error == nil || strings.Contains(*j.Error, "wrong-service-role-key") || !strings.Contains(*j.Error, "401") {
		t.Fatalf("bad key: %+v %v", j, j.Error)
	}
	if got := e.query(t, "SELECT count(*) AS n FROM events")[0]["n"]; got != float64(20000) {
		t.Fatalf("events after a failed sync: %v", got)
	}

	// Deleting the connector keeps the tables; a new one can sync them again.
	e.Call("DELETE", "/api/data-platform/connectors/"+id, "", e.h...)
	body, _ = json.Marshal(map[string]any{"name": "again", "type": "hosted_backend",
		"config": map[string]any{"hosted_backend_url": backend.URL, "service_role_key": key, "destination_schema": "raw"}})
	e.Call("POST", "/api/data-platform/connectors", string(body), e.h...)
	if j := e.waitJob(t, e.sync(t)); j.Status != "completed" {
		t.Fatalf("sync into raw: %+v %v", j, j.Error)
	}
	if got := e.query(t, "SELECT count(*) AS n FROM raw.events")[0]["n"]; got != float64(20000) {
		t.Fatalf("raw.events: %v", got)
	}
	if got := e.query(t, "SELECT count(*) AS n FROM main.events")[0]["n"]; got != float64(20000) {
		t.Fatalf("main.events after the connector was deleted: %v", got)
	}
}

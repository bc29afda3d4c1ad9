package hostedbackend_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/extensions"

	"github.com/stratahq/strata/plugins/hostedbackend"
)

const allTypesDDL = `
CREATE TYPE mood AS ENUM ('happy', 'sad');
CREATE TABLE all_types (
  id bigint PRIMARY KEY,
  c_smallint smallint, c_integer integer NOT NULL DEFAULT 0, c_bigint bigint,
  c_numeric numeric, c_numeric_ps numeric(12,3),
  c_real real, c_double double precision, c_bool boolean,
  c_text text, c_varchar varchar(20), c_char char(5),
  c_uuid uuid, c_json json, c_jsonb jsonb,
  c_date date, c_time time, c_timestamp timestamp, c_timestamptz timestamptz,
  c_interval interval, c_bytea bytea,
  c_text_arr text[], c_int_arr integer[], c_bigint_arr bigint[], c_smallint_arr smallint[],
  c_numeric_arr numeric[], c_real_arr real[], c_double_arr double precision[], c_bool_arr boolean[],
  c_varchar_arr varchar[], c_char_arr char(2)[], c_uuid_arr uuid[], c_jsonb_arr jsonb[],
  c_date_arr date[], c_time_arr time[], c_ts_arr timestamp[], c_tstz_arr timestamptz[], c_bytea_arr bytea[],
  c_mood mood, c_timetz timetz, c_inet inet
);
COMMENT ON COLUMN all_types.c_text IS 'a commented column';
INSERT INTO all_types VALUES
(1, 1, 2, 3, 12.5, 1.25, 1.5, 2.25, true,
 'hello', 'varchar', 'ab', 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', '{"b": 1,  "a": [1, 2]}', '{"b": 1, "a": [1, 2]}',
 '2024-05-01', '12:30:00', '2024-05-01 12:30:00', '2024-05-01 12:30:00+02',
 '1 year 2 mons 3 days 04:05:06.789', '\x00ff10',
 '{a,b}', '{1,2,3}', '{9007199254740993}', '{1,-1}',
 '{1.5,2}', '{0.5}', '{0.25}', '{true,false}',
 '{x,y}', '{ab,c}', '{a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11}', ARRAY['{"k": "v"}'::jsonb, '[1]'::jsonb],
 '{2024-01-01}', '{01:02:03}', '{"2024-01-01 00:00:00"}', '{"2024-01-01 00:00:00+00"}', '{"\\x01","\\x"}',
 'happy', '12:00:00+05:30', '192.168.0.1/24'),
(2, NULL, 0, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
 NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL),
(3, -32768, -2147483648, -9223372036854775808, 'NaN', -123456789.125, 'NaN', '-Infinity', false,
 E'unicode: 日本語 ✓ 😀 é (e\u0301) עברית, "quotes" \\ back\\slash, new\nline, tab\t, ctrl\u0001 end', '', 'a',
 '00000000-0000-0000-0000-000000000000', '"just a string"', '{"nested": {"emoji": "😀", "esc": "a\"b\\c\n"}, "n": 1.50}',
 '0045-03-15 BC', '24:00:00', 'infinity', '-infinity',
 '-1 days -02:00:00', '\x',
 '{}', '{NULL,1}', '{}', '{}',
 '{NaN,-0.5}', '{NULL}', '{Infinity,-Infinity}', '{NULL,true}',
 '{"a,b","c\"d",NULL,""}', '{NULL}', '{}', '{}',
 '{infinity,0001-01-01}', '{00:00:00.000001}', '{infinity}', '{-infinity}', '{NULL}',
 'sad', '00:00:00-08', '::1'),
(4, 32767, 2147483647, 9223372036854775807, 123456789012345678901234567890.123456789012345678901, 0.001, '1e-45', '1.7976931348623157e308', true,
 'x', 'y', 'z', 'FFFFFFFF-FFFF-FFFF-FFFF-FFFFFFFFFFFF', '12.50', 'null',
 '294276-12-31', '23:59:59.999999', '1999-12-31 23:59:59.999999', '1890-01-01 00:00:00+05:21:10',
 '100:00:00', '\xdeadbeef',
 '{"💥"}', '{2147483647}', '{-9223372036854775808}', '{32767}',
 '{1e-20}', '{-0}', '{1e-300}', '{false}',
 '{"with space"}', '{"a "}', '{00000000-0000-0000-0000-000000000001,NULL}', ARRAY['"s"'::jsonb, 'null'::jsonb, NULL],
 '{0045-03-15 BC}', '{24:00:00}', '{"0045-03-15 10:00:00 BC"}', '{"2000-02-29 12:00:00.5-03:30"}', '{"\\x00"}',
 NULL, '23:59:59.5+14', '10.0.0.0/8');
`

func TestDiscoverAndReadAllTypes(t *testing.T) {
	t.Parallel()
	e := newEnv(t, hostedbackend.Options{})
	e.exec(t, allTypesDDL+`
CREATE VIEW all_types_view AS SELECT id, c_text FROM all_types;
CREATE FUNCTION add_one(x integer) RETURNS integer LANGUAGE sql IMMUTABLE AS 'SELECT x + 1';
CREATE TABLE empty_table (id integer PRIMARY KEY, note text);
CREATE TABLE other (id integer PRIMARY KEY, ref bigint REFERENCES all_types(id));`)

	ctx := context.Background()
	if err := e.src.Check(ctx); err != nil {
		t.Fatalf("Check: %v", err)
	}
	tables, err := e.src.Discover(ctx)
	if err != nil {
		t.Fatalf("Discover: %v", err)
	}
	var names []string
	for _, tb := range tables {
		names = append(names, tb.Name)
	}
	if want := []string{"all_types", "all_types_view", "empty_table", "other"}; !slices.Equal(names, want) {
		t.Fatalf("tables = %v, want %v (functions must be skipped)", names, want)
	}
	at := tables[0]
	if !slices.Equal(at.PrimaryKey, []string{"id"}) {
		t.Errorf("primary key = %v", at.PrimaryKey)
	}
	if at.EstimatedRows != 4 {
		t.Errorf("EstimatedRows = %d, want 4", at.EstimatedRows)
	}
	if len(tables[1].PrimaryKey) != 0 || len(tables[3].PrimaryKey) != 1 {
		t.Errorf("view pk = %v, other pk = %v", tables[1].PrimaryKey, tables[3].PrimaryKey)
	}

	wantTypes := map[string]string{
		"id": "int64", "c_smallint": "int16", "c_integer": "int32", "c_bigint": "int64",
		"c_numeric": "utf8", "c_numeric_ps": "utf8", "c_real": "float32", "c_double": "float64", "c_bool": "bool",
		"c_text": "utf8", "c_varchar": "utf8", "c_char": "utf8", "c_uuid": "extension<arrow.uuid>",
		"c_json": "utf8", "c_jsonb": "utf8", "c_date": "date32", "c_time": "time64[us]",
		"c_timestamp": "timestamp[us]", "c_timestamptz": "timestamp[us, tz=UTC]",
		"c_interval": "month_day_nano_interval", "c_bytea": "binary",
		"c_text_arr": "list<item: utf8, nullable>", "c_int_arr": "list<item: int32, nullable>",
		"c_uuid_arr": "list<item: extension<arrow.uuid>, nullable>",
		"c_tstz_arr": "list<item: timestamp[us, tz=UTC], nullable>",
		"c_mood":     "utf8", "c_timetz": "utf8", "c_inet": "utf8",
	}
	for _, f := range at.Schema.Fields() {
		if want, ok := wantTypes[f.Name]; ok && f.Type.String() != want {
			t.Errorf("column %s: type %s, want %s", f.Name, f.Type, want)
		}
		if _, ok := f.Metadata.GetValue(hostedbackend.MetaPGType); !ok {
			t.Errorf("column %s has no %s metadata", f.Name, hostedbackend.MetaPGType)
		}
	}
	meta := func(col, key string) string {
		i := at.Schema.FieldIndices(col)[0]
		v, _ := at.Schema.Field(i).Metadata.GetValue(key)
		return v
	}
	for col, want := range map[string]string{"c_json": "json", "c_jsonb": "json", "c_numeric": "numeric", "c_mood": "text"} {
		if got := meta(col, hostedbackend.MetaType); got != want {
			t.Errorf("%s: %s = %q, want %q", col, hostedbackend.MetaType, got, want)
		}
	}
	for col, want := range map[string]string{"c_tstz_arr": "timestamp with time zone[]", "c_varchar": "character varying", "c_char": "character"} {
		if got := meta(col, hostedbackend.MetaPGType); got != want {
			t.Errorf("%s: %s = %q, want %q", col, hostedbackend.MetaPGType, got, want)
		}
	}
	if f := at.Schema.Field(at.Schema.FieldIndices("c_integer")[0]); f.Nullable {
		t.Error("NOT NULL column c_integer is nullable")
	}
	if f := at.Schema.Field(at.Schema.FieldIndices("c_text")[0]); !f.Nullable {
		t.Error("column c_text is not nullable")
	}
	if _, ok := at.Schema.Field(at.Schema.FieldIndices("c_uuid")[0]).Type.(*extensions.UUIDType); !ok {
		t.Error("uuid is not the arrow.uuid extension type")
	}

	one, err := e.src.DiscoverTable(ctx, "all_types")
	if err != nil || one.Name != "all_types" || !one.Schema.Equal(at.Schema) || one.EstimatedRows != 4 {
		t.Errorf("DiscoverTable = %v, %v", one, err)
	}
	if _, err := e.src.DiscoverTable(ctx, "nope"); !errors.Is(err, hostedbackend.ErrTableNotFound) {
		t.Errorf("DiscoverTable(nope) error = %v", err)
	}

	for _, tb := range tables {
		c := &collector{keepRows: true}
		if err := e.src.Read(ctx, tb, c.emit, c.onProgress); err != nil {
			t.Fatalf("Read %s: %v", tb.Name, err)
		}
		got := slices.Sorted(slices.Values(c.rows))
		want := pgRows(t, e, tb)
		if len(got) != len(want) {
			t.Fatalf("%s: %d rows, want %d", tb.Name, len(got), len(want))
		}
		for i := range want {
			if got[i] != want[i] {
				gf, wf := strings.Split(got[i], "\x1f"), strings.Split(want[i], "\x1f")
				for j := range wf {
					if j < len(gf) && gf[j] != wf[j] {
						t.Errorf("%s row %d column %s:\n got  %q\n want %q", tb.Name, i, tb.Schema.Field(j).Name, gf[j], wf[j])
					}
				}
			}
		}
		if last := c.progress[len(c.progress)-1]; last[0] != int64(len(want)) || last[1] != int64(len(want)) {
			t.Errorf("%s: last progress %v, want %d/%d", tb.Name, last, len(want), len(want))
		}
	}
}

// TestReadLargeTable reads 200k rows through the 1,000-row cap with keyset
// paging, compares checksums, and checks that memory stays bounded.
func TestReadLargeTable(t *testing.T) {
	t.Parallel()
	mem := newPeakAllocator()
	e := newEnv(t, hostedbackend.Options{Allocator: mem})
	e.exec(t, `CREATE TABLE big AS
SELECT g::bigint AS id, md5(g::text) AS name, g * 0.5::float8 AS amount,
       timestamptz '2024-01-01 00:00:00+00' + g * interval '1 second' AS at,
       CASE WHEN g % 7 = 0 THEN NULL ELSE g % 1000 END::integer AS bucket
FROM generate_series(1, 200000) g;
ALTER TABLE big ADD PRIMARY KEY (id);
ANALYZE big`)
	tb := e.table(t, "big")
	if tb.EstimatedRows < 150000 || tb.EstimatedRows > 250000 {
		t.Errorf("EstimatedRows = %d, want about 200000", tb.EstimatedRows)
	}
	before := e.fixture.RequestCount()
	c := &collector{}
	if err := e.src.Read(context.Background(), tb, c.emit, c.onProgress); err != nil {
		t.Fatalf("Read: %v", err)
	}
	n, sum := pgChecksum(t, e, tb)
	if c.n != n || c.sum.String() != sum {
		t.Fatalf("checksum: read %d rows sum %s, PostgreSQL has %d rows sum %s", c.n, c.sum.String(), n, sum)
	}
	if c.maxBatch > hostedbackend.DefaultPageSize {
		t.Errorf("largest batch %d rows, above the page size %d", c.maxBatch, hostedbackend.DefaultPageSize)
	}
	// 200 full pages and the empty one that ends keyset paging.
	if got := e.fixture.RequestCount() - before; got != 201 {
		t.Errorf("%d requests, want 201", got)
	}
	reqs := e.fixture.Requests()
	last := reqs[len(reqs)-1]
	if !strings.Contains(last.RawQuery, "id=gt.200000") || !strings.Contains(last.RawQuery, "order=id.asc") {
		t.Errorf("last request %q is not a keyset page after 200000", last.RawQuery)
	}
	if reqs[len(reqs)-201].Prefer != "count=exact" || reqs[len(reqs)-200].Prefer != "" {
		t.Errorf("count=exact must be asked for on the first page only")
	}
	if p := c.progress[0]; p != [2]int64{1000, 200000} {
		t.Errorf("first progress %v, want [1000 200000]", p)
	}
	// Bounded memory: all of the table held at once would be well above
	// 20 MB in Arrow; one page is about 100 kB.
	t.Logf("peak Arrow memory while reading 200k rows: %d bytes", mem.peak)
	if mem.peak > 4<<20 {
		t.Errorf("peak Arrow memory %d bytes: the reader buffers more than a page", mem.peak)
	}
	mem.AssertSize(t, 0)
}

func TestReadWithoutPrimaryKey(t *testing.T) {
	t.Parallel()
	e := newEnv(t, hostedbackend.Options{})
	e.exec(t, `CREATE TABLE log AS
SELECT (g % 100)::integer AS k, CASE WHEN g % 3 = 0 THEN NULL ELSE 'v' || (g % 50) END AS v, '{"a": 1}'::json AS doc
FROM generate_series(1, 2500) g`)
	tb := e.table(t, "log")
	if len(tb.PrimaryKey) != 0 {
		t.Fatalf("primary key %v", tb.PrimaryKey)
	}
	c := &collector{}
	if err := e.src.Read(context.Background(), tb, c.emit, c.onProgress); err != nil {
		t.Fatalf("Read: %v", err)
	}
	n, sum := pgChecksum(t, e, tb)
	if c.n != n || c.sum.String() != sum {
		t.Fatalf("checksum: read %d rows sum %s, PostgreSQL has %d rows sum %s", c.n, c.sum.String(), n, sum)
	}
	reqs := e.fixture.Requests()
	var pages []string
	for _, r := range reqs {
		if r.Path == "/rest/v1/log" && r.Method == http.MethodGet {
			pages = append(pages, r.RawQuery)
		}
	}
	// Offsets 0, 1000, 2000; the total from Content-Range ends paging.
	if len(pages) != 3 || !strings.Contains(pages[2], "offset=2000") || !strings.Contains(pages[0], "order=k.asc%2Cv.asc&") {
		t.Errorf("pages = %q", pages)
	}
}

func TestReadCompositeKey(t *testing.T) {
	t.Parallel()
	e := newEnv(t, hostedbackend.Options{PageSize: 7})
	e.fixture.SetMaxRows(5) // the server caps below the page size
	e.exec(t, `CREATE TABLE pairs (
  "grp name" text, seq integer, at timestamptz, payload text,
  PRIMARY KEY ("grp name", seq, at))`)
	e.exec(t, `INSERT INTO pairs
SELECT g, s, timestamptz '2024-01-01 00:00:00.123456+00' + (s % 3) * interval '1 hour', g || s
FROM unnest(ARRAY['a', 'a,b', 'a(b)', 'x"y', 'back\slash', 'dot.ted', 'colon:', 'sp ace', '', '日本', 'or=(x)']) g,
     generate_series(1, 9) s`)
	tb := e.table(t, "pairs")
	if !slices.Equal(tb.PrimaryKey, []string{"grp name", "seq", "at"}) {
		t.Fatalf("primary key %v", tb.PrimaryKey)
	}
	c := &collector{}
	if err := e.src.Read(context.Background(), tb, c.emit, c.onProgress); err != nil {
		t.Fatalf("Read: %v", err)
	}
	n, sum := pgChecksum(t, e, tb)
	if c.n != n || c.sum.String() != sum {
		t.Fatalf("checksum: read %d rows sum %s, PostgreSQL has %d rows sum %s", c.n, c.sum.String(), n, sum)
	}
	if c.maxBatch > 5 {
		t.Errorf("batch of %d rows with a cap of 5", c.maxBatch)
	}
	reqs := e.fixture.Requests()
	last := reqs[len(reqs)-1].RawQuery
	if !strings.Contains(last, "or=%28%22grp+name%22.gt.%22") || !strings.Contains(last, "%2Cand%28%22grp+name%22.eq.%22") {
		t.Errorf("last page query %q is not a composite keyset condition", last)
	}
}

func TestRetries(t *testing.T) {
	t.Parallel()
	e := newEnv(t, hostedbackend.Options{PageSize: 100})
	e.exec(t, `CREATE TABLE t AS SELECT g AS id, repeat('x', g % 50) AS s FROM generate_series(1, 1000) g; ALTER TABLE t ADD PRIMARY KEY (id)`)
	tb := e.table(t, "t")

	// 503s, then a 429 asking to wait 1 s, then bodies cut off midway.
	e.fixture.FailNext(2, http.StatusServiceUnavailable, "")
	e.fixture.FailNext(1, http.StatusTooManyRequests, "1")
	start := time.Now()
	before := e.fixture.RequestCount()
	c := &collector{}
	var brokeOnce bool
	emit := func(rec arrow.RecordBatch) error {
		if !brokeOnce {
			brokeOnce = true
			e.fixture.BreakNext(3)
		}
		return c.emit(rec)
	}
	if err := e.src.Read(context.Background(), tb, emit, nil); err != nil {
		t.Fatalf("Read: %v", err)
	}
	if el := time.Since(start); el < time.Second {
		t.Errorf("read took %v: Retry-After: 1 was not honoured", el)
	}
	n, sum := pgChecksum(t, e, tb)
	if c.n != n || c.sum.String() != sum {
		t.Fatalf("checksum: read %d rows sum %s, PostgreSQL has %d rows sum %s", c.n, c.sum.String(), n, sum)
	}
	// 10 pages, the empty last one, 3 injected errors and 3 broken bodies.
	if got := e.fixture.RequestCount() - before; got != 17 {
		t.Errorf("%d requests, want 17", got)
	}

	// Retries are bounded.
	src, err := hostedbackend.NewSource(hostedbackend.Config{HostedBackendURL: e.url, ServiceRoleKey: testKey},
		hostedbackend.Options{MaxRetries: 2, Backoff: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	e.fixture.FailNext(5, http.StatusBadGateway, "")
	err = src.Read(context.Background(), tb, c.emit, nil)
	if err == nil || !strings.Contains(err.Error(), "giving up after 3 attempts") || !strings.Contains(err.Error(), "502") {
		t.Fatalf("error = %v, want giving up after 3 attempts with the 502", err)
	}
	assertNoKey(t, err)
}

func assertNoKey(t *testing.T, err error) {
	t.Helper()
	if err != nil && strings.Contains(err.Error(), testKey) {
		t.Fatalf("error reveals the service_role_key: %v", err)
	}
}

func TestBadKey(t *testing.T) {
	t.Parallel()
	e := newEnv(t, hostedbackend.Options{})
	const wrongKey = "wrong-key-0123456789-do-not-print"
	src, err := hostedbackend.NewSource(hostedbackend.Config{HostedBackendURL: e.url, ServiceRoleKey: wrongKey}, hostedbackend.Options{})
	if err != nil {
		t.Fatal(err)
	}
	err = src.Check(context.Background())
	if !errors.Is(err, hostedbackend.ErrUnauthorized) || !strings.Contains(err.Error(), "the service_role_key was refused (401)") {
		t.Fatalf("Check error = %v, want ErrUnauthorized with (401)", err)
	}
	if strings.Contains(err.Error(), wrongKey) {
		t.Fatalf("error reveals the key: %v", err)
	}
	if _, err := src.Discover(context.Background()); !errors.Is(err, hostedbackend.ErrUnauthorized) {
		t.Fatalf("Discover error = %v", err)
	}
	// 403 (e.g. a key of a role without rights) is the same error, and it is
	// not retried.
	e.fixture.FailNext(1, http.StatusForbidden, "")
	before := e.fixture.RequestCount()
	err = e.src.Check(context.Background())
	if !errors.Is(err, hostedbackend.ErrUnauthorized) || !strings.Contains(err.Error(), "(403)") {
		t.Fatalf("Check error = %v, want ErrUnauthorized (403)", err)
	}
	if n := e.fixture.RequestCount() - before; n != 1 {
		t.Errorf("403 was retried: %d requests", n)
	}
}

func TestUnreachableAndNotPostgREST(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	src, err := hostedbackend.NewSource(hostedbackend.Config{HostedBackendURL: "http://" + addr, ServiceRoleKey: testKey},
		hostedbackend.Options{MaxRetries: 2, Backoff: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	err = src.Check(context.Background())
	if !errors.Is(err, hostedbackend.ErrUnreachable) || !strings.Contains(err.Error(), "cannot reach the hosted backend at http://"+addr) {
		t.Fatalf("error = %v, want ErrUnreachable naming the host", err)
	}
	assertNoKey(t, err)

	for name, h := range map[string]http.HandlerFunc{
		"html": func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html")
			_, _ = w.Write([]byte("<html>welcome</html>"))
		},
		"404": http.NotFound,
		"json but not OpenAPI": func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(`{"hello": "world"}`))
		},
	} {
		srv := httptest.NewServer(h)
		src, err := hostedbackend.NewSource(hostedbackend.Config{HostedBackendURL: srv.URL, ServiceRoleKey: testKey}, hostedbackend.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if err := src.Check(context.Background()); !errors.Is(err, hostedbackend.ErrNotPostgREST) {
			t.Errorf("%s: error = %v, want ErrNotPostgREST", name, err)
		}
		srv.Close()
	}
}

// TestKeyNeverInErrors uses a server that echoes the key back in its error
// messages.
func TestKeyNeverInErrors(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		_, _ = w.Write([]byte(`{"code":"X","message":"bad key ` + r.Header.Get("apikey") + `","details":"` + r.Header.Get("Authorization") + `","hint":null}`))
	}))
	defer srv.Close()
	src, err := hostedbackend.NewSource(hostedbackend.Config{HostedBackendURL: srv.URL, ServiceRoleKey: testKey}, hostedbackend.Options{})
	if err != nil {
		t.Fatal(err)
	}
	err = src.Check(context.Background())
	if err == nil {
		t.Fatal("no error")
	}
	assertNoKey(t, err)
	if !strings.Contains(err.Error(), "[REDACTED]") {
		t.Errorf("error = %v, want the echoed key redacted", err)
	}
	_, err = hostedbackend.ParseConfig([]byte(`{"hosted_backend_url": "ftp://x", "service_role_key": "` + testKey + `"}`))
	assertNoKey(t, err)
	_, err = hostedbackend.ParseConfig([]byte(`{"hosted_backend_url": "http://x", "service_role_key": "` + testKey + `", "extra": 1}`))
	assertNoKey(t, err)
}

func TestCancelMidRead(t *testing.T) {
	t.Parallel()
	e := newEnv(t, hostedbackend.Options{})
	e.exec(t, `CREATE TABLE t AS SELECT g AS id FROM generate_series(1, 20000) g; ALTER TABLE t ADD PRIMARY KEY (id)`)
	tb := e.table(t, "t")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	batches := 0
	before := e.fixture.RequestCount()
	err := e.src.Read(ctx, tb, func(rec arrow.RecordBatch) error {
		batches++
		if batches == 3 {
			cancel()
		}
		return nil
	}, nil)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("error = %v, want context.Canceled", err)
	}
	if n := e.fixture.RequestCount() - before; n > 4 {
		t.Errorf("%d requests after cancellation at the 3rd batch", n)
	}
	// An error from emit stops the read and comes back as is.
	stop := errors.New("stop here")
	if err := e.src.Read(context.Background(), tb, func(arrow.RecordBatch) error { return stop }, nil); err != stop {
		t.Fatalf("error = %v, want the emit error itself", err)
	}
}

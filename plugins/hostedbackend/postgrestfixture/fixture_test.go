package postgrestfixture_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/stratahq/strata/plugins/hostedbackend/postgrestfixture"
)

const key = "fixture-test-key-0123456789"

// TestProtocol checks the fixture against PostgREST's documented behaviour,
// one request per scenario.
func TestProtocol(t *testing.T) {
	t.Parallel()
	pool := postgrestfixture.Connect(t)
	schema := postgrestfixture.NewSchema(t, pool)
	postgrestfixture.Exec(t, pool, "SET search_path TO "+pgx.Identifier{schema}.Sanitize()+`;
CREATE TABLE items (
  id bigint PRIMARY KEY, name text, tags text[] NOT NULL DEFAULT '{}', data jsonb,
  at timestamptz, raw bytea, amount numeric, code varchar(8)
);
COMMENT ON COLUMN items.name IS 'display name';
INSERT INTO items VALUES
 (1, 'a,b', '{x,y}', '{"k": [1, "two"]}', '2024-05-01 12:30:00+00', '\x00ff', 12345678901234567890.123456789, 'c1'),
 (2, NULL, '{}', NULL, '2024-05-01 12:30:00.25+02', NULL, 0.1, NULL),
 (3, 'x', '{"a,b"}', '"s"', NULL, '\x', NULL, NULL),
 (4, 'abc', '{}', '[]', NULL, NULL, -1, NULL),
 (5, 'ABD', '{}', '{}', NULL, NULL, 2, NULL);
CREATE TABLE empty (id integer);
CREATE TABLE child (id integer PRIMARY KEY, item_id bigint REFERENCES items(id));
CREATE VIEW names AS SELECT name FROM items;
CREATE FUNCTION twice(x integer) RETURNS integer LANGUAGE sql STABLE AS 'SELECT 2 * x';
RESET search_path`)
	f, srv := postgrestfixture.Start(t, postgrestfixture.Options{Pool: pool, Schema: schema, Key: key})

	type scenario struct {
		name        string
		method      string
		path        string
		headers     map[string]string
		noKey       bool
		before      func()
		status      int
		contentType string
		rangeHdr    string
		body        string // exact body, when set
		contains    []string
		notContains []string
	}
	scenarios := []scenario{
		{name: "no apikey", path: "/rest/v1/", noKey: true, status: 401, contains: []string{`"code":"PGRST301"`, `"message":"No API key found in request"`}},
		{name: "wrong apikey", path: "/rest/v1/items", headers: map[string]string{"apikey": "nope"}, noKey: true, status: 401, contains: []string{`"message":"Invalid API key"`, `"details":null`}},
		{name: "wrong bearer", path: "/rest/v1/items", headers: map[string]string{"apikey": key, "Authorization": "Bearer nope"}, noKey: true, status: 401, contains: []string{"JWSInvalidSignature"}},
		{name: "apikey query parameter", path: "/rest/v1/items?apikey=" + key + "&select=id&id=eq.1", noKey: true, status: 200, body: `[{"id":1}]`},
		{name: "outside the API", path: "/auth/v1/", status: 404, contains: []string{"no Route matched"}},
		{name: "root document", path: "/rest/v1/", status: 200, contentType: "application/openapi+json; charset=utf-8", contains: []string{`"swagger":"2.0"`}},
		{name: "plain select", path: "/rest/v1/items?select=id,name&order=id.asc&limit=2", status: 200, rangeHdr: "0-1/*",
			body: `[{"id":1,"name":"a,b"}, ` + "\n" + ` {"id":2,"name":null}]`},
		{name: "encodings", path: "/rest/v1/items?id=eq.1", status: 200,
			body: `[{"id":1,"name":"a,b","tags":["x","y"],"data":{"k": [1, "two"]},"at":"2024-05-01T12:30:00+00:00","raw":"\\x00ff","amount":12345678901234567890.123456789,"code":"c1"}]`},
		{name: "timestamptz in UTC", path: "/rest/v1/items?select=at&id=eq.2", status: 200, body: `[{"at":"2024-05-01T10:30:00.25+00:00"}]`},
		{name: "exact count", path: "/rest/v1/items?select=id&limit=2", headers: map[string]string{"Prefer": "count=exact"}, status: 206, rangeHdr: "0-1/5"},
		{name: "whole table with count", path: "/rest/v1/items?select=id", headers: map[string]string{"Prefer": "count=exact"}, status: 200, rangeHdr: "0-4/5"},
		{name: "offset at the end", path: "/rest/v1/items?offset=5", headers: map[string]string{"Prefer": "count=exact"}, status: 206, rangeHdr: "*/5", body: "[]"},
		{name: "offset past the end", path: "/rest/v1/items?offset=6", headers: map[string]string{"Prefer": "count=exact"}, status: 416,
			contains: []string{`"code":"PGRST103"`, "An offset of 6 was requested, but there are only 5 rows."}},
		{name: "empty table", path: "/rest/v1/empty", headers: map[string]string{"Prefer": "count=exact"}, status: 200, rangeHdr: "*/0", body: "[]"},
		{name: "empty without count", path: "/rest/v1/empty", status: 200, rangeHdr: "*/*", body: "[]"},
		{name: "Range header", path: "/rest/v1/items?select=id&order=id", headers: map[string]string{"Range": "1-2", "Range-Unit": "items"}, status: 200, rangeHdr: "1-2/*", body: `[{"id":2}, ` + "\n" + ` {"id":3}]`},
		{name: "Range and limit intersect", path: "/rest/v1/items?select=id&order=id&limit=2", headers: map[string]string{"Range": "1-3"}, status: 200, rangeHdr: "1-1/*"},
		{name: "bad Range", path: "/rest/v1/items", headers: map[string]string{"Range": "3-1"}, status: 416},
		{name: "max rows cap", before: func() { f.SetMaxRows(2) }, path: "/rest/v1/items?select=id&order=id.desc", headers: map[string]string{"Prefer": "count=exact"}, status: 206, rangeHdr: "0-1/5", body: `[{"id":5}, ` + "\n" + ` {"id":4}]`},
		{name: "cap restored", before: func() { f.SetMaxRows(0) }, path: "/rest/v1/items?select=id", status: 200, rangeHdr: "0-4/*"},
		{name: "gt filter", path: "/rest/v1/items?select=id&id=gt.3&order=id", status: 200, body: `[{"id":4}, ` + "\n" + ` {"id":5}]`},
		{name: "top-level value with comma", path: "/rest/v1/items?select=id&name=eq.a,b", status: 200, body: `[{"id":1}]`},
		{name: "in list", path: "/rest/v1/items?select=id&id=in.(1,3)&order=id", status: 200, body: `[{"id":1}, ` + "\n" + ` {"id":3}]`},
		{name: "in list quoted", path: "/rest/v1/items?select=id&name=in.(\"a,b\",x)&order=id", status: 200, body: `[{"id":1}, ` + "\n" + ` {"id":3}]`},
		{name: "not", path: "/rest/v1/items?select=id&id=not.lte.4", status: 200, body: `[{"id":5}]`},
		{name: "is null", path: "/rest/v1/items?select=id&name=is.null", status: 200, body: `[{"id":2}]`},
		{name: "like", path: "/rest/v1/items?select=id&name=like.ab*", status: 200, body: `[{"id":4}]`},
		{name: "ilike", path: "/rest/v1/items?select=id&name=ilike.AB*&order=id", status: 200, body: `[{"id":4}, ` + "\n" + ` {"id":5}]`},
		{name: "or with nested and, quoted value", path: `/rest/v1/items?select=id&order=id&or=(name.eq."a,b",and(id.gte.4,name.neq.abc))`, status: 200, body: `[{"id":1}, ` + "\n" + ` {"id":5}]`},
		{name: "keyset on composite form", path: `/rest/v1/items?select=id&order=id&or=(id.gt.4,and(id.eq.4,name.gt."abc"))`, status: 200, body: `[{"id":5}]`},
		{name: "not.or", path: `/rest/v1/items?select=id&order=id&not.or=(id.lt.3,id.gt.3)`, status: 200, body: `[{"id":3}]`},
		{name: "and with not inside", path: `/rest/v1/items?select=id&and=(id.gt.1,id.not.eq.2,not.or(id.eq.4,id.eq.5))`, status: 200, body: `[{"id":3}]`},
		{name: "order nullsfirst", path: "/rest/v1/items?select=id&order=name.desc.nullsfirst,id&limit=2", status: 200, body: `[{"id":2}, ` + "\n" + ` {"id":3}]`},
		{name: "alias and cast", path: "/rest/v1/items?select=ident:id,amount::text&id=eq.2", status: 200, body: `[{"ident":2,"amount":"0.1"}]`},
		{name: "unknown column", path: "/rest/v1/items?nope=eq.1", status: 400, contains: []string{`"code":"42703"`, "column items.nope does not exist"}},
		{name: "unknown table", path: "/rest/v1/nope", status: 404, contains: []string{`"code":"PGRST205"`}},
		{name: "bad value", path: "/rest/v1/items?id=gt.abc", status: 400, contains: []string{`"code":"22P02"`}},
		{name: "bad syntax", path: "/rest/v1/items?or=(id.gt.1", status: 400, contains: []string{`"code":"PGRST100"`}},
		{name: "unsupported operator", path: "/rest/v1/items?id=xx.1", status: 400, contains: []string{`"code":"PGRST100"`}},
		{name: "HEAD estimated", method: http.MethodHead, path: "/rest/v1/items?select=*&limit=1", headers: map[string]string{"Prefer": "count=estimated"}, status: 206, rangeHdr: "0-0/5", body: ""},
		{name: "write refused", method: http.MethodPost, path: "/rest/v1/items", status: 405},
		{name: "injected 503", before: func() { f.FailNext(1, 503, "7") }, path: "/rest/v1/items", status: 503, contains: []string{"injected"}},
		{name: "injected 429", before: func() { f.FailNext(1, 429, "") }, path: "/rest/v1/", status: 429},
	}
	for _, sc := range scenarios {
		t.Run(sc.name, func(t *testing.T) {
			if sc.before != nil {
				sc.before()
			}
			method := sc.method
			if method == "" {
				method = http.MethodGet
			}
			req, err := http.NewRequest(method, srv.URL+sc.path, nil)
			if err != nil {
				t.Fatal(err)
			}
			if !sc.noKey {
				req.Header.Set("apikey", key)
				req.Header.Set("Authorization", "Bearer "+key)
			}
			for k, v := range sc.headers {
				req.Header.Set(k, v)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			body, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != sc.status {
				t.Fatalf("status %d, want %d; body %s", resp.StatusCode, sc.status, body)
			}
			if sc.contentType != "" && resp.Header.Get("Content-Type") != sc.contentType {
				t.Errorf("Content-Type %q, want %q", resp.Header.Get("Content-Type"), sc.contentType)
			}
			if sc.rangeHdr != "" && resp.Header.Get("Content-Range") != sc.rangeHdr {
				t.Errorf("Content-Range %q, want %q", resp.Header.Get("Content-Range"), sc.rangeHdr)
			}
			if sc.body != "" || (method == http.MethodHead && len(body) > 0) {
				if string(body) != sc.body {
					t.Errorf("body\n %s\nwant\n %s", body, sc.body)
				}
			}
			for _, c := range sc.contains {
				if !strings.Contains(string(body), c) {
					t.Errorf("body %s does not contain %s", body, c)
				}
			}
			if sc.name == "injected 503" && resp.Header.Get("Retry-After") != "7" {
				t.Errorf("Retry-After %q", resp.Header.Get("Retry-After"))
			}
		})
	}

	t.Run("root document shape", func(t *testing.T) {
		req, _ := http.NewRequest(http.MethodGet, srv.URL+"/rest/v1/", nil)
		req.Header.Set("apikey", key)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		raw, _ := io.ReadAll(resp.Body)
		var doc struct {
			Swagger     string                                `json:"swagger"`
			Paths       map[string]map[string]json.RawMessage `json:"paths"`
			Definitions map[string]struct {
				Required   []string                  `json:"required"`
				Properties map[string]map[string]any `json:"properties"`
			} `json:"definitions"`
		}
		if err := json.Unmarshal(raw, &doc); err != nil {
			t.Fatal(err)
		}
		items := doc.Definitions["items"]
		want := map[string]map[string]any{
			"id":     {"format": "bigint", "type": "integer", "description": "Note:\nThis is a Primary Key.<pk/>"},
			"name":   {"format": "text", "type": "string", "description": "display name"},
			"tags":   {"format": "text[]", "type": "array", "default": "{}"},
			"data":   {"format": "jsonb"},
			"at":     {"format": "timestamp with time zone", "type": "string"},
			"raw":    {"format": "bytea", "type": "string"},
			"amount": {"format": "numeric", "type": "number"},
			"code":   {"format": "character varying", "type": "string", "maxLength": float64(8)},
		}
		for col, props := range want {
			got := items.Properties[col]
			for k, v := range props {
				if got[k] != v {
					t.Errorf("items.%s.%s = %#v, want %#v", col, k, got[k], v)
				}
			}
			if _, hasType := got["type"]; col == "data" && hasType {
				t.Errorf("jsonb column has a type: %v", got)
			}
		}
		if strings.Join(items.Required, ",") != "id,tags" {
			t.Errorf("required = %v", items.Required)
		}
		// Column order is table order.
		if i, j := bytes.Index(raw, []byte(`"amount":{`)), bytes.Index(raw, []byte(`"code":{`)); i < 0 || j < i {
			t.Error("properties are not in column order")
		}
		if d := doc.Definitions["child"].Properties["item_id"]["description"]; d != "Note:\nThis is a Foreign Key to `items.id`.<fk table='items' column='id'/>" {
			t.Errorf("foreign key description %q", d)
		}
		for _, p := range []string{"/", "/items", "/names", "/empty", "/child", "/rpc/twice"} {
			if _, ok := doc.Paths[p]; !ok {
				t.Errorf("path %s missing", p)
			}
		}
		if _, ok := doc.Paths["/names"]["get"]; !ok {
			t.Error("view has no GET")
		}
		if _, ok := doc.Paths["/items"]["post"]; !ok {
			t.Error("table has no POST")
		}
		if _, ok := doc.Definitions["twice"]; ok {
			t.Error("functions must not be definitions")
		}
	})

	t.Run("broken body", func(t *testing.T) {
		f.BreakNext(1)
		req, _ := http.NewRequest(http.MethodGet, srv.URL+"/rest/v1/items", nil)
		req.Header.Set("apikey", key)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if _, err := io.ReadAll(resp.Body); err == nil {
			t.Fatal("body was not cut off")
		}
	})
}

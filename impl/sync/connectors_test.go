package sync_test

// HTTP tests of the rules a connector's config must follow when it is
// saved. They live beside the sync tests because they need the real plugins
// this package's TestMain builds, and some need a sync to show where a
// connector's secret goes.

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	gosync "sync"
	"testing"
	"time"

	"github.com/stratahq/strata/impl/testenv"
	"github.com/stratahq/strata/plugins/hostedbackend/postgrestfixture"
)

// keyCatcher is a host that notes the keys sent to it; it answers 404 so a
// sync pointed at it fails at once.
type keyCatcher struct {
	*httptest.Server
	mu   gosync.Mutex
	keys []string
}

func newKeyCatcher(t *testing.T) *keyCatcher {
	k := &keyCatcher{}
	k.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		k.mu.Lock()
		k.keys = append(k.keys, r.Header.Get("apikey"), strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer "))
		k.mu.Unlock()
		http.NotFound(w, r)
	}))
	t.Cleanup(k.Close)
	return k
}

func (k *keyCatcher) received() []string {
	k.mu.Lock()
	defer k.mu.Unlock()
	return slices.Clone(k.keys)
}

func (e env) getConnector(t *testing.T, id string) map[string]any {
	t.Helper()
	var list []map[string]any
	e.Call("GET", "/api/data-platform/connectors", "", e.h...).Decode(t, &list)
	for _, c := range list {
		if c["id"] == id {
			return c
		}
	}
	t.Fatalf("connector %s not listed", id)
	return nil
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// TestChangingTheURLNeedsTheKeyAgain: hosted_backend_url decides where the
// service_role_key is sent, so a PATCH that changes it must send the key
// again; otherwise anyone who may edit the connector (a personal access
// token, say) could point it at their own host and receive the stored key
// with the next sync.
func TestChangingTheURLNeedsTheKeyAgain(t *testing.T) {
	t.Parallel()
	pool := postgrestfixture.Connect(t)
	schema := postgrestfixture.NewSchema(t, pool)
	postgrestfixture.Exec(t, pool, `CREATE TABLE `+schema+`.items (id integer PRIMARY KEY)`)
	const key = "stored-service-role-key-0123456789"
	_, backend := postgrestfixture.Start(t, postgrestfixture.Options{Pool: pool, Schema: schema, Key: key})
	attacker := newKeyCatcher(t)
	e := newEnv(t)

	r := e.Call("POST", "/api/data-platform/connectors", mustJSON(map[string]any{"name": "prod", "type": "hosted_backend",
		"config": map[string]any{"hosted_backend_url": backend.URL, "service_role_key": key}}), e.h...)
	if r.Status != 201 {
		t.Fatalf("create: %d %s", r.Status, r.Body)
	}
	id := r.JSON(t)["id"].(string)
	path := "/api/data-platform/connectors/" + id
	before := e.getConnector(t, id)
	e.Clock.Advance(time.Minute)

	// The URL alone, or with the key kept: refused, and nothing changes.
	for _, body := range []map[string]any{
		{"hosted_backend_url": attacker.URL},
		{"hosted_backend_url": attacker.URL, "service_role_key": "********"},
		{"hosted_backend_url": attacker.URL, "sync_interval_seconds": 60},
	} {
		r := e.Call("PATCH", path, mustJSON(map[string]any{"config": body}), e.h...)
		testenv.ExpectError(t, r, 400, "validation_error")
		msg := r.JSON(t)["message"].(string)
		if !strings.Contains(msg, `"config.service_role_key"`) || !strings.Contains(msg, "config.hosted_backend_url") ||
			!strings.Contains(msg, "sent again") || strings.Contains(msg, key) {
			t.Errorf("PATCH %v: message %q does not name the secret and the reason", body, msg)
		}
	}
	if after := e.getConnector(t, id); !jsonEqual(after, before) {
		t.Fatalf("a refused PATCH changed the connector:\nbefore %v\nafter  %v", before, after)
	}
	if j := e.waitJob(t, e.sync(t)); j.Status != "completed" {
		t.Fatalf("sync after the refused PATCH: %+v %v", j, j.Error)
	}
	if got := attacker.received(); len(got) != 0 {
		t.Fatalf("the other host received requests (keys %q)", got)
	}

	// Other fields may change with the key kept ("********" or omitted).
	for _, body := range []string{
		`{"config":{"sync_interval_seconds":600,"service_role_key":"********"}}`,
		`{"config":{"sync_interval_seconds":900}}`,
		`{"name":"renamed","config":{"hosted_backend_url":` + mustJSON(backend.URL) + `}}`, // unchanged URL
	} {
		if r := e.Call("PATCH", path, body, e.h...); r.Status != 200 {
			t.Fatalf("PATCH %s: %d %s", body, r.Status, r.Body)
		}
	}
	if cfg := e.getConnector(t, id)["config"].(map[string]any); cfg["sync_interval_seconds"] != float64(900) || cfg["hosted_backend_url"] != backend.URL {
		t.Fatalf("config after the PATCHes: %v", cfg)
	}

	// The URL with the key sent again: accepted, and the sync works.
	r = e.Call("PATCH", path, mustJSON(map[string]any{"config": map[string]any{
		"hosted_backend_url": backend.URL + "/rest/v1", "service_role_key": key}}), e.h...)
	if r.Status != 200 || r.JSON(t)["config"].(map[string]any)["hosted_backend_url"] != backend.URL+"/rest/v1" {
		t.Fatalf("PATCH url and key: %d %s", r.Status, r.Body)
	}
	if j := e.waitJob(t, e.sync(t)); j.Status != "completed" {
		t.Fatalf("sync after moving the URL: %+v %v", j, j.Error)
	}

	// Whoever moves the URL elsewhere must bring a key, and the other host
	// gets that key, never the stored one.
	const theirs = "a-key-the-caller-knows"
	r = e.Call("PATCH", path, mustJSON(map[string]any{"config": map[string]any{
		"hosted_backend_url": attacker.URL, "service_role_key": theirs}}), e.h...)
	if r.Status != 200 {
		t.Fatalf("PATCH url and a new key: %d %s", r.Status, r.Body)
	}
	if j := e.waitJob(t, e.sync(t)); j.Status != "failed" {
		t.Fatalf("sync against the other host: %+v", j)
	}
	got := attacker.received()
	if len(got) == 0 || slices.Contains(got, key) || slices.ContainsFunc(got, func(k string) bool { return k != theirs }) {
		t.Fatalf("the other host received keys %q", got)
	}
}

func jsonEqual(a, b any) bool { return mustJSON(a) == mustJSON(b) }

// TestConfigRulesAtSave: a config that would fail only at sync, or leak, is
// refused when saved (400 validation_error naming the field, the value
// never quoted), on create and on PATCH.
func TestConfigRulesAtSave(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	const key = "a-valid-service-role-key"
	hb := func(config map[string]any) string {
		cfg := map[string]any{"hosted_backend_url": "https://project.example.com", "service_role_key": key}
		for k, v := range config {
			cfg[k] = v
		}
		return mustJSON(map[string]any{"name": "x", "type": "hosted_backend", "config": cfg})
	}
	cases := []struct {
		name, body, field string
		secret            string // must not appear in the response
	}{
		{"url with a query", hb(map[string]any{"hosted_backend_url": "http://host/x?x="}), "config.hosted_backend_url", ""},
		{"url with an empty query", hb(map[string]any{"hosted_backend_url": "http://host/x?"}), "config.hosted_backend_url", ""},
		{"url with a fragment", hb(map[string]any{"hosted_backend_url": "http://host/#x"}), "config.hosted_backend_url", ""},
		{"url with credentials", hb(map[string]any{"hosted_backend_url": "https://user:PASSWORD123@d.example.com"}), "config.hosted_backend_url", "PASSWORD123"},
		{"url without a host", hb(map[string]any{"hosted_backend_url": "http:///x"}), "config.hosted_backend_url", ""},
		{"short key", hb(map[string]any{"service_role_key": "k"}), "config.service_role_key", ""},
		{"7-character key", hb(map[string]any{"service_role_key": "1234567"}), "config.service_role_key", ""},
		{"the placeholder as a key", hb(map[string]any{"service_role_key": "********"}), "config.service_role_key", ""},
		{"schema pg_catalog", hb(map[string]any{"destination_schema": "pg_catalog"}), "config.destination_schema", ""},
		{"schema PG_CATALOG", hb(map[string]any{"destination_schema": "PG_CATALOG"}), "config.destination_schema", ""},
		{"schema information_schema", hb(map[string]any{"destination_schema": "information_schema"}), "config.destination_schema", ""},
		{"schema temp", hb(map[string]any{"destination_schema": "temp"}), "config.destination_schema", ""},
		{"schema system", hb(map[string]any{"destination_schema": "system"}), "config.destination_schema", ""},
		{"schema warehouse", hb(map[string]any{"destination_schema": "warehouse"}), "config.destination_schema", ""},
		{"schema _strata", hb(map[string]any{"destination_schema": "_strata"}), "config.destination_schema", ""},
		{"schema __strata_x", hb(map[string]any{"destination_schema": "__strata_x"}), "config.destination_schema", ""},
		// Strata's own property, whatever the type's schema allows.
		{"example type, schema pg_catalog", `{"name":"x","type":"example_numbers","config":{"destination_schema":"pg_catalog"}}`, "config.destination_schema", ""},
		{"example type, schema Temp", `{"name":"x","type":"example_numbers","config":{"destination_schema":"Temp"}}`, "config.destination_schema", ""},
	}
	for _, c := range cases {
		r := e.Call("POST", "/api/data-platform/connectors", c.body, e.h...)
		testenv.ExpectError(t, r, 400, "validation_error")
		msg := r.JSON(t)["message"].(string)
		if !strings.Contains(msg, `"`+c.field+`"`) || (c.secret != "" && strings.Contains(string(r.Body), c.secret)) {
			t.Errorf("%s: message %q", c.name, msg)
		}
	}
	if strings.Contains(e.Logs.String(), "PASSWORD123") {
		t.Error("the URL's password was logged")
	}
	var list []any
	e.Call("GET", "/api/data-platform/connectors", "", e.h...).Decode(t, &list)
	if len(list) != 0 {
		t.Fatalf("refused configs were stored: %v", list)
	}

	// The same on PATCH; the stored config stays.
	r := e.Call("POST", "/api/data-platform/connectors", hb(map[string]any{"sync_interval_seconds": 600}), e.h...)
	if r.Status != 201 {
		t.Fatalf("create: %d %s", r.Status, r.Body)
	}
	id := r.JSON(t)["id"].(string)
	before := e.getConnector(t, id)
	for _, patch := range []map[string]any{
		{"hosted_backend_url": "https://user:PASSWORD123@d.example.com", "service_role_key": key},
		{"hosted_backend_url": "http://host/x?x=", "service_role_key": key},
		{"destination_schema": "pg_catalog"},
		{"destination_schema": "main"}, // allowed: the default
		{"service_role_key": "short"},
	} {
		r := e.Call("PATCH", "/api/data-platform/connectors/"+id, mustJSON(map[string]any{"config": patch}), e.h...)
		if patch["destination_schema"] == "main" {
			if r.Status != 200 {
				t.Fatalf("destination_schema main: %d %s", r.Status, r.Body)
			}
			e.Call("PATCH", "/api/data-platform/connectors/"+id, `{"config":{"destination_schema":null}}`, e.h...)
			continue
		}
		testenv.ExpectError(t, r, 400, "validation_error")
		if strings.Contains(string(r.Body), "PASSWORD123") {
			t.Errorf("PATCH %v: the response quotes the password: %s", patch, r.Body)
		}
	}
	if after := e.getConnector(t, id); !jsonEqual(after["config"], before["config"]) {
		t.Fatalf("refused PATCHes changed the config:\nbefore %v\nafter  %v", before["config"], after["config"])
	}

	// A member set to null takes its default again, as on create.
	e.Clock.Advance(time.Minute)
	r = e.Call("PATCH", "/api/data-platform/connectors/"+id, `{"config":{"sync_interval_seconds":null}}`,
		append(e.h, "Content-Type", "application/merge-patch+json")...)
	if r.Status != 200 || r.JSON(t)["config"].(map[string]any)["sync_interval_seconds"] != float64(300) || r.JSON(t)["updatedAt"] == before["updatedAt"] {
		t.Fatalf("PATCH sync_interval_seconds null: %d %s", r.Status, r.Body)
	}
	if cfg := e.getConnector(t, id)["config"].(map[string]any); cfg["sync_interval_seconds"] != float64(300) {
		t.Fatalf("stored sync_interval_seconds after null: %v", cfg["sync_interval_seconds"])
	}
	// Already at its default: setting it to null again changes nothing.
	updated := e.getConnector(t, id)["updatedAt"]
	e.Clock.Advance(time.Minute)
	if r := e.Call("PATCH", "/api/data-platform/connectors/"+id, `{"config":{"sync_interval_seconds":null}}`, e.h...); r.Status != 200 || r.JSON(t)["updatedAt"] != updated {
		t.Fatalf("no-op null PATCH: %d %s", r.Status, r.Body)
	}
}

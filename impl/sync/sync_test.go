package sync_test

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stratahq/strata/impl/principal"
	"github.com/stratahq/strata/impl/server"
	"github.com/stratahq/strata/impl/testenv"
)

// pluginDir holds real plugin binaries built once for the package's tests.
var pluginDir string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "strata-plugins-")
	if err != nil {
		panic(err)
	}
	pluginDir = dir
	for name, pkg := range map[string]string{
		"strata-connector-example_numbers": "github.com/stratahq/strata/plugins/examples/numbers",
		"strata-connector-hosted_backend":  "github.com/stratahq/strata/plugins/hostedbackend/cmd/strata-connector-hosted_backend",
	} {
		build := exec.Command("go", "build", "-o", filepath.Join(dir, name), pkg)
		if out, err := build.CombinedOutput(); err != nil {
			fmt.Fprintf(os.Stderr, "build plugin %s: %v\n%s", name, err, out)
			os.Exit(1)
		}
	}
	code := m.Run()
	_ = os.RemoveAll(dir)
	os.Exit(code)
}

func withPlugins(c *server.Config) { c.PluginDir = pluginDir }

type env struct {
	*testenv.Env
	h []string
}

func newEnv(t testing.TB) env {
	t.Helper()
	e := testenv.New(t, withPlugins)
	_, tn := e.User("sync@example.com", "correct horse", principal.TierPro)
	s := e.SignIn("sync@example.com", "correct horse")
	return env{e, append(testenv.Bearer(s.AccessToken), "X-Tenant-Id", tn.ID.String())}
}

type job struct {
	JobID       string   `json:"jobId"`
	Status      string   `json:"status"`
	Progress    float64  `json:"progress"`
	StartedAt   string   `json:"startedAt"`
	CompletedAt *string  `json:"completedAt"`
	Error       *string  `json:"error"`
	Connectors  []result `json:"connectors"`
}

type result struct {
	ConnectorID string `json:"connectorId"`
	Status      string `json:"status"`
	Rows        int64  `json:"rows"`
	Error       *string
	Tables      []struct {
		Name string
		Rows int64
	}
}

func (e env) createConnector(t testing.TB, name string, count int) string {
	t.Helper()
	r := e.Call("POST", "/api/data-platform/connectors", fmt.Sprintf(`{"name":%q,"type":"example_numbers","config":{"count":%d}}`, name, count), e.h...)
	if r.Status != 201 {
		t.Fatalf("create connector: %d %s", r.Status, r.Body)
	}
	return r.JSON(t)["id"].(string)
}

// waitJob polls a job until it ends, checking that progress never decreases.
func (e env) waitJob(t testing.TB, id string) job {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	last := -1.0
	for {
		e.Clock.Advance(time.Second) // the data-platform quota refills
		var j job
		r := e.Call("GET", "/api/data-platform/sync/"+id, "", e.h...)
		if r.Status != 200 {
			t.Fatalf("poll job: %d %s", r.Status, r.Body)
		}
		r.Decode(t, &j)
		if j.Progress < last {
			t.Fatalf("progress went from %v to %v", last, j.Progress)
		}
		last = j.Progress
		if j.Status == "completed" || j.Status == "failed" {
			return j
		}
		if time.Now().After(deadline) {
			t.Fatalf("job %s still %s after 60 s", id, j.Status)
		}
		time.Sleep(20 * time.Millisecond) // polling interval
	}
}

func (e env) sync(t testing.TB) string {
	t.Helper()
	r := e.Call("POST", "/api/data-platform/sync", "", e.h...)
	if r.Status != 202 {
		t.Fatalf("start sync: %d %s", r.Status, r.Body)
	}
	var started job
	r.Decode(t, &started)
	if len(started.JobID) != 32 || started.StartedAt == "" || (started.Status != "pending" && started.Status != "running") {
		t.Fatalf("started %+v", started)
	}
	return started.JobID
}

func (e env) query(t testing.TB, sql string) []map[string]any {
	t.Helper()
	body, _ := json.Marshal(map[string]string{"sql": sql})
	r := e.Call("POST", "/api/data-platform/query", string(body), e.h...)
	if r.Status != 200 {
		t.Fatalf("query %s: %d %s", sql, r.Status, r.Body)
	}
	var res struct{ Rows []map[string]any }
	r.Decode(t, &res)
	return res.Rows
}

func TestConnectorTypesAndValidation(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	var types struct {
		Data []struct {
			Type         string
			Available    bool
			ConfigSchema map[string]any
		}
	}
	e.Call("GET", "/api/data-platform/connector-types", "", e.h...).Decode(t, &types)
	avail := map[string]bool{}
	for _, ty := range types.Data {
		avail[ty.Type] = ty.Available
	}
	if !avail["example_numbers"] || !avail["hosted_backend"] || avail["relational_pg"] || len(types.Data) != 8 {
		t.Fatalf("types: %+v", types.Data)
	}
	for body, want := range map[string]struct {
		status int
		code   string
	}{
		`{"name":"x","type":"relational_pg","config":{}}`:                  {422, "connector_type_unavailable"},
		`{"name":"x","type":"no_such_type","config":{}}`:                   {400, "validation_error"},
		`{"name":"x","type":"example_numbers","config":{"count":-1}}`:      {400, "validation_error"},
		`{"name":"x","type":"example_numbers","config":{"colour":"blue"}}`: {400, "validation_error"},
		`{"name":"","type":"example_numbers","config":{}}`:                 {400, "validation_error"},
		`{"name":"x","type":"example_numbers"}`:                            {400, "validation_error"},
		`{"name":"x","type":"example_numbers","config":{},"extra":true}`:   {400, "validation_error"},
	} {
		r := e.Call("POST", "/api/data-platform/connectors", body, e.h...)
		testenv.ExpectError(t, r, want.status, want.code)
		if want.code == "validation_error" && strings.Contains(body, "count") && !strings.Contains(r.JSON(t)["message"].(string), "count") {
			t.Errorf("message %q does not name the field", r.JSON(t)["message"])
		}
	}
}

func TestConnectorCRUD(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	id := e.createConnector(t, "numbers", 10)
	var list []map[string]any
	e.Call("GET", "/api/data-platform/connectors", "", e.h...).Decode(t, &list)
	if len(list) != 1 || list[0]["id"] != id || list[0]["enabled"] != true || list[0]["config"].(map[string]any)["batch_size"] != float64(256) {
		t.Fatalf("list: %+v", list)
	}
	created := list[0]["updatedAt"]
	e.Clock.Advance(time.Minute)
	// A PATCH that changes nothing keeps updatedAt.
	r := e.Call("PATCH", "/api/data-platform/connectors/"+id, `{"enabled":true,"config":{"count":10}}`, e.h...)
	if r.Status != 200 || r.JSON(t)["updatedAt"] != created {
		t.Fatalf("no-op patch: %d %s", r.Status, r.Body)
	}
	// Merge patch: count changes; null removes a key, which takes its
	// default again (as on create).
	r = e.Call("PATCH", "/api/data-platform/connectors/"+id, `{"config":{"batch_size":512}}`, e.h...)
	if r.Status != 200 || r.JSON(t)["config"].(map[string]any)["batch_size"] != float64(512) {
		t.Fatalf("patch batch_size: %d %s", r.Status, r.Body)
	}
	r = e.Call("PATCH", "/api/data-platform/connectors/"+id, `{"enabled":false,"name":"renamed","config":{"count":20,"batch_size":null}}`,
		append(e.h, "Content-Type", "application/merge-patch+json")...)
	m := r.JSON(t)
	cfg := m["config"].(map[string]any)
	if r.Status != 200 || m["enabled"] != false || m["name"] != "renamed" || cfg["count"] != float64(20) || cfg["batch_size"] != float64(256) || m["updatedAt"] == created {
		t.Fatalf("patch: %d %s", r.Status, r.Body)
	}
	testenv.ExpectError(t, e.Call("PATCH", "/api/data-platform/connectors/"+id, `{"config":{"count":"many"}}`, e.h...), 400, "validation_error")
	testenv.ExpectError(t, e.Call("PATCH", "/api/data-platform/connectors/not-an-id", `{"name":"x"}`, e.h...), 404, "connector_not_found")
	testenv.ExpectError(t, e.Call("PATCH", "/api/data-platform/connectors/6f1c2d3e-4b5a-4c6d-8e7f-9a0b1c2d3e4f", `{"name":"x"}`, e.h...), 404, "connector_not_found")
	if r := e.Call("DELETE", "/api/data-platform/connectors/"+id, "", e.h...); r.Status != 204 {
		t.Fatalf("delete: %d", r.Status)
	}
	testenv.ExpectError(t, e.Call("DELETE", "/api/data-platform/connectors/"+id, "", e.h...), 404, "connector_not_found")

	// Another tenant cannot see or touch a connector.
	id2 := e.createConnector(t, "mine", 5)
	e.User("intruder@example.com", "correct horse", principal.TierPro)
	s := e.SignIn("intruder@example.com", "correct horse")
	var me struct {
		AppMetadata struct {
			TenantID string `json:"tenant_id"`
		} `json:"app_metadata"`
	}
	e.Call("GET", "/api/auth/v1/user", "", testenv.Bearer(s.AccessToken)...).Decode(t, &me)
	ih := append(testenv.Bearer(s.AccessToken), "X-Tenant-Id", me.AppMetadata.TenantID)
	testenv.ExpectError(t, e.Call("DELETE", "/api/data-platform/connectors/"+id2, "", ih...), 404, "connector_not_found")
	var theirs []map[string]any
	e.Call("GET", "/api/data-platform/connectors", "", ih...).Decode(t, &theirs)
	if len(theirs) != 0 {
		t.Fatalf("another tenant lists %d connectors", len(theirs))
	}
}

func TestSyncEndToEnd(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	// With no connectors, a job completes at once.
	j := e.waitJob(t, e.sync(t))
	if j.Status != "completed" || j.Progress != 100 || j.CompletedAt == nil || len(j.Connectors) != 0 {
		t.Fatalf("empty sync: %+v", j)
	}

	id := e.createConnector(t, "numbers", 2500)
	j = e.waitJob(t, e.sync(t))
	if j.Status != "completed" || j.Progress != 100 || j.Error != nil || len(j.Connectors) != 1 ||
		j.Connectors[0].Rows != 2500 || j.Connectors[0].ConnectorID != id || j.Connectors[0].Tables[0].Name != "numbers" {
		t.Fatalf("sync: %+v", j)
	}
	rows := e.query(t, "SELECT count(*) AS n, sum(square) AS s, max(label) AS l FROM numbers")
	if rows[0]["n"] != float64(2500) {
		t.Fatalf("synced rows: %+v", rows)
	}
	var schema struct {
		Tables []struct {
			Name     string
			RowCount int
		}
	}
	e.Call("GET", "/api/data-platform/schema", "", e.h...).Decode(t, &schema)
	if len(schema.Tables) != 1 || schema.Tables[0].Name != "numbers" || schema.Tables[0].RowCount != 2500 {
		t.Fatalf("schema after sync: %+v", schema.Tables)
	}

	// Re-sync after a config change replaces the table.
	e.Call("PATCH", "/api/data-platform/connectors/"+id, `{"config":{"count":100}}`, e.h...)
	e.waitJob(t, e.sync(t))
	if rows := e.query(t, "SELECT count(*) AS n FROM numbers"); rows[0]["n"] != float64(100) {
		t.Fatalf("after re-sync: %+v", rows)
	}

	// A second connector producing the same table fails with a clear error;
	// the first one's table is untouched.
	e.createConnector(t, "clash", 7)
	j = e.waitJob(t, e.sync(t))
	if j.Status != "failed" || j.Error == nil || !strings.Contains(*j.Error, "owned by another connector") {
		t.Fatalf("clash: %+v", j)
	}
	if rows := e.query(t, "SELECT count(*) AS n FROM numbers"); rows[0]["n"] != float64(100) {
		t.Fatalf("the owner's table changed: %+v", rows)
	}

	// Deleting the connector keeps its table.
	e.Call("DELETE", "/api/data-platform/connectors/"+id, "", e.h...)
	if rows := e.query(t, "SELECT count(*) AS n FROM numbers"); rows[0]["n"] != float64(100) {
		t.Fatalf("table after connector delete: %+v", rows)
	}

	testenv.ExpectError(t, e.Call("GET", "/api/data-platform/sync/0123456789abcdef0123456789abcdef", "", e.h...), 404, "job_not_found")
	testenv.ExpectError(t, e.Call("GET", "/api/data-platform/sync/nope", "", e.h...), 404, "job_not_found")
}

func TestSyncIsCoalescedAndInterruptedJobsFailOnRestart(t *testing.T) {
	t.Parallel()
	dataDir := t.TempDir()
	cfg := func(c *server.Config) { withPlugins(c); c.DataDir = dataDir }
	first := testenv.New(t, cfg)
	_, tn := first.User("restart@example.com", "correct horse", principal.TierPro)
	s := first.SignIn("restart@example.com", "correct horse")
	e := env{first, append(testenv.Bearer(s.AccessToken), "X-Tenant-Id", tn.ID.String())}
	e.createConnector(t, "big", 20_000_000)
	a := e.sync(t)
	if b := e.sync(t); b != a {
		t.Fatalf("a second POST /sync started %s while %s runs", b, a)
	}
	// Wait until it runs, then stop the server under it.
	deadline := time.Now().Add(30 * time.Second)
	for {
		var j job
		e.Call("GET", "/api/data-platform/sync/"+a, "", e.h...).Decode(t, &j)
		if j.Status == "running" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("job never ran: %+v", j)
		}
		time.Sleep(10 * time.Millisecond) // polling interval
	}
	first.Srv.Close()
	_ = first.App.Close()

	second := testenv.New(t, cfg)
	s2 := second.SignIn("restart@example.com", "correct horse")
	e2 := env{second, append(testenv.Bearer(s2.AccessToken), "X-Tenant-Id", tn.ID.String())}
	var j job
	e2.Call("GET", "/api/data-platform/sync/"+a, "", e2.h...).Decode(t, &j)
	if j.Status != "failed" || j.Error == nil || *j.Error != "interrupted" || j.CompletedAt == nil {
		t.Fatalf("after restart: %+v", j)
	}
	// A new sync can run after it.
	if c := e2.sync(t); c == a {
		t.Fatal("the interrupted job was returned again")
	}
}

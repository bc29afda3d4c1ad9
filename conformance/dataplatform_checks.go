package conformance

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
)

func dataPlatformChecks() []Check {
	return []Check{
		{"data-platform/query", checkQuery},
		{"data-platform/query-guard", checkQueryGuard},
		{"data-platform/query-timeout", checkQueryTimeout},
		{"data-platform/schema", checkSchema},
		{"data-platform/connector-types", checkConnectorTypes},
		{"data-platform/connectors-crud", checkConnectorsCRUD},
		{"data-platform/sync-lifecycle", checkSyncLifecycle},
	}
}

// dataHeaders are the headers of a data-platform call for a session.
func dataHeaders(sess Session) http.Header {
	h := authHeader(sess.AccessToken)
	h.Set("X-Tenant-Id", sess.User.AppMetadata.TenantID)
	return h
}

func (s *Suite) query(ctx context.Context, sess Session, body string, extra ...string) (*Response, error) {
	h := dataHeaders(sess)
	for i := 0; i+1 < len(extra); i += 2 {
		h.Set(extra[i], extra[i+1])
	}
	return s.Do(ctx, Request{Method: http.MethodPost, Path: "/api/data-platform/query", Header: h, Body: []byte(body), ContentType: "application/json"})
}

func checkQuery(ctx context.Context, s *Suite) error {
	sess, err := s.SignIn(ctx)
	if err != nil {
		return err
	}
	resp, err := s.query(ctx, sess, `{"sql":"SELECT i, i * ? AS twice FROM range(5) t(i) ORDER BY i","params":{"1":2},"maxRows":3}`)
	if err != nil {
		return err
	}
	var res struct {
		Columns   []struct{ Name, Type string }
		Rows      []map[string]any
		RowCount  int
		Truncated bool
	}
	if resp.Status != 200 || json.Unmarshal(resp.Body, &res) != nil || res.RowCount != 3 || len(res.Rows) != 3 || !res.Truncated ||
		res.Rows[2]["twice"] != float64(4) || len(res.Columns) != 2 {
		return fmt.Errorf("query: %d %s", resp.Status, snippet(resp.Body))
	}
	resp, err = s.query(ctx, sess, `{"sql":"SELECT 1 AS a"}`, "Accept", "text/csv")
	if err != nil {
		return err
	}
	if resp.Status != 200 || string(resp.Body) != "a\n1\n" {
		return fmt.Errorf("CSV: %d %q", resp.Status, resp.Body)
	}
	return nil
}

func checkQueryGuard(ctx context.Context, s *Suite) error {
	sess, err := s.SignIn(ctx)
	if err != nil {
		return err
	}
	for sql, want := range map[string][2]any{
		"CREATE TABLE conformance_t (i INTEGER)":  {http.StatusForbidden, "permission_denied"},
		"SELECT 1; DROP TABLE anything":           {http.StatusForbidden, "permission_denied"},
		"SELECT * FROM read_csv('/etc/passwd')":   {http.StatusForbidden, "permission_denied"},
		"ATTACH '/tmp/x.duckdb' AS x":             {http.StatusForbidden, "permission_denied"},
		"SELECT * FROM conformance_no_such_table": {http.StatusNotFound, "table_not_found"},
		"SELEC 1": {http.StatusBadRequest, "query_execution_error"},
	} {
		body, _ := json.Marshal(map[string]string{"sql": sql})
		resp, err := s.query(ctx, sess, string(body))
		if err != nil {
			return err
		}
		if err := resp.ExpectError(want[0].(int), want[1].(string)); err != nil {
			return fmt.Errorf("%s: %w", sql, err)
		}
	}
	resp, err := s.query(ctx, sess, `{"sql":"SELECT 1","maxRows":100001}`)
	if err != nil {
		return err
	}
	return resp.ExpectError(http.StatusBadRequest, "validation_error")
}

func checkQueryTimeout(ctx context.Context, s *Suite) error {
	sess, err := s.SignIn(ctx)
	if err != nil {
		return err
	}
	start := time.Now()
	resp, err := s.query(ctx, sess, `{"sql":"SELECT count(*) FROM range(100000000) a, range(100000000) b","timeoutSeconds":1}`)
	if err != nil {
		return err
	}
	if err := resp.ExpectError(http.StatusRequestTimeout, "query_timeout"); err != nil {
		return err
	}
	if d := time.Since(start); d > 10*time.Second {
		return fmt.Errorf("a 1 s timeout answered after %v", d)
	}
	return nil
}

func checkSchema(ctx context.Context, s *Suite) error {
	sess, err := s.SignIn(ctx)
	if err != nil {
		return err
	}
	resp, err := s.Do(ctx, Request{Method: http.MethodGet, Path: "/api/data-platform/schema", Header: dataHeaders(sess)})
	if err != nil {
		return err
	}
	if resp.Status != 200 {
		return fmt.Errorf("schema: %d %s", resp.Status, snippet(resp.Body))
	}
	return nil
}

func checkConnectorTypes(ctx context.Context, s *Suite) error {
	sess, err := s.SignIn(ctx)
	if err != nil {
		return err
	}
	resp, err := s.Do(ctx, Request{Method: http.MethodGet, Path: "/api/data-platform/connector-types", Header: dataHeaders(sess)})
	if err != nil {
		return err
	}
	var types struct {
		Data []struct {
			Type      string
			Available bool
		}
	}
	if resp.Status != 200 || json.Unmarshal(resp.Body, &types) != nil {
		return fmt.Errorf("connector types: %d", resp.Status)
	}
	seen := map[string]bool{}
	for _, t := range types.Data {
		seen[t.Type] = true
	}
	for _, want := range []string{"hosted_backend", "relational_pg", "relational_my", "cloud_warehouse_1", "cloud_warehouse_2", "csv", "api"} {
		if !seen[want] {
			return fmt.Errorf("connector type %s is not listed", want)
		}
	}
	return nil
}

func checkConnectorsCRUD(ctx context.Context, s *Suite) error {
	sess, err := s.SignIn(ctx)
	if err != nil {
		return err
	}
	h := dataHeaders(sess)
	// A coming-soon type: 422 (unless a plugin for it is installed there).
	resp, err := s.Do(ctx, Request{Method: http.MethodPost, Path: "/api/data-platform/connectors", Header: h,
		Body: []byte(`{"name":"x","type":"cloud_warehouse_2","config":{}}`), ContentType: "application/json"})
	if err != nil {
		return err
	}
	if resp.Status != 201 {
		if err := resp.ExpectError(http.StatusUnprocessableEntity, "connector_type_unavailable"); err != nil {
			return err
		}
	}
	resp, err = s.Do(ctx, Request{Method: http.MethodPost, Path: "/api/data-platform/connectors", Header: h,
		Body: []byte(`{"name":"x","type":"no_such_type","config":{}}`), ContentType: "application/json"})
	if err != nil {
		return err
	}
	if err := resp.ExpectError(http.StatusBadRequest, "validation_error"); err != nil {
		return err
	}
	const secret = "conformance-secret-key"
	resp, err = s.Do(ctx, Request{Method: http.MethodPost, Path: "/api/data-platform/connectors", Header: h,
		Body: jsonBody(map[string]any{"name": "conformance", "type": "hosted_backend", "enabled": false,
			"config": map[string]any{"hosted_backend_url": "https://backend.invalid", "service_role_key": secret}}), ContentType: "application/json"})
	if err != nil {
		return err
	}
	if resp.Status == http.StatusUnprocessableEntity {
		return nil // hosted_backend is not installed on this server: nothing more to check here
	}
	var c struct {
		ID     string
		Config map[string]any
	}
	if resp.Status != 201 || json.Unmarshal(resp.Body, &c) != nil || c.Config["service_role_key"] != "********" || strings.Contains(string(resp.Body), secret) {
		return fmt.Errorf("create: %d %s", resp.Status, snippet(resp.Body))
	}
	steps := []struct {
		req    Request
		status int
		code   string
	}{
		{Request{Method: http.MethodGet, Path: "/api/data-platform/connectors", Header: h}, 200, ""},
		{Request{Method: http.MethodPatch, Path: "/api/data-platform/connectors/" + c.ID, Header: h, Body: []byte(`{"name":"renamed","config":{"service_role_key":"********"}}`), ContentType: "application/json"}, 200, ""},
		{Request{Method: http.MethodPatch, Path: "/api/data-platform/connectors/" + c.ID, Header: h, Body: []byte(`{"config":{"hosted_backend_url":42}}`), ContentType: "application/merge-patch+json"}, 400, "validation_error"},
		{Request{Method: http.MethodDelete, Path: "/api/data-platform/connectors/" + c.ID, Header: h}, 204, ""},
		{Request{Method: http.MethodDelete, Path: "/api/data-platform/connectors/" + c.ID, Header: h}, 404, "connector_not_found"},
	}
	for _, st := range steps {
		resp, err := s.Do(ctx, st.req)
		if err != nil {
			return err
		}
		if st.code != "" {
			if err := resp.ExpectError(st.status, st.code); err != nil {
				return fmt.Errorf("%s %s: %w", st.req.Method, st.req.Path, err)
			}
		} else if resp.Status != st.status || strings.Contains(string(resp.Body), secret) {
			return fmt.Errorf("%s %s: %d %s", st.req.Method, st.req.Path, resp.Status, snippet(resp.Body))
		}
	}
	return nil
}

// checkSyncLifecycle starts a sync and polls it to its end. With a hosted
// backend configured (Config.HostedBackendURL), the sync pulls it, and every
// table the backend serves must land in Strata with the backend's columns,
// in order, and row count: in the job's result, in /schema and in /query.
func checkSyncLifecycle(ctx context.Context, s *Suite) error {
	sess, err := s.SignIn(ctx)
	if err != nil {
		return err
	}
	h := dataHeaders(sess)
	var connectorID string
	var want []backendTable
	if s.cfg.HostedBackendURL != "" {
		if want, err = s.hostedBackendTables(ctx); err != nil {
			return err
		}
		resp, err := s.Do(ctx, Request{Method: http.MethodPost, Path: "/api/data-platform/connectors", Header: h,
			Body: jsonBody(map[string]any{"name": "conformance sync", "type": "hosted_backend",
				"config": map[string]any{"hosted_backend_url": s.cfg.HostedBackendURL, "service_role_key": s.cfg.ServiceRoleKey}}), ContentType: "application/json"})
		if err != nil {
			return err
		}
		var c struct{ ID string }
		if resp.Status != 201 || json.Unmarshal(resp.Body, &c) != nil {
			return fmt.Errorf("create hosted_backend connector: %d %s", resp.Status, snippet(resp.Body))
		}
		connectorID = c.ID
		defer func() {
			ctx := context.WithoutCancel(ctx)
			if sess, err := s.SignIn(ctx); err == nil { // the first session may have expired by now
				_, _ = s.Do(ctx, Request{Method: http.MethodDelete, Path: "/api/data-platform/connectors/" + connectorID, Header: dataHeaders(sess)})
			}
		}()
	}
	resp, err := s.Do(ctx, Request{Method: http.MethodPost, Path: "/api/data-platform/sync", Header: h})
	if err != nil {
		return err
	}
	var started struct{ JobID, Status string }
	if resp.Status != http.StatusAccepted || json.Unmarshal(resp.Body, &started) != nil || started.JobID == "" {
		return fmt.Errorf("start sync: %d %s", resp.Status, snippet(resp.Body))
	}
	deadline := time.Now().Add(5 * time.Minute)
	last := -1.0
	var job syncJob
	for {
		resp, err := s.Do(ctx, Request{Method: http.MethodGet, Path: "/api/data-platform/sync/" + started.JobID, Header: h})
		if err != nil {
			return err
		}
		if resp.Status == http.StatusUnauthorized && resp.ExpectError(http.StatusUnauthorized, "TOKEN_EXPIRED") == nil {
			// A sync may outlast a short-lived access token: sign in again, as a client would refresh.
			if sess, err = s.SignIn(ctx); err != nil {
				return err
			}
			h = dataHeaders(sess)
			continue
		}
		job = syncJob{}
		if resp.Status != 200 || json.Unmarshal(resp.Body, &job) != nil {
			return fmt.Errorf("poll sync: %d %s", resp.Status, snippet(resp.Body))
		}
		if job.Progress < last {
			return fmt.Errorf("progress went down from %v to %v", last, job.Progress)
		}
		last = job.Progress
		if job.Status == "completed" {
			if job.Progress != 100 {
				return fmt.Errorf("completed with progress %v", job.Progress)
			}
			break
		}
		if job.Status == "failed" {
			if connectorID == "" { // a failure of someone else's connector of this tenant is not ours to judge
				break
			}
			return fmt.Errorf("sync failed: %v", deref(job.Error))
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("sync still %s after 5 minutes", job.Status)
		}
		time.Sleep(250 * time.Millisecond) // polling interval
	}
	if sess, err = s.SignIn(ctx); err != nil {
		return err
	}
	h = dataHeaders(sess)
	if connectorID != "" {
		if err := s.checkSynced(ctx, sess, job, connectorID, want); err != nil {
			return err
		}
	}
	resp, err = s.Do(ctx, Request{Method: http.MethodGet, Path: "/api/data-platform/sync/00000000000000000000000000000000", Header: h})
	if err != nil {
		return err
	}
	return resp.ExpectError(http.StatusNotFound, "job_not_found")
}

type syncJob struct {
	Status     string
	Progress   float64
	Error      *string
	Connectors []struct {
		ConnectorID string
		Status      string
		Tables      []struct {
			Name string
			Rows int64
		}
	}
}

// schemaTable is a table of GET /schema.
type schemaTable struct {
	Name     string
	RowCount int64
	Columns  []struct{ Name string }
}

// backendTable is a table a hosted backend serves.
type backendTable struct {
	Name    string
	Columns []string
	Rows    int64
}

// hostedBackendTables asks the hosted backend itself, over the PostgREST
// protocol the connector speaks, which tables it serves (definitions with a
// GET path in the root document), their columns in order, and their exact
// row counts (Prefer: count=exact). The sync must land exactly these.
func (s *Suite) hostedBackendTables(ctx context.Context) ([]backendTable, error) {
	root := strings.TrimRight(s.cfg.HostedBackendURL, "/") + "/rest/v1/"
	get := func(target string, prefer string) (*http.Response, []byte, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, target, nil)
		if err != nil {
			return nil, nil, err
		}
		req.Header.Set("apikey", s.cfg.ServiceRoleKey)
		req.Header.Set("Authorization", "Bearer "+s.cfg.ServiceRoleKey)
		req.Header.Set("Accept", "application/json")
		if prefer != "" {
			req.Header.Set("Prefer", prefer)
		}
		resp, err := s.client.Do(req)
		if err != nil {
			return nil, nil, fmt.Errorf("hosted backend: %w", err)
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(io.LimitReader(resp.Body, maxResponseBody))
		if err == nil && resp.StatusCode/100 != 2 {
			err = fmt.Errorf("hosted backend: GET %s: %d %s", req.URL.Path, resp.StatusCode, snippet(body))
		}
		return resp, body, err
	}
	_, body, err := get(root, "")
	if err != nil {
		return nil, err
	}
	var doc struct {
		Paths       map[string]map[string]json.RawMessage
		Definitions map[string]struct{ Properties json.RawMessage }
	}
	if err := json.Unmarshal(body, &doc); err != nil {
		return nil, fmt.Errorf("hosted backend: root document: %w", err)
	}
	var tables []backendTable
	for name, def := range doc.Definitions {
		if doc.Paths["/"+name]["get"] == nil {
			continue
		}
		cols, err := objectKeys(def.Properties)
		if err != nil {
			return nil, fmt.Errorf("hosted backend: definition %s: %w", name, err)
		}
		resp, _, err := get(root+url.PathEscape(name)+"?limit=1", "count=exact")
		if err != nil {
			return nil, err
		}
		cr := resp.Header.Get("Content-Range")
		_, total, _ := strings.Cut(cr, "/")
		n, err := strconv.ParseInt(total, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("hosted backend: %s: Content-Range %q has no exact count", name, cr)
		}
		tables = append(tables, backendTable{Name: name, Columns: cols, Rows: n})
	}
	if len(tables) == 0 {
		return nil, errors.New("hosted backend serves no table: nothing for the sync check to compare")
	}
	slices.SortFunc(tables, func(a, b backendTable) int { return strings.Compare(a.Name, b.Name) })
	return tables, nil
}

// objectKeys returns the keys of a JSON object in document order.
func objectKeys(raw json.RawMessage) ([]string, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, errors.New("not a JSON object")
	}
	var keys []string
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, err
		}
		keys = append(keys, t.(string))
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return nil, err
		}
	}
	return keys, nil
}

// checkSynced compares what the sync of connectorID landed with the
// backend's tables: the job's per-table row counts, /schema's tables,
// columns and row counts, and count(*) through /query.
func (s *Suite) checkSynced(ctx context.Context, sess Session, job syncJob, connectorID string, want []backendTable) error {
	synced := map[string]int64{}
	for _, c := range job.Connectors {
		if c.ConnectorID != connectorID {
			continue
		}
		for _, t := range c.Tables {
			synced[t.Name] = t.Rows
		}
	}
	resp, err := s.Do(ctx, Request{Method: http.MethodGet, Path: "/api/data-platform/schema", Header: dataHeaders(sess)})
	if err != nil {
		return err
	}
	var schema struct{ Tables []schemaTable }
	if resp.Status != 200 || json.Unmarshal(resp.Body, &schema) != nil {
		return fmt.Errorf("schema after the sync: %d %s", resp.Status, snippet(resp.Body))
	}
	var problems []string
	for _, t := range want {
		if n, ok := synced[t.Name]; !ok || n != t.Rows {
			problems = append(problems, fmt.Sprintf("%s: the job reports %d rows (listed: %v), the backend serves %d", t.Name, n, ok, t.Rows))
		}
		i := slices.IndexFunc(schema.Tables, func(st schemaTable) bool { return st.Name == t.Name })
		if i < 0 {
			problems = append(problems, fmt.Sprintf("%s: not in /schema", t.Name))
			continue
		}
		st := schema.Tables[i]
		var cols []string
		for _, c := range st.Columns {
			cols = append(cols, c.Name)
		}
		if !slices.Equal(cols, t.Columns) {
			problems = append(problems, fmt.Sprintf("%s: /schema columns %v, the backend's %v", t.Name, cols, t.Columns))
		}
		if st.RowCount != t.Rows {
			problems = append(problems, fmt.Sprintf("%s: /schema rowCount %d, the backend serves %d", t.Name, st.RowCount, t.Rows))
		}
		resp, err := s.query(ctx, sess, string(jsonBody(map[string]string{"sql": `SELECT count(*) AS n FROM "` + strings.ReplaceAll(t.Name, `"`, `""`) + `"`})))
		if err != nil {
			return err
		}
		var res struct{ Rows []map[string]any }
		if resp.Status != 200 || json.Unmarshal(resp.Body, &res) != nil || len(res.Rows) != 1 {
			problems = append(problems, fmt.Sprintf("%s: count through /query: %d %s", t.Name, resp.Status, snippet(resp.Body)))
		} else if got := res.Rows[0]["n"]; got != float64(t.Rows) {
			problems = append(problems, fmt.Sprintf("%s: count(*) through /query is %v, the backend serves %d", t.Name, got, t.Rows))
		}
	}
	if len(problems) > 0 {
		return errors.New(strings.Join(problems, "\n"))
	}
	return nil
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

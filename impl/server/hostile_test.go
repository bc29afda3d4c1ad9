package server_test

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/stratahq/strata/impl/principal"
	"github.com/stratahq/strata/impl/tenancy"
	"github.com/stratahq/strata/impl/testenv"
	"github.com/stratahq/strata/openapi"
)

// hostilePathValues stand in for every path parameter.
var hostilePathValues = []string{
	"not-a-uuid", "00000000-0000-0000-0000-000000000000", "-1",
	"99999999999999999999999", "%27%3B--", "%ff%fe", strings.Repeat("a", 2000),
}

// hostileQueryValues are given to every query parameter, one at a time.
var hostileQueryValues = []string{
	"", "-1", "0", "abc", "99999999999999999999999", "%ff", "1e309", strings.Repeat("z", 5000),
}

// hostileBodies are sent as application/json to every operation that takes
// a body, plus one per schema property with a value of the wrong type.
var hostileBodies = []string{
	"{", "null", "[]", `"text"`, "1", `{"unknown":true}`,
	strings.Repeat("[", 10000) + strings.Repeat("]", 10000),
	`{"a":"\ud800"}`,
}

// Every operation of the contract, given malformed path parameters, query
// parameters and bodies, answers a 4xx in the shared error shape (or a
// success where the input happens to be acceptable), never a 5xx.
func TestHostileInputNeverGets5xx(t *testing.T) {
	t.Parallel()
	doc, err := openapi.Load(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	e := testenv.New(t, nil)
	for _, path := range doc.Paths.InMatchingOrder() {
		for method, op := range doc.Paths.Value(path).Operations() {
			t.Run(method+" "+path, func(t *testing.T) {
				// A fresh Pro user per operation keeps the sweep within its
				// request quota.
				email := strings.ToLower(op.OperationID) + "@example.com"
				_, tenant := e.User(email, "correct horse", principal.TierPro)
				s := e.SignIn(email, "correct horse")
				headers := []string{"Authorization", "Bearer " + s.AccessToken, tenancy.TenantHeader, tenant.ID.String()}
				sweep(t, e, method, path, op, headers)
			})
		}
	}
}

// sweep sends the hostile inputs to one operation.
func sweep(t *testing.T, e *testenv.Env, method, path string, op *openapi3.Operation, headers []string) {
	check := func(what, target, body string) {
		t.Helper()
		r := e.Call(method, target, body, headers...)
		if r.Status >= 500 {
			t.Errorf("%s: %d %s", what, r.Status, r.Body)
			return
		}
		if r.Status >= 400 && r.Status != http.StatusUpgradeRequired {
			var shape struct {
				StatusCode int    `json:"statusCode"`
				Error      string `json:"error"`
				Message    string `json:"message"`
			}
			if err := json.Unmarshal(r.Body, &shape); err != nil || shape.StatusCode != r.Status || shape.Error == "" || shape.Message == "" {
				t.Errorf("%s: %d, not the error shape: %s", what, r.Status, r.Body)
			}
		}
	}
	valid := fillPath(path, "00000000-0000-0000-0000-000000000001")
	for _, v := range hostilePathValues {
		if strings.Contains(path, "{") {
			check("path "+v, fillPath(path, v), "")
		}
	}
	for _, p := range op.Parameters {
		if p.Value.In != "query" {
			continue
		}
		for _, v := range hostileQueryValues {
			check("query "+p.Value.Name+"="+v, valid+"?"+p.Value.Name+"="+v, "")
		}
	}
	if op.RequestBody == nil {
		return
	}
	bodies := slices.Clone(hostileBodies)
	if mt := op.RequestBody.Value.Content.Get("application/json"); mt != nil && mt.Schema != nil {
		for name := range mt.Schema.Value.Properties {
			for _, wrong := range []string{"{}", "[]", "null", "12345678901234567890", `"\u0000"`} {
				bodies = append(bodies, `{"`+name+`":`+wrong+`}`)
			}
		}
	}
	for _, b := range bodies {
		what := b
		if len(what) > 40 {
			what = what[:40] + "…"
		}
		check("body "+what, valid, b)
	}
}

// fillPath replaces every {parameter} of path with v.
func fillPath(path, v string) string {
	var b strings.Builder
	for {
		i := strings.IndexByte(path, '{')
		if i < 0 {
			return b.String() + path
		}
		j := strings.IndexByte(path[i:], '}')
		b.WriteString(path[:i])
		b.WriteString(v)
		path = path[i+j+1:]
	}
}

// TestJSONTextRules: a NUL character anywhere in a JSON body's text is a 400
// naming the field, and so is anything but spaces after the JSON value;
// nothing is created. The six characters \u0000 written as text (an
// escaped backslash) are ordinary text.
func TestJSONTextRules(t *testing.T) {
	t.Parallel()
	e := testenv.New(t, nil)
	s := e.NewUser("nul@example.com")
	auth := testenv.Bearer(s.AccessToken)
	for _, c := range []struct{ path, body, field string }{
		{"/api/content/notes", `{"body":"\u0000"}`, `field "body"`},
		{"/api/content/notes", `{"body":"ok","tags":["fine","a\u0000b"]}`, `field "tags.1"`},
		{"/api/content/notes", `{"title":"x\U0000","body":"ok"}`, ""}, // not JSON's escape: a schema error, not ours
		{"/api/content/folders", `{"name":"\u0000"}`, `field "name"`},
		{"/api/data-platform/query", `{"sql":"SELECT '\u0000'"}`, `field "sql"`},
	} {
		r := e.Call("POST", c.path, c.body, append(auth, "Content-Type", "application/json", "X-Tenant-Id", s.User.AppMetadata.TenantID)...)
		testenv.ExpectError(t, r, http.StatusBadRequest, "validation_error")
		var msg struct{ Message string }
		r.Decode(t, &msg)
		if c.field != "" && !strings.HasSuffix(msg.Message, c.field+": text must not contain NUL characters") {
			t.Errorf("%s %s: %s", c.path, c.body, msg.Message)
		}
	}
	var list struct{ Total int }
	e.Call("GET", "/api/content", "", auth...).Decode(t, &list)
	if list.Total != 0 {
		t.Fatalf("%d items were created", list.Total)
	}
	// So is a NUL in a query parameter, wherever the text goes.
	for _, path := range []string{"/api/content/search?q=ab%00cd", "/api/content?q=%00"} {
		r := e.Call("GET", path, "", auth...)
		testenv.ExpectError(t, r, http.StatusBadRequest, "validation_error")
		var msg struct{ Message string }
		r.Decode(t, &msg)
		if msg.Message != `invalid query parameter "q": text must not contain NUL characters` {
			t.Errorf("%s: %q", path, msg.Message)
		}
	}
	// Anything after the JSON value is refused too.
	for _, body := range []string{`{"body":"x"} {"body":"y"}`, `{"body":"x"} trailing`, `{"body":"x"}]`} {
		r := e.Call("POST", "/api/content/notes", body, auth...)
		testenv.ExpectError(t, r, http.StatusBadRequest, "validation_error")
	}
	if r := e.Call("POST", "/api/content/notes", "{\"body\":\"x\"} \n\t ", auth...); r.Status != http.StatusCreated {
		t.Fatalf("trailing spaces: %d %s", r.Status, r.Body)
	}
	var after struct{ Total int }
	e.Call("GET", "/api/content", "", auth...).Decode(t, &after)
	if after.Total != 1 {
		t.Fatalf("%d items after the trailing-data requests, want the one with trailing spaces", after.Total)
	}
	r := e.Call("POST", "/api/content/notes", `{"body":"a path: C:\\u0000"}`, append(auth, "Content-Type", "application/json")...)
	if r.Status != http.StatusCreated || !strings.Contains(string(r.Body), `C:\\u0000`) {
		t.Fatalf("escaped backslash: %d %s", r.Status, r.Body)
	}
}

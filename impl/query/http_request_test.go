package query_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stratahq/strata/impl/testenv"
)

// errorBody decodes an error response.
func errorBody(t testing.TB, r testenv.Response) (code, message string) {
	t.Helper()
	var e struct{ Error, Message string }
	if err := json.Unmarshal(r.Body, &e); err != nil {
		t.Fatalf("error body %s: %v", r.Body, err)
	}
	return e.Error, e.Message
}

// TestDeeplyNestedParamsAreRefusedFast: an array nested 1,000 deep (6 KB)
// used to keep a core busy for 15 s, past timeoutSeconds and after the
// client left, holding one of the tenant's five query slots. It is now a
// 400 naming the parameter, answered before the tenant's store is opened.
func TestDeeplyNestedParamsAreRefusedFast(t *testing.T) {
	t.Parallel()
	e := testenv.New(t, nil)
	h, tenant := tenantSession(t, e, "deep@example.com")
	body := `{"sql":"select ? as a","timeoutSeconds":5,"params":{"1":` + strings.Repeat("[", 1000) + "1" + strings.Repeat("]", 1000) + `}}`
	start := time.Now()
	r := e.Call("POST", "/api/data-platform/query", body, h...)
	took := time.Since(start)
	testenv.ExpectError(t, r, 400, "validation_error")
	if _, msg := errorBody(t, r); msg != `invalid request body: field "params.1": arrays may nest at most 4 deep` {
		t.Errorf("message %q", msg)
	}
	if took > 2*time.Second {
		t.Errorf("answered after %v", took)
	}
	if slices.Contains(e.App.Query().Stats().Tenants, tenant) {
		t.Error("the tenant's store was opened for a request refused on its parameters")
	}
	// Values the contract allows bind, with clean messages otherwise.
	var res httpResult
	r = e.Call("POST", "/api/data-platform/query", `{"sql":"select ? as a","params":{"1":[1.5,2]}}`, h...)
	r.Decode(t, &res)
	if r.Status != 200 || res.Columns[0].Type != "DOUBLE[]" {
		t.Fatalf("[1.5,2]: %d %s", r.Status, r.Body)
	}
	r = e.Call("POST", "/api/data-platform/query", `{"sql":"select $1::BIGINT[] as a","params":{"1":[1,null]}}`, h...)
	if r.Status != 200 || !strings.Contains(string(r.Body), `"rows":[{"a":[1,null]}]`) {
		t.Fatalf("[1,null]: %d %s", r.Status, r.Body)
	}
	for params, want := range map[string]string{
		`{"1":[true,1]}`:  `invalid request body: field "params.1": array elements must share a type (found boolean and number elements)`,
		`{"1":[1,"a"]}`:   `invalid request body: field "params.1": array elements must share a type (found number and string elements)`,
		`{"1":{"x":1}}`:   `invalid request body: field "params.1": must be a scalar or an array`,
		`{"1":[1.5,"a"]}`: `invalid request body: field "params.1": array elements must share a type (found number and string elements)`,
	} {
		r := e.Call("POST", "/api/data-platform/query", `{"sql":"select ? as a","params":`+params+`}`, h...)
		testenv.ExpectError(t, r, 400, "validation_error")
		if _, msg := errorBody(t, r); msg != want {
			t.Errorf("%s: message %q, want %q", params, msg, want)
		}
	}
}

package query_test

import (
	"bytes"
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/ipc"

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

// TestQueryRequestBody: the body is one JSON object (nothing after it), and
// maxRows/timeoutSeconds may be written as any JSON number with an integral
// value, as JSON Schema's integer allows.
// Data after the JSON object is refused whether or not the validator fills
// in defaults (it re-encodes the body when it does).
func TestQueryRequestBody(t *testing.T) {
	t.Parallel()
	e := testenv.New(t, nil)
	h, _ := tenantSession(t, e, "body@example.com")
	const q = `"sql":"SELECT range AS i FROM range(20)"`
	for _, tc := range []struct {
		body   string
		status int
		rows   int
		msg    string
	}{
		{`{` + q + `,"maxRows":10.0}`, 200, 10, ""},
		{`{` + q + `,"maxRows":1e1}`, 200, 10, ""},
		{`{` + q + `,"maxRows":5,"timeoutSeconds":1.0E1}`, 200, 5, ""},
		{`{` + q + `,"maxRows":10}` + "\n\t ", 200, 10, ""},
		{`{` + q + `,"maxRows":10.5}`, 400, 0, `maxRows`},
		{`{` + q + `,"timeoutSeconds":2.5}`, 400, 0, `timeoutSeconds`},
		{`{` + q + `,"params":{},"maxRows":10,"timeoutSeconds":5} trailing`, 400, 0, `invalid JSON body: unexpected data after the JSON`},
		{`{` + q + `,"params":{},"maxRows":10,"timeoutSeconds":5}{"sql":"SELECT 2"}`, 400, 0, `invalid JSON body: unexpected data after the JSON`},
		{`{` + q + `} trailing`, 400, 0, `invalid JSON body: unexpected data after the JSON`},
	} {
		r := e.Call("POST", "/api/data-platform/query", tc.body, h...)
		if tc.status != 200 {
			testenv.ExpectError(t, r, tc.status, "validation_error")
			_, msg := errorBody(t, r)
			if !strings.Contains(msg, tc.msg) || strings.Contains(msg, "Go struct") || strings.Contains(msg, "json:") {
				t.Errorf("%s: message %q, want it to contain %q", tc.body, msg, tc.msg)
			}
			continue
		}
		var res httpResult
		r.Decode(t, &res)
		if r.Status != 200 || res.RowCount != tc.rows {
			t.Errorf("%s: %d %s", tc.body, r.Status, r.Body)
		}
	}
}

// TestTruncatedHeader: every format says in X-Strata-Truncated whether rows
// beyond maxRows were left out; CSV and Arrow have no other way to say it.
func TestTruncatedHeader(t *testing.T) {
	t.Parallel()
	e := testenv.New(t, nil)
	h, _ := tenantSession(t, e, "cut@example.com")
	for _, tc := range []struct {
		accept  string
		maxRows int
		want    string
	}{
		{"text/csv", 5, "true"},
		{"text/csv", 20, "false"},
		{"application/vnd.apache.arrow.stream", 5, "true"},
		{"application/vnd.apache.arrow.stream", 20, "false"},
		{"application/json", 5, "true"},
		{"application/json", 20, "false"},
		{"text/csv", 0, "true"},
	} {
		body := `{"sql":"SELECT range AS i FROM range(20)","maxRows":` + strconv.Itoa(tc.maxRows) + `}`
		r := e.Call("POST", "/api/data-platform/query", body, append(h, "Accept", tc.accept)...)
		if r.Status != 200 || r.Header.Get("X-Strata-Truncated") != tc.want {
			t.Errorf("%s maxRows %d: %d, X-Strata-Truncated %q, want %q", tc.accept, tc.maxRows, r.Status, r.Header.Get("X-Strata-Truncated"), tc.want)
			continue
		}
		rows := 0
		switch tc.accept {
		case "text/csv":
			rows = strings.Count(string(r.Body), "\n") - 1
		case "application/json":
			var res httpResult
			r.Decode(t, &res)
			rows = res.RowCount
			if strconv.FormatBool(res.Truncated) != tc.want {
				t.Errorf("json body says truncated %v, header %s", res.Truncated, tc.want)
			}
		default:
			rdr, err := ipc.NewReader(bytes.NewReader(r.Body))
			if err != nil {
				t.Fatal(err)
			}
			for rdr.Next() {
				rows += int(rdr.RecordBatch().NumRows())
			}
			rdr.Release()
		}
		if rows != min(tc.maxRows, 20) {
			t.Errorf("%s maxRows %d: %d rows", tc.accept, tc.maxRows, rows)
		}
	}
}

// TestAcceptNegotiation: the format follows the q-values of Accept, and
// responses say that they vary with it.
func TestAcceptNegotiation(t *testing.T) {
	t.Parallel()
	e := testenv.New(t, nil)
	h, _ := tenantSession(t, e, "accept@example.com")
	for accept, want := range map[string]string{
		"application/json;q=0, text/csv":                            "text/csv; charset=utf-8",
		"text/csv;q=0.5, application/json":                          "application/json",
		"text/csv, application/json":                                "text/csv; charset=utf-8",
		"application/vnd.apache.arrow.stream;q=0.9, text/csv;q=0.8": "application/vnd.apache.arrow.stream",
		"text/*":    "text/csv; charset=utf-8",
		"*/*":       "application/json",
		"text/html": "application/json",
		"":          "application/json",
	} {
		r := e.Call("POST", "/api/data-platform/query", `{"sql":"SELECT 1 AS one"}`, append(h, "Accept", accept)...)
		if r.Status != 200 || r.Header.Get("Content-Type") != want || !slices.Contains(r.Header.Values("Vary"), "Accept") {
			t.Errorf("Accept %q: %d %q, Vary %q; want %q", accept, r.Status, r.Header.Get("Content-Type"), r.Header.Values("Vary"), want)
		}
	}
}

// TestPivotNeedsInList: a PIVOT without an IN list (which DuckDB runs as
// CREATE TYPE and a query) is a 400 saying to list the values, not a 403
// for a write the client never asked for; with the list it runs.
func TestPivotNeedsInList(t *testing.T) {
	t.Parallel()
	e := testenv.New(t, nil)
	h, _ := tenantSession(t, e, "pivot@example.com")
	r := e.Call("POST", "/api/data-platform/query", `{"sql":"PIVOT (select 1 as a, 'x' as b) ON b USING sum(a)"}`, h...)
	testenv.ExpectError(t, r, 400, "validation_error")
	if _, msg := errorBody(t, r); !strings.Contains(msg, "a PIVOT needs an explicit IN list") {
		t.Errorf("message %q", msg)
	}
	r = e.Call("POST", "/api/data-platform/query", `{"sql":"PIVOT (select 1 as a, 'x' as b) ON b IN ('x') USING sum(a)"}`, h...)
	if r.Status != 200 || !strings.Contains(string(r.Body), `"rows":[{"x":1}]`) {
		t.Errorf("with IN: %d %s", r.Status, r.Body)
	}
}

package query

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stratahq/strata/impl/apierrors"
)

// TestDecodeRequest: the handler's own reading of the body, whatever the
// middleware in front of it did: one JSON object and nothing after it but
// white space; integral JSON numbers for the integer fields; messages
// without Go's type names.
func TestDecodeRequest(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		body    string
		maxRows int
		timeout time.Duration
		msg     string // of the 400, "" for success
	}{
		{`{"sql":"SELECT 1"}`, defaultMaxRows, defaultTimeout, ""},
		{`{"sql":"SELECT 1","maxRows":10.0,"timeoutSeconds":1e1} ` + "\n", 10, 10 * time.Second, ""},
		{`{"sql":"SELECT 1","maxRows":0}`, 0, defaultTimeout, ""},
		{`{"sql":"SELECT 1"} trailing`, 0, 0, "invalid JSON body: unexpected data after the JSON object"},
		{`{"sql":"SELECT 1"}]`, 0, 0, "invalid JSON body: unexpected data after the JSON object"},
		{`{"sql":"SELECT 1"}{}`, 0, 0, "invalid JSON body: unexpected data after the JSON object"},
		{`{"sql":"SELECT 1","maxRows":10.5}`, 0, 0, `invalid request body: field "maxRows": must be an integer`},
		{`{"sql":"SELECT 1","maxRows":-1}`, 0, 0, `invalid request body: field "maxRows": must be between 0 and 100000`},
		{`{"sql":"SELECT 1","timeoutSeconds":1e300}`, 0, 0, `invalid request body: field "timeoutSeconds": must be between 0 and 60`},
		{`{"sql":5}`, 0, 0, `invalid request body: field "sql": wrong type (a JSON number)`},
		{`{"sql":"SELECT 1"`, 0, 0, "invalid JSON body: the body ends early"},
		{`[1]`, 0, 0, "invalid JSON body"},
	} {
		req, err := decodeRequest(strings.NewReader(tc.body))
		if tc.msg == "" {
			if err != nil || req.MaxRows != tc.maxRows || req.Timeout != tc.timeout {
				t.Errorf("%s: %+v %v", tc.body, req, err)
			}
			continue
		}
		var ae *apierrors.Error
		if !errors.As(err, &ae) || ae.Code != apierrors.CodeValidation || !strings.HasPrefix(ae.Message, tc.msg) ||
			strings.Contains(ae.Message, "Go ") || strings.Contains(ae.Message, "json:") {
			t.Errorf("%s: %v, want 400 validation_error %q", tc.body, err, tc.msg)
		}
	}
}

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

func TestChooseFormat(t *testing.T) {
	t.Parallel()
	for accept, want := range map[string]format{
		"":                                    formatJSON,
		"*/*":                                 formatJSON,
		"application/json":                    formatJSON,
		"text/csv":                            formatCSV,
		"application/vnd.apache.arrow.stream": formatArrow,
		"text/csv, application/json":          formatCSV, // equal q: header order
		"application/json, text/csv":          formatJSON,
		"application/json;q=0, text/csv":      formatCSV,
		"text/csv;q=0.5, application/json":    formatJSON,
		"text/csv;q=0.5, application/json;q=0.4, application/vnd.apache.arrow.stream;q=0.6": formatArrow,
		"text/*":                        formatCSV,
		"application/*":                 formatJSON, // equal everything: JSON
		"application/*, text/csv;q=0.9": formatJSON,
		"*/*;q=0.1, text/csv":           formatCSV,
		"text/csv;q=0, */*":             formatJSON, // the specific range decides csv's q
		"application/json;q=0, */*":     formatCSV,  // JSON refused, */* takes the next offer
		"application/json;q=0, application/vnd.apache.arrow.stream;q=0, */*": formatCSV,
		"text/html":            formatJSON, // nothing offered is acceptable: JSON as before
		"application/json;q=0": formatJSON,
		"text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8": formatJSON,
		"TEXT/CSV": formatCSV,
		"text/csv; charset=utf-8; q=0.8, application/json; q=0.7": formatCSV,
		"text/csv;q=abc, application/json;q=0.1":                  formatJSON, // malformed q: that range is ignored
		"text/csv;q=2, application/json;q=0.1":                    formatJSON,
		"garbage/, text/csv":                                      formatCSV,
		"*/csv, application/json;q=0.5":                           formatJSON,
		"application/json;q=0.5, text/csv;q=0.5":                  formatJSON,
		"text/csv;q=0.500, application/json;q=0.5":                formatCSV,
	} {
		if got := chooseFormat(accept); got != want {
			t.Errorf("Accept %q: got %d, want %d", accept, got, want)
		}
	}
}

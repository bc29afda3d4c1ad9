package server_test

import (
	"strings"
	"testing"

	"github.com/stratahq/strata/impl/testenv"
)

// TestValidationMessagesNameTheFieldNotTheValue: malformed ids and dates
// are 400s whose message names the parameter or field and says what is
// expected, without echoing the value, Go internals or a regular expression.
func TestValidationMessagesNameTheFieldNotTheValue(t *testing.T) {
	t.Parallel()
	e := testenv.New(t, nil)
	s := e.NewUser("msg@example.com")
	auth := testenv.Bearer(s.AccessToken)
	for _, c := range []struct{ method, path, body, want string }{
		{"GET", "/api/content/not-a-uuid-SECRET", "", `invalid path parameter "id": must be a UUID`},
		{"DELETE", "/api/auth/v1/personal-access-tokens/xyz-SECRET", "", `invalid path parameter "id": must be a UUID`},
		{"POST", "/api/content/notes", `{"body":"x","folderId":"bad-SECRET"}`, `invalid request body: field "folderId": must be a UUID`},
		{"POST", "/api/auth/v1/personal-access-tokens", `{"name":"n","expiresAt":"tomorrow-SECRET"}`,
			`invalid request body: field "expiresAt": must be an RFC 3339 date-time, e.g. 2026-12-31T23:59:59Z`},
	} {
		r := e.Call(c.method, c.path, c.body, auth...)
		testenv.ExpectError(t, r, 400, "validation_error")
		var msg struct{ Message string }
		r.Decode(t, &msg)
		if msg.Message != c.want || strings.Contains(msg.Message, "SECRET") {
			t.Errorf("%s %s: %q, want %q", c.method, c.path, msg.Message, c.want)
		}
	}
}

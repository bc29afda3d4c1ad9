package auth_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"testing"

	"github.com/stratahq/strata/impl/testenv"
)

type (
	env      = testenv.Env
	response = testenv.Response
	session  = testenv.Session
)

var (
	newEnv      = testenv.New
	bearer      = testenv.Bearer
	expectError = testenv.ExpectError
)

// expectOAuth asserts a 400 OAuth error of the token endpoint.
func expectOAuth(t *testing.T, r response, oauthErr, code string) {
	t.Helper()
	expectError(t, r, http.StatusBadRequest, oauthErr)
	m := r.JSON(t)
	if m["error_code"] != code || m["error_description"] == "" {
		t.Fatalf("error_code %v, want %s: %s", m["error_code"], code, r.Body)
	}
}

func base64URL(s string) ([]byte, error) { return base64.RawURLEncoding.DecodeString(s) }

func decodeSegment(t *testing.T, seg string) map[string]any {
	t.Helper()
	raw, err := base64URL(seg)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.NewDecoder(bytes.NewReader(raw)).Decode(&m); err != nil {
		t.Fatal(err)
	}
	return m
}

package connectors

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/stratahq/strata/impl/store"
)

// TestSecretBoundFields: which properties are secret-bound, and the rule a
// PATCH changing one must follow, for a schema other than hosted_backend's
// (nested secrets, address formats, the explicit mark and its opt-out).
func TestSecretBoundFields(t *testing.T) {
	t.Parallel()
	c, err := compileSchema(TypeInfo{Type: "t", ConfigSchema: json.RawMessage(`{"type":"object","properties":{
		"endpoint": {"type":"string","format":"uri"},
		"host":     {"type":"string","format":"hostname"},
		"docs":     {"type":"string","format":"uri","x-secret-bound":false},
		"region":   {"type":"string","x-secret-bound":true},
		"label":    {"type":"string"},
		"token":    {"type":"string","x-secret":true},
		"auth":     {"type":"object","properties":{
			"user":     {"type":"string"},
			"password": {"type":"string","x-secret":true},
			"issuer":   {"type":"string","format":"uri"}}}}}`)})
	if err != nil {
		t.Fatal(err)
	}
	var bound []string
	for _, p := range c.bound {
		bound = append(bound, strings.Join(p, "."))
	}
	slices.Sort(bound)
	if want := []string{"auth.issuer", "endpoint", "host", "region"}; !slices.Equal(bound, want) {
		t.Fatalf("secret-bound = %v, want %v", bound, want)
	}

	current := map[string]any{"endpoint": "https://a", "host": "a", "docs": "https://d", "region": "eu", "label": "x",
		"token": "token-1234", "auth": map[string]any{"user": "u", "password": "password-1234", "issuer": "https://i"}}
	for _, tc := range []struct {
		patch string
		want  string // "" when allowed, else words of the message
	}{
		{`{"label":"y","docs":"https://other"}`, ""},
		{`{"endpoint":"https://a"}`, ""}, // the same value
		{`{"endpoint":"https://b"}`, `fields "config.auth.password", "config.token": must be sent again`},
		{`{"endpoint":"https://b","token":"********"}`, `"config.token"`},
		{`{"endpoint":"https://b","token":"token-5678"}`, `field "config.auth.password": must be sent again`},
		{`{"endpoint":"https://b","token":"token-5678","auth":{"password":"password-1234"}}`, ""},
		{`{"region":"us","token":null,"auth":{"password":"p-5678-5678"}}`, ""}, // a removed secret needs nothing
		{`{"auth":{"issuer":"https://j"},"token":"token-1234"}`, `config.auth.issuer changes`},
		{`{"host":null,"token":"t-5678-5678"}`, `config.host changes`},
	} {
		var patch map[string]any
		if err := json.Unmarshal([]byte(tc.patch), &patch); err != nil {
			t.Fatal(err)
		}
		resent := c.secretsInClear(patch)
		dropMasked(patch)
		merged := mergePatch(current, patch).(map[string]any)
		err := c.checkSecretsResent(current, merged, resent)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: %v", tc.patch, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: err = %v, want it to contain %q", tc.patch, err, tc.want)
		case err != nil && (strings.Contains(err.Error(), "token-1234") || strings.Contains(err.Error(), "password-1234")):
			t.Errorf("%s: the message quotes a secret: %v", tc.patch, err)
		}
	}

	// A type without secrets has nothing to protect.
	plain, err := compileSchema(TypeInfo{Type: "p", ConfigSchema: json.RawMessage(`{"type":"object","properties":{"endpoint":{"type":"string","format":"uri"}}}`)})
	if err != nil || plain.bound != nil {
		t.Fatalf("type without secrets: bound %v, %v", plain.bound, err)
	}
}

// TestMaskedConfigHidesURLPasswords: a URL with credentials stored before
// such URLs were refused is shown without its password.
func TestMaskedConfigHidesURLPasswords(t *testing.T) {
	t.Parallel()
	m, err := MaskedConfig(store.Connector{Config: json.RawMessage(`{"url":"https://user:PASSWORD123@d.example.com/x",
		"key":"sealed:v1:abc","nested":{"u":"http://a:b@c"},"mail":"someone@example.com","plain":"https://d.example.com"}`)})
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(m)
	if strings.Contains(string(raw), "PASSWORD123") || strings.Contains(string(raw), "a:b@") ||
		m["url"] != "https://user:xxxxx@d.example.com/x" || m["key"] != Masked ||
		m["mail"] != "someone@example.com" || m["plain"] != "https://d.example.com" {
		t.Fatalf("masked config: %s", raw)
	}
}

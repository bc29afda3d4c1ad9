package sdk_test

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/stratahq/strata/plugins/sdk"
)

func TestSecretValues(t *testing.T) {
	schema := json.RawMessage(`{"type":"object","properties":{
		"url":{"type":"string"},
		"key":{"type":"string","x-secret":true},
		"auth":{"type":"object","properties":{"user":{"type":"string"},"password":{"type":"string","x-secret":true}}},
		"tokens":{"type":"array","items":{"type":"string","x-secret":true}},
		"extra":{"type":"object","x-secret":true}
	}}`)
	config := json.RawMessage(`{"url":"https://h","key":"k-123","auth":{"user":"bob","password":"pw-secret"},
		"tokens":["t1","t2"],"extra":{"a":"deep-secret","n":5}}`)
	got := sdk.SecretValues(schema, config)
	want := []string{"deep-secret", "pw-secret", "k-123", "t1", "t2"}
	if !slices.Equal(got, want) {
		t.Fatalf("secrets = %q, want %q", got, want)
	}
	msg := sdk.Redact("login bob:pw-secret at https://h with k-123", got)
	if msg != "login bob:******** at https://h with ********" {
		t.Fatalf("redacted = %q", msg)
	}
	// Without a schema every string is a secret.
	if got := sdk.SecretValues(nil, json.RawMessage(`{"a":"x","b":["y",{"c":"z"}],"n":1}`)); !slices.Equal(got, []string{"x", "y", "z"}) {
		t.Fatalf("no schema: %q", got)
	}
	if got := sdk.SecretValues(schema, json.RawMessage(`not json`)); got != nil {
		t.Fatalf("bad config: %q", got)
	}
}

// TestRedactShortSecrets: a secret shorter than MinInWordSecret is redacted
// where it stands alone, not inside words, which it would mangle
// ("hosted_bac********end") without hiding anything.
func TestRedactShortSecrets(t *testing.T) {
	for _, c := range []struct {
		msg     string
		secrets []string
		want    string
	}{
		{"hosted_backend config: key k was refused (k)", []string{"k"}, "hosted_backend config: key ******** was refused (********)"},
		{"k", []string{"k"}, "********"},
		{"kk kkk k", []string{"kk"}, "******** kkk k"},
		{"Authorization: Bearer abc12", []string{"abc12"}, "Authorization: Bearer ********"},
		{"xabc12 abc12x abc12_ abc12", []string{"abc12"}, "xabc12 abc12x ********_ ********"},
		{"a-k-b and -k-", []string{"-k-"}, "a********b and ********"},
		{"café é", []string{"é"}, "café ********"},
		{"apikey=k&x", []string{"k"}, "apikey=********&x"},
		// From MinInWordSecret bytes on, every occurrence goes.
		{"xx12345678xx", []string{"12345678"}, "xx********xx"},
		// Longest first: the long secret is replaced whole, the short one
		// only where it stands alone.
		{"secret-long-value and sv", []string{"secret-long-value", "sv"}, "******** and ********"},
	} {
		if got := sdk.Redact(c.msg, c.secrets); got != c.want {
			t.Errorf("Redact(%q, %q) = %q, want %q", c.msg, c.secrets, got, c.want)
		}
	}
}

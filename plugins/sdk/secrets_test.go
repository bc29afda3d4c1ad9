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

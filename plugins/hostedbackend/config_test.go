package hostedbackend_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/stratahq/strata/plugins/hostedbackend"
)

// TestConfigSchemaAgreesWithParseConfig compiles ConfigSchema the way the
// server does and checks that it accepts exactly what ParseConfig accepts.
func TestConfigSchemaAgreesWithParseConfig(t *testing.T) {
	t.Parallel()
	raw := hostedbackend.ConfigSchema()
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource("strata:connector/hosted_backend.json", doc); err != nil {
		t.Fatal(err)
	}
	sch, err := c.Compile("strata:connector/hosted_backend.json")
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	props := m["properties"].(map[string]any)
	if props["service_role_key"].(map[string]any)["x-secret"] != true {
		t.Error("service_role_key is not marked x-secret")
	}
	if m["$schema"] != "https://json-schema.org/draft/2020-12/schema" || m["additionalProperties"] != false {
		t.Error("schema header")
	}

	if props["hosted_backend_url"].(map[string]any)["x-secret-bound"] != true {
		t.Error("hosted_backend_url is not marked x-secret-bound")
	}

	// k is a valid service_role_key member.
	const k = `"service_role_key": "key-1234"`
	for _, c := range []struct {
		config string
		ok     bool
	}{
		{`{"hosted_backend_url": "https://abc.example.co", ` + k + `}`, true},
		{`{"hosted_backend_url": "http://127.0.0.1:8080/", ` + k + `, "sync_interval_seconds": 60, "destination_schema": "crm_1"}`, true},
		{`{"hosted_backend_url": "https://abc.example.co/rest/v1", ` + k + `}`, true},
		{`{"hosted_backend_url": "HTTPS://abc.example.co/a@b/c", ` + k + `}`, true},
		{`{"hosted_backend_url": "http://[::1]:3000", ` + k + `}`, true},
		{`{"hosted_backend_url": "https://abc.example.co", "service_role_key": "ключ-ключ"}`, true},
		{`{` + k + `}`, false},
		{`{"hosted_backend_url": "https://abc.example.co"}`, false},
		{`{"hosted_backend_url": "https://abc.example.co", "service_role_key": ""}`, false},
		{`{"hosted_backend_url": "https://abc.example.co", "service_role_key": "k"}`, false},
		{`{"hosted_backend_url": "https://abc.example.co", "service_role_key": "1234567"}`, false},
		{`{"hosted_backend_url": "https://abc.example.co", "service_role_key": "ключ-клю"}`, true},
		{`{"hosted_backend_url": "ftp://abc.example.co", ` + k + `}`, false},
		{`{"hosted_backend_url": "http://host/x?x=", ` + k + `}`, false},
		{`{"hosted_backend_url": "http://host/x?", ` + k + `}`, false},
		{`{"hosted_backend_url": "http://host/#top", ` + k + `}`, false},
		{`{"hosted_backend_url": "http://host#", ` + k + `}`, false},
		{`{"hosted_backend_url": "https://user:PASSWORD123@d.example.com", ` + k + `}`, false},
		{`{"hosted_backend_url": "https://user@d.example.com", ` + k + `}`, false},
		{`{"hosted_backend_url": "http://@d.example.com", ` + k + `}`, false},
		{`{"hosted_backend_url": "http://:8080/", ` + k + `}`, false},
		{`{"hosted_backend_url": "http:///path", ` + k + `}`, false},
		{`{"hosted_backend_url": " https://abc.example.co", ` + k + `}`, false},
		{`{"hosted_backend_url": "https://abc.example.co/a b", ` + k + `}`, false},
		{`{"hosted_backend_url": "https://abc.example.co/\u0000", ` + k + `}`, false},
		{`{"hosted_backend_url": "https://abc.example.co", ` + k + `, "sync_interval_seconds": 0}`, false},
		{`{"hosted_backend_url": "https://abc.example.co", ` + k + `, "sync_interval_seconds": "300"}`, false},
		{`{"hosted_backend_url": "https://abc.example.co", ` + k + `, "destination_schema": "1bad"}`, false},
		{`{"hosted_backend_url": "https://abc.example.co", ` + k + `, "other": 1}`, false},
		{`{"hosted_backend_url": 5, ` + k + `}`, false},
	} {
		inst, err := jsonschema.UnmarshalJSON(bytes.NewReader([]byte(c.config)))
		if err != nil {
			t.Fatal(err)
		}
		schemaOK := sch.Validate(inst) == nil
		_, perr := hostedbackend.ParseConfig(json.RawMessage(c.config))
		parseOK := perr == nil
		if schemaOK != c.ok || parseOK != c.ok {
			t.Errorf("%s: schema ok=%v, ParseConfig ok=%v (%v), want %v", c.config, schemaOK, parseOK, perr, c.ok)
		}
		if perr != nil && strings.Contains(perr.Error(), "PASSWORD123") {
			t.Errorf("ParseConfig's error quotes the URL's password: %v", perr)
		}
	}

	cfg, err := hostedbackend.ParseConfig(json.RawMessage(`{"hosted_backend_url": "https://abc.example.co", ` + k + `}`))
	if err != nil || cfg.SyncIntervalSeconds != 300 || cfg.DestinationSchema != "" {
		t.Errorf("defaults: %+v %v", cfg, err)
	}
}

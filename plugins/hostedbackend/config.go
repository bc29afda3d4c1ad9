package hostedbackend

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strings"
	"unicode/utf8"
)

// MinKeyLength is the shortest service_role_key accepted (real keys are
// JWTs of a hundred characters and more).
const MinKeyLength = 8

// maxURLLength bounds hosted_backend_url.
const maxURLLength = 2048

// DefaultSyncIntervalSeconds is the sync interval used when the configuration
// does not set sync_interval_seconds (spec 2.7).
const DefaultSyncIntervalSeconds = 300

// Config is the configuration of a hosted_backend connector (spec 2.7,
// DECISIONS.md "Data platform"). Do not rename the JSON tags: they are the
// field names users send in POST /api/data-platform/connectors.
type Config struct {
	// HostedBackendURL is the project URL of the hosted backend, for example
	// https://abcd.example.co; the data API is read under /rest/v1/ of it.
	HostedBackendURL string `json:"hosted_backend_url"`
	// ServiceRoleKey is the service-role JWT that bypasses row-level security.
	// It is a secret: never log it or put it in an error.
	ServiceRoleKey string `json:"service_role_key"`
	// SyncIntervalSeconds is the interval between scheduled syncs;
	// ParseConfig sets DefaultSyncIntervalSeconds when it is absent.
	SyncIntervalSeconds int `json:"sync_interval_seconds,omitempty"`
	// DestinationSchema, when set, is the DuckDB schema the tables land in
	// instead of main.
	DestinationSchema string `json:"destination_schema,omitempty"`
}

// configSchema is the JSON Schema of Config. service_role_key is marked
// "x-secret" so the host seals it at rest and masks it in responses;
// hosted_backend_url is marked "x-secret-bound" (it decides where the key is
// sent), so the host accepts a change of it only with the key sent again.
// The URL pattern is ParseConfig's URL rules (restBase) in JSON Schema, so
// that the host refuses a bad URL when the connector is saved: an http(s)
// scheme, a host, no userinfo (a password would be stored and shown in
// clear), no query or fragment, no spaces or control characters. The
// minimum key length keeps a key from matching inside ordinary words when
// messages are redacted. TestConfigSchemaAgreesWithParseConfig keeps the
// two in step.
const configSchema = `{
  "$schema": "https://json-schema.org/draft/2020-12/schema",
  "title": "hosted_backend",
  "description": "A hosted backend (Supabase-style project) whose tables are read through its PostgREST data API under {hosted_backend_url}/rest/v1/.",
  "type": "object",
  "properties": {
    "hosted_backend_url": {
      "type": "string",
      "format": "uri",
      "maxLength": 2048,
      "pattern": "^[Hh][Tt][Tt][Pp][Ss]?://[^/?#@:\\x00-\\x20\\x7f][^/?#@\\x00-\\x20\\x7f]*(/[^?#\\x00-\\x20\\x7f]*)?$",
      "x-secret-bound": true,
      "description": "Project URL of the hosted backend: http:// or https://, a host, optionally a port and a path, no credentials, query or fragment; e.g. https://abcd.example.co"
    },
    "service_role_key": {
      "type": "string",
      "minLength": 8,
      "x-secret": true,
      "description": "Service-role JWT that bypasses row-level security (at least 8 characters)"
    },
    "sync_interval_seconds": {
      "type": "integer",
      "minimum": 1,
      "default": 300,
      "description": "Sync interval in seconds"
    },
    "destination_schema": {
      "type": "string",
      "pattern": "^[A-Za-z_][A-Za-z0-9_]*$",
      "description": "DuckDB schema the tables land in (default main); Strata refuses the names it reserves (pg_catalog, information_schema, temp, system, …)"
    }
  },
  "required": ["hosted_backend_url", "service_role_key"],
  "additionalProperties": false
}`

// ConfigSchema returns the JSON Schema (draft 2020-12) of Config, with the
// secret field marked "x-secret": true. The returned slice is a fresh copy.
func ConfigSchema() json.RawMessage {
	return json.RawMessage(configSchema)
}

var identPattern = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// ParseConfig decodes and validates a hosted_backend configuration, applying
// defaults. It enforces the same rules as ConfigSchema (unknown fields,
// required fields, types, URL shape, pattern) so the plugin is safe even when
// the host did not validate. Errors never contain the service_role_key.
func ParseConfig(raw json.RawMessage) (Config, error) {
	// A pointer tells an explicit 0 (invalid) from an absent interval.
	var in struct {
		Config
		SyncIntervalSeconds *int `json:"sync_interval_seconds"`
	}
	if len(bytes.TrimSpace(raw)) == 0 {
		return Config{}, errors.New("hosted_backend config: empty configuration")
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&in); err != nil {
		// encoding/json errors name fields and types, never values, except
		// for syntax errors, which carry only an offset.
		return Config{}, fmt.Errorf("hosted_backend config: %w", err)
	}
	if dec.More() {
		return Config{}, errors.New("hosted_backend config: trailing data after the JSON object")
	}
	cfg := in.Config
	switch {
	case in.SyncIntervalSeconds == nil:
		cfg.SyncIntervalSeconds = DefaultSyncIntervalSeconds
	case *in.SyncIntervalSeconds < 1:
		return Config{}, errors.New("hosted_backend config: sync_interval_seconds must be at least 1")
	default:
		cfg.SyncIntervalSeconds = *in.SyncIntervalSeconds
	}
	if cfg.HostedBackendURL == "" {
		return Config{}, errors.New("hosted_backend config: hosted_backend_url is required")
	}
	if _, err := restBase(cfg.HostedBackendURL); err != nil {
		return Config{}, fmt.Errorf("hosted_backend config: %w", err)
	}
	if cfg.ServiceRoleKey == "" {
		return Config{}, errors.New("hosted_backend config: service_role_key is required")
	}
	if utf8.RuneCountInString(cfg.ServiceRoleKey) < MinKeyLength {
		return Config{}, fmt.Errorf("hosted_backend config: service_role_key must be at least %d characters long", MinKeyLength)
	}
	if cfg.DestinationSchema != "" && !identPattern.MatchString(cfg.DestinationSchema) {
		return Config{}, errors.New("hosted_backend config: destination_schema must match ^[A-Za-z_][A-Za-z0-9_]*$")
	}
	return cfg, nil
}

// restBase returns {hosted_backend_url}/rest/v1/ as a URL. A URL that already
// ends in /rest/v1 is accepted as is, since users often paste the API URL.
func restBase(raw string) (*url.URL, error) {
	if len(raw) > maxURLLength {
		return nil, fmt.Errorf("hosted_backend_url must be at most %d characters long", maxURLLength)
	}
	if strings.IndexFunc(raw, func(r rune) bool { return r <= 0x20 || r == 0x7f }) >= 0 {
		return nil, errors.New("hosted_backend_url must not contain spaces or control characters")
	}
	// Checked on the text: url.Parse forgets an empty query ("x?") or
	// fragment ("x#") and an empty userinfo ("http://@host").
	if strings.ContainsAny(raw, "?#") {
		return nil, errors.New("hosted_backend_url must not have a query or fragment")
	}
	u, err := url.Parse(raw)
	if err != nil {
		return nil, errors.New("hosted_backend_url is not a valid URL")
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, errors.New("hosted_backend_url must be an absolute http:// or https:// URL")
	}
	if u.Host == "" || u.Hostname() == "" {
		return nil, errors.New("hosted_backend_url has no host")
	}
	if u.User != nil || strings.Contains(u.Host, "@") {
		return nil, errors.New("hosted_backend_url must not contain credentials")
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return nil, errors.New("hosted_backend_url must not have a query or fragment")
	}
	p := strings.TrimRight(u.Path, "/")
	p = strings.TrimSuffix(p, "/rest/v1")
	u.Path = p + "/rest/v1/"
	u.RawPath = ""
	return u, nil
}

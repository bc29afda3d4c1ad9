package connectors

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	"golang.org/x/text/message"

	"github.com/stratahq/strata/impl/apierrors"
)

// compiledSchema is a connector type's config schema, compiled, with what
// the service reads from it: the secret properties, the properties secrets
// are bound to, and the top-level defaults.
type compiledSchema struct {
	schema  *jsonschema.Schema
	secrets [][]string // paths of "x-secret" properties
	bound   [][]string // paths of secret-bound properties (see boundPaths)
	raw     map[string]any
}

func compileSchema(t TypeInfo) (*compiledSchema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(t.ConfigSchema))
	if err != nil {
		return nil, fmt.Errorf("config schema of %s: %w", t.Type, err)
	}
	compiler := jsonschema.NewCompiler()
	url := "strata:connector/" + t.Type + ".json"
	if err := compiler.AddResource(url, doc); err != nil {
		return nil, fmt.Errorf("config schema of %s: %w", t.Type, err)
	}
	sch, err := compiler.Compile(url)
	if err != nil {
		return nil, fmt.Errorf("config schema of %s: %w", t.Type, err)
	}
	var raw map[string]any
	_ = json.Unmarshal(t.ConfigSchema, &raw)
	c := &compiledSchema{schema: sch, raw: raw, secrets: secretPaths(raw, nil)}
	if len(c.secrets) > 0 {
		c.bound = boundPaths(raw, nil)
	}
	return c, nil
}

// secretPaths finds the properties marked "x-secret": true.
func secretPaths(schema map[string]any, prefix []string) [][]string {
	props, _ := schema["properties"].(map[string]any)
	var out [][]string
	for name, p := range props {
		prop, _ := p.(map[string]any)
		path := append(append([]string{}, prefix...), name)
		if secret, _ := prop["x-secret"].(bool); secret {
			out = append(out, path)
		}
		out = append(out, secretPaths(prop, path)...)
	}
	return out
}

// addressFormats are the JSON Schema formats of values that say where a
// connector connects to, and so where its secrets go.
var addressFormats = []string{"uri", "uri-reference", "iri", "iri-reference", "hostname", "idn-hostname", "ipv4", "ipv6"}

// boundPaths finds the secret-bound properties: those that decide where the
// connector sends its secrets. A property is secret-bound when it is marked
// "x-secret-bound": true, or when its format is an address (a URL, host
// name or IP address) and it is not marked "x-secret-bound": false. Changing
// one requires sending every secret again (see checkSecretsResent), so that
// whoever may edit a connector cannot redirect its stored secrets to a host
// of their choosing. Only types with secrets have them.
func boundPaths(schema map[string]any, prefix []string) [][]string {
	props, _ := schema["properties"].(map[string]any)
	var out [][]string
	for name, p := range props {
		prop, _ := p.(map[string]any)
		path := append(append([]string{}, prefix...), name)
		marked, hasMark := prop["x-secret-bound"].(bool)
		format, _ := prop["format"].(string)
		if marked || (!hasMark && slices.Contains(addressFormats, format)) {
			out = append(out, path)
		}
		out = append(out, boundPaths(prop, path)...)
	}
	return out
}

// applyDefaults fills missing top-level properties that have a default.
func (c *compiledSchema) applyDefaults(config map[string]any) {
	props, _ := c.raw["properties"].(map[string]any)
	for name, p := range props {
		prop, _ := p.(map[string]any)
		if def, ok := prop["default"]; ok {
			if _, set := config[name]; !set {
				config[name] = def
			}
		}
	}
}

// validate checks config against the type's schema and Strata's own rules
// (strataprops.go); the message names the field and never quotes a value
// (a URL may hold a password, a secret field a secret).
func (c *compiledSchema) validate(config map[string]any) error {
	raw, err := json.Marshal(config)
	if err != nil {
		return apierrors.Validation("field \"config\": %v", err)
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return apierrors.Validation("field \"config\": %v", err)
	}
	err = c.schema.Validate(inst)
	var ve *jsonschema.ValidationError
	if errors.As(err, &ve) {
		leaf := ve
		for len(leaf.Causes) > 0 {
			leaf = leaf.Causes[0]
		}
		field := "config"
		if len(leaf.InstanceLocation) > 0 {
			field = "config." + strings.Join(leaf.InstanceLocation, ".")
		}
		return apierrors.Validation("field %q: %s", field, c.reason(leaf))
	}
	if err != nil {
		return err
	}
	return checkStrataProperties(config)
}

// reason explains a validation failure without the offending value: the
// library's messages quote it for pattern and format failures. For those,
// the property's description (when it has one) says what is expected.
func (c *compiledSchema) reason(leaf *jsonschema.ValidationError) string {
	var why string
	switch k := leaf.ErrorKind.(type) {
	case *kind.Pattern:
		why = "does not match the pattern " + k.Want
	case *kind.Format:
		why = "is not a valid " + k.Want
	case *kind.Not:
		why = "is not allowed"
	case *kind.MinLength:
		return fmt.Sprintf("must be at least %d characters long", k.Want)
	case *kind.MaxLength:
		return fmt.Sprintf("must be at most %d characters long", k.Want)
	default:
		return leaf.ErrorKind.LocalizedString(message.NewPrinter(language.English))
	}
	if desc := c.description(leaf.InstanceLocation); desc != "" {
		why += " (" + desc + ")"
	}
	return why
}

// description is the description of the property at path, if any.
func (c *compiledSchema) description(path []string) string {
	cur := c.raw
	for _, k := range path {
		props, _ := cur["properties"].(map[string]any)
		next, ok := props[k].(map[string]any)
		if !ok {
			return ""
		}
		cur = next
	}
	desc, _ := cur["description"].(string)
	return strings.TrimSuffix(strings.TrimSpace(desc), ".")
}

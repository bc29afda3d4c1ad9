package sdk

import (
	"cmp"
	"encoding/json"
	"slices"
	"strings"
)

// Redacted replaces secret values in messages.
const Redacted = "********"

// SecretValues returns the values in config of the properties that schema
// marks "x-secret": true, at any depth of "properties" (and "items" of
// arrays), longest first. A secret property holding an object or array
// contributes every string inside it. When schema cannot be read, every
// string in config counts as secret: redacting too much beats leaking.
//
// Serve uses it to keep secrets out of the error messages a connector
// returns; hosts use it for messages of plugins they did not write.
func SecretValues(schema, config json.RawMessage) []string {
	var cfg any
	if err := json.Unmarshal(config, &cfg); err != nil {
		return nil
	}
	var sch map[string]any
	var out []string
	if err := json.Unmarshal(schema, &sch); err != nil || sch == nil {
		out = allStrings(cfg, nil)
	} else {
		out = secretStrings(sch, cfg, nil)
	}
	out = slices.DeleteFunc(out, func(s string) bool { return s == "" })
	slices.SortFunc(out, func(a, b string) int {
		return cmp.Or(cmp.Compare(len(b), len(a)), strings.Compare(a, b))
	})
	return slices.Compact(out)
}

// Redact replaces every occurrence of each secret in msg with [Redacted].
// Pass secrets longest first (as [SecretValues] returns them) so that a
// secret containing another is replaced whole.
func Redact(msg string, secrets []string) string {
	for _, s := range secrets {
		if s != "" {
			msg = strings.ReplaceAll(msg, s, Redacted)
		}
	}
	return msg
}

func secretStrings(schema map[string]any, value any, out []string) []string {
	switch v := value.(type) {
	case map[string]any:
		props, _ := schema["properties"].(map[string]any)
		for name, p := range props {
			prop, _ := p.(map[string]any)
			child, ok := v[name]
			if !ok || prop == nil {
				continue
			}
			if secret, _ := prop["x-secret"].(bool); secret {
				out = allStrings(child, out)
				continue
			}
			out = secretStrings(prop, child, out)
		}
	case []any:
		if items, ok := schema["items"].(map[string]any); ok {
			if secret, _ := items["x-secret"].(bool); secret {
				return allStrings(v, out)
			}
			for _, e := range v {
				out = secretStrings(items, e, out)
			}
		}
	}
	return out
}

func allStrings(value any, out []string) []string {
	switch v := value.(type) {
	case string:
		out = append(out, v)
	case map[string]any:
		for _, e := range v {
			out = allStrings(e, out)
		}
	case []any:
		for _, e := range v {
			out = allStrings(e, out)
		}
	}
	return out
}

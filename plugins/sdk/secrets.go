package sdk

import (
	"cmp"
	"encoding/json"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
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

// MinInWordSecret is the length (in bytes) from which a secret is redacted
// wherever it occurs. A shorter one is redacted only where it stands as a
// whole token (see [Redact]): replacing every "k" of a message for the
// secret "k" mangles the message ("hosted_bac********end") and hides
// nothing, since such a secret is no more than a fragment of those words.
const MinInWordSecret = 8

// Redact replaces each secret in msg with [Redacted]: everywhere for a
// secret of at least [MinInWordSecret] bytes, and only where it is not
// part of a longer word (no letter or digit right before or after it) for
// a shorter one. Pass secrets longest first (as [SecretValues] returns
// them) so that a secret containing another is replaced whole.
func Redact(msg string, secrets []string) string {
	for _, s := range secrets {
		switch {
		case s == "":
		case len(s) >= MinInWordSecret:
			msg = strings.ReplaceAll(msg, s, Redacted)
		default:
			msg = redactTokens(msg, s)
		}
	}
	return msg
}

// redactTokens replaces the occurrences of s in msg that are not part of a
// longer word. A boundary is needed only on a side where the secret itself
// has a word character: "-k-" is whole inside "a-k-b".
func redactTokens(msg, s string) string {
	first, _ := utf8.DecodeRuneInString(s)
	last, _ := utf8.DecodeLastRuneInString(s)
	var b strings.Builder
	done := 0 // msg[:done] is written
	for from := 0; ; {
		i := strings.Index(msg[from:], s)
		if i < 0 {
			break
		}
		start, end := from+i, from+i+len(s)
		before, _ := utf8.DecodeLastRuneInString(msg[:start])
		after, _ := utf8.DecodeRuneInString(msg[end:])
		inWord := (start > 0 && isWordRune(first) && isWordRune(before)) ||
			(end < len(msg) && isWordRune(last) && isWordRune(after))
		if inWord {
			from = start + 1
			continue
		}
		b.WriteString(msg[done:start])
		b.WriteString(Redacted)
		done, from = end, end
	}
	b.WriteString(msg[done:])
	return b.String()
}

func isWordRune(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }

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

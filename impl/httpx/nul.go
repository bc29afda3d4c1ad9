package httpx

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
)

// nulField reports whether a string (or key) in the JSON body contains a
// NUL character, and the path of the first ("name", "tags.2", "config.key";
// "" for the body itself). Text with NUL cannot be stored by PostgreSQL, breaks C-string
// consumers downstream and is never what a person typed, so it is refused
// like any other invalid value (PostgREST refuses it too). body is restored
// for the handler; it is read only when it contains the escape that makes a
// NUL in JSON, \u0000.
func nulField(r *http.Request) (string, bool, error) {
	if r.Body == nil || r.Body == http.NoBody {
		return "", false, nil
	}
	raw, err := io.ReadAll(r.Body)
	_ = r.Body.Close()
	r.Body = io.NopCloser(bytes.NewReader(raw))
	if err != nil {
		return "", false, err
	}
	if !bytes.Contains(bytes.ToLower(raw), []byte(`\u0000`)) {
		return "", false, nil
	}
	field, found := findNUL(json.NewDecoder(bytes.NewReader(raw)))
	return field, found, nil
}

// findNUL walks one JSON value token by token, tracking the path.
func findNUL(dec *json.Decoder) (string, bool) {
	type frame struct {
		object bool
		key    string // the current key of an object
		index  int    // the next index of an array
		want   bool   // an object expects a key next
	}
	var stack []frame
	path := func() string {
		parts := make([]string, len(stack))
		for i, f := range stack {
			if f.object {
				parts[i] = f.key
			} else {
				parts[i] = strconv.Itoa(f.index - 1)
			}
		}
		return strings.Join(parts, ".")
	}
	for {
		tok, err := dec.Token()
		if err != nil {
			return "", false // the end, or not JSON: the schema validation has already said so
		}
		top := len(stack) - 1
		switch t := tok.(type) {
		case json.Delim:
			switch t {
			case '{', '[':
				if top >= 0 && !stack[top].object {
					stack[top].index++
				}
				stack = append(stack, frame{object: t == '{', want: t == '{'})
				continue
			case '}', ']':
				stack = stack[:top]
				if top-1 >= 0 && stack[top-1].object {
					stack[top-1].want = true
				}
				continue
			}
		case string:
			if top >= 0 && stack[top].object && stack[top].want {
				stack[top].key, stack[top].want = t, false
				if strings.ContainsRune(t, 0) {
					return path(), true
				}
				continue
			}
			if top >= 0 && !stack[top].object {
				stack[top].index++
			}
			if strings.ContainsRune(t, 0) {
				return path(), true
			}
		default:
			if top >= 0 && !stack[top].object {
				stack[top].index++
			}
		}
		if top >= 0 && stack[top].object {
			stack[top].want = true
		}
	}
}

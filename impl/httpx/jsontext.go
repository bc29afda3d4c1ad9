package httpx

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"

	"github.com/stratahq/strata/impl/apierrors"
)

// checkJSONText applies the rules that a JSON body's schema cannot say: the
// body is one JSON value (nothing after it but spaces), and no string or key
// contains a NUL character, which PostgreSQL cannot store, breaks C-string
// consumers downstream and is never what a person typed (PostgREST refuses
// it too). It returns the 400 to answer, or nil. The body is restored for
// the handler.
func checkJSONText(r *http.Request) error {
	if r.Body == nil || r.Body == http.NoBody {
		return nil
	}
	raw, err := io.ReadAll(r.Body)
	_ = r.Body.Close()
	r.Body = io.NopCloser(bytes.NewReader(raw))
	if err != nil {
		return requestValidationError(err)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	var v json.RawMessage
	if err := dec.Decode(&v); err != nil {
		return nil // not JSON, or empty: the schema validation decides
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return apierrors.Validation("invalid JSON body: unexpected data after the JSON value")
	}
	// Only a body with the escape that makes a NUL in JSON needs the walk.
	if !bytes.Contains(bytes.ToLower(raw), []byte(`\u0000`)) {
		return nil
	}
	field, found := findNUL(json.NewDecoder(bytes.NewReader(raw)))
	switch {
	case !found:
		return nil
	case field == "":
		return apierrors.Validation("invalid request body: text must not contain NUL characters")
	default:
		return apierrors.Validation("invalid request body: field %q: text must not contain NUL characters", field)
	}
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

package query

import (
	"encoding/base64"
	"encoding/json"
	"math"
	"math/big"
	"slices"
	"strconv"
	"time"
	"unicode/utf8"

	duckdb "github.com/duckdb/duckdb-go/v2"
)

// appendJSONValue appends the JSON encoding of v, a value scanned by the
// DuckDB driver, whose DuckDB type is t (nil or kindOther: go by the value).
// The rules are the package documentation's table.
func appendJSONValue(b []byte, v any, t *typeNode) []byte {
	k := kindOther
	if t != nil {
		k = t.kind
	}
	switch v := v.(type) {
	case nil:
		return append(b, "null"...)
	case bool:
		if v {
			return append(b, "true"...)
		}
		return append(b, "false"...)
	case int8:
		return strconv.AppendInt(b, int64(v), 10)
	case int16:
		return strconv.AppendInt(b, int64(v), 10)
	case int32:
		return strconv.AppendInt(b, int64(v), 10)
	case int64:
		return appendJSONInt(b, v)
	case int:
		return appendJSONInt(b, int64(v))
	case uint8:
		return strconv.AppendUint(b, uint64(v), 10)
	case uint16:
		return strconv.AppendUint(b, uint64(v), 10)
	case uint32:
		return strconv.AppendUint(b, uint64(v), 10)
	case uint64:
		if v <= maxSafeInt {
			return strconv.AppendUint(b, v, 10)
		}
		b = append(b, '"')
		b = strconv.AppendUint(b, v, 10)
		return append(b, '"')
	case float32:
		if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
			return append(b, "null"...)
		}
		return appendFloat(b, float64(v), 32)
	case float64:
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return append(b, "null"...)
		}
		return appendFloat(b, v, 64)
	case *big.Int:
		if v == nil {
			return append(b, "null"...)
		}
		if v.IsInt64() {
			return appendJSONInt(b, v.Int64())
		}
		b = append(b, '"')
		b = appendBigInt(b, v)
		return append(b, '"')
	case duckdb.Decimal:
		b = append(b, '"')
		b = appendDecimal(b, v)
		return append(b, '"')
	case string:
		return appendJSONString(b, v)
	case []byte:
		if k == kindUUID && len(v) == 16 {
			b = append(b, '"')
			b = appendUUID(b, v)
			return append(b, '"')
		}
		b = append(b, '"')
		b = base64.StdEncoding.AppendEncode(b, v)
		return append(b, '"')
	case time.Time:
		b = append(b, '"')
		b = appendTimeValue(b, v, k)
		return append(b, '"')
	case duckdb.Interval:
		b = append(b, '"')
		b = appendInterval(b, v)
		return append(b, '"')
	case []any:
		elem := t.child()
		b = append(b, '[')
		for i, x := range v {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendJSONValue(b, x, elem)
		}
		return append(b, ']')
	case map[string]any:
		if k == kindStruct && len(t.fields) == len(v) {
			b = append(b, '{')
			for i, f := range t.fields {
				if i > 0 {
					b = append(b, ',')
				}
				b = appendJSONString(b, f.name)
				b = append(b, ':')
				b = appendJSONValue(b, v[f.name], f.typ)
			}
			return append(b, '}')
		}
		// A JSON value decoded by the driver, or a struct we could not
		// type: keys sorted for a stable output.
		keys := make([]string, 0, len(v))
		for key := range v {
			keys = append(keys, key)
		}
		slices.Sort(keys)
		b = append(b, '{')
		for i, key := range keys {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendJSONString(b, key)
			b = append(b, ':')
			b = appendJSONValue(b, v[key], nil)
		}
		return append(b, '}')
	case duckdb.OrderedMap:
		var kt, vt *typeNode
		if t != nil {
			kt, vt = t.key, t.value
		}
		keys, vals := v.Keys(), v.Values()
		if kt.stringKeyed() {
			b = append(b, '{')
			for i := range keys {
				if i > 0 {
					b = append(b, ',')
				}
				s, _ := keys[i].(string)
				b = appendJSONString(b, s)
				b = append(b, ':')
				b = appendJSONValue(b, vals[i], vt)
			}
			return append(b, '}')
		}
		b = append(b, '[')
		for i := range keys {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, `{"key":`...)
			b = appendJSONValue(b, keys[i], kt)
			b = append(b, `,"value":`...)
			b = appendJSONValue(b, vals[i], vt)
			b = append(b, '}')
		}
		return append(b, ']')
	case duckdb.Union:
		var mt *typeNode
		if t != nil {
			for _, f := range t.fields {
				if f.name == v.Tag {
					mt = f.typ
				}
			}
		}
		b = append(b, '{')
		b = appendJSONString(b, v.Tag)
		b = append(b, ':')
		b = appendJSONValue(b, v.Value, mt)
		return append(b, '}')
	default:
		// Not produced by the driver today; keep the output valid JSON.
		enc, err := json.Marshal(v)
		if err != nil {
			return append(b, "null"...)
		}
		return append(b, enc...)
	}
}

// appendJSONInt writes integers within ±(2^53-1) as numbers and larger ones
// as strings, so that JavaScript clients never lose precision.
func appendJSONInt(b []byte, v int64) []byte {
	if v <= maxSafeInt && v >= -maxSafeInt {
		return strconv.AppendInt(b, v, 10)
	}
	b = append(b, '"')
	b = strconv.AppendInt(b, v, 10)
	return append(b, '"')
}

// appendJSONString writes s as a JSON string. Like encoding/json it
// replaces invalid UTF-8 with U+FFFD and escapes U+2028/U+2029; unlike it,
// it leaves <, > and & alone (this is not HTML).
func appendJSONString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

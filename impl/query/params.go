package query

import (
	"database/sql/driver"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/big"
	"strconv"

	duckdb "github.com/duckdb/duckdb-go/v2"

	"github.com/stratahq/strata/impl/apierrors"
)

// Limits of parameter values. The driver's binding of a nested list costs
// time that grows with the cube of its depth and runs before DuckDB can be
// interrupted (an array nested 1,000 deep, 6 KB of JSON, took 15 s), so
// values are checked, before any store is touched, against limits no real
// query needs.
const (
	// maxParamDepth is how deep arrays may nest: [[[[1]]]] is 4.
	maxParamDepth = 4
	// maxParamElements is the number of array elements, every level and
	// every parameter of a request counted, that a request may send.
	maxParamElements = 10000
	// maxNameInMessage bounds how much of a parameter name (a key the
	// client chose) an error message repeats.
	maxNameInMessage = 64
)

// param is a request parameter, checked and converted by checkParams.
type param struct {
	// value is nil, bool, int64, *big.Int, float64 or string, or for an
	// array a []any of those or of nested []any. All elements of an array
	// share one type (nulls aside): numbers are all int64, all *big.Int or
	// all float64.
	value any
	// array reports whether value is an array.
	array bool
	// inferable reports whether the driver can infer an array's DuckDB type
	// from its Go values alone: it cannot when a null stands next to other
	// values, or an empty array next to a non-empty one, at any level.
	inferable bool
	// huge reports whether the array's integers need HUGEINT.
	huge bool
}

// leaf is the type of an array's scalars.
type leaf uint8

const (
	leafNone leaf = iota
	leafBool
	leafNumber
	leafString
)

func (l leaf) String() string {
	switch l {
	case leafBool:
		return "boolean"
	case leafNumber:
		return "number"
	case leafString:
		return "string"
	}
	return "array"
}

// paramError is the 400 validation_error of a malformed parameter value.
func paramError(name, format string, args ...any) *apierrors.Error {
	return apierrors.Validation("invalid request body: field %q: %s", "params."+shortName(name), fmt.Sprintf(format, args...))
}

// shortName is a parameter name as error messages repeat it.
func shortName(name string) string {
	if len(name) <= maxNameInMessage {
		return name
	}
	cut := maxNameInMessage
	for cut > 0 && !utf8Start(name[cut]) {
		cut--
	}
	return name[:cut] + "…"
}

func utf8Start(b byte) bool { return b&0xC0 != 0x80 }

// checkParams checks and converts every parameter of a request (used by the
// statement or not: a malformed value is a malformed request): values must
// be JSON scalars or arrays of them, arrays at most maxParamDepth deep, with
// at most maxParamElements elements in all, and the elements of an array
// must share one type. Integral numbers become int64 (so that an untyped
// `SELECT $1` is a BIGINT), integers beyond int64 *big.Int; in an array, one
// number with a fraction or exponent makes every number a float64 (a DOUBLE
// list).
func checkParams(params map[string]any) (map[string]param, error) {
	out := make(map[string]param, len(params))
	elements := 0
	for name, v := range params {
		p, err := checkParam(name, v, &elements)
		if err != nil {
			return nil, err
		}
		out[name] = p
	}
	return out, nil
}

func checkParam(name string, v any, elements *int) (param, error) {
	arr, ok := v.([]any)
	if !ok {
		s, err := convertScalar(v)
		if err != nil {
			return param{}, paramError(name, "%v", err)
		}
		return param{value: s}, nil
	}
	c := arrayCheck{name: name, elements: elements}
	conv, err := c.walk(arr, 1)
	if err != nil {
		return param{}, err
	}
	if c.leaf == leafNumber {
		switch {
		case c.float:
			mapLeaves(conv, toFloat)
		case c.big:
			mapLeaves(conv, toBig)
		}
	}
	p := param{value: conv, array: true, huge: c.leaf == leafNumber && c.big && !c.float}
	_, p.inferable = inferredType(conv)
	return p, nil
}

// arrayCheck walks one array parameter.
type arrayCheck struct {
	name     string
	elements *int
	// levels[d] is whether the non-null elements at depth d are arrays
	// (true) or scalars (false), once one was seen.
	levels [maxParamDepth + 1]struct{ seen, array bool }
	leaf   leaf
	float  bool // a number had a fraction or an exponent
	big    bool // an integer is beyond int64
}

func (c *arrayCheck) walk(arr []any, depth int) ([]any, error) {
	if depth > maxParamDepth {
		return nil, paramError(c.name, "arrays may nest at most %d deep", maxParamDepth)
	}
	*c.elements += len(arr)
	if *c.elements > maxParamElements {
		return nil, paramError(c.name, "too many array elements (at most %d in all parameters)", maxParamElements)
	}
	out := make([]any, len(arr))
	for i, x := range arr {
		if x == nil {
			continue
		}
		lvl := &c.levels[depth]
		if sub, ok := x.([]any); ok {
			if lvl.seen && !lvl.array {
				return nil, c.mixed(c.leaf, leafNone)
			}
			lvl.seen, lvl.array = true, true
			conv, err := c.walk(sub, depth+1)
			if err != nil {
				return nil, err
			}
			out[i] = conv
			continue
		}
		s, err := convertScalar(x)
		if errors.Is(err, errNotScalar) {
			return nil, paramError(c.name, "array elements must be scalars or arrays")
		}
		if err != nil {
			return nil, paramError(c.name, "%v", err)
		}
		l := leafOf(s)
		if lvl.seen && lvl.array {
			return nil, c.mixed(leafNone, l)
		}
		lvl.seen = true
		if c.leaf != leafNone && c.leaf != l {
			return nil, c.mixed(c.leaf, l)
		}
		c.leaf = l
		switch s.(type) {
		case float64:
			c.float = true
		case *big.Int:
			c.big = true
		}
		out[i] = s
	}
	return out, nil
}

// mixed is the error of an array whose elements differ in type; leafNone
// stands for an array element.
func (c *arrayCheck) mixed(a, b leaf) error {
	return paramError(c.name, "array elements must share a type (found %s and %s elements)", a, b)
}

func leafOf(v any) leaf {
	switch v.(type) {
	case bool:
		return leafBool
	case string:
		return leafString
	}
	return leafNumber
}

// errNotScalar is convertScalar's error for objects (and Go values that are
// no JSON scalar).
var errNotScalar = errors.New("must be a scalar or an array")

// convertScalar converts a decoded JSON scalar (nil, bool, string, float64,
// json.Number; Go integers and float32 too) to the Go value the driver binds.
func convertScalar(v any) (any, error) {
	switch v := v.(type) {
	case nil, bool, string, int64:
		return v, nil
	case float32:
		return convertScalar(float64(v))
	case int:
		return int64(v), nil
	case int8:
		return int64(v), nil
	case int16:
		return int64(v), nil
	case int32:
		return int64(v), nil
	case uint8:
		return int64(v), nil
	case uint16:
		return int64(v), nil
	case uint32:
		return int64(v), nil
	case uint64:
		if v <= math.MaxInt64 {
			return int64(v), nil
		}
		return new(big.Int).SetUint64(v), nil
	case float64:
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("must be a finite number")
		}
		if v == math.Trunc(v) && math.Abs(v) <= maxSafeInt {
			return int64(v), nil
		}
		return v, nil
	case json.Number:
		if i, err := strconv.ParseInt(string(v), 10, 64); err == nil {
			return i, nil
		}
		if bi, ok := new(big.Int).SetString(string(v), 10); ok {
			return bi, nil // beyond int64: exact, as HUGEINT or BIGNUM
		}
		f, err := strconv.ParseFloat(string(v), 64)
		if err != nil || math.IsInf(f, 0) {
			return nil, fmt.Errorf("the number is out of range")
		}
		return f, nil
	default:
		return nil, errNotScalar
	}
}

// mapLeaves replaces every number of a converted array in place.
func mapLeaves(arr []any, f func(any) any) {
	for i, x := range arr {
		switch x := x.(type) {
		case nil:
		case []any:
			mapLeaves(x, f)
		default:
			arr[i] = f(x)
		}
	}
}

func toFloat(v any) any {
	switch v := v.(type) {
	case int64:
		return float64(v)
	case *big.Int:
		f, _ := new(big.Float).SetInt(v).Float64()
		return f
	}
	return v
}

func toBig(v any) any {
	if i, ok := v.(int64); ok {
		return big.NewInt(i)
	}
	return v
}

// inferredType returns the DuckDB type the driver infers for a converted
// value, as the driver compares element types: every element of an array
// must infer the same type, a null infers "NULL" and an empty array
// "NULL[]". ok is false when the elements differ.
func inferredType(v any) (typ string, ok bool) {
	switch v := v.(type) {
	case nil:
		return "NULL", true
	case []any:
		elem := "NULL"
		for i, x := range v {
			t, ok := inferredType(x)
			if !ok || (i > 0 && t != elem) {
				return "", false
			}
			elem = t
		}
		return elem + "[]", true
	case bool:
		return "BOOLEAN", true
	case int64:
		return "BIGINT", true
	case *big.Int:
		return "HUGEINT", true
	case float64:
		return "DOUBLE", true
	case string:
		return "VARCHAR", true
	}
	return "", false
}

// Bounds of HUGEINT, the type the driver gives a *big.Int in a list.
var (
	hugeMax = new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), 127), big.NewInt(1))
	hugeMin = new(big.Int).Neg(new(big.Int).Lsh(big.NewInt(1), 127))
)

func fitsHuge(arr []any) bool {
	for _, x := range arr {
		switch x := x.(type) {
		case []any:
			if !fitsHuge(x) {
				return false
			}
		case *big.Int:
			if x.Cmp(hugeMax) > 0 || x.Cmp(hugeMin) < 0 {
				return false
			}
		}
	}
	return true
}

// listValue hands the driver a converted array through driver.Valuer, which
// makes it infer the list's type from the Go values instead of converting
// them to the placeholder's type: that conversion type-asserts each element
// (an int64 where the placeholder is DOUBLE[] panics, a null in any list
// panics). DuckDB then casts the bound list to the placeholder's type.
type listValue []any

// Value implements driver.Valuer.
func (l listValue) Value() (driver.Value, error) { return []any(l), nil }

// textValue binds a string through driver.Valuer, which the driver binds as
// VARCHAR whatever the placeholder's type; DuckDB then casts it.
type textValue string

// Value implements driver.Valuer.
func (t textValue) Value() (driver.Value, error) { return string(t), nil }

// bindValue returns what to hand the driver for a parameter at a
// placeholder of type typ (duckdb.TYPE_INVALID when the statement leaves it
// open, e.g. `SELECT ?`).
//
// Scalars bind as themselves and DuckDB casts them. An array binds by the
// placeholder's type:
//   - a list or array type: as the text of a DuckDB list literal
//     (`[1, NULL, "a\"b"]`), which DuckDB casts with its own rules, so that
//     nulls, empty lists and strings for dates all work;
//   - VARCHAR (JSON too): as its JSON text;
//   - open: as a Go list whose type the driver infers (BIGINT[], DOUBLE[],
//     VARCHAR[][] ...), which needs every element to infer the same type:
//     a null next to values needs a typed placeholder (`$1::BIGINT[]`);
//   - anything else is an error naming the parameter.
func bindValue(name string, p param, typ duckdb.Type) (any, error) {
	if !p.array {
		return p.value, nil
	}
	arr := p.value.([]any)
	switch typ {
	case duckdb.TYPE_LIST, duckdb.TYPE_ARRAY:
		return textValue(listLiteral(nil, arr)), nil
	case duckdb.TYPE_VARCHAR:
		b, err := json.Marshal(jsonable(arr))
		if err != nil {
			return nil, fmt.Errorf("encode parameter %q: %w", shortName(name), err)
		}
		return string(b), nil
	case duckdb.TYPE_INVALID, duckdb.TYPE_ANY:
		if !p.inferable {
			return nil, paramError(name, "the type of an array with nulls (or with empty arrays next to non-empty ones) cannot be inferred where the statement uses it: give the placeholder a type, e.g. $1::BIGINT[]")
		}
		if p.huge && !fitsHuge(arr) {
			return nil, paramError(name, "array integers must lie within ±2^127 (HUGEINT)")
		}
		return listValue(arr), nil
	default:
		return nil, errExec("parameter %q is an array, but the statement uses it where a value of another type is expected", shortName(name))
	}
}

// listLiteral appends the DuckDB list literal of a converted array: NULL,
// true/false, numbers as Go formats them (floats in the shortest form that
// reads back exactly), strings in double quotes with \ and " escaped.
func listLiteral(b []byte, arr []any) []byte {
	b = append(b, '[')
	for i, x := range arr {
		if i > 0 {
			b = append(b, ", "...)
		}
		switch x := x.(type) {
		case nil:
			b = append(b, "NULL"...)
		case []any:
			b = listLiteral(b, x)
		case bool:
			b = strconv.AppendBool(b, x)
		case int64:
			b = strconv.AppendInt(b, x, 10)
		case *big.Int:
			b = x.Append(b, 10)
		case float64:
			b = strconv.AppendFloat(b, x, 'g', -1, 64)
		case string:
			b = append(b, '"')
			for j := 0; j < len(x); j++ {
				if x[j] == '"' || x[j] == '\\' {
					b = append(b, '\\')
				}
				b = append(b, x[j])
			}
			b = append(b, '"')
		}
	}
	return append(b, ']')
}

// jsonable returns a converted array with *big.Int as JSON numbers.
func jsonable(arr []any) []any {
	out := make([]any, len(arr))
	for i, x := range arr {
		switch x := x.(type) {
		case []any:
			out[i] = jsonable(x)
		case *big.Int:
			out[i] = json.Number(x.String())
		default:
			out[i] = x
		}
	}
	return out
}

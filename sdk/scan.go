package sdk

import (
	"database/sql"
	"encoding"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Scan copies the values of row i into dest, one pointer per column, in
// column order.
//
// The server encodes each value by its DuckDB type (openapi.yaml,
// QueryResult.rows); Scan and Rows undo that encoding:
//
//	DuckDB type                   JSON                              Go destinations
//	NULL                          null                              zero value; nil pointer; sql.Null*
//	BOOLEAN                       true / false                      bool
//	TINYINT … UINTEGER            number                            int*, uint*, float*, string
//	BIGINT, UBIGINT, HUGEINT,     number within ±(2^53−1),          int64, uint64 (range-checked),
//	  UHUGEINT                      else a string of digits           *big.Int, float64, string
//	DECIMAL(p,s)                  string "12.30" (s digits)         string (exact), *big.Rat, float64,
//	                                                                  int* when the fraction is zero
//	FLOAT, DOUBLE                 number (NaN, ±Inf → null)         float32, float64
//	VARCHAR, ENUM, BIT            string                            string, TextUnmarshaler
//	JSON                          the JSON value itself             any, json.RawMessage, a matching Go type
//	BLOB                          base64 string                     []byte (decoded), string (as sent)
//	UUID                          "xxxxxxxx-…" lower case           string, uuid.UUID
//	DATE                          "2006-01-02"                      time.Time (UTC midnight), string
//	TIME, TIMETZ                  "15:04:05[.ffffff][+07:00]"       time.Time (on 0000-01-01), string
//	TIMESTAMP, TIMESTAMPTZ        RFC 3339 in UTC "…Z";             time.Time, string
//	                                "infinity" / "-infinity"          (infinite: error for time.Time)
//	INTERVAL                      ISO 8601 "P1Y2M3DT4H5M6.5S"       Interval, time.Duration (no Y/M), string
//	LIST, ARRAY                   array                             slices, arrays
//	STRUCT                        object                            structs (by json tag), map[string]T
//	MAP                           object (text keys) or             map[K]V
//	                                [{"key","value"}, …]
//	UNION                         {"tag": value}                    map[string]T, structs
//
// Values without a special rule are converted by kind (a number into any
// integer or float type, range-checked), a *T receives nil for NULL, and
// types implementing sql.Scanner or encoding.TextUnmarshaler convert
// themselves. A destination of type any receives the decoded JSON value
// (json.Number for numbers).
//
//	var (
//		id    int64
//		total *big.Rat
//		at    time.Time
//	)
//	err := res.Scan(0, &id, &total, &at)
func (r *QueryResult) Scan(i int, dest ...any) error {
	if i < 0 || i >= len(r.Rows) {
		return fmt.Errorf("strata: scan row %d: the result has %d rows", i, len(r.Rows))
	}
	if len(dest) != len(r.Columns) {
		return fmt.Errorf("strata: scan row %d: %d destinations for %d columns", i, len(dest), len(r.Columns))
	}
	row := r.Rows[i]
	for j, d := range dest {
		col := r.Columns[j]
		rv := reflect.ValueOf(d)
		if rv.Kind() != reflect.Pointer || rv.IsNil() {
			return fmt.Errorf("strata: scan row %d column %q: destination %T is not a non-nil pointer", i, col.Name, d)
		}
		if err := convert(row[col.Name], rv.Elem()); err != nil {
			return fmt.Errorf("strata: scan row %d column %q (%s): %w", i, col.Name, col.Type, err)
		}
	}
	return nil
}

// Rows converts every row of r into a T. A struct T receives columns by
// field name — the json tag, else the field name, case-insensitively, as
// encoding/json does — leaving fields without a column untouched and
// ignoring columns without a field; a map[string]V receives every column;
// any other T (int64, string, time.Time, …) needs a result of exactly one
// column. Values convert as described for Scan.
//
//	type user struct {
//		ID      int64     `json:"id"`
//		Email   string    `json:"email"`
//		Balance big.Rat   `json:"balance"`
//		Created time.Time `json:"created_at"`
//	}
//	users, err := sdk.Rows[user](res)
func Rows[T any](r *QueryResult) ([]T, error) {
	out := make([]T, len(r.Rows))
	typ := reflect.TypeFor[T]()
	byRow := isRowType(typ)
	if !byRow && len(r.Columns) != 1 {
		return nil, fmt.Errorf("strata: rows of %s need a result of one column, not %d", typ, len(r.Columns))
	}
	for i, row := range r.Rows {
		dst := reflect.ValueOf(&out[i]).Elem()
		var err error
		if byRow {
			err = convert(row, dst)
		} else {
			err = convert(row[r.Columns[0].Name], dst)
		}
		if err != nil {
			return nil, fmt.Errorf("strata: row %d: %w", i, err)
		}
	}
	return out, nil
}

var (
	scannerType   = reflect.TypeFor[sql.Scanner]()
	unmarshalType = reflect.TypeFor[encoding.TextUnmarshaler]()
	timeType      = reflect.TypeFor[time.Time]()
	durationType  = reflect.TypeFor[time.Duration]()
	rawType       = reflect.TypeFor[json.RawMessage]()
	numberType    = reflect.TypeFor[json.Number]()
)

// isRowType reports whether T takes a whole row (struct or map) rather
// than one value.
func isRowType(t reflect.Type) bool {
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if selfConverting(t) {
		return false
	}
	switch t.Kind() {
	case reflect.Struct:
		return true
	case reflect.Map:
		return t.Key().Kind() == reflect.String
	}
	return false
}

func selfConverting(t reflect.Type) bool {
	if t == timeType || t == rawType {
		return true
	}
	p := reflect.PointerTo(t)
	return p.Implements(scannerType) || p.Implements(unmarshalType)
}

// convert stores v, a value as encoding/json decodes it with UseNumber
// (nil, bool, json.Number, string, []any, map[string]any), in dst.
func convert(v any, dst reflect.Value) error {
	t := dst.Type()
	if t.Kind() == reflect.Pointer {
		if v == nil {
			dst.SetZero()
			return nil
		}
		if dst.IsNil() {
			dst.Set(reflect.New(t.Elem()))
		}
		return convert(v, dst.Elem())
	}
	if t.Kind() == reflect.Interface && t.NumMethod() == 0 {
		if v == nil {
			dst.SetZero()
		} else {
			dst.Set(reflect.ValueOf(v))
		}
		return nil
	}
	// Types that convert themselves come first: they may accept NULL.
	if dst.CanAddr() && t != timeType {
		if sc, ok := dst.Addr().Interface().(sql.Scanner); ok {
			return sc.Scan(scannerValue(v))
		}
	}
	if v == nil {
		dst.SetZero()
		return nil
	}
	switch t {
	case timeType:
		s, ok := v.(string)
		if !ok {
			return mismatch(v, t)
		}
		tm, err := parseTime(s)
		if err != nil {
			return err
		}
		dst.Set(reflect.ValueOf(tm))
		return nil
	case durationType:
		s, ok := v.(string)
		if !ok {
			return mismatch(v, t)
		}
		iv, err := ParseInterval(s)
		if err != nil {
			return err
		}
		d, err := iv.Duration()
		if err != nil {
			return err
		}
		dst.SetInt(int64(d))
		return nil
	case rawType:
		b, err := json.Marshal(v)
		if err != nil {
			return err
		}
		dst.SetBytes(b)
		return nil
	case numberType:
		switch x := v.(type) {
		case json.Number:
			dst.SetString(string(x))
		case string:
			dst.SetString(x)
		default:
			return mismatch(v, t)
		}
		return nil
	}
	if dst.CanAddr() {
		if u, ok := dst.Addr().Interface().(encoding.TextUnmarshaler); ok {
			switch x := v.(type) {
			case string:
				return u.UnmarshalText([]byte(x))
			case json.Number:
				return u.UnmarshalText([]byte(x))
			}
			// e.g. a JSON column holding an object: fall through by kind.
		}
	}
	switch t.Kind() {
	case reflect.Bool:
		switch x := v.(type) {
		case bool:
			dst.SetBool(x)
		case string:
			b, err := strconv.ParseBool(x)
			if err != nil {
				return mismatch(v, t)
			}
			dst.SetBool(b)
		default:
			return mismatch(v, t)
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		s, ok := numberText(v)
		if !ok {
			return mismatch(v, t)
		}
		n, err := parseInt(s)
		if err != nil {
			return err
		}
		if dst.OverflowInt(n) {
			return fmt.Errorf("%s overflows %s", s, t)
		}
		dst.SetInt(n)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		s, ok := numberText(v)
		if !ok {
			return mismatch(v, t)
		}
		n, err := parseUint(s)
		if err != nil {
			return err
		}
		if dst.OverflowUint(n) {
			return fmt.Errorf("%s overflows %s", s, t)
		}
		dst.SetUint(n)
	case reflect.Float32, reflect.Float64:
		s, ok := numberText(v)
		if !ok {
			return mismatch(v, t)
		}
		f, err := strconv.ParseFloat(s, t.Bits())
		if err != nil && !errors.Is(err, strconv.ErrRange) {
			return fmt.Errorf("%q is not a number", s)
		}
		if dst.OverflowFloat(f) || math.IsInf(f, 0) {
			return fmt.Errorf("%s overflows %s", s, t)
		}
		dst.SetFloat(f)
	case reflect.String:
		switch x := v.(type) {
		case string:
			dst.SetString(x)
		case json.Number:
			dst.SetString(string(x))
		case bool:
			dst.SetString(strconv.FormatBool(x))
		default: // LIST, STRUCT, MAP, JSON: their JSON text
			b, err := json.Marshal(v)
			if err != nil {
				return err
			}
			dst.SetString(string(b))
		}
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 {
			if s, ok := v.(string); ok { // BLOB
				b, err := base64.StdEncoding.DecodeString(s)
				if err != nil {
					return fmt.Errorf("not base64: %w", err)
				}
				dst.SetBytes(b)
				return nil
			}
		}
		arr, ok := v.([]any)
		if !ok {
			return mismatch(v, t)
		}
		s := reflect.MakeSlice(t, len(arr), len(arr))
		for i, x := range arr {
			if err := convert(x, s.Index(i)); err != nil {
				return fmt.Errorf("[%d]: %w", i, err)
			}
		}
		dst.Set(s)
	case reflect.Array:
		arr, ok := v.([]any)
		if !ok || len(arr) != t.Len() {
			return mismatch(v, t)
		}
		for i, x := range arr {
			if err := convert(x, dst.Index(i)); err != nil {
				return fmt.Errorf("[%d]: %w", i, err)
			}
		}
	case reflect.Map:
		return convertMap(v, dst)
	case reflect.Struct:
		obj, ok := v.(map[string]any)
		if !ok {
			return mismatch(v, t)
		}
		return convertStruct(obj, dst)
	default:
		return mismatch(v, t)
	}
	return nil
}

// convertMap fills a map from an object, or from the [{"key","value"}, …]
// form of a DuckDB MAP with non-text keys.
func convertMap(v any, dst reflect.Value) error {
	t := dst.Type()
	m := reflect.MakeMap(t)
	put := func(k, val any) error {
		kv := reflect.New(t.Key()).Elem()
		if err := convert(k, kv); err != nil {
			return fmt.Errorf("key %v: %w", k, err)
		}
		vv := reflect.New(t.Elem()).Elem()
		if err := convert(val, vv); err != nil {
			return fmt.Errorf("[%v]: %w", k, err)
		}
		m.SetMapIndex(kv, vv)
		return nil
	}
	switch x := v.(type) {
	case map[string]any:
		for k, val := range x {
			if err := put(k, val); err != nil {
				return err
			}
		}
	case []any:
		for _, e := range x {
			pair, ok := e.(map[string]any)
			if !ok {
				return mismatch(v, t)
			}
			if err := put(pair["key"], pair["value"]); err != nil {
				return err
			}
		}
	default:
		return mismatch(v, t)
	}
	dst.Set(m)
	return nil
}

// convertStruct fills the fields of a struct from an object's members.
func convertStruct(obj map[string]any, dst reflect.Value) error {
	fields := fieldsOf(dst.Type())
	for k, v := range obj {
		f, ok := fields.exact[k]
		if !ok {
			f, ok = fields.folded[strings.ToLower(k)]
		}
		if !ok {
			continue
		}
		fv, err := fieldByIndex(dst, f.index)
		if err != nil {
			return err
		}
		if err := convert(v, fv); err != nil {
			return fmt.Errorf("%s: %w", k, err)
		}
	}
	return nil
}

// fieldByIndex is reflect.Value.FieldByIndex that allocates nil embedded
// struct pointers on the way.
func fieldByIndex(v reflect.Value, index []int) (reflect.Value, error) {
	for i, x := range index {
		if i > 0 && v.Kind() == reflect.Pointer {
			if v.IsNil() {
				if !v.CanSet() {
					return v, fmt.Errorf("cannot set embedded pointer to unexported %s", v.Type().Elem())
				}
				v.Set(reflect.New(v.Type().Elem()))
			}
			v = v.Elem()
		}
		v = v.Field(x)
	}
	return v, nil
}

type field struct {
	name  string
	index []int
}

type structFields struct {
	exact  map[string]field
	folded map[string]field
}

var fieldCache sync.Map // reflect.Type → *structFields

// fieldsOf lists the settable fields of a struct type under their JSON
// names, with the fields of embedded structs promoted (shallower wins).
func fieldsOf(t reflect.Type) *structFields {
	if f, ok := fieldCache.Load(t); ok {
		return f.(*structFields)
	}
	sf := &structFields{exact: map[string]field{}, folded: map[string]field{}}
	var walk func(t reflect.Type, index []int, depth int)
	depthOf := map[string]int{}
	walk = func(t reflect.Type, index []int, depth int) {
		for i := range t.NumField() {
			f := t.Field(i)
			tag := f.Tag.Get("json")
			if tag == "-" {
				continue
			}
			name, _, _ := strings.Cut(tag, ",")
			idx := append(append([]int(nil), index...), i)
			ft := f.Type
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if f.Anonymous && name == "" && ft.Kind() == reflect.Struct && !selfConverting(ft) {
				walk(ft, idx, depth+1)
				continue
			}
			if !f.IsExported() {
				continue
			}
			if name == "" {
				name = f.Name
			}
			if d, seen := depthOf[name]; seen && d <= depth {
				continue
			}
			depthOf[name] = depth
			sf.exact[name] = field{name: name, index: idx}
			if _, ok := sf.folded[strings.ToLower(name)]; !ok || depth == 0 {
				sf.folded[strings.ToLower(name)] = field{name: name, index: idx}
			}
		}
	}
	walk(t, nil, 0)
	actual, _ := fieldCache.LoadOrStore(t, sf)
	return actual.(*structFields)
}

// numberText returns the text of a number sent as a JSON number or, for
// big integers and decimals, as a string.
func numberText(v any) (string, bool) {
	switch x := v.(type) {
	case json.Number:
		return string(x), true
	case string:
		return strings.TrimSpace(x), true
	}
	return "", false
}

// parseInt accepts integers and decimals whose fraction is zero ("12.00").
func parseInt(s string) (int64, error) {
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		return n, nil
	} else if errors.Is(err, strconv.ErrRange) {
		return 0, fmt.Errorf("%s overflows int64", s)
	}
	if whole, ok := integral(s); ok {
		if n, err := strconv.ParseInt(whole, 10, 64); err == nil {
			return n, nil
		}
		return 0, fmt.Errorf("%s overflows int64", s)
	}
	return 0, fmt.Errorf("%q is not an integer", s)
}

func parseUint(s string) (uint64, error) {
	if n, err := strconv.ParseUint(s, 10, 64); err == nil {
		return n, nil
	} else if errors.Is(err, strconv.ErrRange) {
		return 0, fmt.Errorf("%s overflows uint64", s)
	}
	if whole, ok := integral(s); ok {
		if n, err := strconv.ParseUint(whole, 10, 64); err == nil {
			return n, nil
		}
	}
	return 0, fmt.Errorf("%q is not an unsigned integer", s)
}

// integral returns the integer part of a decimal "123.000" whose fraction
// is all zeros.
func integral(s string) (string, bool) {
	whole, frac, ok := strings.Cut(s, ".")
	if !ok || whole == "" || strings.Trim(frac, "0") != "" {
		return "", false
	}
	return whole, true
}

// scannerValue turns a decoded JSON value into what sql.Scanner
// implementations expect from a database/sql driver: int64 or float64 for
// numbers, string, bool, nil, and the JSON text of arrays and objects.
func scannerValue(v any) any {
	switch x := v.(type) {
	case json.Number:
		if n, err := x.Int64(); err == nil {
			return n
		}
		if f, err := x.Float64(); err == nil {
			return f
		}
		return string(x)
	case []any, map[string]any:
		b, _ := json.Marshal(x)
		return b
	}
	return v
}

// Layouts of DATE, TIME, TIMETZ and TIMESTAMP values.
var timeLayouts = []string{
	time.RFC3339Nano,
	"2006-01-02",
	"15:04:05.999999999Z07:00",
	"15:04:05.999999999",
	"2006-01-02T15:04:05.999999999", // defensive: a timestamp without zone
}

func parseTime(s string) (time.Time, error) {
	if s == "infinity" || s == "-infinity" {
		return time.Time{}, fmt.Errorf("%s cannot be represented as time.Time (scan into a string)", s)
	}
	for _, l := range timeLayouts {
		if t, err := time.Parse(l, s); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("%q is not a date, time or timestamp", s)
}

func mismatch(v any, t reflect.Type) error {
	switch v.(type) {
	case []any:
		return fmt.Errorf("cannot store an array in %s", t)
	case map[string]any:
		return fmt.Errorf("cannot store an object in %s", t)
	case json.Number:
		return fmt.Errorf("cannot store number %s in %s", v, t)
	case string:
		return fmt.Errorf("cannot store string %q in %s", v, t)
	}
	return fmt.Errorf("cannot store %T %v in %s", v, v, t)
}

// Interval is a DuckDB INTERVAL: months, days and microseconds, kept apart
// because a month has no fixed length. The server sends it as an ISO 8601
// duration ("P1Y2M3DT4H5M6.5S"); Scan and Rows parse it into an Interval.
type Interval struct {
	Months int32 // years count as 12 months
	Days   int32 // weeks count as 7 days
	Micros int64 // hours, minutes, seconds and their fraction
}

// Duration returns the interval as a time.Duration, counting a day as 24
// hours. An interval with months cannot be converted.
func (iv Interval) Duration() (time.Duration, error) {
	if iv.Months != 0 {
		return 0, fmt.Errorf("interval %s has months: it has no fixed duration (scan into sdk.Interval)", iv)
	}
	return time.Duration(iv.Days)*24*time.Hour + time.Duration(iv.Micros)*time.Microsecond, nil
}

// String formats the interval as the server does.
func (iv Interval) String() string {
	if iv == (Interval{}) {
		return "PT0S"
	}
	var b strings.Builder
	b.WriteByte('P')
	if y := iv.Months / 12; y != 0 {
		fmt.Fprintf(&b, "%dY", y)
	}
	if m := iv.Months % 12; m != 0 {
		fmt.Fprintf(&b, "%dM", m)
	}
	if iv.Days != 0 {
		fmt.Fprintf(&b, "%dD", iv.Days)
	}
	if iv.Micros == 0 {
		return b.String()
	}
	b.WriteByte('T')
	us, sign := iv.Micros, ""
	if us < 0 {
		us, sign = -us, "-"
	}
	h, rest := us/3_600_000_000, us%3_600_000_000
	mi, rest := rest/60_000_000, rest%60_000_000
	sec, frac := rest/1_000_000, rest%1_000_000
	if h != 0 {
		fmt.Fprintf(&b, "%s%dH", sign, h)
	}
	if mi != 0 {
		fmt.Fprintf(&b, "%s%dM", sign, mi)
	}
	if sec != 0 || frac != 0 {
		fmt.Fprintf(&b, "%s%d", sign, sec)
		if frac != 0 {
			b.WriteString(strings.TrimRight(fmt.Sprintf(".%06d", frac), "0"))
		}
		b.WriteByte('S')
	}
	return b.String()
}

// UnmarshalText implements encoding.TextUnmarshaler with ParseInterval.
func (iv *Interval) UnmarshalText(b []byte) error {
	v, err := ParseInterval(string(b))
	if err != nil {
		return err
	}
	*iv = v
	return nil
}

// ParseInterval parses the ISO 8601 durations the server sends for
// INTERVAL values: P[nY][nM][nW][nD][T[nH][nM][n[.f]S]], where every number
// may carry a sign.
func ParseInterval(s string) (Interval, error) {
	var iv Interval
	bad := func() (Interval, error) { return Interval{}, fmt.Errorf("%q is not an ISO 8601 duration", s) }
	rest, ok := strings.CutPrefix(s, "P")
	if !ok || rest == "" {
		return bad()
	}
	inTime := false
	for rest != "" {
		if rest[0] == 'T' {
			if inTime {
				return bad()
			}
			inTime, rest = true, rest[1:]
			continue
		}
		i := 0
		for i < len(rest) && (rest[i] == '-' || rest[i] == '+' || rest[i] == '.' || (rest[i] >= '0' && rest[i] <= '9')) {
			i++
		}
		if i == 0 || i == len(rest) {
			return bad()
		}
		num, unit := rest[:i], rest[i]
		rest = rest[i+1:]
		if unit == 'S' && inTime {
			f, err := strconv.ParseFloat(num, 64)
			if err != nil {
				return bad()
			}
			// Whole and fractional microseconds separately: exact for
			// the six digits the server sends.
			whole, frac, _ := strings.Cut(num, ".")
			w, err := strconv.ParseInt(whole, 10, 64)
			if err != nil && whole != "-" && whole != "" {
				return bad()
			}
			us := w * 1_000_000
			if frac != "" {
				fr := (frac + "000000")[:6]
				fu, err := strconv.ParseInt(fr, 10, 64)
				if err != nil {
					return bad()
				}
				if f < 0 {
					fu = -fu
				}
				us += fu
			}
			iv.Micros += us
			continue
		}
		n, err := strconv.ParseInt(num, 10, 64)
		if err != nil {
			return bad()
		}
		switch {
		case !inTime && unit == 'Y':
			iv.Months += int32(n * 12)
		case !inTime && unit == 'M':
			iv.Months += int32(n)
		case !inTime && unit == 'W':
			iv.Days += int32(n * 7)
		case !inTime && unit == 'D':
			iv.Days += int32(n)
		case inTime && unit == 'H':
			iv.Micros += n * 3_600_000_000
		case inTime && unit == 'M':
			iv.Micros += n * 60_000_000
		default:
			return bad()
		}
	}
	return iv, nil
}

package hostedbackend

import (
	"regexp"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/extensions"
)

// Field metadata keys set on every Arrow field of a discovered table.
const (
	// MetaPGType holds the raw PostgreSQL type name (the OpenAPI format),
	// e.g. "timestamp with time zone" or "text[]".
	MetaPGType = "strata.pg_type"
	// MetaType marks utf8 fields whose text has a meaning of its own:
	// "json" (raw JSON text), "numeric" (exact decimal text) or "text"
	// (fallback for PostgreSQL types without a dedicated Arrow type).
	MetaType = "strata.type"
)

// Values of MetaType.
const (
	TypeJSON    = "json"
	TypeNumeric = "numeric"
	TypeText    = "text"
)

// colKind is how one JSON value is turned into an Arrow value.
type colKind int

const (
	kindString  colKind = iota // utf8: a JSON string (text, varchar, char)
	kindText                   // utf8: string as is, other JSON values as raw text
	kindJSON                   // utf8: raw JSON text
	kindNumeric                // utf8: exact number text
	kindInt16
	kindInt32
	kindInt64
	kindFloat32
	kindFloat64
	kindBool
	kindDecimal
	kindUUID
	kindDate
	kindTime
	kindTimestamp
	kindTimestampTZ
	kindInterval
	kindBytea
)

var numericTypmod = regexp.MustCompile(`^(?:numeric|decimal)\s*\(\s*(\d+)\s*(?:,\s*(-?\d+)\s*)?\)$`)

// scalarType maps a PostgreSQL scalar type name (lower case, no []) to its
// Arrow type and decoding kind.
func scalarType(pg string) (arrow.DataType, colKind, string) {
	switch pg {
	case "smallint", "int2":
		return arrow.PrimitiveTypes.Int16, kindInt16, ""
	case "integer", "int", "int4":
		return arrow.PrimitiveTypes.Int32, kindInt32, ""
	case "bigint", "int8":
		return arrow.PrimitiveTypes.Int64, kindInt64, ""
	case "real", "float4":
		return arrow.PrimitiveTypes.Float32, kindFloat32, ""
	case "double precision", "float8":
		return arrow.PrimitiveTypes.Float64, kindFloat64, ""
	case "boolean", "bool":
		return arrow.FixedWidthTypes.Boolean, kindBool, ""
	case "numeric", "decimal":
		return arrow.BinaryTypes.String, kindNumeric, TypeNumeric
	case "text", "character varying", "varchar", "character", "char", "bpchar", "name", "citext":
		return arrow.BinaryTypes.String, kindString, ""
	case "uuid":
		return extensions.NewUUIDType(), kindUUID, ""
	case "json", "jsonb":
		return arrow.BinaryTypes.String, kindJSON, TypeJSON
	case "date":
		return arrow.FixedWidthTypes.Date32, kindDate, ""
	case "time", "time without time zone":
		return arrow.FixedWidthTypes.Time64us, kindTime, ""
	case "timestamp", "timestamp without time zone":
		return &arrow.TimestampType{Unit: arrow.Microsecond}, kindTimestamp, ""
	case "timestamptz", "timestamp with time zone":
		return &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}, kindTimestampTZ, ""
	case "interval":
		return arrow.FixedWidthTypes.MonthDayNanoInterval, kindInterval, ""
	case "bytea":
		return arrow.BinaryTypes.Binary, kindBytea, ""
	}
	if m := numericTypmod.FindStringSubmatch(pg); m != nil {
		p, _ := strconv.Atoi(m[1])
		s := 0
		if m[2] != "" {
			s, _ = strconv.Atoi(m[2])
		}
		if p >= 1 && p <= 38 && s >= 0 && s <= p {
			return &arrow.Decimal128Type{Precision: int32(p), Scale: int32(s)}, kindDecimal, ""
		}
		return arrow.BinaryTypes.String, kindNumeric, TypeNumeric
	}
	// char(n), varchar(n), timestamp(3) with time zone … as some servers
	// report them with a type modifier.
	if base, ok := stripTypmod(pg); ok {
		return scalarType(base)
	}
	return arrow.BinaryTypes.String, kindText, TypeText
}

// stripTypmod removes a "(n)" type modifier, e.g. "character varying(20)" or
// "timestamp(3) with time zone". Numeric is handled by the caller.
func stripTypmod(pg string) (string, bool) {
	i := strings.IndexByte(pg, '(')
	if i < 0 {
		return "", false
	}
	j := strings.IndexByte(pg[i:], ')')
	if j < 0 {
		return "", false
	}
	base := strings.TrimSpace(pg[:i]) + pg[i+j+1:]
	base = strings.Join(strings.Fields(base), " ")
	if strings.HasPrefix(base, "numeric") || strings.HasPrefix(base, "decimal") {
		return "", false
	}
	return base, true
}

// normalizeFormat lower-cases a format and returns the element type name and
// true for an array type ("text[]" or "_text").
func normalizeFormat(format string) (string, bool) {
	f := strings.ToLower(strings.Join(strings.Fields(format), " "))
	if strings.HasSuffix(f, "[]") {
		f = strings.TrimSuffix(f, "[]")
		// Multi-dimensional declarations ("integer[][]") are the same type
		// in PostgreSQL.
		for strings.HasSuffix(f, "[]") {
			f = strings.TrimSuffix(f, "[]")
		}
		return f, true
	}
	if strings.HasPrefix(f, "_") && len(f) > 1 {
		if _, k, _ := scalarType(f[1:]); k != kindText {
			return f[1:], true
		}
	}
	return f, false
}

// FieldForFormat returns the Arrow field for a column of the given
// PostgreSQL format (as found in PostgREST's OpenAPI document), following the
// mapping in the package documentation.
func FieldForFormat(name, format string, nullable bool) arrow.Field {
	elem, isArray := normalizeFormat(format)
	dt, _, meta := scalarType(elem)
	md := map[string]string{MetaPGType: format}
	if meta != "" {
		md[MetaType] = meta
	}
	if isArray {
		dt = arrow.ListOfField(arrow.Field{Name: "item", Type: dt, Nullable: true})
	}
	return arrow.Field{Name: name, Type: dt, Nullable: nullable, Metadata: arrow.MetadataFrom(md)}
}

// kindOfField recovers the decoding kind of a field from its Arrow type and
// metadata, so Read works from nothing but the schema Discover returned
// (also after the schema went through Arrow IPC).
func kindOfField(f arrow.Field) (colKind, bool) {
	dt := f.Type
	isList := false
	if lt, ok := dt.(*arrow.ListType); ok {
		dt = lt.Elem()
		isList = true
	}
	meta := ""
	if v, ok := f.Metadata.GetValue(MetaType); ok {
		meta = v
	}
	return kindOfType(dt, meta), isList
}

func kindOfType(dt arrow.DataType, meta string) colKind {
	switch t := dt.(type) {
	case *arrow.Int16Type:
		return kindInt16
	case *arrow.Int32Type:
		return kindInt32
	case *arrow.Int64Type:
		return kindInt64
	case *arrow.Float32Type:
		return kindFloat32
	case *arrow.Float64Type:
		return kindFloat64
	case *arrow.BooleanType:
		return kindBool
	case *arrow.Decimal128Type:
		return kindDecimal
	case *extensions.UUIDType:
		return kindUUID
	case *arrow.Date32Type:
		return kindDate
	case *arrow.Time64Type:
		return kindTime
	case *arrow.TimestampType:
		if t.TimeZone != "" {
			return kindTimestampTZ
		}
		return kindTimestamp
	case *arrow.MonthDayNanoIntervalType:
		return kindInterval
	case *arrow.BinaryType:
		return kindBytea
	}
	switch meta {
	case TypeJSON:
		return kindJSON
	case TypeNumeric:
		return kindNumeric
	case TypeText:
		return kindText
	}
	return kindString
}

package query

import (
	"fmt"
	"io"
	"math"
	"math/big"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	duckdb "github.com/duckdb/duckdb-go/v2"
)

// arrowBatchRows is the number of rows per Arrow record batch.
const arrowBatchRows = 8192

// WriteArrow writes the rows as an Arrow IPC stream (schema, record batches
// of up to 8192 rows, end-of-stream marker), same limits as WriteJSON. Each
// field carries the DuckDB type name in its metadata under "duckdb.type".
//
// The batches are built from the values the driver scans, which needs no
// build tag (the driver's own Arrow interface requires `-tags duckdb_arrow`
// on every build and test). Types map as follows: integers, floats,
// booleans, BLOB (binary), DATE (date32), TIME (time64[us]), TIMESTAMP
// (timestamp[us], and _S/_MS/_NS with their unit), TIMESTAMPTZ
// (timestamp[us, UTC]), INTERVAL (month_day_nano_interval), DECIMAL
// (decimal128(p,s)), HUGEINT (decimal128(38,0)), LIST (list), ARRAY
// (fixed_size_list), STRUCT (struct) and MAP (map) natively; UHUGEINT,
// BIGNUM, UUID, ENUM, BIT, TIMETZ and VARCHAR as utf8 in their JSON text
// forms; JSON and UNION as utf8 holding their JSON text.
//
// Like WriteJSON, it writes nothing to w before the last row was read.
func (r *Result) WriteArrow(w io.Writer) error {
	sp, err := r.startWrite()
	if err != nil {
		return err
	}
	defer sp.close()
	fields := make([]arrow.Field, len(r.cols))
	for i, c := range r.cols {
		fields[i] = arrow.Field{
			Name:     c.Name,
			Type:     arrowType(r.types[i]),
			Nullable: true,
			Metadata: arrow.NewMetadata([]string{"duckdb.type"}, []string{c.Type}),
		}
	}
	schema := arrow.NewSchema(fields, nil)
	mem := memory.NewGoAllocator()
	bld := array.NewRecordBuilder(mem, schema)
	defer bld.Release()
	iw := ipc.NewWriter(sp, ipc.WithSchema(schema), ipc.WithAllocator(mem))
	flush := func() error {
		rec := bld.NewRecordBatch()
		defer rec.Release()
		if rec.NumRows() == 0 {
			return nil
		}
		if err := iw.Write(rec); err != nil {
			return fmt.Errorf("query: write arrow batch: %w", err)
		}
		return nil
	}
	var scratch []byte
	inBatch := 0
	for {
		ok, err := r.next()
		if err != nil {
			return r.streamErr(err)
		}
		if !ok {
			break
		}
		for i, v := range r.row {
			scratch = appendArrow(bld.Field(i), v, r.types[i], scratch)
		}
		inBatch++
		if inBatch == arrowBatchRows {
			if err := flush(); err != nil {
				return err
			}
			inBatch = 0
		}
	}
	r.finish()
	if err := flush(); err != nil {
		return err
	}
	if err := iw.Close(); err != nil {
		return fmt.Errorf("query: close arrow stream: %w", err)
	}
	return sp.sendTo(r.ctx, w)
}

var (
	arrowHugeint     = &arrow.Decimal128Type{Precision: 38, Scale: 0}
	arrowTimestampTZ = &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}
)

// arrowType is the Arrow type of a DuckDB type (see WriteArrow).
func arrowType(t *typeNode) arrow.DataType {
	switch t.kind {
	case kindBool:
		return arrow.FixedWidthTypes.Boolean
	case kindInt8:
		return arrow.PrimitiveTypes.Int8
	case kindInt16:
		return arrow.PrimitiveTypes.Int16
	case kindInt32:
		return arrow.PrimitiveTypes.Int32
	case kindInt64:
		return arrow.PrimitiveTypes.Int64
	case kindUint8:
		return arrow.PrimitiveTypes.Uint8
	case kindUint16:
		return arrow.PrimitiveTypes.Uint16
	case kindUint32:
		return arrow.PrimitiveTypes.Uint32
	case kindUint64:
		return arrow.PrimitiveTypes.Uint64
	case kindFloat:
		return arrow.PrimitiveTypes.Float32
	case kindDouble:
		return arrow.PrimitiveTypes.Float64
	case kindDecimal:
		return &arrow.Decimal128Type{Precision: int32(t.width), Scale: int32(t.scale)}
	case kindHugeint:
		return arrowHugeint
	case kindBlob, kindGeometry:
		return arrow.BinaryTypes.Binary
	case kindDate:
		return arrow.FixedWidthTypes.Date32
	case kindTime:
		return arrow.FixedWidthTypes.Time64us
	case kindTimestamp:
		return arrow.FixedWidthTypes.Timestamp_us
	case kindTimestampS:
		return arrow.FixedWidthTypes.Timestamp_s
	case kindTimestampMS:
		return arrow.FixedWidthTypes.Timestamp_ms
	case kindTimestampNS:
		return arrow.FixedWidthTypes.Timestamp_ns
	case kindTimestampTZ:
		return arrowTimestampTZ
	case kindInterval:
		return arrow.FixedWidthTypes.MonthDayNanoInterval
	case kindNull:
		return arrow.Null
	case kindList:
		return arrow.ListOf(arrowType(t.elem))
	case kindArray:
		return arrow.FixedSizeListOf(int32(t.size), arrowType(t.elem))
	case kindStruct:
		fs := make([]arrow.Field, len(t.fields))
		for i, f := range t.fields {
			fs[i] = arrow.Field{Name: f.name, Type: arrowType(f.typ), Nullable: true}
		}
		return arrow.StructOf(fs...)
	case kindMap:
		return arrow.MapOf(arrowType(t.key), arrowType(t.value))
	default:
		return arrow.BinaryTypes.String
	}
}

// toDecimal128 converts a DECIMAL's or HUGEINT's value. FromBigInt panics on
// -2^127 (HUGEINT's minimum) although it fits.
func toDecimal128(v *big.Int) decimal128.Num {
	if v.BitLen() <= 127 {
		return decimal128.FromBigInt(v)
	}
	if v.Sign() < 0 {
		return decimal128.New(math.MinInt64, 0)
	}
	return decimal128.MaxDecimal128
}

// appendArrow appends v to the builder made for t; scratch is a reusable
// buffer for text forms, returned for the next call.
func appendArrow(b array.Builder, v any, t *typeNode, scratch []byte) []byte {
	if v == nil {
		b.AppendNull()
		return scratch
	}
	switch b := b.(type) {
	case *array.BooleanBuilder:
		x, _ := v.(bool)
		b.Append(x)
	case *array.Int8Builder:
		x, _ := v.(int8)
		b.Append(x)
	case *array.Int16Builder:
		x, _ := v.(int16)
		b.Append(x)
	case *array.Int32Builder:
		x, _ := v.(int32)
		b.Append(x)
	case *array.Int64Builder:
		x, _ := v.(int64)
		b.Append(x)
	case *array.Uint8Builder:
		x, _ := v.(uint8)
		b.Append(x)
	case *array.Uint16Builder:
		x, _ := v.(uint16)
		b.Append(x)
	case *array.Uint32Builder:
		x, _ := v.(uint32)
		b.Append(x)
	case *array.Uint64Builder:
		x, _ := v.(uint64)
		b.Append(x)
	case *array.Float32Builder:
		x, _ := v.(float32)
		b.Append(x)
	case *array.Float64Builder:
		x, _ := v.(float64)
		b.Append(x)
	case *array.Decimal128Builder:
		switch x := v.(type) {
		case duckdb.Decimal:
			b.Append(toDecimal128(x.Value))
		case *big.Int:
			b.Append(toDecimal128(x))
		default:
			b.AppendNull()
		}
	case *array.BinaryBuilder:
		x, _ := v.([]byte)
		b.Append(x)
	case *array.Date32Builder:
		x, _ := v.(time.Time)
		b.Append(arrow.Date32(x.Unix() / 86400))
	case *array.Time64Builder:
		x, _ := v.(time.Time)
		h, m, s := x.Clock()
		us := (int64(h)*3600+int64(m)*60+int64(s))*1_000_000 + int64(x.Nanosecond()/1000)
		b.Append(arrow.Time64(us))
	case *array.TimestampBuilder:
		x, _ := v.(time.Time)
		var ts int64
		switch b.Type().(*arrow.TimestampType).Unit {
		case arrow.Second:
			ts = x.Unix()
		case arrow.Millisecond:
			ts = x.UnixMilli()
		case arrow.Nanosecond:
			ts = x.UnixNano()
		default:
			ts = x.UnixMicro()
		}
		b.Append(arrow.Timestamp(ts))
	case *array.MonthDayNanoIntervalBuilder:
		x, _ := v.(duckdb.Interval)
		b.Append(arrow.MonthDayNanoInterval{Months: x.Months, Days: x.Days, Nanoseconds: x.Micros * 1000})
	case *array.MapBuilder:
		m, ok := v.(duckdb.OrderedMap)
		if !ok {
			b.AppendNull()
			break
		}
		b.Append(true)
		keys, vals := m.Keys(), m.Values()
		for i := range keys {
			scratch = appendArrow(b.KeyBuilder(), keys[i], t.key, scratch)
			scratch = appendArrow(b.ItemBuilder(), vals[i], t.value, scratch)
		}
	case *array.ListBuilder:
		xs, ok := v.([]any)
		if !ok {
			b.AppendNull()
			break
		}
		b.Append(true)
		for _, x := range xs {
			scratch = appendArrow(b.ValueBuilder(), x, t.elem, scratch)
		}
	case *array.FixedSizeListBuilder:
		xs, ok := v.([]any)
		if !ok || len(xs) != t.size {
			b.AppendNull()
			break
		}
		b.Append(true)
		for _, x := range xs {
			scratch = appendArrow(b.ValueBuilder(), x, t.elem, scratch)
		}
	case *array.StructBuilder:
		m, ok := v.(map[string]any)
		if !ok {
			b.AppendNull()
			break
		}
		b.Append(true)
		for i, f := range t.fields {
			scratch = appendArrow(b.FieldBuilder(i), m[f.name], f.typ, scratch)
		}
	case *array.StringBuilder:
		if s, ok := v.(string); ok && t.kind != kindJSON {
			b.Append(s)
			break
		}
		scratch = appendCSVText(scratch[:0], v, t)
		b.BinaryBuilder.Append(scratch)
	case *array.NullBuilder:
		b.AppendNull()
	default:
		b.AppendNull()
	}
	return scratch
}

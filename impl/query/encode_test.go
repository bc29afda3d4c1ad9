package query_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/google/uuid"

	"github.com/stratahq/strata/impl/query"
)

// jsonCases: a SQL expression, its expected JSON encoding and column type.
var jsonCases = []struct {
	expr, want, typ string
}{
	{"NULL", `null`, "INTEGER"},
	{"NULL::VARCHAR", `null`, "VARCHAR"},
	{"true", `true`, "BOOLEAN"},
	{"false", `false`, "BOOLEAN"},
	{"(-128)::TINYINT", `-128`, "TINYINT"},
	{"32767::SMALLINT", `32767`, "SMALLINT"},
	{"(-2147483648)::INTEGER", `-2147483648`, "INTEGER"},
	{"255::UTINYINT", `255`, "UTINYINT"},
	{"65535::USMALLINT", `65535`, "USMALLINT"},
	{"4294967295::UINTEGER", `4294967295`, "UINTEGER"},
	{"9007199254740991::BIGINT", `9007199254740991`, "BIGINT"},
	{"(-9007199254740991)::BIGINT", `-9007199254740991`, "BIGINT"},
	{"9007199254740992::BIGINT", `"9007199254740992"`, "BIGINT"},
	{"(-9223372036854775808)::BIGINT", `"-9223372036854775808"`, "BIGINT"},
	{"9007199254740991::UBIGINT", `9007199254740991`, "UBIGINT"},
	{"18446744073709551615::UBIGINT", `"18446744073709551615"`, "UBIGINT"},
	{"42::HUGEINT", `42`, "HUGEINT"},
	{"170141183460469231731687303715884105727::HUGEINT", `"170141183460469231731687303715884105727"`, "HUGEINT"},
	{"(-170141183460469231731687303715884105728)::HUGEINT", `"-170141183460469231731687303715884105728"`, "HUGEINT"},
	{"340282366920938463463374607431768211455::UHUGEINT", `"340282366920938463463374607431768211455"`, "UHUGEINT"},
	{"(SELECT sum(x) FROM (VALUES (1), (2)) v(x))", `3`, "HUGEINT"},
	{"123456789012345678901234567890::BIGNUM", `"123456789012345678901234567890"`, "BIGNUM"},
	{"1.5::FLOAT", `1.5`, "FLOAT"},
	{"0.1::DOUBLE", `0.1`, "DOUBLE"},
	{"1e300::DOUBLE", `1e+300`, "DOUBLE"},
	{"1e-7::DOUBLE", `1e-7`, "DOUBLE"},
	{"'NaN'::DOUBLE", `null`, "DOUBLE"},
	{"'Infinity'::DOUBLE", `null`, "DOUBLE"},
	{"'-Infinity'::FLOAT", `null`, "FLOAT"},
	{"1.50::DECIMAL(5,2)", `"1.50"`, "DECIMAL(5,2)"},
	{"(-0.05)::DECIMAL(4,3)", `"-0.050"`, "DECIMAL(4,3)"},
	{"12::DECIMAL(4,0)", `"12"`, "DECIMAL(4,0)"},
	{"12345678901234567890.123456789012345678::DECIMAL(38,18)", `"12345678901234567890.123456789012345678"`, "DECIMAL(38,18)"},
	{"'héllo \"q\" \\ \n\t'::VARCHAR", `"héllo \"q\" \\ \n\t"`, "VARCHAR"},
	{"chr(0) || chr(31) || '<>&' || chr(8232)", `"\u0000\u001f<>&\u2028"`, "VARCHAR"},
	{"'a'::ENUM('a', 'b')", `"a"`, "ENUM"},
	{`'{"b": [1, 2.5, null], "a": {"x": true}}'::JSON`, `{"a":{"x":true},"b":[1,2.5,null]}`, "JSON"},
	{`'"just a string"'::JSON`, `"just a string"`, "JSON"},
	{"'\\xAA\\x00b'::BLOB", `"` + base64.StdEncoding.EncodeToString([]byte{0xaa, 0, 'b'}) + `"`, "BLOB"},
	{"'101'::BIT", `"101"`, "BIT"},
	{"'0dd4a0b1-66a5-4d8b-9a43-2a0c3f8b5d1e'::UUID", `"0dd4a0b1-66a5-4d8b-9a43-2a0c3f8b5d1e"`, "UUID"},
	{"'ffffffff-ffff-ffff-ffff-ffffffffffff'::UUID", `"ffffffff-ffff-ffff-ffff-ffffffffffff"`, "UUID"},
	{"'00000000-0000-0000-0000-000000000001'::UUID", `"00000000-0000-0000-0000-000000000001"`, "UUID"},
	{"DATE '2024-02-29'", `"2024-02-29"`, "DATE"},
	{"DATE '0044-03-15 (BC)'", `"-0043-03-15"`, "DATE"},
	{"'infinity'::DATE", `"infinity"`, "DATE"},
	{"'-infinity'::DATE", `"-infinity"`, "DATE"},
	{"TIME '13:45:07'", `"13:45:07"`, "TIME"},
	{"TIME '13:45:07.25'", `"13:45:07.250000"`, "TIME"},
	{"'13:45:07+02:30'::TIMETZ", `"13:45:07+02:30"`, "TIMETZ"},
	{"TIMESTAMP '2024-05-01 12:30:00'", `"2024-05-01T12:30:00Z"`, "TIMESTAMP"},
	{"TIMESTAMP '2024-05-01 12:30:00.123456'", `"2024-05-01T12:30:00.123456Z"`, "TIMESTAMP"},
	{"'2024-05-01 12:30:00+02'::TIMESTAMPTZ", `"2024-05-01T10:30:00Z"`, "TIMESTAMPTZ"},
	{"'2024-05-01 12:30:00.4'::TIMESTAMP_S", `"2024-05-01T12:30:00Z"`, "TIMESTAMP_S"},
	{"'2024-05-01 12:30:00.5'::TIMESTAMP_MS", `"2024-05-01T12:30:00.500000Z"`, "TIMESTAMP_MS"},
	{"'2024-05-01 12:30:00.123456789'::TIMESTAMP_NS", `"2024-05-01T12:30:00.123456789Z"`, "TIMESTAMP_NS"},
	{"'infinity'::TIMESTAMP", `"infinity"`, "TIMESTAMP"},
	{"'-infinity'::TIMESTAMPTZ", `"-infinity"`, "TIMESTAMPTZ"},
	{"TIMESTAMP '294246-12-31 00:00:00'", `"+294246-12-31T00:00:00Z"`, "TIMESTAMP"},
	{"INTERVAL '1 year 2 months 3 days 04:05:06.5'", `"P1Y2M3DT4H5M6.5S"`, "INTERVAL"},
	{"INTERVAL '-1 month 2 days'", `"P-1M2D"`, "INTERVAL"},
	{"INTERVAL '-90 minutes'", `"PT-1H-30M"`, "INTERVAL"},
	{"INTERVAL '0 seconds'", `"PT0S"`, "INTERVAL"},
	{"[1, 2, NULL]", `[1,2,null]`, "INTEGER[]"},
	{"[[1], [], NULL]", `[[1],[],null]`, "INTEGER[][]"},
	{"['a', 'b']::VARCHAR[2]", `["a","b"]`, "VARCHAR[2]"},
	{"[1.5, 'NaN'::DOUBLE]", `[1.5,null]`, "DOUBLE[]"},
	{"[DATE '2024-01-02']", `["2024-01-02"]`, "DATE[]"},
	{"['0dd4a0b1-66a5-4d8b-9a43-2a0c3f8b5d1e'::UUID]", `["0dd4a0b1-66a5-4d8b-9a43-2a0c3f8b5d1e"]`, "UUID[]"},
	{"{'z': 1, 'a': 'x', 'm': [true]}", `{"z":1,"a":"x","m":[true]}`, `STRUCT("z" INTEGER, "a" VARCHAR, "m" BOOLEAN[])`},
	{`{'we"ird key': 1}`, `{"we\"ird key":1}`, `STRUCT("we""ird key" INTEGER)`},
	{"[{'a': 1::DECIMAL(3,1)}]", `[{"a":"1.0"}]`, `STRUCT("a" DECIMAL(3,1))[]`},
	{"MAP {'k1': 1, 'k2': 2}", `{"k1":1,"k2":2}`, "MAP(VARCHAR, INTEGER)"},
	{"MAP {1: 'a', 2: 'b'}", `[{"key":1,"value":"a"},{"key":2,"value":"b"}]`, "MAP(INTEGER, VARCHAR)"},
	{"MAP {'k': {'x': 1}}", `{"k":{"x":1}}`, `MAP(VARCHAR, STRUCT("x" INTEGER))`},
	{"union_value(age := 5::SMALLINT)::UNION(name VARCHAR, age SMALLINT)", `{"age":5}`, `UNION("name" VARCHAR, "age" SMALLINT)`},
	{"'POINT(1 2)'::GEOMETRY IS NOT NULL", `true`, "BOOLEAN"},
	{`['{"a": 1}'::JSON, '[2]'::JSON]`, `[{"a":1},[2]]`, "VARCHAR[]"},
	{`{'j': '{"x": null}'::JSON}`, `{"j":{"x":null}}`, `STRUCT("j" VARCHAR)`},
	{"MAP {'a'::ENUM('a', 'b'): 1}", `{"a":1}`, "MAP(ENUM, INTEGER)"},
	{"[INTERVAL 1 DAY, NULL]", `["P1D",null]`, "INTERVAL[]"},
	{"[9007199254740993::BIGINT]", `["9007199254740993"]`, "BIGINT[]"},
}

func TestJSONEncodingOfEveryType(t *testing.T) {
	t.Parallel()
	e, _ := newEngine(t)
	tenant := uuid.New()
	for _, tc := range jsonCases {
		t.Run(tc.expr, func(t *testing.T) {
			t.Parallel()
			res, err := runJSON(t, e, tenant, query.Request{SQL: "SELECT " + tc.expr + " AS v"})
			if err != nil {
				t.Fatalf("%s: %v", tc.expr, err)
			}
			if got := string(res.Rows[0]["v"]); got != tc.want {
				t.Errorf("%s: got %s, want %s", tc.expr, got, tc.want)
			}
			if got := res.Columns[0].Type; got != tc.typ {
				t.Errorf("%s: type %s, want %s", tc.expr, got, tc.typ)
			}
		})
	}
}

// TestAllTypesEncode runs DuckDB's test_all_types() (min, max and NULL of
// every type) through all three formats: everything must encode to valid
// output.
func TestAllTypesEncode(t *testing.T) {
	t.Parallel()
	e, _ := newEngine(t)
	tenant := uuid.New()
	// time_ns: not supported by the driver (see TestUnsupportedType).
	const q = "SELECT * EXCLUDE (time_ns) FROM test_all_types()"
	res := mustQuery(t, e, tenant, q)
	if res.RowCount != 3 || len(res.Columns) < 50 {
		t.Fatalf("rowCount %d, %d columns", res.RowCount, len(res.Columns))
	}
	for _, f := range []func(*query.Result, *bytes.Buffer) error{
		func(r *query.Result, b *bytes.Buffer) error { return r.WriteCSV(b) },
		func(r *query.Result, b *bytes.Buffer) error { return r.WriteArrow(b) },
	} {
		r, err := e.Run(context.Background(), tenant, query.Request{SQL: q, MaxRows: 10})
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		if err := f(r, &buf); err != nil {
			t.Fatal(err)
		}
		r.Close()
		if buf.Len() == 0 {
			t.Fatal("empty output")
		}
	}
}

func TestUnsupportedType(t *testing.T) {
	t.Parallel()
	e, _ := newEngine(t)
	_, err := runJSON(t, e, uuid.New(), query.Request{SQL: "SELECT '12:00:00'::TIME_NS AS t"})
	if err == nil {
		t.Fatal("TIME_NS encoded; update the package documentation")
	}
	if status, code := apiErr(t, err); status != 400 || code != "query_execution_error" {
		t.Fatalf("got %d %s", status, code)
	}
}

func TestCSV(t *testing.T) {
	t.Parallel()
	e, _ := newEngine(t)
	r, err := e.Run(context.Background(), uuid.New(), query.Request{MaxRows: 10, SQL: `
		SELECT * FROM (VALUES
			(1, 'plain', 1.5::DOUBLE, DATE '2024-01-02', [1, 2], 1.50::DECIMAL(4,2)),
			(2, 'with, comma "and" quotes', 'NaN'::DOUBLE, NULL, NULL, NULL),
			(3, '', NULL, NULL, [], NULL),
			(4, NULL, 'Infinity'::DOUBLE, NULL, NULL, NULL),
			(5, e'line\nbreak', NULL, NULL, NULL, NULL)
		) v(id, "te,xt", d, day, l, dec) ORDER BY id`})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var buf bytes.Buffer
	if err := r.WriteCSV(&buf); err != nil {
		t.Fatal(err)
	}
	want := "id,\"te,xt\",d,day,l,dec\n" +
		"1,plain,1.5,2024-01-02,\"[1,2]\",1.50\n" +
		"2,\"with, comma \"\"and\"\" quotes\",NaN,,,\n" +
		"3,\"\",,,[],\n" +
		"4,,Infinity,,,\n" +
		"5,\"line\nbreak\",,,,\n"
	if got := buf.String(); got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
	if r.RowCount() != 5 || r.Truncated() {
		t.Errorf("rowCount %d truncated %v", r.RowCount(), r.Truncated())
	}
}

func TestArrow(t *testing.T) {
	t.Parallel()
	e, _ := newEngine(t)
	tenant := uuid.New()
	exec(t, e, tenant, `CREATE TABLE a AS SELECT
		range::INTEGER AS i, 'row ' || range AS s, range / 2.0 AS d,
		TIMESTAMP '2024-01-01' + INTERVAL (range) SECOND AS ts,
		CASE WHEN range % 3 = 0 THEN NULL ELSE [range, range + 1] END AS l,
		{'k': range::VARCHAR, 'n': range} AS st,
		MAP {'x': range} AS m,
		(range * 1.25)::DECIMAL(10,2) AS dec,
		'0dd4a0b1-66a5-4d8b-9a43-2a0c3f8b5d1e'::UUID AS u,
		[range, range]::BIGINT[2] AS fixed,
		DATE '2024-01-01' AS day, INTERVAL 1 DAY AS iv
		FROM range(20000)`)
	r, err := e.Run(context.Background(), tenant, query.Request{SQL: "SELECT * FROM a ORDER BY i", MaxRows: 15000})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var buf bytes.Buffer
	if err := r.WriteArrow(&buf); err != nil {
		t.Fatal(err)
	}
	if !r.Truncated() || r.RowCount() != 15000 {
		t.Errorf("truncated %v rowCount %d", r.Truncated(), r.RowCount())
	}
	rd, err := ipc.NewReader(&buf)
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Release()
	sch := rd.Schema()
	wantTypes := map[string]arrow.DataType{
		"i":     arrow.PrimitiveTypes.Int32,
		"s":     arrow.BinaryTypes.String,
		"ts":    arrow.FixedWidthTypes.Timestamp_us,
		"dec":   &arrow.Decimal128Type{Precision: 10, Scale: 2},
		"u":     arrow.BinaryTypes.String,
		"day":   arrow.FixedWidthTypes.Date32,
		"iv":    arrow.FixedWidthTypes.MonthDayNanoInterval,
		"l":     arrow.ListOf(arrow.PrimitiveTypes.Int64),
		"fixed": arrow.FixedSizeListOf(2, arrow.PrimitiveTypes.Int64),
	}
	for name, want := range wantTypes {
		idx := sch.FieldIndices(name)
		if len(idx) != 1 {
			t.Fatalf("no field %s in %v", name, sch)
		}
		if got := sch.Field(idx[0]).Type; !arrow.TypeEqual(got, want) {
			t.Errorf("%s: type %v, want %v", name, got, want)
		}
	}
	if md, _ := sch.Field(0).Metadata.GetValue("duckdb.type"); md != "INTEGER" {
		t.Errorf("duckdb.type metadata %q", md)
	}
	rows, batches := 0, 0
	for rd.Next() {
		rec := rd.RecordBatch()
		batches++
		is := rec.Column(0).(*array.Int32)
		ss := rec.Column(1).(*array.String)
		ls := rec.Column(4).(*array.List)
		for i := 0; i < int(rec.NumRows()); i++ {
			if int(is.Value(i)) != rows {
				t.Fatalf("row %d has i=%d", rows, is.Value(i))
			}
			if ss.Value(i) != "row "+itoa(rows) {
				t.Fatalf("row %d has s=%q", rows, ss.Value(i))
			}
			if ls.IsNull(i) != (rows%3 == 0) {
				t.Fatalf("row %d: list null %v", rows, ls.IsNull(i))
			}
			rows++
		}
		if rows == 1+0 {
			st := rec.Column(5).(*array.Struct)
			if got := st.Field(0).(*array.String).Value(0); got != "0" {
				t.Errorf("struct field k = %q", got)
			}
			if got := rec.Column(8).(*array.String).Value(0); got != "0dd4a0b1-66a5-4d8b-9a43-2a0c3f8b5d1e" {
				t.Errorf("uuid = %q", got)
			}
			if got := rec.Column(7).(*array.Decimal128).Value(0).BigInt().String(); got != "0" {
				t.Errorf("decimal = %s", got)
			}
		}
	}
	if err := rd.Err(); err != nil {
		t.Fatal(err)
	}
	if rows != 15000 || batches != 2 {
		t.Errorf("read %d rows in %d batches", rows, batches)
	}
}

func TestArrowEmptyResult(t *testing.T) {
	t.Parallel()
	e, _ := newEngine(t)
	r, err := e.Run(context.Background(), uuid.New(), query.Request{SQL: "SELECT 1 AS x WHERE false", MaxRows: 10})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var buf bytes.Buffer
	if err := r.WriteArrow(&buf); err != nil {
		t.Fatal(err)
	}
	rd, err := ipc.NewReader(&buf)
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Release()
	if rd.Next() {
		t.Error("a batch in an empty result")
	}
	if got := rd.Schema().Field(0).Name; got != "x" {
		t.Errorf("schema field %q", got)
	}
}

func itoa(i int) string {
	var b strings.Builder
	if i == 0 {
		return "0"
	}
	var d []byte
	for ; i > 0; i /= 10 {
		d = append([]byte{byte('0' + i%10)}, d...)
	}
	b.Write(d)
	return b.String()
}

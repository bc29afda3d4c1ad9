package sdk_test

import (
	"database/sql"
	"encoding/json"
	"math"
	"math/big"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/stratahq/strata/impl/principal"
	"github.com/stratahq/strata/sdk"
)

// allTypes selects one value of each DuckDB type whose JSON encoding needs
// undoing.
const allTypes = `SELECT
	9007199254740991::BIGINT AS small_big,
	9007199254740993::BIGINT AS big,
	(-9223372036854775807 - 1)::BIGINT AS min_big,
	18446744073709551615::UBIGINT AS ubig,
	170141183460469231731687303715884105727::HUGEINT AS huge,
	12.30::DECIMAL(10,2) AS price,
	-123456789012345678.123456789::DECIMAL(38,9) AS wide,
	7.00::DECIMAL(5,2) AS whole,
	TIMESTAMP '2026-01-02 03:04:05.123456' AS ts,
	TIMESTAMPTZ '2026-01-02 03:04:05+02' AS tstz,
	DATE '2026-03-04' AS d,
	TIME '13:14:15.5' AS tm,
	INTERVAL '1 year 2 months 3 days 04:05:06.5' AS iv,
	INTERVAL '90 minutes' AS iv2,
	'infinity'::TIMESTAMP AS inf,
	'\xAA\xBB'::BLOB AS bytes,
	'f47ac10b-58cc-4372-a567-0e02b2c3d479'::UUID AS id,
	[1, 2, 3] AS list,
	{'a': 1, 'b': 'x'} AS st,
	MAP {1: 'one', 2: 'two'} AS m,
	NULL::INTEGER AS nothing,
	'nan'::DOUBLE AS nan,
	2.5::DOUBLE AS dbl,
	TRUE AS flag,
	'{"k": [1, 2]}'::JSON AS js`

type allTypesRow struct {
	SmallBig int64         `json:"small_big"`
	Big      int64         `json:"big"`
	MinBig   int64         `json:"min_big"`
	UBig     uint64        `json:"ubig"`
	Huge     *big.Int      `json:"huge"`
	Price    *big.Rat      `json:"price"`
	Wide     string        `json:"wide"`
	Whole    int32         `json:"whole"`
	TS       time.Time     `json:"ts"`
	TSTZ     time.Time     `json:"tstz"`
	D        time.Time     `json:"d"`
	Tm       time.Time     `json:"tm"`
	IV       sdk.Interval  `json:"iv"`
	IV2      time.Duration `json:"iv2"`
	Inf      string        `json:"inf"`
	Bytes    []byte        `json:"bytes"`
	ID       uuid.UUID     `json:"id"`
	List     []int         `json:"list"`
	St       struct {
		A int
		B string
	} `json:"st"`
	M       map[int]string  `json:"m"`
	Nothing *int            `json:"nothing"`
	NaN     sql.NullFloat64 `json:"nan"`
	Dbl     float32         `json:"dbl"`
	Flag    bool            `json:"flag"`
	JS      json.RawMessage `json:"js"`
	Unused  string          `json:"not_a_column"`
}

func TestQueryScanning(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	c := newUser(t, e, "ada@example.com", principal.TierPro)
	ctx := ctxT(t)
	res, err := c.Query(ctx, allTypes, nil)
	if err != nil {
		t.Fatal(err)
	}
	// What the server sent, as decoded: precision kept.
	row := res.Rows[0]
	if row["big"] != "9007199254740993" || row["small_big"] != json.Number("9007199254740991") || row["price"] != "12.30" {
		t.Fatalf("raw row %v", row)
	}

	rows, err := sdk.Rows[allTypesRow](res)
	if err != nil {
		t.Fatal(err)
	}
	r := rows[0]
	huge, _ := new(big.Int).SetString("170141183460469231731687303715884105727", 10)
	want := allTypesRow{
		SmallBig: 9007199254740991, Big: 9007199254740993, MinBig: math.MinInt64, UBig: math.MaxUint64,
		Huge: huge, Price: big.NewRat(123, 10), Wide: "-123456789012345678.123456789", Whole: 7,
		TS:   time.Date(2026, 1, 2, 3, 4, 5, 123456000, time.UTC),
		TSTZ: time.Date(2026, 1, 2, 1, 4, 5, 0, time.UTC),
		D:    time.Date(2026, 3, 4, 0, 0, 0, 0, time.UTC),
		Tm:   time.Date(0, 1, 1, 13, 14, 15, 500000000, time.UTC),
		IV:   sdk.Interval{Months: 14, Days: 3, Micros: (4*3600 + 5*60 + 6.5) * 1e6},
		IV2:  90 * time.Minute, Inf: "infinity", Bytes: []byte{0xAA, 0xBB},
		ID: uuid.MustParse("f47ac10b-58cc-4372-a567-0e02b2c3d479"), List: []int{1, 2, 3},
		M: map[int]string{1: "one", 2: "two"}, Dbl: 2.5, Flag: true,
		JS: json.RawMessage(`{"k":[1,2]}`),
	}
	want.St.A, want.St.B = 1, "x"
	if r.Huge.Cmp(want.Huge) != 0 || r.Price.Cmp(want.Price) != 0 {
		t.Fatalf("huge %v price %v", r.Huge, r.Price)
	}
	r.Huge, r.Price, want.Huge, want.Price = nil, nil, nil, nil
	if !r.TSTZ.Equal(want.TSTZ) {
		t.Fatalf("tstz %v", r.TSTZ)
	}
	r.TSTZ, want.TSTZ = time.Time{}, time.Time{}
	if !reflect.DeepEqual(r, want) {
		t.Fatalf("got  %+v\nwant %+v", r, want)
	}
	if r.IV.String() != "P1Y2M3DT4H5M6.5S" {
		t.Fatalf("interval %s", r.IV)
	}

	// Scan: the same conversions, column by column.
	dest := make([]any, len(res.Columns))
	var price float64
	var bigText string
	var ubig big.Int
	for i := range dest {
		var v any
		dest[i] = &v
	}
	dest[1], dest[3], dest[5] = &bigText, &ubig, &price
	if err := res.Scan(0, dest...); err != nil {
		t.Fatal(err)
	}
	if bigText != "9007199254740993" || ubig.String() != "18446744073709551615" || price != 12.3 {
		t.Fatalf("big %q ubig %s price %v", bigText, ubig.String(), price)
	}
	if v := *dest[0].(*any); v != json.Number("9007199254740991") {
		t.Fatalf("any receives %#v", v)
	}
}

func TestQueryScanErrors(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	c := newUser(t, e, "ada@example.com", principal.TierPro)
	ctx := ctxT(t)
	for _, tc := range []struct {
		sql  string
		dest any
		msg  string
	}{
		{"SELECT 'infinity'::TIMESTAMP", new(time.Time), "infinity cannot be represented"},
		{"SELECT 9007199254740993::BIGINT", new(int32), "overflows int32"},
		{"SELECT -1", new(uint64), "not an unsigned integer"},
		{"SELECT 12.30::DECIMAL(5,2)", new(int64), `"12.30" is not an integer`},
		{"SELECT INTERVAL '1 month'", new(time.Duration), "has months"},
		{"SELECT [1, 2]", new(int), "cannot store an array in int"},
		{"SELECT 'x'", new(float64), `"x" is not a number`},
	} {
		res, err := c.Query(ctx, tc.sql, nil)
		if err != nil {
			t.Fatal(err)
		}
		err = res.Scan(0, tc.dest)
		if err == nil || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("%s into %T: err %v, want %q", tc.sql, tc.dest, err, tc.msg)
		}
	}
	res, err := c.Query(ctx, "SELECT 1 AS a, 2 AS b", nil)
	if err != nil {
		t.Fatal(err)
	}
	var a int
	if err := res.Scan(0, &a); err == nil {
		t.Error("scan of 2 columns into 1 destination")
	}
	if err := res.Scan(1, &a, &a); err == nil {
		t.Error("scan of a row that does not exist")
	}
	if _, err := sdk.Rows[int](res); err == nil {
		t.Error("Rows[int] of 2 columns")
	}
}

func TestQueryOptionsAndParams(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	c := newUser(t, e, "ada@example.com", principal.TierPro)
	ctx := ctxT(t)
	res, err := c.Query(ctx, "SELECT i FROM range(10) t(i) WHERE i >= ? AND i < $2", sdk.Args(2, 9), sdk.MaxRows(3))
	if err != nil {
		t.Fatal(err)
	}
	ids, err := sdk.Rows[int64](res)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(ids, []int64{2, 3, 4}) || !res.Truncated || res.RowCount != 3 {
		t.Fatalf("ids %v truncated %v rowCount %d", ids, res.Truncated, res.RowCount)
	}
	res, err = c.Query(ctx, "SELECT $who AS who", map[string]any{"who": "ada"})
	if err != nil {
		t.Fatal(err)
	}
	maps, err := sdk.Rows[map[string]string](res)
	if err != nil || maps[0]["who"] != "ada" {
		t.Fatalf("%v %v", maps, err)
	}
	empty, err := c.Query(ctx, "SELECT 1 WHERE false", nil)
	if err != nil || empty.Rows == nil || len(empty.Rows) != 0 {
		t.Fatalf("empty result %+v %v", empty, err)
	}
}

func TestSchema(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	c := newUser(t, e, "ada@example.com", principal.TierPro)
	ctx := ctxT(t)
	tables, err := c.Schema(ctx)
	if err != nil || len(tables) != 0 {
		t.Fatalf("tables %v, %v", tables, err)
	}
	if _, err := c.CreateConnector(ctx, sdk.ConnectorCreate{Name: "n", Type: "example_numbers", Config: map[string]any{"count": 10}}); err != nil {
		t.Fatal(err)
	}
	job, err := c.Sync(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.WaitSync(ctx, job.JobID, nil); err != nil {
		t.Fatal(err)
	}
	tables, err = c.Schema(ctx)
	if err != nil || len(tables) != 1 || tables[0].Name != "numbers" || tables[0].RowCount != 10 {
		t.Fatalf("tables %+v, %v", tables, err)
	}
}

func TestParseInterval(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]sdk.Interval{
		"PT0S":               {},
		"P1Y2M3DT4H5M6.5S":   {Months: 14, Days: 3, Micros: 14706500000},
		"P-1D":               {Days: -1},
		"PT-1H-30M":          {Micros: -5400000000},
		"PT-0.000001S":       {Micros: -1},
		"P2W":                {Days: 14},
		"P-1Y-1MT0.123456S":  {Months: -13, Micros: 123456},
		"PT1M":               {Micros: 60000000},
		"P1M":                {Months: 1},
		"PT1H2M3.000004S":    {Micros: 3723000004},
		"PT-1H-2M-3.000004S": {Micros: -3723000004},
	} {
		got, err := sdk.ParseInterval(in)
		if err != nil || got != want {
			t.Errorf("%s: %+v %v, want %+v", in, got, err, want)
		}
		if in != "P2W" && got.String() != in {
			t.Errorf("%s formats as %s", in, got)
		}
	}
	for _, bad := range []string{"", "P", "1D", "PT1D", "P1H", "PTT1S", "P1.5D", "PxS"} {
		if _, err := sdk.ParseInterval(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

package hostedbackend

import (
	"math"
	"net/http"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
)

func TestParseTimestamp(t *testing.T) {
	for _, c := range []struct {
		in   string
		tz   bool
		want time.Time
	}{
		{"2024-05-01T12:30:00", false, time.Date(2024, 5, 1, 12, 30, 0, 0, time.UTC)},
		{"2024-05-01T12:30:00.5", false, time.Date(2024, 5, 1, 12, 30, 0, 5e8, time.UTC)},
		{"2024-05-01T12:30:00+00:00", true, time.Date(2024, 5, 1, 12, 30, 0, 0, time.UTC)},
		{"2024-05-01T18:00:00.123456+05:30", true, time.Date(2024, 5, 1, 12, 30, 0, 123456000, time.UTC)},
		{"1890-01-01T05:21:10+05:21:10", true, time.Date(1890, 1, 1, 0, 0, 0, 0, time.UTC)},
		{"2000-02-29 12:00:00-03", true, time.Date(2000, 2, 29, 15, 0, 0, 0, time.UTC)},
		{"0045-03-15T10:00:00+00:00 BC", true, time.Date(-44, 3, 15, 10, 0, 0, 0, time.UTC)},
		{"10000-01-01T00:00:00", false, time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)},
	} {
		got, err := parseTimestamp(c.in, c.tz)
		if err != nil || got != c.want.UnixMicro() {
			t.Errorf("parseTimestamp(%q) = %d, %v; want %d", c.in, got, err, c.want.UnixMicro())
		}
	}
	if v, _ := parseTimestamp("infinity", true); v != math.MaxInt64 {
		t.Error("infinity")
	}
	if v, _ := parseTimestamp("-infinity", false); v != -math.MaxInt64 {
		t.Error("-infinity")
	}
	for _, bad := range []string{"", "2024-05-01", "2024-05-01T12:30", "2024-13-01T00:00:00", "2024-05-01T12:30:00+00:00x", "2024-05-01T12:30:00Z+"} {
		if _, err := parseTimestamp(bad, true); err == nil {
			t.Errorf("parseTimestamp(%q) accepted", bad)
		}
	}
	if _, err := parseTimestamp("2024-05-01T12:30:00+02:00", false); err == nil {
		t.Error("an offset on a timestamp without time zone was accepted")
	}
}

func TestParseDateTimeInterval(t *testing.T) {
	for in, want := range map[string]time.Time{
		"1970-01-01":    time.Unix(0, 0).UTC(),
		"2024-02-29":    time.Date(2024, 2, 29, 0, 0, 0, 0, time.UTC),
		"0001-01-01 BC": time.Date(0, 1, 1, 0, 0, 0, 0, time.UTC),
		"1969-12-31":    time.Date(1969, 12, 31, 0, 0, 0, 0, time.UTC),
	} {
		got, err := parseDate(in)
		if err != nil || int64(got) != want.Unix()/86400 {
			t.Errorf("parseDate(%q) = %d, %v; want %d", in, got, err, want.Unix()/86400)
		}
	}
	if v, _ := parseDate("infinity"); v != math.MaxInt32 {
		t.Error("date infinity")
	}
	for in, want := range map[string]int64{"00:00:00": 0, "12:30:00.000001": 45000000001, "24:00:00": 86400000000} {
		if got, err := parseTime(in); err != nil || got != want {
			t.Errorf("parseTime(%q) = %d, %v", in, got, err)
		}
	}
	for in, want := range map[string]arrow.MonthDayNanoInterval{
		"00:00:00":                          {},
		"1 year 2 mons 3 days 04:05:06.789": {Months: 14, Days: 3, Nanoseconds: 14706789000000},
		"-1 days -02:00:00":                 {Days: -1, Nanoseconds: -7200e9},
		"1 mon -3 days +04:05:06":           {Months: 1, Days: -3, Nanoseconds: 14706e9},
		"100:00:00":                         {Nanoseconds: 360000e9},
		"-2 years":                          {Months: -24},
	} {
		if got, err := parseInterval(in); err != nil || got != want {
			t.Errorf("parseInterval(%q) = %+v, %v; want %+v", in, got, err, want)
		}
	}
	if _, err := parseInterval("P1Y2M"); err == nil {
		t.Error("ISO 8601 interval accepted")
	}
}

func TestParseBinaryUUIDDecimal(t *testing.T) {
	for in, want := range map[string]string{`\x`: "", `\x00ff`: "\x00\xff", `a\\b\001`: "a\\b\x01"} {
		got, err := parseBytea(in, nil)
		if err != nil || string(got) != want {
			t.Errorf("parseBytea(%q) = %q, %v", in, got, err)
		}
	}
	if _, err := parseBytea(`\x0`, nil); err == nil {
		t.Error("odd hex accepted")
	}
	u, err := parseUUID("A0EEBC99-9c0b-4ef8-bb6d-6bb9bd380a11")
	if err != nil || u[0] != 0xa0 || u[15] != 0x11 {
		t.Errorf("parseUUID: %x %v", u, err)
	}
	for _, bad := range []string{"", "a0eebc99", "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a1g", "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a1122"} {
		if _, err := parseUUID(bad); err == nil {
			t.Errorf("parseUUID(%q) accepted", bad)
		}
	}
	for _, c := range []struct {
		in   string
		p, s int32
		want string
	}{
		{"12.5", 10, 2, "12.50"},
		{"-0.001", 5, 3, "-0.001"},
		{"12345678901234567890123456789.123456789", 38, 9, "12345678901234567890123456789.123456789"},
		{"1.50", 4, 1, "1.5"},
		{"1e3", 6, 2, "1000.00"},
		{"0", 1, 0, "0"},
	} {
		n, err := parseDecimal(c.in, c.p, c.s)
		if err != nil || n.ToString(c.s) != c.want {
			t.Errorf("parseDecimal(%q, %d, %d) = %s, %v; want %s", c.in, c.p, c.s, n.ToString(c.s), err, c.want)
		}
	}
	for _, bad := range []struct {
		in   string
		p, s int32
	}{{"1.234", 10, 2}, {"123", 2, 0}, {"NaN", 10, 2}, {"1..2", 10, 2}} {
		if _, err := parseDecimal(bad.in, bad.p, bad.s); err == nil {
			t.Errorf("parseDecimal(%q) accepted", bad.in)
		}
	}
}

// TestTypeMapping is the mapping table of the package documentation.
func TestTypeMapping(t *testing.T) {
	for format, want := range map[string]string{
		"smallint": "int16", "int2": "int16", "integer": "int32", "int4": "int32", "bigint": "int64", "int8": "int64",
		"numeric": "utf8", "numeric(10,2)": "decimal(10, 2)", "numeric(40,2)": "utf8", "decimal(5)": "decimal(5, 0)",
		"real": "float32", "double precision": "float64", "float8": "float64", "boolean": "bool",
		"text": "utf8", "character varying": "utf8", "character varying(20)": "utf8", "character": "utf8", "char(3)": "utf8", "varchar": "utf8", "bpchar": "utf8",
		"uuid": "extension<arrow.uuid>", "json": "utf8", "jsonb": "utf8",
		"date": "date32", "time without time zone": "time64[us]", "time": "time64[us]",
		"timestamp without time zone": "timestamp[us]", "timestamp with time zone": "timestamp[us, tz=UTC]",
		"timestamp(3) with time zone": "timestamp[us, tz=UTC]", "timestamptz": "timestamp[us, tz=UTC]",
		"interval": "month_day_nano_interval", "bytea": "binary",
		"text[]": "list<item: utf8, nullable>", "integer[]": "list<item: int32, nullable>", "_int4": "list<item: int32, nullable>",
		"timestamp with time zone[]": "list<item: timestamp[us, tz=UTC], nullable>", "uuid[]": "list<item: extension<arrow.uuid>, nullable>",
		"jsonb[]": "list<item: utf8, nullable>", "integer[][]": "list<item: int32, nullable>",
		"public.mood": "utf8", "time with time zone": "utf8", "inet": "utf8", "point": "utf8", "_mystery": "utf8",
	} {
		f := FieldForFormat("c", format, true)
		if f.Type.String() != want {
			t.Errorf("%s → %s, want %s", format, f.Type, want)
		}
		if v, _ := f.Metadata.GetValue(MetaPGType); v != format {
			t.Errorf("%s: %s metadata %q", format, MetaPGType, v)
		}
	}
	for format, want := range map[string]string{"json": TypeJSON, "jsonb[]": TypeJSON, "numeric": TypeNumeric, "inet": TypeText, "text": ""} {
		v, _ := FieldForFormat("c", format, true).Metadata.GetValue(MetaType)
		if v != want {
			t.Errorf("%s: %s = %q, want %q", format, MetaType, v, want)
		}
	}
}

func TestPagerQuery(t *testing.T) {
	tb := Table{Name: "t", Schema: arrow.NewSchema([]arrow.Field{
		FieldForFormat("a b", "text", false), FieldForFormat("n", "integer", false), FieldForFormat("doc", "json", true),
	}, nil), PrimaryKey: []string{"a b", "n"}}
	p := newPager(tb)
	if q := p.query(10).Encode(); q != "limit=10&order=%22a+b%22.asc%2Cn.asc&select=%2A" {
		t.Errorf("first page %s", q)
	}
	p.lastKey = []string{`x,"y)`, "7"}
	if got := p.query(10).Get("or"); got != `("a b".gt."x,\"y)",and("a b".eq."x,\"y)",n.gt."7"))` {
		t.Errorf("keyset %s", got)
	}
	tb.PrimaryKey = nil
	p = newPager(tb)
	p.offset = 20
	q := p.query(10)
	if q.Get("order") != `"a b".asc,n.asc` || q.Get("offset") != "20" {
		t.Errorf("offset paging %s (json must not be ordered by)", q.Encode())
	}
}

func TestParseContentRange(t *testing.T) {
	for in, want := range map[string][4]int64{
		"0-999/12345": {0, 999, 12345, 1}, "*/0": {-1, -1, 0, 1}, "0-9/*": {0, 9, -1, 1}, "": {0, 0, -1, 0}, "x/y": {0, 0, -1, 0},
	} {
		a, b, c, ok := parseContentRange(in)
		got := [4]int64{a, b, c, 0}
		if ok {
			got[3] = 1
		}
		if got != want {
			t.Errorf("parseContentRange(%q) = %v, want %v", in, got, want)
		}
	}
}

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	for in, want := range map[string]time.Duration{
		"3": 3 * time.Second, "0": 0, "": 0, "soon": 0, "1.5": 1500 * time.Millisecond,
		now.Add(10 * time.Second).Format(http.TimeFormat): 10 * time.Second,
	} {
		if got := parseRetryAfter(in, now); got != want {
			t.Errorf("parseRetryAfter(%q) = %v, want %v", in, got, want)
		}
	}
}

// FuzzValueParsers makes sure no input panics the text parsers.
func FuzzValueParsers(f *testing.F) {
	for _, s := range []string{"2024-05-01T12:30:00.5+05:30", "0045-03-15 BC", "1 year -2 days +01:02:03.5", `\x00ff`, "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11", "-12.5e3", "24:00:00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		_, _ = parseTimestamp(s, true)
		_, _ = parseTimestamp(s, false)
		_, _ = parseDate(s)
		_, _ = parseTime(s)
		_, _ = parseInterval(s)
		_, _ = parseBytea(s, nil)
		_, _ = parseUUID(s)
		_, _ = parseDecimal(s, 38, 10)
		_, _ = parseInt([]byte(s), 32)
		_, _, _, _ = parseContentRange(s)
	})
}

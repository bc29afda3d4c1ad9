package hostedbackend_test

import (
	"context"
	"crypto/md5"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math"
	"math/big"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/extensions"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/stratahq/strata/plugins/hostedbackend"
	"github.com/stratahq/strata/plugins/hostedbackend/postgrestfixture"
)

// testKey is the service_role_key of the fixtures; tests check it never
// shows up in an error.
const testKey = "eyJhbGciOiJIUzI1NiJ9.c2VydmljZV9yb2xl.SECRET-service-role-signature-0123456789"

// env is one test's PostgreSQL schema, fixture and connector.
type env struct {
	pool    *pgxpool.Pool
	schema  string
	fixture *postgrestfixture.Fixture
	url     string
	src     *hostedbackend.Source
}

func newEnv(t testing.TB, opts hostedbackend.Options) *env {
	t.Helper()
	pool := postgrestfixture.Connect(t)
	schema := postgrestfixture.NewSchema(t, pool)
	f, srv := postgrestfixture.Start(t, postgrestfixture.Options{Pool: pool, Schema: schema, Key: testKey})
	if opts.Backoff == 0 {
		opts.Backoff = time.Millisecond
	}
	src, err := hostedbackend.NewSource(hostedbackend.Config{HostedBackendURL: srv.URL, ServiceRoleKey: testKey}, opts)
	if err != nil {
		t.Fatal(err)
	}
	return &env{pool: pool, schema: schema, fixture: f, url: srv.URL, src: src}
}

// exec runs SQL in the env's schema.
func (e *env) exec(t testing.TB, sql string) {
	t.Helper()
	postgrestfixture.Exec(t, e.pool, "SET search_path TO "+pgx.Identifier{e.schema}.Sanitize()+"; "+sql+"; RESET search_path")
}

func (e *env) table(t testing.TB, name string) hostedbackend.Table {
	t.Helper()
	tables, err := e.src.Discover(context.Background())
	if err != nil {
		t.Fatalf("Discover: %v", err)
	}
	for _, tb := range tables {
		if tb.Name == name {
			return tb
		}
	}
	t.Fatalf("table %q not discovered", name)
	return hostedbackend.Table{}
}

const nullMark = "∅"

// sqlCanon returns a SQL expression giving the canonical text of expr, a
// column of the given PostgreSQL format; goCanon computes the same text from
// the Arrow value.
func sqlCanon(expr, format string) string {
	if strings.HasSuffix(format, "[]") {
		elem := strings.TrimSuffix(format, "[]")
		return fmt.Sprintf("CASE WHEN %[1]s IS NULL THEN '%[2]s' ELSE '[' || coalesce((SELECT string_agg(%[3]s, ',' ORDER BY _i) FROM unnest(%[1]s) WITH ORDINALITY _u(_e, _i)), '') || ']' END",
			expr, nullMark, sqlCanon("_e", elem))
	}
	var v string
	switch format {
	case "real":
		v = fmt.Sprintf("CASE WHEN %[1]s = 'NaN' THEN 'NaN' ELSE encode(float4send(%[1]s), 'hex') END", expr)
	case "double precision":
		v = fmt.Sprintf("CASE WHEN %[1]s = 'NaN' THEN 'NaN' ELSE encode(float8send(%[1]s), 'hex') END", expr)
	case "date":
		v = fmt.Sprintf("CASE WHEN isfinite(%[1]s) THEN (%[1]s - date '1970-01-01')::text ELSE %[1]s::text END", expr)
	case "time without time zone":
		v = fmt.Sprintf("(extract(epoch from %s) * 1000000)::bigint::text", expr)
	case "timestamp without time zone", "timestamp with time zone":
		v = fmt.Sprintf("CASE WHEN isfinite(%[1]s) THEN (extract(epoch from %[1]s) * 1000000)::bigint::text ELSE %[1]s::text END", expr)
	case "interval":
		v = fmt.Sprintf("(extract(year from %[1]s) * 12 + extract(month from %[1]s))::text || ',' || extract(day from %[1]s)::text || ',' || (extract(hour from %[1]s) * 3600000000 + extract(minute from %[1]s) * 60000000 + extract(microseconds from %[1]s))::bigint::text", expr)
	case "bytea":
		v = fmt.Sprintf("encode(%s, 'hex')", expr)
	case "boolean":
		v = expr + "::text"
	case "json", "jsonb":
		// Over PostgREST a JSON null and SQL NULL are the same null.
		expr = fmt.Sprintf("NULLIF(%s::text, 'null')", expr)
		v = expr
	default:
		// concat() uses the type's output function: keeps char(n) padding.
		v = fmt.Sprintf("concat(%s)", expr)
	}
	return fmt.Sprintf("CASE WHEN %s IS NULL THEN '%s' ELSE %s END", expr, nullMark, v)
}

// goCanon is sqlCanon's counterpart for an Arrow value.
func goCanon(arr arrow.Array, i int) string {
	if arr.IsNull(i) {
		return nullMark
	}
	switch a := arr.(type) {
	case *array.Int16:
		return strconv.FormatInt(int64(a.Value(i)), 10)
	case *array.Int32:
		return strconv.FormatInt(int64(a.Value(i)), 10)
	case *array.Int64:
		return strconv.FormatInt(a.Value(i), 10)
	case *array.Float32:
		if math.IsNaN(float64(a.Value(i))) {
			return "NaN"
		}
		var b [4]byte
		binary.BigEndian.PutUint32(b[:], math.Float32bits(a.Value(i)))
		return hex.EncodeToString(b[:])
	case *array.Float64:
		if math.IsNaN(a.Value(i)) {
			return "NaN"
		}
		var b [8]byte
		binary.BigEndian.PutUint64(b[:], math.Float64bits(a.Value(i)))
		return hex.EncodeToString(b[:])
	case *array.Boolean:
		return strconv.FormatBool(a.Value(i))
	case *array.String:
		return a.Value(i)
	case *extensions.UUIDArray:
		return a.Value(i).String()
	case *array.Date32:
		switch v := int32(a.Value(i)); v {
		case math.MaxInt32:
			return "infinity"
		case -math.MaxInt32:
			return "-infinity"
		default:
			return strconv.FormatInt(int64(v), 10)
		}
	case *array.Time64:
		return strconv.FormatInt(int64(a.Value(i)), 10)
	case *array.Timestamp:
		switch v := int64(a.Value(i)); v {
		case math.MaxInt64:
			return "infinity"
		case -math.MaxInt64:
			return "-infinity"
		default:
			return strconv.FormatInt(v, 10)
		}
	case *array.MonthDayNanoInterval:
		v := a.Value(i)
		return fmt.Sprintf("%d,%d,%d", v.Months, v.Days, v.Nanoseconds/1000)
	case *array.Binary:
		return hex.EncodeToString(a.Value(i))
	case *array.List:
		start, end := a.ValueOffsets(i)
		vals := a.ListValues()
		parts := make([]string, 0, end-start)
		for j := start; j < end; j++ {
			parts = append(parts, goCanon(vals, int(j)))
		}
		return "[" + strings.Join(parts, ",") + "]"
	}
	panic(fmt.Sprintf("goCanon: unhandled Arrow type %s", arr.DataType()))
}

// pgRows returns the canonical text of every row of a table, computed in
// PostgreSQL, sorted.
func pgRows(t testing.TB, e *env, tb hostedbackend.Table) []string {
	t.Helper()
	rows, err := e.pool.Query(context.Background(), "SELECT "+rowExpr(tb)+" FROM "+pgx.Identifier{e.schema, tb.Name}.Sanitize())
	if err != nil {
		t.Fatal(err)
	}
	out, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(out)
	return out
}

func rowExpr(tb hostedbackend.Table) string {
	parts := make([]string, 0, tb.Schema.NumFields())
	for _, f := range tb.Schema.Fields() {
		format, _ := f.Metadata.GetValue(hostedbackend.MetaPGType)
		parts = append(parts, sqlCanon(pgx.Identifier{f.Name}.Sanitize(), format))
	}
	return "concat_ws(chr(31), " + strings.Join(parts, ", ") + ")"
}

// pgChecksum is count and the sum of the first 64 bits of md5 of every
// row's canonical text, computed in PostgreSQL. A sum (unlike XOR) also
// catches a row read twice.
func pgChecksum(t testing.TB, e *env, tb hostedbackend.Table) (int64, string) {
	t.Helper()
	var n int64
	var sum string
	err := e.pool.QueryRow(context.Background(),
		"SELECT count(*), coalesce(sum(('x' || substr(md5("+rowExpr(tb)+"), 1, 16))::bit(64)::bigint::numeric), 0)::text FROM "+
			pgx.Identifier{e.schema, tb.Name}.Sanitize()).Scan(&n, &sum)
	if err != nil {
		t.Fatal(err)
	}
	return n, sum
}

// collector accumulates what Read emits.
type collector struct {
	mu       sync.Mutex
	rows     []string // canonical rows (when keepRows)
	keepRows bool
	n        int64
	sum      big.Int
	batches  int
	maxBatch int64
	progress [][2]int64
}

func (c *collector) emit(rec arrow.RecordBatch) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.batches++
	c.maxBatch = max(c.maxBatch, rec.NumRows())
	cols := rec.Columns()
	parts := make([]string, len(cols))
	var h big.Int
	for i := 0; i < int(rec.NumRows()); i++ {
		for j, col := range cols {
			parts[j] = goCanon(col, i)
		}
		row := strings.Join(parts, "\x1f")
		if c.keepRows {
			c.rows = append(c.rows, row)
		}
		d := md5.Sum([]byte(row))
		h.SetInt64(int64(binary.BigEndian.Uint64(d[:8])))
		c.sum.Add(&c.sum, &h)
		c.n++
	}
	return nil
}

func (c *collector) onProgress(read, total int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.progress = append(c.progress, [2]int64{read, total})
}

// peakAllocator tracks the peak of live Arrow bytes.
type peakAllocator struct {
	*memory.CheckedAllocator
	mu   sync.Mutex
	peak int
}

func newPeakAllocator() *peakAllocator {
	return &peakAllocator{CheckedAllocator: memory.NewCheckedAllocator(memory.NewGoAllocator())}
}

func (p *peakAllocator) note() {
	p.mu.Lock()
	p.peak = max(p.peak, p.CurrentAlloc())
	p.mu.Unlock()
}

func (p *peakAllocator) Allocate(size int) []byte {
	b := p.CheckedAllocator.Allocate(size)
	p.note()
	return b
}

func (p *peakAllocator) Reallocate(size int, b []byte) []byte {
	b = p.CheckedAllocator.Reallocate(size, b)
	p.note()
	return b
}

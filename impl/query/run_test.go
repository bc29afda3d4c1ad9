package query_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/stratahq/strata/impl/apierrors"
	"github.com/stratahq/strata/impl/query"
)

func TestParams(t *testing.T) {
	t.Parallel()
	e, _ := newEngine(t)
	tenant := uuid.New()
	exec(t, e, tenant, "CREATE TABLE p AS SELECT range AS id, 'n' || range AS name FROM range(10)")
	for _, tc := range []struct {
		name   string
		sql    string
		params map[string]any
		want   string // JSON of the rows, keys sorted
	}{
		{"question marks", "SELECT ? AS a, ? AS b", map[string]any{"1": "x", "2": float64(2)}, `[{"a":"x","b":2}]`},
		{"dollar numbers", "SELECT $2 AS a, $1 AS b, $1 AS c", map[string]any{"1": true, "2": nil}, `[{"a":null,"b":true,"c":true}]`},
		{"names", "SELECT name FROM p WHERE id = $id OR name = $name ORDER BY id", map[string]any{"id": float64(3), "name": "n7"}, `[{"name":"n3"},{"name":"n7"}]`},
		{"typed param", "SELECT $1::DECIMAL(6,2) AS d, $2::DOUBLE AS f", map[string]any{"1": "12.5", "2": 1.25}, `[{"d":"12.50","f":1.25}]`},
		{"json number", "SELECT $1 AS i, $2 AS f", map[string]any{"1": json.Number("9007199254740993"), "2": json.Number("0.5")}, `[{"f":0.5,"i":"9007199254740993"}]`},
		{"huge json number", "SELECT $1::HUGEINT AS h", map[string]any{"1": json.Number("123456789012345678901234567890")}, `[{"h":"123456789012345678901234567890"}]`},
		{"integral float stays integer", "SELECT $1 AS i", map[string]any{"1": float64(42)}, `[{"i":42}]`},
		{"array", "SELECT name FROM p WHERE list_contains($1::BIGINT[], id) ORDER BY id", map[string]any{"1": []any{float64(1), float64(2)}}, `[{"name":"n1"},{"name":"n2"}]`},
		{"array of strings", "SELECT len($1::VARCHAR[]) AS n", map[string]any{"1": []any{"a", "b", "c"}}, `[{"n":3}]`},
		{"extra params ignored", "SELECT 1 AS one", map[string]any{"unused": "x"}, `[{"one":1}]`},
		{"injection stays a value", "SELECT count(*) AS n FROM p WHERE name = ?", map[string]any{"1": "x' OR 1=1 --"}, `[{"n":0}]`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := runJSON(t, e, tenant, query.Request{SQL: tc.sql, Params: tc.params})
			if err != nil {
				t.Fatalf("%v", err)
			}
			got, _ := json.Marshal(res.Rows)
			if string(got) != tc.want {
				t.Errorf("got %s, want %s", got, tc.want)
			}
		})
	}

	for _, tc := range []struct {
		name   string
		sql    string
		params map[string]any
		msg    string
	}{
		{"missing positional", "SELECT ? AS a, ? AS b", map[string]any{"1": "x"}, `missing parameter "2"`},
		{"missing named", "SELECT $who AS a", nil, `missing parameter "who"`},
		{"missing dollar", "SELECT $1 AS a", map[string]any{"2": "x"}, `missing parameter "1"`},
		{"mixed styles", "SELECT ?, $name", map[string]any{"1": 1, "name": 2}, "Mixing named and positional"},
		{"bad cast", "SELECT $1::INTEGER AS a", map[string]any{"1": "abc"}, "abc"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := runJSON(t, e, tenant, query.Request{SQL: tc.sql, Params: tc.params})
			if err == nil {
				t.Fatal("no error")
			}
			status, code := apiErr(t, err)
			var ae *apierrors.Error
			errors.As(err, &ae)
			if status != http.StatusBadRequest || code != apierrors.CodeQueryExecutionError || !strings.Contains(ae.Message, tc.msg) {
				t.Errorf("got %d %s %q, want 400 query_execution_error containing %q", status, code, ae.Message, tc.msg)
			}
		})
	}
}

func TestMaxRows(t *testing.T) {
	t.Parallel()
	e, _ := newEngine(t)
	tenant := uuid.New()
	for _, tc := range []struct {
		rows, max, wantCount int
		truncated            bool
	}{
		{10, 5, 5, true},
		{5, 5, 5, false},
		{4, 5, 4, false},
		{3, 0, 0, true},
		{0, 0, 0, false},
		{1000, 999, 999, true},
	} {
		body, err := runRaw(context.Background(), e, tenant, query.Request{
			SQL: "SELECT range AS i FROM range(" + itoa(tc.rows) + ")", MaxRows: tc.max,
		})
		if tc.max == 0 {
			// runRaw turns 0 into the default; run directly.
			r, err2 := e.Run(context.Background(), tenant, query.Request{SQL: "SELECT range AS i FROM range(" + itoa(tc.rows) + ")"})
			if err2 != nil {
				t.Fatal(err2)
			}
			var buf bytes.Buffer
			err = r.WriteJSON(&buf)
			r.Close()
			body = buf.Bytes()
		}
		if err != nil {
			t.Fatal(err)
		}
		var res result
		if err := json.Unmarshal(body, &res); err != nil {
			t.Fatalf("%s: %v", body, err)
		}
		if res.RowCount != tc.wantCount || len(res.Rows) != tc.wantCount || res.Truncated != tc.truncated {
			t.Errorf("%d rows, max %d: rowCount %d, %d rows, truncated %v", tc.rows, tc.max, res.RowCount, len(res.Rows), res.Truncated)
		}
		if !bytes.Contains(body, []byte(`"truncated":`)) || res.ExecutionTimeMs == nil || *res.ExecutionTimeMs <= 0 {
			t.Errorf("missing truncated/executionTimeMs: %s", body)
		}
	}
}

func TestResultShape(t *testing.T) {
	t.Parallel()
	e, _ := newEngine(t)
	body, err := runRaw(context.Background(), e, uuid.New(), query.Request{SQL: "SELECT 1 AS a, 'x' AS a, 2 AS a_1"})
	if err != nil {
		t.Fatal(err)
	}
	var res map[string]json.RawMessage
	if err := json.Unmarshal(body, &res); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"columns", "rows", "rowCount", "truncated", "executionTimeMs"} {
		if _, ok := res[k]; !ok {
			t.Errorf("no %s in %s", k, body)
		}
	}
	want := `[{"name":"a","type":"INTEGER","nullable":true},{"name":"a_1","type":"VARCHAR","nullable":true},{"name":"a_1_1","type":"INTEGER","nullable":true}]`
	if string(res["columns"]) != want {
		t.Errorf("columns %s", res["columns"])
	}
	if string(res["rows"]) != `[{"a":1,"a_1":"x","a_1_1":2}]` {
		t.Errorf("rows %s", res["rows"])
	}
}

// TestTimeoutInterruptsDuckDB: a heavy cross join with a 1 s timeout is
// answered 408 query_timeout within about 2 s, and the store keeps working.
func TestTimeoutInterruptsDuckDB(t *testing.T) {
	t.Parallel()
	e, _ := newEngine(t)
	tenant := uuid.New()
	start := time.Now()
	_, err := e.Run(context.Background(), tenant, query.Request{
		SQL:     "SELECT count(*) FROM range(100000000) a, range(100000000) b WHERE a.range + b.range = 7",
		Timeout: time.Second, MaxRows: 10,
	})
	took := time.Since(start)
	if err == nil {
		t.Fatal("the query finished")
	}
	if status, code := apiErr(t, err); status != http.StatusRequestTimeout || code != apierrors.CodeQueryTimeout {
		t.Fatalf("got %d %s: %v", status, code, err)
	}
	if took > 2500*time.Millisecond {
		t.Errorf("timeout answered after %v", took)
	}
	t.Logf("1 s timeout answered after %v", took)
	if got := scalar(t, mustQuery(t, e, tenant, "SELECT 42 AS x")); got != "42" {
		t.Errorf("after timeout: %s", got)
	}
}

// TestClientCancel: a cancelled context (the client went away) is not a
// timeout: Run returns the context's error.
func TestClientCancel(t *testing.T) {
	t.Parallel()
	e, _ := newEngine(t)
	ctx, cancel := context.WithCancel(context.Background())
	var err error
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, err = e.Run(ctx, uuid.New(), query.Request{SQL: "SELECT count(*) FROM range(100000000) a, range(100000000) b WHERE a.range + b.range = 7", MaxRows: 1})
	}()
	// Cancel once the query is surely running: the store is open.
	waitFor(t, 10*time.Second, func() bool { return e.Stats().Open == 1 })
	cancel()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("cancel did not stop the query")
	}
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v, want context.Canceled", err)
	}
}

// slowWriter simulates a client that reads slowly: its first write takes
// longer than the query's timeout.
type slowWriter struct {
	delay time.Duration
	once  sync.Once
	n     int
}

func (w *slowWriter) Write(p []byte) (int, error) {
	w.once.Do(func() { time.Sleep(w.delay) })
	w.n += len(p)
	return len(p), nil
}

// TestTimeoutWhileStreaming: a deadline that passes while a slow client
// reads the body ends the write with 408 query_timeout after part of it was
// written (the caller then aborts the response).
func TestTimeoutWhileStreaming(t *testing.T) {
	t.Parallel()
	e, _ := newEngine(t)
	r, err := e.Run(context.Background(), uuid.New(), query.Request{
		SQL: "SELECT range AS i, repeat('x', 100) AS s FROM range(20000)", MaxRows: 100000, Timeout: time.Second,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	w := &slowWriter{delay: 1200 * time.Millisecond}
	err = r.WriteJSON(w)
	if err == nil {
		t.Fatal("streaming finished despite the deadline")
	}
	if status, code := apiErr(t, err); status != http.StatusRequestTimeout || code != apierrors.CodeQueryTimeout {
		t.Fatalf("got %d %s", status, code)
	}
	if w.n == 0 {
		t.Fatal("nothing was written before the timeout")
	}
}

// TestErrorWhileReadingRowsWritesNothing: the body is held back until the
// last row was read, so an error on the way (here the client going away)
// reaches the caller before any byte, in time for a proper status.
func TestErrorWhileReadingRowsWritesNothing(t *testing.T) {
	t.Parallel()
	e, _ := newEngine(t)
	for name, write := range map[string]func(*query.Result, io.Writer) error{
		"json": (*query.Result).WriteJSON, "csv": (*query.Result).WriteCSV, "arrow": (*query.Result).WriteArrow,
	} {
		ctx, cancel := context.WithCancel(context.Background())
		r, err := e.Run(ctx, uuid.New(), query.Request{SQL: "SELECT range AS i FROM range(10000)", MaxRows: 10000})
		if err != nil {
			t.Fatal(err)
		}
		cancel()
		var w countingWriter
		err = write(r, &w)
		r.Close()
		if !errors.Is(err, context.Canceled) || w.n != 0 {
			t.Errorf("%s: err %v after %d bytes, want context.Canceled before any byte", name, err, w.n)
		}
	}
}

type countingWriter struct{ n int }

func (w *countingWriter) Write(p []byte) (int, error) {
	w.n += len(p)
	return len(p), nil
}

// TestLargeResultIsHeldOnDisk: a body beyond what is held in memory goes to
// a temporary file under the data dir, comes out whole, and leaves no file.
func TestLargeResultIsHeldOnDisk(t *testing.T) {
	t.Parallel()
	e, cfg := newEngine(t)
	r, err := e.Run(context.Background(), uuid.New(), query.Request{
		SQL: "SELECT range AS i, repeat('x', 100) AS s FROM range(60000)", MaxRows: 50000,
	})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := r.WriteCSV(&buf); err != nil {
		t.Fatal(err)
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
	if buf.Len() < 5<<20 || len(lines) != 50001 || lines[50000] != "49999,"+strings.Repeat("x", 100) || !r.Truncated() {
		t.Fatalf("%d bytes, %d lines, last %.20q, truncated %v", buf.Len(), len(lines), lines[len(lines)-1], r.Truncated())
	}
	tmp := filepath.Join(cfg.DataDir, "query-tmp")
	if _, err := os.Stat(tmp); err != nil {
		t.Fatalf("the result was not held on disk: %v", err)
	}
	if files := listFiles(t, tmp); len(files) != 0 {
		t.Errorf("left behind: %v", files)
	}
}

func TestWriteErrorsAndMisuse(t *testing.T) {
	t.Parallel()
	e, _ := newEngine(t)
	r, err := e.Run(context.Background(), uuid.New(), query.Request{SQL: "SELECT range FROM range(100000)", MaxRows: 100000})
	if err != nil {
		t.Fatal(err)
	}
	if err := r.WriteJSON(failingWriter{}); err == nil {
		t.Error("write error not returned")
	}
	if err := r.WriteCSV(io.Discard); err == nil {
		t.Error("second write allowed")
	}
	if err := r.Close(); err != nil {
		t.Error(err)
	}
	if err := r.Close(); err != nil {
		t.Error("second close:", err)
	}
}

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("client gone") }

// TestManyTenantsConcurrently: tenants query at the same time, each sees
// only its own data, and one tenant's heavy query does not hold the others.
func TestManyTenantsConcurrently(t *testing.T) {
	t.Parallel()
	e, _ := newEngine(t, func(c *query.Config) { c.Threads = 1 })
	const n = 12
	tenants := make([]uuid.UUID, n)
	for i := range tenants {
		tenants[i] = uuid.New()
		exec(t, e, tenants[i], "CREATE TABLE mine AS SELECT "+itoa(i)+" AS who")
	}
	// A runaway query on tenant 0 for the whole test.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	heavyDone := make(chan struct{})
	go func() {
		defer close(heavyDone)
		_, _ = e.Run(ctx, tenants[0], query.Request{SQL: "SELECT count(*) FROM range(100000000) a, range(100000000) b WHERE a.range + b.range = 7", MaxRows: 1})
	}()
	start := time.Now()
	var wg sync.WaitGroup
	errs := make(chan error, n*10)
	for i := 1; i < n; i++ {
		for range 10 {
			wg.Add(1)
			go func(i int) {
				defer wg.Done()
				res, err := runJSON(t, e, tenants[i], query.Request{SQL: "SELECT who FROM mine"})
				if err != nil {
					errs <- err
					return
				}
				if got := string(res.Rows[0]["who"]); got != itoa(i) {
					errs <- errors.New("tenant " + itoa(i) + " saw " + got)
				}
			}(i)
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if took := time.Since(start); took > 20*time.Second {
		t.Errorf("110 small queries took %v next to a runaway query", took)
	}
	cancel()
	<-heavyDone
}

// TestUnsupportedTypeHint: a column of a type the driver cannot read
// (TIME_NS, VARIANT) is 400 query_execution_error with the hint the
// contract promises, naming the column, not the driver's internals.
func TestUnsupportedTypeHint(t *testing.T) {
	t.Parallel()
	e, _ := newEngine(t)
	tenant := uuid.New()
	for _, tc := range []struct{ sql, col string }{
		{"SELECT 1 AS a, '12:00:00'::TIME_NS AS t", `result column 2 ("t")`},
		{"SELECT ['12:00:00'::TIME_NS] AS l", `result column 1 ("l")`},
		{"SELECT 1::VARIANT AS v", `result column 1 ("v")`},
	} {
		_, err := runJSON(t, e, tenant, query.Request{SQL: tc.sql})
		var ae *apierrors.Error
		if !errors.As(err, &ae) || ae.Code != apierrors.CodeQueryExecutionError || ae.StatusCode != http.StatusBadRequest {
			t.Fatalf("%s: %v", tc.sql, err)
		}
		if !strings.HasPrefix(ae.Message, tc.col) || !strings.Contains(ae.Message, "cast it to VARCHAR") ||
			strings.Contains(ae.Message, "driver") || strings.Contains(ae.Message, "index") {
			t.Errorf("%s: message %q", tc.sql, ae.Message)
		}
	}
	if got := scalar(t, mustQuery(t, e, tenant, "SELECT '12:00:00.123456789'::TIME_NS::VARCHAR AS t")); got != `"12:00:00.123456789"` {
		t.Errorf("cast to VARCHAR: %s", got)
	}
}

package query_test

import (
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/stratahq/strata/impl/apierrors"
	"github.com/stratahq/strata/impl/query"
)

// decodeParams decodes params as the handler does (UseNumber).
func decodeParams(t testing.TB, raw string) map[string]any {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(raw))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		t.Fatalf("params %s: %v", raw, err)
	}
	return m
}

// TestArrayParams: arrays bind wherever the statement gives them a list
// type (DuckDB casts them, nulls and empty lists included) and, where it
// leaves the type open, as the list type their JSON values make.
func TestArrayParams(t *testing.T) {
	t.Parallel()
	e, _ := newEngine(t)
	tenant := uuid.New()
	for _, tc := range []struct {
		name, sql, params string
		want              string // JSON of the first row's value
		typ               string // its column type
	}{
		{"fraction makes a double list", "SELECT ? AS a", `{"1":[1.5,2]}`, `[1.5,2]`, "DOUBLE[]"},
		{"fraction anywhere in a nested array", "SELECT ? AS a", `{"1":[[1],[2.5]]}`, `[[1],[2.5]]`, "DOUBLE[][]"},
		{"exponent is a double", "SELECT ? AS a", `{"1":[1e3,2]}`, `[1000,2]`, "DOUBLE[]"},
		{"integers", "SELECT ? AS a", `{"1":[1,2]}`, `[1,2]`, "BIGINT[]"},
		{"integers beyond int64", "SELECT ? AS a", `{"1":[1,9223372036854775808]}`, `[1,"9223372036854775808"]`, "HUGEINT[]"},
		{"strings", "SELECT ? AS a", `{"1":["a","b"]}`, `["a","b"]`, "VARCHAR[]"},
		{"all null", "SELECT ? AS a", `{"1":[null,null]}`, `[null,null]`, "INTEGER[]"},
		{"nulls in a typed list", "SELECT $1::BIGINT[] AS a", `{"1":[1,null]}`, `[1,null]`, "BIGINT[]"},
		{"null first", "SELECT $1::DOUBLE[] AS a", `{"1":[null,1.5]}`, `[null,1.5]`, "DOUBLE[]"},
		{"nested nulls and empty lists", "SELECT $1::BIGINT[][] AS a", `{"1":[[1,null],null,[]]}`, `[[1,null],null,[]]`, "BIGINT[][]"},
		{"integers to a double list", "SELECT $1::DOUBLE[] AS a", `{"1":[1,2]}`, `[1,2]`, "DOUBLE[]"},
		{"integers to an integer list", "SELECT $1::INTEGER[] AS a", `{"1":[1,2]}`, `[1,2]`, "INTEGER[]"},
		{"fixed-size array", "SELECT $1::INTEGER[3] AS a", `{"1":[1,null,3]}`, `[1,null,3]`, "INTEGER[3]"},
		{"list typed by a function", "SELECT list_contains($1, 2) AS a", `{"1":[1,2,null]}`, `true`, "BOOLEAN"},
		{"booleans with null", "SELECT $1::BOOLEAN[] AS a", `{"1":[true,null,false]}`, `[true,null,false]`, "BOOLEAN[]"},
		{"strings for dates", "SELECT $1::DATE[] AS a", `{"1":["2024-05-01",null]}`, `["2024-05-01",null]`, "DATE[]"},
		{"awkward strings", "SELECT $1::VARCHAR[] AS a", `{"1":["a,b","q\"q","b\\s","[x]","NULL",""," lead","nl\nx","é",null]}`,
			`["a,b","q\"q","b\\s","[x]","NULL",""," lead","nl\nx","é",null]`, "VARCHAR[]"},
		{"doubles exactly", "SELECT $1::DOUBLE[] AS a", `{"1":[0.1,1e300,5e-324,-2.5]}`, `[0.1,1e+300,5e-324,-2.5]`, "DOUBLE[]"},
		{"huge integers in a typed list", "SELECT $1::HUGEINT[] AS a", `{"1":[123456789012345678901234567890,null]}`, `["123456789012345678901234567890",null]`, "HUGEINT[]"},
		{"as text", "SELECT $1::VARCHAR AS a", `{"1":[1,null,2.5]}`, `"[1,null,2.5]"`, "VARCHAR"},
		{"as JSON", "SELECT $1::JSON AS a", `{"1":[[1,null],[2]]}`, `[[1,null],[2]]`, "JSON"},
		{"empty", "SELECT len(?) AS a", `{"1":[]}`, `0`, "BIGINT"},
		{"unnest", "SELECT sum(x) AS a FROM (SELECT unnest(?) AS x)", `{"1":[1,2,3]}`, `6`, "HUGEINT"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := runJSON(t, e, tenant, query.Request{SQL: tc.sql, Params: decodeParams(t, tc.params)})
			if err != nil {
				t.Fatalf("%v", err)
			}
			if got := scalar(t, res); got != tc.want || res.Columns[0].Type != tc.typ {
				t.Errorf("got %s %s, want %s %s", got, res.Columns[0].Type, tc.want, tc.typ)
			}
		})
	}
}

// TestParamValuesRefused: malformed values are 400 validation_error naming
// the parameter, checked before the tenant's store is even opened, with
// messages that repeat no value and no Go type.
func TestParamValuesRefused(t *testing.T) {
	t.Parallel()
	deep := func(n int) string { return strings.Repeat("[", n) + "1" + strings.Repeat("]", n) }
	many := func(n int) string { return "[" + strings.TrimSuffix(strings.Repeat("1,", n), ",") + "]" }
	for _, tc := range []struct {
		name, sql, params, msg string
	}{
		{"object", "SELECT $1 AS a", `{"1":{"x":1}}`, `field "params.1": must be a scalar or an array`},
		{"object in an array", "SELECT $1 AS a", `{"1":[{"x":1}]}`, `field "params.1": array elements must be scalars or arrays`},
		{"unused object", "SELECT 1 AS a", `{"spare":{"x":1}}`, `field "params.spare": must be a scalar or an array`},
		{"boolean and number", "SELECT $1 AS a", `{"1":[true,1]}`, `field "params.1": array elements must share a type (found boolean and number elements)`},
		{"number and string", "SELECT $1 AS a", `{"1":[1,"a"]}`, `field "params.1": array elements must share a type (found number and string elements)`},
		{"array and number", "SELECT $1 AS a", `{"1":[[1],2]}`, `field "params.1": array elements must share a type (found array and number elements)`},
		{"nested strings and numbers", "SELECT $1 AS a", `{"1":[[1],["a"]]}`, `field "params.1": array elements must share a type (found number and string elements)`},
		{"depths differ", "SELECT $1 AS a", `{"1":[[1],[[2]]]}`, `field "params.1": array elements must share a type (found number and array elements)`},
		{"five deep", "SELECT $1 AS a", `{"1":` + deep(5) + `}`, `field "params.1": arrays may nest at most 4 deep`},
		{"a thousand deep", "SELECT $1 AS a", `{"1":` + deep(1000) + `}`, `field "params.1": arrays may nest at most 4 deep`},
		{"too many elements", "SELECT $1 AS a", `{"1":` + many(10001) + `}`, `field "params.1": too many array elements (at most 10000 in all parameters)`},
		{"too many in all", "SELECT $1 AS a, $2 AS b", `{"1":` + many(6000) + `,"2":` + many(6000) + `}`, `too many array elements (at most 10000 in all parameters)`},
		{"number out of range", "SELECT $1 AS a", `{"1":1e999}`, `field "params.1": the number is out of range`},
		{"long name cut", "SELECT 1 AS a", `{"` + strings.Repeat("n", 200) + `":{}}`, `field "params.` + strings.Repeat("n", 64) + `…"`},
		{"null untyped", "SELECT ? AS a", `{"1":[1,null]}`, `field "params.1": the type of an array with nulls (or with empty arrays next to non-empty ones) cannot be inferred where the statement uses it: give the placeholder a type, e.g. $1::BIGINT[]`},
		{"empty next to non-empty untyped", "SELECT ? AS a", `{"1":[[1],[]]}`, `give the placeholder a type`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e, _ := newEngine(t)
			_, err := runJSON(t, e, uuid.New(), query.Request{SQL: tc.sql, Params: decodeParams(t, tc.params)})
			if err == nil {
				t.Fatal("no error")
			}
			status, code := apiErr(t, err)
			var ae *apierrors.Error
			errors.As(err, &ae)
			if status != http.StatusBadRequest || code != apierrors.CodeValidation || !strings.Contains(ae.Message, tc.msg) {
				t.Errorf("got %d %s %q, want 400 validation_error containing %q", status, code, ae.Message, tc.msg)
			}
			if strings.Contains(ae.Message, "interface") || strings.Contains(ae.Message, "map[") || len(ae.Message) > 300 {
				t.Errorf("message shows Go internals or too much: %q", ae.Message)
			}
			if !strings.Contains(tc.msg, "placeholder") && e.Stats().Open != 0 {
				t.Errorf("the store was opened for a request refused on its parameters")
			}
		})
	}
	// An array where the statement expects a single value is the query's
	// problem, not the value's.
	e, _ := newEngine(t)
	_, err := runJSON(t, e, uuid.New(), query.Request{SQL: "SELECT $1::INTEGER AS a", Params: decodeParams(t, `{"1":[1,2]}`)})
	var ae *apierrors.Error
	if !errors.As(err, &ae) || ae.Code != apierrors.CodeQueryExecutionError || !strings.Contains(ae.Message, `parameter "1" is an array`) {
		t.Errorf("array for an INTEGER: %v", err)
	}
}

package query

import (
	"context"
	"database/sql"
	"testing"

	_ "github.com/duckdb/duckdb-go/v2" // registers the driver
)

// reviewedSideEffectFunctions are the scalar functions DuckDB flags
// has_side_effects that user SQL may call: they only read state or are
// volatile (random values), or affect nothing but the query's own
// connection, which is discarded after the query.
var reviewedSideEffectFunctions = setOf(
	"random", "uuid", "uuidv4", "uuidv7", "gen_random_uuid", "setseed", "sleep_ms",
	"current_query", "current_query_id", "current_connection_id", "current_transaction_id",
	"currval", "error", "stats",
)

// TestEveryFunctionIsClassified fails when the linked DuckDB has a table
// function, or a scalar function with side effects, that nobody reviewed:
// after a driver upgrade, decide whether it goes on the allow or deny list.
func TestEveryFunctionIsClassified(t *testing.T) {
	t.Parallel()
	db, err := sql.Open("duckdb", "")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.QueryContext(context.Background(), `
		SELECT DISTINCT function_name, function_type, coalesce(has_side_effects, false) FROM duckdb_functions()
		WHERE function_type = 'table' OR (function_type = 'scalar' AND has_side_effects)`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	seen := map[string]bool{}
	for rows.Next() {
		var name, typ string
		var side bool
		if err := rows.Scan(&name, &typ, &side); err != nil {
			t.Fatal(err)
		}
		seen[name] = true
		switch typ {
		case "table":
			if allowedTableFunctions[name] == deniedTableFunctions[name] {
				t.Errorf("table function %s is on neither or both lists", name)
			}
		case "scalar":
			if !deniedFunctions[name] && !reviewedSideEffectFunctions[name] {
				t.Errorf("scalar function %s has side effects and was not reviewed", name)
			}
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	for name := range deniedFunctions {
		if !seen[name] {
			t.Errorf("denied function %s does not exist any more: check for a rename", name)
		}
	}
}

// TestEveryViewIsClassified fails when the linked DuckDB has a built-in
// view nobody reviewed (after a driver upgrade: does it show paths,
// settings or logs?), or when a listed view is gone.
func TestEveryViewIsClassified(t *testing.T) {
	t.Parallel()
	db, err := sql.Open("duckdb", "")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.QueryContext(context.Background(), `SELECT DISTINCT view_name FROM duckdb_views() WHERE internal`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	seen := map[string]bool{}
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			t.Fatal(err)
		}
		seen[name] = true
		if allowedViews[name] == deniedViews[name] {
			t.Errorf("built-in view %s is on neither or both lists", name)
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	for _, list := range []map[string]bool{allowedViews, deniedViews} {
		for name := range list {
			if !seen[name] {
				t.Errorf("listed view %s does not exist any more", name)
			}
		}
	}
}

func TestExplainInner(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in, want string
		ok       bool
	}{
		{"EXPLAIN SELECT 1", " SELECT 1", true},
		{"  explain\nanalyze\tSELECT 1", "\tSELECT 1", true},
		{"-- c\n/* d */EXPLAIN/* e */SELECT 1", "/* e */SELECT 1", true},
		{"EXPLAIN(FORMAT json) SELECT 1", "", false},
		{"EXPLAINSELECT 1", "", false},
		{"/* /* nested */ */ EXPLAIN SELECT 1", "", false},
		{"SELECT 1", "", false},
		{"EXPLAIN", "", false},
		{"/* unterminated EXPLAIN SELECT 1", "", false},
	} {
		got, ok := explainInner(tc.in)
		if got != tc.want || ok != tc.ok {
			t.Errorf("explainInner(%q) = %q, %v; want %q, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}

func TestDynamicPivot(t *testing.T) {
	t.Parallel()
	for text, want := range map[string]bool{
		"PIVOT t ON b USING sum(a)":                                        true,
		"pivot_wider t on b using sum(a);":                                 true,
		"\n\t /* pre; */ -- x\n PIVOT t ON b USING sum(a) ;  -- post\n":    true,
		"SELECT * FROM (PIVOT t ON b USING sum(a))":                        true,
		"WITH p AS (PIVOT t ON b USING sum(a)) SELECT * FROM p":            true,
		"(PIVOT t ON b USING sum(a))":                                      true,
		"CREATE TYPE e AS ENUM ('a'); PIVOT t ON b USING sum(a)":           false,
		"PIVOT t ON b USING sum(a); DROP TABLE t":                          false,
		"INSERT INTO t SELECT * FROM (PIVOT t ON b USING sum(a))":          false,
		"SELECT 'PIVOT' AS x; DELETE FROM t":                               false,
		"DELETE FROM t WHERE b = 'pivot'":                                  false,
		"SELECT 1 /* PIVOT */; DELETE FROM t":                              false,
		"SELECT 'a;b', \"x;\" FROM t -- ; PIVOT":                           false,
		"SELECT $$;$$ AS s, E'\\';' FROM (PIVOT t ON b USING sum(a))":      true,
		"/* /* nested */ ; */ PIVOT t ON b USING sum(a)":                   true,
		"SELECT $1, 'it''s' FROM t WHERE x IN (PIVOT t ON b USING sum(a))": true,
	} {
		if got := dynamicPivot(text); got != want {
			t.Errorf("dynamicPivot(%q) = %v", text, got)
		}
	}
}

func TestParseType(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in   string
		want kind
		name string
	}{
		{"INTEGER", kindInt32, "INTEGER"},
		{"DECIMAL(18,3)", kindDecimal, "DECIMAL(18,3)"},
		{"VARCHAR[]", kindList, "VARCHAR[]"},
		{"INTEGER[3][]", kindList, "INTEGER[3][]"},
		{`STRUCT("a" INTEGER, "b ""x""" VARCHAR[])`, kindStruct, `STRUCT("a" INTEGER, "b ""x""" VARCHAR[])`},
		{"MAP(VARCHAR, STRUCT(\"k\" INTEGER))", kindMap, "MAP(VARCHAR, STRUCT(\"k\" INTEGER))"},
		{"SOMETHING NEW", kindOther, "SOMETHING NEW"},
		{"STRUCT(", kindOther, "STRUCT("},
	} {
		got := parseType(tc.in)
		if got.kind != tc.want || got.name != tc.name {
			t.Errorf("parseType(%q) = kind %d name %q", tc.in, got.kind, got.name)
		}
	}
	st := parseType(`STRUCT("a" INTEGER, "b ""x""" VARCHAR[])`)
	if len(st.fields) != 2 || st.fields[1].name != `b "x"` || st.fields[1].typ.kind != kindList || st.fields[1].typ.elem.kind != kindVarchar {
		t.Errorf("struct fields %+v", st.fields)
	}
	arr := parseType("INTEGER[3][]")
	if arr.elem.kind != kindArray || arr.elem.size != 3 || arr.elem.elem.kind != kindInt32 || arr.elem.name != "INTEGER[3]" {
		t.Errorf("INTEGER[3][] = %+v / %+v", arr, arr.elem)
	}
}

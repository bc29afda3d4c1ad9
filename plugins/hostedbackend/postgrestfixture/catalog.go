package postgrestfixture

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// relation is a table, view, materialized view or foreign table.
type relation struct {
	name        string
	kind        string // pg_class.relkind
	insertable  bool
	description *string
	columns     []columnInfo
}

// columnInfo describes one column the way PostgREST's schema cache does.
type columnInfo struct {
	name        string
	dataType    string // OpenAPI format: format_type without typmod for pg_catalog types
	fullType    string // format_type with typmod: used for casts
	notNull     bool
	defaultExpr *string
	description *string
	maxLen      *int32
	pk          bool
	fkTable     *string
	fkColumn    *string
	enum        []string
}

// function is a function exposed under /rpc/.
type function struct {
	name     string
	volatile bool
}

// The data type rule follows PostgREST's schema cache: built-in types (and
// domains over them) by their name without modifiers ("character varying",
// "numeric", "text[]"), other types with format_type().
const columnsSQL = `
SELECT c.relname, a.attname,
  CASE
    WHEN t.typtype = 'd' AND btn.nspname = 'pg_catalog' THEN format_type(t.typbasetype, NULL)
    WHEN tn.nspname = 'pg_catalog' THEN format_type(a.atttypid, NULL)
    ELSE format_type(a.atttypid, a.atttypmod)
  END,
  format_type(a.atttypid, a.atttypmod),
  a.attnotnull OR (t.typtype = 'd' AND t.typnotnull),
  pg_get_expr(ad.adbin, ad.adrelid),
  col_description(c.oid, a.attnum),
  CASE WHEN a.atttypid IN ('varchar'::regtype, 'bpchar'::regtype) AND a.atttypmod > 4 THEN a.atttypmod - 4 END,
  COALESCE(a.attnum = ANY(pk.conkey), false),
  fkc.relname, fka.attname,
  CASE WHEN t.typtype = 'e' THEN ARRAY(SELECT e.enumlabel::text FROM pg_enum e WHERE e.enumtypid = t.oid ORDER BY e.enumsortorder) END
FROM pg_attribute a
JOIN pg_class c ON c.oid = a.attrelid
JOIN pg_namespace n ON n.oid = c.relnamespace
JOIN pg_type t ON t.oid = a.atttypid
JOIN pg_namespace tn ON tn.oid = t.typnamespace
LEFT JOIN pg_type bt ON bt.oid = t.typbasetype
LEFT JOIN pg_namespace btn ON btn.oid = bt.typnamespace
LEFT JOIN pg_attrdef ad ON ad.adrelid = c.oid AND ad.adnum = a.attnum
LEFT JOIN pg_constraint pk ON pk.conrelid = c.oid AND pk.contype = 'p'
LEFT JOIN LATERAL (
  SELECT f.confrelid, f.confkey[1] AS confkey FROM pg_constraint f
  WHERE f.conrelid = c.oid AND f.contype = 'f' AND cardinality(f.conkey) = 1 AND f.conkey[1] = a.attnum
  LIMIT 1
) fk ON true
LEFT JOIN pg_class fkc ON fkc.oid = fk.confrelid
LEFT JOIN pg_attribute fka ON fka.attrelid = fk.confrelid AND fka.attnum = fk.confkey
WHERE n.nspname = $1 AND ($2::text IS NULL OR c.relname = $2)
  AND c.relkind IN ('r', 'v', 'm', 'f', 'p') AND NOT c.relispartition
  AND a.attnum > 0 AND NOT a.attisdropped
ORDER BY c.relname, a.attnum`

const relationsSQL = `
SELECT c.relname, c.relkind, (pg_relation_is_updatable(c.oid, true) & 8) = 8, obj_description(c.oid, 'pg_class')
FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE n.nspname = $1 AND ($2::text IS NULL OR c.relname = $2)
  AND c.relkind IN ('r', 'v', 'm', 'f', 'p') AND NOT c.relispartition
ORDER BY c.relname`

const functionsSQL = `
SELECT p.proname, p.provolatile = 'v'
FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
WHERE n.nspname = $1 AND p.prokind = 'f'
ORDER BY p.proname`

// loadRelations reads the relations of the schema (only the named one when
// name is not nil) with their columns, in name and column order.
func loadRelations(ctx context.Context, q querier, schema string, name *string) ([]*relation, error) {
	rows, err := q.Query(ctx, relationsSQL, schema, name)
	if err != nil {
		return nil, fmt.Errorf("listing relations: %w", err)
	}
	var rels []*relation
	byName := map[string]*relation{}
	for rows.Next() {
		r := &relation{}
		if err := rows.Scan(&r.name, &r.kind, &r.insertable, &r.description); err != nil {
			rows.Close()
			return nil, fmt.Errorf("listing relations: %w", err)
		}
		rels = append(rels, r)
		byName[r.name] = r
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("listing relations: %w", err)
	}
	rows, err = q.Query(ctx, columnsSQL, schema, name)
	if err != nil {
		return nil, fmt.Errorf("listing columns: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var rel string
		var c columnInfo
		if err := rows.Scan(&rel, &c.name, &c.dataType, &c.fullType, &c.notNull, &c.defaultExpr,
			&c.description, &c.maxLen, &c.pk, &c.fkTable, &c.fkColumn, &c.enum); err != nil {
			return nil, fmt.Errorf("listing columns: %w", err)
		}
		if r := byName[rel]; r != nil {
			r.columns = append(r.columns, c)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("listing columns: %w", err)
	}
	return rels, nil
}

func loadFunctions(ctx context.Context, q querier, schema string) ([]function, error) {
	rows, err := q.Query(ctx, functionsSQL, schema)
	if err != nil {
		return nil, fmt.Errorf("listing functions: %w", err)
	}
	fns, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (function, error) {
		var f function
		err := r.Scan(&f.name, &f.volatile)
		return f, err
	})
	if err != nil {
		return nil, fmt.Errorf("listing functions: %w", err)
	}
	return fns, nil
}

// querier is what pgxpool.Pool and pgx.Tx have in common.
type querier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

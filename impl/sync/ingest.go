package sync

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/google/uuid"

	"github.com/stratahq/strata/impl/query"
)

// stagingPrefix names the tables a sync fills before it swaps them in; the
// schema endpoint does not list them.
const stagingPrefix = query.StagingPrefix

func quoteIdent(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }

// ingest streams one table's batches into a staging table of the tenant's
// store and swaps it for the live table in one transaction, so a query sees
// either the old table or the whole new one, and a failed sync leaves the
// old one intact. It returns the row count.
//
// Built with the duckdb_arrow tag (as the Makefile does), batches reach
// DuckDB through the driver's Arrow scan (load_arrow.go); without it,
// through the Appender (load_appender.go), so a plain `go build` still
// works. Either way memory stays bounded: batches stream through.
func (r *Runner) ingest(ctx context.Context, tenant uuid.UUID, schema, name string, t DiscoveredTable,
	read func(onBatch func(arrow.RecordBatch) error) error) (int64, error) {
	var rows int64
	err := r.engine.WithWriter(ctx, tenant, func(ctx context.Context, conn *sql.Conn) error {
		columns, err := columnDefs(t.Schema)
		if err != nil {
			return err
		}
		staging := stagingPrefix + strings.ReplaceAll(uuid.NewString(), "-", "")
		qSchema, qStaging, qName := quoteIdent(schema), quoteIdent(staging), quoteIdent(name)
		if schema != "main" {
			if _, err := conn.ExecContext(ctx, `CREATE SCHEMA IF NOT EXISTS `+qSchema); err != nil {
				return fmt.Errorf("create schema: %w", err)
			}
		}
		if _, err := conn.ExecContext(ctx, `CREATE TABLE `+qSchema+`.`+qStaging+` (`+columns+`)`); err != nil {
			return fmt.Errorf("create staging table: %w", err)
		}
		dropStaging := func() {
			_, _ = conn.ExecContext(context.WithoutCancel(ctx), `DROP TABLE IF EXISTS `+qSchema+`.`+qStaging)
		}
		rows, err = load(ctx, conn, schema, staging, t, read)
		if err == nil {
			err = fitDecimals(ctx, conn, qSchema+"."+qStaging, t.Schema)
		}
		if err != nil {
			dropStaging()
			return err
		}
		// The swap: one transaction, so queries see the old or the new table.
		swap := []string{
			`BEGIN TRANSACTION`,
			`DROP TABLE IF EXISTS ` + qSchema + `.` + qName,
			`ALTER TABLE ` + qSchema + `.` + qStaging + ` RENAME TO ` + qName,
			`COMMIT`,
		}
		for _, stmt := range swap {
			if _, err := conn.ExecContext(ctx, stmt); err != nil {
				_, _ = conn.ExecContext(context.WithoutCancel(ctx), `ROLLBACK`)
				dropStaging()
				return fmt.Errorf("swap in the new table: %w", err)
			}
		}
		return query.RecountTable(ctx, conn, schema, name)
	})
	return rows, err
}

// maxDecimalWidth is DuckDB's largest DECIMAL precision.
const maxDecimalWidth = 38

// fitDecimals turns the exact-decimal text columns of a loaded staging table
// into DECIMAL(38, s), s being the largest scale in the data, when every
// value fits; columns that do not fit stay text, so nothing is rounded.
func fitDecimals(ctx context.Context, conn *sql.Conn, table string, s *arrow.Schema) error {
	for _, f := range s.Fields() {
		if !isNumeric(f.Metadata) || f.Type.ID() != arrow.STRING {
			continue
		}
		col := quoteIdent(f.Name)
		var scale, intDigits sql.NullInt64
		var nonNumeric int64
		err := conn.QueryRowContext(ctx, `SELECT
				max(length(CASE WHEN contains(v, '.') THEN split_part(v, '.', 2) ELSE '' END)),
				max(length(ltrim(split_part(v, '.', 1), '-+'))),
				count(*) FILTER (WHERE NOT regexp_full_match(v, '[-+]?[0-9]+(\.[0-9]+)?'))
			FROM (SELECT `+col+` AS v FROM `+table+` WHERE `+col+` IS NOT NULL)`).Scan(&scale, &intDigits, &nonNumeric)
		if err != nil {
			return fmt.Errorf("column %s: %w", f.Name, err)
		}
		sc := scale.Int64
		if nonNumeric > 0 || intDigits.Int64+sc > maxDecimalWidth {
			continue // NaN, exponents or more than 38 digits: keep the exact text
		}
		if _, err := conn.ExecContext(ctx, fmt.Sprintf(`ALTER TABLE %s ALTER COLUMN %s TYPE DECIMAL(%d,%d)`,
			table, col, maxDecimalWidth, sc)); err != nil {
			return fmt.Errorf("column %s: %w", f.Name, err)
		}
	}
	return nil
}

// columnDefs maps an Arrow schema to DuckDB column definitions. A field
// that is not nullable (a NOT NULL or primary-key column of the source)
// becomes a NOT NULL column, so the schema endpoint reports it as such; the
// plugin host has already refused batches with nulls in such a column.
func columnDefs(s *arrow.Schema) (string, error) {
	if s == nil || s.NumFields() == 0 {
		return "", errors.New("the table has no columns")
	}
	defs := make([]string, s.NumFields())
	for i, f := range s.Fields() {
		typ, err := duckType(f.Type, f.Metadata)
		if err != nil {
			return "", fmt.Errorf("column %s: %w", f.Name, err)
		}
		defs[i] = quoteIdent(f.Name) + " " + typ
		if !f.Nullable {
			defs[i] += " NOT NULL"
		}
	}
	return strings.Join(defs, ", "), nil
}

func isJSON(md arrow.Metadata) bool {
	v, ok := md.GetValue("strata.type")
	return ok && v == "json"
}

// isUUID recognises Arrow's canonical UUID extension, whether or not the
// extension type was registered when the batch was decoded (then it is a
// fixed_size_binary(16) with the extension's field metadata).
func isUUID(dt arrow.DataType, md arrow.Metadata) bool {
	if ext, ok := dt.(arrow.ExtensionType); ok && ext.ExtensionName() == "arrow.uuid" {
		return true
	}
	if v, ok := md.GetValue("ARROW:extension:name"); ok && v == "arrow.uuid" {
		return true
	}
	v, ok := md.GetValue("strata.type")
	return ok && v == "uuid"
}

// isNumeric marks exact decimal text (PostgreSQL numeric without a known
// precision): loaded as text, then typed DECIMAL with the scale the data
// needs (see fitDecimals).
func isNumeric(md arrow.Metadata) bool {
	v, ok := md.GetValue("strata.type")
	return ok && v == "numeric"
}

// duckType is the DuckDB type of an Arrow type.
func duckType(dt arrow.DataType, md arrow.Metadata) (string, error) {
	if isUUID(dt, md) {
		return "UUID", nil
	}
	switch t := dt.(type) {
	case *arrow.BooleanType:
		return "BOOLEAN", nil
	case *arrow.Int8Type:
		return "TINYINT", nil
	case *arrow.Int16Type:
		return "SMALLINT", nil
	case *arrow.Int32Type:
		return "INTEGER", nil
	case *arrow.Int64Type:
		return "BIGINT", nil
	case *arrow.Uint8Type:
		return "UTINYINT", nil
	case *arrow.Uint16Type:
		return "USMALLINT", nil
	case *arrow.Uint32Type:
		return "UINTEGER", nil
	case *arrow.Uint64Type:
		return "UBIGINT", nil
	case *arrow.Float32Type:
		return "FLOAT", nil
	case *arrow.Float64Type:
		return "DOUBLE", nil
	case *arrow.StringType, *arrow.LargeStringType:
		if isJSON(md) {
			return "JSON", nil
		}
		return "VARCHAR", nil
	case *arrow.BinaryType, *arrow.LargeBinaryType:
		return "BLOB", nil
	case *arrow.Decimal128Type:
		if t.Precision < 1 || t.Precision > 38 {
			return "", fmt.Errorf("decimal precision %d out of range", t.Precision)
		}
		return fmt.Sprintf("DECIMAL(%d,%d)", t.Precision, t.Scale), nil
	case *arrow.Date32Type:
		return "DATE", nil
	case *arrow.Time64Type, *arrow.Time32Type:
		return "TIME", nil
	case *arrow.MonthDayNanoIntervalType:
		return "INTERVAL", nil
	case *arrow.TimestampType:
		if t.TimeZone != "" {
			return "TIMESTAMPTZ", nil
		}
		return "TIMESTAMP", nil
	case *arrow.ListType:
		elem, err := duckType(t.Elem(), t.ElemField().Metadata)
		if err != nil {
			return "", err
		}
		return elem + "[]", nil
	}
	return "", fmt.Errorf("unsupported Arrow type %s", dt)
}

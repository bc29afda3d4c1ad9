package sync

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	duckdb "github.com/duckdb/duckdb-go/v2"
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
// Batches go through the driver's Appender, which needs no build tag (the
// Arrow scan of duckdb-go requires building with duckdb_arrow); memory stays
// bounded because each batch is appended and released before the next.
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
		err = conn.Raw(func(dc any) error {
			app, err := duckdb.NewAppenderFromConn(dc.(driver.Conn), schema, staging)
			if err != nil {
				return fmt.Errorf("appender: %w", err)
			}
			readErr := read(func(rec arrow.RecordBatch) error {
				if !rec.Schema().Equal(t.Schema) {
					return errors.New("a batch's schema differs from the discovered one")
				}
				n, err := appendBatch(app, rec)
				rows += n
				return err
			})
			closeErr := app.Close()
			return errors.Join(readErr, closeErr)
		})
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

// columnDefs maps an Arrow schema to DuckDB column definitions.
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

// appendBatch appends a batch row by row.
func appendBatch(app *duckdb.Appender, rec arrow.RecordBatch) (int64, error) {
	cols := rec.Columns()
	row := make([]driver.Value, len(cols))
	for i := 0; i < int(rec.NumRows()); i++ {
		for c, col := range cols {
			v, err := value(col, i, rec.Schema().Field(c).Metadata)
			if err != nil {
				return int64(i), fmt.Errorf("column %s row %d: %w", rec.Schema().Field(c).Name, i, err)
			}
			row[c] = v
		}
		if err := app.AppendRow(row...); err != nil {
			return int64(i), fmt.Errorf("append row: %w", err)
		}
	}
	return rec.NumRows(), nil
}

// value converts one Arrow value to what the Appender takes.
func value(arr arrow.Array, i int, md arrow.Metadata) (any, error) {
	if arr.IsNull(i) {
		return nil, nil
	}
	if ext, ok := arr.(array.ExtensionArray); ok {
		if isUUID(arr.DataType(), md) {
			storage := ext.Storage()
			if fsb, ok := storage.(*array.FixedSizeBinary); ok {
				var u duckdb.UUID
				copy(u[:], fsb.Value(i))
				return &u, nil
			}
		}
		return value(ext.Storage(), i, md)
	}
	switch a := arr.(type) {
	case *array.Boolean:
		return a.Value(i), nil
	case *array.Int8:
		return a.Value(i), nil
	case *array.Int16:
		return a.Value(i), nil
	case *array.Int32:
		return a.Value(i), nil
	case *array.Int64:
		return a.Value(i), nil
	case *array.Uint8:
		return a.Value(i), nil
	case *array.Uint16:
		return a.Value(i), nil
	case *array.Uint32:
		return a.Value(i), nil
	case *array.Uint64:
		return a.Value(i), nil
	case *array.Float32:
		return a.Value(i), nil
	case *array.Float64:
		return a.Value(i), nil
	case *array.String:
		if isJSON(md) {
			// The Appender json.Marshals values of JSON columns: pass the
			// document as raw JSON, not as a Go string (which would become a
			// JSON string).
			raw := a.Value(i)
			if !json.Valid([]byte(raw)) {
				return nil, errors.New("invalid JSON text")
			}
			return json.RawMessage(raw), nil
		}
		if isUUID(arr.DataType(), md) {
			u, err := uuid.Parse(a.Value(i))
			if err != nil {
				return nil, err
			}
			d := duckdb.UUID(u)
			return &d, nil
		}
		return a.Value(i), nil
	case *array.LargeString:
		return a.Value(i), nil
	case *array.Binary:
		return append([]byte(nil), a.Value(i)...), nil
	case *array.LargeBinary:
		return append([]byte(nil), a.Value(i)...), nil
	case *array.FixedSizeBinary:
		if isUUID(arr.DataType(), md) {
			var u duckdb.UUID
			copy(u[:], a.Value(i))
			return &u, nil
		}
		return append([]byte(nil), a.Value(i)...), nil
	case *array.Decimal128:
		t := a.DataType().(*arrow.Decimal128Type)
		return duckdb.Decimal{Width: uint8(t.Precision), Scale: uint8(t.Scale), Value: decimal128.Num(a.Value(i)).BigInt()}, nil
	case *array.Date32:
		return a.Value(i).ToTime().UTC(), nil
	case *array.Time64:
		unit := a.DataType().(*arrow.Time64Type).Unit
		return a.Value(i).ToTime(unit).UTC(), nil
	case *array.Time32:
		unit := a.DataType().(*arrow.Time32Type).Unit
		return a.Value(i).ToTime(unit).UTC(), nil
	case *array.Timestamp:
		unit := a.DataType().(*arrow.TimestampType).Unit
		return a.Value(i).ToTime(unit).UTC(), nil
	case *array.MonthDayNanoInterval:
		v := a.Value(i)
		return duckdb.Interval{Months: v.Months, Days: v.Days, Micros: v.Nanoseconds / 1000}, nil
	case *array.List:
		start, end := a.ValueOffsets(i)
		elems := a.ListValues()
		out := make([]any, 0, end-start)
		for j := start; j < end; j++ {
			v, err := value(elems, int(j), a.DataType().(*arrow.ListType).ElemField().Metadata)
			if err != nil {
				return nil, err
			}
			out = append(out, v)
		}
		return out, nil
	}
	return nil, fmt.Errorf("unsupported Arrow array %T", arr)
}

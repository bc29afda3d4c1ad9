//go:build !duckdb_arrow

package sync

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	duckdb "github.com/duckdb/duckdb-go/v2"
	"github.com/google/uuid"
)

// IngestPath names the ingestion path this binary was built with.
const IngestPath = "appender"

// load appends every batch of read to the staging table with the driver's
// Appender, row by row.
func load(ctx context.Context, conn *sql.Conn, schema, staging string, t DiscoveredTable,
	read func(onBatch func(arrow.RecordBatch) error) error) (int64, error) {
	var rows int64
	err := conn.Raw(func(dc any) error {
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
		return errors.Join(readErr, app.Close())
	})
	return rows, err
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

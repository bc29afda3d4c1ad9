package proto

import (
	"bytes"
	"errors"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// Arrow travels as IPC streams (the format Grafana's plugin SDK uses for its
// data frames too): a schema is an IPC stream with no batch, a record batch
// is an IPC stream with exactly one batch. Every message carries its own
// schema, so a batch can be decoded without any state from earlier messages
// and a plugin cannot make the host misread one batch by sending another.

// EncodeSchema serialises schema as an Arrow IPC stream holding only the
// schema, the form of [Table.ArrowSchema].
func EncodeSchema(schema *arrow.Schema) ([]byte, error) {
	if schema == nil {
		return nil, errors.New("encode arrow schema: nil schema")
	}
	var buf bytes.Buffer
	w := ipc.NewWriter(&buf, ipc.WithSchema(schema))
	if err := w.Close(); err != nil {
		return nil, fmt.Errorf("encode arrow schema: %w", err)
	}
	return buf.Bytes(), nil
}

// DecodeSchema parses the IPC-serialised schema of a [Table]. The bytes come
// from a plugin and are not trusted: any malformation is an error, never a
// panic.
func DecodeSchema(b []byte) (schema *arrow.Schema, err error) {
	defer func() {
		if r := recover(); r != nil {
			schema, err = nil, fmt.Errorf("decode arrow schema: %v", r)
		}
	}()
	if err := checkIPC(b); err != nil {
		return nil, fmt.Errorf("decode arrow schema: %w", err)
	}
	r, err := ipc.NewReader(bytes.NewReader(b))
	if err != nil {
		return nil, fmt.Errorf("decode arrow schema: %w", err)
	}
	defer r.Release()
	if err := checkSchemaTypes(r.Schema()); err != nil {
		return nil, fmt.Errorf("decode arrow schema: %w", err)
	}
	return r.Schema(), nil
}

// EncodeBatch serialises rec as an Arrow IPC stream holding exactly one
// record batch, the form of [ReadMessage_RecordBatch]. It does not take
// ownership of rec: the caller still releases it.
func EncodeBatch(rec arrow.RecordBatch) ([]byte, error) {
	if rec == nil {
		return nil, errors.New("encode arrow batch: nil record batch")
	}
	var buf bytes.Buffer
	w := ipc.NewWriter(&buf, ipc.WithSchema(rec.Schema()))
	if err := w.Write(rec); err != nil {
		_ = w.Close()
		return nil, fmt.Errorf("encode arrow batch: %w", err)
	}
	if err := w.Close(); err != nil {
		return nil, fmt.Errorf("encode arrow batch: %w", err)
	}
	return buf.Bytes(), nil
}

// nullCount counts the nulls of a (validated) column from its validity
// bitmap rather than trusting the null count the sender declared.
func nullCount(d arrow.ArrayData) int {
	if d.DataType().ID() == arrow.NULL {
		return d.Len()
	}
	bufs := d.Buffers()
	if len(bufs) == 0 || bufs[0] == nil || bufs[0].Len() == 0 {
		return 0
	}
	return d.Len() - bitutil.CountSetBits(bufs[0].Bytes(), d.Offset(), d.Len())
}

// DecodeBatch parses one record batch message. It checks that b is an IPC
// stream holding exactly one record batch and, when want is not nil, that
// the batch's schema equals want and its non-nullable columns hold no
// nulls (the store declares them NOT NULL). The returned batch is allocated from mem
// (the default allocator when nil) and owned by the caller, who releases it.
// The bytes come from a plugin and are not trusted: any malformation is an
// error, never a panic.
func DecodeBatch(b []byte, want *arrow.Schema, mem memory.Allocator) (rec arrow.RecordBatch, err error) {
	if mem == nil {
		mem = memory.DefaultAllocator
	}
	defer func() {
		if r := recover(); r != nil {
			if rec != nil {
				rec.Release()
			}
			rec, err = nil, fmt.Errorf("invalid Arrow IPC data: %v", r)
		}
	}()
	if err := checkIPC(b); err != nil {
		return nil, fmt.Errorf("invalid Arrow IPC stream: %w", err)
	}
	r, err := ipc.NewReader(bytes.NewReader(b), ipc.WithAllocator(mem))
	if err != nil {
		return nil, fmt.Errorf("invalid Arrow IPC stream: %w", err)
	}
	defer r.Release()
	if want != nil && !r.Schema().Equal(want) {
		return nil, fmt.Errorf("schema %s differs from the discovered schema %s", r.Schema(), want)
	}
	if !r.Next() {
		if err := r.Err(); err != nil {
			return nil, fmt.Errorf("invalid Arrow IPC stream: %w", err)
		}
		return nil, errors.New("IPC stream holds no record batch")
	}
	rec = r.RecordBatch()
	rec.Retain()
	for i, col := range rec.Columns() {
		if int64(col.Len()) != rec.NumRows() {
			rec.Release()
			return nil, fmt.Errorf("column %d has %d rows, the batch %d", i, col.Len(), rec.NumRows())
		}
		if err := validateColumn(col.Data()); err != nil {
			rec.Release()
			return nil, fmt.Errorf("column %q: %w", rec.ColumnName(i), err)
		}
		if !rec.Schema().Field(i).Nullable {
			if n := nullCount(col.Data()); n > 0 {
				rec.Release()
				return nil, fmt.Errorf("column %q is not nullable but holds %d nulls", rec.ColumnName(i), n)
			}
		}
	}
	if r.Next() {
		rec.Release()
		return nil, errors.New("IPC stream holds more than one record batch")
	}
	if err := r.Err(); err != nil {
		rec.Release()
		return nil, fmt.Errorf("invalid Arrow IPC stream: %w", err)
	}
	return rec, nil
}

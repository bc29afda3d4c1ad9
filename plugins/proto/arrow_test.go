package proto_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/stratahq/strata/plugins/proto"
)

func testSchema() *arrow.Schema {
	return arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "name", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "tags", Type: arrow.ListOf(arrow.BinaryTypes.String), Nullable: true},
	}, nil)
}

func testBatch(t testing.TB, mem memory.Allocator, n int) arrow.RecordBatch {
	b := array.NewRecordBuilder(mem, testSchema())
	defer b.Release()
	for i := range n {
		b.Field(0).(*array.Int64Builder).Append(int64(i))
		if i%3 == 0 {
			b.Field(1).AppendNull()
		} else {
			b.Field(1).(*array.StringBuilder).Append("ünï ✓")
		}
		lb := b.Field(2).(*array.ListBuilder)
		lb.Append(true)
		lb.ValueBuilder().(*array.StringBuilder).Append("a")
	}
	return b.NewRecordBatch()
}

func TestSchemaRoundTrip(t *testing.T) {
	b, err := proto.EncodeSchema(testSchema())
	if err != nil {
		t.Fatal(err)
	}
	got, err := proto.DecodeSchema(b)
	if err != nil {
		t.Fatal(err)
	}
	if !got.Equal(testSchema()) {
		t.Fatalf("schema = %s", got)
	}
	if _, err := proto.DecodeSchema([]byte("nope")); err == nil {
		t.Fatal("garbage decoded as a schema")
	}
}

func TestBatchRoundTrip(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	rec := testBatch(t, mem, 100)
	b, err := proto.EncodeBatch(rec)
	rec.Release()
	if err != nil {
		t.Fatal(err)
	}
	got, err := proto.DecodeBatch(b, testSchema(), mem)
	if err != nil {
		t.Fatal(err)
	}
	defer got.Release()
	if got.NumRows() != 100 || got.Column(0).(*array.Int64).Value(99) != 99 ||
		!got.Column(1).IsNull(0) || got.Column(1).(*array.String).Value(1) != "ünï ✓" {
		t.Fatalf("batch = %v", got)
	}
}

func TestDecodeBatchRejects(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	other := arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int32}}, nil)

	rec := testBatch(t, mem, 3)
	defer rec.Release()
	one, _ := proto.EncodeBatch(rec)
	var two bytes.Buffer
	w := ipc.NewWriter(&two, ipc.WithSchema(rec.Schema()))
	_ = w.Write(rec)
	_ = w.Write(rec)
	_ = w.Close()
	none, _ := proto.EncodeSchema(testSchema())

	for _, tc := range []struct {
		name string
		b    []byte
		want string
	}{
		{"garbage", []byte("not arrow at all"), "invalid Arrow IPC"},
		{"empty", nil, "invalid Arrow IPC"},
		{"truncated", one[:len(one)-20], "invalid Arrow IPC"},
		{"other schema", one, "differs from the discovered schema"},
		{"two batches", two.Bytes(), "more than one record batch"},
		{"no batch", none, "no record batch"},
		{"null in a non-nullable column", strictNulls(t, mem), `column "name" is not nullable but holds 1 nulls`},
	} {
		want := testSchema()
		switch tc.name {
		case "other schema":
			want = other
		case "null in a non-nullable column":
			want = strictSchema()
		}
		got, err := proto.DecodeBatch(tc.b, want, mem)
		if err == nil {
			got.Release()
			t.Errorf("%s: decoded", tc.name)
			continue
		}
		if !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want %q", tc.name, err, tc.want)
		}
	}
}

// FuzzDecodeBatch feeds the host's batch decoder what a broken or hostile
// plugin could send: it must answer with a batch or an error, never crash,
// and never leak memory.
func FuzzDecodeBatch(f *testing.F) {
	rec := testBatch(f, memory.DefaultAllocator, 5)
	b, _ := proto.EncodeBatch(rec)
	rec.Release()
	f.Add(b)
	f.Add([]byte{})
	f.Add([]byte("\xff\xff\xff\xff\x10\x00\x00\x00"))
	f.Fuzz(func(t *testing.T, data []byte) {
		mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
		got, err := proto.DecodeBatch(data, testSchema(), mem)
		if err == nil {
			// Touch every value, as an ingester would.
			for _, col := range got.Columns() {
				_ = col.String()
			}
			got.Release()
		}
	})
}

// strictSchema is testSchema with name not nullable.
func strictSchema() *arrow.Schema {
	fields := testSchema().Fields()
	fields[1].Nullable = false
	return arrow.NewSchema(fields, nil)
}

// strictNulls is a batch of strictSchema whose non-nullable name column
// holds a null anyway (arrow-go's builders do not stop that).
func strictNulls(t testing.TB, mem memory.Allocator) []byte {
	b := array.NewRecordBuilder(mem, strictSchema())
	defer b.Release()
	b.Field(0).(*array.Int64Builder).AppendValues([]int64{1, 2}, nil)
	b.Field(1).(*array.StringBuilder).AppendValues([]string{"a", ""}, []bool{true, false})
	b.Field(2).AppendNull()
	b.Field(2).AppendNull()
	rec := b.NewRecordBatch()
	defer rec.Release()
	out, err := proto.EncodeBatch(rec)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

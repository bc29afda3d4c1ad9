package sdk

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/stratahq/strata/plugins/proto"
)

// stub is a Connector whose behaviour each test sets.
type stub struct {
	check func(json.RawMessage) error
	read  func(context.Context, RecordWriter) error
}

func (s stub) Spec(context.Context) (Spec, error) {
	return Spec{Type: "stub", DisplayName: "Stub", ConfigSchema: json.RawMessage(
		`{"type":"object","properties":{"token":{"type":"string","x-secret":true}}}`)}, nil
}
func (s stub) Check(_ context.Context, c json.RawMessage) error { return s.check(c) }
func (s stub) Discover(context.Context, json.RawMessage) ([]Table, error) {
	return []Table{{Name: "t", Schema: idSchema(), PrimaryKey: []string{"id"}, EstimatedRows: 3}}, nil
}
func (s stub) Read(ctx context.Context, _ json.RawMessage, _ string, out RecordWriter) error {
	return s.read(ctx, out)
}

func idSchema() *arrow.Schema {
	return arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64}}, nil)
}

// stream records what a Read sends.
type stream struct {
	grpc.ServerStream
	ctx  context.Context
	sent []*proto.ReadMessage
}

func (s *stream) Context() context.Context { return s.ctx }
func (s *stream) Send(m *proto.ReadMessage) error {
	if err := s.ctx.Err(); err != nil {
		return status.FromContextError(err).Err()
	}
	s.sent = append(s.sent, m)
	return nil
}

const config = `{"token":"tok-very-secret"}`

func TestServerSpecCheckDiscover(t *testing.T) {
	ctx := context.Background()
	s := &server{c: stub{check: func(c json.RawMessage) error {
		return errors.New("token tok-very-secret is expired")
	}}}
	spec, err := s.Spec(ctx, &proto.SpecRequest{})
	if err != nil || spec.GetType() != "stub" || spec.GetProtocolVersion() != proto.ProtocolVersion {
		t.Fatalf("spec = %v, %v", spec, err)
	}
	resp, err := s.Check(ctx, &proto.CheckRequest{ConfigJson: []byte(config)})
	if err != nil || resp.GetOk() || resp.GetMessage() != "token ******** is expired" {
		t.Fatalf("check = %v, %v", resp, err)
	}
	d, err := s.Discover(ctx, &proto.DiscoverRequest{ConfigJson: []byte(config)})
	if err != nil || len(d.GetTables()) != 1 {
		t.Fatalf("discover = %v, %v", d, err)
	}
	got, err := proto.DecodeSchema(d.GetTables()[0].GetArrowSchema())
	if err != nil || !got.Equal(idSchema()) {
		t.Fatalf("schema = %v, %v", got, err)
	}
}

func TestServerRead(t *testing.T) {
	s := &server{c: stub{read: func(ctx context.Context, out RecordWriter) error {
		b := array.NewRecordBuilder(memory.DefaultAllocator, idSchema())
		defer b.Release()
		b.Field(0).(*array.Int64Builder).AppendValues([]int64{1, 2, 3}, nil)
		rec := b.NewRecordBatch()
		defer rec.Release()
		if err := out.Write(rec); err != nil {
			return err
		}
		return out.Progress(3, 3)
	}}}
	st := &stream{ctx: context.Background()}
	if err := s.Read(&proto.ReadRequest{ConfigJson: []byte(config), Table: "t"}, st); err != nil {
		t.Fatal(err)
	}
	if len(st.sent) != 2 || st.sent[1].GetProgress().GetRowsRead() != 3 {
		t.Fatalf("sent %v", st.sent)
	}
	rec, err := proto.DecodeBatch(st.sent[0].GetRecordBatch(), idSchema(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer rec.Release()
	if rec.NumRows() != 3 {
		t.Fatalf("rows = %d", rec.NumRows())
	}
}

func TestServerReadErrors(t *testing.T) {
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	for _, tc := range []struct {
		name string
		ctx  context.Context
		read func(context.Context, RecordWriter) error
		code codes.Code
		msg  string
	}{
		{"plain error, redacted", context.Background(), func(context.Context, RecordWriter) error {
			return errors.New("GET /x?token=tok-very-secret: 500")
		}, codes.Unknown, "GET /x?token=********: 500"},
		{"status kept", context.Background(), func(context.Context, RecordWriter) error {
			return status.Error(codes.NotFound, "no table t")
		}, codes.NotFound, "no table t"},
		{"panic", context.Background(), func(context.Context, RecordWriter) error {
			panic("tok-very-secret")
		}, codes.Internal, "connector panicked in Read: ********"},
		{"cancelled", cancelled, func(ctx context.Context, out RecordWriter) error {
			return out.Progress(0, -1)
		}, codes.Canceled, ""},
	} {
		s := &server{c: stub{read: tc.read}}
		err := s.Read(&proto.ReadRequest{ConfigJson: []byte(config)}, &stream{ctx: tc.ctx})
		st := status.Convert(err)
		if st.Code() != tc.code || !strings.Contains(st.Message(), tc.msg) {
			t.Errorf("%s: err = %v", tc.name, err)
		}
	}
}

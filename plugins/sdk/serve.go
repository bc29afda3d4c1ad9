package sdk

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"runtime/debug"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/stratahq/strata/plugins/proto"
)

// Serve runs c as a connector plugin and returns when the host is done with
// it. It is meant to be the whole of a connector's main function.
//
// Run by hand, without a Strata host, the program prints that it is a plugin
// and exits with status 1. Under a host, Serve routes log/slog's default
// logger to the host's log (lines are tagged with the connector type there)
// and recovers panics in the connector's methods into errors, so one bad
// call fails that call, not the plugin.
func Serve(c Connector) {
	// The host parses JSON lines in hclog's shape from the plugin's stderr
	// and logs each at its level.
	stderr := os.Stderr
	slog.SetDefault(slog.New(newHostLogHandler(stderr)))
	plugin.Serve(&plugin.ServeConfig{
		HandshakeConfig:  proto.Handshake(),
		VersionedPlugins: proto.VersionedPlugins(&server{c: c}),
		GRPCServer:       plugin.DefaultGRPCServer,
		Logger: hclog.New(&hclog.LoggerOptions{
			Name:       "sdk",
			Level:      hclog.Warn,
			Output:     stderr,
			JSONFormat: true,
		}),
	})
}

// newHostLogHandler returns a slog handler writing the JSON lines go-plugin's
// host understands: "@timestamp", "@level" and "@message", the rest as
// attributes.
func newHostLogHandler(w io.Writer) slog.Handler {
	return slog.NewJSONHandler(w, &slog.HandlerOptions{
		Level: slog.LevelDebug,
		ReplaceAttr: func(groups []string, a slog.Attr) slog.Attr {
			if len(groups) > 0 {
				return a
			}
			switch a.Key {
			case slog.TimeKey:
				return slog.String("@timestamp", a.Value.Time().Format("2006-01-02T15:04:05.000000Z07:00"))
			case slog.LevelKey:
				return slog.String("@level", hclogLevel(a.Value.Any()))
			case slog.MessageKey:
				return slog.String("@message", a.Value.String())
			}
			return a
		},
	})
}

func hclogLevel(v any) string {
	l, _ := v.(slog.Level)
	switch {
	case l < slog.LevelDebug:
		return "trace"
	case l < slog.LevelInfo:
		return "debug"
	case l < slog.LevelWarn:
		return "info"
	case l < slog.LevelError:
		return "warn"
	default:
		return "error"
	}
}

// server adapts a Connector to the generated gRPC service: it converts
// between Go and wire types, keeps secrets out of error messages and turns
// errors into gRPC status errors.
type server struct {
	proto.UnimplementedConnectorServer
	c Connector

	mu     sync.Mutex
	schema json.RawMessage // the config schema, once Spec has succeeded
}

var _ proto.ConnectorServer = (*server)(nil)

// Spec implements the Spec RPC.
func (s *server) Spec(ctx context.Context, _ *proto.SpecRequest) (resp *proto.SpecResponse, err error) {
	defer recoverCall("Spec", &err, nil)
	spec, err := s.c.Spec(ctx)
	if err != nil {
		return nil, toStatus(ctx, err, nil)
	}
	if !json.Valid(spec.ConfigSchema) {
		return nil, status.Error(codes.Internal, "connector spec: ConfigSchema is not valid JSON")
	}
	s.mu.Lock()
	s.schema = spec.ConfigSchema
	s.mu.Unlock()
	return &proto.SpecResponse{
		Type:             spec.Type,
		DisplayName:      spec.DisplayName,
		ConfigSchemaJson: spec.ConfigSchema,
		ProtocolVersion:  proto.ProtocolVersion,
	}, nil
}

// Check implements the Check RPC: a failed check is an answer, not an error.
func (s *server) Check(ctx context.Context, req *proto.CheckRequest) (resp *proto.CheckResponse, err error) {
	secrets := s.secrets(ctx, req.GetConfigJson())
	defer recoverCall("Check", &err, secrets)
	if err := s.c.Check(ctx, req.GetConfigJson()); err != nil {
		if ctx.Err() != nil {
			return nil, status.FromContextError(ctx.Err()).Err()
		}
		return &proto.CheckResponse{Ok: false, Message: Redact(err.Error(), secrets)}, nil
	}
	return &proto.CheckResponse{Ok: true}, nil
}

// Discover implements the Discover RPC.
func (s *server) Discover(ctx context.Context, req *proto.DiscoverRequest) (resp *proto.DiscoverResponse, err error) {
	secrets := s.secrets(ctx, req.GetConfigJson())
	defer recoverCall("Discover", &err, secrets)
	tables, err := s.c.Discover(ctx, req.GetConfigJson())
	if err != nil {
		return nil, toStatus(ctx, err, secrets)
	}
	resp = &proto.DiscoverResponse{Tables: make([]*proto.Table, 0, len(tables))}
	for _, t := range tables {
		schema, err := proto.EncodeSchema(t.Schema)
		if err != nil {
			return nil, status.Errorf(codes.Internal, "table %q: %v", t.Name, err)
		}
		resp.Tables = append(resp.Tables, &proto.Table{
			Name:          t.Name,
			ArrowSchema:   schema,
			PrimaryKey:    t.PrimaryKey,
			EstimatedRows: t.EstimatedRows,
		})
	}
	return resp, nil
}

// Read implements the Read RPC. The stream's context is the one the
// connector sees: it ends when the host cancels the call or goes away.
func (s *server) Read(req *proto.ReadRequest, stream grpc.ServerStreamingServer[proto.ReadMessage]) (err error) {
	ctx := stream.Context()
	secrets := s.secrets(ctx, req.GetConfigJson())
	defer recoverCall("Read", &err, secrets)
	w := &recordWriter{ctx: ctx, stream: stream}
	if err := s.c.Read(ctx, req.GetConfigJson(), req.GetTable(), w); err != nil {
		return toStatus(ctx, err, secrets)
	}
	return nil
}

// secrets returns the secret values of config, fetching the schema through
// Spec when no call has yet.
func (s *server) secrets(ctx context.Context, config []byte) []string {
	s.mu.Lock()
	schema := s.schema
	s.mu.Unlock()
	if schema == nil {
		if _, err := s.Spec(ctx, &proto.SpecRequest{}); err == nil {
			s.mu.Lock()
			schema = s.schema
			s.mu.Unlock()
		}
	}
	return SecretValues(schema, config)
}

// toStatus turns a connector's error into a gRPC status error: a status
// error keeps its code, a context error becomes Canceled or
// DeadlineExceeded, anything else is Unknown. Secrets are redacted from the
// message.
func toStatus(ctx context.Context, err error, secrets []string) error {
	if st, ok := status.FromError(err); ok && st.Code() != codes.Unknown {
		return status.Error(st.Code(), Redact(st.Message(), secrets))
	}
	switch {
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return status.FromContextError(err).Err()
	case ctx.Err() != nil:
		return status.FromContextError(ctx.Err()).Err()
	}
	return status.Error(codes.Unknown, Redact(err.Error(), secrets))
}

// recoverCall turns a panic in a connector method into an Internal error
// and logs its stack to the host.
func recoverCall(method string, err *error, secrets []string) {
	r := recover()
	if r == nil {
		return
	}
	msg := Redact(fmt.Sprint(r), secrets)
	slog.Error("connector panicked", "method", method, "panic", msg,
		"stack", Redact(string(debug.Stack()), secrets))
	*err = status.Errorf(codes.Internal, "connector panicked in %s: %s", method, msg)
}

// recordWriter sends a Read's batches and progress on the gRPC stream.
// gRPC's Send blocks while the host's flow-control window is full, which is
// the backpressure a RecordWriter promises.
type recordWriter struct {
	ctx    context.Context
	stream grpc.ServerStreamingServer[proto.ReadMessage]
	mu     sync.Mutex // a gRPC stream allows one sender at a time
}

// Write implements RecordWriter.
func (w *recordWriter) Write(rec arrow.RecordBatch) error {
	if err := w.ctx.Err(); err != nil {
		return err
	}
	b, err := proto.EncodeBatch(rec)
	if err != nil {
		return err
	}
	return w.send(&proto.ReadMessage{Payload: &proto.ReadMessage_RecordBatch{RecordBatch: b}})
}

// Progress implements RecordWriter.
func (w *recordWriter) Progress(rowsRead, rowsTotal int64) error {
	if err := w.ctx.Err(); err != nil {
		return err
	}
	return w.send(&proto.ReadMessage{Payload: &proto.ReadMessage_Progress{
		Progress: &proto.Progress{RowsRead: rowsRead, RowsTotal: rowsTotal},
	}})
}

func (w *recordWriter) send(m *proto.ReadMessage) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.stream.Send(m); err != nil {
		if ctxErr := w.ctx.Err(); ctxErr != nil {
			return ctxErr
		}
		return fmt.Errorf("send to host: %w", err)
	}
	return nil
}

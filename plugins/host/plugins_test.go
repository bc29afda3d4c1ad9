package host_test

// The plugins the tests launch. Besides the shipped example (built with
// `go build` in TestMain), every test plugin is this test binary itself,
// reached through a symlink named strata-connector-<type>: TestMain sees
// the name and serves the matching connector instead of running tests, as
// hashicorp/go-plugin's own tests re-execute their binary. That costs no
// extra build and keeps the fault-injection connectors out of the shipped
// examples.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"

	"github.com/stratahq/strata/plugins/host"
	"github.com/stratahq/strata/plugins/proto"
	"github.com/stratahq/strata/plugins/sdk"
)

// servePlugin serves the test connector named by typ and reports whether
// typ named one.
func servePlugin(typ string) bool {
	switch {
	case strings.HasPrefix(typ, "garbage"):
		serveRaw(garbage{typ: typ}, proto.ProtocolVersion)
	case strings.HasPrefix(typ, "v2"):
		serveRaw(garbage{typ: typ}, 2)
	case strings.HasPrefix(typ, "liar"):
		sdk.Serve(faulty{typ: "someone_else"})
	case strings.HasPrefix(typ, "faulty"):
		sdk.Serve(faulty{typ: typ})
	default:
		return false
	}
	return true
}

// serveRaw serves a protocol-level implementation, for faults the SDK
// cannot produce (bytes that are not Arrow, another protocol version).
func serveRaw(impl proto.ConnectorServer, version int) {
	plugin.Serve(&plugin.ServeConfig{
		HandshakeConfig:  proto.Handshake(),
		VersionedPlugins: map[int]plugin.PluginSet{version: proto.PluginSet(impl)},
		GRPCServer:       plugin.DefaultGRPCServer,
	})
}

// testSchema is the schema of the test connectors' table "t".
func testSchema() *arrow.Schema {
	return arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64}}, nil)
}

// faultyConfig selects the behaviour of the faulty connector.
type faultyConfig struct {
	// Mode: "" or "slow" streams 10-row batches every 20 ms until
	// cancelled; "flood" sends 200 large batches as fast as it can;
	// "hang" blocks in Read ignoring ctx; "slowcheck" blocks
	// in Check ignoring ctx; "wrongschema" sends a batch of another
	// schema; "panic" panics in Read; "exit" exits with status 3 after a
	// batch; "leak" fails Check and Discover with the password in the
	// message.
	Mode string `json:"mode"`
	// Marker is a file Read creates when it sees its ctx cancelled.
	Marker   string `json:"marker"`
	Password string `json:"password"`
}

// faulty is an SDK connector with injectable faults.
type faulty struct{ typ string }

func (f faulty) Spec(context.Context) (sdk.Spec, error) {
	return sdk.Spec{
		Type:        f.typ,
		DisplayName: "Test " + f.typ,
		ConfigSchema: json.RawMessage(`{"type":"object","properties":{
			"mode":{"type":"string"},"marker":{"type":"string"},
			"password":{"type":"string","x-secret":true}}}`),
	}, nil
}

func parse(raw json.RawMessage) faultyConfig {
	var c faultyConfig
	_ = json.Unmarshal(raw, &c)
	return c
}

func (f faulty) Check(ctx context.Context, raw json.RawMessage) error {
	c := parse(raw)
	switch c.Mode {
	case "slowcheck":
		time.Sleep(time.Hour)
	case "leak":
		return fmt.Errorf("password %q rejected", c.Password)
	}
	return nil
}

func (f faulty) Discover(ctx context.Context, raw json.RawMessage) ([]sdk.Table, error) {
	if c := parse(raw); c.Mode == "leak" {
		return nil, errors.New("cannot log in with " + c.Password)
	}
	return []sdk.Table{{Name: "t", Schema: testSchema(), PrimaryKey: []string{"id"}, EstimatedRows: -1}}, nil
}

func (f faulty) Read(ctx context.Context, raw json.RawMessage, table string, out sdk.RecordWriter) error {
	c := parse(raw)
	switch c.Mode {
	case "hang":
		select {} // a plugin stuck for good: it ignores cancellation too
	case "panic":
		panic("boom")
	case "flood":
		// 200 batches of 256 KiB as fast as Write lets it, counting them
		// in the marker file.
		b := array.NewRecordBuilder(memory.DefaultAllocator, testSchema())
		defer b.Release()
		for i := range 200 {
			for j := range int64(32768) {
				b.Field(0).(*array.Int64Builder).Append(j)
			}
			rec := b.NewRecordBatch()
			err := out.Write(rec)
			rec.Release()
			if err != nil {
				return err
			}
			if err := os.WriteFile(c.Marker, []byte(fmt.Sprint(i+1)), 0o600); err != nil {
				return err
			}
		}
		return nil
	case "wrongschema":
		s := arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.BinaryTypes.String}}, nil)
		b := array.NewRecordBuilder(memory.DefaultAllocator, s)
		defer b.Release()
		b.Field(0).(*array.StringBuilder).Append("x")
		rec := b.NewRecordBatch()
		defer rec.Release()
		return out.Write(rec)
	}
	defer func() {
		if ctx.Err() != nil && c.Marker != "" {
			_ = os.WriteFile(c.Marker, []byte("cancelled"), 0o600)
		}
	}()
	b := array.NewRecordBuilder(memory.DefaultAllocator, testSchema())
	defer b.Release()
	for n := int64(0); ; n += 10 {
		for i := range int64(10) {
			b.Field(0).(*array.Int64Builder).Append(n + i)
		}
		rec := b.NewRecordBatch()
		err := out.Write(rec)
		rec.Release()
		if err == nil {
			err = out.Progress(n+10, -1)
		}
		if c.Mode == "exit" {
			// As the runtime reports a fatal error: straight to fd 2.
			fmt.Fprintln(os.NewFile(2, "stderr"), "fatal error: giving up on purpose")
			os.Exit(3)
		}
		if err != nil {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// garbage speaks the protocol but sends bytes that are not Arrow.
type garbage struct {
	proto.UnimplementedConnectorServer
	typ string
}

func (g garbage) Spec(context.Context, *proto.SpecRequest) (*proto.SpecResponse, error) {
	return &proto.SpecResponse{Type: g.typ, ConfigSchemaJson: []byte(`{"type":"object"}`), ProtocolVersion: 1}, nil
}

func (g garbage) Discover(context.Context, *proto.DiscoverRequest) (*proto.DiscoverResponse, error) {
	s, err := proto.EncodeSchema(testSchema())
	if err != nil {
		return nil, err
	}
	return &proto.DiscoverResponse{Tables: []*proto.Table{{Name: "t", ArrowSchema: s}}}, nil
}

func (g garbage) Read(_ *proto.ReadRequest, stream grpc.ServerStreamingServer[proto.ReadMessage]) error {
	return stream.Send(&proto.ReadMessage{Payload: &proto.ReadMessage_RecordBatch{RecordBatch: []byte("this is not arrow")}})
}

// install links the test binary into dir as the plugin of each type.
func install(dir string, types ...string) error {
	self, err := os.Executable()
	if err != nil {
		return err
	}
	for _, typ := range types {
		if err := os.Symlink(self, filepath.Join(dir, host.FilePrefix+typ)); err != nil {
			return err
		}
	}
	return nil
}

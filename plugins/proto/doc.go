// Package proto is the wire protocol between the Strata host and connector
// plugins: the gRPC service generated from connector.proto, the go-plugin
// handshake and plugin sets, and the Arrow IPC framing of schemas and record
// batches.
//
// Connector authors do not import this package; they implement
// [github.com/stratahq/strata/plugins/sdk.Connector] and call sdk.Serve. The
// host side lives in [github.com/stratahq/strata/plugins/host]. Keeping the
// protocol here, apart from both, is what lets the protocol evolve by version
// while the author-facing interface stays small (the split hashicorp/go-plugin's
// examples/grpc/shared and turbot/steampipe-plugin-sdk's grpc/ make too).
//
// The generated code (connector.pb.go, connector_grpc.pb.go) is committed;
// regenerate it with `go generate ./plugins/proto` after editing
// connector.proto.
package proto

//go:generate go tool buf generate

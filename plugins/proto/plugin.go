package proto

import (
	"context"
	"fmt"

	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"
)

// The handshake. A host sets MagicCookieKey=MagicCookieValue in a plugin's
// environment; a plugin started without it refuses to run and says it is a
// plugin (go-plugin's standard message), so running one by hand explains
// itself instead of hanging.
const (
	// MagicCookieKey is the environment variable of the handshake.
	MagicCookieKey = "STRATA_CONNECTOR_PLUGIN"
	// MagicCookieValue is the value a host puts in MagicCookieKey. It is a
	// fixed random string: not a secret, only a guard against running
	// something that is not a Strata connector by mistake.
	MagicCookieValue = "5f0c2a9e7b3d41d8a6e1c4b27d9f8e30"
	// ProtocolVersion is the version of the protocol in this package. A host
	// and a plugin agree on it during the handshake; a plugin built for
	// another version fails to start with an error naming both versions.
	// Bump it (and add a strata.connector.v2 package) only for a change old
	// plugins or hosts cannot understand.
	ProtocolVersion = 1
	// PluginName is the name under which the connector service is
	// dispensed from a plugin's go-plugin plugin set.
	PluginName = "connector"
)

// Handshake returns the go-plugin handshake shared by hosts and plugins. It
// returns a fresh value so that nobody can change the handshake of others.
// The protocol version is negotiated through [VersionedPlugins]; the
// handshake's own ProtocolVersion is left zero as go-plugin requires then.
func Handshake() plugin.HandshakeConfig {
	return plugin.HandshakeConfig{
		MagicCookieKey:   MagicCookieKey,
		MagicCookieValue: MagicCookieValue,
	}
}

// VersionedPlugins returns the go-plugin plugin sets by protocol version.
// A plugin passes its server implementation; a host passes nil.
func VersionedPlugins(impl ConnectorServer) map[int]plugin.PluginSet {
	return map[int]plugin.PluginSet{ProtocolVersion: PluginSet(impl)}
}

// PluginSet returns the go-plugin plugin set holding the connector service
// backed by impl (nil on the host side).
func PluginSet(impl ConnectorServer) plugin.PluginSet {
	return plugin.PluginSet{PluginName: &grpcPlugin{impl: impl}}
}

// grpcPlugin adapts the generated service to go-plugin: GRPCServer registers
// the plugin's implementation, GRPCClient hands the host the generated
// client. The generated interfaces are the separate server-side and
// client-side views of the service (their Read signatures differ: the server
// sends on a stream, the client receives from one), and every client call
// takes the caller's context, so cancellation and deadlines reach the plugin.
type grpcPlugin struct {
	plugin.NetRPCUnsupportedPlugin
	impl ConnectorServer
}

// GRPCServer registers the connector service on the plugin's gRPC server.
func (p *grpcPlugin) GRPCServer(_ *plugin.GRPCBroker, s *grpc.Server) error {
	if p.impl == nil {
		return fmt.Errorf("connector plugin: no implementation to serve")
	}
	RegisterConnectorServer(s, p.impl)
	return nil
}

// GRPCClient returns the host's client of the connector service.
func (p *grpcPlugin) GRPCClient(_ context.Context, _ *plugin.GRPCBroker, c *grpc.ClientConn) (any, error) {
	return NewConnectorClient(c), nil
}

var _ plugin.GRPCPlugin = (*grpcPlugin)(nil)

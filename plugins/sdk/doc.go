// Package sdk is what a Strata connector author imports. A connector is a
// small program that reads one kind of data source and streams its tables to
// Strata as Apache Arrow record batches. The program implements [Connector]
// and its main function is a single call:
//
//	func main() { sdk.Serve(&myConnector{}) }
//
// Built as strata-connector-<type> and dropped into Strata's plugin
// directory, the program is launched by the Strata server for each check,
// discovery and sync, and speaks the protocol of
// [github.com/stratahq/strata/plugins/proto] with it over gRPC. Authors never
// see that protocol: Serve adapts the Connector to it. docs/writing-a-connector.md
// walks through a complete connector; plugins/examples/numbers is one.
package sdk

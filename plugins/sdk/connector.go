package sdk

import (
	"context"
	"encoding/json"

	"github.com/apache/arrow-go/v18/arrow"
)

// Connector is a data source connector. Strata calls its methods from
// separate gRPC requests, possibly at the same time, so an implementation
// must be safe for concurrent use; keeping no state between calls is the
// simplest way. Every method receives the configuration it needs: a
// connector is never "configured" once.
//
// The configuration is the JSON object a user entered, validated by Strata
// against Spec's ConfigSchema. It holds
// secrets (properties marked "x-secret"): never log it. Errors returned from
// these methods reach users; the SDK replaces the values of secret
// properties in their messages with "********", but it is better not to put
// configuration values in error messages at all.
//
// Every method must honour ctx: it is cancelled when Strata gives up on the
// call (a timeout, a cancelled sync, a server shutdown).
type Connector interface {
	// Spec describes the connector. It must not depend on configuration and
	// should be cheap: Strata calls it to list the installed types.
	Spec(ctx context.Context) (Spec, error)
	// Check validates config and, where possible, tries it (credentials,
	// reachability). A non-nil error means the configuration does not work;
	// its message is shown to the user as the reason.
	Check(ctx context.Context, config json.RawMessage) error
	// Discover lists the tables the configuration gives access to.
	Discover(ctx context.Context, config json.RawMessage) ([]Table, error)
	// Read streams every row of one discovered table to out, as record
	// batches whose schema equals the table's discovered schema. Batches of
	// some thousands to tens of thousands of rows (a few MiB) work best.
	// Returning nil means the whole table was sent.
	Read(ctx context.Context, config json.RawMessage, table string, out RecordWriter) error
}

// Spec describes a connector type.
type Spec struct {
	// Type identifies the connector type: lowercase letters, digits and
	// underscores, starting with a letter, e.g. "hosted_backend". It must
	// equal the <type> of the plugin's file name strata-connector-<type>.
	Type string
	// DisplayName is a human-readable name, e.g. "Hosted backend".
	DisplayName string
	// ConfigSchema is a JSON Schema (draft 2020-12) of the configuration,
	// an object schema. Mark properties that hold secrets with
	// "x-secret": true: Strata encrypts them at rest, shows them as
	// "********" and keeps them out of logs. Strata fills in top-level
	// "default" values when a connector is created; treat a missing optional
	// property as its default anyway.
	ConfigSchema json.RawMessage
}

// Table describes one table a connector can read.
type Table struct {
	// Name is unique within the connector, e.g. "orders" or "public.orders".
	Name string
	// Schema is the table's Arrow schema. Every batch Read sends for the
	// table must have exactly this schema.
	Schema *arrow.Schema
	// PrimaryKey names the primary key columns in order; nil when none.
	PrimaryKey []string
	// EstimatedRows is a hint of the table's size; -1 when unknown.
	EstimatedRows int64
}

// RecordWriter receives a table's rows during [Connector.Read]. It may be
// used from several goroutines. Write blocks while the host is not ready for
// more data (gRPC flow control), so a connector that produces rows faster
// than Strata stores them is slowed down instead of buffering without bound;
// both methods fail once the read is cancelled, and the connector should
// then return.
type RecordWriter interface {
	// Write sends one record batch. It does not take ownership of rec: the
	// caller still releases it, and may do so as soon as Write returns.
	Write(rec arrow.RecordBatch) error
	// Progress reports how many rows have been read so far and how many
	// the table has in all (-1 when unknown). Strata uses it to show sync
	// progress; sending it every batch or every few seconds is plenty.
	Progress(rowsRead, rowsTotal int64) error
}

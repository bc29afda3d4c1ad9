// Command strata-connector-example_numbers is a minimal Strata connector:
// it serves one table, "numbers", holding the integers 1..count with their
// squares and a label. It shows everything a connector does — a spec with a
// configuration schema, a check, discovery and a streamed read with
// progress — without any data source to set up.
//
// Build it into Strata's plugin directory:
//
//	go build -o bin/plugins/strata-connector-example_numbers ./plugins/examples/numbers
//
// docs/writing-a-connector.md walks through this file.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/stratahq/strata/plugins/sdk"
)

func main() { sdk.Serve(numbers{}) }

// configSchema is the JSON Schema of the configuration. A property holding
// a secret would carry "x-secret": true.
const configSchema = `{
  "type": "object",
  "additionalProperties": false,
  "properties": {
    "count": {
      "type": "integer", "minimum": 0, "maximum": 100000000, "default": 1000,
      "title": "Count", "description": "How many numbers the table holds."
    },
    "batch_size": {
      "type": "integer", "minimum": 1, "maximum": 1000000, "default": 256,
      "title": "Batch size", "description": "Rows per Arrow record batch."
    },
    "sync_interval_seconds": {
      "type": "integer", "minimum": 1, "default": 300,
      "description": "Interval of scheduled syncs in seconds (read by Strata)."
    },
    "destination_schema": {
      "type": "string",
      "description": "Store schema to land the table in (read by Strata; default main)."
    }
  }
}`

// config is the parsed configuration. The last two fields are Strata's:
// the connector only has to accept them.
type config struct {
	Count     int64 `json:"count"`
	BatchSize int64 `json:"batch_size"`

	SyncIntervalSeconds int64  `json:"sync_interval_seconds"`
	DestinationSchema   string `json:"destination_schema"`
}

// parseConfig reads the configuration, filling in defaults.
func parseConfig(raw json.RawMessage) (config, error) {
	c := config{Count: 1000, BatchSize: 256}
	if len(bytes.TrimSpace(raw)) > 0 {
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&c); err != nil {
			return config{}, fmt.Errorf("invalid configuration: %w", err)
		}
	}
	switch {
	case c.Count < 0 || c.Count > 100_000_000:
		return config{}, errors.New("count must be between 0 and 100000000")
	case c.BatchSize < 1 || c.BatchSize > 1_000_000:
		return config{}, errors.New("batch_size must be between 1 and 1000000")
	}
	return c, nil
}

// tableSchema returns the Arrow schema of the "numbers" table.
func tableSchema() *arrow.Schema {
	return arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "square", Type: arrow.PrimitiveTypes.Int64},
		{Name: "label", Type: arrow.BinaryTypes.String},
	}, nil)
}

// numbers implements sdk.Connector. It keeps no state, so it is safe for
// concurrent calls.
type numbers struct{}

// Spec implements sdk.Connector.
func (numbers) Spec(context.Context) (sdk.Spec, error) {
	return sdk.Spec{
		Type:         "example_numbers",
		DisplayName:  "Example: numbers",
		ConfigSchema: json.RawMessage(configSchema),
	}, nil
}

// Check implements sdk.Connector: there is nothing to connect to, so a valid
// configuration is a working one.
func (numbers) Check(_ context.Context, raw json.RawMessage) error {
	_, err := parseConfig(raw)
	return err
}

// Discover implements sdk.Connector.
func (numbers) Discover(_ context.Context, raw json.RawMessage) ([]sdk.Table, error) {
	c, err := parseConfig(raw)
	if err != nil {
		return nil, err
	}
	return []sdk.Table{{
		Name:          "numbers",
		Schema:        tableSchema(),
		PrimaryKey:    []string{"id"},
		EstimatedRows: c.Count,
	}}, nil
}

// Read implements sdk.Connector: it builds batches of BatchSize rows and
// reports progress after each.
func (numbers) Read(ctx context.Context, raw json.RawMessage, table string, out sdk.RecordWriter) error {
	c, err := parseConfig(raw)
	if err != nil {
		return err
	}
	if table != "numbers" {
		return fmt.Errorf("unknown table %q", table)
	}
	b := array.NewRecordBuilder(memory.DefaultAllocator, tableSchema())
	defer b.Release()
	ids := b.Field(0).(*array.Int64Builder)
	squares := b.Field(1).(*array.Int64Builder)
	labels := b.Field(2).(*array.StringBuilder)
	for start := int64(1); start <= c.Count; start += c.BatchSize {
		if err := ctx.Err(); err != nil {
			return err // Strata cancelled the read
		}
		end := min(start+c.BatchSize-1, c.Count)
		for i := start; i <= end; i++ {
			ids.Append(i)
			squares.Append(i * i)
			labels.Append(fmt.Sprintf("number %d", i))
		}
		rec := b.NewRecordBatch()
		err := out.Write(rec) // blocks while Strata is busy storing earlier batches
		rec.Release()
		if err != nil {
			return err
		}
		if err := out.Progress(end, c.Count); err != nil {
			return err
		}
	}
	return nil
}

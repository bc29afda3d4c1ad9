// Command strata-connector-hosted_backend is the hosted_backend connector
// plugin: it pulls every table a hosted backend exposes through its
// PostgREST-style REST API (package hostedbackend) and streams them to
// Strata as Arrow record batches.
package main

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/stratahq/strata/plugins/hostedbackend"
	"github.com/stratahq/strata/plugins/sdk"
)

func main() { sdk.Serve(connector{}) }

// connector adapts package hostedbackend to the plugin SDK.
type connector struct{}

func (connector) Spec(context.Context) (sdk.Spec, error) {
	return sdk.Spec{Type: "hosted_backend", DisplayName: "Hosted backend", ConfigSchema: hostedbackend.ConfigSchema()}, nil
}

func source(raw json.RawMessage) (*hostedbackend.Source, error) {
	cfg, err := hostedbackend.ParseConfig(raw)
	if err != nil {
		return nil, err
	}
	return hostedbackend.NewSource(cfg, hostedbackend.Options{})
}

func (connector) Check(ctx context.Context, config json.RawMessage) error {
	s, err := source(config)
	if err != nil {
		return err
	}
	return s.Check(ctx)
}

func (connector) Discover(ctx context.Context, config json.RawMessage) ([]sdk.Table, error) {
	s, err := source(config)
	if err != nil {
		return nil, err
	}
	tables, err := s.Discover(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]sdk.Table, len(tables))
	for i, t := range tables {
		out[i] = sdk.Table{Name: t.Name, Schema: t.Schema, PrimaryKey: t.PrimaryKey, EstimatedRows: t.EstimatedRows}
	}
	return out, nil
}

func (connector) Read(ctx context.Context, config json.RawMessage, table string, out sdk.RecordWriter) error {
	s, err := source(config)
	if err != nil {
		return err
	}
	t, err := s.DiscoverTable(ctx, table) // one table's metadata, not every table's
	if err != nil {
		return fmt.Errorf("table %q: %w", table, err)
	}
	return s.Read(ctx, t, out.Write, func(read, total int64) { _ = out.Progress(read, total) })
}

package server

import (
	"context"
	"encoding/json"
	"log/slog"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/stratahq/strata/impl/connectors"
	datasync "github.com/stratahq/strata/impl/sync"
	"github.com/stratahq/strata/plugins/host"
)

// pluginRuntime adapts the plugin host to what the connector service
// (the type catalog) and the sync runner (the launcher) need.
type pluginRuntime struct{ host *host.Host }

func newPluginRuntime(dir string, logger *slog.Logger) *pluginRuntime {
	return &pluginRuntime{host: host.New(dir, logger, host.Options{})}
}

// Types implements connectors.Catalog: the installed plugins.
func (p *pluginRuntime) Types(ctx context.Context) ([]connectors.TypeInfo, error) {
	types, err := p.host.Types(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]connectors.TypeInfo, len(types))
	for i, t := range types {
		out[i] = connectors.TypeInfo{Type: t.Type, DisplayName: t.DisplayName, ConfigSchema: t.ConfigSchema}
	}
	return out, nil
}

// Launch implements sync.Launcher.
func (p *pluginRuntime) Launch(ctx context.Context, typ string) (datasync.Plugin, error) {
	c, err := p.host.Launch(ctx, typ)
	if err != nil {
		return nil, err
	}
	return pluginClient{c}, nil
}

// Shutdown kills every plugin process still running.
func (p *pluginRuntime) Shutdown() { p.host.Shutdown() }

type pluginClient struct{ c *host.Client }

func (p pluginClient) Discover(ctx context.Context, config json.RawMessage) ([]datasync.DiscoveredTable, error) {
	tables, err := p.c.Discover(ctx, config)
	if err != nil {
		return nil, err
	}
	out := make([]datasync.DiscoveredTable, len(tables))
	for i, t := range tables {
		out[i] = datasync.DiscoveredTable{Name: t.Name, Schema: t.Schema, PrimaryKey: t.PrimaryKey}
	}
	return out, nil
}

func (p pluginClient) Read(ctx context.Context, config json.RawMessage, table string, schema *arrow.Schema,
	onBatch func(arrow.RecordBatch) error, onProgress func(rowsRead, rowsTotal int64)) error {
	return p.c.Read(ctx, config, table, schema, onBatch, onProgress)
}

func (p pluginClient) Close() { p.c.Close() }

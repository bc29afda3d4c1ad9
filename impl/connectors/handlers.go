package connectors

import (
	"context"
	"encoding/json"

	"github.com/stratahq/strata/gen/api"
	"github.com/stratahq/strata/impl/principal"
	"github.com/stratahq/strata/impl/store"
)

// Handlers implements the connector operations of the strict server.
type Handlers struct{ svc *Service }

// NewHandlers returns the handlers over svc.
func NewHandlers(svc *Service) *Handlers { return &Handlers{svc: svc} }

// Body renders a connector with its secrets masked.
func Body(c store.Connector) (api.ConnectorConfig, error) {
	config, err := MaskedConfig(c)
	if err != nil {
		return api.ConnectorConfig{}, err
	}
	return api.ConnectorConfig{ID: c.ID, Name: c.Name, Type: c.Type, Enabled: c.Enabled, Config: config,
		CreatedAt: c.CreatedAt, UpdatedAt: c.UpdatedAt}, nil
}

// ListConnectorTypes implements GET /api/data-platform/connector-types.
func (h *Handlers) ListConnectorTypes(ctx context.Context, _ api.ListConnectorTypesRequestObject) (api.ListConnectorTypesResponseObject, error) {
	types, err := h.svc.Types(ctx)
	if err != nil {
		return nil, err
	}
	out := api.ListConnectorTypes200JSONResponse{Data: make([]api.ConnectorType, len(types))}
	for i, t := range types {
		var schema map[string]any
		if err := json.Unmarshal(t.ConfigSchema, &schema); err != nil {
			return nil, err
		}
		ct := api.ConnectorType{Type: t.Type, Name: t.Name, Available: t.Available, ConfigSchema: schema}
		if t.Description != "" {
			desc := t.Description
			ct.Description = &desc
		}
		out.Data[i] = ct
	}
	return out, nil
}

// ListConnectors implements GET /api/data-platform/connectors.
func (h *Handlers) ListConnectors(ctx context.Context, _ api.ListConnectorsRequestObject) (api.ListConnectorsResponseObject, error) {
	p, err := principal.Required(ctx)
	if err != nil {
		return nil, err
	}
	list, err := h.svc.List(ctx, p.TenantID)
	if err != nil {
		return nil, err
	}
	out := make(api.ListConnectors200JSONResponse, len(list))
	for i, c := range list {
		if out[i], err = Body(c); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// CreateConnector implements POST /api/data-platform/connectors.
func (h *Handlers) CreateConnector(ctx context.Context, req api.CreateConnectorRequestObject) (api.CreateConnectorResponseObject, error) {
	p, err := principal.Required(ctx)
	if err != nil {
		return nil, err
	}
	c, err := h.svc.Create(ctx, p.TenantID, CreateInput{Name: req.Body.Name, Type: req.Body.Type, Config: req.Body.Config, Enabled: req.Body.Enabled})
	if err != nil {
		return nil, err
	}
	b, err := Body(c)
	return api.CreateConnector201JSONResponse(b), err
}

// UpdateConnector implements PATCH /api/data-platform/connectors/{connectorId}.
func (h *Handlers) UpdateConnector(ctx context.Context, req api.UpdateConnectorRequestObject) (api.UpdateConnectorResponseObject, error) {
	p, err := principal.Required(ctx)
	if err != nil {
		return nil, err
	}
	id, err := ParseID(req.ConnectorID)
	if err != nil {
		return nil, err
	}
	var body api.ConnectorUpdate
	switch {
	case req.JSONBody != nil:
		body = api.ConnectorUpdate(*req.JSONBody)
	case req.ApplicationMergePatchPlusJSONBody != nil:
		body = api.ConnectorUpdate(*req.ApplicationMergePatchPlusJSONBody)
	}
	c, err := h.svc.Update(ctx, p.TenantID, id, UpdateInput{Name: body.Name, Enabled: body.Enabled, Config: body.Config})
	if err != nil {
		return nil, err
	}
	b, err := Body(c)
	return api.UpdateConnector200JSONResponse(b), err
}

// DeleteConnector implements DELETE /api/data-platform/connectors/{connectorId}.
func (h *Handlers) DeleteConnector(ctx context.Context, req api.DeleteConnectorRequestObject) (api.DeleteConnectorResponseObject, error) {
	p, err := principal.Required(ctx)
	if err != nil {
		return nil, err
	}
	id, err := ParseID(req.ConnectorID)
	if err != nil {
		return nil, err
	}
	if err := h.svc.Delete(ctx, p.TenantID, id); err != nil {
		return nil, err
	}
	return api.DeleteConnector204Response{}, nil
}

package server

import (
	"context"

	"github.com/stratahq/strata/gen/api"
	"github.com/stratahq/strata/impl/apierrors"
)

// unimplemented answers 501 not_implemented for every operation whose
// implementation has not landed yet. When an area implements an operation,
// delete its method here: the embedding in handlers then picks the real one
// (two methods of the same name would not compile, so none is shadowed).
type unimplemented struct{}

func (unimplemented) ListConnectorTypes(context.Context, api.ListConnectorTypesRequestObject) (api.ListConnectorTypesResponseObject, error) {
	return nil, apierrors.NotImplemented("listConnectorTypes")
}

func (unimplemented) ListConnectors(context.Context, api.ListConnectorsRequestObject) (api.ListConnectorsResponseObject, error) {
	return nil, apierrors.NotImplemented("listConnectors")
}

func (unimplemented) CreateConnector(context.Context, api.CreateConnectorRequestObject) (api.CreateConnectorResponseObject, error) {
	return nil, apierrors.NotImplemented("createConnector")
}

func (unimplemented) DeleteConnector(context.Context, api.DeleteConnectorRequestObject) (api.DeleteConnectorResponseObject, error) {
	return nil, apierrors.NotImplemented("deleteConnector")
}

func (unimplemented) UpdateConnector(context.Context, api.UpdateConnectorRequestObject) (api.UpdateConnectorResponseObject, error) {
	return nil, apierrors.NotImplemented("updateConnector")
}

func (unimplemented) StartSync(context.Context, api.StartSyncRequestObject) (api.StartSyncResponseObject, error) {
	return nil, apierrors.NotImplemented("startSync")
}

func (unimplemented) GetSyncJob(context.Context, api.GetSyncJobRequestObject) (api.GetSyncJobResponseObject, error) {
	return nil, apierrors.NotImplemented("getSyncJob")
}

package server

import (
	"context"
	"time"

	"github.com/stratahq/strata/gen/api"
	"github.com/stratahq/strata/impl/apierrors"
	"github.com/stratahq/strata/impl/auth"
	"github.com/stratahq/strata/impl/connectors"
	"github.com/stratahq/strata/impl/content"
	"github.com/stratahq/strata/impl/pipeline"
	"github.com/stratahq/strata/impl/query"
	"github.com/stratahq/strata/impl/store"
	datasync "github.com/stratahq/strata/impl/sync"
)

// handlers implements the generated strict server interface by embedding
// one handler group per area.
type handlers struct {
	opsHandlers
	*authHandlers
	*contentHandlers
	*pipelineHandlers
	*queryHandlers
	*connectorHandlers
	*syncHandlers
}

// Aliases give the embedded handler groups distinct field names.
type (
	authHandlers      = auth.Handlers
	contentHandlers   = content.Handlers
	pipelineHandlers  = pipeline.Handlers
	queryHandlers     = query.Handlers
	connectorHandlers = connectors.Handlers
	syncHandlers      = datasync.Handlers
)

// Compile-time proof that every operation of the contract has a method.
var _ api.StrictServerInterface = (*handlers)(nil)

func newHandlers(st store.Store, authSvc *auth.Service, contentSvc *content.Service, ai *pipeline.Handlers, q *query.Handlers,
	c *connectors.Handlers, s *datasync.Handlers) *handlers {
	return &handlers{opsHandlers: opsHandlers{store: st}, authHandlers: auth.NewHandlers(authSvc),
		contentHandlers: content.NewHandlers(contentSvc), pipelineHandlers: ai, queryHandlers: q,
		connectorHandlers: c, syncHandlers: s}
}

// readyTimeout bounds the readiness probe's store check, so that a wedged
// store makes /readyz fail fast instead of hanging the prober.
const readyTimeout = 2 * time.Second

// opsHandlers answers the operational endpoints.
type opsHandlers struct {
	store store.Store
}

// GetHealth reports that the process is alive; it checks nothing else.
func (opsHandlers) GetHealth(context.Context, api.GetHealthRequestObject) (api.GetHealthResponseObject, error) {
	return api.GetHealth200JSONResponse{Status: api.HealthStatusOk}, nil
}

// GetReady reports whether the stores answer.
func (h opsHandlers) GetReady(ctx context.Context, _ api.GetReadyRequestObject) (api.GetReadyResponseObject, error) {
	ctx, cancel := context.WithTimeout(ctx, readyTimeout)
	defer cancel()
	if err := h.store.Ping(ctx); err != nil {
		return nil, apierrors.ServiceUnavailable("control-plane store is not reachable").WithInternalError(err)
	}
	return api.GetReady200JSONResponse{Status: api.ReadyStatusOk, Checks: api.ReadyChecks{Store: api.ReadyChecksStoreOk}}, nil
}

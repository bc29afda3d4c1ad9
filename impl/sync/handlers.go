package sync

import (
	"context"
	"encoding/json"

	"github.com/stratahq/strata/gen/api"
	"github.com/stratahq/strata/impl/principal"
	"github.com/stratahq/strata/impl/store"
)

// Handlers implements the sync operations of the strict server.
type Handlers struct{ runner *Runner }

// NewHandlers returns the handlers over runner.
func NewHandlers(runner *Runner) *Handlers { return &Handlers{runner: runner} }

// StartSync implements POST /api/data-platform/sync: 202 with the new job,
// or the tenant's job already pending or running.
func (h *Handlers) StartSync(ctx context.Context, _ api.StartSyncRequestObject) (api.StartSyncResponseObject, error) {
	p, err := principal.Required(ctx)
	if err != nil {
		return nil, err
	}
	job, err := h.runner.Trigger(ctx, p.TenantID)
	if err != nil {
		return nil, err
	}
	return api.StartSync202JSONResponse{JobID: job.ID, Status: api.SyncStatus(job.Status), StartedAt: job.StartedAt}, nil
}

// GetSyncJob implements GET /api/data-platform/sync/{jobId}.
func (h *Handlers) GetSyncJob(ctx context.Context, req api.GetSyncJobRequestObject) (api.GetSyncJobResponseObject, error) {
	p, err := principal.Required(ctx)
	if err != nil {
		return nil, err
	}
	job, err := h.runner.Job(ctx, p.TenantID, req.JobID)
	if err != nil {
		return nil, err
	}
	return api.GetSyncJob200JSONResponse(JobBody(job)), nil
}

// JobBody renders a job for the status endpoint.
func JobBody(j store.SyncJob) api.SyncJob {
	out := api.SyncJob{JobID: j.ID, Status: api.SyncStatus(j.Status), Progress: j.Progress, StartedAt: j.StartedAt,
		CompletedAt: j.CompletedAt, Error: j.Error}
	var results []api.SyncConnectorResult
	if json.Unmarshal(j.Results, &results) == nil {
		if results == nil {
			results = []api.SyncConnectorResult{}
		}
		out.Connectors = &results
	}
	return out
}

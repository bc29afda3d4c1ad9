package sdk

import (
	"context"
	"encoding/json"
	"time"
)

// Polling intervals of WaitSync: the first poll follows quickly, then the
// interval grows while nothing changes and drops back when something does.
const (
	syncPollMin = 200 * time.Millisecond
	syncPollMax = 5 * time.Second
)

// Sync starts a full sync of the tenant's enabled connectors (POST
// /api/data-platform/sync) and returns at once. If a sync is already
// pending or running, that job is returned instead of a new one. It is
// never retried automatically. Follow it with WaitSync.
func (s *Client) Sync(ctx context.Context) (SyncJobStarted, error) {
	rsp, err := s.api.StartSyncWithResponse(ctx, &StartSyncParams{})
	if err != nil {
		return SyncJobStarted{}, err
	}
	return result(rsp.JSON202, rsp.HTTPResponse, rsp.Body)
}

// SyncJob returns the state of a sync job. An unknown id (or another
// tenant's) is ErrNotFound (job_not_found).
func (s *Client) SyncJob(ctx context.Context, jobID string) (SyncJob, error) {
	rsp, err := s.api.GetSyncJobWithResponse(ctx, jobID, &GetSyncJobParams{})
	if err != nil {
		return SyncJob{}, err
	}
	return result(rsp.JSON200, rsp.HTTPResponse, rsp.Body)
}

// WaitSync polls a sync job until it is completed or failed and returns its
// final state. onProgress (may be nil) is called with the first state seen
// and then whenever the status, progress or a connector's result changes,
// including the final state. A failed job returns a *SyncError (errors.Is
// ErrSyncFailed) holding the job's error, alongside the job. Polls back off
// from 200 ms to 5 s while nothing changes; ctx ends the wait.
func (s *Client) WaitSync(ctx context.Context, jobID string, onProgress func(SyncJob)) (SyncJob, error) {
	var last []byte
	wait := syncPollMin
	for {
		job, err := s.SyncJob(ctx, jobID)
		if err != nil {
			return job, err
		}
		state, _ := json.Marshal(job)
		if string(state) != string(last) {
			last = state
			wait = syncPollMin
			if onProgress != nil {
				onProgress(job)
			}
		} else {
			wait = min(wait*3/2, syncPollMax)
		}
		switch job.Status {
		case SyncStatusCompleted:
			return job, nil
		case SyncStatusFailed:
			msg := "unknown error"
			if job.Error != nil {
				msg = *job.Error
			}
			return job, &SyncError{JobID: job.JobID, Message: msg}
		}
		if err := s.sleep(ctx, wait); err != nil {
			return job, err
		}
	}
}

// Connectors lists the tenant's connectors, oldest first. Secrets show as
// "********".
func (s *Client) Connectors(ctx context.Context) ([]ConnectorConfig, error) {
	rsp, err := s.api.ListConnectorsWithResponse(ctx, &ListConnectorsParams{})
	if err != nil {
		return nil, err
	}
	return result(rsp.JSON200, rsp.HTTPResponse, rsp.Body)
}

// CreateConnector creates a connector. Its config is checked against the
// type's JSON Schema (ConnectorTypes): a bad config or unknown type is
// ErrValidation, a type without an installed plugin is an *APIError with
// Code connector_type_unavailable (422).
func (s *Client) CreateConnector(ctx context.Context, c ConnectorCreate) (ConnectorConfig, error) {
	rsp, err := s.api.CreateConnectorWithResponse(ctx, &CreateConnectorParams{}, c)
	if err != nil {
		return ConnectorConfig{}, err
	}
	return result(rsp.JSON201, rsp.HTTPResponse, rsp.Body)
}

// UpdateConnector changes a connector's name, enabled flag and/or config;
// the config is merged into the stored one as a JSON merge patch (RFC
// 7386: null removes a key, "********" keeps a stored secret). An unknown
// id is ErrNotFound.
func (s *Client) UpdateConnector(ctx context.Context, id string, u ConnectorUpdate) (ConnectorConfig, error) {
	rsp, err := s.api.UpdateConnectorWithResponse(ctx, id, &UpdateConnectorParams{}, u)
	if err != nil {
		return ConnectorConfig{}, err
	}
	return result(rsp.JSON200, rsp.HTTPResponse, rsp.Body)
}

// DeleteConnector deletes a connector. An unknown id is ErrNotFound.
func (s *Client) DeleteConnector(ctx context.Context, id string) error {
	rsp, err := s.api.DeleteConnectorWithResponse(ctx, id, &DeleteConnectorParams{})
	if err != nil {
		return err
	}
	return noContent(rsp.HTTPResponse, rsp.Body)
}

// ConnectorTypes lists the connector types with their availability (a
// plugin is installed) and config JSON Schema.
func (s *Client) ConnectorTypes(ctx context.Context) ([]ConnectorType, error) {
	rsp, err := s.api.ListConnectorTypesWithResponse(ctx, &ListConnectorTypesParams{})
	if err != nil {
		return nil, err
	}
	res, err := result(rsp.JSON200, rsp.HTTPResponse, rsp.Body)
	return res.Data, err
}

package store

import (
	"context"
	"encoding/json"
	"time"

	"github.com/google/uuid"
)

// Connector is a tenant's data-source connector. Config holds the
// configuration with secret fields sealed.
type Connector struct {
	ID           uuid.UUID
	TenantID     uuid.UUID
	Name         string
	Type         string
	Enabled      bool
	Config       json.RawMessage
	CreatedAt    time.Time
	UpdatedAt    time.Time
	LastSyncedAt *time.Time
}

// SyncJob is a sync of a tenant's connectors (all enabled ones, or one).
type SyncJob struct {
	ID          string
	TenantID    uuid.UUID
	ConnectorID *uuid.UUID
	Status      string
	Progress    float64
	StartedAt   time.Time
	CompletedAt *time.Time
	Error       *string
	Results     json.RawMessage
}

// ConnectorStore persists connectors, table ownership and sync jobs.
type ConnectorStore interface {
	CreateConnector(ctx context.Context, c Connector) error
	GetConnector(ctx context.Context, tenantID, id uuid.UUID) (Connector, error)
	ListConnectors(ctx context.Context, tenantID uuid.UUID) ([]Connector, error)
	// UpdateConnector applies mutate in a transaction; mutate returns
	// whether anything changed (only then is the row written).
	UpdateConnector(ctx context.Context, tenantID, id uuid.UUID, mutate func(*Connector) (bool, error)) (Connector, error)
	// DeleteConnector deletes the connector and its table ownership (the
	// tables themselves stay in the tenant store).
	DeleteConnector(ctx context.Context, tenantID, id uuid.UUID) error
	// DueConnectors returns enabled connectors whose last sync is older than
	// their interval (interval reads the connector's sync_interval_seconds).
	ConnectorsDue(ctx context.Context, now time.Time, interval func(Connector) time.Duration) ([]Connector, error)
	MarkSynced(ctx context.Context, id uuid.UUID, at time.Time) error

	// ClaimTable records that connector owns table in the tenant's store;
	// ErrConflict when another connector owns it.
	ClaimTable(ctx context.Context, tenantID uuid.UUID, table string, connectorID uuid.UUID) error

	// CreateSyncJob inserts a pending job unless the tenant already has a
	// pending or running one (of the same connector scope), which it returns
	// instead with created false.
	CreateSyncJob(ctx context.Context, j SyncJob) (job SyncJob, created bool, err error)
	GetSyncJob(ctx context.Context, tenantID uuid.UUID, id string) (SyncJob, error)
	// NextPendingJob marks the oldest pending job running and returns it;
	// ErrNotFound when none is pending.
	NextPendingJob(ctx context.Context) (SyncJob, error)
	// UpdateSyncJob writes status, progress, results, error and completion.
	UpdateSyncJob(ctx context.Context, j SyncJob) error
	// FailRunningJobs marks every running job failed with reason (after a
	// restart: they were interrupted).
	FailRunningJobs(ctx context.Context, reason string, now time.Time) (int, error)
}

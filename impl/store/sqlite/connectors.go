package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/stratahq/strata/impl/store"
)

const connectorColumns = `id, tenant_id, name, type, enabled, config, created_at, updated_at, last_synced_at`

func scanConnector(row rowScanner) (store.Connector, error) {
	var c store.Connector
	var config string
	err := row.Scan(&c.ID, &c.TenantID, &c.Name, &c.Type, &c.Enabled, &config, timeCol{&c.CreatedAt}, timeCol{&c.UpdatedAt},
		nullTimeCol{&c.LastSyncedAt})
	if errors.Is(err, sql.ErrNoRows) {
		return c, store.ErrNotFound
	}
	if err != nil {
		return c, fmt.Errorf("scan connector: %w", err)
	}
	c.Config = json.RawMessage(config)
	return c, nil
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// CreateConnector implements store.ConnectorStore.
func (s *Store) CreateConnector(ctx context.Context, c store.Connector) error {
	_, err := s.db.ExecContext(ctx, `INSERT INTO connectors (`+connectorColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		c.ID.String(), c.TenantID.String(), c.Name, c.Type, boolInt(c.Enabled), string(c.Config),
		fmtTime(c.CreatedAt), fmtTime(c.UpdatedAt), fmtTimePtr(c.LastSyncedAt))
	if err != nil {
		return fmt.Errorf("insert connector: %w", err)
	}
	return nil
}

func getConnector(ctx context.Context, q queryer, tenantID, id uuid.UUID) (store.Connector, error) {
	return scanConnector(q.QueryRowContext(ctx, `SELECT `+connectorColumns+` FROM connectors WHERE id = ? AND tenant_id = ?`,
		id.String(), tenantID.String()))
}

// GetConnector implements store.ConnectorStore.
func (s *Store) GetConnector(ctx context.Context, tenantID, id uuid.UUID) (store.Connector, error) {
	return getConnector(ctx, s.db, tenantID, id)
}

// ListConnectors implements store.ConnectorStore: oldest first.
func (s *Store) ListConnectors(ctx context.Context, tenantID uuid.UUID) ([]store.Connector, error) {
	return collect(ctx, s.db, "list connectors", scanConnector,
		`SELECT `+connectorColumns+` FROM connectors WHERE tenant_id = ? ORDER BY created_at, id`, tenantID.String())
}

// UpdateConnector implements store.ConnectorStore.
func (s *Store) UpdateConnector(ctx context.Context, tenantID, id uuid.UUID, mutate func(*store.Connector) (bool, error)) (store.Connector, error) {
	var c store.Connector
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		var err error
		if c, err = getConnector(ctx, tx, tenantID, id); err != nil {
			return err
		}
		changed, err := mutate(&c)
		if err != nil || !changed {
			return err
		}
		_, err = tx.ExecContext(ctx, `UPDATE connectors SET name = ?, enabled = ?, config = ?, updated_at = ? WHERE id = ?`,
			c.Name, boolInt(c.Enabled), string(c.Config), fmtTime(c.UpdatedAt), id.String())
		if err != nil {
			return fmt.Errorf("update connector: %w", err)
		}
		return nil
	})
	return c, err
}

// DeleteConnector implements store.ConnectorStore.
func (s *Store) DeleteConnector(ctx context.Context, tenantID, id uuid.UUID) error {
	res, err := s.db.ExecContext(ctx, `DELETE FROM connectors WHERE id = ? AND tenant_id = ?`, id.String(), tenantID.String())
	if err != nil {
		return fmt.Errorf("delete connector: %w", err)
	}
	if n, err := res.RowsAffected(); err != nil || n == 0 {
		return store.ErrNotFound
	}
	return nil
}

// ConnectorsDue implements store.ConnectorStore.
func (s *Store) ConnectorsDue(ctx context.Context, now time.Time, interval func(store.Connector) time.Duration) ([]store.Connector, error) {
	enabled, err := collect(ctx, s.db, "due connectors", scanConnector,
		`SELECT `+connectorColumns+` FROM connectors WHERE enabled = 1 ORDER BY created_at`)
	if err != nil {
		return nil, err
	}
	var due []store.Connector
	for _, c := range enabled {
		last := c.CreatedAt
		if c.LastSyncedAt != nil {
			last = *c.LastSyncedAt
		}
		if !now.Before(last.Add(interval(c))) {
			due = append(due, c)
		}
	}
	return due, nil
}

// MarkSynced implements store.ConnectorStore.
func (s *Store) MarkSynced(ctx context.Context, id uuid.UUID, at time.Time) error {
	_, err := s.db.ExecContext(ctx, `UPDATE connectors SET last_synced_at = ? WHERE id = ?`, fmtTime(at), id.String())
	if err != nil {
		return fmt.Errorf("mark synced: %w", err)
	}
	return nil
}

// ClaimTable implements store.ConnectorStore.
func (s *Store) ClaimTable(ctx context.Context, tenantID uuid.UUID, table string, connectorID uuid.UUID) error {
	return s.inTx(ctx, func(tx *sql.Tx) error {
		var owner string
		err := tx.QueryRowContext(ctx, `SELECT connector_id FROM connector_tables WHERE tenant_id = ? AND table_name = ?`,
			tenantID.String(), table).Scan(&owner)
		switch {
		case errors.Is(err, sql.ErrNoRows):
			_, err = tx.ExecContext(ctx, `INSERT INTO connector_tables (tenant_id, table_name, connector_id) VALUES (?, ?, ?)`,
				tenantID.String(), table, connectorID.String())
			return err
		case err != nil:
			return fmt.Errorf("table owner: %w", err)
		case owner != connectorID.String():
			return store.ErrConflict
		}
		return nil
	})
}

// ─── sync jobs ───

const syncJobColumns = `id, tenant_id, connector_id, status, progress, started_at, completed_at, error, results`

func scanSyncJob(row rowScanner) (store.SyncJob, error) {
	var j store.SyncJob
	var results string
	var errText sql.NullString
	err := row.Scan(&j.ID, &j.TenantID, nullUUIDCol{&j.ConnectorID}, &j.Status, &j.Progress, timeCol{&j.StartedAt},
		nullTimeCol{&j.CompletedAt}, &errText, &results)
	if errors.Is(err, sql.ErrNoRows) {
		return j, store.ErrNotFound
	}
	if err != nil {
		return j, fmt.Errorf("scan sync job: %w", err)
	}
	if errText.Valid {
		j.Error = &errText.String
	}
	j.Results = json.RawMessage(results)
	return j, nil
}

// CreateSyncJob implements store.ConnectorStore.
func (s *Store) CreateSyncJob(ctx context.Context, j store.SyncJob) (store.SyncJob, bool, error) {
	var out store.SyncJob
	created := false
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		q := `SELECT ` + syncJobColumns + ` FROM sync_jobs WHERE tenant_id = ? AND status IN ('pending', 'running')`
		args := []any{j.TenantID.String()}
		if j.ConnectorID != nil {
			q += ` AND (connector_id = ? OR connector_id IS NULL)`
			args = append(args, j.ConnectorID.String())
		} else {
			q += ` AND connector_id IS NULL`
		}
		existing, err := scanSyncJob(tx.QueryRowContext(ctx, q+` ORDER BY started_at LIMIT 1`, args...))
		if err == nil {
			out = existing
			return nil
		}
		if !errors.Is(err, store.ErrNotFound) {
			return err
		}
		results := j.Results
		if len(results) == 0 {
			results = json.RawMessage("[]")
		}
		_, err = tx.ExecContext(ctx, `INSERT INTO sync_jobs (id, tenant_id, connector_id, status, progress, started_at, results)
			VALUES (?, ?, ?, 'pending', 0, ?, ?)`, j.ID, j.TenantID.String(), nullUUID(j.ConnectorID), fmtTime(j.StartedAt), string(results))
		if err != nil {
			return fmt.Errorf("insert sync job: %w", err)
		}
		out, created = j, true
		out.Status, out.Results = "pending", results
		return nil
	})
	return out, created, err
}

// GetSyncJob implements store.ConnectorStore.
func (s *Store) GetSyncJob(ctx context.Context, tenantID uuid.UUID, id string) (store.SyncJob, error) {
	return scanSyncJob(s.db.QueryRowContext(ctx, `SELECT `+syncJobColumns+` FROM sync_jobs WHERE id = ? AND tenant_id = ?`,
		strings.ToLower(id), tenantID.String()))
}

// NextPendingJob implements store.ConnectorStore.
func (s *Store) NextPendingJob(ctx context.Context) (store.SyncJob, error) {
	var j store.SyncJob
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		var err error
		j, err = scanSyncJob(tx.QueryRowContext(ctx, `SELECT `+syncJobColumns+` FROM sync_jobs WHERE status = 'pending'
			AND tenant_id NOT IN (SELECT tenant_id FROM sync_jobs WHERE status = 'running') ORDER BY started_at LIMIT 1`))
		if err != nil {
			return err
		}
		j.Status = "running"
		_, err = tx.ExecContext(ctx, `UPDATE sync_jobs SET status = 'running' WHERE id = ?`, j.ID)
		return err
	})
	return j, err
}

// UpdateSyncJob implements store.ConnectorStore.
func (s *Store) UpdateSyncJob(ctx context.Context, j store.SyncJob) error {
	var errText any
	if j.Error != nil {
		errText = *j.Error
	}
	_, err := s.db.ExecContext(ctx, `UPDATE sync_jobs SET status = ?, progress = ?, completed_at = ?, error = ?, results = ? WHERE id = ?`,
		j.Status, j.Progress, fmtTimePtr(j.CompletedAt), errText, string(j.Results), j.ID)
	if err != nil {
		return fmt.Errorf("update sync job: %w", err)
	}
	return nil
}

// FailRunningJobs implements store.ConnectorStore.
func (s *Store) FailRunningJobs(ctx context.Context, reason string, now time.Time) (int, error) {
	res, err := s.db.ExecContext(ctx, `UPDATE sync_jobs SET status = 'failed', error = ?, completed_at = ? WHERE status = 'running'`,
		reason, fmtTime(now))
	if err != nil {
		return 0, fmt.Errorf("fail running jobs: %w", err)
	}
	n, err := res.RowsAffected()
	return int(n), err
}

-- +goose Up
-- Data-source connectors of a tenant. Secret config fields are sealed
-- (AES-GCM) inside config before they get here.
CREATE TABLE connectors (
    id             TEXT PRIMARY KEY,         -- UUID
    tenant_id      TEXT NOT NULL,
    name           TEXT NOT NULL,
    type           TEXT NOT NULL,
    enabled        INTEGER NOT NULL,
    config         TEXT NOT NULL,            -- JSON object
    created_at     TEXT NOT NULL,
    updated_at     TEXT NOT NULL,
    last_synced_at TEXT
) STRICT;
CREATE INDEX connectors_tenant ON connectors (tenant_id, created_at);

-- Which connector owns which table of a tenant store: a name owned by one
-- connector fails another's sync.
CREATE TABLE connector_tables (
    tenant_id    TEXT NOT NULL,
    table_name   TEXT NOT NULL,              -- schema-qualified when not main
    connector_id TEXT NOT NULL REFERENCES connectors (id) ON DELETE CASCADE,
    PRIMARY KEY (tenant_id, table_name)
) STRICT;

-- Sync jobs: pending → running → completed | failed.
CREATE TABLE sync_jobs (
    id           TEXT PRIMARY KEY,           -- 32 hex characters
    tenant_id    TEXT NOT NULL,
    connector_id TEXT,                       -- set for a scheduled sync of one connector
    status       TEXT NOT NULL CHECK (status IN ('pending', 'running', 'completed', 'failed')),
    progress     REAL NOT NULL DEFAULT 0,
    started_at   TEXT NOT NULL,
    completed_at TEXT,
    error        TEXT,
    results      TEXT NOT NULL DEFAULT '[]'  -- JSON: per-connector results
) STRICT;
CREATE INDEX sync_jobs_tenant_status ON sync_jobs (tenant_id, status);
CREATE INDEX sync_jobs_status ON sync_jobs (status, started_at);

-- +goose Down
DROP TABLE sync_jobs;
DROP TABLE connector_tables;
DROP TABLE connectors;

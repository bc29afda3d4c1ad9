// Package store defines the control-plane persistence that the services of
// impl/ depend on. The embedded default is SQLite (package store/sqlite); the
// interface is the seam where a PostgreSQL backend drops in for
// multi-replica deployments.
package store

import (
	"context"
	"errors"
)

// Store is the control-plane store: one repository interface per area,
// each in its own file. Later capabilities (connectors, jobs, content) add
// theirs here.
type Store interface {
	AuthStore
	ContentStore
	ConnectorStore

	// Ping checks that the store is reachable and usable; /readyz calls it.
	Ping(ctx context.Context) error
	// SchemaVersion returns the version of the newest applied migration.
	SchemaVersion(ctx context.Context) (int64, error)
	// Close releases the store.
	Close() error
}

// ErrNotFound is returned by lookups that find nothing.
var ErrNotFound = errors.New("store: not found")

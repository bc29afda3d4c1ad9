//go:build duckdb_arrow

package sync

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	duckdb "github.com/duckdb/duckdb-go/v2"
	"github.com/google/uuid"
)

// IngestPath names the ingestion path this binary was built with.
const IngestPath = "arrow"

// load streams every batch of read into the staging table through DuckDB's
// Arrow scan: the batches are exposed as a registered view over a record
// reader and copied with one INSERT … SELECT (DuckDB reads the canonical
// arrow.uuid extension as UUID and casts text to the JSON columns itself).
//
// Facts of duckdb-go v2.10505.0 this respects: RegisterView creates a
// persistent (not temporary) view, and reading it after the reader was
// released crashes the process, so the order is BEGIN → register under a
// unique name → INSERT … SELECT → DROP VIEW → COMMIT (or ROLLBACK), and the
// stream is released only after that. The Arrow handle is used by this one
// goroutine only (it is not safe for concurrent use).
func load(ctx context.Context, conn *sql.Conn, schema, staging string, t DiscoveredTable,
	read func(onBatch func(arrow.RecordBatch) error) error) (int64, error) {
	// The plugin pushes batches; DuckDB pulls them: a goroutine and a small
	// channel join the two, so at most a few batches are in memory.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	batches := make(chan arrow.RecordBatch, 2)
	readErr := make(chan error, 1)
	var rows int64
	go func() {
		defer close(batches)
		readErr <- read(func(rec arrow.RecordBatch) error {
			if !rec.Schema().Equal(t.Schema) {
				return errors.New("a batch's schema differs from the discovered one")
			}
			rec.Retain()
			select {
			case batches <- rec:
				rows += rec.NumRows() // read by load only after the channel closed
				return nil
			case <-ctx.Done():
				rec.Release()
				return ctx.Err()
			}
		})
	}()
	reader := &chanReader{schema: t.Schema, batches: batches}
	reader.refs.Store(1)
	drain := func() {
		cancel()
		for rec := range batches {
			rec.Release()
		}
	}

	view := "__strata_arrow_" + strings.ReplaceAll(uuid.NewString(), "-", "")
	var loadErr error
	err := conn.Raw(func(dc any) error {
		ar, err := duckdb.NewArrowFromConn(dc.(driver.Conn))
		if err != nil {
			return fmt.Errorf("arrow: %w", err)
		}
		execer := dc.(driver.ExecerContext)
		exec := func(q string) error { _, err := execer.ExecContext(ctx, q, nil); return err }
		if err := exec(`BEGIN TRANSACTION`); err != nil {
			return err
		}
		release, err := ar.RegisterView(reader, view)
		if err != nil {
			_ = exec(`ROLLBACK`)
			return fmt.Errorf("register arrow view: %w", err)
		}
		defer release() // after COMMIT or ROLLBACK, never before
		loadErr = exec(`INSERT INTO ` + quoteIdent(schema) + `.` + quoteIdent(staging) + ` SELECT * FROM ` + quoteIdent(view))
		if loadErr == nil {
			loadErr = exec(`DROP VIEW ` + quoteIdent(view))
		}
		if loadErr != nil {
			_ = exec(`ROLLBACK`)
			return nil
		}
		return exec(`COMMIT`)
	})
	drain()
	reader.Release()
	if perr := <-readErr; perr != nil && !errors.Is(perr, context.Canceled) {
		return 0, perr // the plugin's error explains a failed load best
	}
	if err != nil {
		return 0, err
	}
	if loadErr != nil {
		return 0, fmt.Errorf("load batches: %w", loadErr)
	}
	return rows, nil
}

// chanReader is an array.RecordReader over a channel of batches. (Not
// array.ReaderFromIter: its iter.Pull coroutine must not be resumed from the
// cgo callback thread DuckDB's scan calls Next on.)
type chanReader struct {
	refs    atomic.Int64
	schema  *arrow.Schema
	batches <-chan arrow.RecordBatch
	cur     arrow.RecordBatch
}

var _ array.RecordReader = (*chanReader)(nil)

func (r *chanReader) Retain()               { r.refs.Add(1) }
func (r *chanReader) Schema() *arrow.Schema { return r.schema }
func (r *chanReader) Err() error            { return nil } // the plugin's error is reported by load

// Release drops the current batch when the last reference goes.
func (r *chanReader) Release() {
	if r.refs.Add(-1) == 0 && r.cur != nil {
		r.cur.Release()
		r.cur = nil
	}
}

// Next moves to the next batch, releasing the previous one.
func (r *chanReader) Next() bool {
	if r.cur != nil {
		r.cur.Release()
		r.cur = nil
	}
	rec, ok := <-r.batches
	if !ok {
		return false
	}
	r.cur = rec
	return true
}

// RecordBatch returns the current batch.
func (r *chanReader) RecordBatch() arrow.RecordBatch { return r.cur }

// Record returns the current batch (the deprecated name).
func (r *chanReader) Record() arrow.RecordBatch { return r.cur }

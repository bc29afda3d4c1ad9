// Package sync runs data syncs: a job covers a tenant's enabled connectors
// (or one connector, for scheduled syncs); for each, the connector's plugin
// discovers its tables and streams them as Arrow record batches, which are
// ingested into a staging table of the tenant's DuckDB store and swapped for
// the live table in one transaction. Jobs are durable: pending jobs resume
// after a restart and jobs that were running are marked failed
// "interrupted".
package sync

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	gosync "sync"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/google/uuid"

	"github.com/stratahq/strata/impl/apierrors"
	"github.com/stratahq/strata/impl/connectors"
	"github.com/stratahq/strata/impl/query"
	"github.com/stratahq/strata/impl/store"
)

// Job states.
const (
	StatusPending   = "pending"
	StatusRunning   = "running"
	StatusCompleted = "completed"
	StatusFailed    = "failed"
)

// DiscoveredTable is a table a plugin offers.
type DiscoveredTable struct {
	Name       string
	Schema     *arrow.Schema
	PrimaryKey []string
}

// Plugin is a launched connector plugin.
type Plugin interface {
	Discover(ctx context.Context, config json.RawMessage) ([]DiscoveredTable, error)
	Read(ctx context.Context, config json.RawMessage, table string, schema *arrow.Schema,
		onBatch func(arrow.RecordBatch) error, onProgress func(rowsRead, rowsTotal int64)) error
	Close()
}

// Launcher starts the plugin of a connector type.
type Launcher interface {
	Launch(ctx context.Context, connectorType string) (Plugin, error)
}

// Options tunes the runner.
type Options struct {
	// Workers bounds jobs running at once across tenants (default 2); a
	// tenant runs one job at a time.
	Workers int
	// ScheduleEvery is how often scheduled syncs are looked for (default 15 s).
	ScheduleEvery time.Duration
	// DefaultInterval applies to connectors without sync_interval_seconds (300 s).
	DefaultInterval time.Duration
	Now             func() time.Time
}

// Runner executes sync jobs.
type Runner struct {
	store      store.ConnectorStore
	connectors *connectors.Service
	engine     *query.Engine
	launcher   Launcher
	logger     *slog.Logger
	opts       Options

	wake    chan struct{}
	stop    context.CancelFunc
	running gosync.WaitGroup
}

// NewRunner returns a runner; Start runs it.
func NewRunner(st store.ConnectorStore, cs *connectors.Service, engine *query.Engine, launcher Launcher, logger *slog.Logger, opts Options) *Runner {
	if opts.Workers <= 0 {
		opts.Workers = 2
	}
	if opts.ScheduleEvery <= 0 {
		opts.ScheduleEvery = 15 * time.Second
	}
	if opts.DefaultInterval <= 0 {
		opts.DefaultInterval = 300 * time.Second
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	return &Runner{store: st, connectors: cs, engine: engine, launcher: launcher, logger: logger, opts: opts,
		wake: make(chan struct{}, 1)}
}

// Start marks jobs interrupted by the last stop as failed and starts the
// dispatcher and the scheduler.
func (r *Runner) Start(ctx context.Context) error {
	n, err := r.store.FailRunningJobs(ctx, "interrupted", r.opts.Now())
	if err != nil {
		return err
	}
	if n > 0 {
		r.logger.WarnContext(ctx, "sync jobs interrupted by the last shutdown marked failed", "jobs", n)
	}
	ctx, r.stop = context.WithCancel(context.WithoutCancel(ctx))
	r.running.Add(2)
	go r.dispatch(ctx)
	go r.schedule(ctx)
	r.poke()
	return nil
}

// Stop cancels running jobs (they end failed "interrupted") and waits for
// the runner's goroutines.
func (r *Runner) Stop() {
	if r.stop != nil {
		r.stop()
	}
	r.running.Wait()
}

func (r *Runner) poke() {
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

func newJobID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// Trigger starts a sync of all the tenant's enabled connectors, or returns
// the tenant's job that is already pending or running.
func (r *Runner) Trigger(ctx context.Context, tenantID uuid.UUID) (store.SyncJob, error) {
	job, created, err := r.store.CreateSyncJob(ctx, store.SyncJob{ID: newJobID(), TenantID: tenantID, StartedAt: r.opts.Now()})
	if err != nil {
		return job, err
	}
	if created {
		r.poke()
	}
	return job, nil
}

// Job returns one of the tenant's jobs; another tenant's or an unknown id is
// 404 job_not_found.
func (r *Runner) Job(ctx context.Context, tenantID uuid.UUID, id string) (store.SyncJob, error) {
	job, err := r.store.GetSyncJob(ctx, tenantID, id)
	if errors.Is(err, store.ErrNotFound) {
		return job, apierrors.New(http.StatusNotFound, apierrors.CodeJobNotFound, "sync job %s not found", id)
	}
	return job, err
}

// dispatch runs pending jobs as workers free up.
func (r *Runner) dispatch(ctx context.Context) {
	defer r.running.Done()
	slots := make(chan struct{}, r.opts.Workers)
	ticker := time.NewTicker(time.Second)
	defer ticker.Stop()
	var jobs gosync.WaitGroup
	defer jobs.Wait()
	for {
		for {
			select {
			case slots <- struct{}{}:
			case <-ctx.Done():
				return
			}
			job, err := r.store.NextPendingJob(ctx)
			if err != nil {
				<-slots
				if !errors.Is(err, store.ErrNotFound) && ctx.Err() == nil {
					r.logger.ErrorContext(ctx, "next sync job", "err", err)
				}
				break
			}
			jobs.Add(1)
			go func() {
				defer jobs.Done()
				defer func() { <-slots; r.poke() }()
				r.run(ctx, job)
			}()
		}
		select {
		case <-ctx.Done():
			return
		case <-r.wake:
		case <-ticker.C:
		}
	}
}

// schedule creates a job for every enabled connector whose interval passed.
func (r *Runner) schedule(ctx context.Context) {
	defer r.running.Done()
	ticker := time.NewTicker(r.opts.ScheduleEvery)
	defer ticker.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
		}
		due, err := r.store.ConnectorsDue(ctx, r.opts.Now(), r.interval)
		if err != nil {
			if ctx.Err() == nil {
				r.logger.ErrorContext(ctx, "scheduled syncs", "err", err)
			}
			continue
		}
		for _, c := range due {
			id := c.ID
			if _, created, err := r.store.CreateSyncJob(ctx, store.SyncJob{ID: newJobID(), TenantID: c.TenantID,
				ConnectorID: &id, StartedAt: r.opts.Now()}); err != nil {
				r.logger.ErrorContext(ctx, "schedule sync", "connector_id", id.String(), "err", err)
			} else if created {
				r.poke()
			}
		}
	}
}

// interval reads a connector's sync_interval_seconds.
func (r *Runner) interval(c store.Connector) time.Duration {
	var cfg struct {
		Interval float64 `json:"sync_interval_seconds"`
	}
	if json.Unmarshal(c.Config, &cfg) == nil && cfg.Interval >= 1 {
		return time.Duration(cfg.Interval) * time.Second
	}
	return r.opts.DefaultInterval
}

// ConnectorResult is one connector's part of a job (the job's results).
type ConnectorResult struct {
	ConnectorID uuid.UUID     `json:"connectorId"`
	Name        string        `json:"name"`
	Status      string        `json:"status"`
	Tables      []TableResult `json:"tables"`
	Rows        int64         `json:"rows"`
	Error       *string       `json:"error"`
}

// TableResult is a table a connector replaced.
type TableResult struct {
	Name string `json:"name"`
	Rows int64  `json:"rows"`
}

// progressSaveEvery bounds how often a running job's progress is written.
const progressSaveEvery = 500 * time.Millisecond

// jobState is a running job: its row, results and progress, saved
// periodically.
type jobState struct {
	r       *Runner
	job     store.SyncJob
	results []ConnectorResult
	saved   time.Time
}

func (s *jobState) setProgress(ctx context.Context, p float64, force bool) {
	if p > s.job.Progress { // never decreases
		s.job.Progress = min(p, 100)
	}
	if !force && s.r.opts.Now().Sub(s.saved) < progressSaveEvery {
		return
	}
	s.save(ctx)
}

func (s *jobState) save(ctx context.Context) {
	s.job.Results, _ = json.Marshal(s.results)
	s.saved = s.r.opts.Now()
	if err := s.r.store.UpdateSyncJob(context.WithoutCancel(ctx), s.job); err != nil {
		s.r.logger.ErrorContext(ctx, "save sync job", "job_id", s.job.ID, "err", err)
	}
}

// run executes one job to its end.
func (r *Runner) run(ctx context.Context, job store.SyncJob) {
	st := &jobState{r: r, job: job}
	list, err := r.jobConnectors(ctx, job)
	if err == nil {
		for _, c := range list {
			st.results = append(st.results, ConnectorResult{ConnectorID: c.ID, Name: c.Name, Status: StatusPending, Tables: []TableResult{}})
		}
		st.save(ctx)
		for i, c := range list {
			share := 100 / float64(len(list))
			res := &st.results[i]
			res.Status = StatusRunning
			st.setProgress(ctx, share*float64(i), true)
			cerr := r.syncConnector(ctx, st, c, res, func(f float64) { st.setProgress(ctx, share*(float64(i)+f), false) })
			if cerr != nil {
				msg := cerr.Error()
				if ctx.Err() != nil {
					msg = "interrupted"
				}
				res.Status, res.Error = StatusFailed, &msg
				r.logger.WarnContext(ctx, "connector sync failed", "job_id", job.ID, "connector_id", c.ID.String(), "err", msg)
			} else {
				res.Status = StatusCompleted
				if err := r.store.MarkSynced(context.WithoutCancel(ctx), c.ID, r.opts.Now()); err != nil {
					r.logger.ErrorContext(ctx, "mark connector synced", "err", err)
				}
			}
			st.setProgress(ctx, share*float64(i+1), true)
		}
	}
	now := r.opts.Now()
	st.job.CompletedAt = &now
	var failures []string
	for _, res := range st.results {
		if res.Error != nil {
			failures = append(failures, res.Name+": "+*res.Error)
		}
	}
	switch {
	case ctx.Err() != nil:
		msg := "interrupted"
		st.job.Status, st.job.Error = StatusFailed, &msg
	case err != nil:
		msg := err.Error()
		st.job.Status, st.job.Error = StatusFailed, &msg
	case len(failures) > 0:
		msg := strings.Join(failures, "; ")
		st.job.Status, st.job.Error = StatusFailed, &msg
	default:
		st.job.Status, st.job.Progress = StatusCompleted, 100
	}
	st.save(ctx)
}

// jobConnectors lists what a job covers: the tenant's enabled connectors, or
// the one of a scheduled job.
func (r *Runner) jobConnectors(ctx context.Context, job store.SyncJob) ([]store.Connector, error) {
	all, err := r.store.ListConnectors(ctx, job.TenantID)
	if err != nil {
		return nil, err
	}
	var out []store.Connector
	for _, c := range all {
		if c.Enabled && (job.ConnectorID == nil || *job.ConnectorID == c.ID) {
			out = append(out, c)
		}
	}
	return out, nil
}

// destination is where a source table lands: main, or the connector's
// destination_schema.
func destination(c store.Connector, table string) (schema, name, qualified string) {
	var cfg struct {
		Schema string `json:"destination_schema"`
	}
	_ = json.Unmarshal(c.Config, &cfg)
	if cfg.Schema == "" || strings.EqualFold(cfg.Schema, "main") {
		return "main", table, table
	}
	return cfg.Schema, table, cfg.Schema + "." + table
}

// syncConnector syncs every table of one connector.
func (r *Runner) syncConnector(ctx context.Context, st *jobState, c store.Connector, res *ConnectorResult, progress func(float64)) error {
	config, err := r.connectors.PlainConfig(c)
	if err != nil {
		return err
	}
	plugin, err := r.launcher.Launch(ctx, c.Type)
	if err != nil {
		return fmt.Errorf("start the %s plugin: %w", c.Type, err)
	}
	defer plugin.Close()
	tables, err := plugin.Discover(ctx, config)
	if err != nil {
		return fmt.Errorf("discover: %w", err)
	}
	for i, t := range tables {
		schema, name, qualified := destination(c, t.Name)
		// Saved configs are checked when saved; this catches one saved
		// before a rule existed, with a clearer error than the store's.
		if err := connectors.CheckDestinationSchema(schema); err != nil {
			return fmt.Errorf("destination_schema: %w", err)
		}
		if !validIdentifier(schema) || !validIdentifier(name) {
			return fmt.Errorf("table %q: not a usable table name", qualified)
		}
		if err := r.store.ClaimTable(ctx, c.TenantID, qualified, c.ID); err != nil {
			if errors.Is(err, store.ErrConflict) {
				return fmt.Errorf("table %s is owned by another connector of this tenant", qualified)
			}
			return err
		}
		tableShare := 1 / float64(len(tables))
		rows, err := r.ingest(ctx, c.TenantID, schema, name, t, func(onBatch func(arrow.RecordBatch) error) error {
			return plugin.Read(ctx, config, t.Name, t.Schema, onBatch, func(read, total int64) {
				if total > 0 {
					progress(tableShare * (float64(i) + min(1, float64(read)/float64(total))))
				}
			})
		})
		if err != nil {
			return fmt.Errorf("table %s: %w", qualified, err)
		}
		res.Tables = append(res.Tables, TableResult{Name: qualified, Rows: rows})
		res.Rows += rows
		progress(tableShare * float64(i+1))
		st.save(ctx)
	}
	return nil
}

// validIdentifier accepts names DuckDB can hold without surprises; they are
// quoted anyway.
func validIdentifier(s string) bool {
	if s == "" || len(s) > 120 || strings.HasPrefix(s, "__strata") || s == query.InternalSchema {
		return false
	}
	for _, c := range s {
		if c < 0x20 || c == '"' || c == 0x7f {
			return false
		}
	}
	return true
}

// Package pipeline is the durable AI pipeline: every item with text (notes,
// transcribed voice notes, captioned photos) is transcribed when it is audio,
// summarised, tagged and embedded by a job queue persisted in the
// control-plane store.
//
// The queue is riverqueue/river with its SQLite driver (v0.31.0, the newest
// riversqlite the module proxy serves; verified with modernc.org/sqlite):
// pending jobs survive restarts, failed attempts are retried with
// exponential backoff, concurrency is bounded, and a job whose process died
// is rescued. processingStatus goes pending → processing → processed |
// failed (with the reason), and content:processed is emitted either way.
package pipeline

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riversqlite"
	"github.com/riverqueue/river/rivermigrate"
	"github.com/riverqueue/river/rivertype"

	"github.com/stratahq/strata/impl/content"
	"github.com/stratahq/strata/impl/media"
	"github.com/stratahq/strata/impl/pipeline/textai"
	"github.com/stratahq/strata/impl/pipeline/transcribe"
	"github.com/stratahq/strata/impl/store"
)

// Engines are the AI engines the pipeline uses.
type Engines struct {
	Transcriber transcribe.Transcriber
	Summarizer  textai.Summarizer
	Tagger      textai.Tagger
	Embedder    textai.Embedder
}

// Config tunes the queue. Zero values take the defaults.
type Config struct {
	// Workers bounds concurrent jobs (default 2).
	Workers int
	// MaxAttempts per item (default 3).
	MaxAttempts int
	// Backoff is the wait before the second attempt; it doubles after each
	// failure (default 2 s).
	Backoff time.Duration
	// Now is the clock for item timestamps; default time.Now.
	Now func() time.Time
}

func (c Config) withDefaults() Config {
	if c.Workers <= 0 {
		c.Workers = 2
	}
	if c.MaxAttempts <= 0 {
		c.MaxAttempts = 3
	}
	if c.Backoff <= 0 {
		c.Backoff = 2 * time.Second
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	return c
}

// Pipeline owns the queue and its workers.
type Pipeline struct {
	cfg     Config
	store   store.ContentStore
	content *content.Service
	media   *media.Store
	engines Engines
	vectors *Vectors
	logger  *slog.Logger
	client  *river.Client[*sql.Tx]
	db      *sql.DB // river's tables, for the fair-share count
}

// processArgs is the job: process one revision of an item. Rev (a hash of
// the body) makes a job per body: an edit while a job runs gets a job of its
// own instead of being absorbed by the running one, which then finds its
// revision stale and stops.
type processArgs struct {
	ItemID uuid.UUID `json:"item_id"`
	UserID uuid.UUID `json:"user_id"`
	Rev    string    `json:"rev"`
}

func revision(it store.Item) string {
	sum := sha256.Sum256([]byte(it.Body))
	return hex.EncodeToString(sum[:8])
}

// Kind implements river.JobArgs.
func (processArgs) Kind() string { return "process_item" }

// New applies river's migrations to db (the control-plane database) and
// prepares the queue; Start runs it.
func New(ctx context.Context, db *sql.DB, st store.ContentStore, contentSvc *content.Service, mediaStore *media.Store,
	engines Engines, vectors *Vectors, cfg Config, logger *slog.Logger) (*Pipeline, error) {
	cfg = cfg.withDefaults()
	driver := riversqlite.New(db)
	migrator, err := rivermigrate.New(driver, nil)
	if err != nil {
		return nil, fmt.Errorf("river migrations: %w", err)
	}
	if _, err := migrator.Migrate(ctx, rivermigrate.DirectionUp, nil); err != nil {
		return nil, fmt.Errorf("river migrations: %w", err)
	}
	p := &Pipeline{cfg: cfg, store: st, content: contentSvc, media: mediaStore, engines: engines, vectors: vectors, logger: logger, db: db}
	workers := river.NewWorkers()
	if err := river.AddWorkerSafely(workers, &worker{p: p}); err != nil {
		return nil, err
	}
	p.client, err = river.NewClient(driver, &river.Config{
		Queues:               map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: cfg.Workers}},
		Workers:              workers,
		MaxAttempts:          cfg.MaxAttempts,
		RetryPolicy:          backoff{base: cfg.Backoff},
		JobTimeout:           15 * time.Minute,
		RescueStuckJobsAfter: 20 * time.Minute,
		Logger:               logger.With("component", "river"),
		FetchPollInterval:    100 * time.Millisecond,
	})
	if err != nil {
		return nil, fmt.Errorf("river client: %w", err)
	}
	return p, nil
}

// Start runs the workers and enqueues every item still pending from before
// (an enqueue lost to a crash between commit and insert is recovered here).
func (p *Pipeline) Start(ctx context.Context) error {
	if err := p.client.Start(ctx); err != nil {
		return fmt.Errorf("start pipeline: %w", err)
	}
	const page = 1000
	var after *store.Item
	for {
		items, err := p.store.PendingItems(ctx, after, page)
		if err != nil {
			return err
		}
		for _, it := range items {
			if err := p.Enqueue(ctx, it); err != nil {
				return err
			}
		}
		if len(items) < page {
			return nil
		}
		after = &items[len(items)-1]
	}
}

// Stop stops fetching jobs and waits for running ones to finish (up to ctx).
func (p *Pipeline) Stop(ctx context.Context) error {
	return p.client.Stop(ctx)
}

// Job priorities (river runs the lowest number first). A user's first
// fairShare waiting jobs get normalPriority, further ones bulkPriority: a
// bulk import waits behind every other user's notes instead of holding them
// up for minutes.
const (
	normalPriority = 1
	bulkPriority   = 4
	fairShare      = 8
)

// priorityFor is the priority of a new job of userID.
func (p *Pipeline) priorityFor(ctx context.Context, userID uuid.UUID) (int, error) {
	var waiting int
	err := p.db.QueryRowContext(ctx, `SELECT count(*) FROM river_job
		WHERE kind = ? AND state IN ('available', 'scheduled', 'retryable', 'pending')
		  AND json_extract(args, '$.user_id') = ?`, processArgs{}.Kind(), userID.String()).Scan(&waiting)
	if err != nil {
		return 0, fmt.Errorf("count waiting jobs: %w", err)
	}
	if waiting >= fairShare {
		return bulkPriority, nil
	}
	return normalPriority, nil
}

// Enqueue implements content.Processor: one job per item revision (a job
// already queued or running for the same body absorbs the request).
func (p *Pipeline) Enqueue(ctx context.Context, it store.Item) error {
	priority, err := p.priorityFor(ctx, it.UserID)
	if err != nil {
		return fmt.Errorf("enqueue item %s: %w", it.ID, err)
	}
	_, err = p.client.Insert(ctx, processArgs{ItemID: it.ID, UserID: it.UserID, Rev: revision(it)}, &river.InsertOpts{
		Priority: priority,
		UniqueOpts: river.UniqueOpts{ByArgs: true, ByState: []rivertype.JobState{
			rivertype.JobStateAvailable, rivertype.JobStatePending, rivertype.JobStateRunning,
			rivertype.JobStateScheduled, rivertype.JobStateRetryable,
		}},
	})
	if err != nil {
		return fmt.Errorf("enqueue item %s: %w", it.ID, err)
	}
	return nil
}

// backoff waits base, 2·base, 4·base … before the next attempt.
type backoff struct{ base time.Duration }

func (b backoff) NextRetry(job *rivertype.JobRow) time.Time {
	return time.Now().Add(b.base << max(0, len(job.Errors)-1))
}

// worker processes one item per job.
type worker struct {
	river.WorkerDefaults[processArgs]
	p *Pipeline
}

// Work implements river.Worker. A permanent failure (undecodable audio,
// a refused request) fails the item at once; a transient one (an engine
// unreachable) is retried, and fails the item on the last attempt.
func (w *worker) Work(ctx context.Context, job *river.Job[processArgs]) error {
	err := w.p.process(ctx, job.Args)
	switch {
	case err == nil, errors.Is(err, store.ErrNotFound), errors.Is(err, content.ErrStale):
		return nil // done, deleted meanwhile, or superseded by a newer job
	case isPermanent(err):
		w.p.fail(ctx, job.Args, err)
		return river.JobCancel(err)
	case job.Attempt >= job.MaxAttempts:
		w.p.fail(ctx, job.Args, err)
		return err
	default:
		w.p.logger.WarnContext(ctx, "pipeline attempt failed; will retry", "item_id", job.Args.ItemID.String(),
			"attempt", job.Attempt, "err", err)
		return err
	}
}

func isPermanent(err error) bool {
	if errors.Is(err, transcribe.ErrInvalidAudio) {
		return true
	}
	return !errors.Is(err, transcribe.ErrUnavailable) && !errors.Is(err, textai.ErrUnavailable) &&
		!errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, context.Canceled) && isEngineRefusal(err)
}

// isEngineRefusal reports a 4xx of a remote engine: retrying cannot help.
func isEngineRefusal(err error) bool {
	var apiErr *textai.APIError
	var httpErr *transcribe.HTTPError
	return errors.As(err, &apiErr) || errors.As(err, &httpErr)
}

// process runs the whole pipeline for one item.
func (p *Pipeline) process(ctx context.Context, args processArgs) error {
	it, err := p.store.GetItem(ctx, args.UserID, args.ItemID)
	if err != nil {
		return err
	}
	if args.Rev != "" && args.Rev != revision(it) {
		return content.ErrStale // edited since: the job of the new body does the work
	}
	snapshot := it
	if _, err := p.content.ApplyProcessing(ctx, args.UserID, args.ItemID, func(cur *store.Item) error {
		if cur.Body != snapshot.Body {
			return content.ErrStale
		}
		cur.ProcessingStatus, cur.ProcessingError = content.StatusProcessing, ""
		return nil
	}, false); err != nil {
		return err
	}

	var transcript *string
	if it.Type == "voice_note" && it.Transcription == nil {
		text, err := p.transcribe(ctx, it)
		if err != nil {
			return err
		}
		transcript = &text
	}
	text := it.Body
	if transcript != nil {
		text = *transcript
	}
	var summary string
	var tags []string
	var vector []float32
	if strings.TrimSpace(text) != "" {
		if summary, err = p.engines.Summarizer.Summarize(ctx, text); err != nil {
			return fmt.Errorf("summarise: %w", err)
		}
		if tags, err = p.engines.Tagger.Tags(ctx, text, nil); err != nil {
			return fmt.Errorf("tag: %w", err)
		}
	}
	if vector, err = p.vectors.EmbedItem(ctx, it, transcript); err != nil {
		return fmt.Errorf("embed: %w", err)
	}
	// The vector is stored first, so that an item reads "processed" only
	// once related items and search can find it. Should the body have
	// changed meanwhile, the job of the new revision replaces the vector.
	if err := p.vectors.Put(ctx, it, vector); err != nil {
		return err
	}

	_, err = p.content.ApplyProcessing(ctx, args.UserID, args.ItemID, func(cur *store.Item) error {
		if cur.Body != snapshot.Body {
			return content.ErrStale
		}
		if transcript != nil {
			cur.Transcription = transcript
			// The body holds the transcript, unless the user wrote one
			// while the audio was being transcribed: their words win.
			if cur.Body == "" {
				cur.Body = *transcript
			}
			if cur.Title == "" {
				cur.Title = firstWords(*transcript, 8)
			}
		}
		// Once processed, aiSummary is set, empty when there was no text.
		cur.AISummary = &summary
		cur.Summary = summary
		cur.AITags = nonNil(tags)
		cur.ProcessingStatus, cur.ProcessingError = content.StatusProcessed, ""
		return nil
	}, true)
	return err
}

func (p *Pipeline) transcribe(ctx context.Context, it store.Item) (string, error) {
	if p.engines.Transcriber == nil {
		return "", fmt.Errorf("%w: no transcriber configured", transcribe.ErrNoEngine)
	}
	r, err := p.media.Open(ctx, it.MediaKey)
	if err != nil {
		return "", fmt.Errorf("open audio: %w", err)
	}
	defer r.Close()
	res, err := p.engines.Transcriber.Transcribe(ctx, io.Reader(r))
	if err != nil {
		return "", fmt.Errorf("transcribe: %w", err)
	}
	return strings.TrimSpace(res.Text), nil
}

// fail marks the item failed with a reason for its owner (publicReason)
// and emits content:processed. The cause itself, which may quote ffmpeg, a
// remote engine or a path, goes to the log with the item id.
func (p *Pipeline) fail(ctx context.Context, args processArgs, cause error) {
	reason := publicReason(cause)
	_, err := p.content.ApplyProcessing(context.WithoutCancel(ctx), args.UserID, args.ItemID, func(cur *store.Item) error {
		cur.ProcessingStatus, cur.ProcessingError = content.StatusFailed, reason
		return nil
	}, true)
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		p.logger.ErrorContext(ctx, "mark item failed", "item_id", args.ItemID.String(), "err", err)
	}
	p.logger.WarnContext(ctx, "pipeline failed for item", "item_id", args.ItemID.String(), "reason", reason, "err", cause)
}

// publicReason is processingError for a failure: one stable sentence per
// kind of failure, which clients may show as it is. It never carries the
// error's text: ffmpeg's diagnostics, engine URLs and answers, paths and Go
// error chains are for the server log only.
func publicReason(err error) string {
	var httpErr *transcribe.HTTPError
	var apiErr *textai.APIError
	switch {
	case errors.Is(err, transcribe.ErrTooLong):
		return "the recording is too long to transcribe"
	case errors.Is(err, transcribe.ErrInvalidAudio):
		return "the audio could not be decoded"
	case errors.Is(err, transcribe.ErrNoEngine):
		return "no speech engine available: transcription is not set up on this server"
	case errors.Is(err, transcribe.ErrUnavailable):
		return "the transcription engine could not be reached"
	case errors.As(err, &httpErr):
		return fmt.Sprintf("the transcription engine refused the audio (HTTP %d)", httpErr.StatusCode)
	case errors.Is(err, textai.ErrUnavailable):
		return "the AI engine could not be reached"
	case errors.As(err, &apiErr):
		return fmt.Sprintf("the AI engine refused the request (HTTP %d)", apiErr.StatusCode)
	case errors.Is(err, textai.ErrBadResponse):
		return "the AI engine gave an answer that could not be used"
	case errors.Is(err, context.DeadlineExceeded):
		return "processing took too long"
	}
	return "processing failed because of an internal error"
}

func firstWords(s string, n int) string {
	words := strings.Fields(s)
	if len(words) > n {
		words = words[:n]
	}
	return strings.Join(words, " ")
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

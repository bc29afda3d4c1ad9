package sdk_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/stratahq/strata/impl/principal"
	"github.com/stratahq/strata/sdk"
)

func TestWaitSync(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	c := newUser(t, e, "ada@example.com", principal.TierPro)
	ctx := ctxT(t)
	if _, err := c.CreateConnector(ctx, sdk.ConnectorCreate{Name: "numbers", Type: "example_numbers",
		Config: map[string]any{"count": 200000, "batch_size": 1000}}); err != nil {
		t.Fatal(err)
	}
	started, err := c.Sync(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var seen []sdk.SyncJob
	job, err := c.WaitSync(ctx, started.JobID, func(j sdk.SyncJob) { seen = append(seen, j) })
	if err != nil {
		t.Fatal(err)
	}
	if job.Status != sdk.SyncStatusCompleted || job.Progress != 100 || job.Connectors == nil || len(*job.Connectors) != 1 || (*job.Connectors)[0].Rows != 200000 {
		t.Fatalf("final %+v", job)
	}
	if len(seen) == 0 || seen[len(seen)-1].Status != sdk.SyncStatusCompleted {
		t.Fatalf("progress calls %+v", seen)
	}
	for i := 1; i < len(seen); i++ {
		if seen[i].Progress < seen[i-1].Progress {
			t.Fatalf("progress went back: %v then %v", seen[i-1].Progress, seen[i].Progress)
		}
	}
	t.Logf("%d progress reports over %d polls", len(seen), c.wire.count("GET /api/data-platform/sync/"))

	// Unknown job.
	if _, err := c.WaitSync(ctx, "0123456789abcdef0123456789abcdef", nil); !errors.Is(err, sdk.ErrNotFound) {
		t.Fatalf("err %v", err)
	}
	// ctx ends the wait.
	short, cancel := context.WithCancel(ctx)
	started, err = c.Sync(ctx)
	if err != nil {
		t.Fatal(err)
	}
	cancel()
	if _, err := c.WaitSync(short, started.JobID, nil); !errors.Is(err, context.Canceled) {
		t.Fatalf("err %v", err)
	}
}

// Two connectors landing the same table: the second fails the job, and
// WaitSync says why.
func TestWaitSyncFailed(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	c := newUser(t, e, "ada@example.com", principal.TierPro)
	ctx := ctxT(t)
	for _, name := range []string{"first", "second"} {
		e.Clock.Advance(time.Second)
		if _, err := c.CreateConnector(ctx, sdk.ConnectorCreate{Name: name, Type: "example_numbers", Config: map[string]any{"count": 10}}); err != nil {
			t.Fatal(err)
		}
	}
	started, err := c.Sync(ctx)
	if err != nil {
		t.Fatal(err)
	}
	job, err := c.WaitSync(ctx, started.JobID, nil)
	var syncErr *sdk.SyncError
	if !errors.Is(err, sdk.ErrSyncFailed) || !errors.As(err, &syncErr) {
		t.Fatalf("err %v, want a *SyncError", err)
	}
	if job.Status != sdk.SyncStatusFailed || syncErr.JobID != started.JobID || job.Error == nil || syncErr.Message != *job.Error ||
		!strings.Contains(syncErr.Message, "numbers") {
		t.Fatalf("job %+v, err %v", job, err)
	}
}

func TestConnectors(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	c := newUser(t, e, "ada@example.com", principal.TierPro)
	ctx := ctxT(t)

	types, err := c.ConnectorTypes(ctx)
	if err != nil {
		t.Fatal(err)
	}
	available := map[string]bool{}
	for _, ty := range types {
		available[ty.Type] = ty.Available
	}
	if !available["example_numbers"] || available["csv"] {
		t.Fatalf("types %v", available)
	}

	created, err := c.CreateConnector(ctx, sdk.ConnectorCreate{Name: "numbers", Type: "example_numbers", Config: map[string]any{"count": 10, "batch_size": 5}})
	if err != nil || !created.Enabled || created.Name != "numbers" {
		t.Fatalf("%+v %v", created, err)
	}
	id := created.ID.String()
	e.Clock.Advance(time.Second)
	updated, err := c.UpdateConnector(ctx, id, sdk.ConnectorUpdate{Enabled: sdk.Ptr(false), Config: map[string]any{"count": 20, "batch_size": nil}})
	if err != nil {
		t.Fatal(err)
	}
	// batch_size: null takes the key's default back (256).
	if updated.Enabled || updated.Config["count"] != float64(20) || updated.Config["batch_size"] != float64(256) || !updated.UpdatedAt.After(created.UpdatedAt) {
		t.Fatalf("merge patch: %+v", updated)
	}
	list, err := c.Connectors(ctx)
	if err != nil || len(list) != 1 || list[0].ID != created.ID {
		t.Fatalf("%+v %v", list, err)
	}
	if err := c.DeleteConnector(ctx, id); err != nil {
		t.Fatal(err)
	}
	if list, err := c.Connectors(ctx); err != nil || len(list) != 0 {
		t.Fatalf("%+v %v", list, err)
	}
	if _, err := c.UpdateConnector(ctx, uuid.NewString(), sdk.ConnectorUpdate{Name: sdk.Ptr("x")}); !errors.Is(err, sdk.ErrNotFound) {
		t.Fatalf("update unknown: %v", err)
	}

	_, err = c.CreateConnector(ctx, sdk.ConnectorCreate{Name: "csv", Type: "csv", Config: map[string]any{}})
	var apiErr *sdk.APIError
	if !errors.As(err, &apiErr) || apiErr.StatusCode != 422 || apiErr.Code != "connector_type_unavailable" {
		t.Fatalf("coming soon: %v", err)
	}
	if _, err := c.CreateConnector(ctx, sdk.ConnectorCreate{Name: "n", Type: "example_numbers", Config: map[string]any{"count": -1}}); !errors.Is(err, sdk.ErrValidation) {
		t.Fatalf("bad config: %v", err)
	}
}

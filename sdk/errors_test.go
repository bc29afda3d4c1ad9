package sdk_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/stratahq/strata/impl/principal"
	"github.com/stratahq/strata/sdk"
)

// Every class of error response comes back as an *APIError that the
// matching sentinel, and only it, recognises.
func TestTypedErrors(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	c := newUser(t, e, "ada@example.com", principal.TierPro)
	ctx := ctxT(t)
	wrongTenant := newClient(t, e, c.wire, sdk.WithPassword("ada@example.com", password), sdk.WithTenant(uuid.NewString()))
	_, bobTenant := e.User("bob@example.com", password, principal.TierPro)
	if err := e.App.Auth().SetTenantFeature(ctx, bobTenant.ID, "content_search", false); err != nil {
		t.Fatal(err)
	}
	bob := newClient(t, e, c.wire, sdk.WithPassword("bob@example.com", password))

	sentinels := map[string]error{
		"ErrUnauthenticated": sdk.ErrUnauthenticated, "ErrTokenExpired": sdk.ErrTokenExpired,
		"ErrForbidden": sdk.ErrForbidden, "ErrPermissionDenied": sdk.ErrPermissionDenied,
		"ErrFeatureGated": sdk.ErrFeatureGated, "ErrNotFound": sdk.ErrNotFound,
		"ErrQueryTimeout": sdk.ErrQueryTimeout, "ErrConflict": sdk.ErrConflict,
		"ErrValidation": sdk.ErrValidation, "ErrQueryExecution": sdk.ErrQueryExecution,
		"ErrRateLimited": sdk.ErrRateLimited, "ErrServiceUnavailable": sdk.ErrServiceUnavailable,
	}
	for _, tc := range []struct {
		name     string
		call     func() error
		status   int
		code     string
		sentinel string
	}{
		{"unknown item", func() error { _, err := c.GetItem(ctx, uuid.New()); return err }, 404, "not_found", "ErrNotFound"},
		{"unknown table", func() error { _, err := c.Query(ctx, "SELECT * FROM nope", nil); return err }, 404, "table_not_found", "ErrNotFound"},
		{"unknown job", func() error { _, err := c.SyncJob(ctx, "0123456789abcdef0123456789abcdef"); return err }, 404, "job_not_found", "ErrNotFound"},
		{"unknown connector", func() error { return c.DeleteConnector(ctx, uuid.NewString()) }, 404, "connector_not_found", "ErrNotFound"},
		{"write query", func() error { _, err := c.Query(ctx, "CREATE TABLE t (a INT)", nil); return err }, 403, "permission_denied", "ErrPermissionDenied"},
		{"bad SQL", func() error { _, err := c.Query(ctx, "SELEC 1", nil); return err }, 400, "query_execution_error", "ErrQueryExecution"},
		{"bad page size", func() error {
			for _, err := range c.Items(ctx, sdk.ListOptions{PageSize: 500}) {
				return err
			}
			return nil
		}, 400, "validation_error", "ErrValidation"},
		{"empty note", func() error { _, err := c.CreateNote(ctx, sdk.NoteCreate{}); return err }, 400, "validation_error", "ErrValidation"},
		{"other tenant", func() error { _, err := wrongTenant.Connectors(ctx); return err }, 403, "forbidden", "ErrForbidden"},
		{"search gated", func() error { _, err := bob.Search(ctx, "basil", sdk.SearchOptions{}); return err }, 403, "FEATURE_GATED", "ErrFeatureGated"},
		{"query timeout", func() error {
			_, err := c.Query(ctx, "SELECT count(*) FROM range(1000000000000) a", nil, sdk.Timeout(time.Second))
			return err
		}, 408, "query_timeout", "ErrQueryTimeout"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.call()
			var apiErr *sdk.APIError
			if !errors.As(err, &apiErr) {
				t.Fatalf("err %v (%T), want *sdk.APIError", err, err)
			}
			if apiErr.StatusCode != tc.status || apiErr.Code != tc.code || apiErr.Message == "" || apiErr.RequestID == "" {
				t.Fatalf("%+v, want %d %s", apiErr, tc.status, tc.code)
			}
			for name, s := range sentinels {
				if got := errors.Is(err, s); got != (name == tc.sentinel) {
					t.Errorf("errors.Is(err, %s) = %v", name, got)
				}
			}
		})
	}
}

// A free tenant's 31st data-platform request in a minute is refused with
// 429 and Retry-After; with retries off it surfaces at once.
func TestRateLimitedError(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	c := newUser(t, e, "ada@example.com", principal.TierFree, sdk.WithRetries(0, 0))
	ctx := ctxT(t)
	var err error
	for i := 0; i < 40 && err == nil; i++ {
		_, err = c.Connectors(ctx)
	}
	var apiErr *sdk.APIError
	if !errors.As(err, &apiErr) || !errors.Is(err, sdk.ErrRateLimited) {
		t.Fatalf("err %v, want ErrRateLimited", err)
	}
	if apiErr.StatusCode != 429 || apiErr.Code != "RATE_LIMITED" || apiErr.RetryAfter <= 0 || apiErr.RetryAfter > time.Minute {
		t.Fatalf("%+v", apiErr)
	}
	if n := c.wire.count("GET /api/data-platform/connectors"); n != 31 {
		t.Fatalf("%d requests, want 31 (no retries)", n)
	}
}

func TestErrorMatching(t *testing.T) {
	t.Parallel()
	notFound := &sdk.APIError{StatusCode: 404, Code: "connector_not_found"}
	if !errors.Is(notFound, sdk.ErrNotFound) || errors.Is(notFound, sdk.ErrValidation) {
		t.Fatal("sentinel matching")
	}
	if !errors.Is(notFound, &sdk.APIError{Code: "connector_not_found"}) || errors.Is(notFound, &sdk.APIError{Code: "not_found"}) {
		t.Fatal("matching by code")
	}
	wrapped := errors.Join(errors.New("context"), &sdk.APIError{StatusCode: 503, Message: "<html>bad gateway</html>"})
	if !errors.Is(wrapped, sdk.ErrServiceUnavailable) {
		t.Fatal("a bare 503 is ErrServiceUnavailable")
	}
	if errors.Is(context.Canceled, sdk.ErrNotFound) {
		t.Fatal("foreign errors match")
	}
	got := (&sdk.APIError{StatusCode: 400, Code: "invalid_grant", ErrorCode: "invalid_credentials", Message: "Invalid login credentials", RequestID: "r1"}).Error()
	if got != "strata: 400 invalid_grant (invalid_credentials): Invalid login credentials [request r1]" {
		t.Fatal(got)
	}
}

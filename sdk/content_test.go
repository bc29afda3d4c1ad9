package sdk_test

import (
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/stratahq/strata/impl/principal"
	"github.com/stratahq/strata/sdk"
)

// notes creates n notes one second apart (the list is newest first) and
// returns their ids, oldest first.
func notes(t *testing.T, c *client, n int, prefix string) []uuid.UUID {
	t.Helper()
	var ids []uuid.UUID
	for i := range n {
		c.env.Clock.Advance(time.Second)
		it, err := c.CreateNote(ctxT(t), sdk.NoteCreate{Body: fmt.Sprintf("%s %d", prefix, i)})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, it.ID)
	}
	return ids
}

func TestItemsPages(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	c := newUser(t, e, "ada@example.com", principal.TierPro)
	ctx := ctxT(t)
	ids := notes(t, c, 7, "note")
	slices.Reverse(ids) // newest first, as listed

	var got []uuid.UUID
	for it, err := range c.Items(ctx, sdk.ListOptions{PageSize: 3}) {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, it.ID)
	}
	if !slices.Equal(got, ids) {
		t.Fatalf("got %v\nwant %v", got, ids)
	}
	if n := c.wire.count("GET /api/content?limit=3"); n != 3 {
		t.Fatalf("%d pages fetched, want 3:\n%s", n, c.wire)
	}

	// Breaking out of the loop fetches nothing more.
	before := c.wire.count("GET /api/content?")
	n := 0
	for _, err := range c.Items(ctx, sdk.ListOptions{PageSize: 3}) {
		if err != nil {
			t.Fatal(err)
		}
		if n++; n == 4 {
			break
		}
	}
	if got := c.wire.count("GET /api/content?") - before; got != 2 {
		t.Fatalf("%d pages fetched for 4 items, want 2", got)
	}

	// Filters reach the server.
	var titles []string
	for it, err := range c.Items(ctx, sdk.ListOptions{Query: "NOTE 3", Type: sdk.Note}) {
		if err != nil {
			t.Fatal(err)
		}
		titles = append(titles, it.Title)
	}
	if !slices.Equal(titles, []string{"note 3"}) {
		t.Fatalf("titles %v", titles)
	}
}

// The list changes between pages: items created at the front and deleted
// behind the reader shift the offsets; every original item still comes
// exactly once.
func TestItemsWhileTheListChanges(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := ctxT(t)
	for _, tc := range []struct {
		name   string
		change func(c *client, listed []uuid.UUID)
	}{
		{"two created, one seen deleted", func(c *client, listed []uuid.UUID) {
			notes(t, c, 2, "new")
			if err := c.DeleteItem(ctx, listed[1]); err != nil {
				t.Fatal(err)
			}
		}},
		{"two seen deleted", func(c *client, listed []uuid.UUID) {
			for _, id := range listed[:2] {
				if err := c.DeleteItem(ctx, id); err != nil {
					t.Fatal(err)
				}
			}
		}},
		{"three created", func(c *client, _ []uuid.UUID) { notes(t, c, 3, "new") }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newUser(t, e, uuid.NewString()+"@example.com", principal.TierPro)
			listed := notes(t, c, 7, "note")
			slices.Reverse(listed)
			var got []uuid.UUID
			for it, err := range c.Items(ctx, sdk.ListOptions{PageSize: 3}) {
				if err != nil {
					t.Fatal(err)
				}
				got = append(got, it.ID)
				if len(got) == 3 { // between the first and the second page
					tc.change(c, listed)
				}
			}
			if !slices.Equal(got, listed) {
				t.Fatalf("got %v\nwant %v", got, listed)
			}
		})
	}
}

func TestItemsError(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	c := newUser(t, e, "ada@example.com", principal.TierPro)
	n := 0
	for _, err := range c.Items(ctxT(t), sdk.ListOptions{PageSize: 101}) {
		n++
		if !errors.Is(err, sdk.ErrValidation) {
			t.Fatalf("err %v", err)
		}
	}
	if n != 1 {
		t.Fatalf("%d pairs after an error, want 1", n)
	}
}

func TestContentWrappers(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	c := newUser(t, e, "ada@example.com", principal.TierPro)
	ctx := ctxT(t)
	basil, err := c.CreateNote(ctx, sdk.NoteCreate{Body: "Repot the basil and water the basil seedlings", Title: sdk.Ptr("Basil"), Tags: sdk.Ptr([]string{"garden"})})
	if err != nil {
		t.Fatal(err)
	}
	if basil.Title != "Basil" || !slices.Equal(basil.Tags, []string{"garden"}) || basil.ProcessingStatus != sdk.ProcessingStatusPending {
		t.Fatalf("%+v", basil)
	}
	other, err := c.CreateNote(ctx, sdk.NoteCreate{Body: "Basil seedlings need water and sun"})
	if err != nil {
		t.Fatal(err)
	}
	updated, err := c.UpdateItem(ctx, basil.ID, sdk.ContentUpdate{Title: sdk.Ptr("Basil, repotted")})
	if err != nil || updated.Title != "Basil, repotted" || updated.Body != basil.Body {
		t.Fatalf("%+v %v", updated, err)
	}
	got, err := c.GetItem(ctx, basil.ID)
	if err != nil || got.Title != "Basil, repotted" {
		t.Fatalf("%+v %v", got, err)
	}
	// Related and search need the pipeline's embeddings.
	deadline := time.Now().Add(20 * time.Second)
	for {
		a, err1 := c.GetItem(ctx, basil.ID)
		b, err2 := c.GetItem(ctx, other.ID)
		if err1 != nil || err2 != nil {
			t.Fatal(err1, err2)
		}
		if a.ProcessingStatus == sdk.ProcessingStatusProcessed && b.ProcessingStatus == sdk.ProcessingStatusProcessed {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("not processed: %s %s", a.ProcessingStatus, b.ProcessingStatus)
		}
		time.Sleep(20 * time.Millisecond)
	}
	related, err := c.Related(ctx, basil.ID, 5)
	if err != nil || len(related) != 1 || related[0].ID != other.ID {
		t.Fatalf("related %+v %v", related, err)
	}
	found, err := c.Search(ctx, "basil seedlings", sdk.SearchOptions{Limit: 5, Type: sdk.Note})
	if err != nil || found.Total != 2 || len(found.Data) != 2 {
		t.Fatalf("search %+v %v", found, err)
	}
	if err := c.DeleteItem(ctx, basil.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := c.GetItem(ctx, basil.ID); !errors.Is(err, sdk.ErrNotFound) {
		t.Fatalf("after delete: %v", err)
	}
	if err := c.DeleteItem(ctx, basil.ID); !errors.Is(err, sdk.ErrNotFound) {
		t.Fatalf("second delete: %v", err)
	}
	if _, err := c.Search(ctx, "", sdk.SearchOptions{}); err == nil {
		t.Fatal("empty search accepted")
	}
}

// TestUpdateItemIsRetried: an update sets fields to given values, so a 503
// is retried, once, and the update lands once.
func TestUpdateItemIsRetried(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	c := newUser(t, e, "ada@example.com", principal.TierPro)
	ctx := ctxT(t)
	note, err := c.CreateNote(ctx, sdk.NoteCreate{Body: "Repot the basil"})
	if err != nil {
		t.Fatal(err)
	}
	ref := &refuser{base: c.wire, pending: []string{"PATCH /api/content/"}}
	r := newClient(t, e, &wire{base: ref}, sdk.WithPassword(c.email, password))
	s := &sleeper{}
	sdk.SetSleep(r, s.sleep)
	updated, err := r.UpdateItem(ctx, note.ID, sdk.ContentUpdate{Title: sdk.Ptr("Basil")})
	if err != nil || updated.Title != "Basil" {
		t.Fatalf("update: %+v, %v", updated, err)
	}
	if len(s.got()) != 1 || c.wire.count("PATCH /api/content/"+note.ID.String()+" 200") != 1 {
		t.Fatalf("waits %v, want one retry:\n%s", s.got(), c.wire)
	}
}

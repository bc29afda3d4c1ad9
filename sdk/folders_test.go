package sdk_test

import (
	"errors"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/uuid"

	"github.com/stratahq/strata/impl/principal"
	"github.com/stratahq/strata/sdk"
)

// folderNames returns the user's folders as "name" or "name<parent", in
// the server's order.
func folderNames(t *testing.T, c *client) []string {
	t.Helper()
	folders, err := c.Folders(ctxT(t))
	if err != nil {
		t.Fatal(err)
	}
	byID := map[uuid.UUID]string{}
	for _, f := range folders {
		byID[f.ID] = f.Name
	}
	var out []string
	for _, f := range folders {
		if f.ParentID == nil {
			out = append(out, f.Name)
		} else {
			out = append(out, f.Name+"<"+byID[*f.ParentID])
		}
	}
	return out
}

// mkFolder creates a folder, under parent unless it is nil.
func mkFolder(t *testing.T, c *sdk.Client, name string, parent *uuid.UUID) sdk.Folder {
	t.Helper()
	f, err := c.CreateFolder(ctxT(t), sdk.FolderCreate{Name: name, ParentID: parent})
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func TestFolders(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	c := newUser(t, e, "ada@example.com", principal.TierPro)
	ctx := ctxT(t)

	work := mkFolder(t, c.Client, "Work", nil)
	projects := mkFolder(t, c.Client, "Projects", &work.ID)
	archive := mkFolder(t, c.Client, "Archive", nil)
	if work.ParentID != nil || projects.ParentID == nil || *projects.ParentID != work.ID {
		t.Fatalf("work %+v, projects %+v", work, projects)
	}
	if got, want := folderNames(t, c), []string{"Archive", "Projects<Work", "Work"}; !slices.Equal(got, want) {
		t.Fatalf("folders %v, want %v", got, want)
	}

	// Rename keeps the parent; move changes only the parent.
	plans, err := c.RenameFolder(ctx, projects.ID, "Plans")
	if err != nil {
		t.Fatal(err)
	}
	if plans.Name != "Plans" || plans.ParentID == nil || *plans.ParentID != work.ID {
		t.Fatalf("renamed: %+v", plans)
	}
	if plans, err = c.MoveFolder(ctx, plans.ID, nil); err != nil || plans.ParentID != nil || plans.Name != "Plans" {
		t.Fatalf("moved to the root: %+v, %v", plans, err)
	}
	if plans, err = c.MoveFolder(ctx, plans.ID, &archive.ID); err != nil || plans.ParentID == nil || *plans.ParentID != archive.ID {
		t.Fatalf("moved under Archive: %+v, %v", plans, err)
	}
	if got, want := folderNames(t, c), []string{"Archive", "Plans<Archive", "Work"}; !slices.Equal(got, want) {
		t.Fatalf("folders %v, want %v", got, want)
	}

	// The server's refusals arrive as *APIError, matching the sentinels.
	if _, err := c.MoveFolder(ctx, archive.ID, &plans.ID); !errors.Is(err, sdk.ErrConflict) {
		t.Fatalf("move under its own subfolder: %v, want ErrConflict", err)
	}
	if _, err := c.CreateFolder(ctx, sdk.FolderCreate{Name: "Orphan", ParentID: sdk.Ptr(uuid.New())}); !errors.Is(err, sdk.ErrValidation) {
		t.Fatalf("unknown parent: %v, want ErrValidation", err)
	}
	if _, err := c.CreateFolder(ctx, sdk.FolderCreate{Name: "  "}); !errors.Is(err, sdk.ErrValidation) {
		t.Fatalf("blank name: %v, want ErrValidation", err)
	}
	missing := uuid.New()
	err = c.DeleteFolder(ctx, missing)
	var apiErr *sdk.APIError
	if !errors.Is(err, sdk.ErrNotFound) || !errors.As(err, &apiErr) || apiErr.StatusCode != http.StatusNotFound ||
		apiErr.Code != "not_found" || apiErr.RequestID == "" {
		t.Fatalf("delete an unknown folder: %#v, want a 404 not_found *APIError", err)
	}
	if _, err := c.RenameFolder(ctx, missing, "x"); !errors.Is(err, sdk.ErrNotFound) {
		t.Fatalf("rename an unknown folder: %v, want ErrNotFound", err)
	}

	// Another user sees none of it and cannot touch it.
	bob := newUser(t, e, "bob@example.com", principal.TierPro)
	if got := folderNames(t, bob); len(got) != 0 {
		t.Fatalf("bob sees %v", got)
	}
	if err := bob.DeleteFolderAll(ctx, work.ID); !errors.Is(err, sdk.ErrNotFound) {
		t.Fatalf("bob deletes ada's folder: %v, want ErrNotFound", err)
	}

	// A folder with something in it is deleted only with DeleteFolderAll,
	// and takes its items along.
	note, err := c.CreateNote(ctx, sdk.NoteCreate{Body: "Q3 plan", FolderID: &plans.ID})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.DeleteFolder(ctx, archive.ID); !errors.Is(err, sdk.ErrConflict) {
		t.Fatalf("delete a non-empty folder: %v, want ErrConflict", err)
	}
	if err := c.DeleteFolderAll(ctx, archive.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := c.GetItem(ctx, note.ID); !errors.Is(err, sdk.ErrNotFound) {
		t.Fatalf("the note in the deleted folder: %v, want ErrNotFound", err)
	}
	if err := c.DeleteFolder(ctx, work.ID); err != nil {
		t.Fatal(err)
	}
	if got := folderNames(t, c); len(got) != 0 {
		t.Fatalf("folders left: %v", got)
	}
	if n := c.wire.count("DELETE /api/content/folders/" + archive.ID.String() + "?recursive=true 204"); n != 1 {
		t.Fatalf("DeleteFolderAll sent %d recursive deletes:\n%s", n, c.wire)
	}
}

// refuser answers the first request of each listed "METHOD /path-prefix"
// with a bare 503, as an overloaded proxy would, and passes everything
// else on to the server.
type refuser struct {
	base http.RoundTripper

	mu      sync.Mutex
	pending []string
}

func (r *refuser) RoundTrip(req *http.Request) (*http.Response, error) {
	line := req.Method + " " + req.URL.Path
	r.mu.Lock()
	refuse := false
	for i, p := range r.pending {
		if strings.HasPrefix(line, p) {
			r.pending = slices.Delete(r.pending, i, i+1)
			refuse = true
			break
		}
	}
	r.mu.Unlock()
	if !refuse {
		return r.base.RoundTrip(req)
	}
	if req.Body != nil {
		_, _ = io.Copy(io.Discard, req.Body)
		_ = req.Body.Close()
	}
	return &http.Response{
		StatusCode: http.StatusServiceUnavailable, Status: "503 Service Unavailable", Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: http.Header{"Content-Type": {"text/plain"}}, Body: io.NopCloser(strings.NewReader("overloaded")), Request: req,
	}, nil
}

// A rename is safe to repeat and is retried after a 503; a create is not.
func TestFolderRetries(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	c := newUser(t, e, "ada@example.com", principal.TierPro)
	ctx := ctxT(t)
	work := mkFolder(t, c.Client, "Work", nil)
	ref := &refuser{base: c.wire, pending: []string{"PATCH /api/content/folders/", "POST /api/content/folders"}}
	r := newClient(t, e, &wire{base: ref}, sdk.WithPassword(c.email, password))
	s := &sleeper{}
	sdk.SetSleep(r, s.sleep)

	renamed, err := r.RenameFolder(ctx, work.ID, "Job")
	if err != nil || renamed.Name != "Job" {
		t.Fatalf("rename: %+v, %v", renamed, err)
	}
	if len(s.got()) != 1 || c.wire.count("PATCH /api/content/folders/"+work.ID.String()+" 200") != 1 {
		t.Fatalf("waits %v, want one retry:\n%s", s.got(), c.wire)
	}

	_, err = r.CreateFolder(ctx, sdk.FolderCreate{Name: "Home"})
	if !errors.Is(err, sdk.ErrServiceUnavailable) {
		t.Fatalf("create: %v, want ErrServiceUnavailable (not retried)", err)
	}
	if len(s.got()) != 1 || c.wire.count("POST /api/content/folders ") != 1 { // Work's only
		t.Fatalf("waits %v, the create was retried:\n%s", s.got(), c.wire)
	}
	if got := folderNames(t, c); !slices.Equal(got, []string{"Job"}) {
		t.Fatalf("folders %v, want [Job]", got)
	}
}

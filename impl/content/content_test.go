package content_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stratahq/strata/impl/testenv"
)

type item struct {
	ID               string   `json:"id"`
	Type             string   `json:"type"`
	Title            string   `json:"title"`
	Body             string   `json:"body"`
	Summary          string   `json:"summary"`
	FolderID         *string  `json:"folderId"`
	Tags             []string `json:"tags"`
	MediaKind        *string  `json:"mediaKind"`
	MediaURL         *string  `json:"mediaUrl"`
	ProcessingStatus string   `json:"processingStatus"`
	AiTags           []string `json:"aiTags"`
	CreatedAt        string   `json:"createdAt"`
	UpdatedAt        string   `json:"updatedAt"`
}

type page struct {
	Data  []item `json:"data"`
	Total int    `json:"total"`
}

func createNote(t *testing.T, e *testenv.Env, token, body string) item {
	t.Helper()
	r := e.Call("POST", "/api/content/notes", body, testenv.Bearer(token)...)
	if r.Status != http.StatusCreated {
		t.Fatalf("create note: %d %s", r.Status, r.Body)
	}
	var it item
	r.Decode(t, &it)
	return it
}

func TestNoteLifecycle(t *testing.T) {
	t.Parallel()
	e := testenv.New(t, nil)
	s := e.NewUser("notes@example.com")
	auth := testenv.Bearer(s.AccessToken)

	long := strings.Repeat("word ", 30)
	n := createNote(t, e, s.AccessToken, `{"body":"\n  First line here  \nsecond line","tags":["a"," a ","b",""]}`)
	if n.Type != "note" || n.Title != "First line here" || n.ProcessingStatus != "pending" || n.MediaKind != nil ||
		n.MediaURL != nil || len(n.Tags) != 2 || n.FolderID != nil || n.CreatedAt != "2026-11-21T12:00:00Z" {
		t.Fatalf("created %+v", n)
	}
	n2 := createNote(t, e, s.AccessToken, `{"body":"`+long+`"}`)
	if len([]rune(n2.Title)) != 80 {
		t.Fatalf("default title %q is not the first 80 characters", n2.Title)
	}

	r := e.Call("GET", "/api/content/"+n.ID, "", auth...)
	var got item
	r.Decode(t, &got)
	if r.Status != 200 || got.ID != n.ID || got.Body != n.Body || got.AiTags == nil {
		t.Fatalf("get: %d %s", r.Status, r.Body)
	}

	// PATCH: title, tags; nothing else changes; updatedAt moves.
	e.Clock.Advance(time.Minute)
	r = e.Call("PATCH", "/api/content/"+n.ID, `{"title":"Renamed","tags":["x"]}`, auth...)
	r.Decode(t, &got)
	if r.Status != 200 || got.Title != "Renamed" || got.Tags[0] != "x" || got.Body != n.Body || got.UpdatedAt != "2026-11-21T12:01:00Z" {
		t.Fatalf("patch: %d %s", r.Status, r.Body)
	}
	// A patch that changes nothing keeps updatedAt.
	e.Clock.Advance(time.Minute)
	r = e.Call("PATCH", "/api/content/"+n.ID, `{"title":"Renamed"}`, auth...)
	r.Decode(t, &got)
	if got.UpdatedAt != "2026-11-21T12:01:00Z" {
		t.Fatalf("no-op patch moved updatedAt to %s", got.UpdatedAt)
	}
	testenv.ExpectError(t, e.Call("PATCH", "/api/content/"+n.ID, `{"body":"   "}`, auth...), 400, "validation_error")
	testenv.ExpectError(t, e.Call("PATCH", "/api/content/"+n.ID, `{"color":"red"}`, auth...), 400, "validation_error")

	if r := e.Call("DELETE", "/api/content/"+n.ID, "", auth...); r.Status != 204 {
		t.Fatalf("delete: %d %s", r.Status, r.Body)
	}
	testenv.ExpectError(t, e.Call("GET", "/api/content/"+n.ID, "", auth...), 404, "not_found")
	testenv.ExpectError(t, e.Call("DELETE", "/api/content/"+n.ID, "", auth...), 404, "not_found")
	testenv.ExpectError(t, e.Call("PATCH", "/api/content/"+n.ID, `{"title":"x"}`, auth...), 404, "not_found")
}

func TestCreateNoteValidation(t *testing.T) {
	t.Parallel()
	e := testenv.New(t, nil)
	s := e.NewUser("v@example.com")
	auth := testenv.Bearer(s.AccessToken)
	for name, body := range map[string]string{
		"empty body":       `{"body":""}`,
		"blank body":       `{"body":"  \n "}`,
		"no body":          `{"title":"t"}`,
		"unknown field":    `{"body":"b","mood":"happy"}`,
		"bad folder id":    `{"body":"b","folderId":"nope"}`,
		"unknown folder":   `{"body":"b","folderId":"6f1c2d3e-4b5a-4c6d-8e7f-9a0b1c2d3e4f"}`,
		"title too long":   `{"body":"b","title":"` + strings.Repeat("t", 201) + `"}`,
		"tags not strings": `{"body":"b","tags":[1]}`,
	} {
		r := e.Call("POST", "/api/content/notes", body, auth...)
		if r.Status != 400 || r.JSON(t)["error"] != "validation_error" {
			t.Errorf("%s: %d %s", name, r.Status, r.Body)
		}
	}
	r := e.Call("POST", "/api/content/notes", "body=x", append(auth, "Content-Type", "application/x-www-form-urlencoded")...)
	testenv.ExpectError(t, r, 415, "unsupported_media_type")
}

func TestItemsArePrivateToTheirUser(t *testing.T) {
	t.Parallel()
	e := testenv.New(t, nil)
	alice := e.NewUser("alice@example.com")
	bob := e.NewUser("bob@example.com")
	n := createNote(t, e, alice.AccessToken, `{"body":"alice's secret"}`)
	bobAuth := testenv.Bearer(bob.AccessToken)
	testenv.ExpectError(t, e.Call("GET", "/api/content/"+n.ID, "", bobAuth...), 404, "not_found")
	testenv.ExpectError(t, e.Call("PATCH", "/api/content/"+n.ID, `{"title":"pwned"}`, bobAuth...), 404, "not_found")
	testenv.ExpectError(t, e.Call("DELETE", "/api/content/"+n.ID, "", bobAuth...), 404, "not_found")
	var p page
	e.Call("GET", "/api/content?q=secret", "", bobAuth...).Decode(t, &p)
	if p.Total != 0 || len(p.Data) != 0 {
		t.Fatalf("bob lists alice's items: %+v", p)
	}
	// Alice's item is untouched.
	var got item
	e.Call("GET", "/api/content/"+n.ID, "", testenv.Bearer(alice.AccessToken)...).Decode(t, &got)
	if got.Title != n.Title {
		t.Fatalf("alice's item changed: %+v", got)
	}
	// Bob cannot file his note into Alice's folder.
	r := e.Call("POST", "/api/content/folders", `{"name":"private"}`, testenv.Bearer(alice.AccessToken)...)
	folder := r.JSON(t)["id"].(string)
	testenv.ExpectError(t, e.Call("POST", "/api/content/notes", `{"body":"b","folderId":"`+folder+`"}`, bobAuth...), 400, "validation_error")
	testenv.ExpectError(t, e.Call("DELETE", "/api/content/folders/"+folder, "", bobAuth...), 404, "not_found")
}

func TestListPagingFiltersAndSearch(t *testing.T) {
	t.Parallel()
	e := testenv.New(t, nil)
	s := e.NewUser("list@example.com")
	auth := testenv.Bearer(s.AccessToken)
	folder := e.Call("POST", "/api/content/folders", `{"name":"Work"}`, auth...).JSON(t)["id"].(string)
	var ids []string
	for i := range 25 {
		body := fmt.Sprintf(`{"body":"note number %02d about Strawberries","title":"n%02d"}`, i, i)
		if i%5 == 0 {
			body = fmt.Sprintf(`{"body":"Quarterly REPORT draft %d","folderId":"%s"}`, i, folder)
		}
		ids = append(ids, createNote(t, e, s.AccessToken, body).ID)
		e.Clock.Advance(time.Second)
	}
	var p page
	e.Call("GET", "/api/content", "", auth...).Decode(t, &p)
	if p.Total != 25 || len(p.Data) != 20 || p.Data[0].ID != ids[24] || p.Data[19].ID != ids[5] {
		t.Fatalf("default page: total %d, %d items", p.Total, len(p.Data))
	}
	e.Call("GET", "/api/content?limit=10&offset=20", "", auth...).Decode(t, &p)
	if p.Total != 25 || len(p.Data) != 5 || p.Data[4].ID != ids[0] {
		t.Fatalf("last page: %+v", p)
	}
	e.Call("GET", "/api/content?folderId="+folder, "", auth...).Decode(t, &p)
	if p.Total != 5 {
		t.Fatalf("folder filter: %d", p.Total)
	}
	e.Call("GET", "/api/content?type=note&limit=1", "", auth...).Decode(t, &p)
	if p.Total != 25 || len(p.Data) != 1 {
		t.Fatalf("type filter: %+v", p)
	}
	e.Call("GET", "/api/content?type=photo", "", auth...).Decode(t, &p)
	if p.Total != 0 || p.Data == nil {
		t.Fatalf("photo filter: %+v", p)
	}
	for q, want := range map[string]int{
		"report": 5, "quarterly report": 5, "STRAWBERR": 20, "berries": 20, "n0": 8, "%": 0, "_": 0, "zz": 0, `"`: 0, "number 07": 1, "ab": 20,
	} {
		r := e.Call("GET", "/api/content?q="+urlQuery(q), "", auth...)
		if r.Status != http.StatusOK {
			t.Fatalf("q=%q: %d %s", q, r.Status, r.Body)
		}
		p = page{}
		r.Decode(t, &p)
		if p.Total != want || len(p.Data) != min(want, 20) {
			t.Errorf("q=%q: total %d, want %d", q, p.Total, want)
		}
	}
	for _, bad := range []string{"limit=0", "limit=101", "offset=-1", "type=video", "folderId=abc", "limit=x"} {
		testenv.ExpectError(t, e.Call("GET", "/api/content?"+bad, "", auth...), 400, "validation_error")
	}
}

func urlQuery(s string) string {
	r := strings.NewReplacer(" ", "%20", "%", "%25", `"`, "%22", "_", "_")
	return r.Replace(s)
}

func TestFolders(t *testing.T) {
	t.Parallel()
	e := testenv.New(t, nil)
	s := e.NewUser("folders@example.com")
	auth := testenv.Bearer(s.AccessToken)
	mk := func(body string) map[string]any {
		r := e.Call("POST", "/api/content/folders", body, auth...)
		if r.Status != 201 {
			t.Fatalf("create folder %s: %d %s", body, r.Status, r.Body)
		}
		return r.JSON(t)
	}
	root := mk(`{"name":"Root"}`)
	child := mk(`{"name":"Child","parentId":"` + root["id"].(string) + `"}`)
	grandchild := mk(`{"name":"Grandchild","parentId":"` + child["id"].(string) + `"}`)
	if root["parentId"] != nil || child["parentId"] != root["id"] {
		t.Fatalf("parents: %v %v", root, child)
	}
	var list struct{ Data []map[string]any }
	e.Call("GET", "/api/content/folders", "", auth...).Decode(t, &list)
	if len(list.Data) != 3 || list.Data[0]["name"] != "Child" {
		t.Fatalf("list (by name): %+v", list)
	}
	// Rename; move to root with null; a cycle is 409.
	r := e.Call("PATCH", "/api/content/folders/"+child["id"].(string), `{"name":"Kid","parentId":null}`, auth...)
	if r.Status != 200 || r.JSON(t)["parentId"] != nil || r.JSON(t)["name"] != "Kid" {
		t.Fatalf("patch folder: %d %s", r.Status, r.Body)
	}
	r = e.Call("PATCH", "/api/content/folders/"+child["id"].(string), `{"parentId":"`+grandchild["id"].(string)+`"}`, auth...)
	testenv.ExpectError(t, r, 409, "conflict")
	r = e.Call("PATCH", "/api/content/folders/"+child["id"].(string), `{"parentId":"`+child["id"].(string)+`"}`, auth...)
	testenv.ExpectError(t, r, 409, "conflict")
	testenv.ExpectError(t, e.Call("POST", "/api/content/folders", `{"name":""}`, auth...), 400, "validation_error")

	// Deleting a folder with content needs ?recursive=true.
	note := createNote(t, e, s.AccessToken, `{"body":"filed","folderId":"`+grandchild["id"].(string)+`"}`)
	testenv.ExpectError(t, e.Call("DELETE", "/api/content/folders/"+child["id"].(string), "", auth...), 409, "conflict")
	if r := e.Call("DELETE", "/api/content/folders/"+child["id"].(string)+"?recursive=true", "", auth...); r.Status != 204 {
		t.Fatalf("recursive delete: %d %s", r.Status, r.Body)
	}
	testenv.ExpectError(t, e.Call("GET", "/api/content/"+note.ID, "", auth...), 404, "not_found")
	e.Call("GET", "/api/content/folders", "", auth...).Decode(t, &list)
	if len(list.Data) != 1 || list.Data[0]["id"] != root["id"] {
		t.Fatalf("after recursive delete: %+v", list)
	}
	if r := e.Call("DELETE", "/api/content/folders/"+root["id"].(string), "", auth...); r.Status != 204 {
		t.Fatalf("delete empty folder: %d", r.Status)
	}
	testenv.ExpectError(t, e.Call("DELETE", "/api/content/folders/"+root["id"].(string), "", auth...), 404, "not_found")

	// Moving a note between folders and to the root.
	f := mk(`{"name":"F"}`)
	n := createNote(t, e, s.AccessToken, `{"body":"mobile"}`)
	r = e.Call("PATCH", "/api/content/"+n.ID, `{"folderId":"`+f["id"].(string)+`"}`, auth...)
	var moved item
	r.Decode(t, &moved)
	if moved.FolderID == nil || *moved.FolderID != f["id"] {
		t.Fatalf("move into folder: %s", r.Body)
	}
	e.Call("PATCH", "/api/content/"+n.ID, `{"folderId":null}`, auth...).Decode(t, &moved)
	if moved.FolderID != nil {
		t.Fatalf("move to root: %+v", moved)
	}
	raw, _ := json.Marshal(moved)
	if !strings.Contains(string(raw), `"folderId":null`) {
		t.Fatalf("folderId must be present as null: %s", raw)
	}
}

// A folder id that no longer exists is 400 validation_error naming the
// field, on every write that files something into a folder.
func TestDeletedFolderIsAValidationError(t *testing.T) {
	t.Parallel()
	e := testenv.New(t, nil)
	s := e.NewUser("gone@example.com")
	auth := testenv.Bearer(s.AccessToken)
	gone := e.Call("POST", "/api/content/folders", `{"name":"Gone"}`, auth...).JSON(t)["id"].(string)
	kept := e.Call("POST", "/api/content/folders", `{"name":"Kept"}`, auth...).JSON(t)["id"].(string)
	if r := e.Call("DELETE", "/api/content/folders/"+gone+"?recursive=true", "", auth...); r.Status != 204 {
		t.Fatalf("delete folder: %d %s", r.Status, r.Body)
	}
	n := createNote(t, e, s.AccessToken, `{"body":"at the root"}`)
	expect := func(what string, r testenv.Response, field string) {
		t.Helper()
		testenv.ExpectError(t, r, 400, "validation_error")
		msg, _ := r.JSON(t)["message"].(string)
		if !strings.Contains(msg, `"`+field+`"`) || strings.Contains(msg, gone) {
			t.Errorf("%s: message %q must name %s and not echo the id", what, msg, field)
		}
	}
	expect("create note", e.Call("POST", "/api/content/notes", `{"body":"b","folderId":"`+gone+`"}`, auth...), "folderId")
	expect("move note", e.Call("PATCH", "/api/content/"+n.ID, `{"folderId":"`+gone+`"}`, auth...), "folderId")
	expect("upload", upload(t, e, s.AccessToken, "/api/content/voice-notes",
		part{name: "audio", filename: "a.wav", data: bytes.NewReader(wavBytes(100))}, field("folderId", gone)), "folderId")
	expect("create folder", e.Call("POST", "/api/content/folders", `{"name":"x","parentId":"`+gone+`"}`, auth...), "parentId")
	expect("move folder", e.Call("PATCH", "/api/content/folders/"+kept, `{"parentId":"`+gone+`"}`, auth...), "parentId")

	var p page
	e.Call("GET", "/api/content", "", auth...).Decode(t, &p)
	if p.Total != 1 || p.Data[0].FolderID != nil {
		t.Fatalf("refused writes changed something: %+v", p)
	}
	if files := blobFiles(t, e); len(files) != 0 {
		t.Fatalf("the refused upload left a blob: %v", files)
	}
}

// Creating notes in a folder while it is deleted recursively: each note is
// either created before the deletion (and deleted with the folder) or
// refused with 400; never a 500 from the foreign key.
func TestNotesRacingARecursiveFolderDeletion(t *testing.T) {
	t.Parallel()
	e := testenv.New(t, nil)
	s := e.NewUser("race@example.com")
	auth := testenv.Bearer(s.AccessToken)
	folder := e.Call("POST", "/api/content/folders", `{"name":"Doomed"}`, auth...).JSON(t)["id"].(string)
	const n = 15
	results := make(chan testenv.Response, n+1)
	start := make(chan struct{})
	for range n {
		go func() {
			<-start
			results <- e.Call("POST", "/api/content/notes", `{"body":"racing","folderId":"`+folder+`"}`, auth...)
		}()
	}
	go func() {
		<-start
		results <- e.Call("DELETE", "/api/content/folders/"+folder+"?recursive=true", "", auth...)
	}()
	close(start)
	var created []string
	for range n + 1 {
		r := <-results
		switch {
		case r.Status == 201:
			created = append(created, r.JSON(t)["id"].(string))
		case r.Status == 204:
		case r.Status == 400 && r.JSON(t)["error"] == "validation_error":
		default:
			t.Errorf("%d %s", r.Status, r.Body)
		}
	}
	for _, id := range created {
		testenv.ExpectError(t, e.Call("GET", "/api/content/"+id, "", auth...), 404, "not_found")
	}
}

// q matches case-insensitively beyond ASCII, short queries (answered
// without the trigram index) included; a q with NUL is 400 naming it.
func TestListSearchFoldsUnicodeCaseAndRefusesNUL(t *testing.T) {
	t.Parallel()
	e := testenv.New(t, nil)
	s := e.NewUser("fold@example.com")
	auth := testenv.Bearer(s.AccessToken)
	for _, body := range []string{"une école", "ÉCOLE NORMALE", "ΣΊΣΥΦΟΣ", "ǅemal", "plain ascii"} {
		createNote(t, e, s.AccessToken, `{"body":"`+body+`"}`)
	}
	for q, want := range map[string]int{
		"É": 2, "é": 2, "éC": 2, "Éc": 2, "école": 2, "ÉCOLE": 2, "σ": 1, "ς": 1, "σί": 1, "ǆ": 1, "Ǆ": 1, "PL": 1, "x": 0,
	} {
		r := e.Call("GET", "/api/content?q="+url.QueryEscape(q), "", auth...)
		var p page
		r.Decode(t, &p)
		if r.Status != 200 || p.Total != want {
			t.Errorf("q=%q: %d, total %d, want %d", q, r.Status, p.Total, want)
		}
	}
	for _, q := range []string{"%00", "a%00b", "%00%00%00"} {
		r := e.Call("GET", "/api/content?q="+q, "", auth...)
		testenv.ExpectError(t, r, 400, "validation_error")
		if msg := r.JSON(t)["message"].(string); !strings.Contains(msg, `"q"`) {
			t.Errorf("q=%s: message %q does not name q", q, msg)
		}
	}
}

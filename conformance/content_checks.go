package conformance

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"mime/multipart"
	"net/http"
	"strings"
	"time"

	"github.com/coder/websocket"
)

func contentChecks() []Check {
	return []Check{
		{"content/note-lifecycle", checkNoteLifecycle},
		{"content/list-validation", checkListValidation},
		{"content/folders", checkFolders},
		{"content/voice-note-upload-and-media", checkVoiceNoteUpload},
		{"content/events-websocket", checkEventsWebSocket},
		{"content/related-and-search", checkRelatedAndSearch},
	}
}

type contentItem struct {
	ID               string  `json:"id"`
	Title            string  `json:"title"`
	ProcessingStatus string  `json:"processingStatus"`
	MediaURL         *string `json:"mediaUrl"`
}

func (s *Suite) createNote(ctx context.Context, token, body string) (contentItem, error) {
	var it contentItem
	resp, err := s.Do(ctx, Request{Method: http.MethodPost, Path: "/api/content/notes", Header: authHeader(token),
		Body: jsonBody(map[string]string{"body": body}), ContentType: "application/json"})
	if err != nil {
		return it, err
	}
	if resp.Status != http.StatusCreated || json.Unmarshal(resp.Body, &it) != nil || it.ID == "" {
		return it, fmt.Errorf("create note: %d %s", resp.Status, snippet(resp.Body))
	}
	return it, nil
}

// waitProcessed polls the item until the pipeline has processed it (or
// failed), for at most two minutes of real time.
func (s *Suite) waitProcessed(ctx context.Context, token, id string) error {
	deadline := time.Now().Add(2 * time.Minute)
	for {
		resp, err := s.Do(ctx, Request{Method: http.MethodGet, Path: "/api/content/" + id, Header: authHeader(token)})
		if err != nil {
			return err
		}
		var it contentItem
		if resp.Status != http.StatusOK || json.Unmarshal(resp.Body, &it) != nil {
			return fmt.Errorf("get item: %d %s", resp.Status, snippet(resp.Body))
		}
		switch it.ProcessingStatus {
		case "processed":
			return nil
		case "failed":
			return fmt.Errorf("item %s failed processing: %s", id, snippet(resp.Body))
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("item %s still %s after 2 minutes", id, it.ProcessingStatus)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond): // polling interval
		}
	}
}

func checkNoteLifecycle(ctx context.Context, s *Suite) error {
	sess, err := s.SignIn(ctx)
	if err != nil {
		return err
	}
	h := authHeader(sess.AccessToken)
	marker := fmt.Sprintf("conformance-%d", time.Now().UnixNano())
	it, err := s.createNote(ctx, sess.AccessToken, "First line "+marker+"\nmore text")
	if err != nil {
		return err
	}
	if it.Title != "First line "+marker {
		return fmt.Errorf("default title %q", it.Title)
	}
	steps := []struct {
		req    Request
		status int
		want   string
	}{
		{Request{Method: http.MethodGet, Path: "/api/content/" + it.ID, Header: h}, 200, marker},
		{Request{Method: http.MethodGet, Path: "/api/content?q=" + marker, Header: h}, 200, `"total":1`},
		{Request{Method: http.MethodPatch, Path: "/api/content/" + it.ID, Header: h, Body: []byte(`{"title":"renamed","tags":["c"]}`), ContentType: "application/json"}, 200, `"renamed"`},
		{Request{Method: http.MethodDelete, Path: "/api/content/" + it.ID, Header: h}, 204, ""},
		{Request{Method: http.MethodGet, Path: "/api/content/" + it.ID, Header: h}, 404, "not_found"},
	}
	for _, st := range steps {
		resp, err := s.Do(ctx, st.req)
		if err != nil {
			return err
		}
		if resp.Status != st.status || !strings.Contains(string(resp.Body), st.want) {
			return fmt.Errorf("%s %s: %d %s, want %d with %q", st.req.Method, st.req.Path, resp.Status, snippet(resp.Body), st.status, st.want)
		}
	}
	return nil
}

func checkListValidation(ctx context.Context, s *Suite) error {
	sess, err := s.SignIn(ctx)
	if err != nil {
		return err
	}
	for _, q := range []string{"limit=0", "limit=101", "type=video", "folderId=nope"} {
		resp, err := s.Do(ctx, Request{Method: http.MethodGet, Path: "/api/content?" + q, Header: authHeader(sess.AccessToken)})
		if err != nil {
			return err
		}
		if err := resp.ExpectError(http.StatusBadRequest, "validation_error"); err != nil {
			return fmt.Errorf("%s: %w", q, err)
		}
	}
	resp, err := s.Do(ctx, Request{Method: http.MethodPost, Path: "/api/content/notes", Header: authHeader(sess.AccessToken),
		Body: []byte(`{"body":""}`), ContentType: "application/json"})
	if err != nil {
		return err
	}
	return resp.ExpectError(http.StatusBadRequest, "validation_error")
}

func checkFolders(ctx context.Context, s *Suite) error {
	sess, err := s.SignIn(ctx)
	if err != nil {
		return err
	}
	h := authHeader(sess.AccessToken)
	resp, err := s.Do(ctx, Request{Method: http.MethodPost, Path: "/api/content/folders", Header: h, Body: []byte(`{"name":"conformance"}`), ContentType: "application/json"})
	if err != nil {
		return err
	}
	var f struct{ ID string }
	if resp.Status != http.StatusCreated || json.Unmarshal(resp.Body, &f) != nil {
		return fmt.Errorf("create folder: %d %s", resp.Status, snippet(resp.Body))
	}
	resp, err = s.Do(ctx, Request{Method: http.MethodPost, Path: "/api/content/notes", Header: h,
		Body: jsonBody(map[string]string{"body": "filed", "folderId": f.ID}), ContentType: "application/json"})
	if err != nil || resp.Status != http.StatusCreated {
		return fmt.Errorf("note in folder: %v", err)
	}
	steps := []struct {
		req    Request
		status int
	}{
		{Request{Method: http.MethodGet, Path: "/api/content/folders", Header: h}, 200},
		{Request{Method: http.MethodPatch, Path: "/api/content/folders/" + f.ID, Header: h, Body: []byte(`{"name":"renamed"}`), ContentType: "application/json"}, 200},
		{Request{Method: http.MethodDelete, Path: "/api/content/folders/" + f.ID, Header: h}, 409},
		{Request{Method: http.MethodDelete, Path: "/api/content/folders/" + f.ID + "?recursive=true", Header: h}, 204},
		{Request{Method: http.MethodDelete, Path: "/api/content/folders/" + f.ID, Header: h}, 404},
	}
	for _, st := range steps {
		resp, err := s.Do(ctx, st.req)
		if err != nil {
			return err
		}
		if resp.Status != st.status {
			return fmt.Errorf("%s %s: %d %s, want %d", st.req.Method, st.req.Path, resp.Status, snippet(resp.Body), st.status)
		}
	}
	return nil
}

// silentWAV is a valid 16 kHz mono PCM WAV of n samples.
func silentWAV(n int) []byte {
	var b bytes.Buffer
	b.WriteString("RIFF")
	_ = binary.Write(&b, binary.LittleEndian, uint32(36+2*n))
	b.WriteString("WAVEfmt ")
	for _, v := range []any{uint32(16), uint16(1), uint16(1), uint32(16000), uint32(32000), uint16(2), uint16(16)} {
		_ = binary.Write(&b, binary.LittleEndian, v)
	}
	b.WriteString("data")
	_ = binary.Write(&b, binary.LittleEndian, uint32(2*n))
	b.Write(make([]byte, 2*n))
	return b.Bytes()
}

func checkVoiceNoteUpload(ctx context.Context, s *Suite) error {
	sess, err := s.SignIn(ctx)
	if err != nil {
		return err
	}
	h := authHeader(sess.AccessToken)
	wav := silentWAV(8000)
	var form bytes.Buffer
	mw := multipart.NewWriter(&form)
	_ = mw.WriteField("title", "conformance voice note")
	w, _ := mw.CreateFormFile("audio", "clip.wav")
	_, _ = w.Write(wav)
	_ = mw.Close()
	resp, err := s.Do(ctx, Request{Method: http.MethodPost, Path: "/api/content/voice-notes", Header: h, Body: form.Bytes(), ContentType: mw.FormDataContentType()})
	if err != nil {
		return err
	}
	var it contentItem
	if resp.Status != http.StatusAccepted || json.Unmarshal(resp.Body, &it) != nil || it.MediaURL == nil {
		return fmt.Errorf("upload: %d %s", resp.Status, snippet(resp.Body))
	}
	resp, err = s.Do(ctx, Request{Method: http.MethodGet, Path: "/api/content/" + it.ID + "/media", Header: h})
	if err != nil {
		return err
	}
	if resp.Status != http.StatusOK || !bytes.Equal(resp.Body, wav) {
		return fmt.Errorf("media: %d, %d bytes", resp.Status, len(resp.Body))
	}
	rh := authHeader(sess.AccessToken)
	rh.Set("Range", "bytes=0-3")
	resp, err = s.Do(ctx, Request{Method: http.MethodGet, Path: "/api/content/" + it.ID + "/media", Header: rh})
	if err != nil {
		return err
	}
	if resp.Status != http.StatusPartialContent || string(resp.Body) != "RIFF" {
		return fmt.Errorf("range: %d %q", resp.Status, resp.Body)
	}
	var bad bytes.Buffer
	mw = multipart.NewWriter(&bad)
	w, _ = mw.CreateFormFile("audio", "x.wav")
	_, _ = w.Write([]byte("this is not audio at all"))
	_ = mw.Close()
	resp, err = s.Do(ctx, Request{Method: http.MethodPost, Path: "/api/content/voice-notes", Header: h, Body: bad.Bytes(), ContentType: mw.FormDataContentType()})
	if err != nil {
		return err
	}
	return resp.ExpectError(http.StatusUnsupportedMediaType, "unsupported_media_type")
}

func checkEventsWebSocket(ctx context.Context, s *Suite) error {
	sess, err := s.SignIn(ctx)
	if err != nil {
		return err
	}
	wsURL := "ws" + strings.TrimPrefix(s.base.String(), "http") + "/api/content/events"
	dctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	conn, _, err := websocket.Dial(dctx, wsURL, nil)
	if err != nil {
		return fmt.Errorf("dial: %w", err)
	}
	defer conn.CloseNow()
	s.markCovered("contentEvents")
	auth, _ := json.Marshal(map[string]string{"type": "auth", "token": sess.AccessToken})
	if err := conn.Write(dctx, websocket.MessageText, auth); err != nil {
		return err
	}
	var msg struct {
		Type   string          `json:"type"`
		UserID string          `json:"userId"`
		Data   json.RawMessage `json:"data"`
	}
	_, data, err := conn.Read(dctx)
	if err != nil || json.Unmarshal(data, &msg) != nil || msg.Type != "ready" || msg.UserID != sess.User.ID {
		return fmt.Errorf("ready: %v %s", err, data)
	}
	it, err := s.createNote(ctx, sess.AccessToken, "event please")
	if err != nil {
		return err
	}
	_, data, err = conn.Read(dctx)
	if err != nil || json.Unmarshal(data, &msg) != nil || msg.Type != "content:created" || !strings.Contains(string(msg.Data), it.ID) {
		return fmt.Errorf("created event: %v %s", err, data)
	}
	// A bad token closes with 4401.
	bad, _, err := websocket.Dial(dctx, wsURL+"?token=forged", nil)
	if err != nil {
		return fmt.Errorf("dial: %w", err)
	}
	defer bad.CloseNow()
	if _, _, err := bad.Read(dctx); websocket.CloseStatus(err) != 4401 {
		return fmt.Errorf("forged token: %v, want close 4401", err)
	}
	return nil
}

func checkRelatedAndSearch(ctx context.Context, s *Suite) error {
	sess, err := s.SignIn(ctx)
	if err != nil {
		return err
	}
	h := authHeader(sess.AccessToken)
	a, err := s.createNote(ctx, sess.AccessToken, "Knead the sourdough and bake the bread in a hot oven.")
	if err != nil {
		return err
	}
	b, err := s.createNote(ctx, sess.AccessToken, "Bake rye bread with a sourdough starter and a long rise.")
	if err != nil {
		return err
	}
	// Related items and search see an item once the pipeline has embedded it.
	for _, id := range []string{a.ID, b.ID} {
		if err := s.waitProcessed(ctx, sess.AccessToken, id); err != nil {
			return err
		}
	}
	resp, err := s.Do(ctx, Request{Method: http.MethodGet, Path: "/api/content/" + a.ID + "/related?limit=5", Header: h})
	if err != nil {
		return err
	}
	var rel struct {
		Data []struct {
			ID         string
			Similarity float64
		}
	}
	if resp.Status != 200 || json.Unmarshal(resp.Body, &rel) != nil || len(rel.Data) == 0 {
		return fmt.Errorf("related: %d %s", resp.Status, snippet(resp.Body))
	}
	for i, r := range rel.Data {
		if r.ID == a.ID || r.Similarity < -1 || r.Similarity > 1 || (i > 0 && r.Similarity > rel.Data[i-1].Similarity) {
			return fmt.Errorf("related items: %+v (itself, out of range or unsorted)", rel.Data)
		}
	}
	if rel.Data[0].ID != b.ID {
		return fmt.Errorf("the other bread note is not the most related item: %+v", rel.Data)
	}
	resp, err = s.Do(ctx, Request{Method: http.MethodGet, Path: "/api/content/" + a.ID + "/related?limit=51", Header: h})
	if err != nil {
		return err
	}
	if err := resp.ExpectError(http.StatusBadRequest, "validation_error"); err != nil {
		return err
	}
	resp, err = s.Do(ctx, Request{Method: http.MethodGet, Path: "/api/content/search?q=baking+bread&limit=5", Header: h})
	if err != nil {
		return err
	}
	if resp.Status == http.StatusForbidden {
		return resp.ExpectError(http.StatusForbidden, "FEATURE_GATED") // the tenant's search is gated there
	}
	var found struct {
		Data  []struct{ ID string }
		Total int
	}
	if resp.Status != 200 || json.Unmarshal(resp.Body, &found) != nil || len(found.Data) == 0 || found.Total < len(found.Data) {
		return fmt.Errorf("search: %d %s", resp.Status, snippet(resp.Body))
	}
	if first := found.Data[0].ID; first != a.ID && first != b.ID {
		return fmt.Errorf("search for baking bread ranks %s first, not one of the two bread notes", first)
	}
	return nil
}

package pipeline_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stratahq/strata/impl/server"
	"github.com/stratahq/strata/impl/testenv"
)

type item struct {
	ID               string   `json:"id"`
	Type             string   `json:"type"`
	Title            string   `json:"title"`
	Body             string   `json:"body"`
	Summary          string   `json:"summary"`
	Transcription    *string  `json:"transcription"`
	AiSummary        *string  `json:"aiSummary"`
	AiTags           []string `json:"aiTags"`
	ProcessingStatus string   `json:"processingStatus"`
	ProcessingError  *string  `json:"processingError"`
}

// fastRetries makes failed jobs retry after milliseconds, not seconds.
func fastRetries(c *server.Config) { c.PipelineBackoff = 20 * time.Millisecond }

// waitProcessed polls the item until its processing ended, with a deadline.
func waitProcessed(t *testing.T, e *testenv.Env, token, id string) item {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		var it item
		e.Clock.Advance(time.Second) // the content quota refills; no token gets near expiry in 60 s
		r := e.Call("GET", "/api/content/"+id, "", testenv.Bearer(token)...)
		if r.Status != http.StatusOK {
			t.Fatalf("GET item: %d %s", r.Status, r.Body)
		}
		r.Decode(t, &it)
		if it.ProcessingStatus == "processed" || it.ProcessingStatus == "failed" {
			return it
		}
		if time.Now().After(deadline) {
			t.Fatalf("item %s still %s after 60 s", id, it.ProcessingStatus)
		}
		time.Sleep(50 * time.Millisecond) // polling interval
	}
}

func TestNotesAreSummarisedTaggedAndEmbedded(t *testing.T) {
	t.Parallel()
	e := testenv.New(t, nil)
	s := e.NewUser("ai@example.com")
	body := "Sourdough bread needs a lively starter. Feed the starter with flour and water the night before baking. " +
		"Knead the dough, let it rise slowly in the fridge, then bake it in a very hot Dutch oven until the crust is dark."
	r := e.Call("POST", "/api/content/notes", `{"body":"`+body+`"}`, testenv.Bearer(s.AccessToken)...)
	var created item
	r.Decode(t, &created)
	it := waitProcessed(t, e, s.AccessToken, created.ID)
	if it.ProcessingStatus != "processed" || it.AiSummary == nil || *it.AiSummary == "" || it.Summary != *it.AiSummary ||
		len(it.AiTags) == 0 || len(it.AiTags) > 8 || it.ProcessingError != nil {
		t.Fatalf("processed note %+v", it)
	}
	for _, tag := range it.AiTags {
		if tag != strings.ToLower(tag) {
			t.Fatalf("tag %q is not lower-case", tag)
		}
	}
	if !strings.Contains(strings.Join(it.AiTags, " "), "starter") && !strings.Contains(strings.Join(it.AiTags, " "), "dough") {
		t.Errorf("tags %v miss the note's keywords", it.AiTags)
	}
	// Changing the body re-runs the pipeline.
	e.Call("PATCH", "/api/content/"+it.ID, `{"body":"Water the tomato plants every morning and mulch the beds against weeds."}`, testenv.Bearer(s.AccessToken)...)
	again := waitProcessed(t, e, s.AccessToken, it.ID)
	if again.AiSummary == nil || !strings.Contains(strings.ToLower(*again.AiSummary), "tomato") {
		t.Fatalf("re-processed summary %v", again.AiSummary)
	}
}

// speech renders text with espeak-ng into the given container via ffmpeg.
func speech(t *testing.T, text, ext string) []byte {
	t.Helper()
	dir := t.TempDir()
	wav := filepath.Join(dir, "speech.wav")
	if out, err := exec.Command("espeak-ng", "-v", "en-us+klatt2", "-s", "175", "-w", wav, text).CombinedOutput(); err != nil {
		t.Fatalf("espeak-ng: %v %s", err, out)
	}
	if ext == "wav" {
		b, _ := os.ReadFile(wav)
		return b
	}
	out := filepath.Join(dir, "speech."+ext)
	if b, err := exec.Command("ffmpeg", "-nostdin", "-loglevel", "error", "-i", wav, out).CombinedOutput(); err != nil {
		t.Fatalf("ffmpeg: %v %s", err, b)
	}
	b, _ := os.ReadFile(out)
	return b
}

func uploadVoice(t *testing.T, e *testenv.Env, token string, audio []byte, title string) item {
	t.Helper()
	var form bytes.Buffer
	mw := multipart.NewWriter(&form)
	if title != "" {
		_ = mw.WriteField("title", title)
	}
	w, _ := mw.CreateFormFile("audio", "clip")
	_, _ = w.Write(audio)
	_ = mw.Close()
	req, _ := http.NewRequest("POST", e.Srv.URL+"/api/content/voice-notes", &form)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := e.Srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusAccepted {
		t.Fatalf("upload: %d %s", resp.StatusCode, raw)
	}
	var it item
	_ = json.Unmarshal(raw, &it)
	return it
}

func TestVoiceNotesAreTranscribed(t *testing.T) {
	t.Parallel()
	e := testenv.New(t, nil)
	s := e.NewUser("voice@example.com")
	// Every accepted container, made by ffmpeg from the same speech.
	created := map[string]item{}
	for _, ext := range []string{"wav", "mp3", "ogg", "webm", "m4a"} {
		created[ext] = uploadVoice(t, e, s.AccessToken, speech(t, "remember to buy milk and eggs tomorrow morning", ext), "")
	}
	for ext, c := range created {
		it := waitProcessed(t, e, s.AccessToken, c.ID)
		if it.ProcessingStatus != "processed" || it.Transcription == nil {
			t.Fatalf("%s: %+v", ext, it)
		}
		hits := 0
		for _, w := range []string{"remember", "tomorrow", "morning", "milk", "eggs"} {
			if strings.Contains(*it.Transcription, w) {
				hits++
			}
		}
		if hits < 2 || it.Body != *it.Transcription || it.Title == "" || !strings.HasPrefix(*it.Transcription, it.Title) {
			t.Fatalf("%s: transcript %q, title %q, body %q", ext, *it.Transcription, it.Title, it.Body)
		}
	}
}

// TestUndecodableAudioFailsWithAPlainReason has the local engine meet a
// stored file that does not decode. Uploads are probed for decodable audio,
// so such a file only reaches the pipeline by changing under it: the test
// uploads good audio, stops the server while a (remote) engine holds the
// job, corrupts the stored file and restarts with the local engine. The
// item fails with a sentence for users; ffmpeg's diagnostics stay in the log.
func TestUndecodableAudioFailsWithAPlainReason(t *testing.T) {
	t.Parallel()
	fixture := &whisperFixture{block: make(chan struct{})}
	engine := httptest.NewServer(fixture)
	t.Cleanup(engine.Close)
	dataDir := t.TempDir()
	first := testenv.New(t, func(c *server.Config) {
		c.DataDir = dataDir
		fastRetries(c)
		c.Pipeline.TranscribeURL = engine.URL
	})
	s := first.NewUser("corrupt@example.com")
	created := uploadVoice(t, first, s.AccessToken, speech(t, "hello", "wav"), "broken")
	fixture.awaitCall(t)
	first.Srv.Close()
	if err := first.App.Close(); err != nil {
		t.Fatal(err)
	}
	close(fixture.block)

	// A WAV header followed by garbage, in place of the stored file.
	var blobs []string
	_ = filepath.Walk(filepath.Join(dataDir, "blobs"), func(p string, info os.FileInfo, _ error) error {
		if info != nil && !info.IsDir() && !strings.HasSuffix(p, ".attrs") {
			blobs = append(blobs, p)
		}
		return nil
	})
	if len(blobs) != 1 {
		t.Fatalf("stored files %v, want the one upload", blobs)
	}
	corrupt := append([]byte("RIFF\xff\xff\xff\xffWAVEjunk"), bytes.Repeat([]byte{0x5a}, 4000)...)
	if err := os.WriteFile(blobs[0], corrupt, 0o600); err != nil {
		t.Fatal(err)
	}

	second := testenv.New(t, func(c *server.Config) { c.DataDir = dataDir; fastRetries(c) })
	tokens := second.SignIn("corrupt@example.com", "correct horse")
	it := waitProcessed(t, second, tokens.AccessToken, created.ID)
	if it.ProcessingStatus != "failed" || it.ProcessingError == nil || *it.ProcessingError != "the audio could not be decoded" {
		t.Fatalf("corrupt audio: status %s, processingError %v", it.ProcessingStatus, deref(it.ProcessingError))
	}
}

func deref(s *string) any {
	if s == nil {
		return nil
	}
	return *s
}

// whisperFixture is a stand-in for a third-party OpenAI-compatible
// /v1/audio/transcriptions server (the protocol subset the client uses:
// multipart file + model, JSON {"text"}). It answers 503 while down.
type whisperFixture struct {
	down  atomic.Bool
	calls atomic.Int32
	block chan struct{} // when non-nil, requests wait until it is closed
}

func (f *whisperFixture) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.calls.Add(1)
	if f.block != nil {
		select {
		case <-f.block:
		case <-r.Context().Done():
			return
		}
	}
	if f.down.Load() || r.URL.Path != "/v1/audio/transcriptions" {
		http.Error(w, `{"error":{"message":"overloaded"}}`, http.StatusServiceUnavailable)
		return
	}
	if _, _, err := r.FormFile("file"); err != nil || r.FormValue("model") == "" {
		http.Error(w, `{"error":{"message":"bad form"}}`, http.StatusBadRequest)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = io.WriteString(w, `{"text":"call the plumber about the leaking kitchen tap"}`)
}

// awaitCall waits until the pipeline has called the engine at least once.
func (f *whisperFixture) awaitCall(t *testing.T) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for f.calls.Load() < 1 {
		if time.Now().After(deadline) {
			t.Fatal("the pipeline never called the engine")
		}
		time.Sleep(10 * time.Millisecond) // polling interval
	}
}

func TestUnreachableEngineIsRetriedThenFails(t *testing.T) {
	t.Parallel()
	fixture := &whisperFixture{}
	fixture.down.Store(true)
	idp := httptest.NewServer(fixture)
	t.Cleanup(idp.Close)
	e := testenv.New(t, func(c *server.Config) {
		fastRetries(c)
		c.Pipeline.TranscribeURL = idp.URL
	})
	s := e.NewUser("retry@example.com")
	created := uploadVoice(t, e, s.AccessToken, speech(t, "hello", "wav"), "x")
	it := waitProcessed(t, e, s.AccessToken, created.ID)
	if it.ProcessingStatus != "failed" || fixture.calls.Load() != 3 {
		t.Fatalf("status %s after %d calls, want failed after 3 attempts", it.ProcessingStatus, fixture.calls.Load())
	}
	// The reason is a sentence for users, not the engine's answer.
	if it.ProcessingError == nil || *it.ProcessingError != "the transcription engine could not be reached" {
		t.Fatalf("processingError %v", deref(it.ProcessingError))
	}

	// An engine that recovers between attempts succeeds.
	fixture.calls.Store(0)
	created = uploadVoice(t, e, s.AccessToken, speech(t, "hello", "wav"), "")
	deadline := time.Now().Add(30 * time.Second)
	for fixture.calls.Load() < 1 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond) // polling interval
	}
	fixture.down.Store(false)
	it = waitProcessed(t, e, s.AccessToken, created.ID)
	if it.ProcessingStatus != "processed" || it.Transcription == nil || !strings.Contains(*it.Transcription, "plumber") {
		t.Fatalf("after recovery: %+v", it)
	}

	// A closed port: unreachable, retried, failed.
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	closed := "http://" + ln.Addr().String()
	ln.Close()
	e2 := testenv.New(t, func(c *server.Config) {
		fastRetries(c)
		c.Pipeline.TranscribeURL = closed
	})
	s2 := e2.NewUser("closed@example.com")
	created = uploadVoice(t, e2, s2.AccessToken, speech(t, "hello", "wav"), "x")
	if it := waitProcessed(t, e2, s2.AccessToken, created.ID); it.ProcessingStatus != "failed" {
		t.Fatalf("unreachable engine: %+v", it)
	}
}

func TestPendingWorkResumesAfterRestart(t *testing.T) {
	t.Parallel()
	fixture := &whisperFixture{block: make(chan struct{})}
	engine := httptest.NewServer(fixture)
	t.Cleanup(engine.Close)
	dataDir := t.TempDir()
	cfg := func(c *server.Config) {
		c.DataDir = dataDir
		fastRetries(c)
		c.Pipeline.TranscribeURL = engine.URL
	}
	first := testenv.New(t, cfg)
	s := first.NewUser("restart@example.com")
	created := uploadVoice(t, first, s.AccessToken, speech(t, "hello", "wav"), "")
	// The job is running (the engine holds the request) when the server stops.
	fixture.awaitCall(t)
	first.Srv.Close()
	if err := first.App.Close(); err != nil {
		t.Fatal(err)
	}
	close(fixture.block) // the engine answers from now on

	second := testenv.New(t, cfg)
	tokens := second.SignIn("restart@example.com", "correct horse")
	it := waitProcessed(t, second, tokens.AccessToken, created.ID)
	if it.ProcessingStatus != "processed" || it.Transcription == nil || !strings.Contains(*it.Transcription, "plumber") {
		t.Fatalf("after restart: %+v", it)
	}
}

// TestWhileTranscribing holds the transcription engine to look at a voice
// note mid-pipeline: it has no related items yet (no vector, and none is
// made on the fly), and a body the user writes meanwhile survives the
// transcript, which still lands in transcription.
func TestWhileTranscribing(t *testing.T) {
	t.Parallel()
	fixture := &whisperFixture{block: make(chan struct{})}
	engine := httptest.NewServer(fixture)
	t.Cleanup(engine.Close)
	e := testenv.New(t, func(c *server.Config) { fastRetries(c); c.Pipeline.TranscribeURL = engine.URL })
	s := e.NewUser("mid@example.com")
	auth := testenv.Bearer(s.AccessToken)
	var note item
	e.Call("POST", "/api/content/notes", `{"body":"Call the plumber about the leaking tap in the kitchen."}`, auth...).Decode(t, &note)
	waitProcessed(t, e, s.AccessToken, note.ID)

	voice := uploadVoice(t, e, s.AccessToken, speech(t, "hello", "wav"), "plumber and kitchen tap")
	fixture.awaitCall(t)
	var rel struct{ Data []related }
	e.Call("GET", "/api/content/"+voice.ID+"/related", "", auth...).Decode(t, &rel)
	if len(rel.Data) != 0 {
		t.Fatalf("an item without a vector has related items: %+v", rel.Data)
	}
	if r := e.Call("PATCH", "/api/content/"+voice.ID, `{"body":"My own words about the tap."}`, auth...); r.Status != http.StatusOK {
		t.Fatalf("PATCH: %d %s", r.Status, r.Body)
	}
	close(fixture.block)

	deadline := time.Now().Add(60 * time.Second)
	for {
		it := waitProcessed(t, e, s.AccessToken, voice.ID)
		if it.Transcription != nil { // the re-run after the edit has finished
			if it.Body != "My own words about the tap." || *it.Transcription != "call the plumber about the leaking kitchen tap" {
				t.Fatalf("after processing: body %q, transcription %q", it.Body, *it.Transcription)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no transcription after 60 s: %+v", it)
		}
		time.Sleep(50 * time.Millisecond) // polling interval
	}
}

// TestItemsWithoutTextRankNowhere: a silent voice note is processed with an
// empty aiSummary, has no related items, and appears in no other item's
// related items nor in search.
func TestItemsWithoutTextRankNowhere(t *testing.T) {
	t.Parallel()
	e := testenv.New(t, nil)
	s := e.NewUser("silent@example.com")
	auth := testenv.Bearer(s.AccessToken)
	var ids []string
	for _, body := range []string{"Bake the sourdough loaf in a hot oven.", "Knead the bread dough and let it rise overnight."} {
		var n item
		e.Call("POST", "/api/content/notes", `{"body":"`+body+`"}`, auth...).Decode(t, &n)
		ids = append(ids, n.ID)
	}
	silent := uploadVoice(t, e, s.AccessToken, testenv.SilentWAV(16000), "")
	for _, id := range append(ids, silent.ID) {
		waitProcessed(t, e, s.AccessToken, id)
	}
	it := waitProcessed(t, e, s.AccessToken, silent.ID)
	if it.ProcessingStatus != "processed" || strings.TrimSpace(it.Body) != "" || it.AiSummary == nil || *it.AiSummary != "" {
		t.Fatalf("silent voice note: %+v", it)
	}
	var rel struct{ Data []related }
	e.Call("GET", "/api/content/"+silent.ID+"/related", "", auth...).Decode(t, &rel)
	if len(rel.Data) != 0 {
		t.Fatalf("an item without text has related items: %+v", rel.Data)
	}
	e.Call("GET", "/api/content/"+ids[0]+"/related", "", auth...).Decode(t, &rel)
	if len(rel.Data) != 1 || rel.Data[0].ID != ids[1] {
		t.Fatalf("related of a note: %+v, want only the other note", rel.Data)
	}
	var found struct {
		Data  []related
		Total int
	}
	e.Call("GET", "/api/content/search?q=baking+bread", "", auth...).Decode(t, &found)
	for _, d := range found.Data {
		if d.ID == silent.ID {
			t.Fatalf("search found the silent voice note: %+v", found.Data)
		}
	}
}

// orderFixture is an OpenAI-compatible chat server that records the order
// in which notes reach it (by their text) and holds every request until
// gate is closed, so that a test can queue jobs before any runs.
type orderFixture struct {
	gate  chan struct{}
	mu    sync.Mutex
	order []string
}

func (f *orderFixture) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Messages []struct{ Content string } `json:"messages"`
	}
	_ = json.NewDecoder(r.Body).Decode(&req)
	select {
	case <-f.gate:
	case <-r.Context().Done():
		return
	}
	if n := len(req.Messages); n > 0 {
		f.mu.Lock()
		f.order = append(f.order, req.Messages[n-1].Content)
		f.mu.Unlock()
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{"choices": []any{map[string]any{
		"index": 0, "finish_reason": "stop", "message": map[string]any{"role": "assistant", "content": "notes, order"}}}})
}

// firstIndex is the position of the first recorded request about text.
func (f *orderFixture) firstIndex(text string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	for i, c := range f.order {
		if strings.Contains(c, text) {
			return i
		}
	}
	return -1
}

// TestBulkImportDoesNotHoldUpOthers: with one worker, a user who queues 20
// notes gets 8 at the normal priority and the rest behind; another user's
// note, queued last, runs before the bulk rest.
func TestBulkImportDoesNotHoldUpOthers(t *testing.T) {
	t.Parallel()
	fixture := &orderFixture{gate: make(chan struct{})}
	engine := httptest.NewServer(fixture)
	t.Cleanup(engine.Close)
	e := testenv.New(t, func(c *server.Config) {
		c.PipelineWorkers = 1
		c.Pipeline.LLMURL = engine.URL + "/v1"
		c.Pipeline.HashedEmbeddings = true // the order is what counts here
	})
	bulk := e.NewUser("bulk@example.com")
	other := e.NewUser("other@example.com")
	var last item
	for i := range 20 {
		e.Call("POST", "/api/content/notes", fmt.Sprintf(`{"body":"bulk note number %02d"}`, i), testenv.Bearer(bulk.AccessToken)...).Decode(t, &last)
	}
	var mine item
	e.Call("POST", "/api/content/notes", `{"body":"a note of another user"}`, testenv.Bearer(other.AccessToken)...).Decode(t, &mine)
	close(fixture.gate)
	waitProcessed(t, e, other.AccessToken, mine.ID)
	waitProcessed(t, e, bulk.AccessToken, last.ID)

	theirs := fixture.firstIndex("a note of another user")
	for i := 10; i < 20; i++ {
		if at := fixture.firstIndex(fmt.Sprintf("bulk note number %02d", i)); at < theirs {
			t.Errorf("bulk note %d ran at %d, before the other user's note (%d)", i, at, theirs)
		}
	}
	if at := fixture.firstIndex("bulk note number 01"); at > theirs {
		t.Errorf("the bulk user's first notes lost their turn: note 1 ran at %d, the other user's at %d", at, theirs)
	}
}

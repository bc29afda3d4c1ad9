package content_test

import (
	"bytes"
	"encoding/binary"
	"io"
	"math/rand/v2"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stratahq/strata/impl/server"
	"github.com/stratahq/strata/impl/testenv"
)

// wavBytes is a WAV file of n samples of silence.
var wavBytes = testenv.SilentWAV

var pngBytes = append([]byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"), make([]byte, 64)...)

type part struct {
	name, filename string
	data           io.Reader
}

// upload posts a multipart form streamed from parts.
func upload(t *testing.T, e *testenv.Env, token, path string, parts ...part) testenv.Response {
	t.Helper()
	pr, pw := io.Pipe()
	mw := multipart.NewWriter(pw)
	go func() {
		for _, p := range parts {
			var w io.Writer
			var err error
			if p.filename != "" {
				w, err = mw.CreateFormFile(p.name, p.filename)
			} else {
				w, err = mw.CreateFormField(p.name)
			}
			if err == nil {
				_, err = io.Copy(w, p.data)
			}
			if err != nil {
				pw.CloseWithError(err)
				return
			}
		}
		pw.CloseWithError(mw.Close())
	}()
	req, _ := http.NewRequest("POST", e.Srv.URL+path, pr)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := e.Srv.Client().Do(req)
	if err != nil {
		return testenv.Response{Status: -1, Body: []byte(err.Error())}
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return testenv.Response{Status: resp.StatusCode, Header: resp.Header, Body: body}
}

func field(name, v string) part { return part{name: name, data: strings.NewReader(v)} }

// blobFiles lists the stored blobs of the server's data dir.
func blobFiles(t *testing.T, e *testenv.Env) []string {
	t.Helper()
	var files []string
	_ = filepath.Walk(filepath.Join(e.App.Config().DataDir, "blobs"), func(p string, info os.FileInfo, _ error) error {
		if info != nil && !info.IsDir() && !strings.HasSuffix(p, ".attrs") {
			files = append(files, p)
		}
		return nil
	})
	return files
}

func TestVoiceNoteUploadAndMedia(t *testing.T) {
	t.Parallel()
	e := testenv.New(t, nil)
	s := e.NewUser("voice@example.com")
	auth := testenv.Bearer(s.AccessToken)
	folder := e.Call("POST", "/api/content/folders", `{"name":"Voice"}`, auth...).JSON(t)["id"].(string)
	wav := wavBytes(16000)

	r := upload(t, e, s.AccessToken, "/api/content/voice-notes",
		field("title", "Shopping list"), field("tags", "home, errands,home"), field("folderId", folder),
		part{name: "audio", filename: "clip.bin", data: bytes.NewReader(wav)})
	if r.Status != http.StatusAccepted {
		t.Fatalf("upload: %d %s", r.Status, r.Body)
	}
	var it item
	r.Decode(t, &it)
	if it.Type != "voice_note" || it.MediaKind == nil || *it.MediaKind != "audio" || it.MediaURL == nil ||
		it.ProcessingStatus != "pending" || it.Title != "Shopping list" || len(it.Tags) != 2 || it.FolderID == nil || *it.FolderID != folder {
		t.Fatalf("voice note %+v", it)
	}
	if *it.MediaURL != e.Srv.URL+"/api/content/"+it.ID+"/media" {
		t.Fatalf("mediaUrl %s, want under the server's URL %s", *it.MediaURL, e.Srv.URL)
	}

	// The owner downloads it, from the URL given: whole, and by range.
	mediaPath := strings.TrimPrefix(*it.MediaURL, e.Srv.URL)
	got := e.Call("GET", mediaPath, "", auth...)
	if got.Status != 200 || !bytes.Equal(got.Body, wav) || got.Header.Get("Content-Type") != "audio/wav" || got.Header.Get("Accept-Ranges") != "bytes" {
		t.Fatalf("media: %d %q %d bytes", got.Status, got.Header.Get("Content-Type"), len(got.Body))
	}
	part := e.Call("GET", mediaPath, "", append(auth, "Range", "bytes=4-11")...)
	if part.Status != 206 || string(part.Body) != string(wav[4:12]) || part.Header.Get("Content-Range") != "bytes 4-11/"+strconv.Itoa(len(wav)) {
		t.Fatalf("range: %d %q %q", part.Status, part.Body, part.Header.Get("Content-Range"))
	}
	testenv.ExpectError(t, e.Call("GET", mediaPath, "", append(auth, "Range", "bytes=999999-")...), 416, "range_not_satisfiable")

	// Nobody else can.
	other := e.NewUser("eve@example.com")
	testenv.ExpectError(t, e.Call("GET", mediaPath, "", testenv.Bearer(other.AccessToken)...), 404, "not_found")
	testenv.ExpectError(t, e.Call("GET", mediaPath, ""), 401, "UNAUTHENTICATED")
	// A note has no media.
	n := createNote(t, e, s.AccessToken, `{"body":"text only"}`)
	testenv.ExpectError(t, e.Call("GET", "/api/content/"+n.ID+"/media", "", auth...), 404, "not_found")

	// Deleting the item deletes its blob.
	if len(blobFiles(t, e)) != 1 {
		t.Fatalf("blobs: %v", blobFiles(t, e))
	}
	e.Call("DELETE", "/api/content/"+it.ID, "", auth...)
	if files := blobFiles(t, e); len(files) != 0 {
		t.Fatalf("blob left after delete: %v", files)
	}
}

func TestPhotoUpload(t *testing.T) {
	t.Parallel()
	e := testenv.New(t, nil)
	s := e.NewUser("photo@example.com")
	r := upload(t, e, s.AccessToken, "/api/content/photos",
		part{name: "photo", filename: "p.png", data: bytes.NewReader(pngBytes)}, field("caption", "Sunset at the lake\nwith friends"))
	if r.Status != http.StatusAccepted {
		t.Fatalf("upload: %d %s", r.Status, r.Body)
	}
	var it item
	r.Decode(t, &it)
	if it.Type != "photo" || *it.MediaKind != "image" || it.Title != "Sunset at the lake" || !strings.Contains(it.Body, "friends") {
		t.Fatalf("photo %+v", it)
	}
	// Audio is not a photo.
	r = upload(t, e, s.AccessToken, "/api/content/photos", part{name: "photo", filename: "x.png", data: bytes.NewReader(wavBytes(10))})
	testenv.ExpectError(t, r, 415, "unsupported_media_type")
}

func TestFailedUploadsLeaveNothing(t *testing.T) {
	t.Parallel()
	e := testenv.New(t, nil)
	s := e.NewUser("fail@example.com")
	auth := testenv.Bearer(s.AccessToken)
	wav := wavBytes(1000)

	cases := map[string]struct {
		parts  []part
		status int
		code   string
	}{
		"not audio": {[]part{{name: "audio", filename: "a.mp3", data: strings.NewReader("<html>definitely not audio</html>")}}, 415, "unsupported_media_type"},
		// Files that start like audio but hold none that decodes: refused
		// once stored, by probing them.
		"OggS and noise":    {[]part{{name: "audio", filename: "a.ogg", data: io.MultiReader(strings.NewReader("OggS"), io.LimitReader(randomBytes(1), 64<<10))}}, 415, "unsupported_media_type"},
		"video-only webm":   {[]part{{name: "audio", filename: "a.webm", data: bytes.NewReader(ffmpegOutput(t, "webm", "-f", "lavfi", "-i", "testsrc", "-t", "1", "-an"))}}, 415, "unsupported_media_type"},
		"ftyp M4A and junk": {[]part{{name: "audio", filename: "a.m4a", data: io.MultiReader(strings.NewReader("\x00\x00\x00\x18ftypM4A \x00\x00\x00\x00"), io.LimitReader(randomBytes(2), 64<<10))}}, 415, "unsupported_media_type"},
		"WAV header, junk":  {[]part{{name: "audio", filename: "a.wav", data: io.MultiReader(strings.NewReader("RIFF\xff\xff\xff\xffWAVEjunk"), bytes.NewReader(bytes.Repeat([]byte{0x5a}, 4000)))}}, 415, "unsupported_media_type"},
		"no audio part":     {[]part{field("title", "x")}, 400, "validation_error"},
		"bad folder id":     {[]part{{name: "audio", filename: "a.wav", data: bytes.NewReader(wav)}, field("folderId", "nope")}, 400, "validation_error"},
		"foreign folder":    {[]part{{name: "audio", filename: "a.wav", data: bytes.NewReader(wav)}, field("folderId", "6f1c2d3e-4b5a-4c6d-8e7f-9a0b1c2d3e4f")}, 400, "validation_error"},
		"two audio parts":   {[]part{{name: "audio", filename: "a.wav", data: bytes.NewReader(wav)}, {name: "audio", filename: "b.wav", data: bytes.NewReader(wav)}}, 400, "validation_error"},
		"over 25 MiB":       {[]part{{name: "audio", filename: "big.wav", data: io.MultiReader(bytes.NewReader(wav), io.LimitReader(zeros{}, 26<<20))}}, 413, "payload_too_large"},
		"title too long":    {[]part{{name: "audio", filename: "a.wav", data: bytes.NewReader(wav)}, field("title", strings.Repeat("t", 201))}, 400, "validation_error"},
		"NUL in a title":    {[]part{{name: "audio", filename: "a.wav", data: bytes.NewReader(wav)}, field("title", "a\x00b")}, 400, "validation_error"},
		"tags not UTF-8":    {[]part{{name: "audio", filename: "a.wav", data: bytes.NewReader(wav)}, field("tags", "ok,\xff\xfe")}, 400, "validation_error"},
	}
	for name, c := range cases {
		r := upload(t, e, s.AccessToken, "/api/content/voice-notes", c.parts...)
		if r.Status == -1 && c.status == 413 {
			continue // the server may close the connection while the client still sends
		}
		if r.Status != c.status || r.JSON(t)["error"] != c.code {
			t.Errorf("%s: %d %s, want %d %s", name, r.Status, r.Body, c.status, c.code)
		}
	}
	var p page
	e.Call("GET", "/api/content", "", auth...).Decode(t, &p)
	if p.Total != 0 {
		t.Fatalf("failed uploads created %d items", p.Total)
	}
	if files := blobFiles(t, e); len(files) != 0 {
		t.Fatalf("failed uploads left blobs: %v", files)
	}
	// A JSON body is not a form.
	testenv.ExpectError(t, e.Call("POST", "/api/content/voice-notes", `{"audio":"x"}`, auth...), 415, "unsupported_media_type")
}

// randomBytes is a reproducible stream of random bytes.
func randomBytes(seed byte) io.Reader { return rand.NewChaCha8([32]byte{seed}) }

// ffmpegOutput runs ffmpeg with args and returns the file it wrote.
func ffmpegOutput(t *testing.T, ext string, args ...string) []byte {
	t.Helper()
	out := filepath.Join(t.TempDir(), "out."+ext)
	if b, err := exec.Command("ffmpeg", append(append([]string{"-nostdin", "-loglevel", "error", "-y"}, args...), out)...).CombinedOutput(); err != nil {
		t.Fatalf("ffmpeg: %v %s", err, b)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

// uploadSized posts a voice-note form whose audio part is a WAV file of
// exactly size bytes, with a title and tags beside it, streamed with a
// Content-Length as curl -F sends it (the file is never held in memory).
func uploadSized(t *testing.T, e *testenv.Env, token string, size int64) testenv.Response {
	t.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	for name, v := range map[string]string{"title": "A long recording", "tags": "big,limit"} {
		if err := mw.WriteField(name, v); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := mw.CreateFormFile("audio", "big.wav"); err != nil {
		t.Fatal(err)
	}
	head := bytes.Clone(buf.Bytes())
	buf.Reset()
	if err := mw.Close(); err != nil {
		t.Fatal(err)
	}
	tail := bytes.Clone(buf.Bytes())
	wav := wavBytes(0) // a 44-byte header; its sizes are set to size's
	binary.LittleEndian.PutUint32(wav[4:], uint32(size-8))
	binary.LittleEndian.PutUint32(wav[40:], uint32(size-int64(len(wav))))
	body := io.MultiReader(bytes.NewReader(head), bytes.NewReader(wav), io.LimitReader(zeros{}, size-int64(len(wav))), bytes.NewReader(tail))
	req, _ := http.NewRequest("POST", e.Srv.URL+"/api/content/voice-notes", body)
	req.ContentLength = int64(len(head)) + size + int64(len(tail))
	req.Header.Set("Content-Type", mw.FormDataContentType())
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := e.Srv.Client().Do(req)
	if err != nil {
		t.Fatalf("upload of %d bytes: %v", size, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return testenv.Response{Status: resp.StatusCode, Header: resp.Header, Body: raw}
}

// The 25 MiB limit is the file's: a WAV of exactly 25 MiB is accepted with
// its form around it; one byte more is 413 and leaves no item and no blob.
func TestUploadLimitCountsTheFile(t *testing.T) {
	t.Parallel()
	// A transcription engine that takes the audio and answers at once, so
	// that the pipeline does not decode 13 minutes of silence locally.
	engine := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"text":"silence"}`)
	}))
	t.Cleanup(engine.Close)
	e := testenv.New(t, func(c *server.Config) { c.Pipeline.TranscribeURL = engine.URL })
	s := e.NewUser("limit@example.com")
	const limit = 25 << 20

	r := uploadSized(t, e, s.AccessToken, limit)
	if r.Status != http.StatusAccepted {
		t.Fatalf("exactly 25 MiB: %d %s", r.Status, r.Body)
	}
	var it item
	r.Decode(t, &it)
	got := e.Call("HEAD", "/api/content/"+it.ID+"/media", "", testenv.Bearer(s.AccessToken)...)
	if got.Status != 200 || got.Header.Get("Content-Length") != strconv.Itoa(limit) {
		t.Fatalf("stored media: %d, %s bytes", got.Status, got.Header.Get("Content-Length"))
	}

	r = uploadSized(t, e, s.AccessToken, limit+1)
	testenv.ExpectError(t, r, http.StatusRequestEntityTooLarge, "payload_too_large")
	if msg := r.JSON(t)["message"].(string); !strings.Contains(msg, `"audio"`) {
		t.Errorf("message %q does not name the part", msg)
	}
	var p page
	e.Call("GET", "/api/content", "", testenv.Bearer(s.AccessToken)...).Decode(t, &p)
	if p.Total != 1 {
		t.Fatalf("%d items, want only the 25 MiB one", p.Total)
	}
	if files := blobFiles(t, e); len(files) != 1 {
		t.Fatalf("blobs %v, want only the 25 MiB one", files)
	}
}

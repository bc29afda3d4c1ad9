package transcribe_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stratahq/strata/impl/pipeline/transcribe"
)

// openAIFixture is a protocol fixture for a third-party service: it stands in
// for an OpenAI-compatible speech-to-text server (OpenAI itself, or a
// self-hosted whisper server) and implements the subset of
// POST /v1/audio/transcriptions the client uses, faithfully enough to catch
// protocol mistakes: bearer authentication with OpenAI's 401 error body, a
// multipart/form-data body with the "file" part and the "model" field, and a
// JSON answer {"text": ...}. It recognises nothing: it answers with a fixed
// transcript and records what it received.
type openAIFixture struct {
	apiKey string
	text   string
	// status, when set, is sent instead of a transcript, with retryAfter as
	// the Retry-After header and an OpenAI-shaped error body.
	status     int
	retryAfter string
	// onFilePart, when set, is called with the file part as it streams in,
	// before the rest is read.
	onFilePart func(part io.Reader)

	mu       sync.Mutex
	model    string
	filename string
	file     []byte
}

// received returns what the last successful request carried.
func (f *openAIFixture) received() (model, filename string, file []byte) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.model, f.filename, f.file
}

func (f *openAIFixture) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.URL.Path != "/v1/audio/transcriptions" {
		openAIError(w, http.StatusNotFound, "invalid_request_error", "Unknown request URL: "+r.Method+" "+r.URL.Path)
		return
	}
	if r.Header.Get("Authorization") != "Bearer "+f.apiKey {
		openAIError(w, http.StatusUnauthorized, "invalid_request_error", "Incorrect API key provided.")
		return
	}
	if f.status != 0 {
		if f.retryAfter != "" {
			w.Header().Set("Retry-After", f.retryAfter)
		}
		openAIError(w, f.status, "server_error", "The server is overloaded.")
		return
	}
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "multipart/form-data" {
		openAIError(w, http.StatusBadRequest, "invalid_request_error", "Expected multipart/form-data")
		return
	}
	mr, err := r.MultipartReader()
	if err != nil {
		openAIError(w, http.StatusBadRequest, "invalid_request_error", err.Error())
		return
	}
	var model, filename string
	var file []byte
	for {
		part, err := mr.NextPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			openAIError(w, http.StatusBadRequest, "invalid_request_error", err.Error())
			return
		}
		switch part.FormName() {
		case "model":
			b, _ := io.ReadAll(part)
			model = string(b)
		case "file":
			filename = part.FileName()
			var body io.Reader = part
			if f.onFilePart != nil {
				var buf bytes.Buffer
				f.onFilePart(io.TeeReader(part, &buf))
				body = io.MultiReader(&buf, part)
			}
			if file, err = io.ReadAll(body); err != nil {
				openAIError(w, http.StatusBadRequest, "invalid_request_error", err.Error())
				return
			}
		}
	}
	if model == "" || filename == "" {
		openAIError(w, http.StatusBadRequest, "invalid_request_error", "you must provide a model parameter and a file")
		return
	}
	f.mu.Lock()
	f.model, f.filename, f.file = model, filename, file
	f.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]string{"text": f.text})
}

func openAIError(w http.ResponseWriter, status int, typ, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{"message": msg, "type": typ, "param": nil, "code": nil}})
}

// remoteEngine serves fx and returns an engine pointed at it.
func remoteEngine(t *testing.T, fx http.Handler, cfg transcribe.Config) transcribe.Transcriber {
	t.Helper()
	srv := httptest.NewServer(fx)
	t.Cleanup(srv.Close)
	if cfg.URL == "" {
		cfg.URL = srv.URL
	}
	cfg.URL = strings.ReplaceAll(cfg.URL, "{server}", srv.URL)
	engine, err := transcribe.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { engine.Close() })
	return engine
}

func TestRemoteTranscribes(t *testing.T) {
	t.Parallel()
	audio := speech(t, sentences[0].text, containers[2]) // ogg/opus
	for _, tc := range []struct {
		name, url, model, wantModel, wantName string
	}{
		{"default model", "", "", "whisper-1", "openai:whisper-1"},
		{"URL ending in /v1/", "{server}/v1/", "large-v3", "large-v3", "openai:large-v3"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			fx := &openAIFixture{apiKey: "sk-test", text: " remember to buy milk \n"}
			engine := remoteEngine(t, fx, transcribe.Config{URL: tc.url, APIKey: "sk-test", Model: tc.model})
			res, err := engine.Transcribe(t.Context(), bytes.NewReader(audio))
			if err != nil {
				t.Fatal(err)
			}
			if res.Text != "remember to buy milk" {
				t.Errorf("Text = %q", res.Text)
			}
			model, filename, file := fx.received()
			if model != tc.wantModel {
				t.Errorf("server received model %q, want %q", model, tc.wantModel)
			}
			if filename != "audio.ogg" {
				t.Errorf("server received file name %q, want audio.ogg (OpenAI picks the decoder by extension)", filename)
			}
			if !bytes.Equal(file, audio) {
				t.Errorf("server received %d bytes of audio, want the %d sent", len(file), len(audio))
			}
			if engine.Name() != tc.wantName {
				t.Errorf("Name() = %q, want %q", engine.Name(), tc.wantName)
			}
		})
	}
}

// TestRemoteStreamsAudio shows that the upload is not buffered: the server
// receives the start of the file while the rest has not been produced yet.
func TestRemoteStreamsAudio(t *testing.T) {
	t.Parallel()
	first := bytes.Repeat([]byte("A"), 256<<10)
	second := bytes.Repeat([]byte("B"), 256<<10)
	gotFirst := make(chan struct{})
	fx := &openAIFixture{apiKey: "k", text: "ok", onFilePart: func(part io.Reader) {
		io.ReadFull(part, make([]byte, len(first)))
		close(gotFirst)
	}}
	engine := remoteEngine(t, fx, transcribe.Config{APIKey: "k"})

	pr, pw := io.Pipe()
	go func() {
		pw.Write(first)
		select {
		case <-gotFirst:
			pw.Write(second)
			pw.Close()
		case <-t.Context().Done():
			pw.CloseWithError(errors.New("server never saw the first half"))
		}
	}()
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	if _, err := engine.Transcribe(ctx, pr); err != nil {
		t.Fatal(err)
	}
	_, _, file := fx.received()
	if !bytes.Equal(file, append(first, second...)) {
		t.Errorf("server received %d bytes, want %d", len(file), len(first)+len(second))
	}
}

func TestRemoteErrors(t *testing.T) {
	t.Parallel()
	audio := speech(t, sentences[0].text, containers[0])
	for _, tc := range []struct {
		name          string
		fixture       *openAIFixture
		key           string
		status        int
		unavailable   bool
		tooLong       bool
		retryAfter    time.Duration
		wantInMessage string
	}{
		{name: "wrong key", fixture: &openAIFixture{apiKey: "right"}, key: "wrong", status: 401, wantInMessage: "Incorrect API key"},
		{name: "overloaded", fixture: &openAIFixture{apiKey: "k", status: 503, retryAfter: "7"}, key: "k", status: 503,
			unavailable: true, retryAfter: 7 * time.Second, wantInMessage: "retry after 7s"},
		{name: "rate limited", fixture: &openAIFixture{apiKey: "k", status: 429}, key: "k", status: 429, unavailable: true},
		{name: "bad gateway", fixture: &openAIFixture{apiKey: "k", status: 502}, key: "k", status: 502, unavailable: true},
		{name: "too large", fixture: &openAIFixture{apiKey: "k", status: 413}, key: "k", status: 413, tooLong: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			engine := remoteEngine(t, tc.fixture, transcribe.Config{APIKey: tc.key})
			_, err := engine.Transcribe(t.Context(), bytes.NewReader(audio))
			if err == nil {
				t.Fatal("no error")
			}
			var httpErr *transcribe.HTTPError
			if !errors.As(err, &httpErr) || httpErr.StatusCode != tc.status {
				t.Fatalf("err = %v, want an HTTPError with status %d", err, tc.status)
			}
			if got := errors.Is(err, transcribe.ErrUnavailable); got != tc.unavailable {
				t.Errorf("errors.Is(%v, ErrUnavailable) = %v, want %v", err, got, tc.unavailable)
			}
			if got := errors.Is(err, transcribe.ErrTooLong); got != tc.tooLong {
				t.Errorf("errors.Is(%v, ErrTooLong) = %v, want %v", err, got, tc.tooLong)
			}
			if httpErr.RetryAfter != tc.retryAfter {
				t.Errorf("RetryAfter = %v, want %v", httpErr.RetryAfter, tc.retryAfter)
			}
			if !strings.Contains(err.Error(), tc.wantInMessage) {
				t.Errorf("err = %q, want it to contain %q", err, tc.wantInMessage)
			}
			if strings.Contains(err.Error(), tc.key) && tc.key != "k" {
				t.Errorf("err = %q reveals the API key", err)
			}
		})
	}
}

func TestRemoteUnreachable(t *testing.T) {
	t.Parallel()
	// A loopback port that was just free: nothing listens there.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	engine, err := transcribe.New(transcribe.Config{URL: "http://" + addr})
	if err != nil {
		t.Fatal(err)
	}
	_, err = engine.Transcribe(t.Context(), strings.NewReader("RIFF....WAVE"))
	if !errors.Is(err, transcribe.ErrUnavailable) {
		t.Fatalf("err = %v, want ErrUnavailable", err)
	}
}

func TestRemoteMalformedAnswerIsPermanent(t *testing.T) {
	t.Parallel()
	engine := remoteEngine(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		fmt.Fprint(w, `{"transcript": "wrong field"}`)
	}), transcribe.Config{})
	_, err := engine.Transcribe(t.Context(), strings.NewReader("audio"))
	if err == nil || errors.Is(err, transcribe.ErrUnavailable) {
		t.Fatalf("err = %v, want a permanent error", err)
	}
}

func TestRemoteCancellation(t *testing.T) {
	t.Parallel()
	arrived := make(chan struct{})
	engine := remoteEngine(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		close(arrived)
		<-r.Context().Done() // a slow engine: no answer until the client goes
	}), transcribe.Config{})

	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() {
		_, err := engine.Transcribe(ctx, bytes.NewReader(speech(t, sentences[0].text, containers[0])))
		done <- err
	}()
	<-arrived
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) || errors.Is(err, transcribe.ErrUnavailable) {
			t.Fatalf("err = %v, want context.Canceled and not ErrUnavailable", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Transcribe did not return after cancellation")
	}
}

func TestRemoteAudioReadFailure(t *testing.T) {
	t.Parallel()
	engine := remoteEngine(t, &openAIFixture{apiKey: "k", text: "x"}, transcribe.Config{APIKey: "k"})
	_, err := engine.Transcribe(t.Context(), &failingReader{data: []byte("RIFF....WAVEfmt ")})
	if err == nil || errors.Is(err, transcribe.ErrUnavailable) || !strings.Contains(err.Error(), "connection reset") {
		t.Fatalf("err = %v, want the read error, not ErrUnavailable", err)
	}
}

func TestRemoteClosed(t *testing.T) {
	t.Parallel()
	engine := remoteEngine(t, &openAIFixture{apiKey: "k", text: "x"}, transcribe.Config{APIKey: "k"})
	engine.Close()
	if _, err := engine.Transcribe(t.Context(), strings.NewReader("x")); !errors.Is(err, transcribe.ErrClosed) {
		t.Fatalf("err = %v, want ErrClosed", err)
	}
}

package transcribe

import (
	"bufio"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// DefaultRemoteModel is the model requested from an OpenAI-compatible engine
// when Config.Model is empty.
const DefaultRemoteModel = "whisper-1"

// HTTPError is a non-2xx answer of the OpenAI-compatible engine. It wraps
// ErrUnavailable for 408, 429 and 5xx (retry later), ErrTooLong for 413 and
// ErrInvalidAudio for 415; any other status is permanent as well (a bad key,
// an unknown model, a request the server rejects).
type HTTPError struct {
	// Engine is the Name of the engine that answered.
	Engine string
	// StatusCode is the HTTP status.
	StatusCode int
	// Message is the server's error message, shortened.
	Message string
	// RetryAfter is the server's Retry-After, zero when absent. The pipeline
	// owns retries; this is for its logs and back-off.
	RetryAfter time.Duration
}

// Error implements error.
func (e *HTTPError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "transcribe: %s answered HTTP %d", e.Engine, e.StatusCode)
	if e.Message != "" {
		b.WriteString(": ")
		b.WriteString(e.Message)
	}
	if e.RetryAfter > 0 {
		fmt.Fprintf(&b, " (retry after %s)", e.RetryAfter)
	}
	return b.String()
}

// Unwrap lets errors.Is classify the status; see HTTPError.
func (e *HTTPError) Unwrap() error {
	switch c := e.StatusCode; {
	case c == http.StatusRequestTimeout, c == http.StatusTooManyRequests, c >= 500:
		return ErrUnavailable
	case c == http.StatusRequestEntityTooLarge:
		return ErrTooLong
	case c == http.StatusUnsupportedMediaType:
		return ErrInvalidAudio
	}
	return nil
}

// remote is the OpenAI-compatible engine: POST {url}/v1/audio/transcriptions
// with a multipart form of "model" and "file", answered by {"text": "..."}.
type remote struct {
	endpoint string
	apiKey   string
	model    string
	client   *http.Client
	closed   atomic.Bool
}

var _ Transcriber = (*remote)(nil)

func newRemote(cfg Config) (*remote, error) {
	u, err := url.Parse(strings.TrimRight(cfg.URL, "/"))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("transcribe: %w: transcription URL must be http(s)://host[:port][/path], got %q", ErrNoEngine, redact(cfg.URL))
	}
	u.Path = strings.TrimSuffix(u.Path, "/v1") + "/v1/audio/transcriptions"
	u.RawPath = ""
	r := &remote{endpoint: u.String(), apiKey: cfg.APIKey, model: cfg.Model, client: cfg.HTTPClient}
	if r.model == "" {
		r.model = DefaultRemoteModel
	}
	if r.client == nil {
		r.client = http.DefaultClient
	}
	return r, nil
}

// redact hides a password in a URL that may appear in an error.
func redact(raw string) string {
	if u, err := url.Parse(raw); err == nil {
		return u.Redacted()
	}
	return "(unparsable)"
}

// Name implements Transcriber.
func (r *remote) Name() string { return "openai:" + r.model }

// Close implements Transcriber. Connections belong to the HTTP client, which
// may be shared, so they are left alone.
func (r *remote) Close() error {
	r.closed.Store(true)
	return nil
}

// errRequestDone stops the form writer once the exchange is over.
var errRequestDone = errors.New("request finished")

// Transcribe implements Transcriber. The audio is streamed as it is read,
// not buffered; its format is sniffed only to name the file part, since
// OpenAI's server picks the decoder from the file name's extension.
func (r *remote) Transcribe(ctx context.Context, audio io.Reader) (Result, error) {
	if r.closed.Load() {
		return Result{}, ErrClosed
	}
	br := bufio.NewReader(audio)
	head, _ := br.Peek(12) // a short input is the server's to reject
	ext, mimeType := sniff(head)

	pr, pw := io.Pipe()
	form := multipart.NewWriter(pw)
	readErr := make(chan error, 1)
	go func() {
		rerr, werr := writeForm(form, r.model, "audio"+ext, mimeType, br)
		if rerr != nil {
			pw.CloseWithError(rerr)
		} else {
			pw.CloseWithError(werr) // nil: the body ends with io.EOF
		}
		readErr <- rerr
	}()
	// Whatever the outcome, the writer must have stopped reading audio, which
	// belongs to the caller, before Transcribe returns; after cancellation a
	// Read that blocks is abandoned instead.
	finish := func() error {
		pr.CloseWithError(errRequestDone)
		select {
		case err := <-readErr:
			return err
		case <-ctx.Done():
			return nil
		}
	}

	req, err := http.NewRequestWithContext(ctx, http.MethodPost, r.endpoint, pr)
	if err != nil {
		finish()
		return Result{}, fmt.Errorf("transcribe: %s: %w", r.Name(), err)
	}
	req.Header.Set("Content-Type", form.FormDataContentType())
	req.Header.Set("Accept", "application/json")
	if r.apiKey != "" {
		req.Header.Set("Authorization", "Bearer "+r.apiKey)
	}

	resp, err := r.client.Do(req)
	if err != nil {
		if rerr := finish(); rerr != nil {
			return Result{}, fmt.Errorf("transcribe: read audio: %w", rerr)
		}
		return Result{}, r.transportError(ctx, err)
	}
	defer resp.Body.Close()
	res, err := r.decodeResponse(ctx, resp)
	if rerr := finish(); rerr != nil && err == nil {
		err = fmt.Errorf("transcribe: read audio: %w", rerr)
	}
	return res, err
}

// writeForm writes the multipart body and reports failures to read audio
// apart from failures to write (the request ending early).
func writeForm(form *multipart.Writer, model, filename, mimeType string, audio io.Reader) (readErr, writeErr error) {
	if err := form.WriteField("model", model); err != nil {
		return nil, err
	}
	h := make(textproto.MIMEHeader)
	h.Set("Content-Disposition", multipart.FileContentDisposition("file", filename))
	h.Set("Content-Type", mimeType)
	part, err := form.CreatePart(h)
	if err != nil {
		return nil, err
	}
	rr := &recordingReader{r: audio}
	if _, err := io.Copy(part, rr); err != nil {
		return rr.err, err
	}
	return nil, form.Close()
}

// transportError classifies a failure to get any answer: the caller's
// cancellation is reported as such; everything else — refused or reset
// connections, DNS failures, timeouts, including the caller's deadline — is
// ErrUnavailable, except a server certificate that does not verify, which
// retrying will not fix.
func (r *remote) transportError(ctx context.Context, err error) error {
	if errors.Is(context.Cause(ctx), context.Canceled) {
		return fmt.Errorf("transcribe: %s: %w", r.Name(), context.Cause(ctx))
	}
	var certErr *tls.CertificateVerificationError
	if errors.As(err, &certErr) {
		return fmt.Errorf("transcribe: %s: %w", r.Name(), err)
	}
	return fmt.Errorf("%w: %s: %w", ErrUnavailable, r.Name(), err)
}

// Bounds on what is read of an answer: a transcript of the longest clip is a
// few tens of KB; an error message needs far less.
const (
	maxResponseBytes = 8 << 20
	maxErrorBytes    = 4 << 10
)

func (r *remote) decodeResponse(ctx context.Context, resp *http.Response) (Result, error) {
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBytes))
		return Result{}, &HTTPError{
			Engine:     r.Name(),
			StatusCode: resp.StatusCode,
			Message:    errorMessage(body),
			RetryAfter: retryAfter(resp.Header.Get("Retry-After"), time.Now()),
		}
	}
	var body struct {
		Text     *string `json:"text"`
		Duration float64 `json:"duration"` // verbose_json-style servers only
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, maxResponseBytes)).Decode(&body); err != nil {
		if ctx.Err() != nil || !isJSONError(err) {
			// The connection broke while the answer arrived.
			return Result{}, r.transportError(ctx, err)
		}
		return Result{}, fmt.Errorf("transcribe: %s: answer is not the expected JSON: %w", r.Name(), err)
	}
	if body.Text == nil {
		return Result{}, fmt.Errorf("transcribe: %s: answer has no \"text\"", r.Name())
	}
	return Result{
		Text:          strings.TrimSpace(*body.Text),
		AudioDuration: time.Duration(body.Duration * float64(time.Second)),
	}, nil
}

// isJSONError reports whether err is about the answer's content rather than
// about receiving it.
func isJSONError(err error) bool {
	var syntax *json.SyntaxError
	var typ *json.UnmarshalTypeError
	return errors.As(err, &syntax) || errors.As(err, &typ) || errors.Is(err, io.EOF)
}

// errorMessage extracts the message of an error answer: OpenAI's
// {"error": {"message": ...}}, {"error": "..."}, FastAPI's {"detail": ...},
// or else the body's text, shortened.
func errorMessage(body []byte) string {
	var shaped struct {
		Error  json.RawMessage `json:"error"`
		Detail json.RawMessage `json:"detail"`
	}
	msg := strings.TrimSpace(string(body))
	if json.Unmarshal(body, &shaped) == nil {
		var obj struct {
			Message string `json:"message"`
		}
		var s string
		switch {
		case json.Unmarshal(shaped.Error, &obj) == nil && obj.Message != "":
			msg = obj.Message
		case json.Unmarshal(shaped.Error, &s) == nil && s != "":
			msg = s
		case json.Unmarshal(shaped.Detail, &s) == nil && s != "":
			msg = s
		case len(shaped.Detail) > 0:
			msg = string(shaped.Detail)
		}
	}
	msg = strings.Join(strings.Fields(msg), " ")
	if len(msg) > 300 {
		msg = strings.ToValidUTF8(msg[:300], "") + "…"
	}
	return msg
}

// retryAfter parses a Retry-After header: delay-seconds or an HTTP date.
func retryAfter(v string, now time.Time) time.Duration {
	if v == "" {
		return 0
	}
	if s, err := strconv.Atoi(strings.TrimSpace(v)); err == nil && s > 0 {
		return time.Duration(s) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return t.Sub(now).Round(time.Second)
	}
	return 0
}

// sniff names the container of an audio clip from its first bytes: the
// file extension and MIME type to send, or ".bin" and
// application/octet-stream when unknown.
func sniff(head []byte) (ext, mimeType string) {
	s := string(head)
	switch {
	case len(s) >= 12 && s[:4] == "RIFF" && s[8:12] == "WAVE":
		return ".wav", "audio/wav"
	case strings.HasPrefix(s, "OggS"):
		return ".ogg", "audio/ogg"
	case strings.HasPrefix(s, "\x1a\x45\xdf\xa3"):
		return ".webm", "audio/webm"
	case isMP4(head):
		return ".m4a", "audio/mp4"
	case strings.HasPrefix(s, "fLaC"):
		return ".flac", "audio/flac"
	case strings.HasPrefix(s, "ID3"), len(head) >= 2 && head[0] == 0xff && head[1]&0xe0 == 0xe0:
		return ".mp3", "audio/mpeg"
	}
	return ".bin", "application/octet-stream"
}

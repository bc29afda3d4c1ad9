package sdk_test

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stratahq/strata/impl/principal"
	"github.com/stratahq/strata/sdk"
)

// gatedReader serves its first gateAt bytes, then waits until the request
// is on its way before serving the rest: an upload that read the whole
// file before sending would never get past the gate.
type gatedReader struct {
	r      io.Reader
	gateAt int64
	gate   <-chan struct{}
	read   int64
}

func (g *gatedReader) Read(p []byte) (int, error) {
	if g.read >= g.gateAt {
		select {
		case <-g.gate:
		case <-time.After(10 * time.Second):
			return 0, errors.New("the upload read 1 MiB without sending anything: it buffers the file")
		}
	}
	if rest := g.gateAt - g.read; rest > 0 && int64(len(p)) > rest {
		p = p[:rest]
	}
	n, err := g.r.Read(p)
	g.read += int64(n)
	return n, err
}

// gateUntilSent signs c in and returns a gatedReader of data that serves
// its first MiB, then waits until c sends a request to path.
func gateUntilSent(t *testing.T, c *client, path string, data []byte) *gatedReader {
	t.Helper()
	if err := c.Login(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	sent := make(chan struct{})
	var once sync.Once
	c.wire.onSend = func(r *http.Request) {
		if r.URL.Path == path {
			once.Do(func() { close(sent) })
		}
	}
	return &gatedReader{r: bytes.NewReader(data), gateAt: 1 << 20, gate: sent}
}

func TestUploadVoiceNoteStreams(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	c := newUser(t, e, "ada@example.com", principal.TierPro)
	ctx := ctxT(t)
	wav := wavBytes(5 << 19) // 5 MiB of samples
	r := gateUntilSent(t, c, "/api/content/voice-notes", wav)
	item, err := c.UploadVoiceNote(ctx, r, "memo.wav", sdk.UploadTitle("Standup"), sdk.UploadTags("work", "daily"))
	if err != nil {
		t.Fatal(err)
	}
	if r.read != int64(len(wav)) {
		t.Fatalf("read %d of %d bytes", r.read, len(wav))
	}
	if item.Type != sdk.VoiceNote || item.MediaKind == nil || *item.MediaKind != sdk.Audio || item.MediaURL == nil ||
		item.Title != "Standup" || !slices.Equal(item.Tags, []string{"work", "daily"}) || c.wire.count("/api/content/voice-notes 202") != 1 {
		t.Fatalf("%+v\n%s", item, c.wire)
	}
	// The server stored every byte.
	media, err := c.API().GetContentMediaWithResponse(ctx, item.ID, nil)
	if err != nil || media.StatusCode() != 200 || !bytes.Equal(media.Body, wav) {
		t.Fatalf("media: %v %d, %d bytes", err, media.StatusCode(), len(media.Body))
	}
}

func TestUploadVoiceNoteErrors(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	c := newUser(t, e, "ada@example.com", principal.TierPro)
	ctx := ctxT(t)

	_, err := c.UploadVoiceNote(ctx, strings.NewReader("not audio at all"), "notes.txt")
	var apiErr *sdk.APIError
	if !errors.As(err, &apiErr) || apiErr.StatusCode != 415 || apiErr.Code != "unsupported_media_type" {
		t.Fatalf("err %v, want 415", err)
	}
	// A failing reader fails the upload with its error, and leaves nothing.
	boom := errors.New("disk on fire")
	_, err = c.UploadVoiceNote(ctx, io.MultiReader(bytes.NewReader(wavBytes(1000)), &failingReader{boom}), "memo.wav")
	if !errors.Is(err, boom) {
		t.Fatalf("err %v, want the reader's", err)
	}
	for _, err := range c.Items(ctx, sdk.ListOptions{}) {
		if err != nil {
			t.Fatal(err)
		}
		t.Fatal("an item was left by the failed uploads")
	}
	if n := c.wire.count("POST /api/content/voice-notes"); n != 2 {
		t.Fatalf("%d uploads sent, want 2 (no retries):\n%s", n, c.wire)
	}
}

type failingReader struct{ err error }

func (f *failingReader) Read([]byte) (int, error) { return 0, f.err }

// A file expiring token mid-way is sent again from where it started,
// after a refresh; it can be, because an *os.File seeks.
func TestUploadRetriesSeekableAfterTokenExpired(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	c := newUser(t, e, "ada@example.com", principal.TierPro)
	ctx := ctxT(t)
	path := filepath.Join(t.TempDir(), "memo.wav")
	wav := wavBytes(16000)
	if err := os.WriteFile(path, wav, 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := c.Login(ctx); err != nil {
		t.Fatal(err)
	}
	e.Clock.Advance(61 * time.Minute) // the server now refuses the token
	item, err := c.UploadVoiceNote(ctx, f, "memo.wav")
	if err != nil {
		t.Fatal(err)
	}
	if c.wire.count("POST /api/content/voice-notes 401") != 1 || c.wire.count(refreshGrant) != 1 ||
		c.wire.count("POST /api/content/voice-notes 202") != 1 {
		t.Fatalf("want refused, refreshed, accepted:\n%s", c.wire)
	}
	media, err := c.API().GetContentMediaWithResponse(ctx, item.ID, nil)
	if err != nil || !bytes.Equal(media.Body, wav) {
		t.Fatalf("media: %v, %d bytes", err, len(media.Body))
	}

	// A plain reader cannot be sent again: the error says so.
	e.Clock.Advance(61 * time.Minute)
	_, err = c.UploadVoiceNote(ctx, bytes.NewBuffer(wav), "memo.wav")
	if !errors.Is(err, sdk.ErrTokenExpired) {
		t.Fatalf("err %v, want ErrTokenExpired", err)
	}
}

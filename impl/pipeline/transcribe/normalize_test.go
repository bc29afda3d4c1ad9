package transcribe_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stratahq/strata/impl/pipeline/transcribe"
)

func TestNormalizeProduces16kMonoPCM(t *testing.T) {
	t.Parallel()
	in := recording(t, "goforward.raw") // 16 kHz mono s16le in a WAV header
	var out bytes.Buffer
	dur, err := transcribe.Normalize(t.Context(), bytes.NewReader(in), &out)
	if err != nil {
		t.Fatal(err)
	}
	// Same rate and layout: the samples come through unchanged.
	if !bytes.Equal(out.Bytes(), in[44:]) {
		t.Errorf("normalised %d bytes differ from the %d input samples' bytes", out.Len(), len(in)-44)
	}
	if want := time.Duration(len(in)-44) * time.Second / 32000; dur != want {
		t.Errorf("duration = %v, want %v", dur, want)
	}
}

// onlyReader hides every method but Read, as an upload stream would.
type onlyReader struct{ r io.Reader }

func (o onlyReader) Read(p []byte) (int, error) { return o.r.Read(p) }

// TestNormalizeM4AFromStream covers MP4-family input whose index follows the
// audio (ffmpeg's default layout, and common for phone recordings): from a
// pipe ffmpeg cannot reach it once the file outgrows its buffer, so
// Normalize must spool it.
func TestNormalizeM4AFromStream(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "long.m4a")
	if err := run("ffmpeg", "-nostdin", "-loglevel", "error", "-f", "lavfi", "-i", "sine=frequency=440:duration=120",
		"-c:a", "aac", "-b:a", "128k", path); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	dur, err := transcribe.Normalize(t.Context(), onlyReader{f}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if dur < 119*time.Second || dur > 121*time.Second {
		t.Errorf("duration = %v, want about 2m", dur)
	}
}

func TestNormalizeRejectsLongClips(t *testing.T) {
	t.Parallel()
	n := transcribe.Normalizer{MaxDuration: time.Second}
	var out bytes.Buffer
	_, err := n.Normalize(t.Context(), bytes.NewReader(recording(t, "goforward.raw")), &out)
	if !errors.Is(err, transcribe.ErrTooLong) || !errors.Is(err, transcribe.ErrInvalidAudio) {
		t.Fatalf("err = %v, want ErrTooLong (an ErrInvalidAudio)", err)
	}
	if out.Len() > 32000 {
		t.Errorf("wrote %d bytes, more than the 1 s limit", out.Len())
	}
}

// failingWriter fails every write.
type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

// failingReader yields some bytes and then fails, like a broken upload.
type failingReader struct{ data []byte }

func (r *failingReader) Read(p []byte) (int, error) {
	if len(r.data) == 0 {
		return 0, errors.New("connection reset")
	}
	n := copy(p, r.data)
	r.data = r.data[n:]
	return n, nil
}

// TestNormalizeIOFailuresAreNotInvalidAudio: a failing stream on either side
// is this machine's problem, not the clip's, and must not fail the job for
// good.
func TestNormalizeIOFailuresAreNotInvalidAudio(t *testing.T) {
	t.Parallel()
	in := recording(t, "goforward.raw")
	_, err := transcribe.Normalize(t.Context(), bytes.NewReader(in), failingWriter{})
	if err == nil || errors.Is(err, transcribe.ErrInvalidAudio) {
		t.Errorf("failing writer: err = %v, want a write error", err)
	}
	_, err = transcribe.Normalize(t.Context(), &failingReader{data: in[:len(in)/2]}, io.Discard)
	if err == nil || errors.Is(err, transcribe.ErrInvalidAudio) {
		t.Errorf("failing reader: err = %v, want a read error", err)
	}
}

// FuzzNormalize holds Normalize to its contract for untrusted uploads: any
// bytes either decode to some audio or fail with ErrInvalidAudio, promptly;
// never another kind of error, never a hang. `go test` runs the seeds; run
// `go test -fuzz FuzzNormalize` to explore (each input starts ffmpeg, so
// expect tens of inputs per second).
func FuzzNormalize(f *testing.F) {
	f.Add([]byte(nil))
	f.Add([]byte("RIFF\x24\x00\x00\x00WAVEfmt "))
	f.Add([]byte("OggS\x00\x02"))
	f.Add([]byte("\x00\x00\x00\x1cftypM4A \x00\x00\x02\x00"))
	f.Add([]byte("\x1a\x45\xdf\xa3\x9f\x42\x86\x81\x01"))
	f.Add([]byte("ID3\x04\x00\x00\x00\x00\x00\x00\xff\xfb\x90\x00"))
	f.Fuzz(func(t *testing.T, data []byte) {
		ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
		defer cancel()
		d, err := transcribe.Normalize(ctx, bytes.NewReader(data), io.Discard)
		switch {
		case err == nil && d <= 0:
			t.Fatalf("no error and duration %v", d)
		case err != nil && !errors.Is(err, transcribe.ErrInvalidAudio):
			t.Fatalf("err = %v, want nil or ErrInvalidAudio", err)
		}
	})
}

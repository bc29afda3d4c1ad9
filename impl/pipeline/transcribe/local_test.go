package transcribe_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stratahq/strata/impl/pipeline/transcribe"
)

// sentences are espeak-ng clips PocketSphinx's en-us model recognises
// reliably, each with keywords of which the tests require at least two. They
// were chosen from a larger set by transcribing every container format:
// each keyword here was recognised in all five (see the package's closing
// note for the sentences that were not reliable).
var sentences = []struct {
	text     string
	keywords []string
}{
	{"remember to buy milk and eggs tomorrow morning", []string{"remember", "tomorrow", "morning"}},
	{"the meeting with the team is moved to friday afternoon", []string{"friday", "afternoon", "moved"}},
	{"book a table for dinner at the italian restaurant", []string{"table", "dinner", "restaurant"}},
}

func TestLocalTranscribesEveryContainer(t *testing.T) {
	t.Parallel()
	engine := localEngine(t)
	for _, s := range sentences {
		for _, c := range containers {
			t.Run(c.ext+"/"+strings.Join(strings.Fields(s.text)[:3], "_"), func(t *testing.T) {
				t.Parallel()
				audio := speech(t, s.text, c)
				wav := speech(t, s.text, containers[0])
				res, err := engine.Transcribe(t.Context(), bytes.NewReader(audio))
				if err != nil {
					t.Fatal(err)
				}
				t.Logf("%q → %q (WER %.2f)", s.text, res.Text, wer(s.text, res.Text))
				if found := hits(res.Text, s.keywords); len(found) < 2 {
					t.Errorf("transcript %q has %v of the keywords %v, want at least two", res.Text, found, s.keywords)
				}
				// espeak-ng writes 22.05 kHz WAV with a 44-byte header;
				// lossy encoders add up to a few tens of ms of padding.
				want := time.Duration(len(wav)-44) * time.Second / (22050 * 2)
				if d := res.AudioDuration - want; d < -20*time.Millisecond || d > 100*time.Millisecond {
					t.Errorf("AudioDuration = %v, want about %v", res.AudioDuration, want)
				}
			})
		}
	}
}

// TestLocalRecordedSpeech uses real recordings shipped by Debian's
// pocketsphinx-testdata (the raw files are 16 kHz s16le).
func TestLocalRecordedSpeech(t *testing.T) {
	t.Parallel()
	engine := localEngine(t)
	for _, tc := range []struct {
		file      string
		reference string
		keywords  []string
		need      int
	}{
		{"goforward.raw", "go forward ten meters", []string{"forward", "ten", "meters"}, 3},
		{"something.raw", "go somewhere and do something", []string{"somewhere", "something"}, 2},
		{"librivox/sense_and_sensibility_01_austen_64kb-0930.wav", "he might even have been made amiable himself",
			[]string{"might", "amiable", "himself"}, 2},
	} {
		t.Run(tc.file, func(t *testing.T) {
			t.Parallel()
			res, err := engine.Transcribe(t.Context(), bytes.NewReader(recording(t, tc.file)))
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%q → %q (WER %.2f)", tc.reference, res.Text, wer(tc.reference, res.Text))
			if found := hits(res.Text, tc.keywords); len(found) < tc.need {
				t.Errorf("transcript %q has %v of the keywords %v, want %d", res.Text, found, tc.keywords, tc.need)
			}
		})
	}
}

// TestLocalConcurrentCalls checks that concurrent calls share the one
// decoder correctly: each gets its own clip's transcript.
func TestLocalConcurrentCalls(t *testing.T) {
	t.Parallel()
	engine := localEngine(t)
	type job struct {
		audio    []byte
		keywords []string
	}
	jobs := []job{
		{recording(t, "goforward.raw"), []string{"forward", "meters"}},
		{recording(t, "something.raw"), []string{"somewhere", "something"}},
		{speech(t, sentences[0].text, containers[2]), sentences[0].keywords},
		{recording(t, "goforward.raw"), []string{"forward", "meters"}},
		{speech(t, sentences[0].text, containers[0]), sentences[0].keywords},
	}
	var wg sync.WaitGroup
	for i, j := range jobs {
		wg.Go(func() {
			res, err := engine.Transcribe(t.Context(), bytes.NewReader(j.audio))
			if err != nil {
				t.Errorf("call %d: %v", i, err)
				return
			}
			if found := hits(res.Text, j.keywords); len(found) < 2 {
				t.Errorf("call %d: transcript %q lacks %v", i, res.Text, j.keywords)
			}
		})
	}
	wg.Wait()
}

func TestLocalRejectsInvalidAudio(t *testing.T) {
	t.Parallel()
	engine := localEngine(t)
	wav := speech(t, sentences[0].text, containers[0])
	m4a := speech(t, sentences[0].text, containers[4])
	noise := make([]byte, 64<<10)
	rng := rand.New(rand.NewPCG(7, 7))
	for i := range noise {
		noise[i] = byte(rng.Uint32())
	}
	for _, tc := range []struct {
		name  string
		audio []byte
	}{
		{"random bytes", noise},
		{"truncated WAV header", wav[:30]},
		{"WAV header only", wav[:44]},
		{"truncated m4a", m4a[:3000]},
		{"text file", []byte(strings.Repeat("this is a text file, not audio\n", 200))},
		{"empty", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			// A hang would show as the deadline, not as ErrInvalidAudio.
			ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
			defer cancel()
			start := time.Now()
			_, err := engine.Transcribe(ctx, bytes.NewReader(tc.audio))
			if !errors.Is(err, transcribe.ErrInvalidAudio) {
				t.Fatalf("err = %v, want ErrInvalidAudio", err)
			}
			if errors.Is(err, transcribe.ErrUnavailable) || errors.Is(err, transcribe.ErrTooLong) {
				t.Errorf("err = %v: also marked unavailable or too long", err)
			}
			if msg := err.Error(); strings.Contains(msg, "/dev/stdin") || strings.Contains(msg, "pipe:") || strings.Contains(msg, "/tmp") {
				t.Errorf("error names a server path or pipe: %q", msg)
			}
			t.Logf("%v after %v", err, time.Since(start).Round(time.Millisecond))
		})
	}
}

// blockingReader yields data, then blocks until released, like an upload
// whose client has stalled.
type blockingReader struct {
	data    []byte
	blocked chan struct{} // closed on the first blocking Read
	release chan struct{}
	once    sync.Once
}

func (r *blockingReader) Read(p []byte) (int, error) {
	if len(r.data) > 0 {
		n := copy(p, r.data)
		r.data = r.data[n:]
		return n, nil
	}
	r.once.Do(func() { close(r.blocked) })
	<-r.release
	return 0, io.ErrUnexpectedEOF
}

// TestLocalCancelKillsFFmpeg cancels a call while ffmpeg waits for more
// input that never comes. The stalled reader never ends ffmpeg's input, so
// the call can only return once ffmpeg has been killed (exec.Cmd.Wait waits
// for the process to exit).
func TestLocalCancelKillsFFmpeg(t *testing.T) {
	t.Parallel()
	engine := localEngine(t)
	wav := speech(t, sentences[0].text, containers[0])
	r := &blockingReader{data: wav[:len(wav)/2], blocked: make(chan struct{}), release: make(chan struct{})}
	defer close(r.release)

	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() {
		_, err := engine.Transcribe(ctx, r)
		done <- err
	}()
	<-r.blocked // ffmpeg is running and has read half the clip
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("err = %v, want context.Canceled", err)
		}
		if errors.Is(err, transcribe.ErrInvalidAudio) {
			t.Errorf("err = %v: a cancellation reported as invalid audio", err)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("Transcribe did not return after cancellation: ffmpeg still running")
	}
}

func TestLocalEngineLifecycle(t *testing.T) {
	t.Parallel()
	engine, err := transcribe.New(transcribe.Config{})
	if err != nil {
		t.Fatal(err)
	}
	if got := engine.Name(); got != "pocketsphinx-en-us" {
		t.Errorf("Name() = %q", got)
	}
	if err := engine.Close(); err != nil {
		t.Fatal(err)
	}
	if err := engine.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	_, err = engine.Transcribe(t.Context(), bytes.NewReader(recording(t, "goforward.raw")))
	if !errors.Is(err, transcribe.ErrClosed) {
		t.Errorf("Transcribe after Close: err = %v, want ErrClosed", err)
	}
}

func TestNewReportsMissingDependencies(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		cfg  transcribe.Config
		want string
	}{
		{"model", transcribe.Config{ModelDir: t.TempDir()}, "pocketsphinx-en-us"},
		{"ffmpeg", transcribe.Config{FFmpegPath: "/nonexistent/ffmpeg"}, "ffmpeg"},
		{"URL scheme", transcribe.Config{URL: "ftp://example.test"}, "http(s)"},
		{"URL host", transcribe.Config{URL: "http://"}, "http(s)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := transcribe.New(tc.cfg)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want one mentioning %q", err, tc.want)
			}
		})
	}
}

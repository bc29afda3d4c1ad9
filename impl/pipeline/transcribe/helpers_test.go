package transcribe_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stratahq/strata/impl/pipeline/transcribe"
)

// The speech tests use the real components: ffmpeg, PocketSphinx with
// Debian's en-us model, and espeak-ng to make speech (deterministically: the
// same text, voice and rate give the same samples). `make deps` installs
// them; a missing one fails the tests rather than skipping them, so that a
// green run means the engine was exercised.

// testData is where Debian's pocketsphinx-testdata package puts its
// recordings.
const testData = "/usr/share/pocketsphinx/test/data"

// shared holds what the tests have in common: one local engine, since the
// production code loads one per process, and a directory of generated clips.
var shared struct {
	engineOnce sync.Once
	engine     transcribe.Transcriber
	engineErr  error

	dir   string
	clips sync.Map // key → *clip
}

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "transcribe-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	shared.dir = dir
	code := m.Run()
	if shared.engine != nil {
		shared.engine.Close()
	}
	os.RemoveAll(dir)
	os.Exit(code)
}

// localEngine returns the shared PocketSphinx engine.
func localEngine(tb testing.TB) transcribe.Transcriber {
	tb.Helper()
	shared.engineOnce.Do(func() {
		shared.engine, shared.engineErr = transcribe.New(transcribe.Config{})
	})
	if shared.engineErr != nil {
		tb.Fatalf("local engine: %v (run `make deps`)", shared.engineErr)
	}
	return shared.engine
}

// clip is one generated audio file, made once however many tests ask.
type clip struct {
	once sync.Once
	data []byte
	err  error
}

// container is an audio format the tests produce with ffmpeg: the
// extension and the encoder arguments (Debian's ffmpeg defaults otherwise).
type container struct {
	ext  string
	args []string
}

// containers are the upload formats the service accepts.
var containers = []container{
	{"wav", nil},
	{"mp3", []string{"-c:a", "libmp3lame"}},
	{"ogg", []string{"-c:a", "libopus"}},
	{"webm", []string{"-c:a", "libopus"}},
	{"m4a", []string{"-c:a", "aac"}},
}

// speech returns text spoken by espeak-ng (US English, klatt2 voice, 175
// words per minute) in the container c.
func speech(tb testing.TB, text string, c container) []byte {
	tb.Helper()
	sum := sha256.Sum256([]byte(text))
	base := filepath.Join(shared.dir, hex.EncodeToString(sum[:8]))
	wav := base + ".wav"
	wavData := generated(tb, wav, func() error {
		return run("espeak-ng", "-v", "en-us+klatt2", "-s", "175", "-w", wav, text)
	})
	if c.ext == "wav" {
		return wavData
	}
	out := base + "." + c.ext
	return generated(tb, out, func() error {
		args := append([]string{"-nostdin", "-loglevel", "error", "-y", "-i", wav}, c.args...)
		return run("ffmpeg", append(args, out)...)
	})
}

// generated makes path with gen the first time and returns its content.
func generated(tb testing.TB, path string, gen func() error) []byte {
	tb.Helper()
	v, _ := shared.clips.LoadOrStore(path, new(clip))
	c := v.(*clip)
	c.once.Do(func() {
		if c.err = gen(); c.err == nil {
			c.data, c.err = os.ReadFile(path)
		}
	})
	if c.err != nil {
		tb.Fatalf("generate %s: %v (run `make deps`)", filepath.Base(path), c.err)
	}
	return c.data
}

func run(name string, args ...string) error {
	out, err := exec.Command(name, args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s: %w: %s", name, err, out)
	}
	return nil
}

// recording returns a file of Debian's pocketsphinx-testdata; raw 16 kHz
// s16le files come wrapped in a WAV header so that ffmpeg can tell what they
// are.
func recording(tb testing.TB, name string) []byte {
	tb.Helper()
	data, err := os.ReadFile(filepath.Join(testData, name))
	if err != nil {
		tb.Fatalf("%v (install pocketsphinx-testdata: `make deps`)", err)
	}
	if strings.HasSuffix(name, ".raw") {
		return wavFile(data, transcribe.SampleRate)
	}
	return data
}

// wavFile wraps mono s16le samples in a canonical 44-byte WAV header.
func wavFile(pcm []byte, rate int) []byte {
	var b bytes.Buffer
	le := func(v any) { binary.Write(&b, binary.LittleEndian, v) }
	b.WriteString("RIFF")
	le(uint32(36 + len(pcm)))
	b.WriteString("WAVEfmt ")
	le(uint32(16))
	le(uint16(1)) // PCM
	le(uint16(1)) // mono
	le(uint32(rate))
	le(uint32(rate * 2))
	le(uint16(2))
	le(uint16(16))
	b.WriteString("data")
	le(uint32(len(pcm)))
	b.Write(pcm)
	return b.Bytes()
}

// hits returns which of keywords occur as words in text.
func hits(text string, keywords []string) []string {
	words := make(map[string]bool)
	for _, w := range strings.Fields(text) {
		words[w] = true
	}
	var found []string
	for _, k := range keywords {
		if words[k] {
			found = append(found, k)
		}
	}
	return found
}

// wer is the word error rate of hyp against ref: word-level edit distance
// over the number of reference words. Logged, not asserted: the tests assert
// keywords, which are stable, while exact transcripts are not a contract.
func wer(ref, hyp string) float64 {
	r, h := strings.Fields(ref), strings.Fields(hyp)
	prev := make([]int, len(h)+1)
	cur := make([]int, len(h)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(r); i++ {
		cur[0] = i
		for j := 1; j <= len(h); j++ {
			sub := prev[j-1]
			if r[i-1] != h[j-1] {
				sub++
			}
			cur[j] = min(sub, prev[j]+1, cur[j-1]+1)
		}
		prev, cur = cur, prev
	}
	return float64(prev[len(h)]) / float64(max(len(r), 1))
}

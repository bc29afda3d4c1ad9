// Package transcribe turns uploaded voice notes into text for the content
// pipeline.
//
// Two engines sit behind the [Transcriber] interface and [New] picks one from
// [Config]:
//
//   - the local default, PocketSphinx from Debian (packages pocketsphinx,
//     pocketsphinx-en-us, libpocketsphinx-dev) through cgo, with one decoder
//     loaded once per Transcriber and serialised by a lock;
//   - any OpenAI-compatible POST {url}/v1/audio/transcriptions endpoint when
//     Config.URL is set.
//
// The local engine first normalises audio with ffmpeg to 16 kHz mono
// signed 16-bit little-endian PCM ([Normalize]), using the soxr resampler:
// ffmpeg's default resampler makes PocketSphinx markedly worse (word error
// rate 49% instead of 39% on this package's synthetic test sentences). It
// then decodes the whole clip as one utterance, which is more accurate than
// feeding it in chunks, at about five times real time on one core of the
// project's AMD EPYC machines: a 15-minute clip holds the decoder for about
// three minutes, and other clips wait for it.
//
// Errors tell the pipeline what to do next: [ErrInvalidAudio] (and
// [ErrTooLong], which wraps it) is permanent, so the job fails at once;
// [ErrUnavailable] is transient, so the job is retried; [ErrNoEngine] says
// that no engine could be set up; anything else is a fault of this machine
// or of the configuration. Messages are for logs: they may quote ffmpeg.
package transcribe

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"
)

// Sentinel errors; match them with errors.Is.
var (
	// ErrInvalidAudio marks input that cannot be decoded as audio (corrupt,
	// truncated, not audio at all, or without an audio stream). It is
	// permanent: retrying the same bytes fails the same way.
	ErrInvalidAudio = errors.New("invalid audio")

	// ErrTooLong marks a clip longer than Config.MaxDuration (or a request the
	// remote engine refused as too large). It wraps ErrInvalidAudio, so a
	// caller that only checks ErrInvalidAudio also treats it as permanent.
	ErrTooLong = fmt.Errorf("%w: too long", ErrInvalidAudio)

	// ErrUnavailable marks a transient failure of the remote engine: it was
	// unreachable, timed out at the network level, or answered 408, 429 or
	// 5xx. The pipeline retries these.
	ErrUnavailable = errors.New("transcription engine unavailable")

	// ErrNoEngine marks an engine that cannot be set up on this machine: the
	// local one without ffmpeg, its model or cgo, or a malformed
	// transcription URL. Retrying does not help until an operator acts.
	ErrNoEngine = errors.New("no speech engine available")

	// ErrClosed is returned by Transcribe after Close.
	ErrClosed = errors.New("transcriber closed")
)

// DefaultMaxDuration is the longest clip accepted when Config.MaxDuration is
// zero. It bounds the memory the local engine needs for one clip: the PCM
// (16 kHz × 2 bytes × 900 s ≈ 29 MB) and the decoder's search, which grows
// with the clip (the process peaked at about 260 MB for a 5-minute clip).
const DefaultMaxDuration = 15 * time.Minute

// Transcriber turns speech into text. Implementations are safe for
// concurrent use.
type Transcriber interface {
	// Transcribe reads one audio clip in any container ffmpeg understands
	// (wav, mp3, ogg/opus, webm, m4a, …) and returns its transcript. It does
	// not close audio, and has stopped reading it when it returns, except
	// after ctx is cancelled: then a Read that blocks is abandoned rather than
	// waited for.
	Transcribe(ctx context.Context, audio io.Reader) (Result, error)
	// Name identifies the engine and model for logs and records, e.g.
	// "pocketsphinx-en-us" or "openai:whisper-1".
	Name() string
	// Close releases the engine. Transcribe calls after Close fail with
	// ErrClosed.
	Close() error
}

// Result is the outcome of one transcription.
type Result struct {
	// Text is the transcript: lower-case words separated by single spaces for
	// the local engine, whatever the remote engine returned otherwise. It is
	// empty when no speech was recognised.
	Text string
	// AudioDuration is the length of the clip. The remote engine knows it
	// only when the server reports a "duration" (verbose_json-style servers
	// do); otherwise it is zero.
	AudioDuration time.Duration
}

// Config chooses and configures an engine. The zero value selects the local
// PocketSphinx engine with Debian's model files and ffmpeg from PATH.
type Config struct {
	// URL selects the OpenAI-compatible engine: the server's base URL, e.g.
	// "http://whisper:8000"; requests go to URL + "/v1/audio/transcriptions".
	// A trailing "/v1" is accepted too. Empty selects the local engine.
	URL string
	// APIKey, when set, is sent as "Authorization: Bearer <APIKey>".
	APIKey string
	// Model is the remote model name sent in the "model" form field;
	// "whisper-1" when empty. Ignored by the local engine.
	Model string
	// HTTPClient sends the remote requests; a client without its own timeout
	// is fine because every request carries the caller's context.
	// http.DefaultClient when nil.
	HTTPClient *http.Client

	// FFmpegPath is the ffmpeg binary; "ffmpeg" looked up in PATH when empty.
	FFmpegPath string
	// ModelDir holds the PocketSphinx model in Debian's layout (an acoustic
	// model directory en-us/, the language model en-us.lm.bin and the
	// dictionary cmudict-en-us.dict); DefaultModelDir when empty.
	ModelDir string
	// MaxDuration rejects longer clips with ErrTooLong; DefaultMaxDuration
	// when zero. The remote engine is bounded by the server's own limits.
	MaxDuration time.Duration
}

// New returns the engine cfg selects: OpenAI-compatible when cfg.URL is set,
// local PocketSphinx otherwise. Loading the local model takes about half a
// second and 100 MB of memory, so create one Transcriber per process and
// share it.
func New(cfg Config) (Transcriber, error) {
	if cfg.URL != "" {
		return newRemote(cfg)
	}
	return newLocal(cfg)
}

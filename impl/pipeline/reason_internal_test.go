package pipeline

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/stratahq/strata/impl/pipeline/textai"
	"github.com/stratahq/strata/impl/pipeline/transcribe"
)

// Every failure the pipeline meets becomes one fixed sentence: what the
// errors say (ffmpeg's words, URLs, paths, engine answers) stays out.
func TestPublicReason(t *testing.T) {
	t.Parallel()
	ffmpeg := fmt.Errorf("%w: ffmpeg: [mp3] Failed to read frame size: Could not seek to 1138.; input: Invalid argument", transcribe.ErrInvalidAudio)
	cases := []struct {
		err  error
		want string
	}{
		{fmt.Errorf("transcribe: %w", ffmpeg), "the audio could not be decoded"},
		{fmt.Errorf("transcribe: %w: the clip is longer than the 15m0s limit", transcribe.ErrTooLong), "the recording is too long to transcribe"},
		{&transcribe.HTTPError{Engine: "openai:whisper-1", StatusCode: 413, Message: "file too big"}, "the recording is too long to transcribe"},
		{fmt.Errorf("load transcriber: %w", fmt.Errorf("transcribe: %w: PocketSphinx model file missing: stat /usr/share/pocketsphinx/model/en-us/en-us/mdef: no such file", transcribe.ErrNoEngine)),
			"no speech engine available: transcription is not set up on this server"},
		{fmt.Errorf("transcribe: %w", &transcribe.HTTPError{Engine: "openai:whisper-1", StatusCode: 503, Message: "overloaded"}), "the transcription engine could not be reached"},
		{fmt.Errorf("%w: openai:whisper-1: dial tcp 10.0.0.7:8000: connection refused", transcribe.ErrUnavailable), "the transcription engine could not be reached"},
		{&transcribe.HTTPError{Engine: "openai:whisper-1", StatusCode: 401, Message: "Incorrect API key provided: sk-abc"}, "the transcription engine refused the audio (HTTP 401)"},
		{fmt.Errorf("summarise: %w", &textai.APIError{Endpoint: "http://llm:8080/v1/chat/completions", StatusCode: 502}), "the AI engine could not be reached"},
		{fmt.Errorf("tag: %w", &textai.APIError{Endpoint: "http://llm:8080/v1/chat/completions", StatusCode: 400, Message: "bad model"}), "the AI engine refused the request (HTTP 400)"},
		{fmt.Errorf("embed: %w", fmt.Errorf("textai: x: %w: wrong dimension", textai.ErrBadResponse)), "the AI engine gave an answer that could not be used"},
		{fmt.Errorf("transcribe: %w", context.DeadlineExceeded), "processing took too long"},
		{errors.New("store vector: database is locked (/var/lib/strata/control.db)"), "processing failed because of an internal error"},
	}
	for _, c := range cases {
		got := publicReason(c.err)
		if got != c.want {
			t.Errorf("publicReason(%v) = %q, want %q", c.err, got, c.want)
		}
		for _, leak := range []string{"ffmpeg", "seek", "http:", "/", "sk-", "%!"} {
			if strings.Contains(got, leak) {
				t.Errorf("publicReason(%v) = %q contains %q", c.err, got, leak)
			}
		}
	}
}

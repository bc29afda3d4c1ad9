package transcribe_test

import (
	"bytes"
	"io"
	"testing"
	"time"

	"github.com/stratahq/strata/impl/pipeline/transcribe"
)

// benchText is a voice note of about 9 s when spoken by espeak-ng.
const benchText = "remember to buy milk and eggs tomorrow morning, call the doctor on monday " +
	"about the appointment, and the meeting with the team is moved to friday afternoon"

// benchClip returns benchText as ogg/opus, the format most voice notes
// arrive in.
func benchClip(b *testing.B) []byte {
	return speech(b, benchText, containers[2])
}

// BenchmarkLocalTranscribe measures a whole local transcription, ffmpeg
// normalisation included. x-realtime is seconds of audio per second of wall
// time: above 1 the engine keeps up with speech.
func BenchmarkLocalTranscribe(b *testing.B) {
	engine := localEngine(b)
	audio := benchClip(b)
	var audioTime time.Duration
	for b.Loop() {
		res, err := engine.Transcribe(b.Context(), bytes.NewReader(audio))
		if err != nil {
			b.Fatal(err)
		}
		audioTime += res.AudioDuration
	}
	b.ReportMetric(audioTime.Seconds()/b.Elapsed().Seconds(), "x-realtime")
}

// BenchmarkNormalize measures ffmpeg's share alone: decoding opus and
// resampling to 16 kHz mono with soxr, process start included.
func BenchmarkNormalize(b *testing.B) {
	audio := benchClip(b)
	b.SetBytes(int64(len(audio)))
	var audioTime time.Duration
	for b.Loop() {
		d, err := transcribe.Normalize(b.Context(), bytes.NewReader(audio), io.Discard)
		if err != nil {
			b.Fatal(err)
		}
		audioTime += d
	}
	b.ReportMetric(audioTime.Seconds()/b.Elapsed().Seconds(), "x-realtime")
}

package media_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/stratahq/strata/impl/media"
)

// encode runs ffmpeg on a lavfi source and returns the file it wrote.
func encode(tb testing.TB, ext string, args ...string) []byte {
	tb.Helper()
	out := filepath.Join(tb.TempDir(), "clip."+ext)
	cmd := exec.Command("ffmpeg", append(append([]string{"-nostdin", "-loglevel", "error", "-y"}, args...), out)...)
	if b, err := cmd.CombinedOutput(); err != nil {
		tb.Fatalf("ffmpeg %v: %v %s", args, err, b)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

// noise returns n reproducible random bytes.
func noise(n int) []byte {
	b := make([]byte, n)
	r := rand.NewChaCha8([32]byte{7})
	_, _ = r.Read(b)
	return b
}

// sniffed is the content type Put would store b under.
func sniffed(t *testing.T, b []byte) string {
	t.Helper()
	ct, err := media.Sniff(media.Audio, b[:min(len(b), 512)])
	if err != nil {
		t.Fatalf("the test file is not even sniffed as audio: %v", err)
	}
	return ct
}

func TestProbeAudio(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	// Pink noise for 20 s at a high bit rate: about 800 KB of m4a, whose
	// index (moov) ffmpeg writes after the audio, which only a seekable
	// input reaches.
	pink := []string{"-f", "lavfi", "-i", "anoisesrc=d=20:c=pink:r=44100:a=0.3", "-ac", "1"}
	good := map[string][]byte{
		"wav":              encode(t, "wav", "-f", "lavfi", "-i", "sine=f=440:d=3"),
		"mp3":              encode(t, "mp3", "-f", "lavfi", "-i", "sine=f=440:d=3"),
		"ogg vorbis":       encode(t, "ogg", "-f", "lavfi", "-i", "sine=f=440:d=3", "-c:a", "libvorbis"),
		"ogg opus":         encode(t, "ogg", "-f", "lavfi", "-i", "sine=f=440:d=3", "-c:a", "libopus"),
		"webm":             encode(t, "webm", "-f", "lavfi", "-i", "sine=f=440:d=3"),
		"m4a":              encode(t, "m4a", append(pink, "-b:a", "320k")...),
		"webm+video":       encode(t, "webm", "-f", "lavfi", "-i", "testsrc=d=1", "-f", "lavfi", "-i", "sine=f=440:d=1", "-shortest"),
		"m4a, index first": encode(t, "m4a", "-f", "lavfi", "-i", "sine=f=440:d=1", "-movflags", "+faststart"),
	}
	for name, b := range good {
		if err := (media.Prober{}).ProbeAudio(ctx, bytes.NewReader(b), sniffed(t, b)); err != nil {
			t.Errorf("%s (%d bytes): %v", name, len(b), err)
		}
	}

	bad := map[string][]byte{
		"OggS and noise":    append([]byte("OggS"), noise(64<<10)...),
		"video-only webm":   encode(t, "webm", "-f", "lavfi", "-i", "testsrc", "-t", "1", "-an"),
		"ftyp M4A and junk": append([]byte("\x00\x00\x00\x18ftypM4A \x00\x00\x00\x00"), noise(64<<10)...),
		"WAV header, junk":  append([]byte("RIFF\xff\xff\xff\xffWAVEjunk"), bytes.Repeat([]byte{0x5a}, 4000)...),
		"WAV of no samples": encode(t, "wav", "-f", "lavfi", "-i", "sine=f=440:d=0.0001", "-frames:a", "0"),
		"mp3 header, noise": append([]byte("\xff\xfb\x90\x64"), noise(64<<10)...),
	}
	for name, b := range bad {
		err := (media.Prober{}).ProbeAudio(ctx, bytes.NewReader(b), sniffed(t, b))
		if !errors.Is(err, media.ErrNoAudio) || !errors.Is(err, media.ErrUnsupported) {
			t.Errorf("%s: %v, want ErrNoAudio", name, err)
		}
	}

	// A file is read with the demuxer of the type it is stored as: Opus in
	// Ogg labelled as webm is refused.
	if err := (media.Prober{}).ProbeAudio(ctx, bytes.NewReader(good["ogg opus"]), "audio/webm"); !errors.Is(err, media.ErrNoAudio) {
		t.Errorf("ogg probed as webm: %v, want ErrNoAudio", err)
	}

	// Failures of the check itself are not the file's fault.
	missing := media.Prober{FFprobePath: filepath.Join(t.TempDir(), "no-ffprobe")}
	if err := missing.ProbeAudio(ctx, bytes.NewReader(good["wav"]), "audio/wav"); err == nil || errors.Is(err, media.ErrUnsupported) {
		t.Errorf("missing ffprobe: %v, want an error other than ErrUnsupported", err)
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	for _, name := range []string{"wav", "m4a"} {
		if err := (media.Prober{}).ProbeAudio(cancelled, bytes.NewReader(good[name]), sniffed(t, good[name])); !errors.Is(err, context.Canceled) {
			t.Errorf("%s, cancelled: %v, want context.Canceled", name, err)
		}
	}
	// An ffprobe that hangs is killed at the timeout.
	slow := filepath.Join(t.TempDir(), "ffprobe")
	if err := os.WriteFile(slow, []byte("#!/bin/sh\nexec sleep 60\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	err := media.Prober{FFprobePath: slow, Timeout: 200 * time.Millisecond}.ProbeAudio(ctx, bytes.NewReader(good["wav"]), "audio/wav")
	if err == nil || errors.Is(err, media.ErrUnsupported) || time.Since(start) > 10*time.Second {
		t.Errorf("hanging ffprobe: %v after %s, want a timeout error", err, time.Since(start))
	}
}

func TestStoreProbeAudio(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, err := media.Open(ctx, "", t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for key, b := range map[string][]byte{
		"media/u/good": encode(t, "m4a", "-f", "lavfi", "-i", "sine=f=440:d=3"),
		"media/u/bad":  append([]byte("OggS"), noise(4096)...),
	} {
		ct, _, err := s.Put(ctx, key, media.Audio, bytes.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		err = s.ProbeAudio(ctx, key, ct)
		if key == "media/u/good" && err != nil || key == "media/u/bad" && !errors.Is(err, media.ErrNoAudio) {
			t.Errorf("%s: %v", key, err)
		}
	}
	if err := s.ProbeAudio(ctx, "media/u/none", "audio/wav"); !errors.Is(err, media.ErrNotFound) {
		t.Errorf("missing blob: %v", err)
	}
}

// BenchmarkProbeAudio measures the check an upload pays, for 1 MiB and
// 25 MiB files of each accepted format (noise at a high bit rate, so that
// the sizes are reached; m4a with its index at the end, as ffmpeg and most
// recorders write it).
func BenchmarkProbeAudio(b *testing.B) {
	formats := map[string][]string{
		"wav":  {"-ar", "16000"},
		"mp3":  {"-b:a", "320k"},
		"ogg":  {"-ac", "2", "-c:a", "libopus", "-b:a", "320k"},
		"webm": {"-ac", "2", "-c:a", "libopus", "-b:a", "320k"},
		"m4a":  {"-ac", "2", "-b:a", "400k"},
	}
	for _, mib := range []int{1, 25} {
		for ext, opts := range formats {
			secs := float64(mib<<20) / (320000 / 8)
			if ext == "wav" {
				secs = float64(mib<<20) / 32000
			}
			args := append([]string{"-f", "lavfi", "-i", fmt.Sprintf("anoisesrc=d=%.0f:c=white:r=48000:a=0.5", secs), "-ac", "1"}, opts...)
			data := encode(b, ext, args...)
			ct, err := media.Sniff(media.Audio, data[:512])
			if err != nil {
				b.Fatal(err)
			}
			b.Run(fmt.Sprintf("%s/%dMiB", ext, mib), func(b *testing.B) {
				b.SetBytes(int64(len(data)))
				for b.Loop() {
					if err := (media.Prober{}).ProbeAudio(context.Background(), bytes.NewReader(data), ct); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

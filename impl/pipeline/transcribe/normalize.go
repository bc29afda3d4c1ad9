package transcribe

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/stratahq/strata/impl/spoolfile"
	"github.com/stratahq/strata/impl/tailbuf"
)

// SampleRate is the sample rate of normalised audio, in Hz: what the
// PocketSphinx en-us acoustic model was trained on.
const SampleRate = 16000

// bytesPerSecond of normalised audio: SampleRate mono 16-bit samples.
const bytesPerSecond = SampleRate * 2

// Normalizer converts audio in any container ffmpeg understands into 16 kHz
// mono signed 16-bit little-endian PCM (raw samples, no WAV header). The zero
// value uses ffmpeg from PATH and DefaultMaxDuration.
type Normalizer struct {
	// FFmpegPath is the ffmpeg binary; "ffmpeg" looked up in PATH when empty.
	FFmpegPath string
	// MaxDuration rejects longer clips with ErrTooLong, as soon as ffmpeg has
	// produced that much audio; DefaultMaxDuration when zero.
	MaxDuration time.Duration
}

// Normalize is Normalizer{}.Normalize: ffmpeg from PATH, DefaultMaxDuration.
func Normalize(ctx context.Context, in io.Reader, w io.Writer) (time.Duration, error) {
	return Normalizer{}.Normalize(ctx, in, w)
}

// Normalize decodes in with ffmpeg and writes the clip to w as 16 kHz mono
// s16le PCM, returning its duration. Undecodable input (corrupt, truncated,
// not audio, no audio stream, no samples) fails with an error wrapping
// ErrInvalidAudio that quotes the end of ffmpeg's diagnostics; a clip longer
// than MaxDuration fails with ErrTooLong. Cancelling ctx kills ffmpeg.
//
// in is streamed to ffmpeg's standard input, never held in memory. The one
// exception is MP4-family input (m4a, mp4, mov): its index (the "moov" box)
// is usually written after the audio, which ffmpeg can only reach by
// seeking, so such input is first copied to an unlinked temporary file and
// ffmpeg reads that instead of a pipe.
//
// Normalize does not close in. It has stopped reading in when it returns,
// except after cancellation: then a Read that is blocked is abandoned rather
// than waited for, and what it returns is dropped.
func (n Normalizer) Normalize(ctx context.Context, in io.Reader, w io.Writer) (time.Duration, error) {
	maxDur := n.MaxDuration
	if maxDur <= 0 {
		maxDur = DefaultMaxDuration
	}
	bin := n.FFmpegPath
	if bin == "" {
		bin = "ffmpeg"
	}

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	br := bufio.NewReaderSize(in, 64<<10)
	head, _ := br.Peek(12) // a short or failing input is ffmpeg's to reject
	var spooled *os.File
	input := "pipe:0"
	if isMP4(head) {
		f, err := spoolfile.Copy(ctx, br, spoolLimit(maxDur), "strata-audio-*")
		if errors.Is(err, spoolfile.ErrTooLarge) {
			return 0, fmt.Errorf("%w: the upload exceeds %d MiB", ErrTooLong, spoolLimit(maxDur)>>20)
		}
		if err != nil {
			return 0, fmt.Errorf("transcribe: spool audio: %w", err)
		}
		defer f.Close()
		// ffmpeg's pipe protocol never seeks; the file protocol on
		// /dev/stdin does when stdin is a regular file, and names no path of
		// ours in its messages.
		spooled, input = f, "/dev/stdin"
	}

	out := &limitWriter{w: w, max: int64(maxDur.Seconds() * bytesPerSecond), onLimit: cancel}
	stderr := tailbuf.New(4 << 10)
	cmd := exec.CommandContext(ctx, bin,
		"-hide_banner", "-nostdin", "-loglevel", "error",
		"-i", input,
		"-map", "0:a:0", // the first audio stream; none at all is an error
		"-af", "aresample=resampler=soxr", "-ar", "16000", "-ac", "1",
		"-c:a", "pcm_s16le", "-f", "s16le", "pipe:1")
	cmd.Stdout, cmd.Stderr = out, stderr
	var stdin io.WriteCloser
	if spooled != nil {
		cmd.Stdin = spooled
	} else {
		p, err := cmd.StdinPipe()
		if err != nil {
			return 0, fmt.Errorf("transcribe: ffmpeg stdin: %w", err)
		}
		stdin = p
	}
	if err := cmd.Start(); err != nil {
		return 0, fmt.Errorf("transcribe: start ffmpeg: %w", err)
	}

	// Feed stdin here rather than through cmd.Stdin: exec.Cmd.Wait would wait
	// for a Read of in however long it blocks, cancelled or not.
	readErr := make(chan error, 1)
	if stdin != nil {
		go func() {
			rr := &recordingReader{r: br}
			// A write error means ffmpeg stopped reading; its exit status
			// says why.
			_, _ = io.Copy(stdin, rr)
			stdin.Close()
			readErr <- rr.err
		}()
	} else {
		readErr <- nil
	}
	waitErr := cmd.Wait() // closes stdin once ffmpeg has exited
	var rerr error
	select {
	case rerr = <-readErr:
	case <-ctx.Done():
		// ffmpeg is gone; a Read of in still in progress is abandoned and
		// whatever it returns is dropped.
	}
	dur := durationOf(out.n)

	switch {
	case out.exceeded:
		return 0, fmt.Errorf("%w: the clip is longer than the %s limit", ErrTooLong, maxDur)
	case waitErr != nil && ctx.Err() != nil:
		// Only the caller cancels ctx now: ffmpeg was killed for that.
		return 0, fmt.Errorf("transcribe: normalise audio: %w", context.Cause(ctx))
	case out.werr != nil:
		return 0, fmt.Errorf("transcribe: write normalised audio: %w", out.werr)
	case rerr != nil:
		return 0, fmt.Errorf("transcribe: read audio: %w", rerr)
	case waitErr != nil:
		var exit *exec.ExitError
		if errors.As(waitErr, &exit) && exit.ExitCode() > 0 {
			return 0, fmt.Errorf("%w: ffmpeg: %s", ErrInvalidAudio, summary(stderr, exit))
		}
		return 0, fmt.Errorf("transcribe: ffmpeg: %w", waitErr)
	case out.n == 0:
		return 0, fmt.Errorf("%w: no audio samples", ErrInvalidAudio)
	}
	return dur, nil
}

// isMP4 reports whether head starts an ISO base media file (m4a, mp4, mov,
// 3gp): a box of type "ftyp" first.
func isMP4(head []byte) bool {
	return len(head) >= 8 && string(head[4:8]) == "ftyp"
}

// spoolLimit bounds the temporary copy of MP4-family input: as many bytes as
// maxDur of uncompressed 48 kHz stereo 16-bit audio (more than any lossy or
// lossless codec needs for that duration), and at least 64 MiB.
func spoolLimit(maxDur time.Duration) int64 {
	return max(64<<20, int64(maxDur.Seconds()*48000*2*2))
}

// recordingReader remembers a read error other than io.EOF, so that a failing
// upload stream is reported as such and not as invalid audio (ffmpeg sees
// only a truncated input).
type recordingReader struct {
	r   io.Reader
	err error
}

func (r *recordingReader) Read(p []byte) (int, error) {
	n, err := r.r.Read(p)
	if err != nil && err != io.EOF && r.err == nil {
		r.err = err
	}
	return n, err
}

// limitWriter passes at most max bytes to w and calls onLimit once when
// more arrive. exec.Cmd calls Write from one goroutine and reads the fields
// only after Wait, which orders the accesses.
type limitWriter struct {
	w        io.Writer
	max, n   int64
	onLimit  func()
	exceeded bool
	werr     error
}

func (l *limitWriter) Write(p []byte) (int, error) {
	if l.n+int64(len(p)) > l.max {
		l.exceeded = true
		l.onLimit()
		return 0, ErrTooLong
	}
	n, err := l.w.Write(p)
	l.n += int64(n)
	if err != nil {
		l.werr = err
	}
	return n, err
}

// summary returns the last few lines of ffmpeg's diagnostics, with the pipe
// and device names ffmpeg read from replaced by "input", or the exit status
// when ffmpeg said nothing.
func summary(stderr *tailbuf.Buffer, exit *exec.ExitError) string {
	text := string(bytes.ToValidUTF8(stderr.Bytes(), []byte("?")))
	text = strings.NewReplacer("/dev/stdin", "input", "pipe:0", "input", "pipe:1", "output").Replace(text)
	var lines []string
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(dropAddress(line))
		if line != "" && !strings.HasPrefix(line, "Last message repeated") {
			lines = append(lines, line)
		}
	}
	if len(lines) > 3 {
		lines = lines[len(lines)-3:]
	}
	s := strings.Join(lines, "; ")
	if len(s) > 400 {
		s = s[len(s)-400:]
	}
	if s == "" {
		return exit.String()
	}
	return s
}

// dropAddress removes the " @ 0x55d0c0ffee00" that ffmpeg puts after a
// component's name ("[mov,mp4,m4a @ 0x…] partial file"): noise in an error.
func dropAddress(line string) string {
	i := strings.Index(line, " @ 0x")
	if i < 0 {
		return line
	}
	j := i + len(" @ 0x")
	for j < len(line) && strings.IndexByte("0123456789abcdef", line[j]) >= 0 {
		j++
	}
	return line[:i] + line[j:]
}

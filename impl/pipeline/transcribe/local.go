package transcribe

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"time"
)

// DefaultModelDir is where Debian's pocketsphinx-en-us package installs the
// US English model.
const DefaultModelDir = "/usr/share/pocketsphinx/model/en-us"

// LocalEngineName is the Name of the local engine.
const LocalEngineName = "pocketsphinx-en-us"

// modelFiles are the three parts of a PocketSphinx model.
type modelFiles struct {
	hmm  string // acoustic model directory
	lm   string // language model (binary ARPA)
	dict string // pronunciation dictionary
}

// findModel locates the model in Debian's layout under dir and checks that
// the files are there, so that a missing package is a clear error and not a
// failure deep inside the C library (whose own messages are switched off).
func findModel(dir string) (modelFiles, error) {
	m := modelFiles{
		hmm:  filepath.Join(dir, "en-us"),
		lm:   filepath.Join(dir, "en-us.lm.bin"),
		dict: filepath.Join(dir, "cmudict-en-us.dict"),
	}
	for _, p := range []string{filepath.Join(m.hmm, "mdef"), filepath.Join(m.hmm, "means"), m.lm, m.dict} {
		if _, err := os.Stat(p); err != nil {
			return modelFiles{}, fmt.Errorf("transcribe: %w: PocketSphinx model file missing (install the Debian package pocketsphinx-en-us, `make deps`, or set ModelDir): %w", ErrNoEngine, err)
		}
	}
	return m, nil
}

// local is the PocketSphinx engine: ffmpeg normalisation, which runs
// concurrently, then decoding, one clip at a time on the one decoder.
type local struct {
	norm Normalizer
	// lock is a mutex that a waiter can give up on when its context ends: a
	// one-slot channel, because sync.Mutex cannot be abandoned. It guards dec
	// and closed.
	lock   chan struct{}
	dec    *decoder
	closed bool
}

var _ Transcriber = (*local)(nil)

func newLocal(cfg Config) (*local, error) {
	ffmpeg := cfg.FFmpegPath
	if ffmpeg == "" {
		ffmpeg = "ffmpeg"
	}
	ffmpeg, err := exec.LookPath(ffmpeg)
	if err != nil {
		return nil, fmt.Errorf("transcribe: %w: ffmpeg not found (install the Debian package ffmpeg, `make deps`): %w", ErrNoEngine, err)
	}
	dir := cfg.ModelDir
	if dir == "" {
		dir = DefaultModelDir
	}
	files, err := findModel(dir)
	if err != nil {
		return nil, err
	}
	dec, err := newDecoder(files)
	if err != nil {
		return nil, err
	}
	return &local{
		norm: Normalizer{FFmpegPath: ffmpeg, MaxDuration: cfg.MaxDuration},
		lock: make(chan struct{}, 1),
		dec:  dec,
	}, nil
}

// Name implements Transcriber.
func (l *local) Name() string { return LocalEngineName }

// Transcribe implements Transcriber. The whole clip is decoded as one
// utterance, which PocketSphinx recognises markedly better than the same
// audio fed in chunks (it normalises the cepstra over the whole clip). A
// decode in progress cannot be interrupted; ctx is honoured while waiting for
// the decoder and during normalisation.
func (l *local) Transcribe(ctx context.Context, audio io.Reader) (Result, error) {
	var pcm bytes.Buffer
	dur, err := l.norm.Normalize(ctx, audio, &pcm)
	if err != nil {
		return Result{}, err
	}

	select {
	case l.lock <- struct{}{}:
	case <-ctx.Done():
		return Result{}, fmt.Errorf("transcribe: waiting for the decoder: %w", context.Cause(ctx))
	}
	defer func() { <-l.lock }()
	if l.closed {
		return Result{}, ErrClosed
	}
	if err := context.Cause(ctx); err != nil {
		return Result{}, fmt.Errorf("transcribe: %w", err)
	}
	text, err := l.dec.decode(samples(pcm.Bytes()))
	if err != nil {
		return Result{}, err
	}
	return Result{Text: text, AudioDuration: dur}, nil
}

// Close implements Transcriber: it waits for a decode in progress and frees
// the decoder.
func (l *local) Close() error {
	l.lock <- struct{}{}
	defer func() { <-l.lock }()
	if l.closed {
		return nil
	}
	l.closed = true
	l.dec.free()
	return nil
}

// samples returns s16le PCM as host-order samples, in place: a no-op on
// little-endian hosts, a byte swap elsewhere.
func samples(pcm []byte) []byte {
	pcm = pcm[:len(pcm)&^1]
	if binary.NativeEndian.Uint16([]byte{1, 0}) != 1 {
		for i := 0; i < len(pcm); i += 2 {
			pcm[i], pcm[i+1] = pcm[i+1], pcm[i]
		}
	}
	return pcm
}

// durationOf returns how long n bytes of normalised PCM last.
func durationOf(n int64) time.Duration {
	return time.Duration(n) * time.Second / bytesPerSecond
}

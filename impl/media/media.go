// Package media stores uploaded audio and images in blob storage
// (gocloud.dev/blob: a directory by default, any gocloud URL such as s3://
// in production) and recognises their formats from their bytes.
package media

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"

	"gocloud.dev/blob"
	_ "gocloud.dev/blob/fileblob" // file:// buckets
	"gocloud.dev/gcerrors"
)

// Kind is what an upload must be.
type Kind string

// Kinds of media, as mediaKind reports them.
const (
	Audio Kind = "audio"
	Image Kind = "image"
)

// ErrUnsupported is returned for bytes that are not an accepted format.
var ErrUnsupported = errors.New("unsupported media format")

// ErrNotFound is returned for a key with no blob.
var ErrNotFound = errors.New("media not found")

// sniffLen is how many leading bytes format detection reads.
const sniffLen = 512

// Sniff recognises the format of data's first bytes for kind and returns its
// content type, or ErrUnsupported. Audio: wav, mp3, ogg (opus, vorbis),
// webm, m4a. Images: jpeg, png, webp, gif. The type a client declares is
// never trusted.
func Sniff(kind Kind, head []byte) (string, error) {
	has := func(off int, sig string) bool {
		return len(head) >= off+len(sig) && string(head[off:off+len(sig)]) == sig
	}
	switch kind {
	case Audio:
		switch {
		case has(0, "RIFF") && has(8, "WAVE"):
			return "audio/wav", nil
		case has(0, "ID3") || isMP3Frame(head):
			return "audio/mpeg", nil
		case has(0, "OggS"):
			return "audio/ogg", nil
		case has(0, "\x1a\x45\xdf\xa3"):
			return "audio/webm", nil
		case has(4, "ftyp") && isAudioBrand(head):
			return "audio/mp4", nil
		}
	case Image:
		switch {
		case has(0, "\xff\xd8\xff"):
			return "image/jpeg", nil
		case has(0, "\x89PNG\r\n\x1a\n"):
			return "image/png", nil
		case has(0, "RIFF") && has(8, "WEBP"):
			return "image/webp", nil
		case has(0, "GIF87a") || has(0, "GIF89a"):
			return "image/gif", nil
		}
	}
	return "", ErrUnsupported
}

// isMP3Frame reports an MPEG audio frame header without an ID3 tag: 11 sync
// bits, a valid version, layer III, and a valid bitrate and sample rate.
func isMP3Frame(h []byte) bool {
	if len(h) < 4 || h[0] != 0xff || h[1]&0xe0 != 0xe0 {
		return false
	}
	version := (h[1] >> 3) & 0x3
	layer := (h[1] >> 1) & 0x3
	bitrate := h[2] >> 4
	rate := (h[2] >> 2) & 0x3
	return version != 1 && layer == 1 && bitrate != 0 && bitrate != 0xf && rate != 3
}

// isAudioBrand accepts ISO base media files whose major brand is an audio or
// generic MP4 brand (m4a from phones and ffmpeg use M4A, mp42 or isom).
func isAudioBrand(h []byte) bool {
	if len(h) < 12 {
		return false
	}
	switch string(h[8:12]) {
	case "M4A ", "M4B ", "mp42", "mp41", "isom", "iso2", "dash", "3gp4", "3gp5":
		return true
	}
	return false
}

// Store is a blob bucket for media.
type Store struct {
	bucket *blob.Bucket
	prober Prober // ffprobe from PATH
}

// Open opens the bucket at rawURL. An empty URL means a directory under
// dataDir ("blobs"), created if needed.
func Open(ctx context.Context, rawURL, dataDir string) (*Store, error) {
	if rawURL == "" {
		dir := filepath.Join(dataDir, "blobs")
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return nil, fmt.Errorf("blob directory: %w", err)
		}
		rawURL = (&url.URL{Scheme: "file", Path: dir}).String()
	}
	b, err := blob.OpenBucket(ctx, rawURL)
	if err != nil {
		return nil, fmt.Errorf("open blob bucket: %w", err)
	}
	return &Store{bucket: b}, nil
}

// Close closes the bucket.
func (s *Store) Close() error { return s.bucket.Close() }

// Put streams r into key after checking that its first bytes are a format
// of kind; it returns the sniffed content type and the size. The body is
// never buffered beyond the sniffed prefix. On any error nothing is left
// under key (the writer is aborted, so no partial blob appears).
func (s *Store) Put(ctx context.Context, key string, kind Kind, r io.Reader) (contentType string, size int64, err error) {
	br := bufio.NewReaderSize(r, sniffLen)
	head, err := br.Peek(sniffLen)
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, bufio.ErrBufferFull) {
		return "", 0, err
	}
	contentType, err = Sniff(kind, head)
	if err != nil {
		return "", 0, err
	}
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	w, err := s.bucket.NewWriter(wctx, key, &blob.WriterOptions{ContentType: contentType})
	if err != nil {
		return "", 0, fmt.Errorf("blob writer: %w", err)
	}
	size, err = io.Copy(w, br)
	if err != nil {
		cancel() // aborts the write: gocloud discards a writer whose context is done
		_ = w.Close()
		return "", 0, err
	}
	if err := w.Close(); err != nil {
		return "", 0, fmt.Errorf("store blob: %w", err)
	}
	return contentType, size, nil
}

// Open returns a reader (an io.ReadSeeker, for Range requests) of key.
func (s *Store) Open(ctx context.Context, key string) (*blob.Reader, error) {
	r, err := s.bucket.NewReader(ctx, key, nil)
	if gcerrors.Code(err) == gcerrors.NotFound {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("open blob: %w", err)
	}
	return r, nil
}

// Delete removes key; a missing key is not an error.
func (s *Store) Delete(ctx context.Context, key string) error {
	err := s.bucket.Delete(ctx, key)
	if err != nil && gcerrors.Code(err) != gcerrors.NotFound {
		return fmt.Errorf("delete blob: %w", err)
	}
	return nil
}

// Exists reports whether key has a blob.
func (s *Store) Exists(ctx context.Context, key string) (bool, error) {
	return s.bucket.Exists(ctx, key)
}

// Key is where an item's media lives: per user, so a bucket listing never
// mixes users, and by item id.
func Key(userID, itemID string) string {
	return "media/" + userID + "/" + itemID
}

package media_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stratahq/strata/impl/media"
)

func TestSniff(t *testing.T) {
	t.Parallel()
	pad := func(s string) []byte { return append([]byte(s), make([]byte, 32)...) }
	cases := []struct {
		kind media.Kind
		head []byte
		want string
	}{
		{media.Audio, pad("RIFF\x24\x00\x00\x00WAVEfmt "), "audio/wav"},
		{media.Audio, pad("ID3\x04\x00"), "audio/mpeg"},
		{media.Audio, pad("\xff\xfb\x90\x64"), "audio/mpeg"}, // MPEG-1 layer III, 128 kbit/s, 44.1 kHz
		{media.Audio, pad("OggS\x00\x02"), "audio/ogg"},
		{media.Audio, pad("\x1a\x45\xdf\xa3\x9f\x42\x86\x81"), "audio/webm"},
		{media.Audio, pad("\x00\x00\x00\x20ftypM4A \x00\x00\x02\x00"), "audio/mp4"},
		{media.Audio, pad("\x00\x00\x00\x1cftypisom"), "audio/mp4"},
		{media.Image, pad("\xff\xd8\xff\xe0"), "image/jpeg"},
		{media.Image, pad("\x89PNG\r\n\x1a\n"), "image/png"},
		{media.Image, pad("RIFF\x00\x00\x00\x00WEBPVP8 "), "image/webp"},
		{media.Image, pad("GIF89a"), "image/gif"},
	}
	for _, c := range cases {
		got, err := media.Sniff(c.kind, c.head)
		if err != nil || got != c.want {
			t.Errorf("%q as %s: %q, %v; want %s", c.head[:8], c.kind, got, err, c.want)
		}
	}
	for _, bad := range []struct {
		kind media.Kind
		head []byte
	}{
		{media.Audio, pad("\x89PNG\r\n\x1a\n")},            // an image is not audio
		{media.Image, pad("RIFF\x24\x00\x00\x00WAVEfmt ")}, // audio is not an image
		{media.Audio, pad("hello, world")},
		{media.Audio, pad("\xff\xff\xff\xff")},         // sync bits but invalid header
		{media.Audio, pad("\x00\x00\x00\x20ftypqt  ")}, // QuickTime video brand
		{media.Audio, nil},
		{media.Image, []byte("\xff\xd8")}, // truncated
	} {
		if _, err := media.Sniff(bad.kind, bad.head); !errors.Is(err, media.ErrUnsupported) {
			t.Errorf("%q as %s: %v, want ErrUnsupported", bad.head, bad.kind, err)
		}
	}
}

// failingReader returns its data and then an error, like a client that
// disconnects mid-upload.
type failingReader struct{ r io.Reader }

func (f failingReader) Read(p []byte) (int, error) {
	n, err := f.r.Read(p)
	if err == io.EOF {
		return n, errors.New("client went away")
	}
	return n, err
}

func TestPutOpenDelete(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	s, err := media.Open(ctx, "", dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()

	wav := append([]byte("RIFF\x24\x00\x00\x00WAVEfmt "), bytes.Repeat([]byte{7}, 100_000)...)
	ct, size, err := s.Put(ctx, "media/u/1", media.Audio, bytes.NewReader(wav))
	if err != nil || ct != "audio/wav" || size != int64(len(wav)) {
		t.Fatalf("put: %q %d %v", ct, size, err)
	}
	r, err := s.Open(ctx, "media/u/1")
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(r)
	r.Close()
	if !bytes.Equal(got, wav) {
		t.Fatal("stored bytes differ")
	}

	// Unsupported bytes and a broken upload leave nothing behind.
	if _, _, err := s.Put(ctx, "media/u/2", media.Audio, strings.NewReader("<html>not audio</html>")); !errors.Is(err, media.ErrUnsupported) {
		t.Fatalf("unsupported: %v", err)
	}
	if _, _, err := s.Put(ctx, "media/u/3", media.Audio, failingReader{bytes.NewReader(wav)}); err == nil {
		t.Fatal("a failing upload succeeded")
	}
	for _, key := range []string{"media/u/2", "media/u/3"} {
		if ok, _ := s.Exists(ctx, key); ok {
			t.Errorf("%s exists after a failed upload", key)
		}
	}
	var files []string
	_ = filepath.Walk(dir, func(p string, info os.FileInfo, _ error) error {
		if info != nil && !info.IsDir() && !strings.HasSuffix(p, ".attrs") {
			files = append(files, p)
		}
		return nil
	})
	if len(files) != 1 {
		t.Fatalf("files on disk: %v, want only the one blob", files)
	}

	if err := s.Delete(ctx, "media/u/1"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Open(ctx, "media/u/1"); !errors.Is(err, media.ErrNotFound) {
		t.Fatalf("open after delete: %v", err)
	}
	if err := s.Delete(ctx, "media/u/1"); err != nil {
		t.Fatalf("deleting a missing key: %v", err)
	}
}

package sdk_test

import (
	"bytes"
	"errors"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"math/rand/v2"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/stratahq/strata/impl/principal"
	"github.com/stratahq/strata/sdk"
)

// noiseImage is a w×h image of random pixels (seeded: the same every run),
// which no encoder can shrink much.
func noiseImage(w, h int) image.Image {
	rng := rand.New(rand.NewPCG(1, 2))
	img := image.NewNRGBA(image.Rect(0, 0, w, h))
	for i := range img.Pix {
		img.Pix[i] = byte(rng.Uint32())
	}
	return img
}

func pngBytes(t *testing.T, img image.Image) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func TestUploadPhoto(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	c := newUser(t, e, "ada@example.com", principal.TierPro)
	ctx := ctxT(t)
	folder := mkFolder(t, c.Client, "Garden", nil)
	pic := pngBytes(t, noiseImage(16, 16))
	item, err := c.UploadPhoto(ctx, bytes.NewReader(pic), "basil.png",
		sdk.UploadCaption("Basil on the sill"), sdk.UploadTags("garden", "herbs"), sdk.UploadFolder(folder.ID))
	if err != nil {
		t.Fatal(err)
	}
	if item.Type != sdk.Photo || item.MediaKind == nil || *item.MediaKind != sdk.Image || item.MediaURL == nil ||
		item.Body != "Basil on the sill" || !slices.Equal(item.Tags, []string{"garden", "herbs"}) ||
		item.FolderID == nil || *item.FolderID != folder.ID {
		t.Fatalf("%+v", item)
	}
	media, err := c.API().GetContentMediaWithResponse(ctx, item.ID, nil)
	if err != nil || media.StatusCode() != http.StatusOK || !bytes.Equal(media.Body, pic) ||
		media.HTTPResponse.Header.Get("Content-Type") != "image/png" {
		t.Fatalf("media: %v %d %q, %d bytes", err, media.StatusCode(), media.HTTPResponse.Header.Get("Content-Type"), len(media.Body))
	}

	// Without a file name or caption: the server goes by the bytes.
	var jpg bytes.Buffer
	img := image.NewRGBA(image.Rect(0, 0, 8, 8))
	img.Set(1, 1, color.RGBA{R: 200, A: 255})
	if err := jpeg.Encode(&jpg, img, nil); err != nil {
		t.Fatal(err)
	}
	item, err = c.UploadPhoto(ctx, bytes.NewReader(jpg.Bytes()), "")
	if err != nil {
		t.Fatal(err)
	}
	if item.Type != sdk.Photo || item.Body != "" || item.FolderID != nil {
		t.Fatalf("%+v", item)
	}
	media, err = c.API().GetContentMediaWithResponse(ctx, item.ID, nil)
	if err != nil || !bytes.Equal(media.Body, jpg.Bytes()) || media.HTTPResponse.Header.Get("Content-Type") != "image/jpeg" {
		t.Fatalf("media: %v %q, %d bytes", err, media.HTTPResponse.Header.Get("Content-Type"), len(media.Body))
	}
}

// A photo is streamed like a voice note: sending starts before the image
// has been read.
func TestUploadPhotoStreams(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	c := newUser(t, e, "ada@example.com", principal.TierPro)
	ctx := ctxT(t)
	pic := pngBytes(t, noiseImage(1024, 768)) // about 3 MiB
	if len(pic) < 2<<20 {
		t.Fatalf("the image is only %d bytes", len(pic))
	}
	r := gateUntilSent(t, c, "/api/content/photos", pic)
	item, err := c.UploadPhoto(ctx, r, "noise.png")
	if err != nil {
		t.Fatal(err)
	}
	if r.read != int64(len(pic)) {
		t.Fatalf("read %d of %d bytes", r.read, len(pic))
	}
	media, err := c.API().GetContentMediaWithResponse(ctx, item.ID, nil)
	if err != nil || !bytes.Equal(media.Body, pic) {
		t.Fatalf("media: %v, %d bytes", err, len(media.Body))
	}
}

func TestUploadPhotoErrors(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	c := newUser(t, e, "ada@example.com", principal.TierPro)
	ctx := ctxT(t)

	for name, body := range map[string][]byte{"text": []byte("not an image at all"), "audio": wavBytes(1000)} {
		_, err := c.UploadPhoto(ctx, bytes.NewReader(body), "fake.png")
		var apiErr *sdk.APIError
		if !errors.As(err, &apiErr) || apiErr.StatusCode != http.StatusUnsupportedMediaType || apiErr.Code != "unsupported_media_type" {
			t.Fatalf("%s as a photo: %v, want 415 unsupported_media_type", name, err)
		}
	}
	if n := c.wire.count("POST /api/content/photos 415"); n != 2 {
		t.Fatalf("%d refused uploads, want 2 (no retries):\n%s", n, c.wire)
	}

	// A title is for voice notes, a caption for photos: refused before
	// anything is sent.
	pic := pngBytes(t, noiseImage(4, 4))
	if _, err := c.UploadPhoto(ctx, bytes.NewReader(pic), "p.png", sdk.UploadTitle("x")); err == nil || !strings.Contains(err.Error(), "UploadTitle") {
		t.Fatalf("a photo with a title: %v", err)
	}
	if _, err := c.UploadVoiceNote(ctx, bytes.NewReader(wavBytes(1000)), "m.wav", sdk.UploadCaption("x")); err == nil || !strings.Contains(err.Error(), "UploadCaption") {
		t.Fatalf("a voice note with a caption: %v", err)
	}
	if n := c.wire.count("POST /api/content/"); n != 2 {
		t.Fatalf("%d uploads sent, want only the 2 refused ones:\n%s", n, c.wire)
	}
	for _, err := range c.Items(ctx, sdk.ListOptions{}) {
		if err != nil {
			t.Fatal(err)
		}
		t.Fatal("a failed upload left an item")
	}
}

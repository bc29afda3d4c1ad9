package content

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/stratahq/strata/impl/apierrors"
	"github.com/stratahq/strata/impl/httpx"
	"github.com/stratahq/strata/impl/media"
	"github.com/stratahq/strata/impl/principal"
	"github.com/stratahq/strata/impl/store"
)

// maxFieldLen bounds a text part of an upload form (title, caption, tags…).
const maxFieldLen = 64 << 10

// The body limit leaves room for the three text fields read besides the
// file (and their framing); this fails to compile if it ever does not.
const _ = uint64(httpx.UploadFormAllowance - 3*maxFieldLen - 4<<10)

// UploadSpec says what an upload form carries.
type UploadSpec struct {
	Kind      media.Kind
	Type      string // item type: voice_note, photo
	FilePart  string // audio, photo
	TextField string // title (voice notes) or caption (photos)
	// MaxFileSize bounds the file part (bytes); the body limit of the
	// middleware only adds room for the form around it.
	MaxFileSize int64
}

// Voice-note and photo uploads: 25 MiB files (DECISIONS.md "Limits" for
// audio; the contract documents the same for photos).
var (
	VoiceNoteUpload = UploadSpec{Kind: media.Audio, Type: "voice_note", FilePart: "audio", TextField: "title",
		MaxFileSize: httpx.UploadFileLimit}
	PhotoUpload = UploadSpec{Kind: media.Image, Type: "photo", FilePart: "photo", TextField: "caption",
		MaxFileSize: httpx.UploadFileLimit}
)

// errFileTooLarge is returned by a fileLimit reader past its limit.
var errFileTooLarge = errors.New("file part exceeds its limit")

// fileLimit passes at most limit bytes of r through; reading a byte more
// fails with errFileTooLarge, so the blob being written is discarded.
type fileLimit struct {
	r    io.Reader
	left int64 // bytes still allowed; -1 once exceeded
}

func (l *fileLimit) Read(p []byte) (int, error) {
	if l.left < 0 {
		return 0, errFileTooLarge
	}
	if int64(len(p)) > l.left+1 {
		p = p[:l.left+1] // one byte more than allowed tells "exactly at the limit" from "over it"
	}
	n, err := l.r.Read(p)
	if int64(n) > l.left {
		l.left = -1
		return 0, errFileTooLarge
	}
	l.left -= int64(n)
	return n, err
}

// Upload streams a multipart upload into blob storage and creates its item
// (processing pending), emitting content:created. The file is checked by
// sniffing its bytes and, for audio, by probing the stored file for an
// audio stream that decodes (415 otherwise); a failed upload leaves no item
// and no blob.
func (s *Service) Upload(ctx context.Context, p principal.Principal, spec UploadSpec, form *multipart.Reader) (store.Item, error) {
	if s.media == nil {
		return store.Item{}, errors.New("content: no media store configured")
	}
	itemID := uuid.New()
	key := media.Key(p.UserID.String(), itemID.String())
	stored := false
	fail := func(err error) (store.Item, error) {
		if stored {
			if delErr := s.media.Delete(context.WithoutCancel(ctx), key); delErr != nil {
				s.logger.WarnContext(ctx, "delete blob of a failed upload", "key", key, "err", delErr)
			}
		}
		return store.Item{}, err
	}

	var contentType, text, tagsField, folderField string
	for {
		part, err := form.NextPart()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return fail(uploadReadError(err))
		}
		name := part.FormName()
		switch name {
		case spec.FilePart:
			if stored {
				return fail(apierrors.Validation("part %q appears twice", spec.FilePart))
			}
			ct, _, err := s.media.Put(ctx, key, spec.Kind, &fileLimit{r: part, left: spec.MaxFileSize})
			switch {
			case errors.Is(err, errFileTooLarge):
				return fail(apierrors.New(http.StatusRequestEntityTooLarge, apierrors.CodePayloadTooLarge,
					"part %q exceeds the limit of %d bytes", spec.FilePart, spec.MaxFileSize))
			case errors.Is(err, media.ErrUnsupported):
				return fail(apierrors.UnsupportedMediaType("part %q is not a supported %s format", spec.FilePart, spec.Kind))
			case err != nil:
				return fail(uploadReadError(err))
			}
			contentType, stored = ct, true
		case spec.TextField, "tags", "folderId":
			v, err := readField(part)
			if err != nil {
				return fail(err)
			}
			switch name {
			case "tags":
				tagsField = v
			case "folderId":
				folderField = v
			default:
				text = v
			}
		default:
			// Unknown parts are drained and ignored, as browsers send extras.
			if _, err := io.Copy(io.Discard, part); err != nil {
				return fail(uploadReadError(err))
			}
		}
	}
	if !stored {
		return fail(apierrors.Validation("part %q is required", spec.FilePart))
	}

	var folderID *uuid.UUID
	if folderField != "" {
		id, err := uuid.Parse(folderField)
		if err != nil {
			return fail(apierrors.Validation("field \"folderId\": not a UUID"))
		}
		folderID = &id // checked by the store when the item is written
	}
	tags, err := cleanTags(strings.Split(tagsField, ","))
	if err != nil {
		return fail(err)
	}
	text = strings.TrimSpace(text)
	it := store.Item{ID: itemID, UserID: p.UserID, Type: spec.Type, FolderID: folderID, Tags: tags, AITags: []string{},
		MediaKey: key, MediaContentType: contentType, ProcessingStatus: StatusPending}
	kind := string(spec.Kind)
	it.MediaKind = &kind
	switch spec.Type {
	case "photo":
		it.Body, it.Title = text, defaultTitle(text)
	default:
		it.Title = text
	}
	if err := checkTitle(it.Title); err != nil {
		return fail(err)
	}
	if spec.Kind == media.Audio {
		// The sniffed prefix says only what the file claims to be: "OggS" and
		// noise, or a video-only webm, would be accepted and fail in the
		// pipeline. The stored file must hold audio that decodes.
		if err := s.media.ProbeAudio(ctx, key, contentType); err != nil {
			if errors.Is(err, media.ErrUnsupported) {
				s.logger.InfoContext(ctx, "upload refused: no decodable audio", "key", key, "err", err)
				return fail(apierrors.UnsupportedMediaType("part %q holds no audio stream that can be decoded", spec.FilePart))
			}
			return fail(fmt.Errorf("probe uploaded audio: %w", err))
		}
	}
	now := s.now()
	it.CreatedAt, it.UpdatedAt = now, now
	if err := s.CreateItem(ctx, it); err != nil {
		return fail(err)
	}
	return it, nil
}

func readField(part *multipart.Part) (string, error) {
	b, err := io.ReadAll(io.LimitReader(part, maxFieldLen+1))
	if err != nil {
		return "", uploadReadError(err)
	}
	if len(b) > maxFieldLen {
		return "", apierrors.Validation("field %q is longer than %d bytes", part.FormName(), maxFieldLen)
	}
	// The same rules as text in JSON bodies (httpx.Validate).
	if !utf8.Valid(b) {
		return "", apierrors.Validation("field %q is not valid UTF-8", part.FormName())
	}
	if bytes.IndexByte(b, 0) >= 0 {
		return "", apierrors.Validation("field %q: text must not contain NUL characters", part.FormName())
	}
	return string(b), nil
}

// uploadReadError maps a failure to read the request body: over the limit
// is 413, a malformed form 400.
func uploadReadError(err error) error {
	var tooBig *http.MaxBytesError
	if errors.As(err, &tooBig) {
		return apierrors.PayloadTooLarge(tooBig.Limit)
	}
	return apierrors.Validation("malformed multipart body: %v", err)
}

// Media is an item's stored file, open for reading.
type Media struct {
	Reader      io.ReadSeekCloser
	ContentType string
	ModTime     time.Time
}

// OpenMedia opens the caller's item's media; 404 for another user's item,
// an unknown item or an item without media.
func (s *Service) OpenMedia(ctx context.Context, p principal.Principal, id uuid.UUID) (Media, error) {
	it, err := s.Get(ctx, p, id)
	if err != nil {
		return Media{}, err
	}
	if it.MediaKey == "" || s.media == nil {
		return Media{}, apierrors.NotFound("content item %s has no media", id)
	}
	r, err := s.media.Open(ctx, it.MediaKey)
	if errors.Is(err, media.ErrNotFound) {
		return Media{}, apierrors.NotFound("content item %s has no media", id)
	}
	if err != nil {
		return Media{}, fmt.Errorf("open media: %w", err)
	}
	return Media{Reader: r, ContentType: it.MediaContentType, ModTime: it.CreatedAt}, nil
}

// deleteMedia removes the blobs of deleted items (after their deletion
// committed); failures are logged: an orphan blob is harmless, a lost item is not.
func (s *Service) deleteMedia(ctx context.Context, items ...store.Item) {
	if s.media == nil {
		return
	}
	for _, it := range items {
		if it.MediaKey == "" {
			continue
		}
		if err := s.media.Delete(context.WithoutCancel(ctx), it.MediaKey); err != nil {
			s.logger.WarnContext(ctx, "delete media of a deleted item", "item_id", it.ID.String(), "err", err)
		}
	}
}

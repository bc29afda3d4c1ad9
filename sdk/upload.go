package sdk

import (
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"path/filepath"
	"strings"

	openapi_types "github.com/oapi-codegen/runtime/types"
)

// UploadOption sets a field of an upload form.
type UploadOption func(*uploadOptions)

type uploadOptions struct {
	title  string
	tags   []string
	folder *openapi_types.UUID
}

// UploadTitle sets the item's title (default: the first words of the
// transcript).
func UploadTitle(title string) UploadOption {
	return func(o *uploadOptions) { o.title = title }
}

// UploadTags sets the item's tags.
func UploadTags(tags ...string) UploadOption {
	return func(o *uploadOptions) { o.tags = append(o.tags, tags...) }
}

// UploadFolder puts the item in a folder.
func UploadFolder(id openapi_types.UUID) UploadOption {
	return func(o *uploadOptions) { o.folder = &id }
}

// errUploadEnded stops the form writer when the server answered before
// reading the whole body.
var errUploadEnded = errors.New("strata: upload ended")

// UploadVoiceNote uploads audio (wav, mp3, ogg/opus, webm or m4a, at most
// 25 MiB; the server sniffs the type) as a voice note and returns the item,
// accepted (202) with processingStatus pending: transcription, summary and
// tags follow (watch Events for content:processed).
//
// The audio is streamed from r as a multipart form while it is read: it is
// never held in memory whole. A streamed body cannot be sent twice, so an
// upload is never retried on 429 or 503; if the access token expires during
// the upload (TOKEN_EXPIRED) it is sent again only when r is an io.Seeker
// (such as an *os.File), from where it started. Other formats are an
// *APIError with Code unsupported_media_type (415), more than 25 MiB
// payload_too_large (413).
func (s *Client) UploadVoiceNote(ctx context.Context, r io.Reader, filename string, opts ...UploadOption) (ContentItemDetail, error) {
	var o uploadOptions
	for _, opt := range opts {
		opt(&o)
	}
	seeker, _ := r.(io.Seeker)
	var start int64
	if seeker != nil {
		var err error
		if start, err = seeker.Seek(0, io.SeekCurrent); err != nil {
			seeker = nil // not really seekable (a pipe behind an *os.File)
		}
	}
	for attempt := 0; ; attempt++ {
		// The token is set here rather than by the transport, so that a
		// TOKEN_EXPIRED answer names the token that failed.
		token, err := s.auth.token(ctx)
		if err != nil {
			return ContentItemDetail{}, err
		}
		item, err := s.uploadOnce(ctx, token, r, filename, o)
		if attempt == 0 && seeker != nil && errors.Is(err, ErrTokenExpired) && s.auth.canRenew() {
			if _, serr := seeker.Seek(start, io.SeekStart); serr != nil {
				return item, err
			}
			if _, rerr := s.auth.renew(ctx, token); rerr != nil {
				return item, fmt.Errorf("strata: the access token expired and the session could not be renewed: %w", rerr)
			}
			continue
		}
		return item, err
	}
}

func (s *Client) uploadOnce(ctx context.Context, token string, r io.Reader, filename string, o uploadOptions) (ContentItemDetail, error) {
	pr, pw := io.Pipe()
	mw := multipart.NewWriter(pw)
	written := make(chan struct{})
	go func() {
		defer close(written)
		pw.CloseWithError(writeVoiceForm(mw, r, filename, o)) // nil: EOF
	}()
	bearer := func(_ context.Context, req *http.Request) error {
		req.Header.Set("Authorization", "Bearer "+token)
		return nil
	}
	rsp, err := s.api.UploadVoiceNoteWithBodyWithResponse(ctx, mw.FormDataContentType(), pr, bearer)
	// The server may answer (413, 415, 401) before reading everything:
	// stop the writer and wait for it, so r is not read after we return.
	_ = pr.CloseWithError(errUploadEnded)
	<-written
	if err != nil {
		return ContentItemDetail{}, err
	}
	return result(rsp.JSON202, rsp.HTTPResponse, rsp.Body)
}

// writeVoiceForm writes the form: the small fields first, then the audio,
// copied from r in chunks as the request body is sent.
func writeVoiceForm(mw *multipart.Writer, r io.Reader, filename string, o uploadOptions) error {
	fields := [][2]string{}
	if o.title != "" {
		fields = append(fields, [2]string{"title", o.title})
	}
	if len(o.tags) > 0 {
		fields = append(fields, [2]string{"tags", strings.Join(o.tags, ",")})
	}
	if o.folder != nil {
		fields = append(fields, [2]string{"folderId", o.folder.String()})
	}
	for _, f := range fields {
		if err := mw.WriteField(f[0], f[1]); err != nil {
			return err
		}
	}
	if filename == "" {
		filename = "audio"
	}
	h := textproto.MIMEHeader{}
	h.Set("Content-Disposition", mime.FormatMediaType("form-data", map[string]string{"name": "audio", "filename": filepath.Base(filename)}))
	ct := mime.TypeByExtension(filepath.Ext(filename))
	if ct == "" {
		ct = "application/octet-stream" // the server sniffs the bytes anyway
	}
	h.Set("Content-Type", ct)
	part, err := mw.CreatePart(h)
	if err != nil {
		return err
	}
	if _, err := io.Copy(part, r); err != nil {
		return err
	}
	return mw.Close()
}

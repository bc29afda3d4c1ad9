package sdk

import (
	"context"
	"encoding/json"
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
	title   string
	caption string
	tags    []string
	folder  *openapi_types.UUID
}

// UploadTitle sets a voice note's title (default: the first words of the
// transcript). Photos have a caption instead (UploadCaption).
func UploadTitle(title string) UploadOption {
	return func(o *uploadOptions) { o.title = title }
}

// UploadCaption sets a photo's caption, which becomes the item's body (and
// its title, shortened). Voice notes have a title instead (UploadTitle).
func UploadCaption(caption string) UploadOption {
	return func(o *uploadOptions) { o.caption = caption }
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
	return s.upload(ctx, r, filename, uploadForm{filePart: "audio", textField: "title", send: s.api.UploadVoiceNoteWithBody}, opts)
}

// UploadPhoto uploads an image (JPEG, PNG, GIF or WebP, at most 25 MiB; the
// server sniffs the type) as a photo and returns the item, accepted (202)
// with mediaKind image and processingStatus pending. The caption
// (UploadCaption) becomes the body; UploadTags and UploadFolder apply as for
// voice notes, UploadTitle does not (a photo's title comes from its
// caption).
//
// The image is streamed like UploadVoiceNote's audio, with the same rules:
// never retried on 429 or 503, sent again after TOKEN_EXPIRED only when r
// is an io.Seeker. Other formats are an *APIError with Code
// unsupported_media_type (415), more than 25 MiB payload_too_large (413).
func (s *Client) UploadPhoto(ctx context.Context, r io.Reader, filename string, opts ...UploadOption) (ContentItemDetail, error) {
	return s.upload(ctx, r, filename, uploadForm{filePart: "photo", textField: "caption", send: s.api.UploadPhotoWithBody}, opts)
}

// uploadForm is what differs between the upload endpoints: the names of
// the file part and of the text field, and the generated call that sends
// the form. Both endpoints answer 202 with a ContentItemDetail.
type uploadForm struct {
	filePart  string // audio, photo; also the file name when none is given
	textField string // title (voice notes), caption (photos)
	send      func(ctx context.Context, contentType string, body io.Reader, reqEditors ...RequestEditorFn) (*http.Response, error)
}

// fields returns the form's small fields for opts. The form has a title or
// a caption, not both: the other is refused rather than sent for the
// server to ignore.
func (form uploadForm) fields(opts []UploadOption) ([][2]string, error) {
	var o uploadOptions
	for _, opt := range opts {
		opt(&o)
	}
	text, other, otherOpt := o.title, o.caption, "UploadCaption"
	if form.textField == "caption" {
		text, other, otherOpt = o.caption, o.title, "UploadTitle"
	}
	if other != "" {
		return nil, fmt.Errorf("strata: %s does not apply to a %s upload, whose text field is %s", otherOpt, form.filePart, form.textField)
	}
	var fields [][2]string
	if text != "" {
		fields = append(fields, [2]string{form.textField, text})
	}
	if len(o.tags) > 0 {
		fields = append(fields, [2]string{"tags", strings.Join(o.tags, ",")})
	}
	if o.folder != nil {
		fields = append(fields, [2]string{"folderId", o.folder.String()})
	}
	return fields, nil
}

// upload sends the form, once more from the start after a TOKEN_EXPIRED
// answer when r can seek back.
func (s *Client) upload(ctx context.Context, r io.Reader, filename string, form uploadForm, opts []UploadOption) (ContentItemDetail, error) {
	fields, err := form.fields(opts)
	if err != nil {
		return ContentItemDetail{}, err
	}
	seeker, _ := r.(io.Seeker)
	var start int64
	if seeker != nil {
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
		item, err := s.uploadOnce(ctx, token, r, filename, form, fields)
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

func (s *Client) uploadOnce(ctx context.Context, token string, r io.Reader, filename string, form uploadForm, fields [][2]string) (ContentItemDetail, error) {
	pr, pw := io.Pipe()
	mw := multipart.NewWriter(pw)
	written := make(chan struct{})
	go func() {
		defer close(written)
		pw.CloseWithError(writeForm(mw, fields, form.filePart, filename, r)) // nil: EOF
	}()
	bearer := func(_ context.Context, req *http.Request) error {
		req.Header.Set("Authorization", "Bearer "+token)
		return nil
	}
	rsp, err := form.send(ctx, mw.FormDataContentType(), pr, bearer)
	// The server may answer (413, 415, 401) before reading everything:
	// stop the writer and wait for it, so r is not read after we return.
	_ = pr.CloseWithError(errUploadEnded)
	<-written
	if err != nil {
		return ContentItemDetail{}, fmt.Errorf("strata: upload %s: %w", form.filePart, err)
	}
	return acceptedItem(rsp)
}

// acceptedItem reads an upload's answer: the item of a 202, else the
// *APIError.
func acceptedItem(rsp *http.Response) (ContentItemDetail, error) {
	defer rsp.Body.Close()
	body, err := io.ReadAll(rsp.Body)
	if err != nil {
		return ContentItemDetail{}, fmt.Errorf("strata: read the upload's response (%s): %w", rsp.Status, err)
	}
	var item *ContentItemDetail
	if rsp.StatusCode == http.StatusAccepted && strings.Contains(rsp.Header.Get("Content-Type"), "json") {
		item = new(ContentItemDetail)
		if err := json.Unmarshal(body, item); err != nil {
			return ContentItemDetail{}, fmt.Errorf("strata: decode the upload's response: %w", err)
		}
	}
	return result(item, rsp, body)
}

// writeForm writes the form: the small fields first, then the file as
// part filePart, copied from r in chunks as the request body is sent.
func writeForm(mw *multipart.Writer, fields [][2]string, filePart, filename string, r io.Reader) error {
	for _, f := range fields {
		if err := mw.WriteField(f[0], f[1]); err != nil {
			return err
		}
	}
	if filename == "" {
		filename = filePart
	}
	h := textproto.MIMEHeader{}
	h.Set("Content-Disposition", mime.FormatMediaType("form-data", map[string]string{"name": filePart, "filename": filepath.Base(filename)}))
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

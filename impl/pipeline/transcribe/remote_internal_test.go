package transcribe

import (
	"net/http"
	"testing"
	"time"
)

func TestRetryAfter(t *testing.T) {
	t.Parallel()
	now := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		header string
		want   time.Duration
	}{
		{"", 0},
		{"30", 30 * time.Second},
		{" 5 ", 5 * time.Second},
		{"0", 0},
		{"-3", 0},
		{now.Add(90 * time.Second).Format(http.TimeFormat), 90 * time.Second},
		{now.Add(-time.Minute).Format(http.TimeFormat), 0},
		{"soon", 0},
	} {
		if got := retryAfter(tc.header, now); got != tc.want {
			t.Errorf("retryAfter(%q) = %v, want %v", tc.header, got, tc.want)
		}
	}
}

func TestErrorMessage(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ body, want string }{
		{`{"error": {"message": "Incorrect API key provided.", "type": "invalid_request_error"}}`, "Incorrect API key provided."},
		{`{"error": "model not loaded"}`, "model not loaded"},
		{`{"detail": "Not authenticated"}`, "Not authenticated"},
		{`{"detail": [{"loc": ["body", "file"], "msg": "field required"}]}`, `[{"loc": ["body", "file"], "msg": "field required"}]`},
		{"<html>\n  <body>502 Bad Gateway</body>\n</html>", "<html> <body>502 Bad Gateway</body> </html>"},
		{"", ""},
	} {
		if got := errorMessage([]byte(tc.body)); got != tc.want {
			t.Errorf("errorMessage(%q) = %q, want %q", tc.body, got, tc.want)
		}
	}
}

func TestSniff(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ head, want string }{
		{"RIFF\x24\x00\x00\x00WAVE", ".wav"},
		{"OggS\x00\x02\x00\x00\x00\x00\x00\x00", ".ogg"},
		{"\x1a\x45\xdf\xa3\x9f\x42\x86\x81\x01\x42\xf7\x81", ".webm"},
		{"\x00\x00\x00\x1cftypM4A ", ".m4a"},
		{"fLaC\x00\x00\x00\x22", ".flac"},
		{"ID3\x04\x00\x00\x00\x00", ".mp3"},
		{"\xff\xfb\x90\x64\x00", ".mp3"},
		{"hello world!", ".bin"},
		{"", ".bin"},
	} {
		if got, _ := sniff([]byte(tc.head)); got != tc.want {
			t.Errorf("sniff(%q) = %q, want %q", tc.head, got, tc.want)
		}
	}
}

func TestHTTPErrorClassification(t *testing.T) {
	t.Parallel()
	for status, want := range map[int]error{
		400: nil, 401: nil, 403: nil, 404: nil,
		408: ErrUnavailable, 429: ErrUnavailable, 500: ErrUnavailable, 502: ErrUnavailable, 503: ErrUnavailable, 504: ErrUnavailable,
		413: ErrTooLong, 415: ErrInvalidAudio,
	} {
		if got := (&HTTPError{StatusCode: status}).Unwrap(); got != want {
			t.Errorf("HTTP %d: Unwrap() = %v, want %v", status, got, want)
		}
	}
}

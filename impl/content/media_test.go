package content_test

import (
	"bytes"
	"net/http"
	"strconv"
	"testing"

	"github.com/stratahq/strata/impl/testenv"
)

// Range requests of the media endpoint, RFC 9110 section 14: one range is
// 206 with Content-Range; an unsatisfiable one 416 with bytes */size;
// several ranges, another unit or a malformed value are ignored (200).
func TestMediaRanges(t *testing.T) {
	t.Parallel()
	e := testenv.New(t, nil)
	s := e.NewUser("ranges@example.com")
	auth := testenv.Bearer(s.AccessToken)
	wav := wavBytes(8000)
	size := len(wav)
	n := strconv.Itoa(size)
	r := upload(t, e, s.AccessToken, "/api/content/voice-notes", part{name: "audio", filename: "a.wav", data: bytes.NewReader(wav)})
	if r.Status != http.StatusAccepted {
		t.Fatalf("upload: %d %s", r.Status, r.Body)
	}
	var it item
	r.Decode(t, &it)
	path := "/api/content/" + it.ID + "/media"

	cases := []struct {
		rng          string
		status       int
		contentRange string // for 206 and 416
		body         []byte // for 200 and 206
	}{
		{"", 200, "", wav},
		{"bytes=4-11", 206, "bytes 4-11/" + n, wav[4:12]},
		{"bytes=10-", 206, "bytes 10-" + strconv.Itoa(size-1) + "/" + n, wav[10:]},
		{"bytes=-5", 206, "bytes " + strconv.Itoa(size-5) + "-" + strconv.Itoa(size-1) + "/" + n, wav[size-5:]},
		{"bytes=-99999999999999999999", 206, "bytes 0-" + strconv.Itoa(size-1) + "/" + n, wav},
		{"bytes=0-99999999999999999999", 206, "bytes 0-" + strconv.Itoa(size-1) + "/" + n, wav},
		{"Bytes=0-1", 206, "bytes 0-1/" + n, wav[:2]},
		{"bytes=0-1, ", 206, "bytes 0-1/" + n, wav[:2]},
		{"bytes=-0", 416, "bytes */" + n, nil},
		{"bytes=" + n + "-", 416, "bytes */" + n, nil},
		{"bytes=999999-", 416, "bytes */" + n, nil},
		{"bytes=99999999999999999999-", 416, "bytes */" + n, nil},
		{"bytes=0-1,5-9", 200, "", wav},
		{"items=0-1", 200, "", wav},
		{"bytes=abc", 200, "", wav},
		{"bytes=5-2", 200, "", wav},
		{"bytes=+1-2", 200, "", wav},
		{"bytes=", 200, "", wav},
	}
	for _, c := range cases {
		headers := auth
		if c.rng != "" {
			headers = append(append([]string{}, auth...), "Range", c.rng)
		}
		got := e.Call("GET", path, "", headers...)
		if got.Status == 416 {
			testenv.ExpectError(t, got, 416, "range_not_satisfiable")
		}
		if got.Status != c.status || got.Header.Get("Content-Range") != c.contentRange {
			t.Errorf("Range %q: %d, Content-Range %q; want %d, %q", c.rng, got.Status, got.Header.Get("Content-Range"), c.status, c.contentRange)
			continue
		}
		if c.status != 416 && !bytes.Equal(got.Body, c.body) {
			t.Errorf("Range %q: %d bytes, want %d", c.rng, len(got.Body), len(c.body))
		}
		if c.status != 416 && (got.Header.Get("X-Content-Type-Options") != "nosniff" || got.Header.Get("Content-Type") != "audio/wav") {
			t.Errorf("Range %q: headers %v", c.rng, got.Header)
		}
	}

	// HEAD answers like GET without a body.
	head := e.Call("HEAD", path, "", auth...)
	if head.Status != 200 || head.Header.Get("Content-Length") != n || len(head.Body) != 0 {
		t.Errorf("HEAD: %d, %s bytes", head.Status, head.Header.Get("Content-Length"))
	}
	head = e.Call("HEAD", path, "", append(append([]string{}, auth...), "Range", "bytes=4-11")...)
	if head.Status != 206 || head.Header.Get("Content-Range") != "bytes 4-11/"+n {
		t.Errorf("HEAD with a range: %d %q", head.Status, head.Header.Get("Content-Range"))
	}
	// Preconditions come before the range: not modified since the upload is
	// 304, whatever the range.
	since := e.Clock.Now().UTC().Format(http.TimeFormat)
	for _, rng := range []string{"", "bytes=4-11", "bytes=-0"} {
		headers := append(append([]string{}, auth...), "If-Modified-Since", since)
		if rng != "" {
			headers = append(headers, "Range", rng)
		}
		if got := e.Call("GET", path, "", headers...); got.Status != http.StatusNotModified || len(got.Body) != 0 {
			t.Errorf("If-Modified-Since with Range %q: %d", rng, got.Status)
		}
	}
}

package content

import (
	"fmt"
	"testing"
)

// FuzzNormalizeRange: whatever the client sends, the rewritten Range is
// absent, one range inside the file, or the unsatisfiable bytes=size-.
func FuzzNormalizeRange(f *testing.F) {
	for _, s := range []string{"bytes=0-1", "bytes=-0", "bytes=-5", "bytes=0-1,5-9", "items=0-1", "bytes=abc",
		"bytes=5-2", "Bytes=3-", "bytes=99999999999999999999-", "bytes= 1-2 ,", "bytes=-"} {
		f.Add(s, int64(100))
	}
	f.Fuzz(func(t *testing.T, v string, size int64) {
		if size < 0 {
			return
		}
		got := normalizeRange(v, size)
		if got == "" || got == fmt.Sprintf("bytes=%d-", size) {
			return
		}
		var first, last int64
		if _, err := fmt.Sscanf(got, "bytes=%d-%d", &first, &last); err != nil || fmt.Sprintf("bytes=%d-%d", first, last) != got {
			t.Fatalf("%q (size %d) became %q", v, size, got)
		}
		if first < 0 || first > last || last >= size {
			t.Fatalf("%q (size %d) became %q, outside the file", v, size, got)
		}
	})
}

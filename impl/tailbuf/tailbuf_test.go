package tailbuf_test

import (
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/stratahq/strata/impl/tailbuf"
)

func TestKeepsTheLastBytes(t *testing.T) {
	b := tailbuf.New(8)
	for _, s := range []string{"abc", "defgh", "ij", strings.Repeat("x", 20) + "12345678"} {
		if n, err := b.Write([]byte(s)); n != len(s) || err != nil {
			t.Fatalf("Write(%q) = %d, %v", s, n, err)
		}
	}
	if got := string(b.Bytes()); got != "12345678" {
		t.Fatalf("kept %q", got)
	}
	// Bytes is a copy: writing on does not change it.
	kept := b.Bytes()
	_, _ = b.Write([]byte("zz"))
	if string(kept) != "12345678" || string(b.Bytes()) != "345678zz" {
		t.Fatalf("kept %q, now %q", kept, b.Bytes())
	}
}

func TestConcurrentWriters(t *testing.T) {
	b := tailbuf.New(1 << 10)
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range 200 {
				fmt.Fprintf(b, "%d:%d\n", i, j)
			}
		}()
	}
	wg.Wait()
	if got := len(b.Bytes()); got != 1<<10 {
		t.Fatalf("kept %d bytes, want %d", got, 1<<10)
	}
}

package spoolfile_test

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/stratahq/strata/impl/spoolfile"
)

func TestCopy(t *testing.T) {
	t.Parallel()
	f, err := spoolfile.Copy(t.Context(), strings.NewReader("hello"), 5, "spool-test-*")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if b, _ := io.ReadAll(f); string(b) != "hello" {
		t.Fatalf("read back %q", b)
	}
	if _, err := spoolfile.Copy(t.Context(), strings.NewReader("hello!"), 5, "spool-test-*"); !errors.Is(err, spoolfile.ErrTooLarge) {
		t.Fatalf("one byte over the limit: %v", err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := spoolfile.Copy(ctx, strings.NewReader("hello"), 5, "spool-test-*"); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled context: %v", err)
	}
}

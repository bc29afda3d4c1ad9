// Package spoolfile copies a stream into an unlinked temporary file, for
// child processes (ffmpeg, ffprobe) that must seek in their input, such as
// MP4-family audio whose index comes after the samples.
package spoolfile

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
)

// ErrTooLarge is returned when the stream is longer than the limit.
var ErrTooLarge = errors.New("spoolfile: the stream exceeds the limit")

// Copy copies r, at most limit bytes, into a temporary file that is
// unlinked at once (nothing is left behind whatever happens next) and
// returns it positioned at its start; the caller closes it. Reading stops
// once ctx is done. A longer stream is ErrTooLarge.
func Copy(ctx context.Context, r io.Reader, limit int64, pattern string) (*os.File, error) {
	f, err := os.CreateTemp("", pattern)
	if err != nil {
		return nil, fmt.Errorf("spoolfile: %w", err)
	}
	_ = os.Remove(f.Name())
	n, err := io.Copy(f, &ctxReader{ctx: ctx, r: io.LimitReader(r, limit+1)})
	if err == nil && n > limit {
		err = fmt.Errorf("%w (%d MiB)", ErrTooLarge, limit>>20)
	}
	if err == nil {
		_, err = f.Seek(0, io.SeekStart)
	}
	if err != nil {
		_ = f.Close()
		return nil, err
	}
	return f, nil
}

// ctxReader stops reading once ctx is done.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c *ctxReader) Read(p []byte) (int, error) {
	if err := context.Cause(c.ctx); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}

package query

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// The encoded body of a result is held back until its last row was read:
// only then is it known whether rows beyond maxRows were left out, which the
// X-Strata-Truncated response header must say before the first byte of the
// body. DuckDB has materialized the whole result already, but the driver
// does not tell its row count, so there is no way to know sooner.
//
// A body up to spoolMemory bytes stays in memory; beyond that it goes to an
// unlinked temporary file under DataDir/query-tmp, so that a wide result near
// maxRows costs disk rather than the server's memory.
const spoolMemory = 4 << 20

// sendChunk is how much of a held body is written to the client at a time;
// the query's deadline is checked between chunks.
const sendChunk = 32 << 10

// spool holds an encoded body. It is used by one goroutine.
type spool struct {
	dir  string // where the file goes, created on first use
	mem  []byte
	file *os.File
	name string // the file's name while it could not be unlinked
	err  error  // the first write error; later writes fail with it
}

// Write implements io.Writer.
func (s *spool) Write(p []byte) (int, error) {
	if s.err != nil {
		return 0, s.err
	}
	if s.file == nil && len(s.mem)+len(p) <= spoolMemory {
		s.mem = append(s.mem, p...)
		return len(p), nil
	}
	if s.file == nil {
		if s.err = s.open(); s.err != nil {
			return 0, s.err
		}
	}
	n, err := s.file.Write(p)
	if err != nil {
		s.err = fmt.Errorf("query: hold result on disk: %w", err)
		return n, s.err
	}
	return n, nil
}

// open moves the body to a temporary file.
func (s *spool) open() error {
	if err := os.MkdirAll(s.dir, 0o700); err != nil {
		return fmt.Errorf("query: hold result on disk: %w", err)
	}
	f, err := os.CreateTemp(s.dir, "result-*.spool")
	if err != nil {
		return fmt.Errorf("query: hold result on disk: %w", err)
	}
	// Unlinked at once where the system allows it (an open file stays
	// readable), so that nothing is left behind if the process dies.
	if os.Remove(f.Name()) != nil {
		s.name = f.Name()
	}
	if _, err := f.Write(s.mem); err != nil {
		_ = f.Close()
		s.removeFile()
		return fmt.Errorf("query: hold result on disk: %w", err)
	}
	s.file, s.mem = f, nil
	return nil
}

// sendTo writes the held body to w, checking ctx between chunks: a
// deadline that passes while a slow client reads still ends the response.
func (s *spool) sendTo(ctx context.Context, w io.Writer) error {
	if s.err != nil {
		return s.err
	}
	write := func(p []byte) error {
		for len(p) > 0 {
			if err := ctx.Err(); err != nil {
				return mapContextError(ctx, err)
			}
			n := min(len(p), sendChunk)
			if _, err := w.Write(p[:n]); err != nil {
				return fmt.Errorf("query: write result: %w", err)
			}
			p = p[n:]
		}
		return nil
	}
	if s.file == nil {
		return write(s.mem)
	}
	if _, err := s.file.Seek(0, io.SeekStart); err != nil {
		return fmt.Errorf("query: read held result: %w", err)
	}
	buf := make([]byte, sendChunk)
	for {
		n, err := io.ReadFull(s.file, buf)
		if werr := write(buf[:n]); werr != nil {
			return werr
		}
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("query: read held result: %w", err)
		}
	}
}

// close releases the memory and the file.
func (s *spool) close() {
	s.mem = nil
	if s.file != nil {
		_ = s.file.Close()
		s.file = nil
	}
	s.removeFile()
}

func (s *spool) removeFile() {
	if s.name != "" {
		_ = os.Remove(s.name)
		s.name = ""
	}
}

// spoolDir is where results too large for memory are held.
func (e *Engine) spoolDir() string { return filepath.Join(e.cfg.DataDir, "query-tmp") }

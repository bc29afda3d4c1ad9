// Package tailbuf keeps the end of a stream: the last bytes a child process
// wrote to stderr, kept to explain why it failed.
package tailbuf

import "sync"

// Buffer is an io.Writer that keeps the last bytes written to it. It is
// safe for concurrent use (a process's stderr is copied from another
// goroutine than the one that reads the tail).
type Buffer struct {
	mu  sync.Mutex
	max int
	buf []byte
}

// New returns a Buffer that keeps the last max bytes.
func New(max int) *Buffer { return &Buffer{max: max} }

// Write implements io.Writer; it never fails.
func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buf = append(b.buf, p...)
	if over := len(b.buf) - b.max; over > 0 {
		b.buf = append(b.buf[:0], b.buf[over:]...)
	}
	return len(p), nil
}

// Bytes returns a copy of the kept bytes.
func (b *Buffer) Bytes() []byte {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]byte(nil), b.buf...)
}

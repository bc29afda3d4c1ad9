//go:build !cgo

package transcribe

import (
	"errors"
	"fmt"
)

// decoder stands in for the cgo PocketSphinx decoder in builds without cgo,
// so that the package, and the remote engine, still build.
type decoder struct{}

func newDecoder(modelFiles) (*decoder, error) {
	return nil, fmt.Errorf("transcribe: %w: the local PocketSphinx engine needs cgo (CGO_ENABLED=1); set a transcription URL to use a remote engine instead", ErrNoEngine)
}

func (*decoder) decode([]byte) (string, error) { return "", errors.New("transcribe: no decoder") }

func (*decoder) free() {}

package connectors

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// sealedPrefix marks a sealed value inside a stored config.
const sealedPrefix = "sealed:v1:"

// KeyFile is the name of the sealing key in the data dir.
const KeyFile = "secrets.key"

// Sealer encrypts secret config values at rest with AES-256-GCM. The key is
// a file of the data dir (mode 0600), created on first use; each value is
// bound to its connector and field (additional data), so a sealed value
// copied to another connector or field does not open.
type Sealer struct {
	aead cipher.AEAD
}

// OpenSealer loads (or creates) the key in dataDir.
func OpenSealer(dataDir string) (*Sealer, error) {
	path := filepath.Join(dataDir, KeyFile)
	key, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		key = make([]byte, 32)
		if _, err := rand.Read(key); err != nil {
			return nil, err
		}
		// O_EXCL: two processes starting at once must not both write a key.
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if errors.Is(err, os.ErrExist) {
			return OpenSealer(dataDir)
		}
		if err != nil {
			return nil, fmt.Errorf("create %s: %w", path, err)
		}
		if _, err := f.Write(key); err != nil {
			f.Close()
			return nil, err
		}
		if err := f.Close(); err != nil {
			return nil, err
		}
	} else if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	if len(key) != 32 {
		return nil, fmt.Errorf("%s: want a 32-byte key", path)
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, err
	}
	return &Sealer{aead: aead}, nil
}

// Seal encrypts value for the field of a connector.
func (s *Sealer) Seal(plain, binding string) (string, error) {
	nonce := make([]byte, s.aead.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		return "", err
	}
	out := s.aead.Seal(nonce, nonce, []byte(plain), []byte(binding))
	return sealedPrefix + base64.RawStdEncoding.EncodeToString(out), nil
}

// Open decrypts a value sealed for binding.
func (s *Sealer) Open(sealed, binding string) (string, error) {
	raw, err := base64.RawStdEncoding.DecodeString(strings.TrimPrefix(sealed, sealedPrefix))
	if err != nil || !strings.HasPrefix(sealed, sealedPrefix) || len(raw) < s.aead.NonceSize() {
		return "", errors.New("not a sealed value")
	}
	plain, err := s.aead.Open(nil, raw[:s.aead.NonceSize()], raw[s.aead.NonceSize():], []byte(binding))
	if err != nil {
		return "", errors.New("sealed value does not open with this key")
	}
	return string(plain), nil
}

// IsSealed reports whether v is a sealed value.
func IsSealed(v string) bool { return strings.HasPrefix(v, sealedPrefix) }

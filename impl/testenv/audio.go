package testenv

import (
	"bytes"
	"encoding/binary"
)

// SilentWAV is a valid 16 kHz mono 16-bit PCM WAV file of n samples of
// silence: an upload every sniffer and decoder accepts.
func SilentWAV(n int) []byte {
	var b bytes.Buffer
	dataLen := uint32(n * 2)
	b.WriteString("RIFF")
	_ = binary.Write(&b, binary.LittleEndian, 36+dataLen)
	b.WriteString("WAVEfmt ")
	for _, v := range []any{uint32(16), uint16(1), uint16(1), uint32(16000), uint32(32000), uint16(2), uint16(16)} {
		_ = binary.Write(&b, binary.LittleEndian, v)
	}
	b.WriteString("data")
	_ = binary.Write(&b, binary.LittleEndian, dataLen)
	b.Write(make([]byte, dataLen))
	return b.Bytes()
}

package hostedbackend

import (
	"bytes"
	"encoding/json"
	"io"
	"testing"
	"testing/iotest"
)

// chunkReader returns at most n bytes per Read, to split values across
// buffer refills.
type chunkReader struct {
	r io.Reader
	n int
}

func (c chunkReader) Read(p []byte) (int, error) {
	if len(p) > c.n {
		p = p[:c.n]
	}
	return c.r.Read(p)
}

var lexerSeeds = []string{
	`[]`, `{}`, `"plain"`, `"esc \" \\ \/ \b \f \n \r \t \u00e9 \ud83d\ude00 \ud800 \udc00x"`,
	`-0`, `0.5e-10`, `1E+2`, `01`, `1.`, `.5`, `-`, `true`, `false`, `null`, `nul`,
	`[1, "two", {"three": [3, null]}, true]`, `{"a":1,"b":[{"c":"d"}]}`, `[1,]`, `{,}`, `{"a" 1}`,
	"\"bad utf8 \xff\xfe\"", "\"ctrl \x01\"", `"unterminated`, `[[[[[]]]]]`, ` [ 1 , 2 ] `,
}

// FuzzLexer checks the streaming lexer against encoding/json on arbitrary
// input, with tiny buffers and reads so values straddle refills.
func FuzzLexer(f *testing.F) {
	for _, s := range lexerSeeds {
		f.Add([]byte(s), uint8(1), uint8(1))
	}
	f.Fuzz(func(t *testing.T, data []byte, bufSize, chunk uint8) {
		valid := json.Valid(data)
		lx := newLexerSize(chunkReader{bytes.NewReader(data), int(chunk%7) + 1}, int(bufSize%9)+1)
		raw, err := lx.raw()
		var rawCopy []byte
		if err == nil {
			rawCopy = append([]byte(nil), raw...)
		}
		eof, eofErr := lx.atEOF()
		ok := err == nil && eofErr == nil && eof
		if ok != valid {
			t.Fatalf("input %q: lexer ok=%v (err %v, eof %v %v), json.Valid=%v", data, ok, err, eof, eofErr, valid)
		}
		if !valid {
			return
		}
		if !bytes.Equal(rawCopy, bytes.TrimSpace(data)) {
			t.Fatalf("raw %q, want %q", rawCopy, bytes.TrimSpace(data))
		}
		// Strings decode like encoding/json.
		var want string
		if bytes.HasPrefix(bytes.TrimSpace(data), []byte(`"`)) && json.Unmarshal(data, &want) == nil {
			lx := newLexerSize(iotest.OneByteReader(bytes.NewReader(data)), int(bufSize%5)+1)
			if _, err := lx.peek(); err != nil {
				t.Fatal(err)
			}
			got, err := lx.str()
			if err != nil || string(got) != want {
				t.Fatalf("string %q: got %q (%v), want %q", data, got, err, want)
			}
		}
	})
}

func TestLexerSeeds(t *testing.T) {
	for _, s := range lexerSeeds {
		for _, size := range []int{1, 3, 64} {
			lx := newLexerSize(chunkReader{bytes.NewReader([]byte(s)), 2}, size)
			_, err := lx.raw()
			eof, _ := lx.atEOF()
			if (err == nil && eof) != json.Valid([]byte(s)) {
				t.Errorf("%q (buffer %d): err %v eof %v, json.Valid %v", s, size, err, eof, json.Valid([]byte(s)))
			}
		}
	}
}

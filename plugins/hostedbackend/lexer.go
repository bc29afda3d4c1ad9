package hostedbackend

import (
	"fmt"
	"io"
	"unicode/utf16"
	"unicode/utf8"
)

// lexer is a small streaming JSON reader for PostgREST row arrays. It
// exists because encoding/json's Decoder.Token, which would keep memory
// bounded just as well, costs several microseconds per row (each scalar is
// scanned as a top-level value and ends in a formatted scanner error);
// this reader decodes the same grammar about an order of magnitude faster
// and allocates nothing per value on the common path.
//
// Slices it returns point into its buffer (or scratch space) and are valid
// only until the next call. It holds one buffer (64 KiB, grown only to fit a
// single value that is larger), so memory stays bounded by the largest
// value, not the response.
type lexer struct {
	r       io.Reader
	buf     []byte
	pos     int // next byte to read
	end     int // end of valid data in buf
	mark    int // start of a raw capture, -1 when none
	rerr    error
	scratch []byte
	offset  int64 // bytes discarded before buf[0], for error positions
}

const lexerBufSize = 64 << 10

// maxDepth bounds nesting of JSON values, as encoding/json does.
const maxDepth = 10000

func newLexer(r io.Reader) *lexer {
	return newLexerSize(r, lexerBufSize)
}

// newLexerSize lets tests start with a tiny buffer to exercise refills.
func newLexerSize(r io.Reader, size int) *lexer {
	return &lexer{r: r, buf: make([]byte, max(size, 1)), mark: -1}
}

// errSyntax is a JSON syntax error at an input offset.
type errSyntax struct {
	msg string
	off int64
}

func (e *errSyntax) Error() string {
	return fmt.Sprintf("invalid JSON at byte %d: %s", e.off, e.msg)
}

func (lx *lexer) syntax(format string, args ...any) error {
	return &errSyntax{msg: fmt.Sprintf(format, args...), off: lx.offset + int64(lx.pos)}
}

// fill reads more input. It keeps buf[k:], k being the smallest of pos,
// mark (when set) and keep (when >= 0), moving it to the front and growing
// the buffer when the kept bytes fill it. It returns how far the kept bytes
// moved (to adjust indices held by the caller) and false at the end of
// input.
func (lx *lexer) fill(keep int) (int, bool) {
	if lx.rerr != nil {
		return 0, false
	}
	k := lx.pos
	if lx.mark >= 0 && lx.mark < k {
		k = lx.mark
	}
	if keep >= 0 && keep < k {
		k = keep
	}
	if k > 0 {
		n := copy(lx.buf, lx.buf[k:lx.end])
		lx.offset += int64(k)
		lx.pos -= k
		if lx.mark >= 0 {
			lx.mark -= k
		}
		lx.end = n
	}
	if lx.end == len(lx.buf) {
		nb := make([]byte, 2*len(lx.buf))
		copy(nb, lx.buf[:lx.end])
		lx.buf = nb
	}
	for {
		n, err := lx.r.Read(lx.buf[lx.end:])
		lx.end += n
		if err != nil {
			lx.rerr = err
			return k, n > 0
		}
		if n > 0 {
			return k, true
		}
	}
}

// readErr is the error for input that ended where more was needed.
func (lx *lexer) readErr() error {
	if lx.rerr == nil || lx.rerr == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return &errBodyRead{err: lx.rerr}
}

// peek skips white space and returns the next byte without consuming it.
func (lx *lexer) peek() (byte, error) {
	for {
		for lx.pos < lx.end {
			c := lx.buf[lx.pos]
			if c != ' ' && c != '\n' && c != '\r' && c != '\t' {
				return c, nil
			}
			lx.pos++
		}
		if _, ok := lx.fill(-1); !ok {
			return 0, lx.readErr()
		}
	}
}

// atEOF skips white space and reports whether the input is exhausted.
func (lx *lexer) atEOF() (bool, error) {
	_, err := lx.peek()
	if err == io.ErrUnexpectedEOF {
		return true, nil
	}
	return false, err
}

// expect consumes the byte c (after white space).
func (lx *lexer) expect(c byte) error {
	got, err := lx.peek()
	if err != nil {
		return err
	}
	if got != c {
		return lx.syntax("expected %q, found %q", c, got)
	}
	lx.pos++
	return nil
}

// next consumes either a ',' (returning true) or the closing byte (false).
func (lx *lexer) next(closing byte) (bool, error) {
	c, err := lx.peek()
	if err != nil {
		return false, err
	}
	lx.pos++
	switch c {
	case ',':
		return true, nil
	case closing:
		return false, nil
	}
	return false, lx.syntax("expected ',' or %q, found %q", closing, c)
}

// literal consumes the keyword word (true, false, null).
func (lx *lexer) literal(word string) error {
	for lx.end-lx.pos < len(word) {
		if _, ok := lx.fill(-1); !ok {
			return lx.readErr()
		}
	}
	if string(lx.buf[lx.pos:lx.pos+len(word)]) != word {
		return lx.syntax("invalid literal")
	}
	lx.pos += len(word)
	return nil
}

// str reads a string (the current byte must be '"') and returns its
// unescaped bytes.
func (lx *lexer) str() ([]byte, error) {
	lx.pos++ // opening quote
	start := lx.pos
	// Fast path: no escapes, all in the buffer.
	for {
		for i := lx.pos; i < lx.end; i++ {
			c := lx.buf[i]
			if c == '"' {
				s := lx.buf[start:i]
				lx.pos = i + 1
				return lx.validUTF8(s), nil
			}
			if c == '\\' || c < 0x20 {
				lx.pos = i
				return lx.strSlow(start)
			}
		}
		lx.pos = lx.end
		shift, ok := lx.fill(start)
		start -= shift
		if !ok {
			return nil, lx.readErr()
		}
	}
}

// strSlow decodes a string with escapes; buf[start:pos] is its plain
// prefix.
func (lx *lexer) strSlow(start int) ([]byte, error) {
	out := append(lx.scratch[:0], lx.buf[start:lx.pos]...)
	for {
		if lx.pos >= lx.end {
			if _, ok := lx.fill(-1); !ok {
				return nil, lx.readErr()
			}
			continue
		}
		c := lx.buf[lx.pos]
		switch {
		case c == '"':
			lx.pos++
			lx.scratch = out
			return lx.validUTF8(out), nil
		case c < 0x20:
			return nil, lx.syntax("control character in string")
		case c != '\\':
			out = append(out, c)
			lx.pos++
			continue
		}
		// Escape: need at least 2 bytes, 6 for \u.
		for lx.end-lx.pos < 2 {
			if _, ok := lx.fill(-1); !ok {
				return nil, lx.readErr()
			}
		}
		e := lx.buf[lx.pos+1]
		switch e {
		case '"', '\\', '/':
			out = append(out, e)
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'u':
			r, err := lx.hex4(lx.pos + 2)
			if err != nil {
				return nil, err
			}
			lx.pos += 6
			if utf16.IsSurrogate(r) {
				// A low surrogate must follow as \uXXXX.
				for lx.end-lx.pos < 6 {
					if _, ok := lx.fill(-1); !ok {
						break
					}
				}
				if lx.end-lx.pos >= 6 && lx.buf[lx.pos] == '\\' && lx.buf[lx.pos+1] == 'u' {
					if r2, err := lx.hex4(lx.pos + 2); err == nil {
						if dec := utf16.DecodeRune(r, r2); dec != utf8.RuneError {
							lx.pos += 6
							out = utf8.AppendRune(out, dec)
							continue
						}
					}
				}
				r = utf8.RuneError
			}
			out = utf8.AppendRune(out, r)
			continue
		default:
			return nil, lx.syntax("invalid escape \\%c", e)
		}
		lx.pos += 2
	}
}

// hex4 decodes four hex digits at buf[i:], filling as needed.
func (lx *lexer) hex4(i int) (rune, error) {
	for lx.end-i < 4 {
		shift, ok := lx.fill(-1)
		i -= shift
		if !ok {
			return 0, lx.readErr()
		}
	}
	var r rune
	for _, c := range lx.buf[i : i+4] {
		v, ok := unhex(c)
		if !ok {
			return 0, lx.syntax("invalid \\u escape")
		}
		r = r<<4 | rune(v)
	}
	return r, nil
}

// validUTF8 replaces invalid UTF-8 like encoding/json does (each bad byte
// becomes U+FFFD), so Arrow strings are always valid.
func (lx *lexer) validUTF8(s []byte) []byte {
	if utf8.Valid(s) {
		return s
	}
	var out []byte
	for len(s) > 0 {
		r, size := utf8.DecodeRune(s)
		if r == utf8.RuneError && size == 1 {
			out = append(out, "\uFFFD"...)
		} else {
			out = append(out, s[:size]...)
		}
		s = s[size:]
	}
	return out
}

// number reads a JSON number and returns its text.
func (lx *lexer) number() ([]byte, error) {
	start := lx.pos
	for {
		i := lx.pos
		for i < lx.end && isNumberByte(lx.buf[i]) {
			i++
		}
		if i < lx.end || lx.rerr != nil {
			lx.pos = i
			b := lx.buf[start:i]
			if !validNumber(b) {
				return nil, lx.syntax("invalid number %q", b)
			}
			return b, nil
		}
		lx.pos = i
		shift, _ := lx.fill(start)
		start -= shift
	}
}

func isNumberByte(c byte) bool {
	return c >= '0' && c <= '9' || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E'
}

// validNumber checks the JSON number grammar:
// -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func validNumber(b []byte) bool {
	i := 0
	if i < len(b) && b[i] == '-' {
		i++
	}
	if i >= len(b) {
		return false
	}
	if b[i] == '0' {
		i++
	} else if b[i] >= '1' && b[i] <= '9' {
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
	} else {
		return false
	}
	if i < len(b) && b[i] == '.' {
		i++
		j := i
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
		if i == j {
			return false
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		j := i
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
		if i == j {
			return false
		}
	}
	return i == len(b)
}

// skip consumes one complete value, checking its grammar.
func (lx *lexer) skip(depth int) error {
	if depth > maxDepth {
		return lx.syntax("exceeded max depth")
	}
	c, err := lx.peek()
	if err != nil {
		return err
	}
	switch {
	case c == '"':
		_, err := lx.str()
		return err
	case c == '-' || c >= '0' && c <= '9':
		_, err := lx.number()
		return err
	case c == 't':
		return lx.literal("true")
	case c == 'f':
		return lx.literal("false")
	case c == 'n':
		return lx.literal("null")
	case c == '[':
		lx.pos++
		if c, err := lx.peek(); err != nil {
			return err
		} else if c == ']' {
			lx.pos++
			return nil
		}
		for {
			if err := lx.skip(depth + 1); err != nil {
				return err
			}
			more, err := lx.next(']')
			if err != nil || !more {
				return err
			}
		}
	case c == '{':
		lx.pos++
		if c, err := lx.peek(); err != nil {
			return err
		} else if c == '}' {
			lx.pos++
			return nil
		}
		for {
			if c, err := lx.peek(); err != nil {
				return err
			} else if c != '"' {
				return lx.syntax("expected an object key")
			}
			if _, err := lx.str(); err != nil {
				return err
			}
			if err := lx.expect(':'); err != nil {
				return err
			}
			if err := lx.skip(depth + 1); err != nil {
				return err
			}
			more, err := lx.next('}')
			if err != nil || !more {
				return err
			}
		}
	}
	return lx.syntax("unexpected %q", c)
}

// raw consumes one value and returns its JSON text exactly as sent
// (without surrounding white space).
func (lx *lexer) raw() ([]byte, error) {
	if _, err := lx.peek(); err != nil {
		return nil, err
	}
	lx.mark = lx.pos
	err := lx.skip(0)
	start := lx.mark
	lx.mark = -1
	if err != nil {
		return nil, err
	}
	return lx.buf[start:lx.pos], nil
}

// token kinds returned by scalar.
type tokKind int

const (
	tokNull tokKind = iota
	tokString
	tokNumber
	tokTrue
	tokFalse
	tokArray  // '[' (not consumed)
	tokObject // '{' (not consumed)
)

// scalar reads a null, string, number or boolean; for '[' and '{' it
// returns tokArray or tokObject without consuming anything.
func (lx *lexer) scalar() (tokKind, []byte, error) {
	c, err := lx.peek()
	if err != nil {
		return 0, nil, err
	}
	switch {
	case c == '"':
		b, err := lx.str()
		return tokString, b, err
	case c == '-' || c >= '0' && c <= '9':
		b, err := lx.number()
		return tokNumber, b, err
	case c == 'n':
		return tokNull, nil, lx.literal("null")
	case c == 't':
		return tokTrue, nil, lx.literal("true")
	case c == 'f':
		return tokFalse, nil, lx.literal("false")
	case c == '[':
		return tokArray, nil, nil
	case c == '{':
		return tokObject, nil, nil
	}
	return 0, nil, lx.syntax("unexpected %q", c)
}

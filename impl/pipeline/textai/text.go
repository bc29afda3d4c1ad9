package textai

import (
	_ "embed"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

//go:embed stopwords.txt
var stopWordsText string

// stopWords is the immutable stop-word set, parsed from stopwords.txt on first use.
var stopWords = sync.OnceValue(func() map[string]struct{} {
	m := make(map[string]struct{}, 512)
	for line := range strings.Lines(stopWordsText) {
		w := strings.TrimSpace(line)
		if w == "" || strings.HasPrefix(w, "#") {
			continue
		}
		m[w] = struct{}{}
	}
	return m
})

// isStopWord reports whether the lower-cased word w is a stop word. The string conversion in a map index does
// not allocate.
func isStopWord(stop map[string]struct{}, w []byte) bool {
	_, ok := stop[string(w)]
	return ok
}

// wordScanner yields the lower-cased words of a text one at a time in a reused buffer, so that the hot path
// (embedding) allocates nothing per word. A word is a maximal run of letters, digits and combining marks;
// an apostrophe between two word characters is dropped ("don't" → "dont"); anything else separates words.
type wordScanner struct {
	text string
	pos  int
	buf  []byte
	// broken reports that punctuation or a line break stands between the previous word and the current one,
	// so that bigrams do not straddle clause or list-item boundaries.
	broken bool
	// sep is the separator run before the current word.
	sep string
}

func (s *wordScanner) reset(text string) {
	s.text, s.pos, s.buf, s.broken, s.sep = text, 0, s.buf[:0], false, ""
}

// next returns the next word, valid until the following call, and false at the end of the text.
func (s *wordScanner) next() ([]byte, bool) {
	s.buf = s.buf[:0]
	s.broken = false
	text, i := s.text, s.pos
	for i < len(text) {
		c := text[i]
		if c < utf8.RuneSelf {
			if isASCIIWordByte(c) {
				break
			}
			if c != ' ' && c != '\t' && c != '\r' {
				s.broken = true
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(text[i:])
		if isWordRune(r) {
			break
		}
		if !unicode.IsSpace(r) {
			s.broken = true
		}
		i += size
	}
	s.sep = text[s.pos:i]
	if i >= len(text) {
		s.pos = i
		return nil, false
	}
	for i < len(text) {
		c := text[i]
		if c < utf8.RuneSelf {
			if isASCIIWordByte(c) {
				if 'A' <= c && c <= 'Z' {
					c += 'a' - 'A'
				}
				s.buf = append(s.buf, c)
				i++
				continue
			}
			if c == '\'' && startsWithWordRune(text[i+1:]) {
				i++
				continue
			}
			break
		}
		r, size := utf8.DecodeRuneInString(text[i:])
		if isWordRune(r) {
			s.buf = utf8.AppendRune(s.buf, unicode.ToLower(r))
			i += size
			continue
		}
		if r == '’' && startsWithWordRune(text[i+size:]) {
			i += size
			continue
		}
		break
	}
	s.pos = i
	return s.buf, true
}

func isASCIIWordByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}

func isWordRune(r rune) bool {
	if r < utf8.RuneSelf {
		return isASCIIWordByte(byte(r))
	}
	return unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.Mn, r)
}

func startsWithWordRune(s string) bool {
	if s == "" {
		return false
	}
	r, _ := utf8.DecodeRuneInString(s)
	return isWordRune(r)
}

// hasLetter reports whether w contains a letter, so that numbers ("2024", "3") are not used as terms.
func hasLetter(w []byte) bool {
	for i := 0; i < len(w); {
		c := w[i]
		if c < utf8.RuneSelf {
			if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' {
				return true
			}
			i++
			continue
		}
		r, size := utf8.DecodeRune(w[i:])
		if unicode.IsLetter(r) {
			return true
		}
		i += size
	}
	return false
}

// isTermWord reports whether a lower-cased word is worth indexing: not a stop word, at least two characters
// and not only digits.
func isTermWord(stop map[string]struct{}, w []byte) bool {
	return len(w) >= 2 && hasLetter(w) && !isStopWord(stop, w)
}

// stem reduces an ASCII lower-case word to a crude stem in place and returns it; other words are returned as
// they are. It is a light version of Porter's steps 1a–1c and 5a (plurals, -ed, -ing, -y, final -e) plus the
// -ment and -ness suffixes: "berries"/"berry" → "berri", "baking"/"baked"/"bake" → "bak",
// "deployments"/"deploying" → "deploy", "planned" → "plan". Character n-grams catch what it misses.
func stem(w []byte) []byte {
	if len(w) < 4 {
		return w
	}
	for _, c := range w {
		if c < 'a' || c > 'z' {
			return w
		}
	}
	// Step 1a: plurals.
	switch {
	case hasSuffix(w, "sses"):
		w = w[:len(w)-2]
	case hasSuffix(w, "ies"):
		w = append(w[:len(w)-3], 'i')
	case hasSuffix(w, "ss"), hasSuffix(w, "us"), hasSuffix(w, "is"):
	case hasSuffix(w, "s"):
		w = w[:len(w)-1]
	}
	// Step 1b: -ed and -ing when what remains looks like a word.
	switch {
	case hasSuffix(w, "eed"):
	case hasSuffix(w, "ed") && len(w) >= 5 && hasVowel(w[:len(w)-2]):
		w = undouble(w[:len(w)-2])
	case hasSuffix(w, "ing") && len(w) >= 6 && hasVowel(w[:len(w)-3]):
		w = undouble(w[:len(w)-3])
	}
	// Common derivational suffixes that keep the meaning.
	switch {
	case hasSuffix(w, "ment") && len(w) >= 8:
		w = w[:len(w)-4]
	case hasSuffix(w, "ness") && len(w) >= 8:
		w = w[:len(w)-4]
	}
	// Step 1c: y → i after a consonant, so "berry" and "berries" meet.
	if n := len(w); n >= 3 && w[n-1] == 'y' && !isVowel(w[n-2]) {
		w[n-1] = 'i'
	}
	// Step 5a: final e, so "bake" meets "baked" and "baking".
	if n := len(w); n >= 4 && w[n-1] == 'e' {
		w = w[:n-1]
	}
	return w
}

func hasSuffix(w []byte, suffix string) bool {
	return len(w) >= len(suffix) && string(w[len(w)-len(suffix):]) == suffix
}

func isVowel(c byte) bool {
	return c == 'a' || c == 'e' || c == 'i' || c == 'o' || c == 'u'
}

func hasVowel(w []byte) bool {
	for _, c := range w {
		if isVowel(c) || c == 'y' {
			return true
		}
	}
	return false
}

// undouble drops one of a final double consonant other than l, s and z ("plann" → "plan").
func undouble(w []byte) []byte {
	n := len(w)
	if n >= 2 && w[n-1] == w[n-2] && !isVowel(w[n-1]) {
		switch w[n-1] {
		case 'l', 's', 'z':
		default:
			return w[:n-1]
		}
	}
	return w
}

// Terms returns the distinct index terms of a text, in order of first appearance: lower-cased words less stop
// words, numbers and one-character words, stemmed as the local tagger and embedder stem them. They are the
// terms DocFreqs is asked about, so a store that keeps document frequencies should count these.
func Terms(text string) []string {
	stop := stopWords()
	var sc wordScanner
	sc.reset(text)
	var out []string
	seen := make(map[string]struct{})
	for {
		w, ok := sc.next()
		if !ok {
			return out
		}
		if !isTermWord(stop, w) {
			continue
		}
		st := stem(w)
		if _, dup := seen[string(st)]; dup {
			continue
		}
		s := string(st)
		seen[s] = struct{}{}
		out = append(out, s)
	}
}

package textai

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// sentence is one sentence of a text, whitespace collapsed, list markers removed.
type sentence struct {
	text string
	// pseudo marks a chunk cut out of a run of words without sentence punctuation (a raw transcript).
	pseudo bool
	// last marks the last chunk of its run, which needs no ellipsis after it.
	last bool
}

// abbreviations end with a period that does not end a sentence. Lower case, without the final period.
var abbreviations = map[string]struct{}{
	"mr": {}, "mrs": {}, "ms": {}, "dr": {}, "prof": {}, "sr": {}, "jr": {}, "st": {}, "mt": {}, "ft": {},
	"vs": {}, "no": {}, "nos": {}, "approx": {}, "appt": {}, "dept": {}, "est": {}, "fig": {}, "inc": {},
	"ltd": {}, "co": {}, "corp": {}, "min": {}, "max": {}, "tbsp": {}, "tsp": {}, "oz": {}, "lb": {}, "lbs": {},
	"e.g": {}, "i.e": {}, "cf": {}, "al": {}, "jan": {}, "feb": {}, "mar": {}, "apr": {}, "jun": {}, "jul": {},
	"aug": {}, "sep": {}, "sept": {}, "oct": {}, "nov": {}, "dec": {}, "u.s": {}, "u.k": {}, "a.m": {}, "p.m": {},
}

// Limits of the pseudo-sentences cut from unpunctuated text, in words.
const (
	maxSentenceWords = 40 // a longer "sentence" is cut into chunks
	minChunkWords    = 12 // a chunk ends at a discourse marker once it has this many words
	maxChunkWords    = 25 // and in any case at this many
)

// chunkBreakers are words before which a transcript chunk may end: a spoken sentence often starts with them.
var chunkBreakers = map[string]struct{}{
	"so": {}, "and": {}, "but": {}, "then": {}, "now": {}, "okay": {}, "ok": {}, "because": {}, "also": {},
	"anyway": {}, "well": {}, "i": {}, "we": {}, "next": {}, "first": {}, "finally": {}, "after": {},
}

// splitSentences splits text into sentences. A sentence ends at '.', '!', '?' or '…' (with any closing quotes
// or brackets) followed by white space, unless the period belongs to an abbreviation, an initial, a list
// number or is followed by a lower-case word; at a blank line; and at a line break unless the next line starts
// in lower case (hard-wrapped text). A sentence longer than maxSentenceWords, as in a transcript without any
// punctuation, is cut into pseudo-sentences at likely spoken boundaries.
func splitSentences(text string) []sentence {
	var out []sentence
	start := 0
	emit := func(end int) {
		if s := cleanSentence(text[start:end]); s != "" {
			out = appendChunked(out, s)
		}
		start = end
	}
	for i := 0; i < len(text); {
		r, size := utf8.DecodeRuneInString(text[i:])
		switch {
		case r == '\n':
			j := i + 1
			blank := false
			for j < len(text) {
				c := text[j]
				if c == '\n' {
					blank = true
				} else if c != ' ' && c != '\t' && c != '\r' {
					break
				}
				j++
			}
			if blank || j == len(text) || !startsLower(text[j:]) {
				emit(i)
			}
			i = j
			continue
		case r == '.' || r == '!' || r == '?' || r == '…':
			j := i + size
			for j < len(text) {
				c, n := utf8.DecodeRuneInString(text[j:])
				if !strings.ContainsRune(".!?…\"'”’)]", c) {
					break
				}
				j += n
			}
			if j < len(text) {
				c, _ := utf8.DecodeRuneInString(text[j:])
				if !unicode.IsSpace(c) {
					i = j
					continue
				}
			}
			if r == '.' && j == i+1 && !periodEnds(text[start:i], text[j:]) {
				i = j
				continue
			}
			emit(j)
			i = j
			continue
		}
		i += size
	}
	emit(len(text))
	return out
}

// periodEnds decides whether a single period ends a sentence, given the text of the sentence before it and
// the text after it.
func periodEnds(before, after string) bool {
	after = strings.TrimLeft(after, " \t\r")
	if after == "" || after[0] == '\n' {
		return true
	}
	if startsLower(after) {
		return false // "approx. ten", "e.g. basil"
	}
	k := strings.LastIndexFunc(before, unicode.IsSpace)
	word := before[k+1:]
	word = strings.TrimLeft(word, "(\"'“‘[")
	if strings.TrimSpace(before) == word && isListNumber(word) {
		return false // "1. Preheat the oven"
	}
	if utf8.RuneCountInString(word) == 1 && unicode.IsUpper([]rune(word)[0]) {
		return false // an initial: "J. Smith"
	}
	_, abbr := abbreviations[strings.ToLower(word)]
	return !abbr
}

func isListNumber(w string) bool {
	if w == "" || len(w) > 3 {
		return false
	}
	for _, c := range w {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

func startsLower(s string) bool {
	r, _ := utf8.DecodeRuneInString(s)
	return unicode.IsLower(r)
}

// cleanSentence collapses white space and strips list markers ("- ", "* ", "• ", "1. ", "2) ") and headings'
// "#" marks. It returns "" when nothing with a letter or digit is left.
func cleanSentence(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	for {
		t := strings.TrimLeft(s, "-*•·#>–— ")
		if i := strings.IndexAny(t, ".)"); i > 0 && i <= 3 && isListNumber(t[:i]) && i+1 < len(t) && t[i+1] == ' ' {
			t = t[i+2:]
		}
		if t == s {
			break
		}
		s = t
	}
	if strings.IndexFunc(s, func(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }) < 0 {
		return ""
	}
	return s
}

// appendChunked appends s, cut into pseudo-sentences when it has more than maxSentenceWords words.
func appendChunked(out []sentence, s string) []sentence {
	words := strings.Fields(s)
	if len(words) <= maxSentenceWords {
		return append(out, sentence{text: s})
	}
	for len(words) > 0 {
		n := len(words)
		if n > maxChunkWords {
			n = maxChunkWords
			for k := minChunkWords; k < maxChunkWords; k++ {
				w := strings.ToLower(strings.Trim(words[k], ",;:"))
				if _, ok := chunkBreakers[w]; ok || strings.HasSuffix(words[k-1], ",") || strings.HasSuffix(words[k-1], ";") {
					n = k
					break
				}
			}
			// Do not leave a tail too short to read on its own.
			if len(words)-n < minChunkWords/2 {
				n = len(words)
			}
		}
		out = append(out, sentence{text: strings.Join(words[:n], " "), pseudo: true})
		words = words[n:]
	}
	out[len(out)-1].last = true
	return out
}

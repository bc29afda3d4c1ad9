package textai

import (
	"bytes"
	"compress/gzip"
	_ "embed"
	"io"
	"strconv"
	"strings"
	"sync"
)

//go:generate go run ./internal/wordnetgen -wordnet /usr/share/wordnet -out concepts.txt.gz

// conceptsGz is the concept lexicon of the local embedder, derived from WordNet 3.0 by internal/wordnetgen
// (see there for what it holds and how it is made). Regenerate it with go generate after installing
// Debian's wordnet-base; the output is deterministic.
//
//go:embed concepts.txt.gz
var conceptsGz []byte

// lexicon maps lemmas to their word weight and concepts, and irregular forms to lemmas. It is built once and
// never modified. For memory, an entry is packed into a uint64 (offset into concepts << 16 | concept count
// << 8 | word weight in percent) and a concept into a uint32 (id << 8 | weight in percent); keys are slices
// of one string. About 6 MiB in all for 77,000 lemmas.
type lexicon struct {
	entries  map[string]uint64
	aliases  map[string]string
	concepts []uint32
}

// lexEntry is what the lexicon knows of a lemma.
type lexEntry struct {
	// weight is the lemma's IDF in SemCor relative to an unseen word's, in 0.2..1: frequent words say less.
	weight float32
	// concepts are packed as in lexicon; use conceptID and conceptWeight.
	concepts []uint32
}

func conceptID(c uint32) uint32        { return c >> 8 }
func conceptWeightOf(c uint32) float32 { return float32(c&0xff) / 100 }

// theLexicon is the immutable lexicon, parsed on first use (tens of milliseconds).
var theLexicon = sync.OnceValue(func() *lexicon {
	lx, err := parseLexicon(conceptsGz)
	if err != nil {
		panic("textai: embedded concept lexicon: " + err.Error()) // the file is part of the build
	}
	return lx
})

func parseLexicon(gz []byte) (*lexicon, error) {
	zr, err := gzip.NewReader(bytes.NewReader(gz))
	if err != nil {
		return nil, err
	}
	raw, err := io.ReadAll(zr)
	if err != nil {
		return nil, err
	}
	text := string(raw)
	lx := &lexicon{
		entries:  make(map[string]uint64, strings.Count(text, "\n")),
		aliases:  make(map[string]string, 4096),
		concepts: make([]uint32, 0, strings.Count(text, ":")),
	}
	// Keys are slices of one string holding only them, so that the parsed text can be freed.
	type pending struct {
		start, end int
		value      uint64
	}
	var arena []byte
	var keys []pending
	for line := range strings.Lines(text) {
		line = strings.TrimSuffix(line, "\n")
		if line == "" || line[0] == '#' {
			continue
		}
		word, rest, _ := strings.Cut(line, "\t")
		if form, ok := strings.CutPrefix(word, "="); ok {
			lx.aliases[form] = rest
			continue
		}
		ww, rest, _ := strings.Cut(rest, "\t")
		weight, err := strconv.ParseUint(ww, 10, 8)
		if err != nil {
			return nil, err
		}
		start := len(lx.concepts)
		for f := range strings.SplitSeq(rest, " ") {
			id, w, _ := strings.Cut(f, ":")
			n, err := strconv.ParseUint(id, 36, 24)
			if err != nil {
				return nil, err
			}
			x, err := strconv.ParseUint(w, 10, 8)
			if err != nil {
				return nil, err
			}
			lx.concepts = append(lx.concepts, uint32(n)<<8|uint32(x))
		}
		keys = append(keys, pending{len(arena), len(arena) + len(word), uint64(start)<<16 | uint64(len(lx.concepts)-start)<<8 | weight})
		arena = append(arena, word...)
	}
	all := string(arena)
	for _, k := range keys {
		lx.entries[all[k.start:k.end]] = k.value
	}
	aliases := make(map[string]string, len(lx.aliases))
	for form, base := range lx.aliases {
		aliases[strings.Clone(form)] = strings.Clone(base)
	}
	lx.aliases = aliases
	return lx, nil
}

// entry unpacks the entry of a lemma.
func (lx *lexicon) entry(lemma []byte) (lexEntry, bool) {
	p, ok := lx.entries[string(lemma)]
	if !ok {
		return lexEntry{}, false
	}
	start, n := p>>16, (p>>8)&0xff
	return lexEntry{weight: float32(p&0xff) / 100, concepts: lx.concepts[start : start+n : start+n]}, true
}

// morphRules are WordNet's detachment rules ("morphy"): suffix → replacement, nouns, verbs, then adjectives.
var morphRules = [...][2]string{
	{"s", ""}, {"ses", "s"}, {"xes", "x"}, {"zes", "z"}, {"ches", "ch"}, {"shes", "sh"}, {"men", "man"},
	{"ies", "y"}, {"es", "e"}, {"es", ""}, {"ed", "e"}, {"ed", ""}, {"ing", "e"}, {"ing", ""},
	{"er", ""}, {"est", ""}, {"er", "e"}, {"est", "e"},
}

// lookup returns the entry of a lower-case word: its own, an irregular form's lemma's, or that of the first
// base form WordNet's detachment rules find (also undoubling a final consonant: "planned" → "plan"). buf is
// scratch space, returned for reuse.
func (lx *lexicon) lookup(w []byte, buf []byte) (lexEntry, bool, []byte) {
	if e, ok := lx.entry(w); ok {
		return e, true, buf
	}
	if base, ok := lx.aliases[string(w)]; ok {
		buf = append(buf[:0], base...)
		e, ok := lx.entry(buf)
		return e, ok, buf
	}
	for _, r := range morphRules {
		if len(w) <= len(r[0])+1 || !hasSuffix(w, r[0]) {
			continue
		}
		buf = append(append(buf[:0], w[:len(w)-len(r[0])]...), r[1]...)
		if e, ok := lx.entry(buf); ok {
			return e, true, buf
		}
		if r[1] == "" && (r[0] == "ed" || r[0] == "ing") {
			if n := len(buf); n >= 2 && buf[n-1] == buf[n-2] {
				if e, ok := lx.entry(buf[:n-1]); ok {
					return e, true, buf
				}
			}
		}
	}
	return lexEntry{}, false, buf
}

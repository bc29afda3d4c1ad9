// Command wordnetgen derives the concept lexicon of the local embedder (concepts.txt.gz in package textai)
// from the WordNet 3.0 database, as Debian's wordnet-base package installs it under /usr/share/wordnet.
//
// For every single-word lemma it writes a word weight, the lemma's IDF in the sense-tagged SemCor corpus
// (cntlist.rev) relative to an unseen word's, floored at 0.2, and up to 16 concepts with weights in 0..1:
// the synsets of its three most frequent senses per part of speech, their hypernyms up to four levels
// (decaying with distance, and only while they are specific enough: -ln of the share of the hierarchy below
// them at least 4), the topic domains WordNet files them under ("simmer" → cooking), their lexicographer
// file (noun.food, noun.plant, noun.possession, …) and, for adjectives and adverbs, the concepts of the noun
// or adjective they pertain to. Words with a concept in common are then close in the embedding even when
// they share no letters ("lasagne" and "curry" are both dishes; "mortgage" and "loan" both debts).
// Irregular forms from the .exc files are written as aliases.
//
// The defaults of the flags are the parameters of the committed lexicon; changing any of them changes the
// local embedder's vectors, so bump its version with it. Other settings were tried on the relevance corpus
// and scored worse: weighting concepts by Resnik's information content, adding the words of the definitions
// (glosses), and restricting lexicographer files to subject ones. Run it with go generate in package textai
// after installing Debian's wordnet-base; the output is deterministic.
package main

import (
	"bufio"
	"cmp"
	"compress/gzip"
	"flag"
	"fmt"
	"log"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// Parameters of the derivation. They are written into the output's header.
var (
	maxSenses   = flag.Int("senses", 3, "senses of a lemma considered, per part of speech, most frequent first")
	senseDecay  = flag.Float64("sense-decay", 0.5, "weight of sense r is decay^r")
	maxDepth    = flag.Int("depth", 4, "hypernym levels followed")
	depthDecay  = flag.Float64("depth-decay", 0.7, "weight of an ancestor d levels up is decay^d")
	minIC       = flag.Float64("min-ic", 4.0, "an ancestor must have -ln(share of synsets below it) ≥ this")
	domainW     = flag.Float64("domain", 0.9, "weight of a topic domain")
	relatedW    = flag.Float64("related", 0.7, "weight of an adjective's pertainym or head")
	lexnameW    = flag.Float64("lexname", 0.5, "weight of the lexicographer file (noun.food, noun.plant, …)")
	maxConcepts = flag.Int("concepts", 16, "concepts kept per lemma, heaviest first")
	minWeight   = flag.Float64("min-weight", 0.12, "lighter concepts are dropped")
)

type pointer struct {
	sym    string
	pos    byte
	offset int
}

type synset struct {
	pos byte
	lex int // lexicographer file number

	ptrs  []pointer
	id    int // compact id, assigned on output
	below int // synsets in the hypernym subtree, itself included
}

type key struct {
	pos    byte
	offset int
}

func main() {
	dir := flag.String("wordnet", "/usr/share/wordnet", "WordNet 3.0 database directory")
	out := flag.String("out", "concepts.txt.gz", "output file")
	flag.Parse()
	if err := run(*dir, *out); err != nil {
		log.Fatal(err)
	}
}

func run(dir, out string) error {
	synsets := map[key]*synset{}
	for _, f := range []struct {
		name string
		pos  byte
	}{{"data.noun", 'n'}, {"data.verb", 'v'}, {"data.adj", 'a'}, {"data.adv", 'r'}} {
		if err := readData(filepath.Join(dir, f.name), f.pos, synsets); err != nil {
			return err
		}
	}
	// SemCor sense-tag counts per lemma (cntlist.rev: "lemma%type:lexfile:lexid:head:headid sense count"),
	// for the word weights.
	lemmaCount := map[string]float64{}
	var tagged float64
	if err := eachLine(filepath.Join(dir, "cntlist.rev"), func(line string) error {
		f := strings.Fields(line)
		n, err := strconv.ParseFloat(f[2], 64)
		if err != nil {
			return err
		}
		l, _, _ := strings.Cut(f[0], "%")
		lemmaCount[l] += n
		tagged += n
		return nil
	}); err != nil {
		return err
	}
	// Subtree sizes per part of speech (nouns and verbs have hierarchies).
	total := map[byte]int{}
	for k, s := range synsets {
		total[normPOS(k.pos)]++
		for a := range ancestors(synsets, s, 64) {
			synsets[a].below++
		}
		s.below++
	}
	for lex := range 45 {
		synsets[key{'L', lex}] = &synset{pos: 'L'}
	}
	ic := func(k key) float64 {
		s := synsets[k]
		return -math.Log(float64(s.below) / float64(total[normPOS(k.pos)]))
	}

	// Concepts of one synset.
	conceptsOf := func(k key) map[key]float64 {
		c := map[key]float64{}
		put := func(k key, w float64) {
			if w > c[k] {
				c[k] = w
			}
		}
		var visit func(k key, w float64, related bool)
		visit = func(k key, w float64, related bool) {
			s := synsets[k]
			if s == nil {
				return
			}
			put(k, w)
			if *lexnameW > 0 {
				put(key{'L', s.lex}, w**lexnameW)
			}
			frontier := []key{k}
			for d := 1; d <= *maxDepth && len(frontier) > 0; d++ {
				var next []key
				for _, f := range frontier {
					for _, p := range synsets[f].ptrs {
						if p.sym == "@" || p.sym == "@i" {
							a := key{p.pos, p.offset}
							if ic(a) < *minIC {
								continue
							}
							put(a, w*math.Pow(*depthDecay, float64(d)))
							next = append(next, a)
						}
					}
				}
				frontier = next
			}
			// Topic domains of the synset and of its direct hypernyms.
			for _, f := range append([]key{k}, hypernyms(s)...) {
				for _, p := range synsets[f].ptrs {
					if p.sym == ";c" {
						put(key{p.pos, p.offset}, w**domainW)
					}
				}
			}
			if related {
				return
			}
			for _, p := range s.ptrs {
				switch {
				case s.pos != 'n' && s.pos != 'v' && (p.sym == "\\" || p.sym == "&"):
					visit(key{p.pos, p.offset}, w**relatedW, true)
				}
			}
		}
		visit(k, 1, false)
		return c
	}

	lemmas := map[string]map[key]float64{}
	for _, f := range []string{"index.noun", "index.verb", "index.adj", "index.adv"} {
		if err := readIndex(filepath.Join(dir, f), func(lemma string, pos byte, offsets []int) {
			if !isPlainWord(lemma) {
				return
			}
			m := lemmas[lemma]
			if m == nil {
				m = map[key]float64{}
				lemmas[lemma] = m
			}
			for r, off := range offsets[:min(len(offsets), *maxSenses)] {
				w := math.Pow(*senseDecay, float64(r))
				for c, cw := range conceptsOf(key{pos, off}) {
					if v := w * cw; v > m[c] {
						m[c] = v
					}
				}
			}
		}); err != nil {
			return err
		}
	}

	// Keep the heaviest concepts, then number the concepts used, in order of first use over sorted lemmas.
	names := slices.Sorted(mapsKeys(lemmas))
	type cw struct {
		k key
		w float64
	}
	kept := map[string][]cw{}
	nextID := 0
	for _, l := range names {
		var list []cw
		for k, w := range lemmas[l] {
			if w >= *minWeight {
				list = append(list, cw{k, w})
			}
		}
		slices.SortFunc(list, func(a, b cw) int {
			if c := cmp.Compare(b.w, a.w); c != 0 {
				return c
			}
			if c := cmp.Compare(a.k.pos, b.k.pos); c != 0 {
				return c
			}
			return cmp.Compare(a.k.offset, b.k.offset)
		})
		list = list[:min(len(list), *maxConcepts)]
		for _, c := range list {
			s := synsets[c.k]
			if s.id == 0 {
				nextID++
				s.id = nextID
			}
		}
		kept[l] = list
	}

	f, err := os.Create(out)
	if err != nil {
		return err
	}
	zw, _ := gzip.NewWriterLevel(f, gzip.BestCompression)
	w := bufio.NewWriter(zw)
	fmt.Fprintf(w, "# Concept lexicon of the local embedder, derived by internal/wordnetgen from WordNet 3.0.\n")
	fmt.Fprintf(w, "# WordNet 3.0 Copyright 2006 by Princeton University. All rights reserved. Used under the WordNet 3.0\n")
	fmt.Fprintf(w, "# license, which permits use, copying, modification and distribution with this notice.\n")
	fmt.Fprintf(w, "# Parameters: senses=%d sense-decay=%g depth=%d depth-decay=%g min-ic=%g domain=%g related=%g lexname=%g concepts=%d min-weight=%g\n",
		*maxSenses, *senseDecay, *maxDepth, *depthDecay, *minIC, *domainW, *relatedW, *lexnameW, *maxConcepts, *minWeight)
	fmt.Fprintf(w, "# Format: lemma TAB word-weight(20-100) TAB id:weight(0-99) ...; or =form TAB lemma for irregular forms. Ids are base 36.\n")
	for _, l := range names {
		list := kept[l]
		if len(list) == 0 {
			continue
		}
		w.WriteString(l)
		fmt.Fprintf(w, "\t%d", wordWeight(lemmaCount[l], tagged))
		for i, c := range list {
			if i == 0 {
				w.WriteByte('\t')
			} else {
				w.WriteByte(' ')
			}
			fmt.Fprintf(w, "%s:%d", strconv.FormatInt(int64(synsets[c.k].id), 36), min(99, int(math.Round(c.w*100))))
		}
		w.WriteByte('\n')
	}
	aliases := map[string]string{}
	for _, f := range []string{"noun.exc", "verb.exc", "adj.exc"} {
		if err := readExc(filepath.Join(dir, f), func(form, base string) {
			if _, ok := aliases[form]; ok || !isPlainWord(form) || len(kept[base]) == 0 {
				return
			}
			if _, isLemma := kept[form]; isLemma {
				return
			}
			aliases[form] = base
		}); err != nil {
			return err
		}
	}
	for _, form := range slices.Sorted(mapsKeys(aliases)) {
		fmt.Fprintf(w, "=%s\t%s\n", form, aliases[form])
	}
	if err := w.Flush(); err != nil {
		return err
	}
	if err := zw.Close(); err != nil {
		return err
	}
	return f.Close()
}

// wordWeight is the IDF of a lemma in SemCor relative to an unseen word's, in percent, at least 20:
// ln((N+1)/(n+1)) / ln(N+1).
func wordWeight(n, total float64) int {
	w := math.Log((total+1)/(n+1)) / math.Log(total+1)
	return int(math.Round(100 * max(0.2, min(1, w))))
}

func mapsKeys[V any](m map[string]V) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

func normPOS(p byte) byte {
	if p == 's' {
		return 'a'
	}
	return p
}

func hypernyms(s *synset) []key {
	var out []key
	for _, p := range s.ptrs {
		if p.sym == "@" || p.sym == "@i" {
			out = append(out, key{p.pos, p.offset})
		}
	}
	return out
}

// ancestors returns the transitive hypernyms of s.
func ancestors(synsets map[key]*synset, s *synset, limit int) map[key]struct{} {
	seen := map[key]struct{}{}
	frontier := hypernyms(s)
	for d := 0; d < limit && len(frontier) > 0; d++ {
		var next []key
		for _, k := range frontier {
			if _, ok := seen[k]; ok {
				continue
			}
			seen[k] = struct{}{}
			if a := synsets[k]; a != nil {
				next = append(next, hypernyms(a)...)
			}
		}
		frontier = next
	}
	return seen
}

func isPlainWord(s string) bool {
	if len(s) < 2 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < 'a' || s[i] > 'z' {
			return false
		}
	}
	return true
}

func posOf(s string) byte {
	if s == "s" {
		return 'a'
	}
	return s[0]
}

func readData(path string, pos byte, synsets map[key]*synset) error {
	return eachLine(path, func(line string) error {
		if strings.HasPrefix(line, "  ") {
			return nil // license header
		}
		if i := strings.Index(line, " | "); i >= 0 {
			line = line[:i] // the gloss
		}
		f := strings.Fields(line)
		off, err := strconv.Atoi(f[0])
		if err != nil {
			return fmt.Errorf("%s: %q: %w", path, line, err)
		}
		wcnt, err := strconv.ParseInt(f[3], 16, 32)
		if err != nil {
			return err
		}
		i := 4 + 2*int(wcnt)
		pcnt, err := strconv.Atoi(f[i])
		if err != nil {
			return err
		}
		lex, err := strconv.Atoi(f[1])
		if err != nil {
			return err
		}
		s := &synset{pos: pos, lex: lex}
		for j := range pcnt {
			p := f[i+1+4*j : i+5+4*j]
			o, err := strconv.Atoi(p[1])
			if err != nil {
				return err
			}
			s.ptrs = append(s.ptrs, pointer{sym: p[0], pos: posOf(p[2]), offset: o})
		}
		synsets[key{pos, off}] = s
		return nil
	})
}

func readIndex(path string, fn func(lemma string, pos byte, offsets []int)) error {
	return eachLine(path, func(line string) error {
		if strings.HasPrefix(line, "  ") {
			return nil
		}
		f := strings.Fields(line)
		n, err := strconv.Atoi(f[2])
		if err != nil {
			return err
		}
		offs := make([]int, 0, n)
		for _, s := range f[len(f)-n:] {
			o, err := strconv.Atoi(s)
			if err != nil {
				return err
			}
			offs = append(offs, o)
		}
		fn(f[0], posOf(f[1]), offs)
		return nil
	})
}

func readExc(path string, fn func(form, base string)) error {
	return eachLine(path, func(line string) error {
		f := strings.Fields(line)
		if len(f) >= 2 {
			fn(f[0], f[1])
		}
		return nil
	})
}

func eachLine(path string, fn func(string) error) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		if err := fn(sc.Text()); err != nil {
			return err
		}
	}
	return sc.Err()
}

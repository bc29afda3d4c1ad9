package textai

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// MaxTags is the most tags any engine returns.
const MaxTags = 8

// maxTagChars bounds one tag's length in characters.
const maxTagChars = 40

// Tagger returns keyword tags for a text.
type Tagger interface {
	// Tags returns at most MaxTags lower-case keyword tags for text, most relevant first, without
	// duplicates. corpus, when not nil, gives document frequencies over the user's items so that words
	// common to all of them weigh less; engines that cannot use it ignore it.
	Tags(ctx context.Context, text string, corpus DocFreqs) ([]string, error)
	// Name identifies the engine.
	Name() string
}

// DocFreqs gives document frequencies over the user's corpus.
type DocFreqs interface {
	// DocFreq is the number of documents containing term, an index term as returned by Terms.
	DocFreq(term string) int
	// Docs is the number of documents.
	Docs() int
}

// CorpusStats is an in-memory DocFreqs: the document frequency of each term of the texts added. It is not
// safe for concurrent use while texts are being added.
type CorpusStats struct {
	df   map[string]int
	docs int
}

var _ DocFreqs = (*CorpusStats)(nil)

// NewCorpusStats returns the statistics of texts.
func NewCorpusStats(texts ...string) *CorpusStats {
	c := &CorpusStats{df: make(map[string]int)}
	for _, t := range texts {
		c.Add(t)
	}
	return c
}

// Add counts one more document.
func (c *CorpusStats) Add(text string) {
	c.docs++
	for _, t := range Terms(text) {
		c.df[t]++
	}
}

// DocFreq returns the number of documents added that contain term; 0 for a nil CorpusStats.
func (c *CorpusStats) DocFreq(term string) int {
	if c == nil {
		return 0
	}
	return c.df[term]
}

// Docs returns the number of documents added; 0 for a nil CorpusStats, which then means no corpus.
func (c *CorpusStats) Docs() int {
	if c == nil {
		return 0
	}
	return c.docs
}

// LocalTagger is the default, offline, deterministic tagger: TF-IDF keywords. Tags are single words, because
// tags serve as filters across notes and a phrase rarely recurs in another note.
//
// The candidates are the words of the text less stop words (stopwords.txt), numbers and one-character words,
// grouped by stem so that "tomato" and "tomatoes" count together; a group is shown as its most frequent form
// in the text (the first of equally frequent ones). A candidate's score is (1 + ln tf) × idf, where tf counts
// the group's occurrences and idf = 1 + ln((1 + N) / (1 + df)) when a corpus of N > 0 documents is given
// (df = DocFreq of the stem), 1 otherwise. Words of the first sentence or line score 25% more: notes tend to
// start with their subject. Ties go to the word that appears first. At most MaxTags tags are returned.
type LocalTagger struct {
	max int
}

var _ Tagger = (*LocalTagger)(nil)

// NewLocalTagger returns the local tagger returning at most maxTags tags; maxTags ≤ 0 or above MaxTags means
// MaxTags.
func NewLocalTagger(maxTags int) *LocalTagger {
	if maxTags <= 0 || maxTags > MaxTags {
		maxTags = MaxTags
	}
	return &LocalTagger{max: maxTags}
}

// Name returns "strata-tfidf-v1".
func (t *LocalTagger) Name() string { return "strata-tfidf-v1" }

// Tags returns the keyword tags of text. It fails only when ctx is done.
func (t *LocalTagger) Tags(ctx context.Context, text string, corpus DocFreqs) ([]string, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("textai: tags: %w", err)
	}
	type candidate struct {
		stem  string
		forms map[string]int
		first int // position of the first occurrence, in words
		n     int
		lead  bool
		score float64
	}
	stop := stopWords()
	groups := make(map[string]*candidate)
	var order []*candidate
	var sc wordScanner
	sc.reset(text)
	inLead := true
	var form []byte
	for pos := 0; ; pos++ {
		w, ok := sc.next()
		if !ok {
			break
		}
		if pos > 0 && strings.ContainsAny(sc.sep, "\n.!?…:") {
			inLead = false
		}
		if !isTermWord(stop, w) || utf8.RuneCount(w) > maxTagChars {
			continue
		}
		form = append(form[:0], w...)
		st := stem(w)
		c := groups[string(st)]
		if c == nil {
			c = &candidate{stem: string(st), forms: make(map[string]int, 1), first: pos}
			groups[c.stem] = c
			order = append(order, c)
		}
		c.n++
		c.forms[string(form)]++
		c.lead = c.lead || inLead
	}
	docs := 0
	if corpus != nil {
		docs = corpus.Docs()
	}
	for _, c := range order {
		idf := 1.0
		if docs > 0 {
			df := min(max(corpus.DocFreq(c.stem), 0), docs)
			idf = 1 + math.Log(float64(1+docs)/float64(1+df))
		}
		c.score = (1 + math.Log(float64(c.n))) * idf
		if c.lead {
			c.score *= 1.25
		}
	}
	slices.SortStableFunc(order, func(a, b *candidate) int {
		if c := cmp.Compare(b.score, a.score); c != 0 {
			return c
		}
		return cmp.Compare(a.first, b.first)
	})
	tags := make([]string, 0, min(t.max, len(order)))
	for _, c := range order[:min(t.max, len(order))] {
		best, bestN := "", 0
		for f, n := range c.forms {
			if n > bestN || n == bestN && f < best {
				best, bestN = f, n
			}
		}
		tags = append(tags, best)
	}
	return tags, nil
}

// NormalizeTags cleans tags from any source (an LLM, a user) the way local tags are: trimmed, lower-cased,
// white space collapsed, a leading '#' and surrounding punctuation and quotes removed; dropped when empty, a
// single character, without a letter, a lone stop word or longer than 40 characters; duplicates removed,
// first kept; at most MaxTags.
func NormalizeTags(tags []string) []string {
	stop := stopWords()
	out := make([]string, 0, min(len(tags), MaxTags))
	seen := make(map[string]struct{}, len(tags))
	for _, t := range tags {
		t = strings.ToLower(strings.Join(strings.Fields(t), " "))
		t = strings.TrimFunc(t, func(r rune) bool {
			return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '+' // keep "c++"
		})
		if utf8.RuneCountInString(t) < 2 || utf8.RuneCountInString(t) > maxTagChars || !hasLetter([]byte(t)) {
			continue
		}
		if _, ok := stop[t]; ok {
			continue
		}
		if _, dup := seen[t]; dup {
			continue
		}
		seen[t] = struct{}{}
		out = append(out, t)
		if len(out) == MaxTags {
			break
		}
	}
	return out
}

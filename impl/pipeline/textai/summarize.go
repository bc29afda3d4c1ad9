package textai

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"unicode/utf8"
)

// Summarizer returns a short summary of a text.
type Summarizer interface {
	// Summarize returns a summary of text of one to a few sentences; "" for a text without words.
	Summarize(ctx context.Context, text string) (string, error)
	// Name identifies the engine, for logs and for deciding whether to re-run it.
	Name() string
}

// Defaults of SummarizerConfig.
const (
	DefaultSummaryChars     = 300
	DefaultSummarySentences = 3
)

// maxRankedSentences bounds the O(n²) ranking on very long texts: later sentences are not considered.
const maxRankedSentences = 400

// SummarizerConfig bounds the local summaries. Zero fields take the defaults.
type SummarizerConfig struct {
	// MaxChars bounds a summary's length in characters (runes); default DefaultSummaryChars.
	MaxChars int
	// MaxSentences bounds the number of sentences picked; default DefaultSummarySentences.
	MaxSentences int
}

// LocalSummarizer is the default, offline, deterministic summariser. It is extractive: the summary is made of
// sentences of the text, unchanged but for white space and list markers. It works in four steps:
//
//  1. Split into sentences (see splitSentences): sentence punctuation with abbreviations, initials and list
//     numbers handled, blank lines, and line breaks before a line that does not continue a hard-wrapped
//     sentence. Runs of more than 40 words without punctuation, as in a raw speech transcript, are cut into
//     pseudo-sentences of 12–25 words, preferably before words that often start a spoken sentence ("so",
//     "but", "and then", …) or after a comma.
//  2. Rank with TextRank (Mihalcea and Tarau, 2004): a graph whose nodes are sentences and whose edge
//     weights are the number of stemmed non-stop words two sentences share, over log(1+|Si|) + log(1+|Sj|);
//     PageRank with damping 0.85 gives each sentence its centrality. Fragments of fewer than 4 terms count
//     half, and the first sentence gets a 15% bonus because notes tend to lead with their subject.
//  3. Pick the best sentences of at least 4 words (not headings or labels), up to MaxSentences, while the
//     summary fits in MaxChars; if none fits, the best one is cut at a word boundary with "…".
//  4. Put them back in the order of the text; pseudo-sentences are marked with "…" where the text goes on,
//     and a sentence without final punctuation (a list item) gets a period.
//
// A text of at most MaxChars characters is its own summary (white space collapsed).
type LocalSummarizer struct {
	maxChars, maxSentences int
}

var _ Summarizer = (*LocalSummarizer)(nil)

// NewLocalSummarizer returns the local summariser with cfg's limits.
func NewLocalSummarizer(cfg SummarizerConfig) *LocalSummarizer {
	s := &LocalSummarizer{maxChars: cfg.MaxChars, maxSentences: cfg.MaxSentences}
	if s.maxChars <= 0 {
		s.maxChars = DefaultSummaryChars
	}
	if s.maxSentences <= 0 {
		s.maxSentences = DefaultSummarySentences
	}
	return s
}

// Name returns "strata-textrank-v1".
func (s *LocalSummarizer) Name() string { return "strata-textrank-v1" }

// Summarize returns the extractive summary of text. It fails only when ctx is done.
func (s *LocalSummarizer) Summarize(ctx context.Context, text string) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", fmt.Errorf("textai: summarize: %w", err)
	}
	collapsed := strings.Join(strings.Fields(text), " ")
	if utf8.RuneCountInString(collapsed) <= s.maxChars {
		return collapsed, nil
	}
	sents := splitSentences(text)
	if len(sents) == 0 {
		return "", nil
	}
	if len(sents) > maxRankedSentences {
		sents = sents[:maxRankedSentences]
	}
	scores := rankSentences(sents)
	order := make([]int, len(sents))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(scores[b], scores[a]) })

	var picked []int
	length := 0
	for _, i := range order {
		if len(picked) == s.maxSentences {
			break
		}
		if len(strings.Fields(sents[i].text)) < minSummaryWords {
			continue // a heading or a label, not a sentence to read alone
		}
		n := utf8.RuneCountInString(sents[i].display())
		if len(picked) > 0 {
			n++ // the space between sentences
		}
		if length+n > s.maxChars {
			continue
		}
		picked = append(picked, i)
		length += n
	}
	if len(picked) == 0 {
		return truncateWords(sents[order[0]].display(), s.maxChars), nil
	}
	slices.Sort(picked)
	var b strings.Builder
	for k, i := range picked {
		if k > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(sents[i].display())
	}
	return b.String(), nil
}

// minSummaryWords is the fewest words of a sentence picked for a summary.
const minSummaryWords = 4

// display is the sentence as it appears in a summary: a pseudo-sentence that the text continues after ends
// with "…", and a list item or a line without final punctuation gets a period so that the summary reads
// as sentences.
func (s sentence) display() string {
	switch {
	case s.pseudo && !s.last:
		return s.text + "…"
	case s.pseudo:
		return s.text
	}
	r, _ := utf8.DecodeLastRuneInString(s.text)
	if strings.ContainsRune(".!?…\"'”’)", r) {
		return s.text
	}
	return strings.TrimRight(s.text, ",;:-–— ") + "."
}

// rankSentences returns the TextRank score of each sentence, adjusted as LocalSummarizer describes.
func rankSentences(sents []sentence) []float64 {
	stop := stopWords()
	terms := make([][]uint64, len(sents))
	var sc wordScanner
	for i, s := range sents {
		sc.reset(s.text)
		for {
			w, ok := sc.next()
			if !ok {
				break
			}
			if isTermWord(stop, w) {
				terms[i] = append(terms[i], fnvBytes(fnvOffset, stem(w)))
			}
		}
		slices.Sort(terms[i])
		terms[i] = slices.Compact(terms[i])
	}
	n := len(sents)
	weights := make([]float64, n*n)
	outSum := make([]float64, n)
	for i := range n {
		for j := i + 1; j < n; j++ {
			c := countCommon(terms[i], terms[j])
			if c == 0 {
				continue
			}
			w := float64(c) / (math.Log1p(float64(len(terms[i]))) + math.Log1p(float64(len(terms[j]))))
			weights[i*n+j], weights[j*n+i] = w, w
			outSum[i] += w
			outSum[j] += w
		}
	}
	const damping = 0.85
	score := make([]float64, n)
	next := make([]float64, n)
	for i := range score {
		score[i] = 1
	}
	for range 100 {
		delta := 0.0
		for i := range n {
			sum := 0.0
			for j := range n {
				if w := weights[j*n+i]; w != 0 {
					sum += w / outSum[j] * score[j]
				}
			}
			next[i] = (1 - damping) + damping*sum
			delta += math.Abs(next[i] - score[i])
		}
		score, next = next, score
		if delta < 1e-9 {
			break
		}
	}
	for i := range score {
		if len(terms[i]) < 4 {
			score[i] *= 0.5
		}
	}
	score[0] *= 1.15
	return score
}

// countCommon counts the values two sorted, duplicate-free slices share.
func countCommon(a, b []uint64) int {
	n, i, j := 0, 0, 0
	for i < len(a) && j < len(b) {
		switch {
		case a[i] < b[j]:
			i++
		case a[i] > b[j]:
			j++
		default:
			n++
			i++
			j++
		}
	}
	return n
}

// truncateWords cuts s to at most maxChars runes at a word boundary, marking the cut with "…".
func truncateWords(s string, maxChars int) string {
	if utf8.RuneCountInString(s) <= maxChars {
		return s
	}
	if maxChars < 2 {
		return "…"
	}
	// Byte offset of the first rune past the budget (leaving room for the ellipsis).
	cut, count := len(s), 0
	for i := range s {
		if count == maxChars-1 {
			cut = i
			break
		}
		count++
	}
	head := s[:cut]
	if k := strings.LastIndexByte(head, ' '); k > 0 && s[cut] != ' ' {
		head = head[:k]
	}
	return strings.TrimRight(head, " ,;:-–—") + "…"
}

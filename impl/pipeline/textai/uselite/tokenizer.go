package uselite

import (
	"strings"

	"golang.org/x/text/unicode/norm"
)

// reservedPieces is the number of vocabulary entries (padding, <s>, </s> and three extra ids) that never
// come out of the tokenizer, except id 0, which stands for an unknown symbol.
const reservedPieces = 6

// unknownID is the id of a symbol no piece covers.
const unknownID = 0

// wordBoundary is SentencePiece's marker for a space and for the start of the text.
const wordBoundary = '\u2581'

// tokenizer segments text into the model's SentencePiece pieces: the segmentation with the highest sum of
// piece scores (unigram language model, Viterbi), exactly as the TensorFlow.js tokenizer the model was
// published with (including its tie-breaking and the merging of consecutive unknown symbols), so that the
// ids and therefore the vectors are the same.
type tokenizer struct {
	root    *trieNode
	lengths []int // length of each piece in runes
}

type trieNode struct {
	children map[rune]*trieNode
	id       int // piece id ending here, or -1
	score    float64
}

func newTrieNode() *trieNode { return &trieNode{children: map[rune]*trieNode{}, id: -1} }

// newTokenizer builds the trie of pieces[reservedPieces:].
func newTokenizer(pieces []string, scores []float64) *tokenizer {
	t := &tokenizer{root: newTrieNode(), lengths: make([]int, len(pieces))}
	for i, p := range pieces {
		t.lengths[i] = len([]rune(p))
		if i < reservedPieces {
			continue
		}
		n := t.root
		for _, r := range p {
			c := n.children[r]
			if c == nil {
				c = newTrieNode()
				n.children[r] = c
			}
			n = c
		}
		if n != t.root {
			n.id, n.score = i, scores[i]
		}
	}
	return t
}

// edge is a piece of the lattice: id covering length runes, with its score.
type edge struct {
	id, length int
	score      float64
}

// encode returns the piece ids of text: NFKC-normalised, with each space and the start marked by ▁.
func (t *tokenizer) encode(text string) []int {
	text = norm.NFKC.String(text)
	if text == "" {
		return nil
	}
	symbols := []rune(string(wordBoundary) + strings.ReplaceAll(text, " ", string(wordBoundary)))
	n := len(symbols)
	// ending[e] lists the edges that end at e. They are appended with increasing start, and a start and
	// an end determine one piece, which is the order in which the reference implementation visits them.
	ending := make([][]edge, n+1)
	for i := range n {
		node := t.root.children[symbols[i]]
		found := false
		for j := i; node != nil; {
			if node.id >= 0 {
				found = true
				ending[j+1] = append(ending[j+1], edge{node.id, j + 1 - i, node.score})
			}
			if j++; j == n {
				break
			}
			node = node.children[symbols[j]]
		}
		if !found {
			ending[i+1] = append(ending[i+1], edge{unknownID, 1, 0})
		}
	}
	best := make([]float64, n+1)
	words := make([]int, n+1)
	for e := 1; e <= n; e++ {
		for _, ed := range ending[e] {
			score := ed.score + best[e-ed.length]
			if best[e] == 0 || score >= best[e] {
				best[e] = score
				words[e] = ed.id
			}
		}
	}
	var ids []int
	for i := n; i > 0; {
		id := words[i]
		ids = append(ids, id)
		l := t.lengths[id]
		if id == unknownID || l < 1 {
			l = 1
		}
		i -= l
	}
	// Merge runs of unknown symbols into one, then restore reading order.
	merged := ids[:0]
	prevUnknown := false
	for _, id := range ids {
		if !(prevUnknown && id == unknownID) {
			merged = append(merged, id)
		}
		prevUnknown = id == unknownID
	}
	for i, j := 0, len(merged)-1; i < j; i, j = i+1, j-1 {
		merged[i], merged[j] = merged[j], merged[i]
	}
	return merged
}

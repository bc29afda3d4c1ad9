package textai

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"sync"
)

// Embedder maps texts to fixed-dimension, L2-normalised vectors. Vectors from different Model values (or
// dimensions) are not comparable: store the model name and dimension beside each vector and re-embed when
// they change.
type Embedder interface {
	// Embed returns one vector of Dim() elements per text, in the order of texts. A text with nothing to
	// embed (empty, or only stop words and punctuation for the local engine) gets the zero vector, whose
	// similarity to anything is 0.
	Embed(ctx context.Context, texts []string) ([][]float32, error)
	// Model identifies the model, recipe and version that produced the vectors.
	Model() string
	// Dim is the vector dimension; 0 while a remote engine has not yet told it.
	Dim() int
}

// Calibrated is implemented by embedders that know how similar a text must be to a query to be about it:
// below MinRelevance, a result says nothing of the query and search leaves it out. Scales differ by model
// (the hashed embedder's unrelated texts score about 0.06, the sentence encoder's about 0.13), hence the
// method; search uses 0.05 for other embedders.
type Calibrated interface {
	MinRelevance() float64
}

// DefaultDim is the local embedder's dimension when none is given. 512 scores within noise of 8,192 on the
// relevance corpus, while a brute-force search over 10,000 stored vectors (20 MB) stays under 2 ms.
const DefaultDim = 512

// localEmbedderVersion names the recipe below. Change it whenever the recipe, its weights, the stop words,
// the stemmer or the concept lexicon change, so that Model() changes and stored vectors get re-embedded.
const localEmbedderVersion = "strata-hash-v1"

// Feature weights of the local recipe, per kind of feature (see LocalEmbedder).
const (
	wordWeight    = 1.0
	bigramWeight  = 0.5
	gramWeight    = 0.25
	conceptWeight = 2.0
	minGram       = 3
	maxGram       = 5
)

// LocalEmbedder is the fallback offline, deterministic embedder (the default is the sentence encoder of
// package uselite, when its weights are installed): a bag of hashed features, in the spirit of
// scikit-learn's HashingVectorizer and fastText's subword n-grams, plus WordNet concepts so that texts about
// the same subject meet even without a word in common ("lasagne" and "curry" are both dishes, "mortgage" and
// "loan" both debts). It needs no model file, no network and no corpus, so a vector never changes once
// computed and can be stored.
//
// The recipe (version strata-hash-v1), applied to each text:
//
//  1. Words: maximal runs of letters and digits, lower-cased, apostrophes dropped ("don't" → "dont").
//     Stop words (stopwords.txt), words of one character and words without a letter are skipped.
//  2. Each remaining word is looked up in the concept lexicon (concepts.txt.gz, made from WordNet 3.0 by
//     internal/wordnetgen), as it is or reduced to a base form by WordNet's detachment rules ("tomatoes" →
//     "tomato", "went" → "go"). The lexicon gives the word a weight u in 0.2..1, its IDF in the
//     sense-tagged SemCor corpus relative to an unseen word's (common words such as "time" say less), and
//     up to 16 concepts with weights in 0..1: the synsets of its three most frequent senses (halving per
//     rank), their hypernyms up to 4 levels while they are specific enough (0.7 per level), their topic
//     domains and their lexicographer file (noun.food, noun.plant, noun.possession, …; 0.5). Unknown words
//     (jargon, names) have u = 1 and no concepts.
//  3. Features of the word, each occurrence with a weight:
//     - "w" + stem, u × 1.0, where stem is the light Porter-style stemmer of this package;
//     - "b" + previous stem + 0x00 + stem, min(u, previous u) × 0.5, when the previous kept word is not
//     separated from this one by punctuation, a line break or a stop word;
//     - "c" + each byte 3-, 4- and 5-gram of "<" + word + ">" (the unstemmed word with boundary marks),
//     u × 0.25 each, which catches spelling variants the stemmer misses;
//     - "k" + concept id (4 bytes little-endian), u × concept weight × 2.0.
//  4. Sublinear term frequency: the weights of a feature's occurrences are summed to s, and the feature
//     contributes s if s ≤ 1, else 1 + ln s (1 + ln n for n occurrences of weight 1).
//  5. Signed feature hashing: h = FNV-1a-64 of the feature bytes, then the MurmurHash3 finaliser; the feature
//     is added at index (h mod 2³²) mod dim with sign + if bit 63 of h is 0 and − otherwise, so that
//     collisions cancel out on average instead of piling up. Features are added in order of h, so that the
//     vectors are the same bit for bit on every run.
//  6. L2 normalisation; a text without features is the zero vector.
//
// Model() is "strata-hash-v1-<dim>". The first use parses the lexicon (about 70 ms, 6 MiB). LocalEmbedder is
// safe for concurrent use.
type LocalEmbedder struct {
	dim     int
	model   string
	scratch sync.Pool // *embedScratch
}

var _ Embedder = (*LocalEmbedder)(nil)

// NewLocalEmbedder returns the local embedder with vectors of dim elements; dim ≤ 0 means DefaultDim.
func NewLocalEmbedder(dim int) *LocalEmbedder {
	if dim <= 0 {
		dim = DefaultDim
	}
	e := &LocalEmbedder{dim: dim, model: fmt.Sprintf("%s-%d", localEmbedderVersion, dim)}
	e.scratch.New = func() any { return new(embedScratch) }
	return e
}

// MinRelevance implements Calibrated: 0.05, above which the relevance corpus's queries keep half their
// unrelated notes but nearly all related ones.
func (e *LocalEmbedder) MinRelevance() float64 { return 0.05 }

// Model returns "strata-hash-v1-<dim>".
func (e *LocalEmbedder) Model() string { return e.model }

// Dim returns the vector dimension.
func (e *LocalEmbedder) Dim() int { return e.dim }

// Embed returns the vectors of texts. All vectors share one backing array. It fails only when ctx is done.
func (e *LocalEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	backing := make([]float32, len(texts)*e.dim)
	s := e.scratch.Get().(*embedScratch)
	defer e.scratch.Put(s)
	for i, text := range texts {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("textai: embed: %w", err)
		}
		out[i] = backing[i*e.dim : (i+1)*e.dim : (i+1)*e.dim]
		e.embed(s, text, out[i])
	}
	return out, nil
}

// embedScratch is the reusable state of one embedding: the hashes of the features seen, one slice per kind.
// Sorting them, rather than counting in a map, gives the counts and a fixed summation order, so that the
// vectors are bit-for-bit deterministic.
type embedScratch struct {
	sc                              wordScanner
	words, bigrams, grams, concepts []weightedFeature
	gram, morph                     []byte
}

// embed writes the vector of text into v (zeroed, len dim).
func (e *LocalEmbedder) embed(s *embedScratch, text string, v []float32) {
	stop := stopWords()
	lex := theLexicon()
	s.words, s.bigrams, s.grams, s.concepts = s.words[:0], s.bigrams[:0], s.grams[:0], s.concepts[:0]
	s.sc.reset(text)
	var prev uint64 // FNV state after "b" + previous stem + 0x00; 0 when there is no previous word
	var prevWeight float32
	for {
		w, ok := s.sc.next()
		if !ok {
			break
		}
		if !isTermWord(stop, w) {
			prev = 0
			continue
		}
		if s.sc.broken {
			prev = 0
		}
		entry, known, morph := lex.lookup(w, s.morph)
		s.morph = morph
		iw := float32(1)
		if known {
			iw = entry.weight
			for _, c := range entry.concepts {
				s.concepts = append(s.concepts, weightedFeature{conceptHash(conceptID(c)), iw * conceptWeightOf(c)})
			}
		}
		// Character n-grams of the whole word, before stem shortens it in place.
		s.gram = append(append(append(s.gram[:0], '<'), w...), '>')
		for n := minGram; n <= maxGram; n++ {
			for i := 0; i+n <= len(s.gram); i++ {
				s.grams = append(s.grams, weightedFeature{fnvBytes(fnvByte(fnvOffset, 'c'), s.gram[i:i+n]), iw})
			}
		}
		st := stem(w)
		s.words = append(s.words, weightedFeature{fnvBytes(fnvByte(fnvOffset, 'w'), st), iw})
		if prev != 0 {
			s.bigrams = append(s.bigrams, weightedFeature{fnvBytes(prev, st), min(iw, prevWeight)})
		}
		prev = fnvByte(fnvBytes(fnvByte(fnvOffset, 'b'), st), 0)
		prevWeight = iw
	}
	addFeatures(v, s.words, wordWeight)
	addFeatures(v, s.bigrams, bigramWeight)
	addFeatures(v, s.grams, gramWeight)
	addFeatures(v, s.concepts, conceptWeight)
	Normalize(v)
}

// conceptHash is the feature hash of a lexicon concept: "k" and its id, little-endian.
func conceptHash(id uint32) uint64 {
	h := fnvByte(fnvOffset, 'k')
	for range 4 {
		h = fnvByte(h, byte(id))
		id >>= 8
	}
	return h
}

// weightedFeature is a feature hash with the weight of one occurrence.
type weightedFeature struct {
	h uint64
	w float32
}

// addFeatures sorts fs and adds each distinct feature to v, signed-hashed, with weight × sublinear(sum of
// its occurrences' weights), where sublinear(x) = x up to 1 and 1 + ln x above (1 + ln n for n occurrences
// of weight 1). Sorting rather than counting in a map fixes the summation order, so that vectors are
// bit-for-bit deterministic.
func addFeatures(v []float32, fs []weightedFeature, weight float32) {
	slices.SortFunc(fs, func(a, b weightedFeature) int { return cmp.Compare(a.h, b.h) })
	dim := uint64(len(v))
	for i := 0; i < len(fs); {
		sum := fs[i].w
		j := i + 1
		for j < len(fs) && fs[j].h == fs[i].h {
			sum += fs[j].w
			j++
		}
		if sum > 1 {
			sum = 1 + float32(math.Log(float64(sum)))
		}
		x := weight * sum
		h := mix64(fs[i].h)
		if h>>63 != 0 {
			x = -x
		}
		v[uint64(uint32(h))%dim] += x
		i = j
	}
}

// FNV-1a, 64 bit.
const (
	fnvOffset = 14695981039346656037
	fnvPrime  = 1099511628211
)

func fnvByte(h uint64, c byte) uint64 { return (h ^ uint64(c)) * fnvPrime }

func fnvBytes(h uint64, b []byte) uint64 {
	for _, c := range b {
		h = (h ^ uint64(c)) * fnvPrime
	}
	return h
}

// mix64 is MurmurHash3's 64-bit finaliser: FNV's low bits are weak, and the index uses them.
func mix64(h uint64) uint64 {
	h ^= h >> 33
	h *= 0xff51afd7ed558ccd
	h ^= h >> 33
	h *= 0xc4ceb9fe1a85ec53
	h ^= h >> 33
	return h
}

package textai

import (
	"encoding/binary"
	"errors"
	"fmt"
	"iter"
	"math"
)

// Cosine returns the cosine similarity of a and b, in −1..1. It is 0 when either vector is zero or when their
// lengths differ (vectors of different models are not comparable).
func Cosine(a, b []float32) float32 {
	if len(a) != len(b) || len(a) == 0 {
		return 0
	}
	var dot, na, nb float64
	for i := range a {
		x, y := float64(a[i]), float64(b[i])
		dot += x * y
		na += x * x
		nb += y * y
	}
	if na == 0 || nb == 0 {
		return 0
	}
	c := dot / math.Sqrt(na*nb)
	return float32(max(-1, min(1, c)))
}

// Normalize scales v in place to unit L2 norm and returns it; the zero vector stays zero.
func Normalize(v []float32) []float32 {
	var n float64
	for _, x := range v {
		n += float64(x) * float64(x)
	}
	if n == 0 {
		return v
	}
	inv := float32(1 / math.Sqrt(n))
	for i := range v {
		v[i] *= inv
	}
	return v
}

// dot is the inner product of two vectors of equal length, with four accumulators so that the loop is not
// bound by the latency of one chain of additions.
func dot(a, b []float32) float32 {
	b = b[:len(a)]
	var s0, s1, s2, s3 float32
	i := 0
	for ; i+4 <= len(a); i += 4 {
		s0 += a[i] * b[i]
		s1 += a[i+1] * b[i+1]
		s2 += a[i+2] * b[i+2]
		s3 += a[i+3] * b[i+3]
	}
	for ; i < len(a); i++ {
		s0 += a[i] * b[i]
	}
	return (s0 + s1) + (s2 + s3)
}

// Match is one search result: an item and its similarity to the query, in −1..1.
type Match struct {
	ID    string
	Score float32
}

// worse orders matches for the result heap: lower score first, and at equal scores the larger ID, so that
// results are deterministic.
func worse(a, b Match) bool {
	if a.Score != b.Score {
		return a.Score < b.Score
	}
	return a.ID > b.ID
}

// TopK returns the k candidates most similar to query, best first (ties by ascending ID), leaving out the
// candidate whose ID is exclude (the item itself, for related items; "" excludes nothing).
//
// Vectors are expected to be L2-normalised, as every Embedder returns them, so the similarity is the dot
// product, which is the cosine; a zero vector scores 0. Candidates of another length than query (vectors of an
// older model) are skipped. The search is brute force with a bounded min-heap: O(n·dim + n·log k) time and no
// allocation per candidate; the only allocations are the result and the callback.
func TopK(query []float32, candidates iter.Seq2[string, []float32], k int, exclude string) []Match {
	if k <= 0 || len(query) == 0 {
		return nil
	}
	h := make([]Match, 0, min(k, 256))
	for id, vec := range candidates {
		if len(vec) != len(query) || (exclude != "" && id == exclude) {
			continue
		}
		m := Match{ID: id, Score: dot(query, vec)}
		if len(h) < k {
			h = append(h, m)
			siftUp(h, len(h)-1)
			continue
		}
		if worse(h[0], m) {
			h[0] = m
			siftDown(h, 0)
		}
	}
	// Heap-sort in place: repeatedly move the worst remaining match to the end.
	for n := len(h) - 1; n > 0; n-- {
		h[0], h[n] = h[n], h[0]
		siftDown(h[:n], 0)
	}
	for i := range h {
		h[i].Score = max(-1, min(1, h[i].Score))
	}
	return h
}

func siftUp(h []Match, i int) {
	for i > 0 {
		p := (i - 1) / 2
		if !worse(h[i], h[p]) {
			return
		}
		h[i], h[p] = h[p], h[i]
		i = p
	}
}

func siftDown(h []Match, i int) {
	for {
		l := 2*i + 1
		if l >= len(h) {
			return
		}
		m := l
		if r := l + 1; r < len(h) && worse(h[r], h[l]) {
			m = r
		}
		if !worse(h[m], h[i]) {
			return
		}
		h[i], h[m] = h[m], h[i]
		i = m
	}
}

// ErrBadVector reports stored vector bytes that cannot be decoded.
var ErrBadVector = errors.New("textai: bad vector encoding")

// EncodeVector returns v as little-endian IEEE-754 float32s, 4 bytes per element: the storage format of
// embeddings (a BLOB beside the model name and dimension).
func EncodeVector(v []float32) []byte {
	return AppendVector(make([]byte, 0, 4*len(v)), v)
}

// AppendVector appends the encoding of v (see EncodeVector) to dst.
func AppendVector(dst []byte, v []float32) []byte {
	for _, x := range v {
		dst = binary.LittleEndian.AppendUint32(dst, math.Float32bits(x))
	}
	return dst
}

// DecodeVector decodes EncodeVector's format. It fails with ErrBadVector when the length is not a multiple of
// 4 or an element is NaN or infinite (which would poison every similarity).
func DecodeVector(b []byte) ([]float32, error) {
	if len(b)%4 != 0 {
		return nil, fmt.Errorf("%w: %d bytes is not a whole number of float32s", ErrBadVector, len(b))
	}
	v := make([]float32, len(b)/4)
	for i := range v {
		x := math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
		if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
			return nil, fmt.Errorf("%w: element %d is %v", ErrBadVector, i, x)
		}
		v[i] = x
	}
	return v, nil
}

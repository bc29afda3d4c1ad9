package textai_test

import (
	"cmp"
	"errors"
	"fmt"
	"iter"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stratahq/strata/impl/pipeline/textai"
)

// randomVectors returns n random unit vectors of dim elements, with ids "v0000"….
func randomVectors(r *rand.Rand, n, dim int) ([]string, [][]float32) {
	ids := make([]string, n)
	vecs := make([][]float32, n)
	for i := range vecs {
		ids[i] = fmt.Sprintf("v%04d", i)
		v := make([]float32, dim)
		for j := range v {
			v[j] = float32(r.NormFloat64())
		}
		vecs[i] = textai.Normalize(v)
	}
	return ids, vecs
}

func pairs(ids []string, vecs [][]float32) iter.Seq2[string, []float32] {
	return func(yield func(string, []float32) bool) {
		for i := range ids {
			if !yield(ids[i], vecs[i]) {
				return
			}
		}
	}
}

func TestTopKMatchesNaiveSort(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(1, 2))
	ids, vecs := randomVectors(r, 500, 64)
	query := vecs[7]
	var naive []textai.Match
	for i := range ids {
		if ids[i] != "v0007" {
			naive = append(naive, textai.Match{ID: ids[i], Score: textai.Cosine(query, vecs[i])})
		}
	}
	slices.SortFunc(naive, func(a, b textai.Match) int {
		if c := cmp.Compare(b.Score, a.Score); c != 0 {
			return c
		}
		return cmp.Compare(a.ID, b.ID)
	})
	for _, k := range []int{1, 5, 10, 100, 499, 1000} {
		got := textai.TopK(query, pairs(ids, vecs), k, "v0007")
		want := naive[:min(k, len(naive))]
		if len(got) != len(want) {
			t.Fatalf("k=%d: %d matches, want %d", k, len(got), len(want))
		}
		for i := range got {
			if got[i].ID != want[i].ID || math.Abs(float64(got[i].Score-want[i].Score)) > 1e-5 {
				t.Fatalf("k=%d: match %d = %+v, want %+v", k, i, got[i], want[i])
			}
		}
	}
}

func TestTopKEdges(t *testing.T) {
	t.Parallel()
	q := []float32{1, 0, 0}
	ids := []string{"a", "b", "c", "zero", "short"}
	vecs := [][]float32{{1, 0, 0}, {0, 1, 0}, {-1, 0, 0}, {0, 0, 0}, {1, 0}}
	got := textai.TopK(q, pairs(ids, vecs), 10, "")
	want := []textai.Match{{"a", 1}, {"b", 0}, {"zero", 0}, {"c", -1}} // "short" has another dimension
	if !slices.Equal(got, want) {
		t.Errorf("TopK = %v, want %v", got, want)
	}
	if got := textai.TopK(q, pairs(ids, vecs), 10, "a"); len(got) != 3 || got[0].ID == "a" {
		t.Errorf("exclude: %v", got)
	}
	if got := textai.TopK(q, pairs(ids, vecs), 0, ""); got != nil {
		t.Errorf("k=0: %v", got)
	}
	if got := textai.TopK(nil, pairs(ids, vecs), 3, ""); got != nil {
		t.Errorf("empty query: %v", got)
	}
	empty := func(func(string, []float32) bool) {}
	if got := textai.TopK(q, empty, 3, ""); len(got) != 0 {
		t.Errorf("no candidates: %v", got)
	}
	// Early stop is honoured: the iterator is not called again after yield returns false.
	stopped := func(yield func(string, []float32) bool) {
		for i := range ids {
			if !yield(ids[i], vecs[i]) {
				t.Error("TopK stopped the iteration")
				return
			}
		}
	}
	textai.TopK(q, stopped, 1, "")
}

// TestTopKAllocations checks that the work per candidate allocates nothing: the count is the same for 10 and
// for 5,000 candidates.
func TestTopKAllocations(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	ids, vecs := randomVectors(r, 5000, 32)
	count := func(n int) float64 {
		seq := pairs(ids[:n], vecs[:n])
		return testing.AllocsPerRun(20, func() { textai.TopK(vecs[0], seq, 10, ids[0]) })
	}
	small, large := count(10), count(5000)
	t.Logf("allocations per TopK: %v with 10 candidates, %v with 5,000", small, large)
	if large != small || large > 4 {
		t.Errorf("allocations: %v for 10 candidates, %v for 5,000; want equal and ≤ 4 (result, heap, loop body)", small, large)
	}
}

func TestCosine(t *testing.T) {
	t.Parallel()
	cases := []struct {
		a, b []float32
		want float32
	}{
		{[]float32{1, 0}, []float32{1, 0}, 1},
		{[]float32{3, 0}, []float32{1, 0}, 1},
		{[]float32{1, 0}, []float32{0, 2}, 0},
		{[]float32{1, 1}, []float32{-1, -1}, -1},
		{[]float32{0, 0}, []float32{1, 0}, 0},
		{[]float32{1, 0}, []float32{1, 0, 0}, 0},
		{nil, nil, 0},
	}
	for _, c := range cases {
		if got := textai.Cosine(c.a, c.b); math.Abs(float64(got-c.want)) > 1e-6 {
			t.Errorf("Cosine(%v, %v) = %v, want %v", c.a, c.b, got, c.want)
		}
	}
}

func TestVectorEncoding(t *testing.T) {
	t.Parallel()
	v := []float32{0, 1, -1, 0.5, float32(math.SmallestNonzeroFloat32), math.MaxFloat32}
	b := textai.EncodeVector(v)
	if len(b) != 4*len(v) {
		t.Fatalf("%d bytes for %d floats", len(b), len(v))
	}
	if got := b[4:8]; !slices.Equal(got, []byte{0x00, 0x00, 0x80, 0x3f}) { // 1.0, little-endian
		t.Errorf("1.0 encoded as % x", got)
	}
	back, err := textai.DecodeVector(b)
	if err != nil || !slices.Equal(back, v) {
		t.Fatalf("DecodeVector = %v, %v; want %v", back, err, v)
	}
	if got, err := textai.DecodeVector(nil); err != nil || len(got) != 0 {
		t.Errorf("DecodeVector(nil) = %v, %v", got, err)
	}
	for _, bad := range [][]byte{
		{1, 2, 3},
		append(textai.EncodeVector([]float32{1}), 1),
		textai.EncodeVector([]float32{float32(math.NaN())}),
		textai.EncodeVector([]float32{float32(math.Inf(1))}),
	} {
		if _, err := textai.DecodeVector(bad); !errors.Is(err, textai.ErrBadVector) {
			t.Errorf("DecodeVector(% x) error = %v, want ErrBadVector", bad, err)
		}
	}
}

// FuzzDecodeVector: stored bytes are decoded without panicking, and what decodes re-encodes to the same
// bytes.
func FuzzDecodeVector(f *testing.F) {
	f.Add([]byte{})
	f.Add(textai.EncodeVector([]float32{1, -2.5, 0}))
	f.Add([]byte{0, 0, 0xc0, 0x7f})
	f.Fuzz(func(t *testing.T, b []byte) {
		v, err := textai.DecodeVector(b)
		if err != nil {
			return
		}
		if got := textai.EncodeVector(v); !slices.Equal(got, b) {
			t.Fatalf("round trip % x → % x", b, got)
		}
	})
}

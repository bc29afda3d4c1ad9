package textai_test

import (
	"context"
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stratahq/strata/impl/pipeline/textai"
)

func norm(v []float32) float64 {
	var s float64
	for _, x := range v {
		s += float64(x) * float64(x)
	}
	return math.Sqrt(s)
}

func TestLocalEmbedderBasics(t *testing.T) {
	t.Parallel()
	for _, dim := range []int{0, 64, 768} {
		e := textai.NewLocalEmbedder(dim)
		want := dim
		if dim == 0 {
			want = textai.DefaultDim
		}
		if e.Dim() != want {
			t.Errorf("NewLocalEmbedder(%d).Dim() = %d, want %d", dim, e.Dim(), want)
		}
		if m := e.Model(); !strings.HasPrefix(m, "strata-hash-v") || !strings.HasSuffix(m, "-"+strconv.Itoa(want)) {
			t.Errorf("Model() = %q, want the recipe, version and dimension %d", m, want)
		}
		texts := []string{cookingNote, longNote, "Deploy the API to staging.", cookingNote, "", "the and of 42"}
		vecs, err := e.Embed(t.Context(), texts)
		if err != nil {
			t.Fatal(err)
		}
		if len(vecs) != len(texts) {
			t.Fatalf("%d vectors for %d texts", len(vecs), len(texts))
		}
		for i, v := range vecs {
			if len(v) != want {
				t.Fatalf("vector %d has %d elements, want %d", i, len(v), want)
			}
			n := norm(v)
			switch texts[i] {
			case "", "the and of 42":
				if n != 0 {
					t.Errorf("text %q: norm %v, want the zero vector", texts[i], n)
				}
			default:
				if math.Abs(n-1) > 1e-5 {
					t.Errorf("text %d: norm %v, want 1", i, n)
				}
			}
		}
		if !slices.Equal(vecs[0], vecs[3]) {
			t.Error("the same text in one batch gave different vectors")
		}
		// Deterministic across calls and batch shapes.
		one, err := e.Embed(t.Context(), []string{cookingNote})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(one[0], vecs[0]) {
			t.Error("the same text gave different vectors in different calls")
		}
	}
}

// TestLocalEmbedderSimilarity checks the properties the recipe promises: inflections and synonyms meet,
// unrelated texts stay apart.
func TestLocalEmbedderSimilarity(t *testing.T) {
	t.Parallel()
	e := textai.NewLocalEmbedder(0)
	pairs := []struct {
		a, b string
		min  float32
	}{
		{"planting tomatoes", "planted a tomato", 0.5},          // stemming and base forms
		{"deployment pipeline", "deploying pipelines", 0.5},     // stemming
		{"aubergine curry", "eggplant curry", 0.6},              // synonyms share a synset
		{"paid off the mortgage", "repaid the loan", 0.1},       // related concepts
		{"Sourdough loaf with a crisp crust", "sourdough", 0.3}, // containment
	}
	for _, p := range pairs {
		v, err := e.Embed(t.Context(), []string{p.a, p.b})
		if err != nil {
			t.Fatal(err)
		}
		if c := textai.Cosine(v[0], v[1]); c < p.min {
			t.Errorf("cosine(%q, %q) = %.3f, want ≥ %.2f", p.a, p.b, c, p.min)
		}
	}
	v, err := e.Embed(t.Context(), []string{"roast chicken with garlic", "kubernetes ingress certificate"})
	if err != nil {
		t.Fatal(err)
	}
	if c := textai.Cosine(v[0], v[1]); c > 0.15 {
		t.Errorf("unrelated texts have cosine %.3f, want ≤ 0.15", c)
	}
}

func TestLocalEmbedderCancelled(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := textai.NewLocalEmbedder(0).Embed(ctx, []string{"text"}); err == nil {
		t.Fatal("no error with a cancelled context")
	}
}

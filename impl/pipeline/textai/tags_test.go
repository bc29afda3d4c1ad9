package textai_test

import (
	"slices"
	"strings"
	"testing"
	"unicode"

	"github.com/stratahq/strata/impl/pipeline/textai"
)

const cookingNote = `Tomato and basil pasta for Thursday dinner.

Roast the cherry tomatoes with garlic and olive oil until they burst, about twenty minutes. Meanwhile cook the
pasta in well salted water. Toss the pasta with the roasted tomatoes, a ladle of pasta water, torn basil and
plenty of parmesan. The tomatoes turn jammy in the oven, which makes the sauce. Serves 2. 2024 version.`

// checkTags asserts the invariants of any tag list.
func checkTags(t *testing.T, tags []string) {
	t.Helper()
	if len(tags) > textai.MaxTags {
		t.Errorf("%d tags, want at most %d: %q", len(tags), textai.MaxTags, tags)
	}
	seen := map[string]bool{}
	for _, tag := range tags {
		if tag != strings.ToLower(tag) {
			t.Errorf("tag %q is not lower-case", tag)
		}
		if len([]rune(tag)) < 2 {
			t.Errorf("tag %q is too short", tag)
		}
		if !strings.ContainsFunc(tag, unicode.IsLetter) {
			t.Errorf("tag %q has no letter", tag)
		}
		if seen[tag] {
			t.Errorf("duplicate tag %q", tag)
		}
		seen[tag] = true
	}
}

func TestTagsCookingNote(t *testing.T) {
	t.Parallel()
	tg := textai.NewLocalTagger(0)
	tags, err := tg.Tags(t.Context(), cookingNote, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("tags: %q", tags)
	checkTags(t, tags)
	if len(tags) != textai.MaxTags {
		t.Errorf("%d tags for a long note, want %d", len(tags), textai.MaxTags)
	}
	for _, want := range []string{"tomatoes", "pasta", "basil"} {
		if !slices.Contains(tags, want) {
			t.Errorf("tags %q lack %q", tags, want)
		}
	}
	for _, stop := range []string{"the", "and", "with", "about", "which", "until", "2", "2024"} {
		if slices.Contains(tags, stop) {
			t.Errorf("tags %q contain stop word or number %q", tags, stop)
		}
	}
	again, _ := tg.Tags(t.Context(), cookingNote, nil)
	if !slices.Equal(tags, again) {
		t.Errorf("not deterministic: %q then %q", tags, again)
	}
}

func TestTagsCorpusWeighting(t *testing.T) {
	t.Parallel()
	// "recipe" is in every document of the corpus, "saffron" in one.
	docs := []string{
		"A recipe for saffron risotto with stock and parmesan.",
		"A recipe for lemon cake.",
		"A recipe for pea soup with mint.",
		"A recipe for roast chicken.",
		"A recipe for flatbread.",
	}
	corpus := textai.NewCorpusStats(docs...)
	if corpus.Docs() != len(docs) || corpus.DocFreq("recip") != len(docs) {
		t.Fatalf("corpus: docs %d, df(recip) %d", corpus.Docs(), corpus.DocFreq("recip"))
	}
	text := "Recipe recipe recipe: saffron risotto. Toast the rice, add the recipe's saffron and stock slowly."
	tg := textai.NewLocalTagger(0)
	plain, err := tg.Tags(t.Context(), text, nil)
	if err != nil {
		t.Fatal(err)
	}
	weighted, err := tg.Tags(t.Context(), text, corpus)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("without corpus: %q; with corpus: %q", plain, weighted)
	if len(plain) == 0 || plain[0] != "recipe" {
		t.Fatalf("without a corpus the most frequent word should lead: %q", plain)
	}
	if i := slices.Index(weighted, "recipe"); i >= 0 && i <= slices.Index(weighted, "saffron") {
		t.Errorf("with a corpus where every document has it, %q should rank below saffron: %q", "recipe", weighted)
	}
	if weighted[0] != "saffron" {
		t.Errorf("with the corpus, the rare repeated word should lead: %q", weighted)
	}
}

func TestTagsEdgeCases(t *testing.T) {
	t.Parallel()
	tg := textai.NewLocalTagger(3)
	for _, text := range []string{"", "   ", "the and of 42 7 x y"} {
		tags, err := tg.Tags(t.Context(), text, nil)
		if err != nil || len(tags) != 0 {
			t.Errorf("Tags(%q) = %q, %v; want none", text, tags, err)
		}
	}
	tags, err := tg.Tags(t.Context(), cookingNote, nil)
	if err != nil || len(tags) != 3 {
		t.Errorf("NewLocalTagger(3) returned %q, %v", tags, err)
	}
	checkTags(t, tags)
}

func TestNormalizeTags(t *testing.T) {
	t.Parallel()
	got := textai.NormalizeTags([]string{
		" #Sourdough ", "BAKING", "baking", `"bread"`, "the", "x", "2024", "c++", "  Home   Baking. ",
		"a-very-long-tag-that-nobody-would-ever-want-to-type-into-a-box", "garden", "pasta", "soup", "rice", "beans",
	})
	want := []string{"sourdough", "baking", "bread", "c++", "home baking", "garden", "pasta", "soup"}
	if !slices.Equal(got, want) {
		t.Errorf("NormalizeTags = %q, want %q", got, want)
	}
}

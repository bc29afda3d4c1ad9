package textai

import (
	"slices"
	"strings"
	"testing"
)

func TestSplitSentences(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, text string
		want       []string
	}{
		{"punctuation", "First one. Second one! Third one? Fourth", []string{"First one.", "Second one!", "Third one?", "Fourth"}},
		{"abbreviations", "Met Dr. Patel at approx. 10 a.m. today. Then e.g. basil and Mr. J. Smith. Done.",
			[]string{"Met Dr. Patel at approx. 10 a.m. today.", "Then e.g. basil and Mr. J. Smith.", "Done."}},
		{"decimals and urls", "Pi is 3.14 and the site is example.com today. Next.", []string{"Pi is 3.14 and the site is example.com today.", "Next."}},
		{"quotes", `She said "stop." Then left.`, []string{`She said "stop."`, "Then left."}},
		{"ellipsis", "Well... maybe. Or not…  Fine.", []string{"Well...", "maybe.", "Or not…", "Fine."}},
		{"lists", "Shopping:\n- milk\n- eggs\n* bread\n1. flour\n2) sugar", []string{"Shopping:", "milk", "eggs", "bread", "flour", "sugar"}},
		{"paragraphs", "Heading\n\nA paragraph that\nwraps onto a second line.\n\nAnother", []string{"Heading", "A paragraph that wraps onto a second line.", "Another"}},
		{"numbered sentence", "1. Preheat the oven. 2. Bake.", []string{"Preheat the oven.", "Bake."}},
		{"empty", " \n\n ", nil},
		{"punctuation only", "... --- !!!", nil},
	}
	for _, tc := range cases {
		var got []string
		for _, s := range splitSentences(tc.text) {
			got = append(got, s.text)
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s: splitSentences(%q) = %q, want %q", tc.name, tc.text, got, tc.want)
		}
	}
}

func TestSplitSentencesTranscript(t *testing.T) {
	t.Parallel()
	words := strings.Fields(strings.Repeat("we went to the shop and then we bought some bread so after that we walked home ", 8))
	text := strings.Join(words, " ")
	sents := splitSentences(text)
	if len(sents) < 4 {
		t.Fatalf("%d pseudo-sentences for %d unpunctuated words", len(sents), len(words))
	}
	total := 0
	for i, s := range sents {
		n := len(strings.Fields(s.text))
		total += n
		if !s.pseudo || n > maxChunkWords+minChunkWords/2 || (i < len(sents)-1 && n < minChunkWords) {
			t.Errorf("chunk %d: %d words, pseudo %v: %q", i, n, s.pseudo, s.text)
		}
		if s.last != (i == len(sents)-1) {
			t.Errorf("chunk %d: last = %v", i, s.last)
		}
	}
	if total != len(words) {
		t.Errorf("chunks hold %d words, want %d", total, len(words))
	}
}

func TestStem(t *testing.T) {
	t.Parallel()
	groups := [][]string{
		{"berry", "berries"},
		{"bake", "baked", "baking", "bakes"},
		{"deploy", "deployed", "deploying", "deploys", "deployment", "deployments"},
		{"plan", "planned", "planning", "plans"},
		{"tomato", "tomatoes"},
		{"budget", "budgets", "budgeting", "budgeted"},
		{"cookie", "cookies"},
	}
	for _, g := range groups {
		want := string(stem([]byte(g[0])))
		for _, w := range g[1:] {
			if got := string(stem([]byte(w))); got != want {
				t.Errorf("stem(%q) = %q, stem(%q) = %q: want equal", w, got, g[0], want)
			}
		}
	}
	for _, w := range []string{"bus", "glass", "analysis", "speed", "thing", "string", "red", "café", "k8s"} {
		if got := string(stem([]byte(w))); got != w && w != "speed" {
			t.Errorf("stem(%q) = %q, want it unchanged", w, got)
		}
	}
}

func TestWordScanner(t *testing.T) {
	t.Parallel()
	var sc wordScanner
	sc.reset("Don't STOP—the Café's k8s, naïve   résumé 3.5!")
	var got []string
	for {
		w, ok := sc.next()
		if !ok {
			break
		}
		got = append(got, string(w))
	}
	want := []string{"dont", "stop", "the", "cafés", "k8s", "naïve", "résumé", "3", "5"}
	if !slices.Equal(got, want) {
		t.Errorf("words = %q, want %q", got, want)
	}
}

func TestTerms(t *testing.T) {
	t.Parallel()
	got := Terms("The tomatoes and a Tomato; planting 2024 plants, x.")
	want := []string{"tomato", "plant"}
	if !slices.Equal(got, want) {
		t.Errorf("Terms = %q, want %q", got, want)
	}
}

func TestLexiconLookup(t *testing.T) {
	t.Parallel()
	lx := theLexicon()
	var buf []byte
	for _, pair := range [][2]string{
		{"tomatoes", "tomato"}, {"went", "go"}, {"jogged", "jog"}, {"berries", "berry"}, {"geese", "goose"},
	} {
		e1, ok1, b := lx.lookup([]byte(pair[0]), buf)
		buf = b
		e2, ok2 := lx.entry([]byte(pair[1]))
		if !ok1 || !ok2 || !slices.Equal(e1.concepts, e2.concepts) {
			t.Errorf("lookup(%q) = %v/%v, want the entry of %q", pair[0], ok1, len(e1.concepts), pair[1])
		}
	}
	if _, ok, _ := lx.lookup([]byte("kubernetes"), buf); ok {
		t.Error("jargon found in the lexicon")
	}
	// Synonyms share their synset; frequent words weigh less than rare ones.
	a, _ := lx.entry([]byte("aubergine"))
	b, _ := lx.entry([]byte("eggplant"))
	shared := 0
	for _, c := range a.concepts {
		if slices.ContainsFunc(b.concepts, func(d uint32) bool { return conceptID(d) == conceptID(c) }) {
			shared++
		}
	}
	if shared == 0 {
		t.Error("aubergine and eggplant share no concept")
	}
	common, _ := lx.entry([]byte("time"))
	rare, _ := lx.entry([]byte("sourdough"))
	if common.weight >= rare.weight {
		t.Errorf("weight(time) = %v, weight(sourdough) = %v: want the frequent word lighter", common.weight, rare.weight)
	}
}

// FuzzParseTags: any model answer parses or fails cleanly, and normalised tags keep the invariants.
func FuzzParseTags(f *testing.F) {
	for _, s := range []string{`["a","b"]`, "```json\n[\"x\"]\n```", `{"tags":["q"]}`, "- a\n- b, c", `[1,2]`, "", "[", "]["} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		tags, err := parseTags(s)
		if err != nil {
			return
		}
		norm := NormalizeTags(tags)
		if len(norm) > MaxTags {
			t.Fatalf("%d tags", len(norm))
		}
		for _, tag := range norm {
			if tag != strings.ToLower(tag) || strings.TrimSpace(tag) != tag || tag == "" {
				t.Fatalf("bad tag %q", tag)
			}
		}
	})
}

// FuzzSummarize: any text gives a summary within the bound, without panicking.
func FuzzSummarize(f *testing.F) {
	for _, s := range []string{"", "One. Two. Three.", "a\n\n\nb", strings.Repeat("word ", 300), "Dr. . . .\n- \n1.", "…!?"} {
		f.Add(s)
	}
	s := NewLocalSummarizer(SummarizerConfig{MaxChars: 120})
	f.Fuzz(func(t *testing.T, text string) {
		got, err := s.Summarize(t.Context(), text)
		if err != nil {
			t.Fatal(err)
		}
		if n := len([]rune(got)); n > 120 {
			t.Fatalf("summary of %d characters", n)
		}
	})
}

package textai_test

import (
	"context"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stratahq/strata/impl/pipeline/textai"
)

const longNote = `Sourdough weekend notes

Fed the starter on Friday night with equal weights of flour and water. By Saturday morning it had doubled and smelled pleasantly sour, so it was ready to use.

Mixed 500 g of bread flour with 350 g of water and left it for an hour (the autolyse). Then added 100 g of active starter and 10 g of salt. Did four sets of stretch and folds, thirty minutes apart. The dough became smooth and elastic after the third set.

Bulk fermentation took about five hours at 24°C. Shaped the loaf into a tight boule, put it in a floured banneton and proofed it overnight in the fridge. Baked it in a preheated Dutch oven at 250°C: twenty minutes with the lid on, then twenty-five without.

The crust was deep brown and crackly and the crumb open, though slightly gummy in the centre. Next time bake it five minutes longer and let it cool fully before slicing. Overall the best sourdough loaf so far.`

// transcript is a raw speech-to-text transcript: no punctuation and no capitals.
const transcript = `okay so this is a quick voice note about the garden before i forget so the tomatoes on the left side ` +
	`are looking really yellow at the bottom and i think it might be the blight again because we had all that rain ` +
	`last week so tomorrow morning i need to pull off the bad leaves and put down some more mulch and then also ` +
	`the courgettes are going crazy we have way too many so maybe give some to the neighbours and i should remember ` +
	`to order more seed compost for the spring sowing and check if the water butt is full because the forecast ` +
	`says it will be dry for the next two weeks and the new raised bed still needs filling with topsoil`

func collapse(s string) string { return strings.Join(strings.Fields(s), " ") }

func TestSummarizeMultiParagraph(t *testing.T) {
	t.Parallel()
	s := textai.NewLocalSummarizer(textai.SummarizerConfig{})
	got, err := s.Summarize(t.Context(), longNote)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("summary (%d chars): %s", utf8.RuneCountInString(got), got)
	if n := utf8.RuneCountInString(got); n == 0 || n > textai.DefaultSummaryChars {
		t.Fatalf("summary length %d, want 1..%d", n, textai.DefaultSummaryChars)
	}
	// Every sentence of the summary is a sentence of the text.
	text := collapse(longNote)
	sentences := splitOnEnds(got)
	if len(sentences) < 1 || len(sentences) > textai.DefaultSummarySentences {
		t.Fatalf("summary has %d sentences, want 1..3: %q", len(sentences), sentences)
	}
	for _, s := range sentences {
		if !strings.Contains(text, s) && !strings.Contains(text, strings.TrimSuffix(s, ".")) {
			t.Errorf("summary sentence %q is not in the text", s)
		}
	}
	// In the order of the text.
	last := -1
	for _, s := range sentences {
		i := strings.Index(text, s)
		if i < last {
			t.Errorf("summary sentences out of order: %q", got)
		}
		last = i
	}
	again, _ := s.Summarize(t.Context(), longNote)
	if again != got {
		t.Errorf("not deterministic: %q then %q", got, again)
	}
}

// splitOnEnds splits a summary after ". ", "! ", "? " (the summaries of the tests have no abbreviations).
func splitOnEnds(s string) []string {
	var out []string
	start := 0
	for i := 0; i+1 < len(s); i++ {
		if strings.ContainsRune(".!?", rune(s[i])) && s[i+1] == ' ' {
			out = append(out, s[start:i+1])
			start = i + 2
		}
	}
	return append(out, s[start:])
}

func TestSummarizeShortIsItself(t *testing.T) {
	t.Parallel()
	s := textai.NewLocalSummarizer(textai.SummarizerConfig{})
	for _, text := range []string{
		"Buy milk and eggs tomorrow morning.",
		"Call the plumber about the leaking tap.\nAsk for a quote first.",
		"remember to water the basil",
	} {
		got, err := s.Summarize(t.Context(), text)
		if err != nil {
			t.Fatal(err)
		}
		if want := collapse(text); got != want {
			t.Errorf("Summarize(%q) = %q, want the text itself %q", text, got, want)
		}
	}
}

func TestSummarizeEmpty(t *testing.T) {
	t.Parallel()
	s := textai.NewLocalSummarizer(textai.SummarizerConfig{})
	for _, text := range []string{"", "   \n\t  "} {
		got, err := s.Summarize(t.Context(), text)
		if err != nil || got != "" {
			t.Errorf("Summarize(%q) = %q, %v; want \"\", nil", text, got, err)
		}
	}
}

func TestSummarizeTranscript(t *testing.T) {
	t.Parallel()
	s := textai.NewLocalSummarizer(textai.SummarizerConfig{})
	got, err := s.Summarize(t.Context(), transcript)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("summary (%d chars): %s", utf8.RuneCountInString(got), got)
	if n := utf8.RuneCountInString(got); n < 40 || n > textai.DefaultSummaryChars {
		t.Fatalf("summary length %d, want a bounded excerpt of 40..%d characters", n, textai.DefaultSummaryChars)
	}
	// Each piece between ellipses is a run of words of the transcript.
	for _, piece := range strings.Split(got, "…") {
		piece = strings.TrimSpace(piece)
		if piece != "" && !strings.Contains(transcript, piece) {
			t.Errorf("piece %q is not in the transcript", piece)
		}
	}
}

func TestSummarizeLongSentenceIsCut(t *testing.T) {
	t.Parallel()
	s := textai.NewLocalSummarizer(textai.SummarizerConfig{MaxChars: 80, MaxSentences: 1})
	text := strings.Repeat("The quick brown fox jumps over the lazy dog and keeps running, ", 3) + "until the end."
	got, err := s.Summarize(t.Context(), text)
	if err != nil {
		t.Fatal(err)
	}
	if n := utf8.RuneCountInString(got); n > 80 || n == 0 {
		t.Fatalf("summary %q has %d characters, want 1..80", got, n)
	}
}

func TestSummarizeAbbreviationsAndLists(t *testing.T) {
	t.Parallel()
	s := textai.NewLocalSummarizer(textai.SummarizerConfig{MaxChars: 120, MaxSentences: 3})
	text := "Met Dr. Patel at approx. 10 a.m. about the garden design. She suggested e.g. lavender along the path. " +
		"Plan:\n- Order lavender plants from the nursery\n- Dig the border along the path\n- Mulch the new border with bark\n" +
		"Budget is tight this month. The lavender border is the priority for the garden this spring."
	got, err := s.Summarize(t.Context(), text)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("summary: %s", got)
	if strings.Contains(got, "Dr.") && !strings.Contains(got, "Dr. Patel") {
		t.Errorf("sentence split inside an abbreviation: %q", got)
	}
	for _, bad := range []string{"- ", "Plan:"} {
		if strings.Contains(got, bad) {
			t.Errorf("summary %q contains %q: list items not split or markers kept", got, bad)
		}
	}
}

func TestSummarizeCancelled(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := textai.NewLocalSummarizer(textai.SummarizerConfig{}).Summarize(ctx, longNote); err == nil {
		t.Fatal("no error with a cancelled context")
	}
}

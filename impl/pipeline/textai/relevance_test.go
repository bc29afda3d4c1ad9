package textai_test

import (
	"bufio"
	"fmt"
	"iter"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/stratahq/strata/impl/pipeline/textai"
	"github.com/stratahq/strata/impl/pipeline/textai/uselite"
)

// corpusNote is one note of testdata/corpus.txt.
type corpusNote struct {
	id, topic, text string
}

// loadCorpus reads testdata/corpus.txt: "topic | text" per line, # comments.
func loadCorpus(tb testing.TB) []corpusNote {
	tb.Helper()
	f, err := os.Open("testdata/corpus.txt")
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	var notes []corpusNote
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		topic, text, ok := strings.Cut(line, "|")
		if !ok {
			tb.Fatalf("corpus line without topic: %q", line)
		}
		notes = append(notes, corpusNote{
			id:    fmt.Sprintf("note-%02d", len(notes)),
			topic: strings.TrimSpace(topic),
			text:  strings.TrimSpace(text),
		})
	}
	if err := sc.Err(); err != nil {
		tb.Fatal(err)
	}
	return notes
}

// corpusVectors caches the corpus's vectors per model: the sentence encoder takes seconds for the corpus,
// and two tests need its vectors.
var corpusVectors = struct {
	sync.Mutex
	byModel map[string]map[string][]float32
}{byModel: map[string]map[string][]float32{}}

// embedCorpus embeds the notes with e and returns the vectors by id. The vectors are shared: don't modify them.
func embedCorpus(tb testing.TB, e textai.Embedder, notes []corpusNote) map[string][]float32 {
	tb.Helper()
	corpusVectors.Lock()
	defer corpusVectors.Unlock()
	if byID, ok := corpusVectors.byModel[e.Model()]; ok && len(byID) == len(notes) {
		return byID
	}
	texts := make([]string, len(notes))
	for i, n := range notes {
		texts[i] = n.text
	}
	vecs, err := e.Embed(tb.Context(), texts)
	if err != nil {
		tb.Fatal(err)
	}
	byID := make(map[string][]float32, len(notes))
	for i, n := range notes {
		byID[n.id] = vecs[i]
	}
	corpusVectors.byModel[e.Model()] = byID
	return byID
}

// seq yields the notes' vectors in corpus order.
func seq(notes []corpusNote, vecs map[string][]float32) iter.Seq2[string, []float32] {
	return func(yield func(string, []float32) bool) {
		for _, n := range notes {
			if !yield(n.id, vecs[n.id]) {
				return
			}
		}
	}
}

// relevanceEmbedder is an embedder under test with the precision@5 it must reach on the corpus.
type relevanceEmbedder struct {
	name            string
	new             func(testing.TB) textai.Embedder
	minPrecisionAt5 float64
}

// sentenceEncoder loads the sentence encoder's weights once per test binary. scripts/deps.sh installs them
// (make deps, make test); without them the tests fail rather than skip.
var sentenceEncoder = sync.OnceValues(func() (*uselite.Encoder, error) { return uselite.Load(uselite.DefaultDir) })

// relevanceEmbedders are the two local embedders. The sentence encoder is the default and must meet issue
// 7's target of 0.8. The hashed embedder is the fallback when its weights are not installed; its floor
// guards against regressions (measured: 0.46 with hashed words and n-grams alone, 0.725 with the WordNet
// concepts of strata-hash-v1, short of 0.8 on devops jargon WordNet does not know and on words whose first
// sense is in another topic).
var relevanceEmbedders = []relevanceEmbedder{
	{"sentence encoder", func(tb testing.TB) textai.Embedder {
		e, err := sentenceEncoder()
		if err != nil {
			tb.Fatalf("%v (run make deps to install the weights)", err)
		}
		return e
	}, 0.8},
	{"hashed", func(testing.TB) textai.Embedder { return textai.NewLocalEmbedder(0) }, 0.70},
}

// TestRelevanceRelated is the figure of issue 7: for each note of a 48-note corpus in 4 topics, its top 5
// related notes (itself excluded) mostly share its topic.
func TestRelevanceRelated(t *testing.T) {
	t.Parallel()
	notes := loadCorpus(t)
	perTopic := map[string]int{}
	topicOf := map[string]string{}
	for _, n := range notes {
		perTopic[n.topic]++
		topicOf[n.id] = n.topic
	}
	if len(notes) < 40 || len(perTopic) != 4 {
		t.Fatalf("corpus has %d notes in %d topics, want ≥ 40 in 4", len(notes), len(perTopic))
	}
	for topic, n := range perTopic {
		if n < 10 {
			t.Fatalf("topic %s has %d notes, want ≥ 10", topic, n)
		}
	}
	for _, re := range relevanceEmbedders {
		t.Run(re.name, func(t *testing.T) {
			e := re.new(t)
			vecs := embedCorpus(t, e, notes)
			const k = 5
			var sum float64
			topicSum := map[string]float64{}
			for _, n := range notes {
				matches := textai.TopK(vecs[n.id], seq(notes, vecs), k, n.id)
				if len(matches) != k {
					t.Fatalf("%s: %d matches, want %d", n.id, len(matches), k)
				}
				same := 0
				var got []string
				for _, m := range matches {
					if m.ID == n.id {
						t.Fatalf("%s: related items include the item itself", n.id)
					}
					if topicOf[m.ID] == n.topic {
						same++
					}
					got = append(got, fmt.Sprintf("%s(%s %.2f)", m.ID, topicOf[m.ID], m.Score))
				}
				p := float64(same) / k
				sum += p
				topicSum[n.topic] += p
				if testing.Verbose() && p < 0.8 {
					t.Logf("%s [%s] p@5=%.1f: %s", n.id, n.topic, p, strings.Join(got, " "))
				}
			}
			mean := sum / float64(len(notes))
			for topic, s := range topicSum {
				t.Logf("precision@5 %-10s %.3f", topic, s/float64(perTopic[topic]))
			}
			t.Logf("mean precision@5 = %.4f over %d notes (model %s)", mean, len(notes), e.Model())
			if mean < re.minPrecisionAt5 {
				t.Errorf("mean precision@5 = %.4f, want ≥ %.2f", mean, re.minPrecisionAt5)
			}
		})
	}
}

// TestRelevanceSearch checks that queries phrased differently from the notes rank a note of the right topic
// first. Each query shares at most a word or a word stem with its topic (as real queries do), never a whole
// phrase of a note.
func TestRelevanceSearch(t *testing.T) {
	t.Parallel()
	notes := loadCorpus(t)
	topicOf := map[string]string{}
	for _, n := range notes {
		topicOf[n.id] = n.topic
	}
	queries := []struct {
		q, topic string
		// hashedMiss marks a query the hashed embedder gets wrong, kept to show its limit: "weeknight" is not
		// in WordNet, "dinner" occurs in one note only, and the generic rest ("quick", "ideas") decides. For
		// that embedder it is reported, not asserted.
		hashedMiss bool
	}{
		{"how do I keep my tomato plants healthy", "gardening", false},
		{"slugs are eating my seedlings", "gardening", false},
		{"when should fruit trees be trimmed", "gardening", false},
		{"what to plant in a vegetable bed", "gardening", false},
		{"saving money each month", "finance", false},
		{"clearing credit card debt faster", "finance", false},
		{"planning for retirement with a pension", "finance", false},
		{"how to bake bread at home", "cooking", false},
		{"quick weeknight dinner ideas", "cooking", true},
		{"what goes into a good curry", "cooking", false},
		{"rolling out a new version safely", "devops", false},
		{"why did the site go down last week: certificate problems", "devops", false},
		{"speeding up slow CI builds", "devops", false},
		{"kubernetes pods running out of memory", "devops", false},
	}
	qtexts := make([]string, len(queries))
	for i, q := range queries {
		qtexts[i] = q.q
	}
	for _, re := range relevanceEmbedders {
		t.Run(re.name, func(t *testing.T) {
			e := re.new(t)
			vecs := embedCorpus(t, e, notes)
			qvecs, err := e.Embed(t.Context(), qtexts)
			if err != nil {
				t.Fatal(err)
			}
			right := 0
			for i, q := range queries {
				matches := textai.TopK(qvecs[i], seq(notes, vecs), 3, "")
				var got []string
				for _, m := range matches {
					got = append(got, fmt.Sprintf("%s %.3f", topicOf[m.ID], m.Score))
				}
				ok := len(matches) > 0 && topicOf[matches[0].ID] == q.topic && matches[0].Score > 0
				switch {
				case ok:
					right++
				case q.hashedMiss && re.name == "hashed":
					t.Logf("known miss: query %q ranks %s first, not %s", q.q, topicOf[matches[0].ID], q.topic)
				default:
					t.Errorf("query %q: top 3 = [%s], want %s first", q.q, strings.Join(got, ", "), q.topic)
				}
				t.Logf("query %-60q → %s", q.q, strings.Join(got, ", "))
			}
			t.Logf("search: %d/%d queries ranked a note of the right topic first (model %s)", right, len(queries), e.Model())
		})
	}
}

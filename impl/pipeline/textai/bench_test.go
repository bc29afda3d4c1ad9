package textai_test

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stratahq/strata/impl/pipeline/textai"
)

// benchNotes returns notes of about 100 words: consecutive corpus notes of one topic joined until they
// reach 100 words.
func benchNotes(b *testing.B) []string {
	var out []string
	var cur []string
	topic := ""
	for _, n := range loadCorpus(b) {
		if n.topic != topic {
			cur, topic = nil, n.topic
		}
		cur = append(cur, n.text)
		if text := strings.Join(cur, " "); len(strings.Fields(text)) >= 100 {
			out = append(out, text)
			cur = nil
		}
	}
	return out
}

// BenchmarkEmbed measures the local embedder on single notes of about 100 words (the pipeline embeds one
// item at a time).
func BenchmarkEmbed(b *testing.B) {
	notes := benchNotes(b)
	words := 0
	for _, n := range notes {
		words += len(strings.Fields(n))
	}
	e := textai.NewLocalEmbedder(0)
	if _, err := e.Embed(b.Context(), notes[:1]); err != nil { // loads the lexicon
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	i := 0
	for b.Loop() {
		if _, err := e.Embed(b.Context(), notes[i%len(notes):i%len(notes)+1]); err != nil {
			b.Fatal(err)
		}
		i++
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "embeds/s")
	b.ReportMetric(float64(words)/float64(len(notes)), "words/note")
}

// vectors10k returns 10,000 random unit vectors of the default dimension.
func vectors10k() ([]string, [][]float32) {
	return randomVectors(rand.New(rand.NewPCG(5, 6)), 10_000, textai.DefaultDim)
}

// BenchmarkTopK is related items for one user with 10,000 items: brute-force search of vectors held in
// memory, top 10, the item itself excluded.
func BenchmarkTopK(b *testing.B) {
	ids, vecs := vectors10k()
	seq := pairs(ids, vecs)
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		q := i % len(ids)
		if m := textai.TopK(vecs[q], seq, 10, ids[q]); len(m) != 10 {
			b.Fatal(len(m))
		}
		i++
	}
}

// BenchmarkRelatedDecode10k is the same search when the 10,000 vectors come as stored bytes and are decoded
// on every request (no cache): the cost a store without a vector cache pays.
func BenchmarkRelatedDecode10k(b *testing.B) {
	ids, vecs := vectors10k()
	blobs := make([][]byte, len(vecs))
	for i, v := range vecs {
		blobs[i] = textai.EncodeVector(v)
	}
	seq := func(yield func(string, []float32) bool) {
		for i, blob := range blobs {
			v, err := textai.DecodeVector(blob)
			if err != nil {
				b.Fatal(err)
			}
			if !yield(ids[i], v) {
				return
			}
		}
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		q := i % len(ids)
		textai.TopK(vecs[q], seq, 10, ids[q])
		i++
	}
}

// BenchmarkSummarize summarises a note of about 250 words in five paragraphs.
func BenchmarkSummarize(b *testing.B) {
	s := textai.NewLocalSummarizer(textai.SummarizerConfig{})
	b.ReportAllocs()
	for b.Loop() {
		if _, err := s.Summarize(b.Context(), longNote); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSummarizeTranscript summarises an unpunctuated transcript of about 140 words.
func BenchmarkSummarizeTranscript(b *testing.B) {
	s := textai.NewLocalSummarizer(textai.SummarizerConfig{})
	b.ReportAllocs()
	for b.Loop() {
		if _, err := s.Summarize(b.Context(), transcript); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkTags tags the same note against a corpus of 48 notes.
func BenchmarkTags(b *testing.B) {
	var texts []string
	for _, n := range loadCorpus(b) {
		texts = append(texts, n.text)
	}
	corpus := textai.NewCorpusStats(texts...)
	tg := textai.NewLocalTagger(0)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := tg.Tags(b.Context(), longNote, corpus); err != nil {
			b.Fatal(err)
		}
	}
}

package uselite

import (
	"strings"
	"testing"
)

// noteText is a typical note of about 90 pieces.
const noteText = "Deploy checklist for the API: tag the release, wait for CI to go green, run the database " +
	"migrations on staging first, then promote the image to production with a canary at 10% for fifteen " +
	"minutes. Watch error rates and p99 latency in Grafana before rolling out to everyone."

// BenchmarkEmbedNote is the cost of one note (about 60 words).
func BenchmarkEmbedNote(b *testing.B) {
	m := model(b)
	for b.Loop() {
		if _, err := m.Embed(b.Context(), []string{noteText}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(len(m.Tokens(noteText))), "pieces")
}

// BenchmarkEmbedQuery is the cost of a search query (a few words), paid inside the request.
func BenchmarkEmbedQuery(b *testing.B) {
	m := model(b)
	for b.Loop() {
		if _, err := m.Embed(b.Context(), []string{"kubernetes pods running out of memory"}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkEmbedLong is a 1,000-word transcript, of which MaxWindows windows are read.
func BenchmarkEmbedLong(b *testing.B) {
	m := model(b)
	text := strings.Repeat(noteText+" ", 17)
	for b.Loop() {
		if _, err := m.Embed(b.Context(), []string{text}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(min(len(m.Tokens(text)), MaxWindows*MaxTokens)), "pieces")
}

// BenchmarkLoad is the start-up cost of reading and checking the weights.
func BenchmarkLoad(b *testing.B) {
	for b.Loop() {
		if _, err := Load(DefaultDir); err != nil {
			b.Fatal(err)
		}
	}
}

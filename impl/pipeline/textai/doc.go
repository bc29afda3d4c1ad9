// Package textai is the text part of the AI pipeline: extractive summaries, keyword tags, text embeddings and
// vector search over them.
//
// Each capability is an interface (Summarizer, Tagger, Embedder) with two engines: a local one, the default,
// which is offline and deterministic (LocalSummarizer, LocalTagger, and for embeddings the sentence encoder
// of subpackage uselite, or LocalEmbedder, whose lexicon derived from WordNet is embedded in the package and
// which stands in when the encoder's weights are not installed), and a client of an OpenAI-compatible API
// used when a URL is configured (OpenAIChat over /v1/chat/completions, OpenAIEmbedder over /v1/embeddings). Remote failures that may pass (429, 5xx, unreachable) match ErrUnavailable so that
// the pipeline retries them; other errors are permanent.
//
// Vectors are L2-normalised, so cosine similarity is a dot product; TopK ranks candidates by it with a
// bounded heap and no allocation per candidate, which is fast enough to search a user's items by brute force
// (about 1.6 ms for 10,000 vectors of 512 dimensions, bound by memory bandwidth). EncodeVector and
// DecodeVector give the storage format. Store each vector with its Embedder's Model() and Dim(): vectors of
// different models are not comparable, and a change of model means re-embedding.
//
// The package imports nothing else of Strata.
package textai

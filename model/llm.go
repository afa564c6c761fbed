package model

import (
	"fmt"
	"math"
)

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
	// Mixture-of-Experts (Experts 0: a dense model). MoELayers of the
	// Layers hold a sparse block instead of the dense MLP (Intermediate):
	// a router (hidden × Experts), Experts gated MLPs of
	// ExpertIntermediate, each token routed to ActiveExperts of them, and
	// an always-on shared expert of SharedExpertIntermediate (0: none)
	// with its one-output gate.
	Experts                  int `json:"experts,omitempty"`
	ActiveExperts            int `json:"active_experts,omitempty"`
	ExpertIntermediate       int `json:"expert_intermediate,omitempty"`
	SharedExpertIntermediate int `json:"shared_expert_intermediate,omitempty"`
	MoELayers                int `json:"moe_layers,omitempty"`
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

// IsMoE says whether m is a Mixture-of-Experts model.
func (m LLM) IsMoE() bool { return m.Experts > 0 && m.MoELayers > 0 }

// moeParts are a MoE model's linear parameters outside the routed
// experts (attention of every layer, the dense MLPs, and each sparse
// block's router and shared expert), and those of one routed expert of
// one layer.
func (m LLM) moeParts() (fixed, expert int64) {
	h, layers, moe := int64(m.Hidden), int64(m.Layers), int64(m.MoELayers)
	attn := linearParams(m.Hidden, 0, m.Heads, m.KVHeads, m.HeadDim)
	fixed = layers*attn + (layers-moe)*3*h*int64(m.Intermediate) + moe*h*int64(m.Experts)
	if m.SharedExpertIntermediate > 0 {
		fixed += moe * (3*h*int64(m.SharedExpertIntermediate) + h)
	}
	return fixed, 3 * h * int64(m.ExpertIntermediate)
}

// linearAll is the linear parameters of every block: all of them, every
// expert included (what the weights in memory hold).
func (m LLM) linearAll() int64 {
	if !m.IsMoE() {
		return int64(m.Layers) * m.linearParamsPerLayer()
	}
	fixed, expert := m.moeParts()
	return fixed + int64(m.MoELayers)*int64(m.Experts)*expert
}

// linearActive is the linear parameters one token computes with: every
// block's, with ActiveExperts routed experts per sparse block.
func (m LLM) linearActive() int64 {
	if !m.IsMoE() {
		return int64(m.Layers) * m.linearParamsPerLayer()
	}
	fixed, expert := m.moeParts()
	return fixed + int64(m.MoELayers)*int64(m.ActiveExperts)*expert
}

// linearActiveF is linearActive as a float64, computed for a dense model
// exactly as the cost model always has (layers · per-layer count).
func (m LLM) linearActiveF() float64 {
	if !m.IsMoE() {
		return float64(m.Layers) * float64(m.linearParamsPerLayer())
	}
	return float64(m.linearActive())
}

// TouchedExperts is the expected number of distinct routed experts of one
// sparse block that a step of tokens tokens reads, each token routed to
// ActiveExperts of Experts uniformly: E·(1 − (1 − K/E)^T), between K (one
// token) and E. Real routers are skewed, so a mid-size step touches
// fewer; 0 for a dense model.
func (m LLM) TouchedExperts(tokens int) float64 {
	if !m.IsMoE() {
		return 0
	}
	e, k := float64(m.Experts), float64(m.ActiveExperts)
	if tokens <= 1 {
		return k
	}
	return e * (1 - math.Pow(1-k/e, float64(tokens)))
}

// linearTouched is the linear parameters a step of tokens tokens reads:
// linearAll for a dense model; for a MoE model the fixed part and the
// experts the tokens touch (TouchedExperts).
func (m LLM) linearTouched(tokens int) float64 {
	if !m.IsMoE() {
		return float64(m.Layers) * float64(m.linearParamsPerLayer())
	}
	fixed, expert := m.moeParts()
	return float64(fixed) + float64(m.MoELayers)*m.TouchedExperts(tokens)*float64(expert)
}

// StepWeightBytes is the weight bytes a step of tokens tokens reads: all
// of them for a dense model (WeightBytes), a MoE model's fixed part and
// the experts its tokens touch.
func (m LLM) StepWeightBytes(q Quant, tokens int) float64 {
	if !m.IsMoE() {
		return float64(m.WeightBytes(q))
	}
	per := 2.0
	if q == FP8 {
		per = 1
	}
	return per*m.linearTouched(tokens) + 2*float64(m.otherParams())
}

// ActiveParams is the parameters one token computes with (Params for a
// dense model).
func (m LLM) ActiveParams() int64 { return m.linearActive() + m.otherParams() }

// forwardIntermediate is the MLP width a token's activations take in the
// forward pass: Intermediate for a dense model; for a MoE model its
// routed experts' and shared expert's together (vLLM's fused MoE holds
// tokens × top-k × expert width), or the dense layers' if wider.
func (m LLM) forwardIntermediate() int {
	if !m.IsMoE() {
		return m.Intermediate
	}
	w := m.ActiveExperts*m.ExpertIntermediate + m.SharedExpertIntermediate
	if m.MoELayers < m.Layers {
		w = max(w, m.Intermediate)
	}
	return w
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

// Params is the total parameter count (every expert of a MoE model).
func (m LLM) Params() int64 {
	return m.linearAll() + m.otherParams()
}

// WeightBytes is the size of the weights in the given format (every
// expert of a MoE model: all are held in memory).
func (m LLM) WeightBytes(q Quant) int64 {
	linear := m.linearAll()
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

// FLOPsPerToken is the forward cost of one token, 2 · the parameters it
// computes with (ActiveParams; attention over the context is counted
// separately by the step model).
func (m LLM) FLOPsPerToken() float64 { return 2 * float64(m.ActiveParams()) }

package model

import "fmt"

// Implied are the physical rates a profile implies on its deployment, at
// two reference steps: a full prefill chunk and a decode batch.
type Implied struct {
	// PrefillNsPerToken is a 2,048-token fresh prefill chunk's step time
	// per token (what a worker saturated with prefill pays per token).
	PrefillNsPerToken float64
	// PrefillMFU is the FLOPs that chunk executes (2 FLOPs per linear-layer
	// weight per token plus causal attention; the embedding is a lookup and
	// lm_head runs only for the chunk's last token) over the step time and
	// the GPU's peak.
	PrefillMFU float64
	// DecodeHBMUtil is a decode step of 32 sequences at 2,048 tokens of
	// context: weights and KV bytes read, over step time and bandwidth.
	DecodeHBMUtil float64
}

// ImpliedRefChunk and ImpliedRefDecode* define the reference steps.
const (
	ImpliedRefChunk     = 2048
	ImpliedRefDecodeSeq = 32
	ImpliedRefDecodeCtx = 2048
)

// Implied computes p's implied rates on d.
func (p *Profile) Implied(d Deployment) Implied {
	tp := float64(max(d.TP, 1))
	m := d.Model
	n := float64(ImpliedRefChunk)
	pairs := n * (n + 1) / 2
	chunk := Batch{PrefillTokens: ImpliedRefChunk, PrefillTokenCtx: n * n, PrefillAttnPairs: pairs}
	t := p.StepNs(chunk)
	flops := (2*m.linearActiveF()*n + 4*float64(m.Layers*m.Heads*m.HeadDim)*pairs) / tp
	dec := Batch{DecodeSeqs: ImpliedRefDecodeSeq, DecodeCtxTokens: ImpliedRefDecodeSeq * ImpliedRefDecodeCtx}
	bytes := (m.StepWeightBytes(d.Quant, ImpliedRefDecodeSeq) + float64(ImpliedRefDecodeSeq*ImpliedRefDecodeCtx)*float64(m.KVBytesPerToken(d.kvBytes()))) / tp
	td := p.StepNs(dec)
	return Implied{
		PrefillNsPerToken: t / n,
		PrefillMFU:        flops / (t / 1e9) / d.peakFLOPS(),
		DecodeHBMUtil:     bytes / (td / 1e9) / d.GPU.HBMBytesPerSec,
	}
}

// CheckPhysical refuses a profile that is faster than its deployment's
// hardware allows: prefill above peak FLOP/s or decode above peak HBM
// bandwidth at the reference steps.
func (p *Profile) CheckPhysical(d Deployment) error {
	im := p.Implied(d)
	if im.PrefillMFU > 1 {
		return fmt.Errorf("profile %q: implies %.0f %% of %s's peak FLOP/s on a %d-token prefill chunk (%.1f µs/token): faster than the hardware",
			p.Name, 100*im.PrefillMFU, d.GPU.Name, ImpliedRefChunk, im.PrefillNsPerToken/1e3)
	}
	if im.DecodeHBMUtil > 1 {
		return fmt.Errorf("profile %q: implies %.0f %% of %s's HBM bandwidth on a %d-sequence decode step: faster than the hardware",
			p.Name, 100*im.DecodeHBMUtil, d.GPU.Name, ImpliedRefDecodeSeq)
	}
	return nil
}

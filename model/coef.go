package model

import "strings"

// Coefficient is one named number of a profile: its JSON name, unit, what
// it means, and where it lives. Coefficients is the one list every other
// part of routesim (validation, calibration, priors, reports, bands) reads.
type Coefficient struct {
	Name  string
	Unit  string
	Doc   string
	Field func(*Profile) *float64
}

// Coefficients lists every numeric coefficient of a profile.
var Coefficients = []Coefficient{
	{"step_base_ns", "ns/step", "fixed cost of every step: reading the weights, scheduler, launch gaps", func(p *Profile) *float64 { return &p.StepBaseNs }},
	{"linear_scale", "×", "multiplier on the compute-bound growth of the measured token-wise layer curve (kernel profiles)", func(p *Profile) *float64 { return &p.LinearScale }},
	{"prefill_ns_per_token", "ns/token", "cost per prefill token (a kernel profile: beyond the layer curve)", func(p *Profile) *float64 { return &p.PrefillNsPerToken }},
	{"prefill_attn_ns_per_token_ctx", "ns/(token·ctx)", "prefill attention per token times its chunk's end context (linear profiles)", func(p *Profile) *float64 { return &p.PrefillAttnNsPerTokenCtx }},
	{"prefill_attn_ns_per_pair", "ns/pair", "prefill attention per causal (query, key) pair (kernel profiles)", func(p *Profile) *float64 { return &p.PrefillAttnNsPerPair }},
	{"decode_ns_per_seq", "ns/seq", "cost per decoding sequence (lm_head, sampler, bookkeeping)", func(p *Profile) *float64 { return &p.DecodeNsPerSeq }},
	{"decode_ns_per_ctx_token", "ns/token", "decode attention: reading one context token's KV", func(p *Profile) *float64 { return &p.DecodeNsPerCtxToken }},
	{"frontend_ns", "ns/request", "frontend delay before routing (HTTP, templating)", func(p *Profile) *float64 { return &p.FrontendNs }},
	{"frontend_ns_per_input_token", "ns/token", "frontend delay per input token (tokenisation)", func(p *Profile) *float64 { return &p.FrontendNsPerInputToken }},
	{"host_overhead_ns", "ns/step", "GPU-idle part of every step (scheduling, eager-mode launch gaps); not in NVML utilisation", func(p *Profile) *float64 { return &p.HostOverheadNs }},
	{"noise_sigma", "", "σ of the lognormal factor on every step time", func(p *Profile) *float64 { return &p.NoiseSigma }},
	{"power_idle_w", "W", "power at 0 % NVML utilisation", func(p *Profile) *float64 { return &p.PowerIdleW }},
	{"power_busy_w", "W", "power at 100 % NVML utilisation", func(p *Profile) *float64 { return &p.PowerBusyW }},
}

// CoefficientByName returns the named coefficient (case-insensitive).
func CoefficientByName(name string) (Coefficient, bool) {
	for _, c := range Coefficients {
		if strings.EqualFold(c.Name, name) {
			return c, true
		}
	}
	return Coefficient{}, false
}

// CoefficientNames lists every coefficient's name, in table order.
func CoefficientNames() []string {
	out := make([]string, len(Coefficients))
	for i, c := range Coefficients {
		out[i] = c.Name
	}
	return out
}

// Floor is coefficient name's physical lower bound for deployment d and a
// profile of p's form (0 where physics sets none):
//
//   - step_base_ns: a decode step reads every weight once (weights/TP at
//     peak bandwidth).
//   - prefill_ns_per_token (linear profiles): 2·params/TP FLOPs at peak.
//   - attention: 2·layers·heads·head_dim FLOPs per token·context (a linear
//     profile's half-causal count) or 4·… per causal pair, at peak.
//   - decode_ns_per_ctx_token: one token's KV bytes/TP at peak bandwidth.
//   - linear_scale: the scale at which the curve's largest step would run
//     its linear FLOPs at peak.
func Floor(d Deployment, p *Profile, name string) float64 {
	tp := float64(max(d.TP, 1))
	peak, bw := d.peakFLOPS(), d.GPU.HBMBytesPerSec
	m := d.Model
	attn := float64(m.Layers*m.Heads*m.HeadDim) / tp
	switch name {
	case "step_base_ns":
		return float64(m.WeightBytes(d.Quant)) / tp / bw * 1e9
	case "prefill_ns_per_token":
		if p != nil && p.IsKernel() {
			return 0
		}
		return m.FLOPsPerToken() / tp / peak * 1e9
	case "prefill_attn_ns_per_token_ctx":
		return 2 * attn / peak * 1e9
	case "prefill_attn_ns_per_pair":
		return 4 * attn / peak * 1e9
	case "decode_ns_per_ctx_token":
		return float64(m.KVBytesPerToken(d.kvBytes())) / tp / bw * 1e9
	case "linear_scale":
		if p == nil || !p.IsKernel() {
			return 0
		}
		c := p.LinearCurve
		params := float64(m.Layers) * float64(m.linearParamsPerLayer()) / tp
		n := c.Tokens[len(c.Tokens)-1]
		return 2 * params * float64(n) / peak * 1e9 / c.Compute(n)
	}
	return 0
}

func (d Deployment) peakFLOPS() float64 {
	if d.Quant == FP8 && d.GPU.FP8FLOPS > 0 {
		return d.GPU.FP8FLOPS
	}
	return d.GPU.BF16FLOPS
}

func (d Deployment) kvBytes() int {
	if d.KVDtypeBytes == 0 {
		return 2
	}
	return d.KVDtypeBytes
}

// lmHeadBytes is the output projection's weight (BF16 in both formats).
func (d Deployment) lmHeadBytes() float64 {
	return 2 * float64(d.Model.Vocab) * float64(d.Model.Hidden)
}

package model

import (
	"strconv"
	"strings"
	"time"
)

// Coefficient is one named number of a profile: its JSON name, unit, what
// it means, where it lives, which profile forms carry it, whether a
// calibration fits it by default, and whether it multiplies a step-time
// feature. Coefficients is the one list every other part of routesim
// (validation, calibration, priors, reports, bands) reads.
type Coefficient struct {
	Name  string
	Unit  string
	Doc   string
	Field func(*Profile) *float64
	// Forms says which profile forms use it: a kernel profile (measured
	// layer curve), a linear one (BLIS-style), or both.
	Forms Forms
	// Fit: the forms for which a calibration fits it unless told
	// otherwise.
	Fit Forms
	// Step: it multiplies one term of the step-time model (in table
	// order, the features calib's regression builds).
	Step bool
	// Ref is a search scale for a coefficient with no physical floor (0 =
	// the floor is the scale).
	Ref float64
	// Max is the largest value any real deployment could have (one of the
	// Max* bounds, whose comments say why): a larger one is a unit or
	// typing mistake, or a posterior too wide to draw from, and
	// Profile.Validate refuses it.
	Max float64
}

// Physical upper bounds on the coefficients. Each is an order of magnitude
// or more past the slowest real case, so no honest profile meets one; what
// they exclude are the values that are not slow hardware but mistakes (a
// step of hours, a kilowatt per FLOP). They also keep the step time of any
// batch an engine runs finite and inside the simulator's nanosecond clock,
// where an unbounded coefficient (1e19 ns) used to overflow to a zero-time
// step; MaxStepNs catches what a bounded coefficient times an absurd
// batch still makes of it.
const (
	// MaxFixedNs bounds the per-step and per-request constants
	// (step_base_ns, host_overhead_ns, executor_host_ns, frontend_ns) and every point of a
	// linear curve: 100 s. A step's fixed cost is mostly one read of the
	// weights: 2 TB (a trillion parameters in BF16) streamed from host
	// memory over PCIe 4 x16 (25 GB/s), the slowest way an engine serves,
	// takes 80 s.
	MaxFixedNs = 1e11
	// MaxPerTokenNs bounds the per-token and per-sequence costs
	// (prefill_ns_per_token, decode_ns_per_seq,
	// frontend_ns_per_input_token): 1 s. A token's linear layers are 2
	// FLOPs per weight, 2 TFLOP for a trillion-parameter model: 1 s at
	// 2 TFLOP/s, a tenth of a 2016 GPU's (P100) half-precision peak.
	MaxPerTokenNs = 1e9
	// MaxPerPairNs bounds the attention costs per (token, context token)
	// pair and per context token read (prefill_attn_ns_per_token_ctx,
	// prefill_attn_ns_per_pair, decode_ns_per_ctx_token): 1 ms. A pair
	// costs 4·layers·heads·head_dim FLOPs, under 4·128³ ≈ 8.4 MFLOP for
	// any model served today (Llama 3.1 405B: 8.3), 4 µs at 2 TFLOP/s; a
	// token's KV is at most 2·128·128·128·2 B ≈ 8.4 MB (with as many KV
	// heads as query heads), 0.34 ms over PCIe.
	MaxPerPairNs = 1e6
	// MaxLinearScale bounds linear_scale: 1,000. It carries a measured
	// layer curve to the deployment's library; calibrated values lie
	// within a factor of two of 1, and a library 1,000 times slower than
	// the measured one would be another machine.
	MaxLinearScale = 1e3
	// MaxNoiseSigma bounds noise_sigma: 2. At σ = 2 one step in 40 already
	// takes over 50 times the median (e^2σ); measured run-to-run spread is
	// a few per cent.
	MaxNoiseSigma = 2
	// MaxPowerW bounds the power draws (power_idle_w, power_busy_w,
	// power_cap_w) of one GPU: 10 kW. The largest boards draw 1.0–1.4 kW
	// (B200, MI355X).
	MaxPowerW = 1e4
	// MaxPJPerFLOP bounds power_pj_per_flop: 1,000 pJ. An H100 spends
	// about 1 pJ per FLOP, a 2012 GPU (K20, 225 W at 3.5 TFLOP/s) 64 pJ.
	MaxPJPerFLOP = 1e3
	// MaxFLOPsPerToken bounds flops_per_token and flops_per_seq (2 FLOPs
	// per weight): 1e15, a 500-trillion-parameter model on one GPU.
	MaxFLOPsPerToken = 1e15
	// MaxFLOPsPerPair bounds attn_flops_per_pair (4·layers·heads·head_dim
	// per GPU): 1e12, over 100,000 times Llama 3.1 405B's 8.3 MFLOP.
	MaxFLOPsPerPair = 1e12
	// MaxStepNs is the longest engine step the simulator runs: one hour.
	// Coefficients within their bounds can still multiply into a longer
	// step with an absurd batch (millions of tokens of context at 1 ms
	// each); a run stops with an error at such a step rather than pass it
	// off as a result.
	MaxStepNs = 3600e9
)

// quantity writes v with the coefficient's unit, and, for a time from a
// millisecond to about a day, in human units too: "1e+11 ns/step (1m40s)".
func (c Coefficient) quantity(v float64) string {
	s := strconv.FormatFloat(v, 'g', -1, 64)
	if c.Unit != "" {
		s += " " + c.Unit
	}
	if strings.HasPrefix(c.Unit, "ns") && v >= 1e6 && v < 1e14 {
		s += " (" + time.Duration(v).Round(time.Millisecond).String() + ")"
	}
	return s
}

// Forms is a set of profile forms.
type Forms uint8

// The profile forms.
const (
	FormLinear Forms = 1 << iota
	FormKernel
	FormBoth = FormLinear | FormKernel
)

// Has says whether a profile of p's form carries the coefficient.
func (c Coefficient) Has(p *Profile) bool { return c.Forms&formOf(p) != 0 }

func formOf(p *Profile) Forms {
	if p != nil && p.IsKernel() {
		return FormKernel
	}
	return FormLinear
}

// Coefficients lists every numeric coefficient of a profile.
var Coefficients = []Coefficient{
	{Name: "step_base_ns", Unit: "ns/step", Doc: "fixed cost of every step: reading the weights, scheduler, launch gaps",
		Field: func(p *Profile) *float64 { return &p.StepBaseNs }, Forms: FormBoth, Fit: FormBoth, Step: true, Max: MaxFixedNs},
	{Name: "linear_scale", Unit: "×", Doc: "multiplier on the compute-bound growth of the measured token-wise layer curve (kernel profiles)",
		Field: func(p *Profile) *float64 { return &p.LinearScale }, Forms: FormKernel, Fit: FormKernel, Step: true, Max: MaxLinearScale},
	{Name: "prefill_ns_per_token", Unit: "ns/token", Doc: "cost per prefill token (a kernel profile: beyond the layer curve)",
		Field: func(p *Profile) *float64 { return &p.PrefillNsPerToken }, Forms: FormBoth, Fit: FormLinear, Step: true, Ref: 1e3, Max: MaxPerTokenNs},
	{Name: "prefill_attn_ns_per_token_ctx", Unit: "ns/(token·ctx)", Doc: "prefill attention per token times its chunk's end context (linear profiles)",
		Field: func(p *Profile) *float64 { return &p.PrefillAttnNsPerTokenCtx }, Forms: FormLinear, Fit: FormLinear, Step: true, Max: MaxPerPairNs},
	{Name: "prefill_attn_ns_per_pair", Unit: "ns/pair", Doc: "prefill attention per causal (query, key) pair (kernel profiles)",
		Field: func(p *Profile) *float64 { return &p.PrefillAttnNsPerPair }, Forms: FormKernel, Fit: FormKernel, Step: true, Max: MaxPerPairNs},
	{Name: "decode_ns_per_seq", Unit: "ns/seq", Doc: "cost per decoding sequence (lm_head, sampler, bookkeeping)",
		Field: func(p *Profile) *float64 { return &p.DecodeNsPerSeq }, Forms: FormBoth, Fit: FormBoth, Step: true, Ref: 20e3, Max: MaxPerTokenNs},
	{Name: "decode_ns_per_ctx_token", Unit: "ns/token", Doc: "decode attention: reading one context token's KV",
		Field: func(p *Profile) *float64 { return &p.DecodeNsPerCtxToken }, Forms: FormBoth, Fit: FormBoth, Step: true, Max: MaxPerPairNs},
	{Name: "frontend_ns", Unit: "ns/request", Doc: "frontend delay before routing (HTTP, templating)",
		Field: func(p *Profile) *float64 { return &p.FrontendNs }, Forms: FormBoth, Fit: FormBoth, Ref: 5e6, Max: MaxFixedNs},
	{Name: "frontend_ns_per_input_token", Unit: "ns/token", Doc: "frontend delay per input token (tokenisation)",
		Field: func(p *Profile) *float64 { return &p.FrontendNsPerInputToken }, Forms: FormBoth, Ref: 1e3, Max: MaxPerTokenNs},
	{Name: "executor_host_ns", Unit: "ns/iteration", Doc: "host time of one iteration of TensorRT-LLM's executor loop (TensorRT-LLM workers; routesim stacks)",
		Field: func(p *Profile) *float64 { return &p.ExecutorHostNs }, Forms: FormBoth, Ref: 5e5, Max: MaxFixedNs},
	{Name: "host_overhead_ns", Unit: "ns/step", Doc: "GPU-idle part of every step (scheduling, eager-mode launch gaps); not in NVML utilisation",
		Field: func(p *Profile) *float64 { return &p.HostOverheadNs }, Forms: FormBoth, Fit: FormBoth, Max: MaxFixedNs},
	{Name: "noise_sigma", Doc: "σ of the lognormal factor on every step time",
		Field: func(p *Profile) *float64 { return &p.NoiseSigma }, Max: MaxNoiseSigma},
	{Name: "power_idle_w", Unit: "W", Doc: "power at 0 % NVML utilisation",
		Field: func(p *Profile) *float64 { return &p.PowerIdleW }, Max: MaxPowerW},
	{Name: "power_busy_w", Unit: "W", Doc: "power at 100 % NVML utilisation (executing no FLOPs, with power_pj_per_flop)",
		Field: func(p *Profile) *float64 { return &p.PowerBusyW }, Max: MaxPowerW},
	{Name: "power_pj_per_flop", Unit: "pJ/FLOP", Doc: "energy of one executed FLOP on one GPU (0 = power from utilisation alone)",
		Field: func(p *Profile) *float64 { return &p.PowerPJPerFLOP }, Max: MaxPJPerFLOP},
	{Name: "power_cap_w", Unit: "W", Doc: "the board's power limit (0 = none)",
		Field: func(p *Profile) *float64 { return &p.PowerCapW }, Max: MaxPowerW},
	{Name: "flops_per_token", Unit: "FLOP/token", Doc: "linear-layer work per token on one GPU (model shape / TP; not fitted)",
		Field: func(p *Profile) *float64 { return &p.FLOPsPerToken }, Max: MaxFLOPsPerToken},
	{Name: "flops_per_seq", Unit: "FLOP/seq", Doc: "lm_head work per sampled sequence on one GPU (not fitted)",
		Field: func(p *Profile) *float64 { return &p.FLOPsPerSeq }, Max: MaxFLOPsPerToken},
	{Name: "attn_flops_per_pair", Unit: "FLOP/pair", Doc: "attention work per (query, key) pair on one GPU (not fitted)",
		Field: func(p *Profile) *float64 { return &p.AttnFLOPsPerPair }, Max: MaxFLOPsPerPair},
}

// Fitted lists, in table order, the coefficients a calibration fits by
// default for a profile of p's form.
func Fitted(p *Profile) []string {
	var out []string
	for _, c := range Coefficients {
		if c.Fit&formOf(p) != 0 {
			out = append(out, c.Name)
		}
	}
	return out
}

// StepCoefficients lists, in table order, the coefficients that multiply a
// step-time feature in a profile of p's form.
func StepCoefficients(p *Profile) []string {
	var out []string
	for _, c := range Coefficients {
		if c.Step && c.Has(p) {
			out = append(out, c.Name)
		}
	}
	return out
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
		return m.StepWeightBytes(d.Quant, 1) / tp / bw * 1e9
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
		params := m.linearActiveF() / tp
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

// SetFLOPs fills p's work counts for deployment d, per GPU (what a
// FLOP-rate power line needs): 2 FLOPs per linear weight per token, the
// lm_head row per sampled sequence, 4·layers·heads·head_dim per attended
// pair, all split over TP.
func (d Deployment) SetFLOPs(p *Profile) {
	tp := float64(max(d.TP, 1))
	m := d.Model
	p.FLOPsPerToken = 2 * m.linearActiveF() / tp
	p.FLOPsPerSeq = 2 * float64(m.Vocab) * float64(m.Hidden) / tp
	p.AttnFLOPsPerPair = 4 * float64(m.Layers*m.Heads*m.HeadDim) / tp
}

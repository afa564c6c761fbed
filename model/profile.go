package model

import (
	"bytes"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"path"
	"sort"
	"strings"

	"github.com/routesim/routesim/internal/inputerr"
)

//go:embed data/profiles/*.json
var profileFS embed.FS

// Batch summarises one engine step, the only input of a step-time model.
type Batch struct {
	// PrefillTokens is P, the uncached prompt tokens computed in the step.
	PrefillTokens int
	// PrefillTokenCtx is Σ p_i·ctx_i over prefill chunks: chunk size times the
	// context length at the chunk's end (the attention term).
	PrefillTokenCtx float64
	// DecodeSeqs is D, requests generating one token in the step.
	DecodeSeqs int
	// DecodeCtxTokens is Σ ctx_d, the context lengths of those requests.
	DecodeCtxTokens int
	// PrefillAttnPairs counts the (query, key) pairs causal attention
	// computes over the step's prefill chunks: a chunk of p tokens after c
	// computed ones attends p·c + p(p+1)/2 pairs.
	PrefillAttnPairs float64
}

// Profile is a step-time model for one (GPU, LLM, TP, engine) combination:
//
//	t = c0 + k·(lin(P + D) − lin(1)) + c1·P + c2·Σ(p_i·ctx_i) + c2'·pairs + c3·D + c4·Σctx_d   (nanoseconds)
//
// A kernel profile carries lin, the measured time of the token-wise layers
// (GEMMs, norms, activation) for the step's tokens: its one-token time (the
// weight read every step pays) is part of c0, and its growth beyond that
// (LinearCurve.Compute, the compute-bound GEMMs) is scaled by k
// (linear_scale: the measured kernels' library is not the deployment's);
// its attention term counts causal (query, key) pairs (c2'). A linear profile (BLIS-style, no
// curve) has k = c2' = 0 and folds the GEMMs into c0 and c1. Add a
// per-request frontend delay before the router sees a request and an
// optional multiplicative lognormal service noise. All coefficients are ≥ 0.
type Profile struct {
	Name  string `json:"name"`
	GPU   string `json:"gpu"`
	Model string `json:"model"`
	TP    int    `json:"tp"`
	Quant Quant  `json:"quant"`
	// Kind says where the coefficients come from: "measured" (fitted to runs
	// of this exact pair), "transfer" (measured on a neighbouring pair) or
	// "roofline" (estimated from peak FLOP/s and bandwidth).
	Kind   string `json:"kind"`
	Source string `json:"source"`
	Note   string `json:"note,omitempty"`
	// Stack is the serving stack whose fixed costs the profile carries
	// (Stacks; empty: the vLLM stack it was measured on, unnamed).
	Stack string `json:"stack,omitempty"`

	StepBaseNs               float64 `json:"step_base_ns"`                  // c0
	PrefillNsPerToken        float64 `json:"prefill_ns_per_token"`          // c1
	PrefillAttnNsPerTokenCtx float64 `json:"prefill_attn_ns_per_token_ctx"` // c2
	DecodeNsPerSeq           float64 `json:"decode_ns_per_seq"`             // c3
	DecodeNsPerCtxToken      float64 `json:"decode_ns_per_ctx_token"`       // c4

	// LinearCurve and LinearScale (k) make a kernel profile; see Profile.
	LinearCurve *LinearCurve `json:"linear_curve,omitempty"`
	// LinearScale multiplies the curve's compute-bound growth.
	LinearScale float64 `json:"linear_scale,omitempty"`
	// PrefillAttnNsPerPair (c2') is the prefill attention cost per causal
	// (query, key) pair.
	PrefillAttnNsPerPair float64 `json:"prefill_attn_ns_per_pair,omitempty"`

	// FrontendNs and FrontendNsPerInputToken delay a request between its
	// arrival and its routing (HTTP, templating, tokenisation).
	FrontendNs              float64 `json:"frontend_ns"`
	FrontendNsPerInputToken float64 `json:"frontend_ns_per_input_token"`
	// ExecutorHostNs is the host time of one iteration of TensorRT-LLM's
	// executor loop (TensorRT-LLM workers only; vLLM's host time is
	// inside its step time): see the dynamo-trtllm stack.
	ExecutorHostNs float64 `json:"executor_host_ns,omitempty"`
	// NoiseSigma is σ of the lognormal factor applied to every step time
	// (0 = deterministic service).
	NoiseSigma float64 `json:"noise_sigma"`
	// HostOverheadNs is the part of every step during which the GPU runs
	// no kernel (scheduling, kernel launches in eager mode): it counts in
	// step time but not in NVML utilisation.
	HostOverheadNs float64 `json:"host_overhead_ns"`
	// PowerIdleW and PowerBusyW are the GPU's power draw at 0 % and 100 %
	// NVML utilisation; power is linear in between. With PowerPJPerFLOP
	// set, PowerBusyW is the draw of busy kernels that execute no FLOPs
	// (weight and KV reads) and every FLOP adds its energy (see PowerAt).
	PowerIdleW float64 `json:"power_idle_w"`
	PowerBusyW float64 `json:"power_busy_w"`
	// PowerPJPerFLOP is the energy of one executed FLOP in picojoules, per
	// GPU (0 = power depends on utilisation alone).
	PowerPJPerFLOP float64 `json:"power_pj_per_flop,omitempty"`
	// PowerCapW is the board's power limit, which the GPU enforces by
	// lowering its clocks (0 = none).
	PowerCapW float64 `json:"power_cap_w,omitempty"`
	// FLOPsPerToken, FLOPsPerSeq and AttnFLOPsPerPair count the work of a
	// step on one GPU of the worker (physics of the model's shape, not
	// fitted): 2 FLOPs per linear weight per token, the lm_head row per
	// sampled sequence, 4·layers·heads·head_dim per attended (query, key)
	// pair; all divided by TP. Power uses them.
	FLOPsPerToken    float64 `json:"flops_per_token,omitempty"`
	FLOPsPerSeq      float64 `json:"flops_per_seq,omitempty"`
	AttnFLOPsPerPair float64 `json:"attn_flops_per_pair,omitempty"`
	// Engine is the serving engine whose steps the coefficients describe:
	// empty for vLLM, "trtllm" for TensorRT-LLM (EngineTRTLLM). A run
	// takes a built-in profile only for its own engine.
	Engine string `json:"engine,omitempty"`
	// TransferBase says what the fitted coefficients are relative to, so
	// that they can be carried to neighbouring deployments (Transfer):
	// "kernel-prior" (the deployment's kernel prior with CUDA graphs), or
	// empty (not a transfer source).
	TransferBase string `json:"transfer_base,omitempty"`
	// FitError says how well the coefficients reproduce their source data.
	FitError string `json:"fit_error,omitempty"`
	// Posterior is the calibration's uncertainty about the coefficients
	// (absent for profiles that were not calibrated with priors).
	Posterior *Posterior `json:"posterior,omitempty"`
}

// PowerW is the power draw at NVML utilisation util in [0, 1] when power
// depends on utilisation alone (PowerAt with no compute-bound share).
func (p *Profile) PowerW(util float64) float64 {
	return p.PowerIdleW + (p.PowerBusyW-p.PowerIdleW)*util
}

// PowerAt is the power draw over a sampling window in which the GPU ran
// kernels a share util of the time and executed flopsPerS FLOP/s:
//
//	P = idle + util·(busy − idle) + PowerPJPerFLOP·flopsPerS, at most PowerCapW
//
// Memory-bound decode (weight and KV reads) draws far less than the
// tensor cores do: ML.ENERGY's H100 sweeps rise from 430–490 W at batch 8
// to the 700 W limit as the batch, and with it the FLOP rate, grows
// (testdata/mlenergy-h100-v3). Without PowerPJPerFLOP and PowerCapW
// it is PowerW(util).
func (p *Profile) PowerAt(util, flopsPerS float64) float64 {
	if !p.FLOPPower() {
		return p.PowerW(util)
	}
	w := p.PowerW(util) + p.PowerPJPerFLOP*1e-12*flopsPerS
	if p.PowerCapW > 0 {
		w = math.Min(w, p.PowerCapW)
	}
	return w
}

// FLOPPower says whether the profile's power depends on more than
// utilisation (the FLOP rate or a power limit).
func (p *Profile) FLOPPower() bool { return p.PowerPJPerFLOP > 0 || p.PowerCapW > 0 }

// StepFLOPs is the work of batch b's step on one GPU of the worker.
func (p *Profile) StepFLOPs(b Batch) float64 {
	ctx := b.PrefillAttnPairs
	if ctx == 0 {
		ctx = b.PrefillTokenCtx
	}
	return p.FLOPsPerToken*float64(b.PrefillTokens+b.DecodeSeqs) + p.FLOPsPerSeq*float64(b.DecodeSeqs) +
		p.AttnFLOPsPerPair*(ctx+float64(b.DecodeCtxTokens))
}

// StepNs is the step time of batch b in nanoseconds, before noise.
func (p *Profile) StepNs(b Batch) float64 {
	return p.StepNsWithCurve(b, p.CurveNs(b.PrefillTokens+b.DecodeSeqs))
}

// CurveNs is a kernel profile's token-wise layer term for a step of
// tokens tokens, k·lin(tokens) (0 for a linear profile): the part of StepNs
// that depends on the step's token count alone.
func (p *Profile) CurveNs(tokens int) float64 {
	if p.LinearCurve == nil {
		return 0
	}
	return p.LinearScale * p.LinearCurve.Compute(tokens)
}

// StepNsWithCurve is StepNs(b) given its curve term (CurveNs of b's
// tokens), bit for bit: steps with the same token count share the term.
func (p *Profile) StepNsWithCurve(b Batch, curve float64) float64 {
	return p.StepNsFromHead(p.StepHeadNs(b), b.DecodeCtxTokens, curve)
}

// StepHeadNs is the part of StepNs(b) that does not depend on the decode
// context: c0 + c1·P + c2·Σ(p_i·ctx_i) + c2'·pairs + c3·D, summed in
// StepNs's order. A decode run's steps differ only in their context, so
// it evaluates them from one head with StepNsFromHead, bit for bit.
func (p *Profile) StepHeadNs(b Batch) float64 {
	return float64(p.StepBaseNs +
		p.PrefillNsPerToken*float64(b.PrefillTokens) +
		p.PrefillAttnNsPerTokenCtx*b.PrefillTokenCtx +
		p.PrefillAttnNsPerPair*b.PrefillAttnPairs +
		p.DecodeNsPerSeq*float64(b.DecodeSeqs))
}

// StepNsFromHead completes StepNs from its head (StepHeadNs), the batch's
// decode context tokens and its curve term (CurveNs of its tokens).
func (p *Profile) StepNsFromHead(head float64, decodeCtxTokens int, curve float64) float64 {
	t := head + p.DecodeNsPerCtxToken*float64(decodeCtxTokens)
	if p.LinearCurve != nil {
		t += curve
	}
	return t
}

// IsKernel says whether p is a kernel profile (it carries a linear curve).
func (p *Profile) IsKernel() bool { return p.LinearCurve != nil }

// FrontendDelayNs is the delay between a request's arrival and its routing.
func (p *Profile) FrontendDelayNs(inputTokens int) float64 {
	return p.FrontendNs + p.FrontendNsPerInputToken*float64(inputTokens)
}

// Validate reports every problem with the profile at once.
func (p *Profile) Validate() error {
	var errs []error
	bad := func(format string, a ...any) { errs = append(errs, fmt.Errorf(format, a...)) }
	if p.Name == "" {
		bad("name: empty")
	}
	if p.GPU == "" || p.Model == "" {
		bad("gpu and model must be named")
	}
	if p.TP < 1 {
		bad("tp: %d must be ≥ 1", p.TP)
	}
	if _, err := ParseQuant(string(p.Quant)); err != nil {
		bad("quant: %v", err)
	}
	switch p.Kind {
	case "measured", "transfer", "roofline":
	default:
		bad("kind: %q must be measured, transfer or roofline", p.Kind)
	}
	if _, ok := StackByName(p.Stack); p.Stack != "" && !ok {
		bad("stack: %q must be one of %s (or empty)", p.Stack, strings.Join(StackNames(), ", "))
	}
	if p.Engine != "" && p.Engine != EngineTRTLLM {
		bad("engine: %q must be empty (vLLM) or %s", p.Engine, EngineTRTLLM)
	}
	for _, c := range Coefficients {
		switch v := *c.Field(p); {
		case v < 0 || math.IsNaN(v) || math.IsInf(v, 0):
			bad("%s: %g must be a finite number ≥ 0", c.Name, v)
		case v > c.Max:
			bad("%s: %s exceeds %s, more than any real deployment takes (a unit or typing mistake?)", c.Name, c.quantity(v), c.quantity(c.Max))
		}
	}
	if p.LinearCurve != nil {
		if err := p.LinearCurve.validate(); err != nil {
			errs = append(errs, err)
		}
		if p.LinearScale <= 0 {
			bad("linear_scale: %g must be > 0 with a linear_curve", p.LinearScale)
		}
	} else if p.LinearScale != 0 {
		bad("linear_scale: %g given without a linear_curve", p.LinearScale)
	}
	if p.Posterior != nil {
		if err := p.Posterior.validate(); err != nil {
			errs = append(errs, err)
		}
	}
	if p.StepNs(Batch{PrefillTokens: 1}) <= 0 || p.StepNs(Batch{DecodeSeqs: 1}) <= 0 {
		bad("a step must take time: step_base_ns and the per-token coefficients are all 0")
	}
	if p.PowerBusyW < p.PowerIdleW {
		bad("power_busy_w %g must be ≥ power_idle_w %g", p.PowerBusyW, p.PowerIdleW)
	}
	if p.PowerPJPerFLOP > 0 && p.FLOPsPerToken <= 0 {
		bad("power_pj_per_flop needs flops_per_token")
	}
	if p.PowerCapW > 0 && p.PowerCapW < p.PowerIdleW {
		bad("power_cap_w %g must be ≥ power_idle_w %g", p.PowerCapW, p.PowerIdleW)
	}
	if len(errs) == 0 {
		return nil
	}
	return fmt.Errorf("profile %q: %w", p.Name, errors.Join(errs...))
}

// ReadProfile decodes and validates one profile of at most
// inputerr.MaxSmallFile bytes; name labels errors.
func ReadProfile(r io.Reader, name string) (*Profile, error) {
	b, err := inputerr.ReadAll(r, name, inputerr.MaxSmallFile)
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var p Profile
	if err := dec.Decode(&p); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if err := p.Validate(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return &p, nil
}

// BuiltinProfiles returns the embedded profiles, sorted by name.
func BuiltinProfiles() []*Profile {
	entries, err := profileFS.ReadDir("data/profiles")
	if err != nil {
		panic("model: embedded profiles missing: " + err.Error())
	}
	var out []*Profile
	for _, e := range entries {
		name := path.Join("data/profiles", e.Name())
		b, err := profileFS.ReadFile(name)
		if err != nil {
			panic("model: " + err.Error())
		}
		p, err := readEmbedded[Profile](b, true)
		if err == nil {
			err = p.Validate()
		}
		if err != nil {
			panic("model: embedded profile " + name + " invalid: " + err.Error())
		}
		out = append(out, p)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// KernelPriorName is the profile name (--profile kernel-prior) that asks
// for the deployment's kernel prior instead of a file.
const KernelPriorName = "kernel-prior"

// ProfileFor returns the default profile for the deployment, always of the
// kernel form (a layer curve, attention over the context, KV reads): the
// built-in measured kernel profile (FindProfile); where none was measured,
// a transfer of the closest measured profile of the same model (Transfer),
// else its kernel prior (measured kernel curves transferred to it; eager:
// vLLM's --enforce-eager), and the roofline estimate only if even that
// cannot be built. A linear fit is never the default (BLISProfileFor).
func ProfileFor(d Deployment, eager bool) *Profile {
	if p, err := FindProfile(d.GPU.Name, d.Model.Name, d.TP); err == nil && p.Quant == d.Quant {
		return p
	}
	cat := DefaultCatalogue()
	if src, from, ok := transferSource(d, cat, TransferBaseKernelPrior); ok {
		if p, err := Transfer(src, from, d, eager); err == nil {
			return p
		}
	}
	if p, _, err := KernelPrior(d, cat, eager); err == nil {
		return p
	}
	return Roofline(d)
}

// TRTLLMProfileFor returns the step-time profile of deployment d served
// by TensorRT-LLM (--engine trtllm): the built-in profile fitted to
// TensorRT-LLM's published throughput for d, else one of the same model
// (on d's GPU, else on one of its architecture; same weights' precision
// first, then the nearest TP) carried to d through the TensorRT-LLM
// kernel prior (Transfer: kind "transfer", flagged in its name, source
// and note); nil if there is none, and a run then keeps d's vLLM profile
// (ProfileFor) and says so.
func TRTLLMProfileFor(d Deployment) *Profile {
	for _, p := range BuiltinProfiles() {
		if p.Engine == EngineTRTLLM && p.Quant == d.Quant && p.TP == d.TP &&
			strings.EqualFold(p.GPU, d.GPU.Name) && strings.EqualFold(p.Model, d.Model.Name) {
			return p
		}
	}
	if src, from, ok := transferSource(d, DefaultCatalogue(), TransferBaseTRTLLMKernelPrior); ok {
		if p, err := Transfer(src, from, d, false); err == nil {
			return p
		}
	}
	return nil
}

// FindProfile returns the built-in measured vLLM kernel profile for a GPU,
// model and TP degree, the first by name. Linear fits (BLIS's, without
// attention over the context or KV reads) are never a default: they are
// asked for by name (BLISProfileFor). Profiles of other engines
// (Profile.Engine) are not candidates.
func FindProfile(gpu, llm string, tp int) (*Profile, error) {
	var have []string
	for _, p := range BuiltinProfiles() {
		if p.Engine != "" || !p.IsKernel() {
			continue
		}
		if strings.EqualFold(p.GPU, gpu) && strings.EqualFold(p.Model, llm) && p.TP == tp {
			return p, nil
		}
		have = append(have, fmt.Sprintf("%s/%s/tp%d", p.GPU, p.Model, p.TP))
	}
	return nil, fmt.Errorf("model: no built-in profile for %s/%s/tp%d (have: %s); pass --profile FILE.json",
		gpu, llm, tp, strings.Join(have, ", "))
}

package model

import (
	"fmt"
	"math"
	"sort"
	"strings"
)

// TransferBaseKernelPrior marks a measured profile whose coefficients were
// fitted starting from its deployment's kernel prior with CUDA graphs
// (Profile.TransferBase): how far each moved from the prior is what
// transfers to a neighbouring deployment.
const TransferBaseKernelPrior = "kernel-prior"

// transferred lists the coefficients whose measured/prior ratio carries
// over to another deployment: those a fit to decode-dominated steady
// states pins. The rest keep the target's prior.
var transferred = []string{"step_base_ns", "linear_scale", "decode_ns_per_seq", "decode_ns_per_ctx_token"}

// transferredTRTLLM are the efficiency terms of a TensorRT-LLM fit
// (TRTLLMKernelPrior) that carry over: the step base, the linear layers,
// context and decode attention, and the per-sequence cost (ratio 1 when
// the fit left it at its prior).
var transferredTRTLLM = []string{"step_base_ns", "linear_scale", "prefill_attn_ns_per_pair", "decode_ns_per_seq", "decode_ns_per_ctx_token"}

// Transfer carries the measured profile src of deployment from to
// deployment to through the kernel step model: to's kernel prior (its
// layer curve, attention, KV reads, lm_head and TP all-reduces from the
// catalogue's shapes and peaks) with each fitted coefficient scaled by how
// far src's fit moved it from from's prior. What the model cannot carry
// is assumed and listed in the note: the same per-FLOP energy on the same
// silicon (halved for FP8, whose peak rate doubles at the same power), the
// same busy draw above idle, the same frontend and host overhead.
func Transfer(src *Profile, from, to Deployment, eager bool) (*Profile, error) {
	cat := DefaultCatalogue()
	var pf, pt *Profile
	var err error
	names := transferred
	switch src.TransferBase {
	case TransferBaseKernelPrior:
		if pf, _, err = KernelPrior(from, cat, false); err == nil {
			pt, _, err = KernelPrior(to, cat, eager)
		}
	case TransferBaseTRTLLMKernelPrior:
		names = transferredTRTLLM
		if pf, _, err = TRTLLMKernelPrior(from, cat); err == nil {
			pt, _, err = TRTLLMKernelPrior(to, cat)
		}
	default:
		return nil, fmt.Errorf("model: %s has no transfer base", src.Name)
	}
	if err != nil {
		return nil, err
	}
	out := *pt
	var ratios []string
	for _, name := range names {
		c, _ := CoefficientByName(name)
		r := *c.Field(src) / *c.Field(pf)
		if !(r > 0) || math.IsInf(r, 0) {
			return nil, fmt.Errorf("model: %s: %s has no usable ratio to its prior", src.Name, name)
		}
		*c.Field(&out) *= r
		ratios = append(ratios, fmt.Sprintf("%s ×%.2f", name, r))
	}
	if !eager {
		out.HostOverheadNs = src.HostOverheadNs
	}
	out.FrontendNs, out.FrontendNsPerInputToken = src.FrontendNs, src.FrontendNsPerInputToken
	out.NoiseSigma = src.NoiseSigma
	out.PowerIdleW, out.PowerCapW = to.GPU.IdleWatts, to.GPU.TDPWatts
	out.PowerBusyW = to.GPU.IdleWatts + (src.PowerBusyW - src.PowerIdleW)
	out.PowerPJPerFLOP = src.PowerPJPerFLOP
	to.SetFLOPs(&out)
	var assumed []string
	if from.GPU.Name != to.GPU.Name {
		assumed = append(assumed, fmt.Sprintf("%s's weight, KV and lm_head reads at its own %.2f TB/s and its peak FLOP/s, its KV capacity from its memory (the kernel prior), with %s's measured/prior ratios; %s's per-FLOP energy and busy draw above idle (same kernel library: %s)",
			to.GPU.Name, to.GPU.HBMBytesPerSec/1e12, from.GPU.Name, from.GPU.Name, to.GPU.KernelLibrary))
	}
	switch {
	case from.Quant != to.Quant && to.Quant == FP8 && to.GPU.FP8FLOPS > 0:
		out.PowerPJPerFLOP *= to.GPU.BF16FLOPS / to.GPU.FP8FLOPS
		assumed = append(assumed, "FP8 weights: energy per FLOP scaled by the BF16/FP8 peak ratio; FP8 GEMM efficiency as the layer curve's byte and FLOP ratios say, not measured")
	case from.Quant != to.Quant && from.Quant == FP8 && from.GPU.FP8FLOPS > 0:
		out.PowerPJPerFLOP *= from.GPU.FP8FLOPS / from.GPU.BF16FLOPS
		assumed = append(assumed, "BF16 weights from an FP8 measurement: energy per FLOP scaled by the FP8/BF16 peak ratio")
	}
	if from.TP != to.TP {
		assumed = append(assumed, fmt.Sprintf("TP %d → %d: all-reduces per the kernel prior (%.0f µs each, link %.0f GB/s at %.0f %%)", from.TP, to.TP, PriorAllReduceLatencyNs/1e3, to.GPU.LinkBytesPerSec/1e9, 100*PriorAllReduceBusEfficiency))
	}
	assumed = append(assumed, "frontend delay, host overhead and service noise as measured on "+src.Name)
	out.Kind = "transfer"
	engine, prior := "", "kernel prior"
	if src.TransferBase == TransferBaseTRTLLMKernelPrior {
		engine, prior = ".trtllm", "TensorRT-LLM kernel prior"
	}
	out.Name = fmt.Sprintf("%s.%s.tp%d.%s%s.transfer", strings.ToLower(to.GPU.Name), strings.ToLower(to.Model.Name), to.TP, to.Quant, engine)
	out.Source = fmt.Sprintf("%s%s (%s) to %s/%s/TP%d/%s through the kernel step model: its %s with the measured/prior ratios %s",
		transferPrefix, src.Name, src.Kind, to.GPU.Name, to.Model.Name, to.TP, to.Quant, prior, strings.Join(ratios, ", "))
	out.Note = "Transferred, not measured. Assumed: " + strings.Join(assumed, "; ") + "."
	out.FitError = "not fitted (transfer of " + src.Name + ": " + src.FitError + ")"
	out.Posterior = nil
	out.TransferBase = ""
	if err := out.Validate(); err != nil {
		return nil, err
	}
	return &out, nil
}

// transferPrefix opens a transfer's Source, followed by its source's name.
const transferPrefix = "transfer of "

// TransferredFrom names the measured profile p was transferred from
// (Transfer), if it was.
func TransferredFrom(p *Profile) (string, bool) {
	rest, ok := strings.CutPrefix(p.Source, transferPrefix)
	if !ok || p.Kind != "transfer" {
		return "", false
	}
	name, _, _ := strings.Cut(rest, " ")
	return name, true
}

// transferSource picks the measured profile with transfer base base a
// deployment without one is transferred from: the same model, on the same
// GPU first, then on a GPU of the same kernel library (architecture);
// within that, the same weights' precision, then the nearest TP degree.
func transferSource(d Deployment, cat *Catalogue, base string) (*Profile, Deployment, bool) {
	type cand struct {
		p    *Profile
		dep  Deployment
		rank [3]float64
	}
	var cands []cand
	for _, p := range BuiltinProfiles() {
		if p.TransferBase != base || !strings.EqualFold(p.Model, d.Model.Name) {
			continue
		}
		g, err := cat.GPU(p.GPU)
		if err != nil {
			continue
		}
		sameGPU := g.Name == d.GPU.Name
		if !sameGPU && (g.KernelLibrary != d.GPU.KernelLibrary || !g.KernelSameArchitecture || !d.GPU.KernelSameArchitecture) {
			continue
		}
		rank := [3]float64{1, 1, math.Abs(math.Log(float64(p.TP) / float64(max(d.TP, 1))))}
		if sameGPU {
			rank[0] = 0
		}
		if p.Quant == d.Quant {
			rank[1] = 0
		}
		dep := Deployment{GPU: g, Model: d.Model, TP: p.TP, Quant: p.Quant, KVDtypeBytes: 2, GPUMemoryUtilization: d.GPUMemoryUtilization}
		if p.Quant == FP8 {
			dep.KVDtypeBytes = 1
		}
		cands = append(cands, cand{p, dep, rank})
	}
	if len(cands) == 0 {
		return nil, Deployment{}, false
	}
	sort.SliceStable(cands, func(i, j int) bool {
		a, b := cands[i].rank, cands[j].rank
		for k := range a {
			if a[k] != b[k] {
				return a[k] < b[k]
			}
		}
		return cands[i].p.Name < cands[j].p.Name
	})
	return cands[0].p, cands[0].dep, true
}

// ClosestMeasured is the calibrated built-in profile whose frontend delay a
// profile without frontend data borrows (the frontend is the serving
// stack's, not the GPU's): one fitted to per-request latencies on the same
// GPU first, then any.
func ClosestMeasured(d Deployment) *Profile {
	var any *Profile
	for _, p := range BuiltinProfiles() {
		if p.Kind != "measured" || p.Posterior == nil || !strings.Contains(p.Source, "routesim calibrate \"") {
			continue
		}
		if strings.EqualFold(p.GPU, d.GPU.Name) {
			return p
		}
		if any == nil {
			any = p
		}
	}
	return any
}

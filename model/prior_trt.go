package model

import (
	"fmt"
	"math"
	"strings"
)

// TensorRT-LLM's step in the kernel step model. Its linear layers, context
// attention and decode attention are its own kernels (FP8 GEMMs, its
// context FMHA, XQA over an FP8 cache), not the libraries the kernel
// prior's curve and rates were measured with, and its executor overlaps
// host work with the GPU. The step model's form is the same; what differs
// are these efficiency terms, each a coefficient of the kernel profile
// with its own prior:
//
//   - linear efficiency: linear_scale, the layer curve's compute-bound
//     growth (centre 1: TensorRT-LLM's FP8 GEMMs reach the share of the FP8
//     peak the measured BF16 library reached of the BF16 peak);
//   - context attention: prefill_attn_ns_per_pair;
//   - decode attention (KV reads): decode_ns_per_ctx_token;
//   - step base: step_base_ns, the weight read, lm_head, TP all-reduces
//     and the executor's per-iteration host gap (PriorTRTLLMHostNs instead
//     of vLLM's scheduler).
const (
	// PriorTRTLLMHostNs is the GPU-idle part of a TensorRT-LLM step: the
	// PyTorch executor's host work per iteration, measured at ~0.58 ms
	// (NVIDIA/TensorRT-LLM issue #13957: Llama-3.1-8B FP8 on B200,
	// concurrency 64). The overlap scheduler (on by default) runs it while
	// the GPU computes the previous step, so at most this much shows
	// between steps; the prior keeps all of it, with a wide spread.
	PriorTRTLLMHostNs = 0.58e6
	// PriorTRTLLMLibrarySD is the prior log-sd of the linear efficiency:
	// TensorRT-LLM's FP8 GEMMs against a BF16 library measured by Vidur
	// and carried to FP8 by the peak ratio (±30 %).
	PriorTRTLLMLibrarySD = 0.3
	// PriorTRTLLMAttnSD is the prior log-sd of the context-attention
	// term: TensorRT-LLM's context FMHA runs in FP8 over an FP8 cache
	// (use_fp8_context_fmha), up to twice the BF16 rate the prior assumes.
	PriorTRTLLMAttnSD = 0.5
	// PriorTRTLLMKVSD is the prior log-sd of the decode-attention term
	// (XQA reading an FP8 cache against the generic 75 % of bandwidth).
	PriorTRTLLMKVSD = 0.3
)

// TransferBaseTRTLLMKernelPrior marks a profile fitted to TensorRT-LLM
// runs starting from TRTLLMKernelPrior (Profile.TransferBase): how far the
// fit moved each efficiency term from that prior transfers to another
// deployment's TensorRT-LLM prior (Transfer).
const TransferBaseTRTLLMKernelPrior = "trtllm-kernel-prior"

// EngineTRTLLM is Profile.Engine for a profile of TensorRT-LLM workers.
const EngineTRTLLM = "trtllm"

// TRTLLMKernelPrior is the prior kernel profile of a deployment served by
// TensorRT-LLM's PyTorch executor (CUDA graphs, overlap scheduler) and the
// prior of every coefficient a fit may move: KernelPrior's layer curve,
// attention, KV-read, lm_head and all-reduce terms, with the executor's
// host gap in place of vLLM's scheduler and the wider spreads of the
// efficiency terms TensorRT-LLM's kernels change (see PriorTRTLLMHostNs).
func TRTLLMKernelPrior(d Deployment, cat *Catalogue) (*Profile, []Prior, error) {
	p, priors, err := KernelPrior(d, cat, false)
	if err != nil {
		return nil, nil, err
	}
	// Steps past the measured curve's end are common here (no chunking: a
	// whole prompt in one step): continue it along its compute-bound line.
	p.LinearCurve = p.LinearCurve.Extended()
	base := p.StepBaseNs - PriorSchedulerNs + PriorTRTLLMHostNs
	read := p.LinearCurve.WeightRead()
	scaleSD := PriorTRTLLMLibrarySD
	if p.LinearCurve.CrossArchitecture {
		scaleSD = math.Max(scaleSD, PriorCrossArchSD)
	}
	baseSD := math.Sqrt(math.Pow(read*scaleSD, 2)+math.Pow((base-read)*0.5, 2)) / base
	p.StepBaseNs, p.HostOverheadNs = base, PriorTRTLLMHostNs
	p.Engine = EngineTRTLLM
	p.Name = strings.TrimSuffix(p.Name, "kernel-prior") + "trtllm-kernel-prior"
	p.Source = "TensorRT-LLM " + p.Source + fmt.Sprintf("; executor host gap %.2f ms per step (overlap scheduler) instead of vLLM's scheduler", PriorTRTLLMHostNs/1e6)
	for i := range priors {
		pr := &priors[i]
		switch pr.Name {
		case "linear_scale":
			pr.LogSD, pr.Source = scaleSD, fmt.Sprintf("TensorRT-LLM's GEMMs against the measured library carried to %s by FLOP and byte ratios: ±%.0f %%", d.Quant, 100*scaleSD)
		case "step_base_ns":
			pr.Centre, pr.LogSD = base, baseSD
			pr.Source = fmt.Sprintf("measured one-token weight read %.2f ms (±%.0f %%) + lm_head, attention floor, TP all-reduces and %.2f ms of executor host gap (TensorRT-LLM issue #13957; hidden by the overlap scheduler, so at most this), ±50 %%",
				read/1e6, 100*scaleSD, PriorTRTLLMHostNs/1e6)
		case "host_overhead_ns":
			pr.Centre, pr.Source = PriorTRTLLMHostNs, "the executor's per-iteration host work (TensorRT-LLM issue #13957), at most this between steps under the overlap scheduler"
		case "prefill_attn_ns_per_pair":
			pr.LogSD = math.Max(pr.LogSD, PriorTRTLLMAttnSD)
			pr.Source += fmt.Sprintf("; TensorRT-LLM's context FMHA (FP8 with an FP8 cache) is not that kernel: ±%.0f %%", 100*pr.LogSD)
		case "decode_ns_per_ctx_token":
			pr.LogSD = math.Max(pr.LogSD, PriorTRTLLMKVSD)
			pr.Source += fmt.Sprintf("; TensorRT-LLM's XQA decode kernel: ±%.0f %%", 100*pr.LogSD)
		}
	}
	return p, priors, nil
}

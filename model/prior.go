package model

import (
	"fmt"
	"math"
)

// Prior is a calibration's belief about one coefficient before it sees any
// measured run: log-normal around Centre with sd LogSD (in log units), and
// where the belief comes from.
type Prior struct {
	Name   string  `json:"name"`
	Centre float64 `json:"centre"`
	LogSD  float64 `json:"log_sd"`
	Source string  `json:"source"`
}

// Prior efficiencies and fixed costs of the kernel step model. Each is a
// documented judgement from public measurements, with a spread wide enough
// to hold the measurements it comes from.
const (
	// PriorAttnEfficiency: FlashAttention-2 forward reaches 50–73 % of A100
	// BF16 peak at head dim 128 (the FlashAttention-2 paper, Dao 2023, A100
	// forward benchmarks); vLLM's chunked prefill
	// over a paged cache runs below a dense benchmark.
	PriorAttnEfficiency = 0.5
	// PriorKVEfficiency: paged decode attention reads KV at 70–85 % of HBM
	// bandwidth (vLLM's paged-attention and FlashInfer decode benchmarks).
	PriorKVEfficiency = 0.75
	// PriorHBMEfficiency: share of peak bandwidth for the lm_head read;
	// Vidur's one-token GEMM times read Llama-3-8B's weights at 70 % of the
	// A100-80GB's 2.039 TB/s.
	PriorHBMEfficiency = 0.7
	// PriorSchedulerNs: vLLM V1's per-step CPU work outside kernels
	// (scheduling, input preparation, sampling bookkeeping) with CUDA graphs.
	PriorSchedulerNs = 2e6
	// PriorEagerLaunchNsPerLayer: extra GPU-idle time per step under
	// --enforce-eager, per layer (≈15 PyTorch-dispatched kernels at ≈10 µs
	// of CPU each, partly hidden behind the GPU).
	PriorEagerLaunchNsPerLayer = 120e3
	// PriorKernelLibrarySD is the prior spread (log) of a measured layer
	// curve's two scales on the GPU it was measured on; PriorCrossArchSD on
	// another architecture.
	PriorKernelLibrarySD = 0.1
	PriorCrossArchSD     = 0.3
	// PriorAllReduceLatencyNs is one tensor-parallel all-reduce of a
	// decode-sized message: vLLM's custom all-reduce on H100 took
	// 8.5–11.8 µs for 512 B–32 KB at TP 2/4/8 (the vLLM column of SGLang
	// PR #2904's table).
	PriorAllReduceLatencyNs = 9e3
	// PriorAllReduceBusEfficiency is the share of the one-way link
	// bandwidth a large all-reduce reaches as bus bandwidth (nccl-tests'
	// busbw = 2(tp−1)/tp · bytes / time; NCCL's ring on NVLink reaches
	// 70–90 % of it).
	PriorAllReduceBusEfficiency = 0.8
)

// allReduceNs is the time of a tensor-parallel step's all-reduces: two per
// layer (after attention and after the MLP) of tokens·hidden activations
// in 16 bits, as a fixed part per step and a part per token (ring bus
// bytes 2(tp−1)/tp). 0 without TP.
func (d Deployment) allReduceNs() (perStep, perToken float64) {
	if d.TP <= 1 || d.GPU.LinkBytesPerSec <= 0 {
		return 0, 0
	}
	tp := float64(d.TP)
	n := 2 * float64(d.Model.Layers)
	bus := 2 * (tp - 1) / tp * 2 * float64(d.Model.Hidden)
	return n * PriorAllReduceLatencyNs, n * bus / (d.GPU.LinkBytesPerSec * PriorAllReduceBusEfficiency) * 1e9
}

// KernelPrior builds the prior kernel profile of a deployment — the
// measured token-wise layer curve transferred to it, plus physically
// derived attention, KV-read, lm_head and fixed costs — and the prior of
// every coefficient a calibration may fit. eager says whether the engine
// runs with --enforce-eager (no CUDA graphs).
func KernelPrior(d Deployment, cat *Catalogue, eager bool) (*Profile, []Prior, error) {
	curve, err := LinearCurveFor(d, cat)
	if err != nil {
		return nil, nil, err
	}
	tp := float64(max(d.TP, 1))
	m := d.Model
	peak, bw := d.peakFLOPS(), d.GPU.HBMBytesPerSec
	attn := 4 * float64(m.Layers*m.Heads*m.HeadDim) / tp / (peak * PriorAttnEfficiency) * 1e9
	kv := float64(m.KVBytesPerToken(d.kvBytes())) / tp / (bw * PriorKVEfficiency) * 1e9
	lmHead := d.lmHeadBytes() / tp / (bw * PriorHBMEfficiency) * 1e9
	// Per decoding sequence: its lm_head row (2·vocab·hidden FLOPs at half
	// of peak) and sampling over the vocabulary (≈3 passes of fp32 logits).
	perSeq := 2*float64(m.Vocab)*float64(m.Hidden)/tp/(peak*0.5)*1e9 + 3*4*float64(m.Vocab)/bw*1e9 + 5e3
	attnSD, kvSD, seqSD, attnFloor := 0.35, 0.25, 0.7, 0.0
	attnWhy := fmt.Sprintf("4·layers·heads·head_dim FLOPs per causal pair at %.0f %% of BF16 peak (FlashAttention-2 on A100: 50–73 %%)", 100*PriorAttnEfficiency)
	kvWhy := fmt.Sprintf("KV bytes per token at %.0f %% of HBM bandwidth", 100*PriorKVEfficiency)
	lmWhy := fmt.Sprintf("lm_head read %.2f ms at %.0f %% of HBM", lmHead/1e6, 100*PriorHBMEfficiency)
	seqWhy := "lm_head row FLOPs at half of peak, sampling over fp32 logits, 5 µs bookkeeping"
	if r := measuredRates(d.GPU); r != nil {
		// This GPU's own attention, lm_head and sampler kernels were
		// measured: their achieved rates replace the generic efficiencies.
		attn = 4 * float64(m.Layers*m.Heads*m.HeadDim) / tp / r.AttentionFLOPSPerS * 1e9
		kv = float64(m.KVBytesPerToken(d.kvBytes())) / tp / r.KVReadBytesPerS * 1e9
		lmHead = d.lmHeadBytes() / tp / r.LMHeadBytesPerS * 1e9
		perSeq = r.PerSeqNs * float64(m.Vocab) * float64(m.Hidden) / r.refLogits / tp
		attnFloor = r.DecodeAttnFloorNs * float64(m.Layers)
		attnSD, kvSD, seqSD = 0.15, 0.15, 0.3
		attnWhy = fmt.Sprintf("4·layers·heads·head_dim FLOPs per causal pair at the %.0f TFLOP/s measured on this GPU (%s)", r.AttentionFLOPSPerS/1e12, r.Source)
		kvWhy = fmt.Sprintf("KV bytes per token at the %.0f GB/s decode attention measured on this GPU", r.KVReadBytesPerS/1e9)
		lmWhy = fmt.Sprintf("lm_head read %.2f ms at the %.0f GB/s measured on this GPU + %.2f ms decode-attention floor (%.1f µs per layer, measured)", lmHead/1e6, r.LMHeadBytesPerS/1e9, attnFloor/1e6, r.DecodeAttnFloorNs/1e3)
		seqWhy = fmt.Sprintf("lm_head and sampler time per sequence measured on this GPU (%.2f µs, scaled by vocab·hidden)", r.PerSeqNs/1e3)
	}
	launch := 0.0
	if eager {
		launch = PriorEagerLaunchNsPerLayer * float64(m.Layers)
	}
	idle := PriorSchedulerNs + launch
	read := curve.WeightRead()
	arStep, arToken := d.allReduceNs()
	base := read + lmHead + attnFloor + idle + arStep
	mode := "CUDA graphs"
	if eager {
		mode = "--enforce-eager"
	}
	p := &Profile{
		Name: fmt.Sprintf("%s.%s.tp%d.%s.kernel-prior", d.GPU.Name, m.Name, d.TP, d.Quant),
		GPU:  d.GPU.Name, Model: m.Name, TP: d.TP, Quant: d.Quant, Kind: "transfer",
		Source: "kernel prior: " + curve.Source + fmt.Sprintf("; attention at %.0f %% and KV reads at %.0f %% of the catalogue's peaks; %s",
			100*PriorAttnEfficiency, 100*PriorKVEfficiency, mode),
		StepBaseNs:              base,
		LinearCurve:             curve,
		LinearScale:             1,
		PrefillNsPerToken:       500 + arToken,
		PrefillAttnNsPerPair:    attn,
		DecodeNsPerSeq:          perSeq + arToken,
		DecodeNsPerCtxToken:     kv,
		FrontendNs:              5e6,
		FrontendNsPerInputToken: 1000,
		HostOverheadNs:          idle,
		PowerIdleW:              d.GPU.IdleWatts,
		PowerBusyW:              d.GPU.TDPWatts,
		FitError:                "not fitted (prior)",
	}
	scaleSD, scaleWhy := PriorKernelLibrarySD, "Vidur measured each kernel alone with its 2024 libraries; GEMM and GEMV libraries move achieved efficiency by ±10 % between versions (Vidur's one-token GEMVs read weights at 68–71 % of peak bandwidth, below what current decode kernels reach)"
	if curve.CrossArchitecture {
		// Achieved GEMM efficiency differs between architectures (consumer
		// and data-centre parts, HBM and GDDR) by tens of per cent; no
		// measurement of this GPU narrows it.
		scaleSD, scaleWhy = PriorCrossArchSD, "measured on another architecture and scaled by peak FLOP/s and bandwidth: its efficiency is uncertain by ±30 %"
	}
	// The step base's spread: the measured weight read is known to the
	// kernel library's spread, the rest (lm_head, scheduler, launch gaps)
	// to ±50 %.
	baseSD := math.Sqrt(math.Pow(read*scaleSD, 2)+math.Pow((lmHead+attnFloor+idle+arStep)*0.5, 2)) / base
	arWhy, arTokWhy := "", ""
	if arStep > 0 {
		arTokWhy = fmt.Sprintf(", and %.2f µs of TP all-reduce bytes", arToken/1e3)
		arWhy = fmt.Sprintf(" + %.2f ms of TP-%d all-reduces (2 per layer at %.0f µs, vLLM's custom all-reduce on H100 in SGLang PR #2904)", arStep/1e6, d.TP, PriorAllReduceLatencyNs/1e3)
		seqWhy += fmt.Sprintf("; + %.2f µs of all-reduce bytes per token over the %.0f GB/s link at %.0f %%", arToken/1e3, d.GPU.LinkBytesPerSec/1e9, 100*PriorAllReduceBusEfficiency)
	}
	priors := []Prior{
		{"linear_scale", 1, scaleSD, scaleWhy},
		{"step_base_ns", base, baseSD, fmt.Sprintf("measured one-token weight read %.2f ms (±%.0f %%) + %s + %.1f ms scheduler and launch gaps (%s, ±50 %%)%s",
			read/1e6, 100*scaleSD, lmWhy, idle/1e6, mode, arWhy)},
		{"host_overhead_ns", idle, 0.7, "the GPU-idle part of the step base: scheduler and launch gaps"},
		{"prefill_ns_per_token", 500 + arToken, 1.0, "per-token work outside the layer curve: KV-cache writes, embedding lookup, q/k norms" + arTokWhy},
		{"prefill_attn_ns_per_pair", attn, attnSD, attnWhy},
		{"decode_ns_per_seq", perSeq + arToken, seqSD, seqWhy},
		{"decode_ns_per_ctx_token", kv, kvSD, kvWhy},
		{"frontend_ns", 5e6, 1.0, "HTTP, chat templating and routing in the frontend (inference-sim's alpha0 fits: 2–8 ms)"},
		{"frontend_ns_per_input_token", 1000, 1.0, "tokenisation, ≈1 µs per token for a fast BPE tokenizer"},
	}
	for _, pr := range priors {
		if pr.Centre <= 0 || pr.LogSD <= 0 || math.IsNaN(pr.Centre) {
			return nil, nil, fmt.Errorf("model: bad prior for %s", pr.Name)
		}
	}
	return p, priors, nil
}

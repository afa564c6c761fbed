package model

import (
	"errors"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"

	"github.com/routesim/routesim/internal/inputerr"
)

// GiB is 2^30 bytes.
const GiB = 1 << 30

// Deployment is one worker: a model on a tensor-parallel group of GPUs.
type Deployment struct {
	GPU   GPU
	Model LLM
	TP    int   // tensor-parallel degree (GPUs per worker)
	Quant Quant // weight format
	// KVDtypeBytes is the KV-cache element size: 2 for bf16 ("auto" on a
	// bf16 model), 1 for fp8.
	KVDtypeBytes int
	// GPUMemoryUtilization is vLLM's --gpu-memory-utilization.
	GPUMemoryUtilization float64
}

// Engine are the vLLM settings its start-up memory profiling depends on.
type Engine struct {
	// Version is vLLM's release ("0.20.1"; VLLMReleases lists them); empty
	// means DefaultVLLMVersion.
	Version             string
	MaxNumBatchedTokens int
	MaxNumSeqs          int
	// NumGPUBlocksOverride is vLLM's --num-gpu-blocks-override, in blocks
	// of the configured size (0 = none).
	NumGPUBlocksOverride int
	// KVCacheTokens is the "GPU KV cache size: N tokens" a vLLM log
	// printed (0 = derive it).
	KVCacheTokens int
	// TRTLLM sizes the cache by TensorRT-LLM's rule instead (trtMemory):
	// FreeGPUMemoryFraction (its kv_cache_config.free_gpu_memory_fraction)
	// of the memory left after weights and the profiled activation peak;
	// MaxNumBatchedTokens is then its max_num_tokens and Version is unused.
	TRTLLM                bool
	FreeGPUMemoryFraction float64
}

// DefaultVLLMVersion is the release routesim simulates by default: the
// 8×A100 study's (vLLM 0.20.1, the release Dynamo 1.2.0 pins). The
// activation terms below come from 0.19.0's logs; no setting the release
// table models differs between 0.19.0 and 0.20.1 (vllmrelease.go).
const DefaultVLLMVersion = "0.20.1"

// Memory terms of vLLM's start-up profiling (vLLM V1, gpu_worker.py
// determine_available_memory), per GPU of the group. The constants come from
// vLLM 0.19.0's logged memory breakdowns on H100 (llm-d-planner
// results_raw.csv, Apache-2.0; shared/data/validation/INDEX.md):
const (
	// SamplerBytesPerSeqVocab is the profiling run's sampler peak per
	// (max_num_seqs × vocab) entry: ≈3.8 fp32 copies of the logits. From
	// Qwen2.5-7B-Instruct (vocab 152,064, 1,024 seqs: 2.21 GiB); Gemma-2
	// (3.62–3.66 GiB at vocab 256,000) and phi-2 (0.79 GiB at 51,200) agree
	// within 5 %.
	SamplerBytesPerSeqVocab = 15.24
	// ForwardBytesPerTokenIntermediate and ForwardBytesPerTokenHidden give
	// the forward pass's activation peak per batched token, from the two
	// forward-bound small-vocabulary models (CodeLlama-7B 0.77 GiB,
	// Granite-3.1-8B 0.85 GiB at 8,192 tokens).
	ForwardBytesPerTokenIntermediate = 5.85
	ForwardBytesPerTokenHidden       = 8.9
	// LegacyActivationFactor: vLLM up to 0.16 reserved ≈2.5× more
	// activation memory (Qwen3-14B: 5.64 GiB in 0.15/0.16 vs 2.23 GiB from
	// 0.17; llm-d-planner accuracy_report.md).
	LegacyActivationFactor = 2.5
	// NonTorchBytesTP1 and NonTorchBytesTP are the non-torch allocations
	// (cuBLAS workspaces; NCCL buffers with TP > 1): 0.24–0.26 GiB logged at
	// TP 1, 2.06–2.21 GiB at TP 2–4.
	NonTorchBytesTP1 = GiB / 4
	NonTorchBytesTP  = 21 * GiB / 10
)

// Memory is one GPU's start-up memory split as vLLM logs it.
type Memory struct {
	TotalBytes      int64 // CUDA-visible total
	BudgetBytes     int64 // total × --gpu-memory-utilization
	WeightBytes     int64 // this GPU's share of the weights
	ActivationBytes int64 // peak activation of the profiling run
	NonTorchBytes   int64
	KVBytes         int64 // "Available KV cache memory"
	// KVTokens is the worker's "GPU KV cache size" in tokens (the whole TP
	// group holds one copy), before rounding to blocks.
	KVTokens int64
	// Source says whether the figure was derived or taken from an override.
	Source string
}

// Memory reproduces vLLM's start-up arithmetic:
//
//	KV = total·util − weights/TP − activation − non-torch
//	activation = max(forward(max_num_batched_tokens), sampler(max_num_seqs))   (×2.5 before vLLM 0.17)
//
// CUDA graphs are captured after the KV cache is sized, so they are not
// deducted (vLLM 0.9–0.19 logs); from 0.21.0 vLLM deducts an estimate of
// them (VLLMEngineDefaults.CUDAGraphMemoryProfiled), which this model
// does not (none under --enforce-eager, the 8×A100 study's). An override (--num-gpu-blocks-override or
// --kv-cache-tokens) replaces the derived token count.
func (d Deployment) Memory(e Engine, blockSize int) (Memory, error) {
	if e.TRTLLM {
		return d.trtMemory(e, blockSize)
	}
	if err := d.checkGroup(blockSize, true); err != nil {
		return Memory{}, err
	}
	legacy, err := legacyActivation(e.Version)
	if err != nil {
		return Memory{}, err
	}
	m := Memory{TotalBytes: d.GPU.MemoryBytes, WeightBytes: d.Model.WeightBytes(d.Quant) / int64(d.TP)}
	m.BudgetBytes = int64(float64(d.GPU.MemoryBytes) * d.GPUMemoryUtilization)
	seqs := max(e.MaxNumSeqs, 1)
	sampler := SamplerBytesPerSeqVocab * float64(seqs) * float64(d.Model.Vocab)
	act := math.Max(d.forwardPeak(e.MaxNumBatchedTokens), sampler)
	if legacy {
		act *= LegacyActivationFactor
	}
	m.ActivationBytes = int64(act)
	m.NonTorchBytes = d.nonTorch()
	m.KVBytes = m.BudgetBytes - m.WeightBytes - m.ActivationBytes - m.NonTorchBytes
	m.Source = "derived (vLLM " + versionOr(e.Version) + " memory model)"
	if m.KVBytes > 0 {
		m.KVTokens = m.KVBytes / d.kvPerToken()
	}
	if done, err := d.override(&m, e, blockSize); done || err != nil {
		return m, err
	}
	if m.KVTokens < int64(blockSize) {
		// Named as vLLM does ("No available memory for the cache blocks.
		// Try increasing `gpu_memory_utilization`").
		return Memory{}, inputerr.Fieldf("gpu_memory_utilization", "%g leaves %.2f GiB for KV: %s (%s, TP %d) does not fit on %s (weights %.2f, activation %.2f, non-torch %.2f GiB); raise it or `tp`, or lower `max_num_batched_tokens` or `max_num_seqs`",
			d.GPUMemoryUtilization, float64(m.KVBytes)/GiB, d.Model.Name, d.Quant, d.TP, d.GPU.Name,
			float64(m.WeightBytes)/GiB, float64(m.ActivationBytes)/GiB, float64(m.NonTorchBytes)/GiB)
	}
	if m.KVTokens > MaxKVTokens {
		return Memory{}, fmt.Errorf("model: KV capacity of %d tokens is absurd", m.KVTokens)
	}
	return m, nil
}

// checkGroup reports a tensor-parallel group, memory fraction (vllm:
// gpu-memory-utilization), block size or KV dtype no engine can run.
func (d Deployment) checkGroup(blockSize int, vllm bool) error {
	if d.TP < 1 {
		return fmt.Errorf("model: tensor-parallel degree %d must be ≥ 1", d.TP)
	}
	if d.Model.KVHeads%d.TP != 0 && d.TP%d.Model.KVHeads != 0 {
		return inputerr.Fieldf("tp", "%d does not divide %s's %d KV heads (nor is it a multiple of them)", d.TP, d.Model.Name, d.Model.KVHeads)
	}
	if vllm && !(d.GPUMemoryUtilization > 0 && d.GPUMemoryUtilization <= 1) {
		return fmt.Errorf("model: gpu-memory-utilization %g must be in (0, 1]", d.GPUMemoryUtilization)
	}
	if blockSize < 1 {
		return errors.New("model: block size must be ≥ 1")
	}
	if d.KVDtypeBytes != 1 && d.KVDtypeBytes != 2 {
		return fmt.Errorf("model: KV dtype of %d bytes (want 1 or 2)", d.KVDtypeBytes)
	}
	return nil
}

// forwardPeak is the forward pass's activation peak, per GPU, over a
// profiling batch of tokens.
func (d Deployment) forwardPeak(tokens int) float64 {
	return float64(max(tokens, 1)) * (ForwardBytesPerTokenIntermediate*float64(d.Model.forwardIntermediate())/float64(d.TP) + ForwardBytesPerTokenHidden*float64(d.Model.Hidden))
}

// nonTorch is the non-torch allocation per GPU (NonTorchBytesTP1/TP).
func (d Deployment) nonTorch() int64 {
	if d.TP > 1 {
		return NonTorchBytesTP
	}
	return NonTorchBytesTP1
}

// KVBytesPerTokenPerGPU is one token's KV bytes on one GPU of the group
// (kvPerToken): what each GPU copies over its own host link when a block
// moves to or from a CPU tier.
func (d Deployment) KVBytesPerTokenPerGPU() int64 { return d.kvPerToken() }

// kvPerToken is one token's KV bytes on one GPU of the group; KV heads are
// replicated past kv_heads ranks.
func (d Deployment) kvPerToken() int64 {
	if d.TP > d.Model.KVHeads {
		return d.Model.KVBytesPerToken(d.KVDtypeBytes) / int64(d.Model.KVHeads)
	}
	return d.Model.KVBytesPerToken(d.KVDtypeBytes) / int64(d.TP)
}

// override applies e's capacity override, if any, to m (done: m's token
// count is the override's), refusing a bad one.
func (d Deployment) override(m *Memory, e Engine, blockSize int) (done bool, err error) {
	switch {
	case e.NumGPUBlocksOverride < 0 || e.KVCacheTokens < 0:
		return true, inputerr.Fieldf("num_gpu_blocks_override", "%d and `kv_cache_tokens` %d must be ≥ 0", e.NumGPUBlocksOverride, e.KVCacheTokens)
	case e.NumGPUBlocksOverride > 0 && e.KVCacheTokens > 0:
		return true, inputerr.Fieldf("num_gpu_blocks_override", "or `kv_cache_tokens`, not both")
	case e.NumGPUBlocksOverride > 0:
		m.KVTokens, m.Source = int64(e.NumGPUBlocksOverride)*int64(blockSize), "--num-gpu-blocks-override"
	case e.KVCacheTokens > 0:
		m.KVTokens, m.Source = int64(e.KVCacheTokens), "--kv-cache-tokens"
	default:
		return false, nil
	}
	perToken := d.kvPerToken()
	if m.KVTokens < int64(blockSize) {
		return true, fmt.Errorf("%s: %d tokens is less than one block of %d", m.Source, m.KVTokens, blockSize)
	}
	if m.KVTokens > MaxKVTokens || float64(m.KVTokens)*float64(perToken) > float64(d.GPU.MemoryBytes) {
		return true, fmt.Errorf("%s: %d tokens of KV need %.1f GiB per GPU, more than %s's %.1f GiB",
			m.Source, m.KVTokens, float64(m.KVTokens)*float64(perToken)/GiB, d.GPU.Name, float64(d.GPU.MemoryBytes)/GiB)
	}
	return true, nil
}

// MaxKVTokens bounds a worker's KV capacity in tokens: 2^40, some 10^5
// times what a 192 GB GPU holds of a 0.6 B-parameter model's fp8 KV. Past
// it a derived or overridden capacity is a mistake, and block counts
// times block sizes could overflow.
const MaxKVTokens = 1 << 40

// KVBlocks is the worker's KV capacity in blocks of blockSize tokens.
func (d Deployment) KVBlocks(blockSize int, e Engine) (int, error) {
	m, err := d.Memory(e, blockSize)
	if err != nil {
		return 0, err
	}
	return int(m.KVTokens / int64(blockSize)), nil
}

// versionOr is v's canonical spelling (DefaultVLLMVersion if empty).
func versionOr(v string) string {
	if c, err := CanonicalVLLMVersion(v); err == nil {
		return c
	}
	return v
}

// legacyActivation says whether vLLM release v predates 0.17's smaller
// activation reservation; an unknown release is an error.
func legacyActivation(v string) (bool, error) {
	d, err := VLLMDefaults(v, 0, "")
	return d.LegacyActivation, err
}

var kvLogLine = regexp.MustCompile(`GPU KV cache size: ([0-9][0-9,]*) tokens`)

// KVTokensFromLog finds vLLM's "GPU KV cache size: N tokens" line in a
// start-up log (the last one, if the engine restarted).
func KVTokensFromLog(log string) (int, error) {
	all := kvLogLine.FindAllStringSubmatch(log, -1)
	if len(all) == 0 {
		return 0, errors.New(`no "GPU KV cache size: N tokens" line`)
	}
	n, err := strconv.Atoi(strings.ReplaceAll(all[len(all)-1][1], ",", ""))
	if err != nil || n < 1 {
		return 0, fmt.Errorf("GPU KV cache size %q is not a positive token count", all[len(all)-1][1])
	}
	return n, nil
}

// NVMLOverheadBytes is what NVML counts as used beyond vLLM's budget (CUDA
// context, non-torch allocations): the 8×A100 study's NVML memory.used,
// 39,546,847,232 B on every GPU, minus 0.9 × 42,298,834,944 B.
const NVMLOverheadBytes = 1_477_895_782

// NVMLMemoryUsedBytes is the memory.used nvidia-smi reports for a vLLM
// worker: vLLM allocates its whole budget (weights, activations, KV pool)
// at start-up, so it is constant while serving.
func (d Deployment) NVMLMemoryUsedBytes() int64 {
	return int64(d.GPUMemoryUtilization*float64(d.GPU.MemoryBytes)) + NVMLOverheadBytes
}

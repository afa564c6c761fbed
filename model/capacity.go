package model

import (
	"errors"
	"fmt"
)

// GiB is 2^30 bytes.
const GiB = 1 << 30

// DefaultActivationReserveBytes is the memory vLLM's profiling pass keeps out
// of the KV pool on an 8B model at 2,048 batched tokens (activations plus
// non-torch allocations). 1.5 GiB reproduces vLLM 0.9.2's logged "GPU KV cache
// size: 136,080 tokens" for Qwen3-8B on A100-SXM4-40GB within 0.05 %
// (shared/data/catalogue/models.md §3).
const DefaultActivationReserveBytes = 1.5 * GiB

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
	// ActivationReserveBytes is per GPU; 0 means DefaultActivationReserveBytes.
	ActivationReserveBytes int64
}

// KVBlocks returns the worker's KV capacity in blocks of blockSize tokens:
//
//	floor((mem·util − weights/TP − reserve) / (blockSize · kvBytesPerToken/TP))
//
// computed per GPU of the group; each GPU holds 1/TP of every block.
func (d Deployment) KVBlocks(blockSize int) (int, error) {
	if d.TP < 1 {
		return 0, fmt.Errorf("model: tensor-parallel degree %d must be ≥ 1", d.TP)
	}
	if d.Model.KVHeads%d.TP != 0 && d.TP%d.Model.KVHeads != 0 {
		return 0, fmt.Errorf("model: TP %d does not divide %s's %d KV heads", d.TP, d.Model.Name, d.Model.KVHeads)
	}
	if d.GPUMemoryUtilization <= 0 || d.GPUMemoryUtilization > 1 {
		return 0, fmt.Errorf("model: gpu-memory-utilization %g must be in (0, 1]", d.GPUMemoryUtilization)
	}
	if blockSize < 1 {
		return 0, errors.New("model: block size must be ≥ 1")
	}
	if d.KVDtypeBytes != 1 && d.KVDtypeBytes != 2 {
		return 0, fmt.Errorf("model: KV dtype of %d bytes (want 1 or 2)", d.KVDtypeBytes)
	}
	reserve := d.ActivationReserveBytes
	if reserve == 0 {
		reserve = DefaultActivationReserveBytes
	}
	tp := int64(d.TP)
	budget := int64(float64(d.GPU.MemoryBytes)*d.GPUMemoryUtilization) - d.Model.WeightBytes(d.Quant)/tp - reserve
	perToken := d.Model.KVBytesPerToken(d.KVDtypeBytes) / tp
	if d.TP > d.Model.KVHeads { // KV heads are replicated past kv_heads ranks
		perToken = d.Model.KVBytesPerToken(d.KVDtypeBytes) / int64(d.Model.KVHeads)
	}
	blocks := budget / (int64(blockSize) * perToken)
	if blocks < 1 {
		return 0, fmt.Errorf("model: %s (%s, TP %d) does not fit on %s at utilization %g: %.2f GiB left for KV",
			d.Model.Name, d.Quant, d.TP, d.GPU.Name, d.GPUMemoryUtilization, float64(budget)/GiB)
	}
	return int(blocks), nil
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

package model

import (
	"fmt"

	"github.com/routesim/routesim/internal/inputerr"
)

// DefaultFreeGPUMemoryFraction is TensorRT-LLM's
// kv_cache_config.free_gpu_memory_fraction (1.3.0rc2 and rc14
// KvCacheConfig; trtllm-serve's and Dynamo's TRT-LLM worker's default).
const DefaultFreeGPUMemoryFraction = 0.9

// trtMemory reproduces TensorRT-LLM's start-up sizing of the KV cache
// (PyTorch backend, KvCacheCreator.configure_kv_cache_capacity and
// _cal_max_memory in _torch/pyexecutor/_util.py; reading §4.2): it runs
// dummy context requests filling max_num_tokens, measures the peak, and
// gives the cache a fraction of what is left:
//
//	KV = fraction · (total − weights/TP − activation − non-torch)
//	activation = forward(max_num_tokens)
//
// unlike vLLM, whose fraction applies to the whole memory. The
// activation and non-torch terms are vLLM's (the forward peak per batched
// token; NCCL and cuBLAS workspaces): transferred, not measured on
// TensorRT-LLM. The dummy requests are max_num_tokens split into prompts
// of up to max_seq_len − 1 tokens (_create_dummy_context_requests), a
// handful, so the sampler term vLLM reserves per sequence slot is left
// out. TensorRT-LLM's measured "non-torch" extra also holds its CUDA
// graphs (its log line: "e.g., NCCL and CUDA graphs"), for which no
// sourced size is at hand: the pool is overstated by theirs (of the order
// of a GiB). An override (num_gpu_blocks_override, kv_cache_tokens)
// replaces the derived figure as for vLLM. BudgetBytes is what the worker
// allocates: all but the 1 − fraction of the free memory it leaves.
func (d Deployment) trtMemory(e Engine, blockSize int) (Memory, error) {
	frac := e.FreeGPUMemoryFraction
	if frac == 0 {
		frac = DefaultFreeGPUMemoryFraction
	}
	if !(frac > 0 && frac <= 1) {
		return Memory{}, inputerr.Fieldf("free_gpu_memory_fraction", "%g must be in (0, 1]", frac)
	}
	if err := d.checkGroup(blockSize, false); err != nil {
		return Memory{}, err
	}
	m := Memory{TotalBytes: d.GPU.MemoryBytes, WeightBytes: d.Model.WeightBytes(d.Quant) / int64(d.TP)}
	m.ActivationBytes = int64(d.forwardPeak(e.MaxNumBatchedTokens))
	m.NonTorchBytes = d.nonTorch()
	free := m.TotalBytes - m.WeightBytes - m.ActivationBytes - m.NonTorchBytes
	m.KVBytes = int64(frac * float64(free))
	m.BudgetBytes = m.TotalBytes - int64((1-frac)*float64(max(free, 0)))
	m.Source = "derived (TensorRT-LLM free_gpu_memory_fraction rule)"
	if m.KVBytes > 0 {
		m.KVTokens = m.KVBytes / d.kvPerToken()
	}
	if done, err := d.override(&m, e, blockSize); done || err != nil {
		return m, err
	}
	if m.KVTokens < int64(blockSize) {
		return Memory{}, inputerr.Fieldf("free_gpu_memory_fraction", "%g leaves %.2f GiB for KV: %s (%s, TP %d) does not fit on %s (weights %.2f, activation %.2f, non-torch %.2f GiB); raise `tp`, or lower `max_num_batched_tokens`",
			frac, float64(m.KVBytes)/GiB, d.Model.Name, d.Quant, d.TP, d.GPU.Name,
			float64(m.WeightBytes)/GiB, float64(m.ActivationBytes)/GiB, float64(m.NonTorchBytes)/GiB)
	}
	if m.KVTokens > MaxKVTokens {
		return Memory{}, fmt.Errorf("model: KV capacity of %d tokens is absurd", m.KVTokens)
	}
	return m, nil
}

// MemoryUsedBytes is the memory.used nvidia-smi reports for a worker with
// engine settings e: vLLM's NVMLMemoryUsedBytes, or for TensorRT-LLM what
// it allocates (BudgetBytes) plus the same CUDA-context overhead
// (NVMLOverheadBytes, measured under vLLM: transferred), at most the GPU's
// memory.
func (d Deployment) MemoryUsedBytes(e Engine, blockSize int) int64 {
	if !e.TRTLLM {
		return d.NVMLMemoryUsedBytes()
	}
	m, err := d.trtMemory(e, blockSize)
	if err != nil {
		return 0
	}
	return min(m.BudgetBytes+NVMLOverheadBytes, d.GPU.MemoryBytes)
}

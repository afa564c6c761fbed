package model

import "strings"

// VLLMBatchDefaults are vLLM's OpenAI-server defaults of
// --max-num-batched-tokens and --max-num-seqs on a GPU with memoryBytes of
// CUDA-visible memory and the given device name: 8192/1024 with ≥ 70 GiB
// unless the name contains "a100" (PR #17885: the larger budget lowered
// A100 throughput), else 2048/256 (vllm/engine/arg_utils.py,
// EngineArgs._set_default_args, vllm-project/vllm @ 99d7eb5d; catalogue
// [V1]). Catalogue and file GPUs both take their defaults from here.
func VLLMBatchDefaults(memoryBytes int64, name string) (maxNumBatchedTokens, maxNumSeqs int) {
	if memoryBytes >= 70*GiB && !strings.Contains(strings.ToLower(name), "a100") {
		return 8192, 1024
	}
	return 2048, 256
}

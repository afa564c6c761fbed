package model

// VLLMBatchDefaults are the default release's (DefaultVLLMVersion)
// --max-num-batched-tokens and --max-num-seqs on a GPU with memoryBytes of
// CUDA-visible memory and the given device name: the release table's rule
// (VLLMDefaults; 8192/1024 with ≥ 70 GiB unless an A100, else 2048/256).
// A run takes its own release's through VLLMDefaults; this is what
// routesim profiles shows for a GPU.
func VLLMBatchDefaults(memoryBytes int64, name string) (maxNumBatchedTokens, maxNumSeqs int) {
	d, err := VLLMDefaults(DefaultVLLMVersion, memoryBytes, name)
	if err != nil {
		panic("model: the default vLLM release is not in the release table: " + err.Error())
	}
	return d.MaxNumBatchedTokens, d.MaxNumSeqs
}

package model

import (
	"math"
	"strings"
	"testing"
)

// TestTRTLLMMemoryRule: TensorRT-LLM gives the KV cache
// free_gpu_memory_fraction of the memory left after weights and the
// profiled activation peak (KvCacheCreator.configure_kv_cache_capacity,
// _cal_max_memory; reading §4.2), not a fraction of the whole GPU as
// vLLM does. For Llama-3.1-70B FP8 on an H100 TP 2 group with FP8 KV the
// reading's rough arithmetic gives ≈ 0.4 M tokens (it deducts "a few GB
// of activations and graphs"); the rule here deducts no graphs and a
// 1.2 GiB activation peak, ≈ 0.5 M.
func TestTRTLLMMemoryRule(t *testing.T) {
	cat := DefaultCatalogue()
	h100, _ := cat.GPU("H100")
	llama, _ := cat.Model("Llama-3.1-70B")
	d := Deployment{GPU: h100, Model: llama, TP: 2, Quant: FP8, KVDtypeBytes: 1}
	m, err := d.Memory(Engine{TRTLLM: true, MaxNumBatchedTokens: 8192}, 32)
	if err != nil {
		t.Fatal(err)
	}
	free := m.TotalBytes - m.WeightBytes - m.ActivationBytes - m.NonTorchBytes
	if want := int64(0.9 * float64(free)); m.KVBytes != want {
		t.Errorf("KV %d bytes, want 0.9 × the %d left after weights, activation and non-torch", m.KVBytes, free)
	}
	if got := float64(m.KVTokens); math.Abs(got/450e3-1) > 0.15 {
		t.Errorf("%d KV tokens, want 0.4–0.5 M (reading §4.2)", m.KVTokens)
	}
	if !strings.Contains(m.Source, "TensorRT-LLM") {
		t.Errorf("source %q", m.Source)
	}
	// A smaller fraction, a smaller pool; vLLM's utilisation is not read.
	d.GPUMemoryUtilization = 0.1
	half, err := d.Memory(Engine{TRTLLM: true, MaxNumBatchedTokens: 8192, FreeGPUMemoryFraction: 0.45}, 32)
	if err != nil || half.KVBytes != int64(0.45*float64(free)) {
		t.Errorf("fraction 0.45: %d bytes (%v), want %d", half.KVBytes, err, int64(0.45*float64(free)))
	}
	if b, err := d.KVBlocks(32, Engine{TRTLLM: true, NumGPUBlocksOverride: 500}); err != nil || b != 500 {
		t.Errorf("override: %d blocks (%v), want 500", b, err)
	}
	for _, tc := range []struct {
		name string
		d    Deployment
		e    Engine
		want string
	}{
		{"fraction above 1", d, Engine{TRTLLM: true, FreeGPUMemoryFraction: 1.5}, "free_gpu_memory_fraction 1.5"},
		{"does not fit", Deployment{GPU: h100, Model: llama, TP: 1, Quant: BF16, KVDtypeBytes: 2}, Engine{TRTLLM: true, MaxNumBatchedTokens: 8192}, "free_gpu_memory_fraction 0.9 leaves"},
	} {
		if _, err := tc.d.Memory(tc.e, 32); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
	t.Logf("H100 TP2 Llama-3.1-70B FP8: %d KV tokens (%.1f GiB of KV per GPU)", m.KVTokens, float64(m.KVBytes)/GiB)
}

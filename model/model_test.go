package model

import (
	"strings"
	"testing"
)

func TestParamsAndWeightsMatchCatalogue(t *testing.T) {
	cat := DefaultCatalogue()
	// shared/data/catalogue/models.md §2, computed from each config.json.
	for _, tc := range []struct {
		name   string
		params int64
		kv     int64
	}{
		{"Qwen3-8B", 8_190_735_360, 147_456},
		{"Qwen3-32B", 32_762_123_264, 262_144},
		{"Llama-3.1-8B", 8_030_261_248, 131_072},
		{"Llama-3.1-70B", 70_553_706_496, 327_680},
	} {
		m, err := cat.Model(tc.name)
		if err != nil {
			t.Fatal(err)
		}
		if got := m.Params(); got != tc.params {
			t.Errorf("%s: %d parameters, want %d", tc.name, got, tc.params)
		}
		if got := m.KVBytesPerToken(2); got != tc.kv {
			t.Errorf("%s: %d KV bytes/token, want %d", tc.name, got, tc.kv)
		}
	}
	m, _ := cat.Model("Llama-3.1-70B")
	if got := m.WeightBytes(FP8); got != 72_656_371_712 {
		t.Errorf("Llama-3.1-70B FP8 weights %d B, want 72,656,371,712", got)
	}
}

// TestKVCapacityMatchesVLLM redoes vLLM's arithmetic for Qwen3-8B on one
// A100-SXM4-40GB at --gpu-memory-utilization 0.9 with 16-token blocks:
//
//	budget  = 0.9 × 42,298,834,944 B (CUDA-visible)   = 38,068,951,449 B
//	KV pool = budget − 16,381,470,720 (weights) − 1.5 GiB = 20,076,867,993 B
//	tokens  = pool / 147,456 B per token = 136,154 → 8,509 blocks of 16
//
// vLLM 0.9.2 logged "GPU KV cache size: 136,080 tokens" (8,505 blocks) for
// this setup; the difference is its exact activation peak.
func TestKVCapacityMatchesVLLM(t *testing.T) {
	cat := DefaultCatalogue()
	gpu, _ := cat.GPU("A100-SXM4-40GB")
	llm, _ := cat.Model("Qwen3-8B")
	d := Deployment{GPU: gpu, Model: llm, TP: 1, Quant: BF16, KVDtypeBytes: 2, GPUMemoryUtilization: 0.9}
	blocks, err := d.KVBlocks(16)
	if err != nil {
		t.Fatal(err)
	}
	if blocks != 8509 {
		t.Errorf("%d blocks of 16, want 8509", blocks)
	}
	const vllmLogged = 136_080
	if tokens := blocks * 16; tokens < vllmLogged*999/1000 || tokens > vllmLogged*1001/1000 {
		t.Errorf("%d tokens, more than 0.1%% from vLLM's logged %d", tokens, vllmLogged)
	}
	b64, _ := d.KVBlocks(64)
	if b64 != 2127 {
		t.Errorf("%d blocks of 64, want floor(136,154/64) = 2127", b64)
	}
}

func TestKVCapacityErrors(t *testing.T) {
	cat := DefaultCatalogue()
	a100, _ := cat.GPU("A100-SXM4-40GB")
	big, _ := cat.Model("Llama-3.1-70B")
	small, _ := cat.Model("Qwen3-8B")
	for _, tc := range []struct {
		name string
		d    Deployment
		want string
	}{
		{"does not fit", Deployment{GPU: a100, Model: big, TP: 1, Quant: BF16, KVDtypeBytes: 2, GPUMemoryUtilization: 0.9}, "does not fit"},
		{"bad util", Deployment{GPU: a100, Model: small, TP: 1, Quant: BF16, KVDtypeBytes: 2, GPUMemoryUtilization: 1.5}, "gpu-memory-utilization"},
		{"bad tp", Deployment{GPU: a100, Model: small, TP: 3, Quant: BF16, KVDtypeBytes: 2, GPUMemoryUtilization: 0.9}, "TP 3"},
		{"bad kv dtype", Deployment{GPU: a100, Model: small, TP: 1, Quant: BF16, KVDtypeBytes: 4, GPUMemoryUtilization: 0.9}, "KV dtype"},
	} {
		if _, err := tc.d.KVBlocks(16); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want %q", tc.name, err, tc.want)
		}
	}
}

func TestUnknownNamesListKnownOnes(t *testing.T) {
	cat := DefaultCatalogue()
	if _, err := cat.GPU("B300"); err == nil || !strings.Contains(err.Error(), "H100-SXM5-80GB") {
		t.Errorf("unknown GPU: %v", err)
	}
	if _, err := cat.Model("gpt-5"); err == nil || !strings.Contains(err.Error(), "Qwen3-8B") {
		t.Errorf("unknown model: %v", err)
	}
	if _, err := FindProfile("H200-SXM-141GB", "Qwen3-8B", 1); err == nil || !strings.Contains(err.Error(), "--profile") {
		t.Errorf("missing profile: %v", err)
	}
}

func TestBuiltinProfilesValidAndStepTime(t *testing.T) {
	ps := BuiltinProfiles()
	if len(ps) == 0 {
		t.Fatal("no built-in profiles")
	}
	p, err := FindProfile("A100-SXM4-40GB", "qwen3-8b", 1)
	if err != nil {
		t.Fatal(err)
	}
	b := Batch{PrefillTokens: 1000, PrefillTokenCtx: 5e5, DecodeSeqs: 10, DecodeCtxTokens: 20000}
	want := p.StepBaseNs + 1000*p.PrefillNsPerToken + 5e5*p.PrefillAttnNsPerTokenCtx + 10*p.DecodeNsPerSeq + 20000*p.DecodeNsPerCtxToken
	if got := p.StepNs(b); got != want {
		t.Errorf("StepNs = %v, want %v", got, want)
	}
}

func TestProfileValidation(t *testing.T) {
	for _, tc := range []struct {
		name, json, want string
	}{
		{"negative", `{"name":"x","gpu":"g","model":"m","tp":1,"quant":"bf16","kind":"measured","step_base_ns":-1,"prefill_ns_per_token":1}`, "step_base_ns: -1"},
		{"unknown field", `{"name":"x","gpu":"g","model":"m","tp":1,"quant":"bf16","kind":"measured","step_ns":1}`, "unknown field"},
		{"zero step", `{"name":"x","gpu":"g","model":"m","tp":1,"quant":"bf16","kind":"measured"}`, "a step must take time"},
		{"bad kind", `{"name":"x","gpu":"g","model":"m","tp":1,"quant":"bf16","kind":"guess","step_base_ns":1}`, "kind"},
		{"all at once", `{"tp":0,"quant":"int3","kind":"measured","step_base_ns":1}`, "tp: 0"},
	} {
		_, err := ReadProfile(strings.NewReader(tc.json), "p.json")
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "p.json") {
			t.Errorf("%s: error %v, want %q", tc.name, err, tc.want)
		}
	}
}

package model

import (
	"math"
	"strings"
	"testing"
)

// maxFuzzFileBytes skips larger fuzz inputs: past it only the JSON
// decoder's paths are new.
const maxFuzzFileBytes = 4 << 10

// FuzzReadGPU: a GPU file either gives a GPU whose figures are finite and
// in range and whose kernel prior builds, or an error naming the file;
// nothing panics.
//
//	go test ./model -run XXX -fuzz FuzzReadGPU -fuzztime 20s
func FuzzReadGPU(f *testing.F) {
	for _, seed := range []string{
		gpuText(nil), gpuText(map[string]string{"architecture": `"blackwell"`, "idle_w": "80", "pcie_gb_s": "64"}),
		gpuText(map[string]string{"memory_gib": "-80"}), gpuText(map[string]string{"tdp_w": "-"}),
		gpuText(map[string]string{"architecture": `"volta"`}), "{\n \"name\": \"x\",\n \"memory_gib\": NaN\n}",
		`{"name": "x"`, "", "[]", `{"name":"a","name":"b"}`, gpuText(map[string]string{"memory_gib": "1e999"}),
	} {
		f.Add([]byte(seed))
	}
	cat := DefaultCatalogue()
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > maxFuzzFileBytes {
			return
		}
		g, err := ReadGPU(strings.NewReader(string(data)), "g.json", cat)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "g.json") {
				t.Fatalf("error without the file name: %v", err)
			}
			return
		}
		for _, v := range []float64{float64(g.MemoryBytes), g.HBMBytesPerSec, g.BF16FLOPS, g.TDPWatts, g.LinkBytesPerSec} {
			if !(v > 0) || math.IsInf(v, 0) {
				t.Fatalf("accepted GPU with a bad figure: %+v", g)
			}
		}
		d := Deployment{GPU: g, Model: cat.Models[0], TP: 1, Quant: BF16, KVDtypeBytes: 2, GPUMemoryUtilization: 0.9}
		if _, _, err := KernelPrior(d, cat, false); err != nil {
			t.Fatalf("accepted GPU without a kernel prior: %v", err)
		}
	})
}

// FuzzReadHFConfig: a config either maps to a model whose sizes are
// positive (so its parameter and KV counts are), or gives an error naming
// the file; nothing panics.
//
//	go test ./model -run XXX -fuzz FuzzReadHFConfig -fuzztime 20s
func FuzzReadHFConfig(f *testing.F) {
	for _, seed := range []string{
		`{"architectures":["LlamaForCausalLM"],"hidden_size":2048,"num_hidden_layers":16,"num_attention_heads":16,"intermediate_size":5632,"vocab_size":32000}`,
		`{"architectures":["Gemma3ForConditionalGeneration"],"text_config":{"hidden_size":2560,"num_hidden_layers":34,"sliding_window":1024},"torch_dtype":"bfloat16"}`,
		`{"architectures":["Qwen2ForCausalLM"],"hidden_size":64,"num_hidden_layers":4,"num_attention_heads":4,"intermediate_size":8,"vocab_size":8,"use_sliding_window":true,"max_window_layers":2,"quantization_config":{"quant_method":"fp8"}}`,
		`{"architectures":["MixtralForCausalLM"],"num_local_experts":8,"num_experts_per_tok":2}`,
		`{"architectures":["Qwen2MoeForCausalLM"],"hidden_size":64,"num_hidden_layers":4,"num_attention_heads":4,"intermediate_size":8,"vocab_size":8,"num_experts":8,"num_experts_per_tok":2,"moe_intermediate_size":4,"shared_expert_intermediate_size":8,"decoder_sparse_step":2,"mlp_only_layers":[0]}`,
		`{"architectures":["DeepseekV3ForCausalLM"],"n_routed_experts":256}`,
		`{"model_type":"gemma2","hidden_size":8,"num_hidden_layers":2,"num_attention_heads":2,"intermediate_size":8,"vocab_size":8,"head_dim":null}`,
		`{"architectures":["FooForCausalLM"]}`, `{"architectures":`, `{"hidden_size":-1}`, `[]`, ``,
	} {
		f.Add([]byte(seed))
	}
	cat := DefaultCatalogue()
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > maxFuzzFileBytes {
			return
		}
		m, err := ReadHFConfig(strings.NewReader(string(data)), "config.json", cat)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "config.json") {
				t.Fatalf("error without the file name: %v", err)
			}
			return
		}
		if m.Layers < 1 || m.Hidden < 1 || m.Heads < 1 || m.KVHeads < 1 || m.HeadDim < 1 || m.Vocab < 1 || m.Intermediate < 1 || m.MaxPositions < 1 ||
			m.Params() <= 0 || m.KVBytesPerToken(2) <= 0 || m.ActiveParams() > m.Params() || m.StepWeightBytes(BF16, 1<<20) > float64(m.WeightBytes(BF16))*(1+1e-9) {
			t.Fatalf("accepted a model with a bad size: %+v", m)
		}
	})
}

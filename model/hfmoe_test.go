package model

import (
	"math"
	"strings"
	"testing"
)

// moeConfigs are Mixture-of-Experts configs with their published total
// and active parameter counts (billions): Qwen3-30B-A3B's config.json
// (the fields of a public copy of Qwen/Qwen3-30B-A3B's config; Qwen3
// model card: 30.5 B total, 3.3 B activated), Mixtral-8x7B's (Mistral
// AI's release: 46.7 B total, 12.9 B per token) and Qwen1.5-MoE-A2.7B's
// (whose shape is Qwen2MoeConfig's defaults, transformers @ 008e5743;
// its model card: 14.3 B total, 2.7 B activated).
var moeConfigs = []struct {
	name, text    string
	total, active float64
}{
	{"Qwen3-30B-A3B", `{"architectures":["Qwen3MoeForCausalLM"],"decoder_sparse_step":1,"head_dim":128,"hidden_size":2048,"intermediate_size":6144,"max_position_embeddings":40960,"max_window_layers":48,"mlp_only_layers":[],"model_type":"qwen3_moe","moe_intermediate_size":768,"norm_topk_prob":true,"num_attention_heads":32,"num_experts":128,"num_experts_per_tok":8,"num_hidden_layers":48,"num_key_value_heads":4,"sliding_window":null,"tie_word_embeddings":false,"torch_dtype":"bfloat16","use_sliding_window":false,"vocab_size":151936}`, 30.5, 3.3},
	{"Mixtral-8x7B", `{"architectures":["MixtralForCausalLM"],"hidden_size":4096,"intermediate_size":14336,"max_position_embeddings":32768,"num_attention_heads":32,"num_experts_per_tok":2,"num_hidden_layers":32,"num_key_value_heads":8,"num_local_experts":8,"sliding_window":null,"tie_word_embeddings":false,"torch_dtype":"bfloat16","vocab_size":32000}`, 46.7, 12.9},
	{"Qwen1.5-MoE-A2.7B", `{"architectures":["Qwen2MoeForCausalLM"],"decoder_sparse_step":1,"hidden_size":2048,"intermediate_size":5632,"max_position_embeddings":8192,"moe_intermediate_size":1408,"num_attention_heads":16,"num_experts":60,"num_experts_per_tok":4,"num_hidden_layers":24,"num_key_value_heads":16,"shared_expert_intermediate_size":5632,"tie_word_embeddings":false,"torch_dtype":"bfloat16","vocab_size":151936}`, 14.3, 2.7},
}

// TestHFConfigMoE: total parameters (the weights in memory) and active
// ones (a token's FLOPs) match the published counts within 2 % (biases
// and extra norms are not counted); a step's weight read grows with the
// experts its tokens touch, from the active ones to all of them.
func TestHFConfigMoE(t *testing.T) {
	cat := DefaultCatalogue()
	for _, tc := range moeConfigs {
		t.Run(tc.name, func(t *testing.T) {
			m, err := cat.LoadModel(writeConfig(t, tc.name, tc.text))
			if err != nil {
				t.Fatal(err)
			}
			total, active := float64(m.Params())/1e9, float64(m.ActiveParams())/1e9
			if math.Abs(total/tc.total-1) > 0.02 || math.Abs(active/tc.active-1) > 0.05 {
				t.Errorf("%.2f B total, %.2f B active; published %.1f, %.1f", total, active, tc.total, tc.active)
			}
			if got, want := m.FLOPsPerToken(), 2*float64(m.ActiveParams()); got != want {
				t.Errorf("FLOPs per token %g, want 2 × active %g", got, want)
			}
			one, many, all := m.StepWeightBytes(BF16, 1), m.StepWeightBytes(BF16, 4096), float64(m.WeightBytes(BF16))
			if !(one < many && many <= all && all-many < 0.01*all) {
				t.Errorf("step weight bytes: 1 token %.3g, 4096 tokens %.3g, all %.3g", one, many, all)
			}
			if k := m.TouchedExperts(1); k != float64(m.ActiveExperts) {
				t.Errorf("one token touches %g experts, want %d", k, m.ActiveExperts)
			}
			if !strings.Contains(strings.Join(m.Notes, "\n"), "Mixture-of-Experts") {
				t.Errorf("notes %q do not describe the experts", m.Notes)
			}
			// The kernel prior's weight read is the active experts' at one
			// token and grows with the step toward all of them.
			g, _ := cat.GPU("H100")
			d := Deployment{GPU: g, Model: m, TP: 2, Quant: BF16, KVDtypeBytes: 2, GPUMemoryUtilization: 0.9}
			p, _, err := KernelPrior(d, cat, false)
			if err != nil {
				t.Fatal(err)
			}
			if err := p.CheckPhysical(d); err != nil {
				t.Errorf("kernel prior below the physical floors: %v", err)
			}
			if p.StepNs(Batch{DecodeSeqs: 1}) >= mustPrior(t, Deployment{GPU: g, Model: denseAll(m), TP: 2, Quant: BF16, KVDtypeBytes: 2}, cat).StepNs(Batch{DecodeSeqs: 1}) {
				t.Error("a one-sequence decode step of the MoE model costs as much as reading every expert")
			}
		})
	}
}

// denseAll is m with every expert made a dense MLP: what reading all of
// its weights every step would cost.
func denseAll(m LLM) LLM {
	d := m
	d.Intermediate = m.Experts*m.ExpertIntermediate + m.SharedExpertIntermediate
	d.Experts, d.ActiveExperts, d.ExpertIntermediate, d.SharedExpertIntermediate, d.MoELayers = 0, 0, 0, 0, 0
	return d
}

func mustPrior(t *testing.T, d Deployment, cat *Catalogue) *Profile {
	t.Helper()
	p, _, err := KernelPrior(d, cat, false)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

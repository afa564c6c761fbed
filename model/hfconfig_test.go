package model

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestHFConfigsMatchCatalogue: the real config.json of each catalogue
// model (testdata/hf, sources in its SOURCE.md) maps to the catalogue's
// shape exactly, and takes the catalogue's name.
func TestHFConfigsMatchCatalogue(t *testing.T) {
	cat := DefaultCatalogue()
	for dir, want := range map[string]string{
		"Qwen3-8B": "Qwen3-8B", "Qwen3-32B": "Qwen3-32B", "Llama-3.1-8B-Instruct": "Llama-3.1-8B",
		"Llama-3.1-70B-Instruct": "Llama-3.1-70B", "Llama-2-7b-hf": "Llama-2-7B",
	} {
		t.Run(dir, func(t *testing.T) {
			got, err := cat.LoadModel(filepath.Join("testdata", "hf", dir))
			if err != nil {
				t.Fatal(err)
			}
			c, err := cat.Model(want)
			if err != nil {
				t.Fatal(err)
			}
			if !sameShape(got, c) || got.MaxPositions != c.MaxPositions || got.Name != c.Name {
				t.Errorf("%s maps to %+v, want the catalogue's %+v", dir, got, c)
			}
			if got.Params() != c.Params() || got.KVBytesPerToken(2) != c.KVBytesPerToken(2) {
				t.Errorf("%s: params %d, KV %d; catalogue %d, %d", dir, got.Params(), got.KVBytesPerToken(2), c.Params(), c.KVBytesPerToken(2))
			}
		})
	}
}

// writeConfig writes text as dir/config.json under a fresh folder.
func writeConfig(t *testing.T, dir, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), dir)
	if err := os.MkdirAll(p, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(p, "config.json"), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestHFConfigDefaults: fields a config may leave out take the
// transformers config class's defaults (cited in hfArchs); the rest map.
func TestHFConfigDefaults(t *testing.T) {
	cat := DefaultCatalogue()
	for _, tc := range []struct {
		name, text string
		want       LLM
		note       string
	}{
		{"llama kv and head_dim derived", `{"architectures":["LlamaForCausalLM"],"hidden_size":2048,"num_hidden_layers":16,"num_attention_heads":16,"intermediate_size":5632,"vocab_size":32000}`,
			LLM{Layers: 16, Hidden: 2048, Intermediate: 5632, Heads: 16, KVHeads: 16, HeadDim: 128, Vocab: 32000, MaxPositions: 2048}, "num_key_value_heads absent: 16"},
		{"null kv heads", `{"architectures":["MistralForCausalLM"],"hidden_size":4096,"num_hidden_layers":32,"num_attention_heads":32,"num_key_value_heads":null,"intermediate_size":14336,"vocab_size":32768,"sliding_window":null}`,
			LLM{Layers: 32, Hidden: 4096, Intermediate: 14336, Heads: 32, KVHeads: 32, HeadDim: 128, Vocab: 32768, MaxPositions: 131072}, "null: the config class sets num_attention_heads"},
		{"mistral sliding window", `{"architectures":["MistralForCausalLM"],"hidden_size":4096,"num_hidden_layers":32,"num_attention_heads":32,"num_key_value_heads":8,"intermediate_size":14336,"vocab_size":32000,"max_position_embeddings":32768}`,
			LLM{Layers: 32, Hidden: 4096, Intermediate: 14336, Heads: 32, KVHeads: 8, HeadDim: 128, Vocab: 32000, MaxPositions: 32768}, "sliding_window 4096 on 32 of 32 layers ignored"},
		{"gemma tied, head_dim default", `{"architectures":["GemmaForCausalLM"],"hidden_size":3072,"num_hidden_layers":28,"num_attention_heads":16,"num_key_value_heads":16,"intermediate_size":24576,"vocab_size":256000,"torch_dtype":"bfloat16"}`,
			LLM{Layers: 28, Hidden: 3072, Intermediate: 24576, Heads: 16, KVHeads: 16, HeadDim: 256, Vocab: 256000, MaxPositions: 8192, TiedEmbed: true}, "head_dim absent: 256"},
		{"gemma2 alternating windows", `{"architectures":["Gemma2ForCausalLM"],"hidden_size":3584,"num_hidden_layers":42,"num_attention_heads":16,"num_key_value_heads":8,"head_dim":256,"intermediate_size":14336,"vocab_size":256000,"sliding_window":4096,"torch_dtype":"float32"}`,
			LLM{Layers: 42, Hidden: 3584, Intermediate: 14336, Heads: 16, KVHeads: 8, HeadDim: 256, Vocab: 256000, MaxPositions: 8192, TiedEmbed: true}, "sliding_window 4096 on 21 of 42 layers"},
		{"gemma3 multimodal text_config diff", `{"architectures":["Gemma3ForConditionalGeneration"],"text_config":{"hidden_size":2560,"intermediate_size":10240,"model_type":"gemma3_text","num_hidden_layers":34,"sliding_window":1024},"torch_dtype":"bfloat16"}`,
			LLM{Layers: 34, Hidden: 2560, Intermediate: 10240, Heads: 8, KVHeads: 4, HeadDim: 256, Vocab: 262208, MaxPositions: 131072, TiedEmbed: true, QKNorm: true}, "sliding_window 1024 on 29 of 34 layers"},
		{"gemma3 layer_types", `{"architectures":["Gemma3ForCausalLM"],"hidden_size":1152,"num_hidden_layers":4,"num_attention_heads":4,"num_key_value_heads":1,"intermediate_size":6912,"vocab_size":262144,"sliding_window":512,"layer_types":["sliding_attention","sliding_attention","sliding_attention","full_attention"]}`,
			LLM{Layers: 4, Hidden: 1152, Intermediate: 6912, Heads: 4, KVHeads: 1, HeadDim: 256, Vocab: 262144, MaxPositions: 131072, TiedEmbed: true, QKNorm: true}, "sliding_window 512 on 3 of 4 layers"},
		{"qwen2 windows off", `{"architectures":["Qwen2ForCausalLM"],"hidden_size":3584,"num_hidden_layers":28,"num_attention_heads":28,"num_key_value_heads":4,"intermediate_size":18944,"vocab_size":152064,"max_position_embeddings":32768,"sliding_window":131072,"use_sliding_window":false}`,
			LLM{Layers: 28, Hidden: 3584, Intermediate: 18944, Heads: 28, KVHeads: 4, HeadDim: 128, Vocab: 152064, MaxPositions: 32768}, "torch_dtype absent"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := cat.LoadModel(writeConfig(t, "m", tc.text))
			if err != nil {
				t.Fatal(err)
			}
			if !sameShape(got, tc.want) || got.MaxPositions != tc.want.MaxPositions {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
			if !strings.Contains(strings.Join(got.Notes, "\n"), tc.note) {
				t.Errorf("notes %q lack %q", got.Notes, tc.note)
			}
			if got.Name != "m" || got.File == "" {
				t.Errorf("name %q file %q", got.Name, got.File)
			}
		})
	}
}

// TestHFConfigErrors: bad configs give "file:line: field: problem".
func TestHFConfigErrors(t *testing.T) {
	cat := DefaultCatalogue()
	for _, tc := range []struct{ name, text, want string }{
		{"missing field", "{\n\"architectures\": [\"LlamaForCausalLM\"],\n\"hidden_size\": 4096,\n\"num_attention_heads\": 32,\n\"intermediate_size\": 1,\n\"vocab_size\": 2\n}", "config.json: num_hidden_layers: missing"},
		{"unknown architecture", "{\n\"architectures\": [\"LlamaForCausalLMM\"]\n}", `config.json:2: architectures: "LlamaForCausalLMM" is not an architecture routesim reads; did you mean LlamaForCausalLM?`},
		{"mla refused", "{\n\"architectures\": [\"DeepseekV3ForCausalLM\"],\n\"n_routed_experts\": 256, \"num_experts_per_tok\": 8\n}", "config.json:2: architectures: DeepseekV3ForCausalLM (256 experts, 8 active per token) uses multi-head latent attention"},
		{"moe without experts", "{\n\"architectures\": [\"Qwen3MoeForCausalLM\"],\n\"hidden_size\": 64,\n\"num_hidden_layers\": 2,\n\"num_attention_heads\": 2,\n\"intermediate_size\": 8,\n\"vocab_size\": 8,\n\"num_experts_per_tok\": 9,\n\"num_experts\": 8,\n\"moe_intermediate_size\": 4\n}", "config.json:8: num_experts_per_tok: 9 exceeds num_experts 8"},
		{"moe expert width missing", "{\n\"architectures\": [\"Qwen2MoeForCausalLM\"],\n\"hidden_size\": 64,\n\"num_hidden_layers\": 2,\n\"num_attention_heads\": 2,\n\"intermediate_size\": 8,\n\"vocab_size\": 8,\n\"num_experts_per_tok\": 2,\n\"num_experts\": 8,\n\"moe_intermediate_size\": 4\n}", "config.json: shared_expert_intermediate_size: missing"},
		{"truncated", "{\n\"architectures\": [\"LlamaForCausalLM\"],\n\"hidden_size\": 40", "config.json:3: malformed JSON"},
		{"wrong type", "{\n\"architectures\": [\"LlamaForCausalLM\"],\n\"hidden_size\": \"big\",\n\"num_hidden_layers\": 2,\n\"num_attention_heads\": 2,\n\"intermediate_size\": 8,\n\"vocab_size\": 8\n}", `config.json:3: hidden_size: "big" is not a whole number`},
		{"negative", "{\n\"architectures\": [\"Qwen3ForCausalLM\"],\n\"hidden_size\": 64,\n\"num_hidden_layers\": -2,\n\"num_attention_heads\": 2,\n\"intermediate_size\": 8,\n\"vocab_size\": 8\n}", "config.json:4: num_hidden_layers: -2 must be in [1, 1000]"},
		{"kv not dividing", "{\n\"architectures\": [\"LlamaForCausalLM\"],\n\"hidden_size\": 64,\n\"num_hidden_layers\": 2,\n\"num_attention_heads\": 8,\n\"num_key_value_heads\": 3,\n\"intermediate_size\": 8,\n\"vocab_size\": 8\n}", "config.json:6: num_key_value_heads: 3 does not divide num_attention_heads 8"},
		{"no architecture", "{\n\"hidden_size\": 64\n}", "config.json: architectures: missing"},
		{"duplicate key", "{\n\"architectures\": [\"LlamaForCausalLM\"],\n\"hidden_size\": 64,\n\"hidden_size\": 65\n}", "config.json:4: hidden_size: given twice"},
		{"not an object", "[1, 2]", "config.json:1: want a JSON object"},
		{"layer_types length", "{\n\"architectures\": [\"Gemma2ForCausalLM\"],\n\"hidden_size\": 64,\n\"num_hidden_layers\": 2,\n\"num_attention_heads\": 2,\n\"intermediate_size\": 8,\n\"num_key_value_heads\": 1,\"vocab_size\": 8,\n\"layer_types\": [\"full_attention\"]\n}", "config.json:8: layer_types: want a list of 2 layer types"},
		{"int8 dtype", "{\n\"architectures\": [\"LlamaForCausalLM\"],\n\"hidden_size\": 64,\n\"num_hidden_layers\": 2,\n\"num_attention_heads\": 2,\n\"intermediate_size\": 8,\n\"vocab_size\": 8,\n\"torch_dtype\": \"int8\"\n}", `config.json:8: torch_dtype: "int8"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := cat.LoadModel(writeConfig(t, "m", tc.text))
			if err == nil {
				t.Fatal("accepted")
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q lacks %q", err, tc.want)
			}
		})
	}
}

// TestHFConfigCatalogueNames: a folder named like a catalogue model with
// another shape is renamed, so none of its measured profiles applies.
func TestHFConfigCatalogueNames(t *testing.T) {
	cat := DefaultCatalogue()
	m, err := cat.LoadModel(writeConfig(t, "Qwen3-8B", `{"architectures":["Qwen3ForCausalLM"],"hidden_size":2560,"num_hidden_layers":36,"num_attention_heads":32,"num_key_value_heads":8,"intermediate_size":9728,"vocab_size":151936,"tie_word_embeddings":true}`))
	if err != nil {
		t.Fatal(err)
	}
	if m.Name != "Qwen3-8B-custom" {
		t.Errorf("name %q, want Qwen3-8B-custom", m.Name)
	}
	if _, err := cat.LoadModel("Qwen/Qwen3-8B"); err != nil {
		t.Errorf("a catalogue Hugging Face id is not a path: %v", err)
	}
}

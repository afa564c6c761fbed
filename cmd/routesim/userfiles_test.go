package main

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/routesim/routesim/internal/crash"
)

// userGPU is a GPU file as a user writes it from a datasheet (a part the
// catalogue does not have; round figures, no optional fields).
const userGPU = `{
  "name": "My-Ada-48",
  "architecture": "ada",
  "memory_gib": 48,
  "memory_bandwidth_gb_s": 864,
  "bf16_dense_tflops": 181,
  "fp8_dense_tflops": 362,
  "tdp_w": 350
}
`

// userModel is a Hugging Face config.json of a model the catalogue does
// not have (Qwen3-4B's shape).
const userModel = `{
  "architectures": ["Qwen3ForCausalLM"],
  "head_dim": 128,
  "hidden_size": 2560,
  "intermediate_size": 9728,
  "max_position_embeddings": 40960,
  "model_type": "qwen3",
  "num_attention_heads": 32,
  "num_hidden_layers": 36,
  "num_key_value_heads": 8,
  "tie_word_embeddings": true,
  "torch_dtype": "bfloat16",
  "vocab_size": 151936
}
`

// writeUserFiles writes gpu.json and my-model/config.json into a fresh
// folder and returns it.
func writeUserFiles(t *testing.T, gpu, cfg string) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "my-model"), 0o755); err != nil {
		t.Fatal(err)
	}
	for name, text := range map[string]string{"gpu.json": gpu, "my-model/config.json": cfg} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestRunUserGPUAndModel: routesim runs a GPU file and a Hugging Face
// config end to end (flags, a model folder, and a scenario file with
// paths relative to it); every offered request is accounted for, and the
// header says where the GPU and model came from and what was derived.
func TestRunUserGPUAndModel(t *testing.T) {
	dir := writeUserFiles(t, userGPU, userModel)
	scen := filepath.Join(dir, "scenario.json")
	if err := os.WriteFile(scen, []byte(`{"gpu": "gpu.json", "model": "my-model", "n": 2}`), 0o644); err != nil {
		t.Fatal(err)
	}
	work := []string{"--workload", "synthetic", "--requests", "60", "--rate", "6", "--isl-mean", "1500", "--check-invariants"}
	for name, args := range map[string][]string{
		"flags":    {"--gpu", filepath.Join(dir, "gpu.json"), "--model", filepath.Join(dir, "my-model", "config.json"), "--n", "2", "--tp", "2"},
		"folder":   {"--gpu", filepath.Join(dir, "gpu.json"), "--model", filepath.Join(dir, "my-model"), "--n", "3"},
		"scenario": {"--scenario", scen},
	} {
		t.Run(name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out")
			stdout, stderr, err := runCLI(append(append([]string{"run", "--out", out}, args...), work...)...)
			if err != nil {
				t.Fatalf("%v\n%s", err, stderr)
			}
			for _, w := range []string{"× My-Ada-48, my-model tp", "gpu My-Ada-48 from ", "(ada)", "memory_visible_gib", "kernel prior: llmservingsim-RTX-4090-Llama-3.1-8B",
				"model my-model from ", "36 layers, hidden 2560", "profile My-Ada-48.my-model.", "its profile (below) implies: a 2048-token prefill chunk"} {
				if !strings.Contains(stdout, w) {
					t.Errorf("header lacks %q:\n%s", w, stdout)
				}
			}
			checkConserved(t, out, 60)
		})
	}
}

// checkConserved checks a run's output folder: offered requests all
// completed or rejected (none lost), one requests.csv row each.
func checkConserved(t *testing.T, out string, offered int) {
	t.Helper()
	var s struct {
		Offered, Completed int
		Rejected           map[string]int
	}
	b, err := os.ReadFile(filepath.Join(out, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	lost := s.Offered - s.Completed
	for _, n := range s.Rejected {
		lost -= n
	}
	if s.Offered != offered || lost != 0 || s.Completed == 0 {
		t.Errorf("offered %d, completed %d, rejected %v: %d requests unaccounted for", s.Offered, s.Completed, s.Rejected, lost)
	}
	rows, err := os.ReadFile(filepath.Join(out, "requests.csv"))
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(rows), "\n") - 1; n != s.Offered {
		t.Errorf("requests.csv has %d rows for %d offered", n, s.Offered)
	}
}

// userMoE is Qwen3-30B-A3B's config.json (128 experts, 8 per token).
const userMoE = `{"architectures":["Qwen3MoeForCausalLM"],"decoder_sparse_step":1,"head_dim":128,"hidden_size":2048,"intermediate_size":6144,"max_position_embeddings":40960,"mlp_only_layers":[],"model_type":"qwen3_moe","moe_intermediate_size":768,"num_attention_heads":32,"num_experts":128,"num_experts_per_tok":8,"num_hidden_layers":48,"num_key_value_heads":4,"tie_word_embeddings":false,"torch_dtype":"bfloat16","vocab_size":151936}`

// TestRunUserMoE: a Mixture-of-Experts config runs end to end on a GPU
// file, the header saying how its experts are costed.
func TestRunUserMoE(t *testing.T) {
	dir := writeUserFiles(t, userGPU, userMoE)
	out := filepath.Join(t.TempDir(), "out")
	stdout, stderr, err := runCLI("run", "--out", out, "--gpu", filepath.Join(dir, "gpu.json"), "--model", filepath.Join(dir, "my-model"),
		"--tp", "2", "--n", "2", "--workload", "synthetic", "--requests", "40", "--rate", "4", "--check-invariants")
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	for _, w := range []string{"Mixture-of-Experts: 128 routed experts of 768, 8 per token, on 48 of 48 layers", "a step reads the experts its tokens touch"} {
		if !strings.Contains(stdout, w) {
			t.Errorf("header lacks %q:\n%s", w, stdout)
		}
	}
	checkConserved(t, out, 40)
}

// TestRunBadUserFiles: a bad GPU file or config gives a positioned error
// ("file:line: field: problem", or "file: field: missing"), a non-zero
// exit, no output folder, and never a panic.
func TestRunBadUserFiles(t *testing.T) {
	for _, tc := range []struct {
		name, gpu, cfg string
		want           string // regexp
	}{
		{"truncated gpu", userGPU[:60], userModel, `gpu\.json:4: malformed JSON`},
		{"NaN memory", strings.Replace(userGPU, `"memory_gib": 48`, `"memory_gib": NaN`, 1), userModel, `gpu\.json:4: malformed JSON`},
		{"negative memory", strings.Replace(userGPU, `"memory_gib": 48`, `"memory_gib": -48`, 1), userModel, `gpu\.json:4: memory_gib: -48 must be in \[4, 1024\] GiB`},
		{"unknown gpu architecture", strings.Replace(userGPU, `"ada"`, `"lovelace"`, 1), userModel, `gpu\.json:3: architecture: "lovelace" is not one routesim knows`},
		{"missing gpu field", strings.Replace(userGPU, `  "tdp_w": 350`+"\n", `  "idle_w": 20`+"\n", 1), userModel, `gpu\.json: tdp_w: missing`},
		{"unknown model architecture", userGPU, strings.Replace(userModel, "Qwen3ForCausalLM", "Qwen9ForCausalLM", 1), `config\.json:2: architectures: "Qwen9ForCausalLM" is not an architecture routesim reads`},
		{"missing model field", userGPU, strings.Replace(userModel, `  "num_hidden_layers": 36,`+"\n", "", 1), `config\.json: num_hidden_layers: missing`},
		{"truncated config", userGPU, userModel[:100], `config\.json:5: malformed JSON`},
		{"moe config without experts", userGPU, strings.Replace(userModel, "Qwen3ForCausalLM", "Qwen3MoeForCausalLM", 1), `config\.json: num_experts: missing`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := writeUserFiles(t, tc.gpu, tc.cfg)
			out := filepath.Join(dir, "out")
			_, _, err := runCLI("run", "--gpu", filepath.Join(dir, "gpu.json"), "--model", filepath.Join(dir, "my-model"),
				"--workload", "synthetic", "--requests", "10", "--rate", "1", "--out", out)
			if err == nil {
				t.Fatal("accepted")
			}
			var in *crash.Internal
			if errors.As(err, &in) {
				t.Fatalf("panicked: %v", err)
			}
			if exitCode(err) == 0 {
				t.Errorf("exit code 0 for %v", err)
			}
			if !regexp.MustCompile(tc.want).MatchString(err.Error()) {
				t.Errorf("error %q does not match %q", err, tc.want)
			}
			if _, serr := os.Stat(out); serr == nil {
				t.Error("an output folder was written")
			}
		})
	}
}

// TestProfilesUserGPU: routesim profiles --gpu FILE --model DIR shows what
// was derived: the file's derivations, KV capacity, batch defaults and
// the default profile's kind and source.
func TestProfilesUserGPU(t *testing.T) {
	dir := writeUserFiles(t, userGPU, userModel)
	stdout, stderr, err := runCLI("profiles", "--gpu", filepath.Join(dir, "gpu.json"), "--model", filepath.Join(dir, "my-model"))
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	for _, w := range []string{"idle_w 45.2: tdp_w × 0.129", "vLLM batch defaults 2048/256", "kernel prior: llmservingsim-RTX-4090-Llama-3.1-8B (measured on RTX-4090, ada like this part)",
		"My-Ada-48  my-model  1   bf16", "2048/256", "kernel prior: llmservingsim-RTX-4090-Llama-3.1-8B", "KV TOKENS"} {
		if !strings.Contains(stdout, w) {
			t.Errorf("profiles output lacks %q:\n%s", w, stdout)
		}
	}
}

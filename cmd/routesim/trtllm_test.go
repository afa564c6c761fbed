package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/routesim/routesim/policy"
)

// TestRunTRTLLMEveryPolicy: --engine trtllm runs under every router, and
// the summary names the engine and TensorRT-LLM's settings.
func TestRunTRTLLMEveryPolicy(t *testing.T) {
	for _, name := range policy.Names() {
		out, _, err := runCLI("run", "--trace", smallTrace, "--n", "2", "--rate-scale", "4", "--policy", name, "--engine", "trtllm")
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if !strings.Contains(out, "policy "+name) || !strings.Contains(out, "engine trtllm (TensorRT-LLM 1.3.0rc14") || !strings.Contains(out, "completeness") {
			t.Errorf("%s: summary\n%s", name, out)
		}
	}
}

// TestRunTRTLLMSessions: the closed-loop sessions workload runs on
// TensorRT-LLM workers, every session completing.
func TestRunTRTLLMSessions(t *testing.T) {
	for _, p := range []string{"GUARANTEED_NO_EVICT", "MAX_UTILIZATION", "STATIC_BATCH"} {
		out, _, err := runCLI("run", "--workload", "sessions", "--concurrency", "8", "--sessions", "16", "--turns", "2..3",
			"--n", "2", "--policy", "kv", "--engine", "trtllm", "--capacity-scheduler-policy", p)
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		if !strings.Contains(out, "sessions: 16 started, 16 completed") || !strings.Contains(out, "capacity scheduler "+p) {
			t.Errorf("%s: summary:\n%s", p, out)
		}
	}
}

// TestEngineFlags: --engine trtllm brings TensorRT-LLM's defaults (32-token
// blocks, max_num_tokens 8192, max_batch_size 2048), which the batch-size
// and token-budget flags and their TensorRT-LLM spellings override; each
// engine's own settings are refused with the other.
func TestEngineFlags(t *testing.T) {
	run := []string{"run", "--trace", smallTrace, "--n", "2", "--first", "10"}
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"--engine", "trtllm"}, []string{"× 32 tokens", "max_num_tokens 8192, max_batch_size 2048, max_seq_len 40960", "GUARANTEED_NO_EVICT, chunked prefill off, overlap scheduler on, block reuse on",
			"stack dynamo-trtllm: frontend 5.12 ms/request + 1 µs/prompt token before routing; TensorRT-LLM executor host 580 µs/iteration"}},
		{[]string{"--engine", "trtllm", "--max-batch-size", "64", "--max-num-tokens", "4096"}, []string{"max_num_tokens 4096, max_batch_size 64"}},
		{[]string{"--engine", "trtllm", "--max_batch_size", "8", "--max_num_tokens=16384", "--max-seq-len", "20000"}, []string{"max_num_tokens 16384, max_batch_size 8, max_seq_len 20000"}},
		{[]string{"--engine", "trtllm", "--block-size", "64"}, []string{"× 64 tokens"}},
		{[]string{"--engine", "trtllm", "--tokens-per-block", "16", "--enable-chunked-prefill", "--disable-overlap-scheduler", "--no-enable-prefix-caching"}, []string{"× 16 tokens", "chunked prefill on, overlap scheduler off, block reuse off"}},
		{[]string{"--engine", "trtllm", "--capacity-scheduler-policy", "max_utilization", "--free-gpu-memory-fraction", "0.5"}, []string{"capacity scheduler MAX_UTILIZATION"}},
		{[]string{"--engine", "vllm"}, []string{"× 64 tokens", "max-num-batched-tokens 2048, max-num-seqs 256"}},
		{[]string{"--max-batch-size", "7", "--enable-chunked-prefill"}, []string{"max-num-seqs 7"}},
	} {
		out, _, err := runCLI(append(append([]string{}, run...), tc.args...)...)
		if err != nil {
			t.Errorf("%v: %v", tc.args, err)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(out, w) {
				t.Errorf("%v: want %q in:\n%.600s", tc.args, w, out)
			}
		}
		if strings.Contains(strings.Join(tc.args, " "), "vllm") || !strings.Contains(strings.Join(tc.args, " "), "trtllm") {
			if strings.Contains(out, "engine") {
				t.Errorf("%v: a vLLM run's summary names an engine:\n%.400s", tc.args, out)
			}
		}
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--engine", "sglang"}, `--engine: "sglang": want vllm or trtllm`},
		{[]string{"--capacity-scheduler-policy", "MAX_UTILIZATION"}, "--capacity-scheduler-policy is TensorRT-LLM's: it needs --engine trtllm"},
		{[]string{"--free-gpu-memory-fraction", "0.5"}, "--free-gpu-memory-fraction is TensorRT-LLM's"},
		{[]string{"--disable-overlap-scheduler"}, "--disable-overlap-scheduler is TensorRT-LLM's"},
		{[]string{"--engine", "trtllm", "--capacity-scheduler-policy", "FIFO"}, "--capacity-scheduler-policy: \"FIFO\": want GUARANTEED_NO_EVICT"},
		{[]string{"--engine", "trtllm", "--gpu-memory-utilization", "0.8"}, "--gpu-memory-utilization is vLLM's"},
		{[]string{"--engine", "trtllm", "--vllm-version", "0.10.0"}, "--vllm-version is vLLM's"},
	} {
		_, _, err := runCLI(append(append([]string{}, run...), tc.args...)...)
		if err == nil || !strings.Contains(err.Error(), tc.want) || exitCode(err) != 2 {
			t.Errorf("%v: %v, want %q (exit 2)", tc.args, err, tc.want)
		}
	}
}

// TestSweepAndPlanTRTLLM: sweep and plan take --engine trtllm (its block
// size with it), and plan compares the engines as a --setting.
func TestSweepAndPlanTRTLLM(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "sweep")
	out, _, err := runCLI("sweep", "--trace", smallTrace, "--n", "2", "--seeds", "1", "--policy", "round-robin,kv", "--engine", "trtllm",
		"--bootstrap", "10", "--quiet", "--out", dir)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "[trtllm]") {
		t.Errorf("sweep summary names no engine:\n%s", out)
	}
	pdir := filepath.Join(t.TempDir(), "plan")
	out, _, err = runCLI("plan", "--trace", smallTrace, "--n", "1..2", "--seeds", "1", "--policy", "round-robin", "--setting", "engine=vllm,trtllm",
		"--min-completeness", "0.5", "--quiet", "--out", pdir)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "engine=trtllm") || !strings.Contains(out, "engine=vllm") {
		t.Errorf("plan does not list both engines:\n%s", out)
	}
}

// TestRunTRTLLMSaysWhereStepTimesComeFrom: the header names the fitted
// TensorRT-LLM profile on its own deployment, flags a transfer of it on
// another, and says a deployment without one keeps its vLLM profile;
// vLLM on the fitted deployment never takes the TensorRT-LLM profile.
func TestRunTRTLLMSaysWhereStepTimesComeFrom(t *testing.T) {
	base := []string{"run", "--trace", smallTrace, "--n", "2", "--model", "Llama-3.1-70B", "--quant", "fp8", "--kv-cache-dtype", "fp8"}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--engine", "trtllm", "--gpu", "H100", "--tp", "2"}, "profile h100-sxm5-80gb.llama-3.1-70b.tp2.fp8.trtllm-bench [measured] (TensorRT-LLM step times fitted to published trtllm-bench throughput)"},
		{[]string{"--engine", "trtllm", "--gpu", "H200", "--tp", "1"}, "[transfer] (TensorRT-LLM step times transferred from h100-sxm5-80gb.llama-3.1-70b.tp2.fp8.trtllm-bench, not fitted for this deployment)"},
		{[]string{"--engine", "trtllm", "--gpu", "H100", "--tp", "2", "--profile", "kernel-prior"}, "trtllm-kernel-prior [transfer] (TensorRT-LLM kernel prior, not fitted)"},
		{[]string{"--engine", "trtllm", "--gpu", "A100-80GB", "--tp", "4", "--quant", "bf16", "--kv-cache-dtype", "auto"}, "(step times not calibrated for TensorRT-LLM)"},
	} {
		out, _, err := runCLI(append(append([]string(nil), base...), tc.args...)...)
		if err != nil {
			t.Errorf("%v: %v", tc.args, err)
			continue
		}
		if !strings.Contains(out, tc.want) {
			t.Errorf("%v: header\n%s\nwant %q", tc.args, strings.Join(strings.SplitN(out, "\n", 4)[:3], "\n"), tc.want)
		}
	}
	out, _, err := runCLI(append(base, "--gpu", "H100", "--tp", "2")...)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out, "trtllm") {
		t.Errorf("a vLLM run took a TensorRT-LLM profile:\n%s", out)
	}
}

// TestCalibrateTRTBenchFlags: --trtllm-bench's flags are checked before
// anything is fitted.
func TestCalibrateTRTBenchFlags(t *testing.T) {
	dir := t.TempDir()
	rows := "../../validate/data/h100-llama3.3-70b-trtllm-bench/rows.csv"
	tb := []string{"--trtllm-bench", rows, "--model", "Llama-3.1-70B", "--gpu", "H100", "--tp", "2"}
	with := func(more ...string) []string { return append(append([]string(nil), tb...), more...) }
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"fit rows alone", []string{"--spec", "x.json", "--fit-rows", "128/128"}, "--fit-rows needs --trtllm-bench"},
		{"no model", []string{"--trtllm-bench", rows, "--tp", "2"}, "--trtllm-bench needs --model"},
		{"no tp", []string{"--trtllm-bench", rows, "--model", "Llama-3.1-70B"}, "--trtllm-bench needs --tp"},
		{"osl", with("--osl", "o.json"), "--osl is an --mlenergy setting"},
		{"with spec", with("--spec", "x.json"), "--trtllm-bench replaces --spec and --derive"},
		{"with mlenergy", with("--mlenergy", "x.csv"), "--trtllm-bench replaces --mlenergy"},
		{"spec settings", with("--max-evals", "5"), "--max-evals: settings of a --spec fit"},
		{"unknown row", with("--fit-rows", "1/1"), "no row for ISL/OSL 1/1"},
		{"no such deployment", with("--tp", "8"), "no trtllm-bench rows for H100-SXM5-80GB/Llama-3.1-70B/tp8"},
	} {
		t.Run(tc.name, func(t *testing.T) { calibrateFails(t, dir, tc.name, tc.args, tc.want, 2) })
	}
}

package model

import (
	"strings"
	"testing"
)

// GPUs as vLLM sees them: torch's CUDA-visible total memory and device
// name (the catalogue's figures; the MI300X is a ≥ 70 GiB part from
// outside it).
var (
	a100x40 = struct {
		mem  int64
		name string
	}{42_298_834_944, "NVIDIA A100-SXM4-40GB"}
	a100x80 = struct {
		mem  int64
		name string
	}{85_100_068_864, "NVIDIA A100-SXM4-80GB"}
	h100 = struct {
		mem  int64
		name string
	}{85_045_477_376, "NVIDIA H100 80GB HBM3"}
	rtx4090 = struct {
		mem  int64
		name string
	}{25_250_627_584, "NVIDIA GeForce RTX 4090"}
	mi300x = struct {
		mem  int64
		name string
	}{205_822_885_888, "AMD Instinct MI300X"}
)

// TestVLLMReleaseDefaults checks every supported release against the
// table of docs/readings/vllm-releases.md. Each row names what sets its
// values (vLLM files: vllm/engine/arg_utils.py, the API-server budgets of
// _set_default_args_v1, later get_batch_defaults; vllm/config/vllm.py and
// vllm/config/scheduler.py for async scheduling; vllm/envs.py for
// VLLM_USE_V1); a80 is an 80 GB A100's budgets, the one GPU whose
// defaults moved. On every release: H100 and MI300X (≥ 70 GiB, not A100)
// 8192 tokens / 1024 sequences, A100-40GB and RTX 4090 (< 70 GiB) 2048 /
// 256, block size 16 (vllm/platforms/cuda.py check_and_update_config),
// prefix caching and chunked prefill on (V1).
func TestVLLMReleaseDefaults(t *testing.T) {
	for _, c := range []struct {
		version                 string
		a80Tokens, a80Seqs      int
		async, asyncFlag        bool
		v0ByEnv, legacyActivate bool
		graphMem                bool
	}{
		// 0.8.5: device_memory >= 70 GiB → 8192/1024, no name check, so an
		// 80 GB A100 gets the large budgets; V1 default, V0 by VLLM_USE_V1=0.
		{"0.8.5", 8192, 1024, false, false, true, true, false},
		{"0.8.5.post1", 8192, 1024, false, false, true, true, false},
		// 0.9.0: `"a100" not in device_name` added (PR #17885, 2025-05-09).
		{"0.9.0", 2048, 256, false, false, true, true, false},
		{"0.9.0.1", 2048, 256, false, false, true, true, false},
		{"0.9.1", 2048, 256, false, false, true, true, false},
		{"0.9.2", 2048, 256, false, false, true, true, false},
		// 0.10.0: --async-scheduling, experimental and off (PR #19970).
		{"0.10.0", 2048, 256, false, true, true, true, false},
		{"0.10.1", 2048, 256, false, true, true, true, false},
		{"0.10.1.1", 2048, 256, false, true, true, true, false},
		{"0.10.2", 2048, 256, false, true, true, true, false},
		// 0.11.0: the V0 engine removed (PR #25033 and the V0 deprecation
		// series); VLLM_USE_V1=0 no longer selects anything.
		{"0.11.0", 2048, 256, false, true, false, true, false},
		{"0.11.1", 2048, 256, false, true, false, true, false},
		{"0.11.2", 2048, 256, false, true, false, true, false},
		{"0.12.0", 2048, 256, false, true, false, true, false},
		{"0.13.0", 2048, 256, false, true, false, true, false},
		// 0.14.0 (2026-01-17): scheduler_config.async_scheduling defaults to
		// None, which VllmConfig turns on for a generative model on the uni or
		// mp executor without pipeline parallelism (PR #27614).
		{"0.14.0", 2048, 256, true, true, false, true, false},
		{"0.14.1", 2048, 256, true, true, false, true, false},
		{"0.15.0", 2048, 256, true, true, false, true, false},
		{"0.15.1", 2048, 256, true, true, false, true, false},
		{"0.16.0", 2048, 256, true, true, false, true, false},
		// 0.17.0: the smaller activation reservation at start-up profiling
		// (llm-d-planner accuracy_report.md: Qwen3-14B 5.64 GiB in 0.15/0.16,
		// 2.23 GiB from 0.17).
		{"0.17.0", 2048, 256, true, true, false, false, false},
		{"0.17.1", 2048, 256, true, true, false, false, false},
		{"0.18.0", 2048, 256, true, true, false, false, false},
		{"0.19.0", 2048, 256, true, true, false, false, false},
		{"0.19.1", 2048, 256, true, true, false, false, false},
		{"0.20.0", 2048, 256, true, true, false, false, false},
		// 0.20.1: the 8×A100 study's release (Dynamo v1.2.0's pin).
		{"0.20.1", 2048, 256, true, true, false, false, false},
		{"0.20.2", 2048, 256, true, true, false, false, false},
		// 0.21.0: CUDA graph memory profiled and deducted by default (PR
		// #30515; vLLM logs "CUDA graph memory profiling is enabled (default
		// since v0.21.0)").
		{"0.21.0", 2048, 256, true, true, false, false, true},
		{"0.22.0", 2048, 256, true, true, false, false, true},
		{"0.22.1", 2048, 256, true, true, false, false, true},
		{"0.23.0", 2048, 256, true, true, false, false, true},
		{"0.24.0", 2048, 256, true, true, false, false, true},
		{"0.25.0", 2048, 256, true, true, false, false, true},
		{"0.25.1", 2048, 256, true, true, false, false, true},
		{"0.26.0", 2048, 256, true, true, false, false, true},
		// 0.27.1: Dynamo main's pin (2026-08-18); get_batch_defaults still
		// has the 70 GiB rule and the A100 check (PR #51726's 16,384, merged
		// 2026-08-10, is not in 0.27).
		{"0.27.0", 2048, 256, true, true, false, false, true},
		{"0.27.1", 2048, 256, true, true, false, false, true},
	} {
		budgets := func(mem int64, name string) [2]int {
			d, err := VLLMDefaults(c.version, mem, name)
			if err != nil {
				t.Fatalf("%s: %v", c.version, err)
			}
			return [2]int{d.MaxNumBatchedTokens, d.MaxNumSeqs}
		}
		for _, g := range []struct {
			gpu  string
			got  [2]int
			want [2]int
		}{
			{"A100-80GB", budgets(a100x80.mem, a100x80.name), [2]int{c.a80Tokens, c.a80Seqs}},
			{"A100-40GB", budgets(a100x40.mem, a100x40.name), [2]int{2048, 256}},
			{"H100", budgets(h100.mem, h100.name), [2]int{8192, 1024}},
			{"MI300X", budgets(mi300x.mem, mi300x.name), [2]int{8192, 1024}},
			{"RTX 4090", budgets(rtx4090.mem, rtx4090.name), [2]int{2048, 256}},
		} {
			if g.got != g.want {
				t.Errorf("%s on %s: (max_num_batched_tokens, max_num_seqs) = %v, want %v", c.version, g.gpu, g.got, g.want)
			}
		}
		d, _ := VLLMDefaults("v"+c.version, h100.mem, h100.name)
		if d.Release != c.version || d.AsyncScheduling != c.async || d.AsyncSchedulingFlag != c.asyncFlag ||
			d.V0ByEnvOnly != c.v0ByEnv || d.LegacyActivation != c.legacyActivate || d.CUDAGraphMemoryProfiled != c.graphMem ||
			d.BlockSize != 16 || !d.PrefixCaching || !d.ChunkedPrefill {
			t.Errorf("%s: %+v", c.version, d)
		}
	}
	if n := len(VLLMReleases()); n != 38 {
		t.Errorf("%d supported releases, the table has 38", n)
	}
}

// TestVLLMVersionSpelling: "v" prefixes and four-part releases are read,
// an empty version is the default, and an unknown one is an error that
// lists the supported releases (no nearest match).
func TestVLLMVersionSpelling(t *testing.T) {
	for in, want := range map[string]string{"v0.9.0": "0.9.0", "0.10.1.1": "0.10.1.1", " 0.20.1 ": "0.20.1", "": DefaultVLLMVersion} {
		if got, err := CanonicalVLLMVersion(in); err != nil || got != want {
			t.Errorf("%q → %q, %v; want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{"0.8.4", "0.9", "0.28.0", "1.0.0", "0.19.0rc1", "latest", "v", "0.10.1.2"} {
		_, err := CanonicalVLLMVersion(bad)
		if err == nil || !strings.Contains(err.Error(), "vllm_version") || !strings.Contains(err.Error(), "0.8.5, 0.8.5.post1") ||
			!strings.Contains(err.Error(), "0.27.1") {
			t.Errorf("%q: %v", bad, err)
		}
	}
	if _, err := legacyActivation("0.28.0"); err == nil || !strings.Contains(err.Error(), "not a supported vLLM release") {
		t.Errorf("memory model with an unknown release: %v", err)
	}
}

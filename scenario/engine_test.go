package scenario

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/routesim/routesim/model"
	"github.com/routesim/routesim/sim"
)

// TestEngineTRTLLMDefaults: engine trtllm gives every worker TensorRT-LLM's
// scheduler with its defaults (max_batch_size 2048, max_num_tokens 8192,
// GUARANTEED_NO_EVICT, chunked prefill off, overlap on), on every GPU; a
// scenario file that names the engine and no block size gets its
// tokens_per_block, 32.
func TestEngineTRTLLMDefaults(t *testing.T) {
	s := Defaults()
	s.Trace, s.First, s.Engine, s.BlockSize = "../testdata/traces/arxiv_head60.jsonl", 10, "trtllm", 32
	b, err := s.Build(nil)
	if err != nil {
		t.Fatal(err)
	}
	w := b.Config.Front().Worker
	if w.Engine != sim.TRTLLM || w.MaxNumSeqs != 2048 || w.MaxNumBatchedTokens != 8192 || w.CapacityPolicy != sim.GuaranteedNoEvict ||
		w.ChunkedPrefill || w.NoOverlap || w.BlockSize != 32 {
		t.Errorf("worker %+v", w)
	}
	v := Defaults()
	v.Trace, v.First = s.Trace, 10
	bv, err := v.Build(nil)
	if err != nil {
		t.Fatal(err)
	}
	if vw := bv.Config.Front().Worker; vw.Engine != sim.VLLM || vw.MaxNumSeqs != 256 || vw.MaxNumBatchedTokens != 2048 {
		t.Errorf("vllm worker %+v", vw)
	}
	if b.MemoryUsedBytes() <= 0 || b.MemoryUsedBytes() > b.Deploy.GPU.MemoryBytes || bv.MemoryUsedBytes() != bv.Deploy.NVMLMemoryUsedBytes() {
		t.Errorf("memory used: trtllm %d, vllm %d (GPU %d)", b.MemoryUsedBytes(), bv.MemoryUsedBytes(), b.Deploy.GPU.MemoryBytes)
	}

	dir := t.TempDir()
	for _, tc := range []struct {
		body  string
		block int
	}{
		{`{"engine": "trtllm"}`, 32},
		{`{"engine": "trtllm", "block_size": 64}`, 64},
		{`{"engine": "vllm"}`, 64},
		{`{"n": 2}`, 64},
	} {
		p := filepath.Join(dir, "s.json")
		os.WriteFile(p, []byte(tc.body), 0o644)
		s, err := Load(p, Defaults())
		if err != nil || s.BlockSize != tc.block {
			t.Errorf("%s: block size %d (%v), want %d", tc.body, s.BlockSize, err, tc.block)
		}
	}
}

// TestEngineSettingsBelongToTheirEngine: each engine's own settings are
// refused with the other, naming the field (and the file's line).
func TestEngineSettingsBelongToTheirEngine(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct{ body, want string }{
		{`{"engine": "sglang"}`, `engine: "sglang": want vllm or trtllm`},
		{"{\n\"capacity_scheduler_policy\": \"MAX_UTILIZATION\"\n}", "s.json:2: capacity_scheduler_policy: is TensorRT-LLM's"},
		{`{"disable_overlap_scheduler": true}`, "disable_overlap_scheduler: is TensorRT-LLM's"},
		{`{"engine": "trtllm", "capacity_scheduler_policy": "FIFO"}`, `capacity_scheduler_policy: "FIFO": want GUARANTEED_NO_EVICT`},
		{`{"engine": "trtllm", "free_gpu_memory_fraction": 2}`, "free_gpu_memory_fraction: 2 must be in (0, 1]"},
		{"{\"engine\": \"trtllm\",\n\"gpu_memory_utilization\": 0.8}", "s.json:2: gpu_memory_utilization: is vLLM's"},
		{`{"engine": "trtllm", "vllm_version": "0.10.0"}`, "vllm_version: is vLLM's"},
	} {
		p := filepath.Join(dir, "s.json")
		os.WriteFile(p, []byte(tc.body), 0o644)
		if _, err := Load(p, Defaults()); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.body, err, tc.want)
		}
	}
	p := filepath.Join(dir, "s.json")
	os.WriteFile(p, []byte(`{"engine": "trtllm", "capacity_scheduler_policy": "max_utilization", "enable_chunked_prefill": true, "free_gpu_memory_fraction": 0.5}`), 0o644)
	s, err := Load(p, Defaults())
	if err != nil {
		t.Fatal(err)
	}
	s.Trace, s.First = "../testdata/traces/arxiv_head60.jsonl", 5
	b, err := s.Build(nil)
	if err != nil {
		t.Fatal(err)
	}
	if w := b.Config.Front().Worker; w.CapacityPolicy != sim.MaxUtilization || !w.ChunkedPrefill {
		t.Errorf("worker %+v", w)
	}
}

// TestEngineStack: a TensorRT-LLM run's profile carries the dynamo-trtllm
// stack's executor host time (580 µs) on top of a profile measured on
// vLLM, keeping the profile's frontend; a profile calibrated on that stack
// keeps its own value; a vLLM run's profile is the built-in one, untouched.
func TestEngineStack(t *testing.T) {
	base := Defaults()
	base.Trace, base.First = "../testdata/traces/arxiv_head60.jsonl", 10
	vllm, err := base.LoadProfile()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	own := *model.ForStack(vllm, model.StackDynamoTRTLLM)
	own.ExecutorHostNs = 1.5e6
	b, _ := json.Marshal(&own)
	file := filepath.Join(dir, "trt.json")
	if err := os.WriteFile(file, b, 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, engine, profile string
		stack                 string
		executor              float64
	}{
		{"vllm, built-in", "", "", "", 0},
		{"trtllm, built-in", "trtllm", "", model.StackDynamoTRTLLM, 580e3},
		{"trtllm, kernel prior", "trtllm", model.KernelPriorName, model.StackDynamoTRTLLM, 0}, // TensorRT-LLM's prior: the host gap is in its step base
		{"trtllm, calibrated on trtllm", "trtllm", file, model.StackDynamoTRTLLM, 1.5e6},
		{"vllm, calibrated on trtllm", "vllm", file, model.StackDynamoTRTLLM, 1.5e6},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := base
			s.Engine, s.Profile = tc.engine, tc.profile
			if tc.engine == "trtllm" {
				s.BlockSize = 32
			}
			built, err := s.Build(nil)
			if err != nil {
				t.Fatal(err)
			}
			p := built.Config.Front().Profile
			if p.Stack != tc.stack || p.ExecutorHostNs != tc.executor {
				t.Errorf("profile %s: stack %q, executor_host_ns %g; want %q, %g", p.Name, p.Stack, p.ExecutorHostNs, tc.stack, tc.executor)
			}
			if tc.profile == "" && p.FrontendNs != vllm.FrontendNs {
				t.Errorf("frontend_ns %g, want the profile's %g", p.FrontendNs, vllm.FrontendNs)
			}
			if tc.engine == "" && p != built.Profile {
				t.Error("built profile differs from the pool's")
			}
		})
	}
}

package model

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/routesim/routesim/internal/inputerr"
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

// TestKVCapacityMatchesVLLMLogs checks the memory model against every vLLM
// start-up log the project has: vLLM 0.19.0 on H100-80GB at utilization
// 0.95 with its defaults (8,192 batched tokens, 1,024 sequences;
// llm-d-planner results_raw.csv, Apache-2.0), and Qwen3-8B on one
// A100-SXM4-40GB at 0.9 with 2,048 / 256 under vLLM 0.19.1 and 0.9.2
// (shared/data/catalogue/models.md §3). None of these runs set a constant:
// the sampler term comes from Qwen2.5-7B, the forward term from
// CodeLlama-7B and Granite-3.1-8B (capacity.go).
func TestKVCapacityMatchesVLLMLogs(t *testing.T) {
	cat := DefaultCatalogue()
	h100, _ := cat.GPU("H100-SXM5-80GB")
	a100, _ := cat.GPU("A100-SXM4-40GB")
	llama, _ := cat.Model("Llama-3.1-8B")
	qwen, _ := cat.Model("Qwen3-8B")
	h100Eng := Engine{Version: "0.19.0", MaxNumBatchedTokens: 8192, MaxNumSeqs: 1024}
	for _, tc := range []struct {
		name   string
		d      Deployment
		eng    Engine
		logged int64 // "GPU KV cache size: N tokens"
	}{
		{"H100 Llama-3.1-8B TP1 0.19.0", Deployment{GPU: h100, Model: llama, TP: 1, Quant: BF16, KVDtypeBytes: 2, GPUMemoryUtilization: 0.95}, h100Eng, 476_016},
		{"H100 Llama-3.1-8B TP2 0.19.0", Deployment{GPU: h100, Model: llama, TP: 2, Quant: BF16, KVDtypeBytes: 2, GPUMemoryUtilization: 0.95}, h100Eng, 1_044_688},
		{"H100 Llama-3.1-8B TP4 0.19.0", Deployment{GPU: h100, Model: llama, TP: 4, Quant: BF16, KVDtypeBytes: 2, GPUMemoryUtilization: 0.95}, h100Eng, 2_209_792},
		{"H100 Llama-3.1-8B fp8 KV 0.19.0", Deployment{GPU: h100, Model: llama, TP: 1, Quant: BF16, KVDtypeBytes: 1, GPUMemoryUtilization: 0.95}, h100Eng, 952_032},
		{"H100 Qwen3-8B TP1 0.19.0", Deployment{GPU: h100, Model: qwen, TP: 1, Quant: BF16, KVDtypeBytes: 2, GPUMemoryUtilization: 0.95}, h100Eng, 418_688},
		{"A100-40GB Qwen3-8B 0.19.1", Deployment{GPU: a100, Model: qwen, TP: 1, Quant: BF16, KVDtypeBytes: 2, GPUMemoryUtilization: 0.9}, Engine{Version: "0.19.1", MaxNumBatchedTokens: 2048, MaxNumSeqs: 256}, 140_960},
		{"A100-40GB Qwen3-8B 0.9.2", Deployment{GPU: a100, Model: qwen, TP: 1, Quant: BF16, KVDtypeBytes: 2, GPUMemoryUtilization: 0.9}, Engine{Version: "0.9.2", MaxNumBatchedTokens: 2048, MaxNumSeqs: 256}, 136_080},
	} {
		m, err := tc.d.Memory(tc.eng, 16)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		errPct := 100 * float64(m.KVTokens-tc.logged) / float64(tc.logged)
		t.Logf("%-34s weights %.2f  activation %.2f  non-torch %.2f  KV %.2f GiB → %d tokens (vLLM logged %d, %+.2f%%)",
			tc.name, float64(m.WeightBytes)/GiB, float64(m.ActivationBytes)/GiB, float64(m.NonTorchBytes)/GiB, float64(m.KVBytes)/GiB, m.KVTokens, tc.logged, errPct)
		if errPct < -3 || errPct > 3 {
			t.Errorf("%s: %d tokens, %+.2f%% from vLLM's logged %d (tolerance 3%%)", tc.name, m.KVTokens, errPct, tc.logged)
		}
	}
}

func TestKVOverridesAndLog(t *testing.T) {
	cat := DefaultCatalogue()
	a100, _ := cat.GPU("A100-SXM4-40GB")
	qwen, _ := cat.Model("Qwen3-8B")
	d := Deployment{GPU: a100, Model: qwen, TP: 1, Quant: BF16, KVDtypeBytes: 2, GPUMemoryUtilization: 0.9}
	eng := Engine{MaxNumBatchedTokens: 2048, MaxNumSeqs: 256}
	for _, tc := range []struct {
		name string
		eng  Engine
		want int
	}{
		{"num-gpu-blocks-override", Engine{MaxNumBatchedTokens: 2048, MaxNumSeqs: 256, NumGPUBlocksOverride: 1000}, 1000},
		{"kv-cache-tokens", Engine{MaxNumBatchedTokens: 2048, MaxNumSeqs: 256, KVCacheTokens: 64_100}, 1001},
	} {
		if got, err := d.KVBlocks(64, tc.eng); err != nil || got != tc.want {
			t.Errorf("%s: %d blocks (%v), want %d", tc.name, got, err, tc.want)
		}
	}
	if _, err := d.KVBlocks(64, Engine{NumGPUBlocksOverride: 1, KVCacheTokens: 64}); err == nil {
		t.Error("both overrides accepted")
	}
	for _, tc := range []struct {
		name string
		eng  Engine
		want string
	}{
		{"bad version", Engine{Version: "nineteen", MaxNumBatchedTokens: 2048, MaxNumSeqs: 256}, "vllm_version"},
		{"negative override", Engine{NumGPUBlocksOverride: -1}, "num_gpu_blocks_override -1"},
		{"override beyond memory", Engine{NumGPUBlocksOverride: 5_000_000_000}, "--num-gpu-blocks-override: 320000000000 tokens"},
		{"tokens beyond memory", Engine{KVCacheTokens: 1 << 50}, "--kv-cache-tokens"},
		{"less than a block", Engine{KVCacheTokens: 10}, "less than one block"},
	} {
		if _, err := d.KVBlocks(64, tc.eng); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
	n, err := KVTokensFromLog("INFO ... [kv_cache_utils.py:1319] GPU KV cache size: 476,016 tokens\n")
	if err != nil || n != 476_016 {
		t.Errorf("log line: %d, %v", n, err)
	}
	if _, err := KVTokensFromLog("no such line"); err == nil {
		t.Error("a log without the line gave no error")
	}
	// 141,237 derived tokens (TestKVCapacityMatchesVLLMLogs) in blocks of 64.
	if b, _ := d.KVBlocks(64, eng); b != 141_237/64 {
		t.Errorf("default A100/Qwen3-8B capacity %d blocks of 64, want %d", b, 141_237/64)
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
		{"bad tp", Deployment{GPU: a100, Model: small, TP: 3, Quant: BF16, KVDtypeBytes: 2, GPUMemoryUtilization: 0.9}, "tp 3"},
		{"bad kv dtype", Deployment{GPU: a100, Model: small, TP: 1, Quant: BF16, KVDtypeBytes: 4, GPUMemoryUtilization: 0.9}, "KV dtype"},
	} {
		if _, err := tc.d.KVBlocks(16, Engine{MaxNumBatchedTokens: 2048, MaxNumSeqs: 256}); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want %q", tc.name, err, tc.want)
		}
	}
	// A deployment that does not fit, or a TP that does not split the KV
	// heads, is named by the setting to change (vLLM names
	// gpu_memory_utilization), so the CLI shows the flag.
	for _, tc := range []struct {
		d     Deployment
		field string
	}{
		{Deployment{GPU: a100, Model: big, TP: 1, Quant: BF16, KVDtypeBytes: 2, GPUMemoryUtilization: 0.9}, "gpu_memory_utilization"},
		{Deployment{GPU: a100, Model: small, TP: 1, Quant: BF16, KVDtypeBytes: 2, GPUMemoryUtilization: 1e-300}, "gpu_memory_utilization"},
		{Deployment{GPU: a100, Model: small, TP: 3, Quant: BF16, KVDtypeBytes: 2, GPUMemoryUtilization: 0.9}, "tp"},
	} {
		var fe *inputerr.FieldError
		if _, err := tc.d.KVBlocks(16, Engine{MaxNumBatchedTokens: 2048, MaxNumSeqs: 256}); !errors.As(err, &fe) || fe.Field != tc.field {
			t.Errorf("%s on %s at %g: %v, want an error naming %s", tc.d.Model.Name, tc.d.GPU.Name, tc.d.GPUMemoryUtilization, err, tc.field)
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
	cat := DefaultCatalogue()
	for _, p := range ps {
		g, err := cat.GPU(p.GPU)
		if err != nil {
			t.Fatal(err)
		}
		m, err := cat.Model(p.Model)
		if err != nil {
			t.Fatal(err)
		}
		d := Deployment{GPU: g, Model: m, TP: p.TP, Quant: p.Quant, KVDtypeBytes: 2, GPUMemoryUtilization: 0.9}
		if err := p.CheckPhysical(d); err != nil {
			t.Errorf("built-in profile above physical limits: %v", err)
		}
	}
	b := Batch{PrefillTokens: 1000, PrefillTokenCtx: 5e5, PrefillAttnPairs: 3e5, DecodeSeqs: 10, DecodeCtxTokens: 20000}
	lin, err := BLISProfileFor(deploy(t, "A100-80GB", "Llama-3.1-8B", 1, BF16))
	if err != nil {
		t.Fatal(err)
	}
	ker, err := FindProfile("A100-SXM4-40GB", "qwen3-8b", 1)
	if err != nil {
		t.Fatal(err)
	}
	if lin.IsKernel() || !ker.IsKernel() {
		t.Fatalf("forms: %s kernel=%v, %s kernel=%v", lin.Name, lin.IsKernel(), ker.Name, ker.IsKernel())
	}
	for _, tc := range []struct {
		p    *Profile
		want float64
	}{
		{lin, lin.StepBaseNs + 1000*lin.PrefillNsPerToken + 5e5*lin.PrefillAttnNsPerTokenCtx + 10*lin.DecodeNsPerSeq + 20000*lin.DecodeNsPerCtxToken},
		{ker, ker.StepBaseNs + 1000*ker.PrefillNsPerToken + 3e5*ker.PrefillAttnNsPerPair + 10*ker.DecodeNsPerSeq + 20000*ker.DecodeNsPerCtxToken +
			ker.LinearScale*(ker.LinearCurve.At(1010)-ker.LinearCurve.Ns[0])},
	} {
		if got := tc.p.StepNs(b); math.Abs(got-tc.want) > 1e-6*tc.want {
			t.Errorf("%s: StepNs = %v, want %v", tc.p.Name, got, tc.want)
		}
	}
}

// TestLinearCurveInterpolates: between points the curve is linear; past
// the last (16 tokens) each token costs EndNsPerToken, the upper half's
// (8 and 16 tokens) least-squares time per token, (8·170 + 16·330) /
// (8² + 16²) = 20.75 ns, not below the last point's 330/16 = 20.625.
func TestLinearCurveInterpolates(t *testing.T) {
	c := &LinearCurve{Tokens: []int{1, 8, 16}, Ns: []float64{100, 170, 330}}
	for _, tc := range []struct {
		t          int
		want, comp float64
	}{{0, 0, 0}, {1, 100, 0}, {4, 130, 30}, {8, 170, 70}, {12, 250, 150}, {16, 330, 230}, {24, 496, 396}} {
		if got := c.At(tc.t); math.Abs(got-tc.want) > 1e-9 {
			t.Errorf("At(%d) = %v, want %v", tc.t, got, tc.want)
		}
		if got := c.Compute(tc.t); math.Abs(got-tc.comp) > 1e-9 {
			t.Errorf("Compute(%d) = %v, want %v", tc.t, got, tc.comp)
		}
	}
}

// TestKernelPriorMeetsMeasuredFloor: the default A100 profile's prefill
// cost is at or above Vidur's measured kernel floor for the token-wise
// layers (69–71 µs/token at 2,048 tokens for Llama-3-8B's 32 layers, about
// the same linear FLOPs as Qwen3-8B's 36).
func TestKernelPriorMeetsMeasuredFloor(t *testing.T) {
	cat := DefaultCatalogue()
	g, _ := cat.GPU("A100-SXM4-40GB")
	m, _ := cat.Model("Qwen3-8B")
	d := Deployment{GPU: g, Model: m, TP: 1, Quant: BF16, KVDtypeBytes: 2, GPUMemoryUtilization: 0.9}
	p := ProfileFor(d, true)
	floor, err := LinearCurveFor(d, cat)
	if err != nil {
		t.Fatal(err)
	}
	perTok := floor.At(2048) / 2048
	if perTok < 69e3 || perTok > 73e3 {
		t.Errorf("transferred floor %.1f µs/token at 2,048 tokens, want Vidur's 69–71 (×0.995 FLOPs)", perTok/1e3)
	}
	im := p.Implied(d)
	t.Logf("%s: %.1f µs/token on a 2,048-token chunk (floor %.1f), prefill MFU %.0f%%, decode HBM %.0f%%, compute scale %.3f",
		p.Name, im.PrefillNsPerToken/1e3, perTok/1e3, 100*im.PrefillMFU, 100*im.DecodeHBMUtil, p.LinearScale)
	if !p.IsKernel() {
		t.Errorf("%s is not a kernel profile", p.Name)
	}
	if im.PrefillNsPerToken < perTok {
		t.Errorf("implied prefill %.1f µs/token below the measured floor %.1f", im.PrefillNsPerToken/1e3, perTok/1e3)
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

// TestKernelReferences: each GPU takes the measured library of its own
// architecture where one exists (and that GPU's measured attention, lm_head
// and sampler rates where they were measured on it); other GPUs get the A100
// curve flagged as a transfer. Every prior passes the physical check.
func TestKernelReferences(t *testing.T) {
	cat := DefaultCatalogue()
	for _, tc := range []struct {
		gpu       string
		crossArch bool
		rates     bool
	}{
		{"A100-SXM4-40GB", false, false},
		{"H100-SXM5-80GB", false, false},
		{"RTX-4090", false, true},
		{"L40S", true, false}, // not in the catalogue: specs below
	} {
		g, err := cat.GPU(tc.gpu)
		if err != nil {
			// NVIDIA L40S datasheet: 48 GB GDDR6, 864 GB/s, 362 TFLOP/s
			// BF16 with sparsity (181 dense).
			g = GPU{Name: tc.gpu, MemoryBytes: 48e9, HBMBytesPerSec: 864e9, BF16FLOPS: 181e12, TDPWatts: 350, IdleWatts: 30}
		}
		m, _ := cat.Model("Llama-3.1-8B")
		d := Deployment{GPU: g, Model: m, TP: 1, Quant: BF16, KVDtypeBytes: 2, GPUMemoryUtilization: 0.9}
		p, priors, err := KernelPrior(d, cat, false)
		if err != nil {
			t.Fatalf("%s: %v", tc.gpu, err)
		}
		if p.LinearCurve.CrossArchitecture != tc.crossArch {
			t.Errorf("%s: cross-architecture = %v, want %v", tc.gpu, p.LinearCurve.CrossArchitecture, tc.crossArch)
		}
		if got := measuredRates(g) != nil; got != tc.rates {
			t.Errorf("%s: measured rates = %v, want %v", tc.gpu, got, tc.rates)
		}
		if err := p.CheckPhysical(d); err != nil {
			t.Errorf("%s: %v", tc.gpu, err)
		}
		for _, pr := range priors {
			if pr.Name == "decode_ns_per_ctx_token" && tc.rates {
				// Llama-3.1-8B's 128 KiB of KV per token at the measured
				// 873 GB/s: 150 ns.
				if math.Abs(pr.Centre-150) > 3 {
					t.Errorf("%s: KV read prior %.1f ns/token, want ≈150 from the measured rate", tc.gpu, pr.Centre)
				}
			}
		}
	}
}

// TestPriorSourcesAreFormatted: every prior's source reads as text, with
// no fmt verb left unexpanded or misapplied.
func TestPriorSourcesAreFormatted(t *testing.T) {
	cat := DefaultCatalogue()
	for _, g := range cat.GPUs {
		m, _ := cat.Model("Llama-3.1-8B")
		d := Deployment{GPU: g, Model: m, TP: 1, Quant: BF16, KVDtypeBytes: 2, GPUMemoryUtilization: 0.9}
		for _, eager := range []bool{false, true} {
			_, priors, err := KernelPrior(d, cat, eager)
			if err != nil {
				t.Fatal(err)
			}
			for _, pr := range priors {
				if strings.Contains(pr.Source, "%!") || strings.Contains(pr.Source, "%%") {
					t.Errorf("%s %s: source %q", g.Name, pr.Name, pr.Source)
				}
			}
		}
	}
}

// TestGPUNames: exact names and listed aliases in any case (ignoring '-',
// '_'), nothing by prefix: a partial name lists the GPUs it starts, an
// unknown one suggests the nearest.
func TestGPUNames(t *testing.T) {
	cat := DefaultCatalogue()
	for _, tc := range []struct{ in, want, err string }{
		{"h100-sxm5-80gb", "H100-SXM5-80GB", ""},
		{"H100", "H100-SXM5-80GB", ""},
		{"h200", "H200-SXM-141GB", ""},
		{"rtx4090", "RTX-4090", ""},
		{"A100-80GB", "A100-SXM4-80GB", ""},
		{"a100_40gb", "A100-SXM4-40GB", ""},
		{"A100", "", "did you mean A100-SXM4-40GB or A100-SXM4-80GB?"},
		{"A100-40", "", "did you mean A100-SXM4-40GB?"},
		{"h10", "", "did you mean H100-SXM5-80GB?"},
		{"H10O-SXM5-80GB", "", "did you mean H100-SXM5-80GB?"},
		{"B300", "", `unknown GPU "B300"`},
	} {
		g, err := cat.GPU(tc.in)
		switch {
		case tc.err == "" && (err != nil || g.Name != tc.want):
			t.Errorf("%s: %s, %v; want %s", tc.in, g.Name, err, tc.want)
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("%s: %v; want an error with %q", tc.in, err, tc.err)
		}
	}
}

// TestGPUAliasesUniqueAndResolve: every listed alias names exactly one GPU
// (no alias is another GPU's name or alias) and resolves to it.
func TestGPUAliasesUniqueAndResolve(t *testing.T) {
	cat := DefaultCatalogue()
	owner := map[string]string{}
	for _, g := range cat.GPUs {
		for _, n := range append([]string{g.Name}, g.Aliases...) {
			k := strings.ToLower(strings.NewReplacer("-", "", "_", "", " ", "").Replace(n))
			if o, ok := owner[k]; ok && o != g.Name {
				t.Errorf("%q names both %s and %s", n, o, g.Name)
			}
			owner[k] = g.Name
			got, err := cat.GPU(n)
			if err != nil || got.Name != g.Name {
				t.Errorf("GPU(%q) = %s, %v; want %s", n, got.Name, err, g.Name)
			}
		}
	}
}

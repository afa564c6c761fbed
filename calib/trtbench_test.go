package calib

import (
	"math"
	"strings"
	"testing"

	"github.com/routesim/routesim/model"
)

const (
	trtHeader = "table,gpu,model,hf_model,precision,tp,isl,osl,num_requests,output_tok_s,kv_cache_free_gpu_mem_fraction,source\n"
	trtRow    = "v1.0,H100-SXM5-80GB,Llama-3.1-70B,nvidia/Llama-3.3-70B-Instruct-FP8,fp8,2,128,2048,3000,\"6,651\",0.95,perf-overview.md@00f37686\n"
)

func TestReadTRTBench(t *testing.T) {
	in := "# NVIDIA's table\n" + trtHeader + trtRow + strings.Replace(trtRow, "128,2048,3000", "20000,2000,1000", 1)
	rows, err := ReadTRTBench(strings.NewReader(in), "rows.csv")
	if err != nil {
		t.Fatal(err)
	}
	want := TRTBenchRow{Line: 3, Table: "v1.0", GPU: "H100-SXM5-80GB", Model: "Llama-3.1-70B", HFModel: "nvidia/Llama-3.3-70B-Instruct-FP8",
		Precision: "fp8", TP: 2, ISL: 128, OSL: 2048, Requests: 3000, TokensPerS: 6651, KVFraction: 0.95, Source: "perf-overview.md@00f37686"}
	if len(rows) != 2 || rows[0] != want || rows[1].Line != 4 || rows[1].Arm() != "20000/2000" {
		t.Fatalf("rows %+v", rows)
	}
	bad := func(old, new string) string { return trtHeader + strings.Replace(trtRow, old, new, 1) }
	for _, tc := range []struct{ name, in, want string }{
		{"empty", "", "rows.csv:1: no header"},
		{"missing column", strings.Replace(trtHeader, "num_requests,", "", 1), "rows.csv:1: num_requests: missing column"},
		{"no rows", trtHeader, "rows.csv:1: no rows"},
		{"precision", bad("fp8", "int4"), `rows.csv:2: precision: "int4": want fp8 or bf16`},
		{"tp", bad(",2,128", ",two,128"), `rows.csv:2: tp: "two" is not an integer`},
		{"zero isl", bad(",128,2048", ",0,2048"), "rows.csv:2: isl: 0 must be in [1, 1048576]"},
		{"throughput", bad(`"6,651"`, "-5"), `rows.csv:2: output_tok_s: "-5" must be a finite number`},
		{"fraction", bad("0.95", "95"), `rows.csv:2: kv_cache_free_gpu_mem_fraction: "95" must be a number in (0, 1]`},
		{"no source", bad("perf-overview.md@00f37686", ""), "rows.csv:2: source: empty"},
		{"short row", trtHeader + trtRow + "v1.0,H100\n", "rows.csv:3"},
		{"bare quote", trtHeader + strings.Replace(trtRow, "v1.0", `v1"0`, 1), "rows.csv:2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ReadTRTBench(strings.NewReader(tc.in), "rows.csv")
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %v, want %q", err, tc.want)
			}
		})
	}
}

func trtDeploy(t *testing.T, gpu string, tp int) model.Deployment {
	t.Helper()
	cat := model.DefaultCatalogue()
	g, err := cat.GPU(gpu)
	if err != nil {
		t.Fatal(err)
	}
	m, err := cat.Model("Llama-3.1-70B")
	if err != nil {
		t.Fatal(err)
	}
	return model.Deployment{GPU: g, Model: m, TP: tp, Quant: model.FP8, KVDtypeBytes: 1}
}

// TestBenchSettings follows trtllm-bench's heuristic by hand for Llama
// 70B FP8 on two H100s (79.2 GiB each, 70.6 G parameters at one byte,
// 160 KiB of FP8 KV per token): 87.6 GiB left, 0.95 of it for KV.
func TestBenchSettings(t *testing.T) {
	d := trtDeploy(t, "H100", 2)
	for _, tc := range []struct {
		isl, osl, bs, tokens int
	}{
		{128, 2048, 384, 2048},   // 265 requests: ⌈/128⌉; 282 tokens → the 2048 floor
		{128, 128, 2304, 4608},   // 2254: ⌈/256⌉; 4509 tokens → ⌈/512⌉
		{2048, 128, 384, 4608},   // 265; 4508 tokens
		{5000, 500, 128, 5128},   // 105: ⌈/32⌉; the prompt and the batch must fit: 5000 + 128
		{20000, 2000, 64, 20064}, // 26: the floor of 64; 20000 + 64
	} {
		s := BenchSettings(d, tc.isl, tc.osl, 0.95)
		if s.MaxBatchSize != tc.bs || s.MaxNumTokens != tc.tokens {
			t.Errorf("%d/%d: max_batch_size %d, max_num_tokens %d (%.1f requests); want %d, %d", tc.isl, tc.osl, s.MaxBatchSize, s.MaxNumTokens, s.KVMaxRequests, tc.bs, tc.tokens)
		}
	}
}

// TestTRTBenchSimulateCompletesEveryRequest: a small row runs to the end,
// its throughput is its output tokens over its span, and more KV-hungry
// rows are slower per token.
func TestTRTBenchSimulateCompletesEveryRequest(t *testing.T) {
	d := trtDeploy(t, "H100", 2)
	p, _, err := model.TRTLLMKernelPrior(d, model.DefaultCatalogue())
	if err != nil {
		t.Fatal(err)
	}
	b := &TRTBench{Deploy: d, Seed: 1}
	short := TRTBenchRow{ISL: 128, OSL: 256, Requests: 300, KVFraction: 0.95}
	long := TRTBenchRow{ISL: 4096, OSL: 256, Requests: 300, KVFraction: 0.95}
	s, err := b.Simulate(short, p)
	if err != nil {
		t.Fatal(err)
	}
	if got := float64(short.Requests*short.OSL) / s.TotalS; math.Abs(got-s.TokensPerS) > 1e-9*got {
		t.Errorf("throughput %g, tokens over span %g", s.TokensPerS, got)
	}
	if s.BlockSize != 32 || s.KVBlocks < 10000 {
		t.Errorf("block size %d, %d blocks: TensorRT-LLM's 32-token blocks over ~35 GiB of FP8 KV", s.BlockSize, s.KVBlocks)
	}
	l, err := b.Simulate(long, p)
	if err != nil {
		t.Fatal(err)
	}
	if !(l.TokensPerS < s.TokensPerS) {
		t.Errorf("4096-token prompts %.0f tok/s, 128-token ones %.0f: prefill must cost", l.TokensPerS, s.TokensPerS)
	}
}

// TestFitTRTBenchRecoversAKnownProfile fits rows simulated with a known
// move of the prior (linear layers 20 % slower, step base 15 % faster)
// and checks the fit lands nearer the truth than the prior, with every
// row reproduced and a posterior for the fitted terms.
func TestFitTRTBenchRecoversAKnownProfile(t *testing.T) {
	d := trtDeploy(t, "H100", 2)
	base, priors, err := model.TRTLLMKernelPrior(d, model.DefaultCatalogue())
	if err != nil {
		t.Fatal(err)
	}
	truth := clone(base)
	truth.LinearScale *= 1.2
	truth.StepBaseNs *= 0.85
	b := &TRTBench{Deploy: d, Seed: 1}
	var rows []TRTBenchRow
	for _, r := range []TRTBenchRow{{ISL: 128, OSL: 512, Requests: 400}, {ISL: 2048, OSL: 64, Requests: 200}, {ISL: 1000, OSL: 256, Requests: 300}} {
		r.KVFraction = 0.95
		s, err := b.Simulate(r, truth)
		if err != nil {
			t.Fatal(err)
		}
		r.TokensPerS = s.TokensPerS
		rows = append(rows, r)
	}
	params := []string{"step_base_ns", "linear_scale"}
	fit, err := FitTRTBench(b, rows, base, priors, params, 6)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range fit.Rows {
		if e := PctErr(r.Sim.TokensPerS, r.Row.TokensPerS); math.Abs(e) > 3 {
			t.Errorf("%s: %+.1f %% after the fit", r.Row.Arm(), e)
		}
	}
	for _, c := range []struct {
		name        string
		got, p, tru float64
	}{{"linear_scale", fit.Profile.LinearScale, base.LinearScale, truth.LinearScale}, {"step_base_ns", fit.Profile.StepBaseNs, base.StepBaseNs, truth.StepBaseNs}} {
		if math.Abs(math.Log(c.got/c.tru)) >= math.Abs(math.Log(c.p/c.tru)) {
			t.Errorf("%s: fitted %g, no nearer the truth %g than the prior %g", c.name, c.got, c.tru, c.p)
		}
	}
	post := fit.Profile.Posterior
	if post == nil || len(fit.SD) != 2 || !(fit.SD[0] > 0 && fit.SD[0] < fit.PriorSD[0]) {
		t.Fatalf("posterior %v, sd %v (prior %v)", post, fit.SD, fit.PriorSD)
	}
	if err := fit.Profile.Validate(); err != nil {
		t.Fatal(err)
	}
}

func TestSplitTRTBench(t *testing.T) {
	rows := []TRTBenchRow{{ISL: 128, OSL: 128}, {ISL: 128, OSL: 2048}, {ISL: 5000, OSL: 500}}
	in, out, err := SplitTRTBench(rows, []string{"5000/500", "128/128"})
	if err != nil || len(in) != 2 || len(out) != 1 || in[0].Arm() != "128/128" || out[0].Arm() != "128/2048" {
		t.Fatalf("in %v out %v err %v", in, out, err)
	}
	if _, _, err := SplitTRTBench(rows, []string{"1/1"}); err == nil || !strings.Contains(err.Error(), "1/1") {
		t.Errorf("unknown ISL/OSL: %v", err)
	}
}

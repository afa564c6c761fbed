package model

import (
	"math"
	"strings"
	"testing"
)

// FuzzReadProfile: any accepted profile gives finite, non-negative step
// times and a usable posterior; nothing panics, and every error names the
// file.
//
// It stays fast so that a time-boxed run ends on time:
//
//	go test ./model -run XXX -fuzz FuzzReadProfile -fuzztime 10s
//
// Go minimises every input that finds new coverage for up to
// -fuzzminimizetime (60 s by default), executing it again and again; the
// seeds used to be two shipped profiles, one of 10 KB (a long kernel curve
// and a posterior), whose mutants kept the minimiser busy for most of a
// run, and for up to a minute past it.
// The seeds are now small profiles that still carry every field (a kernel
// profile with a three-point curve, power fields and a two-coefficient
// posterior; a linear one; a minimal one; a broken one), and inputs over
// maxFuzzProfileBytes are skipped: their only new paths are the JSON
// decoder's, which is the standard library's.
func FuzzReadProfile(f *testing.F) {
	for _, seed := range fuzzProfileSeeds {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > maxFuzzProfileBytes {
			return
		}
		p, err := ReadProfile(strings.NewReader(string(data)), "p.json")
		if err != nil {
			if !strings.HasPrefix(err.Error(), "p.json") {
				t.Fatalf("error without the file name: %v", err)
			}
			return
		}
		for _, b := range []Batch{{PrefillTokens: 1, PrefillAttnPairs: 1, PrefillTokenCtx: 1}, {DecodeSeqs: 1, DecodeCtxTokens: 1}, {PrefillTokens: 70000, DecodeSeqs: 9}} {
			if v := p.StepNs(b); !(v >= 0) || math.IsInf(v, 0) {
				t.Fatalf("step time %g for %+v", v, b)
			}
		}
		if p.Posterior != nil {
			_ = p.Posterior.SD()
		}
	})
}

// maxFuzzProfileBytes is the largest input FuzzReadProfile reads: four
// times its largest seed.
const maxFuzzProfileBytes = 4 << 10

// fuzzProfileSeeds are FuzzReadProfile's seeds: two valid profiles that
// exercise every field (the linear one a serving stack's), a minimal
// valid kernel profile, an invalid one.
var fuzzProfileSeeds = []string{
	`{"name":"k","gpu":"A100-SXM4-40GB","model":"Qwen3-8B","tp":1,"quant":"bf16","kind":"measured","source":"s","step_base_ns":2e7,` +
		`"prefill_ns_per_token":10,"prefill_attn_ns_per_pair":1.9,"decode_ns_per_seq":16000,"decode_ns_per_ctx_token":135,` +
		`"frontend_ns":5e6,"frontend_ns_per_input_token":1000,"host_overhead_ns":7e6,"noise_sigma":0.05,"power_idle_w":50,` +
		`"power_busy_w":400,"power_pj_per_flop":1.1,"power_cap_w":400,"flops_per_token":1.6e10,"flops_per_seq":1.5e9,"attn_flops_per_pair":2e6,` +
		`"linear_curve":{"source":"s","tokens":[1,512,8192],"ns":[1.6e7,2.4e7,2.2e8]},"linear_scale":1,` +
		`"posterior":{"method":"m","params":["step_base_ns","linear_scale"],"mean_log":[16.8,0],"cov_log":[[0.01,0.001],[0.001,0.01]],` +
		`"prior_sd_log":[0.5,0.5],"identified":[true,false],"narrowed":[true,true],"model_error_log":0.1}}`,
	`{"name":"l","gpu":"g","model":"m","tp":2,"quant":"fp8","kind":"transfer","step_base_ns":1.6e7,"prefill_ns_per_token":47837,` +
		`"prefill_attn_ns_per_token_ctx":0.5,"decode_ns_per_seq":18205,"frontend_ns":7.7e6,"frontend_ns_per_input_token":2309,"power_idle_w":59,"power_busy_w":400,` +
		`"stack":"dynamo-trtllm","executor_host_ns":580000}`,
	`{"name":"x","gpu":"g","model":"m","tp":1,"quant":"bf16","kind":"measured","step_base_ns":1,"linear_curve":{"source":"s","tokens":[1,8],"ns":[10,20]},"linear_scale":1}`,
	`{"name":"x","gpu":"g","model":"m","tp":1,"quant":"bf16","kind":"measured","step_base_ns":1,"linear_curve":{"source":"s","tokens":[2,8],"ns":[10,-20]},"linear_scale":0,` +
		`"stack":"sglang","executor_host_ns":-1}`,
}

// TestFuzzProfileSeeds: the fuzzer starts from valid profiles (all but
// the last seed), and every seed is far inside the size it reads.
func TestFuzzProfileSeeds(t *testing.T) {
	for i, seed := range fuzzProfileSeeds {
		_, err := ReadProfile(strings.NewReader(seed), "seed.json")
		if (err == nil) != (i < 3) {
			t.Errorf("seed %d: error %v", i, err)
		}
		if 4*len(seed) > maxFuzzProfileBytes {
			t.Errorf("seed %d: %d bytes, more than a quarter of %d", i, len(seed), maxFuzzProfileBytes)
		}
	}
}

func FuzzKVTokensFromLog(f *testing.F) {
	f.Add("INFO [kv_cache_utils.py:1319] GPU KV cache size: 476,016 tokens\n")
	f.Add("GPU KV cache size: 0 tokens")
	f.Add("GPU KV cache size: 99999999999999999999999 tokens")
	f.Fuzz(func(t *testing.T, log string) {
		n, err := KVTokensFromLog(log)
		if err == nil && n < 1 {
			t.Fatalf("accepted %d tokens", n)
		}
	})
}

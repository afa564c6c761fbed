package model

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
)

// FuzzReadProfile: any accepted profile gives finite, non-negative step
// times and a usable posterior; nothing panics.
func FuzzReadProfile(f *testing.F) {
	for _, p := range BuiltinProfiles()[:2] {
		b, _ := jsonOf(p)
		f.Add(b)
	}
	f.Add([]byte(`{"name":"x","gpu":"g","model":"m","tp":1,"quant":"bf16","kind":"measured","step_base_ns":1,"linear_curve":{"source":"s","tokens":[1,8],"ns":[10,20]},"linear_scale":1}`))
	f.Add([]byte(`{"name":"x","gpu":"g","model":"m","tp":1,"quant":"bf16","kind":"measured","step_base_ns":1,"linear_curve":{"source":"s","tokens":[2,8],"ns":[10,-20]},"linear_scale":0}`))
	f.Fuzz(func(t *testing.T, data []byte) {
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

func jsonOf(p *Profile) ([]byte, error) { return json.Marshal(p) }

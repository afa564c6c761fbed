package calib

import (
	"errors"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/routesim/routesim/internal/inputerr"
	"github.com/routesim/routesim/sim"
)

// vllmSummary is a small result saved without --save-detailed, with its
// random dataset given as --metadata; one key per line so that errors
// can be checked for their line.
const vllmSummary = `{"date": "20260605-215830",
"backend": "openai",
"num_prompts": 10,
"random_input_len": "1000",
"random_output_len": "100",
"random_range_ratio": "0.5",
"request_rate": 2.0,
"burstiness": 1.0,
"max_concurrency": null,
"duration": 6.5,
"completed": 10,
"failed": 0,
"request_throughput": 1.538,
"mean_ttft_ms": 80.5,
"median_ttft_ms": 75.0,
"p99_ttft_ms": 130.0,
"mean_tpot_ms": 21.0,
"median_tpot_ms": 20.8,
"p99_tpot_ms": 24.0,
"mean_itl_ms": 21.0}`

// vllmDetailed is a two-request result saved with --save-detailed.
const vllmDetailed = `{"num_prompts": 2, "request_rate": "inf", "burstiness": 1.0, "max_concurrency": null,
"duration": 0.15, "completed": 2, "failed": 0, "request_throughput": 13.333,
"input_lens": [100, 200],
"output_lens": [3, 4],
"ttfts": [0.05, 0.08],
"itls": [[0.02, 0.02], [0.03, 0.02, 0.02]],
"latencies": [0.09, 0.15],
"start_times": [100.0, 100.0],
"queue_times": [0.0, 0.0],
"errors": ["", ""]}`

func TestReadVLLMBench(t *testing.T) {
	p, err := ReadVLLMBench(strings.NewReader(vllmSummary), "v.json")
	if err != nil {
		t.Fatal(err)
	}
	if p.Requests != 10 || p.RatePerS != 2 || p.Burstiness != 1 || p.MaxConcurrency != 0 || p.InputLens != nil ||
		*p.Dataset != (RandomDataset{InputLen: 1000, OutputLen: 100, RangeRatio: 0.5}) {
		t.Errorf("settings %+v dataset %+v", p, p.Dataset)
	}
	want := Stats{"ttft_ms_avg": 80.5, "ttft_ms_p50": 75, "ttft_ms_p99": 130, "itl_ms_avg": 21, "itl_ms_p50": 20.8, "requests_per_s": 1.538}
	for k, v := range want {
		if p.Stats[k] != v {
			t.Errorf("%s = %v, want %v", k, p.Stats[k], v)
		}
	}
	d, err := ReadVLLMBench(strings.NewReader(vllmDetailed), "d.json")
	if err != nil {
		t.Fatal(err)
	}
	if !math.IsInf(d.RatePerS, 1) || d.InputLens[1] != 200 || d.OutputLens[0] != 3 || len(d.Records) != 2 {
		t.Fatalf("detailed %+v", d)
	}
	// TPOT of request 2: (0.15 − 0.08)/(4 − 1) s; send times both at the
	// benchmark's start (the last end, 100.15, less the duration).
	if r := d.Records[1]; math.Abs(r.ITLMs-70.0/3) > 1e-9 || r.TTSTMs != 30 || r.TTFTMs != 80 {
		t.Errorf("record %+v", r)
	}
	if len(d.SendS) != 2 || math.Abs(d.SendS[0]-0) > 1e-9 || math.Abs(d.SendS[1]-0) > 1e-9 {
		t.Errorf("send times %v", d.SendS)
	}
}

func TestReadVLLMBenchRejectsBadFiles(t *testing.T) {
	for _, tc := range []struct {
		name, in, want string
	}{
		{"not JSON", `{"num_prompts": 10,`, "v.json:1: not valid JSON"},
		{"Python's Infinity", strings.Replace(vllmSummary, `"burstiness": 1.0`, `"burstiness": Infinity`, 1), "v.json:8: not valid JSON"},
		{"array", `[1, 2]`, "v.json:1: not a vllm bench serve result"},
		{"no prompts", strings.Replace(vllmSummary, `"num_prompts": 10,`, ``, 1), "v.json: num_prompts: missing"},
		{"fractional prompts", strings.Replace(vllmSummary, `"num_prompts": 10`, `"num_prompts": 10.5`, 1), "v.json:3: num_prompts: 10.5 is not a whole number"},
		{"rate word", strings.Replace(vllmSummary, `"request_rate": 2.0`, `"request_rate": "fast"`, 1), "v.json:7: request_rate: \"fast\": want a number"},
		{"rate zero", strings.Replace(vllmSummary, `"request_rate": 2.0`, `"request_rate": 0`, 1), "v.json:7: request_rate: 0 must be > 0"},
		{"rate missing", strings.Replace(vllmSummary, `"request_rate": 2.0,`, ``, 1), "v.json: request_rate: missing"},
		{"burstiness negative", strings.Replace(vllmSummary, `"burstiness": 1.0`, `"burstiness": -1`, 1), "v.json:8: burstiness: -1 must be in [0.01, 1000]"},
		{"concurrency zero", strings.Replace(vllmSummary, `"max_concurrency": null`, `"max_concurrency": 0`, 1), "v.json:9: max_concurrency: 0 is not a whole number in [1"},
		{"ramp-up", strings.Replace(vllmSummary, `"backend": "openai"`, `"ramp_up_strategy": "linear"`, 1), "v.json:2: ramp_up_strategy: a ramp-up run"},
		{"no ttft", strings.Replace(vllmSummary, `"mean_ttft_ms": 80.5,`, ``, 1), "v.json: mean_ttft_ms: missing"},
		{"negative ttft", strings.Replace(vllmSummary, `"mean_ttft_ms": 80.5`, `"mean_ttft_ms": -80.5`, 1), "v.json:14: mean_ttft_ms: -80.5 ms is outside"},
		{"ttft text", strings.Replace(vllmSummary, `"mean_ttft_ms": 80.5`, `"mean_ttft_ms": "slow"`, 1), "v.json:14: mean_ttft_ms: slow is not a finite number"},
		{"completed over prompts", strings.Replace(vllmSummary, `"completed": 10`, `"completed": 11`, 1), "v.json:11: completed: 11 is not a whole number in [1, 10]"},
		{"failed over the rest", strings.Replace(vllmSummary, `"failed": 0`, `"failed": 3`, 1), "v.json:12: failed: 3 is not a whole number in [0, 0]"},
		{"no lengths", strings.Replace(strings.Replace(vllmSummary, `"random_input_len": "1000",`, ``, 1), `"random_output_len": "100",`, ``, 1),
			"v.json: input_lens: missing: the file has neither per-request lengths nor the dataset's; re-run vllm bench serve with --save-detailed, or record the random dataset's settings with --metadata"},
		{"other dataset", strings.Replace(vllmSummary, `"backend": "openai"`, `"dataset_name": "sharegpt"`, 1), "v.json:2: dataset_name: \"sharegpt\": only the random dataset"},
		{"range ratio 1", strings.Replace(vllmSummary, `"random_range_ratio": "0.5"`, `"random_range_ratio": "1"`, 1), "v.json:6: random_range_ratio: 1 must be in [0, 1)"},
		{"input len text", strings.Replace(vllmSummary, `"random_input_len": "1000"`, `"random_input_len": "long"`, 1), "v.json:4: random_input_len: long is not a finite number"},
		{"no throughput", strings.Replace(strings.Replace(vllmSummary, `"request_throughput": 1.538,`, ``, 1), `"duration": 6.5,`, ``, 1), "v.json: request_throughput: missing, and no positive duration"},
		{"short list", strings.Replace(vllmDetailed, `"ttfts": [0.05, 0.08]`, `"ttfts": [0.05]`, 1), "d.json:5: ttfts: 1 entries, but num_prompts is 2"},
		{"list of text", strings.Replace(vllmDetailed, `"ttfts": [0.05, 0.08]`, `"ttfts": ["a", "b"]`, 1), "d.json:5: ttfts: not a list of the expected values"},
		{"missing errors", strings.Replace(vllmDetailed, `,
"errors": ["", ""]`, ``, 1), "d.json: errors: missing: a --save-detailed result keeps"},
		{"fractional length", strings.Replace(vllmDetailed, `"input_lens": [100, 200]`, `"input_lens": [100, 200.5]`, 1), "d.json:3: input_lens[1]: 200.5 is not a token count"},
		{"ttft after the end", strings.Replace(vllmDetailed, `"ttfts": [0.05, 0.08]`, `"ttfts": [0.05, 0.5]`, 1), "d.json:5: ttfts[1]: 0.5 s with latency 0.15 s"},
		{"negative gap", strings.Replace(vllmDetailed, `[0.03, 0.02, 0.02]`, `[0.03, -0.02, 0.02]`, 1), "d.json:6: itls[1][1]: -0.02 s is outside"},
		{"all failed", strings.Replace(vllmDetailed, `"errors": ["", ""]`, `"errors": ["timeout", "timeout"]`, 1), "d.json:10: errors: every request failed"},
		{"start before the benchmark", strings.Replace(vllmDetailed, `"start_times": [100.0, 100.0]`, `"start_times": [90.0, 100.0]`, 1), "d.json:8: start_times[0]: 90 s is -10 s from the benchmark's start"},
		{"negative queue", strings.Replace(vllmDetailed, `"queue_times": [0.0, 0.0]`, `"queue_times": [0.0, -1.0]`, 1), "d.json:9: queue_times[1]: -1 s is outside"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			name := "v.json"
			if strings.HasPrefix(tc.want, "d.json") {
				name = "d.json"
			}
			_, err := ReadVLLMBench(strings.NewReader(tc.in), name)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v\nwant %q", err, tc.want)
			}
		})
	}
}

// FuzzReadVLLMBench: the vllm bench serve reader never panics; what it
// refuses it refuses with an error naming the file; what it accepts can
// be re-simulated (a trace of num_prompts requests with positive lengths
// and non-decreasing send times).
func FuzzReadVLLMBench(f *testing.F) {
	for _, s := range []string{vllmSummary, vllmDetailed,
		strings.Replace(vllmSummary, `"burstiness": 1.0`, `"burstiness": Infinity`, 1),
		strings.Replace(vllmSummary, `"request_rate": 2.0`, `"request_rate": "inf"`, 1),
		strings.Replace(vllmSummary, `"num_prompts": 10`, `"num_prompts": 1e300`, 1),
		strings.Replace(vllmDetailed, `"ttfts": [0.05, 0.08]`, `"ttfts": [0.05]`, 1),
		strings.Replace(vllmDetailed, `"errors": ["", ""]`, `"errors": [null, "x"]`, 1),
		strings.Replace(vllmDetailed, `"start_times": [100.0, 100.0]`, `"start_times": [-1e308, 1e308]`, 1),
		`{"num_prompts": 3}`, `[]`, `{`, ``,
	} {
		f.Add([]byte(s))
	}
	for _, c := range fixtureCases() {
		if b, err := os.ReadFile(filepath.Join("testdata", "bench", c.name+".json")); err == nil {
			f.Add(b)
		}
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		p, err := ReadVLLMBench(strings.NewReader(string(b)), "v.json")
		if err != nil {
			var pe *inputerr.Error
			if !errors.As(err, &pe) || pe.File != "v.json" {
				t.Fatalf("unpositioned error %T: %v", err, err)
			}
			return
		}
		if p.Requests > 1000 {
			return // a valid but large point: generating it is not the reader's test
		}
		tr := p.Trace(benchRNG())
		if len(tr.Requests) != p.Requests {
			t.Fatalf("%d requests for num_prompts %d", len(tr.Requests), p.Requests)
		}
		for i, r := range tr.Requests {
			if r.InputTokens < 1 || r.OutputTokens < 1 || (i > 0 && r.ArrivalNs < tr.Requests[i-1].ArrivalNs) || r.ArrivalNs < 0 {
				t.Fatalf("request %d: %+v", i, r)
			}
		}
	})
}

func benchRNG() *rand.Rand { return sim.Stream(1, "bench") }

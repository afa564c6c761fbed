package calib

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestFailedSimulationIsReported: a candidate whose simulation fails is
// not silently a bad loss — the fitter keeps the first error, which Fit
// returns.
func TestFailedSimulationIsReported(t *testing.T) {
	spec, err := LoadSpec("../validate/data/rtx4090-llama3.1-8b-llmservingsim/predict.json")
	if err != nil {
		t.Fatal(err)
	}
	arms, err := loadArms(spec, nil)
	if err != nil {
		t.Fatal(err)
	}
	p := arms[0].built.Profile
	f := &fitter{arms: arms, base: p}
	if l := f.lossOf(p); l >= 1e6 || f.simErr != nil {
		t.Fatalf("a valid run: loss %g, error %v", l, f.simErr)
	}
	arms[0].built.Config.Pools[0].Worker.MaxNumSeqs = 0 // the engine refuses this configuration
	if l := f.lossOf(p); l < 1e6 {
		t.Errorf("a failed run scored %g", l)
	}
	if f.simErr == nil || !strings.Contains(f.simErr.Error(), "max_num_seqs") {
		t.Errorf("failure not kept: %v", f.simErr)
	}
}

// TestWarmupApplies: a calibration run's warmup_s leaves the early
// arrivals out of the simulated statistics, as in run and sweep.
func TestWarmupApplies(t *testing.T) {
	ttft := func(warmup float64) float64 {
		spec, err := LoadSpec("../validate/data/rtx4090-llama3.1-8b-llmservingsim/predict.json")
		if err != nil {
			t.Fatal(err)
		}
		spec.Runs[0].Setup.WarmupS = warmup
		arms, err := loadArms(spec, nil)
		if err != nil {
			t.Fatal(err)
		}
		rep, err := Evaluate(spec, arms[0].built.Profile, 1)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rep.Rows {
			if r.Stat == "ttft_ms_p10" {
				return r.Simulated
			}
		}
		t.Fatal("no ttft_ms_p10 row")
		return 0
	}
	// The run is saturated: requests after the first 10 s wait far longer.
	if a, b := ttft(0), ttft(10); !(b > 2*a) {
		t.Errorf("TTFT p10 %g ms without warm-up, %g ms with 10 s of it: warm-up not applied", a, b)
	}
}

// TestRecordCountMustMatchSetup: 20 per-request records for a setup that
// offers 60 requests describe different runs: refused, naming the file.
func TestRecordCountMustMatchSetup(t *testing.T) {
	dir := t.TempDir()
	var b strings.Builder
	for i := 0; i < 20; i++ {
		fmt.Fprintf(&b, `{"metadata":{"request_start_ns":%d,"request_end_ns":%d},"metrics":{"time_to_first_token":{"value":100},"request_latency":{"value":900},"input_sequence_length":{"value":500},"output_sequence_length":{"value":20}}}`+"\n", i*1e9, i*1e9+9e8)
	}
	os.WriteFile(filepath.Join(dir, "records.jsonl"), []byte(b.String()), 0o644)
	trace, _ := filepath.Abs("../testdata/traces/arxiv_head60.jsonl")
	spec := fmt.Sprintf(`{"name":"t","runs":[{"name":"r","arm":"r","setup":{"trace":%q,"n":1,"policy":"round-robin","gpu":"A100-SXM4-40GB","model":"Qwen3-8B","tp":1,"rate_scale":1},"aiperf_records":"records.jsonl"}]}`, trace)
	os.WriteFile(filepath.Join(dir, "spec.json"), []byte(spec), 0o644)
	s, err := LoadSpec(filepath.Join(dir, "spec.json"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = loadArms(s, nil)
	if err == nil || !strings.Contains(err.Error(), "records.jsonl") || !strings.Contains(err.Error(), "20 records") {
		t.Errorf("%v", err)
	}
}

package calib

import (
	"math"
	"testing"

	"github.com/routesim/routesim/model"
)

// TestH100ProfileReproducesMeasuredStages re-simulates inference-sim's
// measured H100 Llama-3.1-8B stages with the built-in calibrated kernel
// profile (fitted on all six). Achieved when fitted with vLLM 0.15.1's
// async scheduling (on by default from 0.14.0): TTFT means within 20.5 %
// (roleplay, whose longer prompt and 150-token system prompt the other
// profiles' fit under-prices), ITL means within 9.9 %; the guard is 21 %
// on both. (Fitted with the synchronous scheduler it was 16.2 and 11.6 %;
// that profile re-simulated with async scheduling misses TTFT by up to
// 44 %.)
func TestH100ProfileReproducesMeasuredStages(t *testing.T) {
	if testing.Short() {
		t.Skip("six 3,000-request runs")
	}
	spec, err := LoadSpec("../validate/data/h100-llama3.1-8b-inferencesim/calib.json")
	if err != nil {
		t.Fatal(err)
	}
	p, err := model.FindProfile("H100-SXM5-80GB", "Llama-3.1-8B", 1)
	if err != nil || p.Kind != "measured" || p.Name != "h100-sxm5-80gb.llama-3.1-8b.tp1.calibrated" {
		t.Fatalf("built-in profile %v, %v", p, err)
	}
	rep, err := Evaluate(spec, p, 1)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range spec.Runs {
		for _, stat := range []string{"ttft_ms_avg", "itl_ms_avg"} {
			row, ok := rep.Find(r.Arm, stat)
			if !ok || math.Abs(row.ErrPct) > 21 {
				t.Errorf("%s %s: %+v (guard 21 %%)", r.Arm, stat, row)
			}
		}
	}
}

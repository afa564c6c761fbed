package calib

import (
	"math"
	"strings"
	"testing"
)

// TestSpreadLogLikelihood: the likelihood of a measured spread is highest
// where the simulated spread matches it, and a noiseless replay (no spread
// at all) cannot explain repetitions that differ.
func TestSpreadLogLikelihood(t *testing.T) {
	a := &arm{reps: 3, spread: Stats{"ttft_ms_p50": 0.01, "itl_ms_avg": 0.003}}
	keys := []string{"ttft_ms_p50", "itl_ms_avg"}
	ll := func(scale float64) float64 {
		return spreadLogLikelihood(a, Stats{"ttft_ms_p50": 0.01 * scale, "itl_ms_avg": 0.003 * scale}, keys, 8)
	}
	if l := ll(0); !math.IsInf(l, -1) {
		t.Errorf("no simulated spread: log-likelihood %g, want −Inf", l)
	}
	match := ll(1)
	for _, scale := range []float64{0.1, 0.3, 3, 10} {
		if l := ll(scale); l >= match {
			t.Errorf("spread ×%g: log-likelihood %g ≥ %g at the matching spread", scale, l, match)
		}
	}
	// Repetitions that agree to the last digit still leave a finite answer.
	same := &arm{reps: 3, spread: Stats{"ttft_ms_p50": 0}}
	if l := spreadLogLikelihood(same, Stats{"ttft_ms_p50": 0.01}, keys[:1], 8); math.IsNaN(l) || math.IsInf(l, 0) {
		t.Errorf("identical repetitions: log-likelihood %g", l)
	}
	if l := spreadLogLikelihood(&arm{reps: 1}, Stats{"ttft_ms_p50": 0.01}, keys[:1], 8); l != 0 {
		t.Errorf("one repetition carries no spread, log-likelihood %g", l)
	}
}

// TestNoiseRecovery: three repetitions simulated with σ = 0.1 (other
// seeds than the fit's) on a loaded round-robin arm: σ = 0 is ruled out
// and 0.1 is among the supported values.
func TestNoiseRecovery(t *testing.T) {
	if testing.Short() {
		t.Skip("simulates 35 runs")
	}
	truth := truthProfile()
	truth.NoiseSigma = 0.1
	setup := recoverySetups()["loaded-rr"]
	b, err := setup.Build(truth)
	if err != nil {
		t.Fatal(err)
	}
	a := &arm{name: "loaded-rr", spec: setup, built: b, reps: 3}
	f := &fitter{arms: []*arm{a}, base: truth}
	var reps []Stats
	for seed := uint64(101); seed <= 103; seed++ {
		st, _, err := f.simulate(truth, seed)
		if err != nil {
			t.Fatal(err)
		}
		reps = append(reps, st[0])
	}
	a.measured, a.spread = meanStats(reps)
	start := *truth
	start.NoiseSigma = 0
	grid := []float64{0, 0.01, 0.03, 0.1, 0.3, 1}
	sigma, note := f.fitNoise(&start, Options{NoiseSigmas: grid, Seeds: 8})
	if sigma == 0 || !strings.Contains(note, "σ=0: -Inf") {
		t.Fatalf("σ = %g: %s", sigma, note)
	}
	i := strings.Index(note, "σ ∈ {")
	if i < 0 {
		t.Fatalf("note names no supported set: %s", note)
	}
	set := note[i : i+strings.Index(note[i:], "}")]
	if !strings.Contains(set, "0.1,") && !strings.HasSuffix(set, "0.1") {
		t.Errorf("σ = %g, supported %s}: the truth 0.1 is not supported (%s)", sigma, set, note)
	}
	if strings.Contains(set, " 1") || strings.HasSuffix(set, "{1") {
		t.Errorf("supported %s}: σ = 1 is ten times the truth", set)
	}
}

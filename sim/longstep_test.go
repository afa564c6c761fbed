package sim_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/routesim/routesim/model"
	"github.com/routesim/routesim/policy"
	. "github.com/routesim/routesim/sim"
	"github.com/routesim/routesim/workload"
)

// TestStepPastMaxStepStopsTheRun: coefficients within their bounds can
// still multiply into an absurd step (here a million-token context at
// 1 ms per token); the run stops with an error naming the worker and the
// profile instead of reporting results, whether the worker takes its
// decode steps one by one or as a run (where the step past the bound is
// not the run's first).
func TestStepPastMaxStepStopsTheRun(t *testing.T) {
	for _, tc := range []struct {
		name string
		prof model.Profile
		isl  int
	}{
		// One prefill chunk of 4,000 tokens at 1 s each: 67 minutes.
		{"prefill", model.Profile{StepBaseNs: 1e6, PrefillNsPerToken: model.MaxPerTokenNs}, 4000},
		// Decode at 1 ms per context token crosses the hour 10 steps
		// after the prompt: 100 s + 3.5e6 tokens × 1 ms = 3,600 s.
		{"decode run", model.Profile{StepBaseNs: model.MaxFixedNs, DecodeNsPerCtxToken: model.MaxPerPairNs}, 3_499_990},
	} {
		for _, stepByStep := range []bool{false, true} {
			p := tc.prof
			p.Name, p.GPU, p.Model, p.TP, p.Quant, p.Kind = "slow", "g", "m", 1, model.BF16, "roofline"
			if err := p.Validate(); err != nil {
				t.Fatalf("%s: the profile should be valid: %v", tc.name, err)
			}
			cfg := Config{Pools: Single(1, WorkerConfig{MaxNumSeqs: 8, MaxNumBatchedTokens: 8192, BlockSize: 64,
				KVBlocks: 60_000, MaxModelLen: 3_840_000}, &p), StepByStep: stepByStep}
			wl, err := workload.Prepare(mkTrace(treq{0, tc.isl, 50, nil}), 64)
			if err != nil {
				t.Fatal(err)
			}
			_, err = Run(cfg, wl, &policy.RoundRobin{})
			if err == nil || !strings.Contains(err.Error(), `profile "slow"`) || !strings.Contains(err.Error(), "longer than") {
				t.Errorf("%s (step by step %v): error %v, want the step past the hour naming the profile", tc.name, stepByStep, err)
			}
		}
	}
}

// TestRunRefusesAnOversizedRing: a prefix-hash policy built by hand with a
// ring too large for the cluster is refused before the run starts, not
// built (100 workers × 65,536 points: 6.5 M points).
func TestRunRefusesAnOversizedRing(t *testing.T) {
	wl, err := workload.Prepare(mkTrace(treq{0, 100, 5, nil}), 64)
	if err != nil {
		t.Fatal(err)
	}
	_, err = Run(testConfig(100), wl, &policy.PrefixHash{PrefixCharLength: 100, MeanLoadFactor: 1.25, Replication: 1 << 16})
	if err == nil || !strings.Contains(err.Error(), "ring") {
		t.Fatalf("error %v, want the ring refused", err)
	}
}

// TestCancelStopsTheRun: a run whose Config.Cancel is closed stops with
// ErrCancelled within a few thousand events instead of finishing; an open
// channel changes nothing.
func TestCancelStopsTheRun(t *testing.T) {
	var reqs []treq
	for i := range 5000 {
		reqs = append(reqs, treq{Time(i) * Millisecond, 300, 50, nil})
	}
	wl, err := workload.Prepare(mkTrace(reqs...), 64)
	if err != nil {
		t.Fatal(err)
	}
	open := make(chan struct{})
	cfg := testConfig(4)
	want, err := Run(cfg, wl, &policy.RoundRobin{})
	if err != nil {
		t.Fatal(err)
	}
	cfg.Cancel = open
	got, err := Run(cfg, wl, &policy.RoundRobin{})
	if err != nil || Summarize(got).Completed != Summarize(want).Completed || got.Records[4999].End != want.Records[4999].End {
		t.Fatalf("an open cancel channel changed the run: %v", err)
	}
	closed := make(chan struct{})
	close(closed)
	cfg.Cancel = closed
	if _, err := Run(cfg, wl, &policy.RoundRobin{}); !errors.Is(err, ErrCancelled) {
		t.Errorf("closed cancel channel: error %v, want ErrCancelled", err)
	}
}

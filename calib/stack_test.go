package calib

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/routesim/routesim/model"
	"github.com/routesim/routesim/scenario"
)

// trtSetups are recoverySetups on TensorRT-LLM workers without the
// overlap scheduler, where the executor's host time adds to every
// iteration; max_num_tokens 16384 admits every prompt of the window.
func trtSetups() map[string]scenario.Spec {
	out := recoverySetups()
	for arm, s := range out {
		s.Engine, s.BlockSize, s.DisableOverlapScheduler, s.MaxNumBatchedTokens = "trtllm", 32, true, 16384
		out[arm] = s
	}
	return out
}

// TestStackTermPrior: a fit of a TensorRT-LLM run's executor host time
// starts from the dynamo-trtllm stack's value with the spread its sources
// give (model.StackPrior), not a linear profile's generic one.
func TestStackTermPrior(t *testing.T) {
	s := trtSetups()["light-kv"]
	base, err := s.LoadProfile()
	if err != nil {
		t.Fatal(err)
	}
	dep, _ := s.Deployment()
	priors, err := priorsFor(dep, base, 1)
	if err != nil {
		t.Fatal(err)
	}
	pr, ok := priors["executor_host_ns"]
	if !ok || pr.Centre != 580e3 || pr.LogSD != 1 || !strings.Contains(pr.Source, "#13957") {
		t.Errorf("executor_host_ns prior %+v (%v)", pr, ok)
	}
	v := scenario.Defaults()
	vb, _ := v.LoadProfile()
	if vp, _ := priorsFor(dep, vb, 1); vp != nil {
		if _, ok := vp["executor_host_ns"]; ok {
			t.Error("a vLLM profile (executor_host_ns 0) has an executor prior")
		}
	}
}

// TestRecoveryOfExecutorHostTime: TensorRT-LLM runs without the overlap
// scheduler, simulated with 2 ms of executor host time per iteration and
// exported as AIPerf summaries, are fitted back from the stack's 580 µs
// with --fit executor_host_ns alone: within 10 %. (From the A100 profile
// refit with async scheduling, the one-parameter fit needs more than 60
// evaluations to get there: 200.)
func TestRecoveryOfExecutorHostTime(t *testing.T) {
	if testing.Short() {
		t.Skip("fits for several seconds")
	}
	setups := trtSetups()
	first := setups["light-kv"]
	start, err := first.LoadProfile()
	if err != nil {
		t.Fatal(err)
	}
	if start.ExecutorHostNs != 580e3 {
		t.Fatalf("start: executor_host_ns %g, want the stack's 580 µs", start.ExecutorHostNs)
	}
	sp := *start
	sp.NoiseSigma = 0 // deterministic service: the fit compares like with like
	dir := t.TempDir()
	b, _ := json.Marshal(&sp)
	if err := os.WriteFile(filepath.Join(dir, "start.json"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	truth := sp
	truth.ExecutorHostNs = 2e6
	path := writeRuns(t, dir, false, &truth, "start.json", setups)
	spec, err := LoadSpec(path)
	if err != nil {
		t.Fatal(err)
	}
	res, err := Fit(spec, Options{Params: []string{"executor_host_ns"}, Regularization: -1, MaxEvals: 200, NoPosterior: true})
	if err != nil {
		t.Fatal(err)
	}
	got := res.Profile.ExecutorHostNs
	t.Logf("executor_host_ns: truth 2e6, fitted %.4g\n%s", got, res.Report)
	if math.Abs(got/2e6-1) > 0.1 || res.Profile.Stack != model.StackDynamoTRTLLM {
		t.Errorf("fitted executor_host_ns %.4g (stack %q), truth 2e6", got, res.Profile.Stack)
	}
}

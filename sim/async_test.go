package sim_test

import (
	"errors"
	"testing"

	"github.com/routesim/routesim/internal/inputerr"
	"github.com/routesim/routesim/model"
	. "github.com/routesim/routesim/sim"
)

// TestVLLMAsyncSchedulingDelay: under vLLM's async scheduling the engine
// core schedules batch n+1 as soon as batch n is launched
// (vllm/v1/engine/core.py step_with_batch_queue), so a request that
// reaches a busy worker during step n first runs in step n+2, one step
// later than with the synchronous scheduler; one that reaches an idle
// worker runs at once either way. The overlap cutoff is TensorRT-LLM's
// (TestTRTOverlapSchedulerDelay); step times stay the profile's.
func TestVLLMAsyncSchedulingDelay(t *testing.T) {
	busy := mkTrace(treq{at: 0, isl: 64, osl: 100}, treq{at: 5*Millisecond + 500*Microsecond, isl: 64, osl: 2})
	for _, async := range []bool{false, true} {
		cfg := testConfig(1)
		cfg.Pools[0].Worker.AsyncScheduling = async
		res, log := runJobs(t, cfg, busy)
		at := res.Records[1].Dispatched
		start := Time(-1)
		for _, s := range log.steps[1:] {
			if s.b.PrefillTokens > 0 {
				start = s.start
				break
			}
		}
		k := 0 // the step in flight when B arrived
		for ; !(log.steps[k].start <= at && at < log.steps[k].start+log.steps[k].dur); k++ {
		}
		want := log.steps[k+1].start
		if async {
			want = log.steps[k+2].start
		}
		if start != want {
			t.Errorf("async %v: B arrived in step %d [%v, %v) and first ran at %v, want %v", async, k, log.steps[k].start, log.steps[k].start+log.steps[k].dur, start, want)
		}
	}
	idle := mkTrace(treq{at: 0, isl: 64, osl: 2}, treq{at: Second, isl: 64, osl: 2})
	var ttft [2]Time
	for i, async := range []bool{false, true} {
		cfg := testConfig(1)
		cfg.Pools[0].Worker.AsyncScheduling = async
		res, _ := runJobs(t, cfg, idle)
		ttft[i] = res.Records[1].TTFT()
	}
	if ttft[0] != ttft[1] || ttft[0] <= 0 {
		t.Errorf("idle worker: TTFT %v synchronous, %v async: want the same prefill step", ttft[0], ttft[1])
	}
}

// TestAsyncSchedulingIsVLLMs: a TensorRT-LLM worker has no async
// scheduling (its overlap scheduler is NoOverlap's), and ResolveWorker
// refuses the setting for it.
func TestAsyncSchedulingIsVLLMs(t *testing.T) {
	cfg := trtConfig(1, GuaranteedNoEvict)
	cfg.Pools[0].Worker.AsyncScheduling = true
	if err := cfg.Validate(); err == nil {
		t.Error("a TensorRT-LLM worker with async scheduling validated")
	}
}

// TestResolveWorkerTakesTheRelease: a vLLM worker's batch budgets and
// async scheduling are its release's on its GPU (model.VLLMDefaults): an
// 80 GB A100 gets 8192/1024 under 0.8.5 and 2048/256 from 0.9.0 (PR
// #17885), an H100 8192/1024 throughout, and async scheduling is on from
// 0.14.0; an explicit setting wins where the flag exists (0.10.0 on); an
// unknown release, or async scheduling on TensorRT-LLM, is refused by
// field.
func TestResolveWorkerTakesTheRelease(t *testing.T) {
	cat := model.DefaultCatalogue()
	llm, _ := cat.Model("Qwen3-8B")
	on, off := true, false
	for _, tc := range []struct {
		gpu, version string
		async        *bool
		tokens, seqs int
		wantAsync    bool
		field        string
		engine       EngineKind
	}{
		{"A100-SXM4-80GB", "0.8.5", nil, 8192, 1024, false, "", VLLM},
		{"A100-SXM4-80GB", "v0.9.0", nil, 2048, 256, false, "", VLLM},
		{"A100-SXM4-40GB", "0.13.0", nil, 2048, 256, false, "", VLLM},
		{"A100-SXM4-40GB", "0.14.0", nil, 2048, 256, true, "", VLLM},
		{"A100-SXM4-40GB", "", nil, 2048, 256, true, "", VLLM}, // the default, 0.20.1
		{"H100-SXM5-80GB", "0.8.5", nil, 8192, 1024, false, "", VLLM},
		{"H100-SXM5-80GB", "0.27.1", &off, 8192, 1024, false, "", VLLM},
		{"H100-SXM5-80GB", "0.10.0", &on, 8192, 1024, true, "", VLLM},
		{"H100-SXM5-80GB", "0.9.2", &on, 0, 0, false, "async_scheduling", VLLM},
		{"H100-SXM5-80GB", "0.28.0", nil, 0, 0, false, "vllm_version", VLLM},
		{"H100-SXM5-80GB", "", &on, 0, 0, false, "async_scheduling", TRTLLM},
	} {
		gpu, err := cat.GPU(tc.gpu)
		if err != nil {
			t.Fatal(err)
		}
		dep := model.Deployment{GPU: gpu, Model: llm, TP: 1, Quant: model.BF16, KVDtypeBytes: 2}
		w, err := ResolveWorker(dep, EngineFlags{VLLMVersion: tc.version, AsyncScheduling: tc.async, Engine: tc.engine})
		var fe *inputerr.FieldError
		switch {
		case tc.field != "":
			if !errors.As(err, &fe) || fe.Field != tc.field {
				t.Errorf("%s %q: %v, want an error naming %s", tc.gpu, tc.version, err, tc.field)
			}
		case err != nil:
			t.Errorf("%s %q: %v", tc.gpu, tc.version, err)
		case w.MaxNumBatchedTokens != tc.tokens || w.MaxNumSeqs != tc.seqs || w.AsyncScheduling != tc.wantAsync:
			t.Errorf("%s %q: %d tokens, %d seqs, async %v; want %d, %d, %v", tc.gpu, tc.version,
				w.MaxNumBatchedTokens, w.MaxNumSeqs, w.AsyncScheduling, tc.tokens, tc.seqs, tc.wantAsync)
		}
	}
}

package sim_test

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/routesim/routesim/policy"
	. "github.com/routesim/routesim/sim"
	"github.com/routesim/routesim/workload"
)

// The TensorRT-LLM worker's tests follow docs/readings/tensorrt-llm.md,
// which read TensorRT-LLM's scheduler at the versions cited there:
// capacityScheduler.cpp (GuaranteedNoEvictScheduler::impl,
// MaxUtilizationScheduler::operator(), beneficialToSkip),
// microBatchScheduler.cpp (MicroBatchScheduler::operator(),
// setCtxRequestsChunkSize), kvCacheManager.cpp
// (getRemainingBlocksToCompletion), llmRequest.h (LlmRequest::pause),
// llmapi/llm.py (_check_arguments) and py_executor.py
// (_executor_loop_overlap).

// trtConfig is testConfig's cluster running TensorRT-LLM's scheduler with
// policy p.
func trtConfig(n int, p CapacityPolicy) Config {
	cfg := testConfig(n)
	w := &cfg.Pools[0].Worker
	w.Engine, w.CapacityPolicy = TRTLLM, p
	return cfg
}

// tightKV gives cfg's workers 20 blocks of 16 tokens.
func tightKV(cfg Config) Config {
	w := &cfg.Pools[0].Worker
	w.BlockSize, w.KVBlocks, w.MaxModelLen = 16, 20, 320
	return cfg
}

// runJobs runs tr on cfg under round-robin, with max_tokens[i] set on job
// i when given, checking every invariant (simulateWith's checks, for a
// prepared workload).
func runJobs(t *testing.T, cfg Config, tr *workload.Trace, maxTokens ...int) (*Result, *stepLog) {
	t.Helper()
	return runJobsWith(t, cfg, &policy.RoundRobin{}, tr, maxTokens...)
}

func runJobsWith(t *testing.T, cfg Config, pol policy.Policy, tr *workload.Trace, maxTokens ...int) (*Result, *stepLog) {
	t.Helper()
	log := &stepLog{t: t, cfg: cfg}
	cfg.Observer, cfg.CheckInvariants = log, true
	wl, err := workload.Prepare(tr, cfg.Pools[0].Worker.BlockSize)
	if err != nil {
		t.Fatal(err)
	}
	for i, m := range maxTokens {
		wl.Jobs[i].MaxTokens = m
	}
	res, err := Run(cfg, wl, pol)
	if err != nil {
		t.Fatal(err)
	}
	checkRecords(t, res)
	return res, log
}

// TestTRTGuaranteedNoEvictWaitsWhereVLLMAdmits: GUARANTEED_NO_EVICT admits
// a context only if ceil((prompt + max_tokens)/tokens_per_block) blocks
// are free after every running request's remaining worst case
// (getRemainingBlocksToCompletion; GuaranteedNoEvictScheduler::impl pass 2,
// "If one requests fails to be scheduled, break"). A holds 250 tokens'
// worth (16 of 20 blocks) from its start, so B (210 tokens, 14 blocks) waits
// for A to finish; vLLM admits B at once on its prompt's 4 blocks and
// preempts later. The reservation follows max_tokens, not the output
// length the request turns out to have.
func TestTRTGuaranteedNoEvictWaitsWhereVLLMAdmits(t *testing.T) {
	tr := mkTrace(treq{at: 0, isl: 100, osl: 150}, treq{at: Millisecond, isl: 60, osl: 150})
	trt, _ := runJobs(t, tightKV(trtConfig(1, GuaranteedNoEvict)), tr)
	vllm, _ := runJobs(t, tightKV(testConfig(1)), tr)
	a, b := trt.Records[0], trt.Records[1]
	if b.FirstToken < a.End {
		t.Errorf("trtllm: B's first token at %v, before A ended at %v: GUARANTEED_NO_EVICT admitted it beside A's reservation", b.FirstToken, a.End)
	}
	if a.Preemptions+b.Preemptions != 0 {
		t.Errorf("trtllm: %d preemptions under GUARANTEED_NO_EVICT, which never pauses", a.Preemptions+b.Preemptions)
	}
	if v := vllm.Records; v[1].FirstToken >= v[0].End {
		t.Errorf("vllm: B's first token at %v, after A ended at %v: vLLM should admit it on its prompt's blocks", v[1].FirstToken, v[0].End)
	}

	// A short answer with a large max_tokens reserves as much.
	short := mkTrace(treq{at: 0, isl: 100, osl: 10}, treq{at: Millisecond, isl: 60, osl: 50})
	res, _ := runJobs(t, tightKV(trtConfig(1, GuaranteedNoEvict)), short, 150)
	if r := res.Records; r[1].FirstToken < r[0].End {
		t.Errorf("max_tokens 150: B started at %v, before A (10 tokens, 250 reserved) ended at %v", r[1].FirstToken, r[0].End)
	}
	res, _ = runJobs(t, tightKV(trtConfig(1, GuaranteedNoEvict)), short)
	if r := res.Records; r[1].FirstToken >= r[0].End {
		t.Errorf("max_tokens = OSL: A reserves 7 blocks, B's 7 fit beside them, yet B waited for A (%v ≥ %v)", r[1].FirstToken, r[0].End)
	}
}

// TestTRTMaxUtilizationPausesUnderPressure: MAX_UTILIZATION reserves only
// the next step's blocks (getNeededBlocksOneStep), so both requests run;
// when a block is missing the last started request is paused
// (MaxUtilizationScheduler: find_if from the list's end,
// schedulingRemoveSequence) and recomputed with its output as prompt
// (LlmRequest::pause).
func TestTRTMaxUtilizationPausesUnderPressure(t *testing.T) {
	tr := mkTrace(treq{at: 0, isl: 100, osl: 150}, treq{at: Millisecond, isl: 60, osl: 150})
	res, _ := runJobs(t, tightKV(trtConfig(1, MaxUtilization)), tr)
	a, b := res.Records[0], res.Records[1]
	if b.FirstToken >= a.End {
		t.Errorf("B's first token at %v, after A ended at %v: MAX_UTILIZATION admits on the prompt's blocks", b.FirstToken, a.End)
	}
	if a.Preemptions != 0 || b.Preemptions == 0 {
		t.Errorf("preemptions A %d, B %d: want the later-started B paused, A never", a.Preemptions, b.Preemptions)
	}
	if s := Summarize(res); s.Completed != 2 {
		t.Errorf("%d of 2 completed", s.Completed)
	}
}

// TestTRTStaticBatch: STATIC_BATCH considers pending requests only when no
// request is generating ("if (!StaticBatchScheduling ||
// scheduledRequests.size() == 0)"), whatever the free blocks.
func TestTRTStaticBatch(t *testing.T) {
	tr := mkTrace(treq{at: 0, isl: 100, osl: 50}, treq{at: 5 * Millisecond, isl: 100, osl: 5})
	for _, tc := range []struct {
		p        CapacityPolicy
		waitsFor bool // B starts only after A ends
	}{{StaticBatch, true}, {GuaranteedNoEvict, false}, {MaxUtilization, false}} {
		t.Run(tc.p.String(), func(t *testing.T) {
			res, _ := runJobs(t, trtConfig(1, tc.p), tr)
			a, b := res.Records[0], res.Records[1]
			if got := b.FirstToken > a.End; got != tc.waitsFor {
				t.Errorf("B's first token at %v, A ended at %v: waits for A %v, want %v", b.FirstToken, a.End, got, tc.waitsFor)
			}
		})
	}
}

// prefills lists the prefill tokens of the steps that had any.
func prefills(l *stepLog) []int {
	var out []int
	for _, s := range l.steps {
		if s.b.PrefillTokens > 0 {
			out = append(out, s.b.PrefillTokens)
		}
	}
	return out
}

// TestTRTChunkedPrefill: without chunking a context costs its whole prompt
// against max_num_tokens and the first that does not fit ends the batch
// (MicroBatchScheduler, "if (!mCtxChunkConfig)" … break); a prompt longer
// than max_num_tokens is refused with LLM._check_arguments' message. With
// chunking the contexts share what is left, first come first served, in
// multiples of tokens_per_block but a context's last chunk
// (setCtxRequestsChunkSize<FIRST_COME_FIRST_SERVED>).
func TestTRTChunkedPrefill(t *testing.T) {
	for _, tc := range []struct {
		name    string
		chunked bool
		reqs    []treq
		want    []int // prefill tokens per step
		refused bool
	}{
		{"long prompt, chunking off", false, []treq{{isl: 3000, osl: 2}}, nil, true},
		{"long prompt, chunking on", true, []treq{{isl: 3000, osl: 2}}, []int{1024, 1024, 952}, false},
		{"two prompts, chunking off", false, []treq{{isl: 600, osl: 3}, {isl: 600, osl: 3}}, []int{600, 600}, false},
		{"two prompts, chunking on", true, []treq{{isl: 600, osl: 3}, {isl: 600, osl: 3}}, []int{600 + 416, 184}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := trtConfig(1, GuaranteedNoEvict)
			w := &cfg.Pools[0].Worker
			w.BlockSize, w.MaxNumBatchedTokens, w.MaxModelLen, w.ChunkedPrefill = 32, 1024, 30000, tc.chunked
			res, log := runJobs(t, cfg, mkTrace(tc.reqs...))
			if tc.refused {
				r := res.Records[0]
				if r.Status != StatusRejectedTooLong || r.HTTPCode != 400 ||
					r.Reason != "The sum of prompt length (3000.0), query length (0) should not exceed max_num_tokens (1024)" {
					t.Fatalf("got %v (%d) %q, want TensorRT-LLM's refusal", r.Status, r.HTTPCode, r.Reason)
				}
				return
			}
			if got := prefills(log); !equalInts(got, tc.want) {
				t.Errorf("prefill tokens per step %v, want %v", got, tc.want)
			}
			if s := Summarize(res); s.Completed != len(tc.reqs) {
				t.Errorf("%d of %d completed", s.Completed, len(tc.reqs))
			}
		})
	}
}

// TestTRTBlockReuse: block reuse (enable_block_reuse, on by default)
// serves a later turn's prompt from the blocks its first turn stored; two
// contexts arriving together on one new prefix are taken one after the
// other, the second a step late, so that it reuses the blocks the first
// computes (beneficialToSkip, "Better to skip this step so we can
// reuse"), where vLLM computes both.
func TestTRTBlockReuse(t *testing.T) {
	turns := mkTrace(treq{at: 0, isl: 1024, osl: 2, ids: []int64{1, 2}}, treq{at: Second, isl: 1536, osl: 2, ids: []int64{1, 2, 3}})
	res, _ := runJobs(t, trtConfig(1, GuaranteedNoEvict), turns)
	if got := res.Records[1].CachedTokens; got != 1024 {
		t.Errorf("second turn: %d cached tokens, want the first turn's 1024", got)
	}
	off := trtConfig(1, GuaranteedNoEvict)
	off.Pools[0].Worker.NoPrefixCaching = true
	if res, _ = runJobs(t, off, turns); res.Records[1].CachedTokens != 0 {
		t.Errorf("block reuse off: %d cached tokens", res.Records[1].CachedTokens)
	}

	together := mkTrace(treq{at: 0, isl: 1536, osl: 4, ids: []int64{1, 2, 3}}, treq{at: 0, isl: 1536, osl: 4, ids: []int64{1, 2, 4}})
	for _, tc := range []struct {
		name   string
		cfg    Config
		cached int
	}{
		{"GUARANTEED_NO_EVICT", trtConfig(1, GuaranteedNoEvict), 1024},
		{"MAX_UTILIZATION", trtConfig(1, MaxUtilization), 1024},
		{"STATIC_BATCH (no early reuse)", trtConfig(1, StaticBatch), 0},
		{"vllm", testConfig(1), 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.cfg.Pools[0].Worker.MaxNumBatchedTokens = 4096
			res, _ := runJobs(t, tc.cfg, together)
			if got := res.Records[1].CachedTokens; got != tc.cached {
				t.Errorf("second of two requests on one new prefix: %d cached tokens, want %d", got, tc.cached)
			}
		})
	}
}

// TestTRTOverlapSchedulerDelay: with the overlap scheduler step n+1 is
// scheduled when step n starts (_executor_loop_overlap schedules, launches
// _forward_step, and only then handles the previous batch), so a request
// that reaches a busy worker during step n starts in step n+2, one step
// later than without overlap; one that reaches an idle worker starts at
// once either way. Tokens still reach the client at the end of their step.
func TestTRTOverlapSchedulerDelay(t *testing.T) {
	busy := mkTrace(treq{at: 0, isl: 64, osl: 100}, treq{at: 5*Millisecond + 500*Microsecond, isl: 64, osl: 2})
	startOfB := func(overlap bool) (dispatch, start Time, steps []stepRec) {
		cfg := trtConfig(1, GuaranteedNoEvict)
		cfg.Pools[0].Worker.NoOverlap = !overlap
		res, log := runJobs(t, cfg, busy)
		for _, s := range log.steps[1:] {
			if s.b.PrefillTokens > 0 {
				return res.Records[1].Dispatched, s.start, log.steps
			}
		}
		t.Fatal("B never prefilled")
		return
	}
	for _, overlap := range []bool{false, true} {
		at, start, steps := startOfB(overlap)
		k := 0 // the step in flight when B arrived
		for ; !(steps[k].start <= at && at < steps[k].start+steps[k].dur); k++ {
		}
		want := steps[k+1].start
		if overlap {
			want = steps[k+2].start
		}
		if start != want {
			t.Errorf("overlap %v: B arrived in step %d [%v, %v) and first ran at %v, want %v", overlap, k, steps[k].start, steps[k].start+steps[k].dur, start, want)
		}
	}
	idle := mkTrace(treq{at: 0, isl: 64, osl: 2}, treq{at: Second, isl: 64, osl: 2})
	var ttft [2]Time
	for i, overlap := range []bool{false, true} {
		cfg := trtConfig(1, GuaranteedNoEvict)
		cfg.Pools[0].Worker.NoOverlap = !overlap
		res, _ := runJobs(t, cfg, idle)
		ttft[i] = res.Records[1].TTFT()
	}
	if ttft[0] != ttft[1] || ttft[0] != Millisecond+64*Microsecond {
		t.Errorf("idle worker: TTFT %v without overlap, %v with, want one prefill step (%v) both", ttft[0], ttft[1], Millisecond+64*Microsecond)
	}
}

// TestTRTInvariantsOnRandomRuns: under random load and routers, for every
// capacity policy, with chunked prefill and the overlap scheduler on and
// off, block reuse on and off and max_tokens above the output length, every
// request ends exactly once (checkRecords), no step holds more blocks
// than the pool or more requests or tokens than the limits (stepLog), the
// KV pool stays consistent and GUARANTEED_NO_EVICT's reservations always
// fit (CheckInvariants), and only MAX_UTILIZATION pauses.
func TestTRTInvariantsOnRandomRuns(t *testing.T) {
	paused, refused, completed := 0, 0, 0
	for seed := uint64(1); seed <= 60; seed++ {
		rng := rand.New(rand.NewPCG(seed, 35))
		p := CapacityPolicy(seed % 3)
		cfg := trtConfig(1+rng.IntN(4), p)
		cfg.Seed = seed
		w := &cfg.Pools[0].Worker
		w.BlockSize = []int{16, 32, 64}[rng.IntN(3)]
		w.MaxNumSeqs = 1 + rng.IntN(16)
		w.MaxNumBatchedTokens = 64 + rng.IntN(4096)
		w.ChunkedPrefill, w.NoOverlap, w.NoPrefixCaching = rng.IntN(2) == 0, rng.IntN(2) == 0, rng.IntN(4) == 0
		w.MaxModelLen = 3400
		w.KVBlocks = (3400+w.BlockSize-1)/w.BlockSize + rng.IntN(200)
		cfg.Pools[0].Profile.NoiseSigma = rng.Float64() * 0.3
		reqs := randomTrace(rng, 1+rng.IntN(60))
		var maxTokens []int
		for _, r := range *reqs {
			maxTokens = append(maxTokens, r.osl+rng.IntN(3400-r.isl-r.osl+1)*rng.IntN(2))
		}
		name := policy.Names()[rng.IntN(len(policy.Names()))]
		e, _ := policy.Lookup(name)
		cfg = routerFor(cfg, e, policy.DefaultParams())
		res, _ := runJobsWith(t, cfg, seededPolicy(t, name, policy.DefaultParams(), seed)(), mkTrace(*reqs...), maxTokens...)
		s := Summarize(res)
		paused += s.Preemptions
		refused += s.Rejected["rejected-too-long"]
		completed += s.Completed
		if s.Completed+s.Rejected["rejected-too-long"] != s.Offered {
			t.Errorf("seed %d (%v): offered %d ≠ completed %d + rejected %v", seed, p, s.Offered, s.Completed, s.Rejected)
		}
		if p != MaxUtilization && s.Preemptions > 0 {
			t.Errorf("seed %d (%v): %d preemptions; only MAX_UTILIZATION pauses", seed, p, s.Preemptions)
		}
		for _, r := range res.Records {
			if r.Status == StatusRejectedTooLong && !w.ChunkedPrefill && r.InputTokens <= w.MaxNumBatchedTokens && r.InputTokens+r.OutputTokens <= w.MaxModelLen {
				t.Errorf("seed %d: request %d refused: %s", seed, r.ID, r.Reason)
			}
			if r.Status == StatusRejectedTooLong && !strings.Contains(r.Reason, "max_num_tokens") && r.InputTokens+r.OutputTokens <= w.MaxModelLen {
				t.Errorf("seed %d: request %d refused: %s", seed, r.ID, r.Reason)
			}
		}
	}
	if paused == 0 || refused == 0 || completed == 0 {
		t.Errorf("the runs paused %d, refused %d and completed %d requests: some rule went untested", paused, refused, completed)
	}
	t.Logf("%d completed, %d refused, %d pauses", completed, refused, paused)
}

// TestTRTExecutorHostTime: the executor loop spends ExecutorHostNs of
// host time per iteration (the dynamo-trtllm stack's term). With the
// overlap scheduler the host works while the GPU computes the next step:
// an iteration takes max(step, host), and a token reaches the client the
// host's time after its step ends (its step's output is handled during
// the next one). Without overlap host and GPU take turns: an iteration
// takes step + host and its tokens leave at its end. vLLM's host time is
// in its step time, so a vLLM worker ignores the term. One request of 100
// prompt tokens and 3 output tokens on an idle worker: prefill 1.1 ms,
// decode 1.01 ms (testProfile), no frontend delay.
func TestTRTExecutorHostTime(t *testing.T) {
	const ms = Millisecond
	prefill, decode := 1100*Microsecond, 1010*Microsecond
	tests := []struct {
		name          string
		trt, overlap  bool
		host          Time
		first, second Time // first and second token at the client
		end, makespan Time
	}{
		{"vllm ignores it", false, false, ms / 2, prefill, prefill + decode, prefill + 2*decode, prefill + 2*decode},
		{"no host time", true, true, 0, prefill, prefill + decode, prefill + 2*decode, prefill + 2*decode},
		{"overlap, hidden by the steps", true, true, ms / 2, prefill + ms/2, prefill + decode + ms/2, prefill + 2*decode + ms/2, prefill + 2*decode + ms/2},
		{"overlap, host-bound", true, true, 2 * ms, 4 * ms, 6 * ms, 8 * ms, 8 * ms},
		{"no overlap", true, false, ms / 2, prefill + ms/2, prefill + decode + ms, prefill + 2*decode + 3*ms/2, prefill + 2*decode + 3*ms/2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := testConfig(1)
			if tc.trt {
				cfg = trtConfig(1, GuaranteedNoEvict)
				cfg.Pools[0].Worker.NoOverlap = !tc.overlap
			}
			prof := *cfg.Pools[0].Profile
			prof.ExecutorHostNs = float64(tc.host)
			cfg.Pools[0].Profile = &prof
			for _, stepByStep := range []bool{false, true} {
				cfg.StepByStep = stepByStep
				res, _ := runJobs(t, cfg, mkTrace(treq{at: 0, isl: 100, osl: 3}))
				r := res.Records[0]
				if r.Status != StatusOK || r.FirstToken != tc.first || r.SecondToken != tc.second || r.End != tc.end || res.Makespan != tc.makespan {
					t.Errorf("step by step %v: first token %d, second %d, end %d, makespan %d; want %d, %d, %d, %d",
						stepByStep, r.FirstToken, r.SecondToken, r.End, res.Makespan, tc.first, tc.second, tc.end, tc.makespan)
				}
			}
		})
	}
}

package sim_test

import (
	"math/rand/v2"
	"reflect"
	"testing"

	. "github.com/routesim/routesim/sim"
)

// hostCfg is one worker of kv blocks of 64 tokens, with a CPU tier of
// host blocks copied in blockNs each (none if host is 0).
func hostCfg(kv, host int, blockNs float64) Config {
	cfg := testConfig(1)
	w := &cfg.Pools[0].Worker
	w.MaxNumBatchedTokens, w.KVBlocks, w.MaxModelLen = 8192, kv, kv*64
	if host > 0 {
		w.HostTier = HostTierConfig{Blocks: host, BlockBytes: 1 << 20, BlockNs: blockNs}
	}
	return cfg
}

func recordOf(res *Result, id int) *Record {
	for i := range res.Records {
		if res.Records[i].ID == id {
			return &res.Records[i]
		}
	}
	panic("no record")
}

// Onboarding as a cost, and the wait for it (kv-tiers.md §1.4, §1.5): A's
// 16 blocks are evicted from the GPU by B but kept in the CPU tier (stored
// as A's steps ended); C, sharing A's prompt, finds them there, waits on
// an idle worker for their copy (16 × BlockNs) and then runs the prefill
// of its other 512 tokens. So its TTFT is the copy plus the step a GPU hit
// of the same 16 blocks gives, exactly; without the tier it recomputes all
// 1,536 tokens.
func TestHostOnboardingCostOnIdleWorker(t *testing.T) {
	tr := mkTrace(
		treq{at: 0, isl: 1024, osl: 2, ids: []int64{1, 2}},
		treq{at: 100 * Millisecond, isl: 2496, osl: 2},
		treq{at: 200 * Millisecond, isl: 1536, osl: 2, ids: []int64{1, 2, 777}},
	)
	const blockNs = 20_000
	host, _ := simulate(t, hostCfg(40, 64, blockNs), tr)
	gpuHit, _ := simulate(t, hostCfg(1000, 0, 0), tr)
	none, _ := simulate(t, hostCfg(40, 0, 0), tr)
	hs := host.Workers[0].Host
	if hs == nil || hs.LoadedBlocks != 16 {
		t.Fatalf("CPU tier stats %+v: want 16 blocks loaded for C", hs)
	}
	if g := recordOf(gpuHit, 2).CachedTokens; g != 1024 {
		t.Fatalf("control: C found %d tokens on the GPU, want 1024", g)
	}
	load := 16 * Time(blockNs)
	if got, want := recordOf(host, 2).TTFT(), recordOf(gpuHit, 2).TTFT()+load; got != want {
		t.Errorf("C's TTFT with the CPU tier %v, want the GPU-hit TTFT %v + the copy %v", got, recordOf(gpuHit, 2).TTFT(), load)
	}
	if c := recordOf(host, 2).CachedTokens; c != 1024 {
		t.Errorf("C's cached tokens %d with the CPU tier, want 1024 (loaded, not computed)", c)
	}
	if recordOf(none, 2).CachedTokens != 0 || recordOf(none, 2).TTFT() <= recordOf(gpuHit, 2).TTFT() {
		t.Errorf("without the tier C should recompute its prompt: cached %d, TTFT %v vs %v with a GPU hit",
			recordOf(none, 2).CachedTokens, recordOf(none, 2).TTFT(), recordOf(gpuHit, 2).TTFT())
	}
}

// The step-boundary deferral (§1.4): the load starts with the step in
// which C is scheduled for it (start_load_kv), C is not in that step, and
// it is scheduled at the first step boundary at which its copy has ended
// (finished_recving, then _update_waiting_for_remote_kv at the next
// schedule), while D decodes throughout.
func TestHostLoadDeferredToStepBoundary(t *testing.T) {
	tr := mkTrace(
		treq{at: 0, isl: 1024, osl: 2, ids: []int64{1, 2}},
		treq{at: 100 * Millisecond, isl: 5000, osl: 2},
		treq{at: 150 * Millisecond, isl: 64, osl: 3000},
		treq{at: 200 * Millisecond, isl: 1536, osl: 2, ids: []int64{1, 2, 777}},
	)
	const blockNs = 150_000
	res, log := simulate(t, hostCfg(80, 64, blockNs), tr)
	c := recordOf(res, 3)
	loaded := res.Workers[0].Host.LoadedBlocks
	if loaded == 0 || c.CachedTokens != 1024 {
		t.Fatalf("C loaded %d blocks, cached %d tokens: want a CPU hit completing A's 16 blocks", loaded, c.CachedTokens)
	}
	var t0 Time = -1
	for _, s := range log.steps {
		if s.start >= c.Dispatched {
			t0 = s.start
			break
		}
	}
	done := t0 + Time(loaded)*blockNs
	var first, cStep Time = -1, -1
	for _, s := range log.steps {
		if s.start >= done && first < 0 {
			first = s.start
		}
		if s.start > t0 && s.b.PrefillTokens > 0 && cStep < 0 {
			cStep = s.start
		}
		if s.start >= t0 && s.start < done && s.b.PrefillTokens > 0 {
			t.Errorf("a prefill step at %v, before C's load ends at %v", s.start, done)
		}
	}
	if t0 < 0 || cStep != first || !(done > t0) {
		t.Errorf("load issued with the step at %v, ends at %v: C's prefill step starts at %v, want the first step at or after the end, %v", t0, done, cStep, first)
	}
	if c.FirstToken < cStep {
		t.Errorf("C's first token at %v, before its step at %v", c.FirstToken, cStep)
	}
}

// KV accounting across tiers on random runs (the property test's draws
// with a CPU tier): every step checks the GPU pool and the CPU tier (at
// most its capacity, each block once, pins = blocks being loaded); at the
// end blocks stored − evicted is what the tier holds, and every request
// ended once.
func TestHostTierInvariantsOnRandomRuns(t *testing.T) {
	for seed := uint64(1); seed <= 30; seed++ {
		rng := rand.New(rand.NewPCG(seed, 77))
		cfg := testConfig(1 + rng.IntN(3))
		cfg.Seed = seed
		w := &cfg.Pools[0].Worker
		w.BlockSize = []int{16, 32, 64}[rng.IntN(3)]
		w.MaxNumSeqs = 1 + rng.IntN(16)
		w.MaxNumBatchedTokens = 64 + rng.IntN(4096)
		w.MaxModelLen = 3000
		w.KVBlocks = (3000+w.BlockSize-1)/w.BlockSize + rng.IntN(100)
		w.HostTier = HostTierConfig{Blocks: 1 + rng.IntN(300), BlockBytes: 1 << 20, BlockNs: float64(rng.IntN(400_000))}
		if w.HostTier.BlockNs == 0 {
			w.HostTier.BlockNs = 1
		}
		cfg.Pools[0].Profile.NoiseSigma = rng.Float64() * 0.5
		reqs := randomTrace(rng, 1+rng.IntN(80))
		res, _ := simulate(t, cfg, mkTrace(*reqs...))
		s := Summarize(res)
		if s.Completed+s.Rejected["rejected-too-long"] != s.Offered {
			t.Errorf("seed %d: offered %d ≠ completed %d + rejected %v", seed, s.Offered, s.Completed, s.Rejected)
		}
		for i, ws := range res.Workers {
			h := ws.Host
			if held := h.StoredBlocks - h.Evictions; held < 0 || held > h.Blocks || h.PeakBlocks > h.Blocks {
				t.Errorf("seed %d worker %d: %d stored − %d evicted = %d held, peak %d, capacity %d", seed, i, h.StoredBlocks, h.Evictions, held, h.PeakBlocks, h.Blocks)
			}
		}
	}
}

func TestHostTierSameSeedSameResult(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	reqs := randomTrace(rng, 80)
	cfg := testConfig(2)
	cfg.Pools[0].Worker.KVBlocks = 60
	cfg.Pools[0].Worker.MaxModelLen = 3000
	cfg.Pools[0].Worker.HostTier = HostTierConfig{Blocks: 100, BlockBytes: 1 << 20, BlockNs: 50_000}
	cfg.Pools[0].Profile.NoiseSigma = 0.3
	cfg.Seed = 9
	a, _ := simulate(t, cfg, mkTrace(*reqs...))
	b, _ := simulate(t, cfg, mkTrace(*reqs...))
	if !reflect.DeepEqual(a.Records, b.Records) || !reflect.DeepEqual(a.Workers, b.Workers) {
		t.Fatal("two runs with the same seed and a CPU tier differ")
	}
	if a.Workers[0].Host.LoadedBlocks+a.Workers[1].Host.LoadedBlocks == 0 {
		t.Error("the tier was never used: the test exercises nothing")
	}
}

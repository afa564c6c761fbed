package sim_test

import (
	"math/rand/v2"
	"testing"

	. "github.com/routesim/routesim/sim"
	"github.com/routesim/routesim/workload"
)

// kvbmCfg is hostCfg's worker with KVBM's rules, and a disk tier of disk
// blocks (none if 0) read in readNs and written in writeNs each.
func kvbmCfg(kv, host, disk int, blockNs, readNs, writeNs float64) Config {
	cfg := hostCfg(kv, host, blockNs)
	w := &cfg.Pools[0].Worker
	w.KVBM = KVBMConfig{On: true}
	if disk > 0 {
		w.KVBM.DiskBlocks, w.KVBM.DiskReadNs, w.KVBM.DiskWriteNs = disk, readNs, writeNs
	}
	return cfg
}

// Onboarding from KVBM's host tier (docs/readings/kvbm.md §4): as with
// vLLM's tier, C finds A's 16 evicted blocks in the host and waits for
// their copy on an idle worker, so its TTFT is a GPU hit's plus 16 copies.
func TestKVBMOnboardingCostFromHost(t *testing.T) {
	tr := mkTrace(
		treq{at: 0, isl: 1024, osl: 2, ids: []int64{1, 2}},
		treq{at: 100 * Millisecond, isl: 2496, osl: 2},
		treq{at: 200 * Millisecond, isl: 1536, osl: 2, ids: []int64{1, 2, 777}},
	)
	const blockNs = 20_000
	kv, _ := simulate(t, kvbmCfg(40, 64, 0, blockNs, 0, 0), tr)
	gpuHit, _ := simulate(t, hostCfg(1000, 0, 0), tr)
	if hs := kv.Workers[0].Host; hs == nil || hs.LoadedBlocks != 16 {
		t.Fatalf("KVBM host stats %+v: want 16 blocks loaded for C", hs)
	}
	if kv.Workers[0].Disk != nil {
		t.Errorf("no disk tier configured, yet disk stats %+v", kv.Workers[0].Disk)
	}
	if got, want := recordOf(kv, 2).TTFT(), recordOf(gpuHit, 2).TTFT()+16*Time(blockNs); got != want {
		t.Errorf("C's TTFT with KVBM %v, want the GPU-hit TTFT + 16 copies = %v", got, want)
	}
}

// Onboarding from the disk tier (§3, §4). The host holds 20 blocks. A's
// 16 go there (their first sight by the filter); D's 16 evict 12 of them;
// B (39 blocks) cannot be allocated in the host and is not offloaded, but
// evicts A and D from the GPU. A' repeats A's prompt: its host lookup
// misses at A's first block, so it recomputes all 16, and their second
// registration passes the filter: they are written to disk. B2 evicts A'
// from the GPU, E (20 blocks) fills the host. C, A's prompt and more,
// finds A's 16 blocks on disk only, and its TTFT is the GPU-hit TTFT plus
// 16 disk reads on an idle worker.
// diskTrace sends A's prompt twice (so KVBM's filter writes it to disk),
// fillers that push it out of the GPU and the host tier, then C, which
// shares A's first 16 blocks (run with kvbmCfg(40, 20, 1000, ...)).
func diskTrace() *workload.Trace {
	ms := 100 * Millisecond
	return mkTrace(
		treq{at: 0, isl: 1024, osl: 2, ids: []int64{1, 2}},
		treq{at: 1 * ms, isl: 1024, osl: 2},
		treq{at: 2 * ms, isl: 2496, osl: 2},
		treq{at: 3 * ms, isl: 1024, osl: 2, ids: []int64{1, 2}},
		treq{at: 4 * ms, isl: 2496, osl: 2},
		treq{at: 5 * ms, isl: 1280, osl: 1},
		treq{at: 6 * ms, isl: 1536, osl: 2, ids: []int64{1, 2, 777}},
	)
}

func TestKVBMOnboardingFromDisk(t *testing.T) {
	tr := diskTrace()
	const blockNs, readNs = 20_000, 200_000
	res, _ := simulate(t, kvbmCfg(40, 20, 1000, blockNs, readNs, 100_000), tr)
	d := res.Workers[0].Disk
	if d == nil || d.StoredBlocks != 16 || d.LoadedBlocks != 16 {
		t.Fatalf("disk stats %+v: want A's 16 blocks written (seen twice) and loaded for C", d)
	}
	gpuHit, _ := simulate(t, hostCfg(1000, 0, 0), tr)
	if g := recordOf(gpuHit, 6).CachedTokens; g != 1024 {
		t.Fatalf("control: C found %d tokens on the GPU, want 1024", g)
	}
	if got, want := recordOf(res, 6).TTFT(), recordOf(gpuHit, 6).TTFT()+16*readNs; got != want {
		t.Errorf("C's TTFT %v, want the GPU-hit TTFT + 16 disk reads = %v", got, want)
	}
}

// The G2 → G3 filter as a property: when no block is computed twice
// (every prompt unique, outputs too), no host registration is a second
// sight, so the disk gets nothing (filter.rs: a count starts at 1 and
// passes at 2).
func TestKVBMFilterKeepsOnceSeenBlocksOffDisk(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	var reqs []treq
	for i := range 40 {
		reqs = append(reqs, treq{at: Time(i) * 50 * Millisecond, isl: 200 + rng.IntN(2000), osl: 1 + rng.IntN(100)})
	}
	res, _ := simulate(t, kvbmCfg(60, 50, 500, 10_000, 50_000, 60_000), mkTrace(reqs...))
	if d := res.Workers[0].Disk; d == nil || d.StoredBlocks != 0 {
		t.Errorf("disk stats %+v: want no block written, none seen twice", d)
	}
	if h := res.Workers[0].Host; h.StoredBlocks == 0 || h.Evictions == 0 {
		t.Errorf("host stats %+v: the run should fill and churn the host tier", h)
	}
}

// KV accounting across tiers on random runs (property_test.go's style):
// CheckInvariants verifies after every step that each tier holds at most
// its capacity, its index and LRU list agree, and the pins of both tiers
// equal the blocks being loaded; here every request also ends exactly
// once, peaks stay within capacities, and a disk appears only where one
// is configured. With a KV-aware router the events go through the
// consolidator, which CheckInvariants checks too (KVBM is a block's
// source only while a KVBM tier holds it).
// kvbmRandomRun draws a small random run with KVBM tiers (a disk on two
// seeds in three) and, on two in three, a KV-aware router.
func kvbmRandomRun(seed uint64) (Config, []treq) {
	rng := rand.New(rand.NewPCG(seed, 39))
	cfg := testConfig(1 + rng.IntN(3))
	cfg.Seed = seed
	w := &cfg.Pools[0].Worker
	w.BlockSize = []int{16, 32, 64}[rng.IntN(3)]
	w.MaxNumSeqs = 1 + rng.IntN(16)
	w.MaxNumBatchedTokens = 64 + rng.IntN(4096)
	w.MaxModelLen = 3000
	w.KVBlocks = (3000+w.BlockSize-1)/w.BlockSize + rng.IntN(100)
	w.HostTier = HostTierConfig{Blocks: 1 + rng.IntN(300), BlockBytes: 1 << 20, BlockNs: float64(1 + rng.IntN(400_000))}
	w.KVBM = KVBMConfig{On: true}
	if rng.IntN(3) > 0 {
		w.KVBM.DiskBlocks = 1 + rng.IntN(600)
		w.KVBM.DiskReadNs = float64(1 + rng.IntN(2_000_000))
		w.KVBM.DiskWriteNs = float64(1 + rng.IntN(2_000_000))
	}
	w.KVBM.Events = KVBMEvents(rng.IntN(2))
	cfg.Router.KVAware = rng.IntN(3) > 0 // KV events through the consolidator
	cfg.Router.KVEventLag = Time(rng.IntN(3)) * Millisecond
	cfg.Pools[0].Profile.NoiseSigma = rng.Float64() * 0.5
	return cfg, *randomTrace(rng, 1+rng.IntN(80))
}

// KV accounting across tiers on random runs (property_test.go's style):
// CheckInvariants verifies after every step that each tier holds at most
// its capacity, its index and LRU list agree, and the pins of both tiers
// equal the blocks being loaded; here every request also ends exactly
// once, peaks stay within capacities, and a disk appears only where one
// is configured. With a KV-aware router the events go through the
// consolidator, which CheckInvariants checks too (KVBM is a block's
// source only while a KVBM tier holds it).
func TestKVBMInvariantsOnRandomRuns(t *testing.T) {
	for seed := uint64(1); seed <= 60; seed++ {
		cfg, reqs := kvbmRandomRun(seed)
		w := &cfg.Pools[0].Worker
		res, _ := simulate(t, cfg, mkTrace(reqs...))
		s := Summarize(res)
		if s.Completed+s.Rejected["rejected-too-long"] != s.Offered {
			t.Errorf("seed %d: offered %d ≠ completed %d + rejected %v", seed, s.Offered, s.Completed, s.Rejected)
		}
		for i, ws := range res.Workers {
			for _, tier := range []struct {
				name string
				st   *HostStats
				cap  int
			}{{"host", ws.Host, w.HostTier.Blocks}, {"disk", ws.Disk, w.KVBM.DiskBlocks}} {
				if tier.st == nil {
					if tier.cap > 0 {
						t.Errorf("seed %d worker %d: no %s stats for a %d-block tier", seed, i, tier.name, tier.cap)
					}
					continue
				}
				h := tier.st
				if tier.cap == 0 {
					t.Errorf("seed %d worker %d: %s stats %+v without a %s tier", seed, i, tier.name, h, tier.name)
				}
				if held := h.StoredBlocks - h.Evictions; held < 0 || held > tier.cap || h.PeakBlocks > tier.cap {
					t.Errorf("seed %d worker %d %s: %d stored − %d evicted = %d held, peak %d, capacity %d", seed, i, tier.name, h.StoredBlocks, h.Evictions, held, h.PeakBlocks, tier.cap)
				}
			}
		}
	}
}

// The same runs with vLLM's own CPU tier end too. Two of them (seeds 5
// and 22) used to run forever, in code both tiers share: a loaded request
// holding most of the GPU while the head, admitted on its GPU hits, was
// preempted for lack of blocks at each step; and two requests cancelling
// each other's loads (hostworker.go promoteLoaded, unstall).
func TestHostTierRandomRunsEnd(t *testing.T) {
	for seed := uint64(1); seed <= 60; seed++ {
		cfg, reqs := kvbmRandomRun(seed)
		cfg.Pools[0].Worker.KVBM = KVBMConfig{}
		res, _ := simulate(t, cfg, mkTrace(reqs...))
		if s := Summarize(res); s.Completed+s.Rejected["rejected-too-long"] != s.Offered {
			t.Errorf("seed %d: offered %d ≠ completed %d + rejected %v", seed, s.Offered, s.Completed, s.Rejected)
		}
	}
}

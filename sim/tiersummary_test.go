package sim_test

import (
	"math/rand/v2"
	"testing"

	. "github.com/routesim/routesim/sim"
)

// Tokens by tier on the onboarding trace of TestHostOnboardingCostOnIdleWorker:
// C's 1,024 cached tokens are the 16 blocks loaded from the CPU tier, none
// a GPU hit; A and B load nothing. kv_tiers adds them up: 1,024 of the
// 5,056 prompt tokens from the CPU tier, bytes = blocks × block bytes.
func TestTierTokensOnIdleWorker(t *testing.T) {
	tr := mkTrace(
		treq{at: 0, isl: 1024, osl: 2, ids: []int64{1, 2}},
		treq{at: 100 * Millisecond, isl: 2496, osl: 2},
		treq{at: 200 * Millisecond, isl: 1536, osl: 2, ids: []int64{1, 2, 777}},
	)
	res, _ := simulate(t, hostCfg(40, 64, 20_000), tr)
	for _, tc := range []struct{ id, cached, host int }{{0, 0, 0}, {1, 0, 0}, {2, 1024, 1024}} {
		r := recordOf(res, tc.id)
		if r.CachedTokens != tc.cached || r.CachedHostTokens != tc.host || r.CachedDiskTokens != 0 {
			t.Errorf("request %d: cached %d, host %d, disk %d; want %d, %d, 0", tc.id, r.CachedTokens, r.CachedHostTokens, r.CachedDiskTokens, tc.cached, tc.host)
		}
	}
	k := Summarize(res).KVTiers
	if k == nil || len(k.Tiers) != 1 {
		t.Fatalf("kv_tiers %+v, want one tier", k)
	}
	c, h := k.Tiers[0], res.Workers[0].Host
	want := TierSummary{Medium: "CPU", Connector: ConnectorOffloading, Workers: 1, BlocksPerWorker: 64, BlockBytes: 1 << 20,
		StoredBlocks: h.StoredBlocks, LoadedBlocks: 16,
		BytesStored: float64(h.StoredBlocks) * (1 << 20), BytesLoaded: 16 * (1 << 20),
		HitTokens: 1024, HitRate: 1024.0 / 5056}
	if c != want {
		t.Errorf("CPU tier %+v, want %+v", c, want)
	}
	if k.PromptTokens != 5056 || k.GPUHitTokens != 0 || k.GPUHitRate != 0 {
		t.Errorf("prompt %d, GPU hits %d (%g); want 5056, 0", k.PromptTokens, k.GPUHitTokens, k.GPUHitRate)
	}
	if none, _ := simulate(t, hostCfg(40, 0, 0), tr); Summarize(none).KVTiers != nil {
		t.Error("kv_tiers in a run without a tier")
	}
}

// On random runs with a CPU tier, every request's tiers split its cached
// tokens (no negative GPU share), and the host tokens the completed
// requests loaded never exceed the blocks the tier copied to the GPU.
func TestTierTokensSplitCached(t *testing.T) {
	loads := 0
	for seed := uint64(1); seed <= 20; seed++ {
		rng := rand.New(rand.NewPCG(seed, 39))
		cfg := testConfig(1 + rng.IntN(2))
		cfg.Seed = seed
		w := &cfg.Pools[0].Worker
		w.MaxModelLen = 3000
		w.KVBlocks = (3000+w.BlockSize-1)/w.BlockSize + rng.IntN(60)
		w.HostTier = HostTierConfig{Blocks: 1 + rng.IntN(300), BlockBytes: 1 << 20, BlockNs: float64(1 + rng.IntN(200_000))}
		res, _ := simulate(t, cfg, mkTrace(*randomTrace(rng, 1+rng.IntN(80))...))
		host := 0
		for _, r := range res.Records {
			if r.CachedHostTokens < 0 || r.CachedDiskTokens != 0 || r.CachedHostTokens > r.CachedTokens {
				t.Errorf("seed %d request %d: cached %d, host %d, disk %d", seed, r.ID, r.CachedTokens, r.CachedHostTokens, r.CachedDiskTokens)
			}
			if r.Status == StatusOK {
				host += r.CachedHostTokens
			}
		}
		loaded := 0
		for _, ws := range res.Workers {
			loaded += ws.Host.LoadedBlocks
		}
		if host > loaded*w.BlockSize {
			t.Errorf("seed %d: %d host tokens from %d blocks loaded", seed, host, loaded)
		}
		loads += loaded
	}
	if loads == 0 {
		t.Error("no run loaded from the tier: the test exercises nothing")
	}
}

// KVBM's tiers in kv_tiers, on TestKVBMOnboardingFromDisk's trace: the
// host tier is CPU_PINNED and the disk DISK, both run by KVBM; C's 1,024
// cached tokens are disk's, and each tier's bytes are its blocks copies ×
// block bytes (the host's duplicate copies included).
func TestTierSummaryKVBM(t *testing.T) {
	tr := diskTrace()
	res, _ := simulate(t, kvbmCfg(40, 20, 1000, 20_000, 200_000, 100_000), tr)
	k := Summarize(res).KVTiers
	if k == nil || len(k.Tiers) != 2 {
		t.Fatalf("kv_tiers %+v, want a host and a disk tier", k)
	}
	h, d := k.Tiers[0], k.Tiers[1]
	hs, ds := res.Workers[0].Host, res.Workers[0].Disk
	if h.Medium != "CPU_PINNED" || h.Connector != ConnectorKVBM || d.Medium != "DISK" || d.Connector != ConnectorKVBM {
		t.Errorf("tiers %s/%s and %s/%s, want CPU_PINNED and DISK by KVBM", h.Medium, h.Connector, d.Medium, d.Connector)
	}
	if h.StoredBlocks != hs.StoredBlocks+hs.DupBlocks || h.BytesStored != float64(h.StoredBlocks)*float64(hs.BlockBytes) {
		t.Errorf("host stored %d blocks, %g bytes; stats %+v", h.StoredBlocks, h.BytesStored, hs)
	}
	if d.StoredBlocks != 16 || d.LoadedBlocks != 16 || d.BytesLoaded != 16*float64(ds.BlockBytes) || d.HitTokens != 1024 {
		t.Errorf("disk tier %+v: want A's 16 blocks stored and loaded for C (1,024 tokens)", d)
	}
	if recordOf(res, 6).CachedDiskTokens != 1024 {
		t.Errorf("C's disk tokens %d, want 1024", recordOf(res, 6).CachedDiskTokens)
	}
}

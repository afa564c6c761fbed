package sim

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/routesim/routesim/policy"
)

// tierRouter is a KV-aware router over n workers of 16-token blocks whose
// policy is Dynamo's kv at version (its tier reading).
func tierRouter(t *testing.T, n int, version string) (*router, *policy.KV) {
	t.Helper()
	workers := make([]*worker, n)
	for w := range workers {
		workers[w] = &worker{id: w, cfg: WorkerConfig{BlockSize: 16, KVBlocks: 1000, MaxNumBatchedTokens: 512}}
	}
	r := newRouter(workers, RouterConfig{KVAware: true}, func() Time { return 0 })
	p := policy.DefaultParams()
	p.Rand, p.DynamoVersion = rand.New(rand.NewPCG(1, 2)), version
	pol, err := policy.New("kv", p)
	if err != nil {
		t.Fatal(err)
	}
	r.readTiers(pol)
	return r, pol.(*policy.KV)
}

// store tells r that worker w's tier m holds blocks.
func store(r *router, w int, m Medium, blocks ...uint64) {
	for _, b := range blocks {
		r.applyKV(kvEvent{worker: int32(w), medium: m, stored: true, hash: b})
	}
}

func drop(r *router, w int, m Medium, blocks ...uint64) {
	for _, b := range blocks {
		r.applyKV(kvEvent{worker: int32(w), medium: m, hash: b})
	}
}

// Dynamo's test weighted_cache_hit_estimates_include_lower_tiers
// (lib/llm/src/kv_router.rs L955-993 @c8d8e7602573): worker 1 matches 2
// device blocks, 1 host block and 2 disk blocks, worker 2 one host block
// (and no device block): effective overlaps 3.25 and 0.75 blocks, cached
// tokens 52 and 12 at 16-token blocks. Here the hits come from the
// router's own indexes, the request's blocks being 1..6.
func TestTierCreditDynamoTest(t *testing.T) {
	r, kv := tierRouter(t, 3, "1.2.0")
	blocks := []uint64{1, 2, 3, 4, 5, 6}
	store(r, 1, MediumGPU, 1, 2)
	store(r, 1, MediumCPUPinned, 3)
	store(r, 1, MediumDisk, 4, 5)
	store(r, 2, MediumCPUPinned, 1)
	hits := r.TierHits(blocks, nil)
	if want := (policy.TierHits{Host: 1, Disk: 2}); hits[1] != want {
		t.Errorf("worker 1: %+v, want %+v", hits[1], want)
	}
	if want := (policy.TierHits{Host: 1}); hits[2] != want {
		t.Errorf("worker 2: %+v, want %+v", hits[2], want)
	}
	if got := r.cachedTokens(1, 96, blocks); got != 52 {
		t.Errorf("worker 1's cached tokens %d, want round(3.25 × 16) = 52", got)
	}
	if got := r.cachedTokens(2, 96, blocks); got != 12 {
		t.Errorf("worker 2's cached tokens %d, want round(0.75 × 16) = 12", got)
	}
	// The cost's credit (selector.rs L150-160): 1·2 + 0.75·1 + 0.25·2 =
	// 3.25 blocks off the 6 of the prompt, for an idle worker.
	req := &policy.Request{InputTokens: 96, Blocks: blocks}
	if got, want := kv.Cost(req, r, 1), (6-3.25)+6.0; got != want {
		t.Errorf("worker 1's cost %g, want %g (prefill 6 − 3.25 credited, plus 6 new blocks)", got, want)
	}
	if got, want := r.book(1, 96, blocks), 96-52; got != want {
		t.Errorf("booked prefill %d, want %d (the weighted cached tokens off)", got, want)
	}
}

// The match is consecutive (query_lower_tiers, lower_tier_indexers.rs
// L153-210; query_match_details, lower_tier.rs L379-470 @c8d8e7602573): a
// worker's host walk starts at its last device-matched block, the disk
// walk where the host walk ended; a gap ends a tier's walk, a block held
// before the start counts nothing, and a tier with no match leaves the
// next one starting where the previous ended.
func TestTierMatchConsecutive(t *testing.T) {
	blocks := []uint64{1, 2, 3, 4, 5, 6, 7, 8}
	cases := []struct {
		name            string
		gpu, host, disk []uint64
		dev             int
		want            policy.TierHits
	}{
		{"host then disk", []uint64{1, 2}, []uint64{3, 4}, []uint64{5}, 2, policy.TierHits{Host: 2, Disk: 1}},
		{"host gap ends the host walk", []uint64{1}, []uint64{2, 4}, nil, 1, policy.TierHits{Host: 1}},
		{"host blocks under the device match count nothing", []uint64{1, 2, 3}, []uint64{1, 2}, nil, 3, policy.TierHits{}},
		{"no host: disk from the device match", []uint64{1, 2}, nil, []uint64{3, 4, 5}, 2, policy.TierHits{Disk: 3}},
		{"no device: host from the first block", nil, []uint64{1, 2, 3}, []uint64{4}, 0, policy.TierHits{Host: 3, Disk: 1}},
		{"device gap: a host block past it is not reached", []uint64{1, 3}, []uint64{4}, nil, 1, policy.TierHits{}},
		{"disk does not go back to host", []uint64{1}, []uint64{2, 4}, []uint64{3}, 1, policy.TierHits{Host: 1, Disk: 1}},
	}
	for _, c := range cases {
		r, _ := tierRouter(t, 2, "1.2.0")
		store(r, 1, MediumGPU, c.gpu...)
		store(r, 1, MediumCPUPinned, c.host...)
		store(r, 1, MediumDisk, c.disk...)
		store(r, 0, MediumCPUPinned, blocks...) // another worker's tiers do not count
		if got := r.Overlap(1, blocks); got != c.dev {
			t.Errorf("%s: device overlap %d, want %d", c.name, got, c.dev)
		}
		if got := r.TierHits(blocks, nil)[1]; got != c.want {
			t.Errorf("%s: %+v, want %+v", c.name, got, c.want)
		}
		if got := r.tierHitOf(1, blocks); got != c.want {
			t.Errorf("%s: tierHitOf %+v, want %+v", c.name, got, c.want)
		}
	}
}

// The native "CPU" events of vLLM's OffloadingConnector (no token ids):
// v1.2 parses the medium as Device (protocols.rs L230-244 @c8d8e7602573),
// drops the store (convert.rs L163-201) and applies the remove to the
// device index, so a CPU eviction erases the GPU entry; v0.9 ignores the
// medium, with the same effect (publisher.rs L562-620 @45bc1b798cce);
// v1.4 parses it as HostPinned (protocols.rs L771-779 @e147ceeac056), so
// the GPU entry stays.
func TestNativeCPUEvents(t *testing.T) {
	blocks := []uint64{1, 2, 3}
	for _, c := range []struct {
		version string
		dev     int // after a CPU store of 1..3 and a CPU remove of 2
	}{{"0.9.0", 1}, {"1.2.0", 1}, {"1.4.0", 3}} {
		r, _ := tierRouter(t, 1, c.version)
		store(r, 0, MediumGPU, blocks...)
		store(r, 0, MediumCPU, 4, 5)
		if got := r.Overlap(0, []uint64{1, 2, 3, 4, 5}); got != 3 {
			t.Errorf("%s: overlap %d after CPU stores of 4, 5: want 3 (stores without token ids are dropped)", c.version, got)
		}
		if h := r.tierHitOf(0, []uint64{1, 2, 3, 4, 5}); h != (policy.TierHits{}) {
			t.Errorf("%s: lower-tier hits %+v from CPU stores, want none", c.version, h)
		}
		drop(r, 0, MediumCPU, 2)
		if got := r.Overlap(0, blocks); got != c.dev {
			t.Errorf("%s: overlap %d after a CPU eviction of block 2, want %d", c.version, got, c.dev)
		}
	}
}

// Release gating: the router reads the medium each event carries (KVBM's
// consolidator, in the worker, decides it: kvbmevents.go). v0.9 ignores
// the medium (publisher.rs L562-620 @45bc1b798cce): CPU_PINNED and DISK
// blocks land in its one index. From v1.2 (#8380) they go to the host and
// disk indexes, matched on from the device match and credited 0.75 and
// 0.25 (scheduling/config.rs L38-44 @c8d8e7602573); the indexes are made
// at the first such event.
func TestTierReleaseGating(t *testing.T) {
	blocks := []uint64{1, 2, 3, 4}
	r, _ := tierRouter(t, 1, "0.9.0")
	store(r, 0, MediumGPU, 1, 2)
	store(r, 0, MediumCPUPinned, 3)
	store(r, 0, MediumDisk, 4)
	if got := r.Overlap(0, blocks); got != 4 || r.host != nil || r.TierHits(blocks, nil) != nil {
		t.Errorf("0.9: overlap %d (want 4, every medium in the one index), host index %v", got, r.host != nil)
	}
	drop(r, 0, MediumDisk, 2)
	if got := r.Overlap(0, blocks); got != 1 {
		t.Errorf("0.9: overlap %d after a DISK remove of block 2, want 1", got)
	}
	for _, v := range []string{"1.2.0", "1.4.0"} {
		r, kv := tierRouter(t, 1, v)
		store(r, 0, MediumGPU, 1, 2)
		if r.host != nil || r.TierHits(blocks, nil) != nil {
			t.Errorf("%s: lower-tier indexes before any lower-tier event", v)
		}
		store(r, 0, MediumCPUPinned, 3)
		store(r, 0, MediumDisk, 4)
		if got := r.Overlap(0, blocks); got != 2 {
			t.Errorf("%s: device overlap %d, want 2", v, got)
		}
		if got := r.tierHitOf(0, blocks); got != (policy.TierHits{Host: 1, Disk: 1}) {
			t.Errorf("%s: tier hits %+v", v, got)
		}
		if kv.HostWeight != 0.75 || kv.DiskWeight != 0.25 {
			t.Errorf("%s: weights %g, %g, want 0.75, 0.25 (scheduling/config.rs L38-44)", v, kv.HostWeight, kv.DiskWeight)
		}
		drop(r, 0, MediumCPUPinned, 1) // a host eviction of a block the GPU holds
		if got := r.Overlap(0, blocks); got != 2 {
			t.Errorf("%s: a host eviction changed the device overlap to %d", v, got)
		}
	}
}

// TestTierHitsAgreeWithNaive: the scan's hits equal a per-worker walk for
// random tiers and requests, asked repeatedly between changes.
func TestTierHitsAgreeWithNaive(t *testing.T) {
	for seed := uint64(1); seed <= 20; seed++ {
		rng := rand.New(rand.NewPCG(seed, 9))
		n := 1 + rng.IntN(12)
		r, _ := tierRouter(t, n, "1.2.0")
		held := [3][]map[uint64]bool{}
		for m := range held {
			held[m] = make([]map[uint64]bool, n)
			for w := range held[m] {
				held[m][w] = map[uint64]bool{}
			}
		}
		media := [3]Medium{MediumGPU, MediumCPUPinned, MediumDisk}
		for step := 0; step < 400; step++ {
			m, w, b := rng.IntN(3), rng.IntN(n), uint64(1+rng.IntN(10))
			if rng.IntN(3) == 0 {
				drop(r, w, media[m], b)
				delete(held[m][w], b)
			} else {
				store(r, w, media[m], b)
				held[m][w][b] = true
			}
			blocks := make([]uint64, rng.IntN(10))
			for i := range blocks {
				blocks[i] = uint64(1 + i)
			}
			got := r.TierHits(blocks, nil)
			for w := 0; w < n; w++ {
				k := 0
				for k < len(blocks) && held[0][w][blocks[k]] {
					k++
				}
				h := k
				for h < len(blocks) && held[1][w][blocks[h]] {
					h++
				}
				d := h
				for d < len(blocks) && held[2][w][blocks[d]] {
					d++
				}
				want := policy.TierHits{Host: int32(h - k), Disk: int32(d - h)}
				var gw policy.TierHits // nil hits: no lower-tier event yet
				if got != nil {
					gw = got[w]
				}
				if gw != want || r.tierHitOf(w, blocks) != want {
					t.Fatalf("seed %d step %d worker %d: %+v (tierHitOf %+v), want %+v", seed, step, w, gw, r.tierHitOf(w, blocks), want)
				}
			}
		}
	}
}

// llm-d's precise prefix-cache scorer reads the GPU tier only here:
// vLLM's native CPU stores carry no token ids, which its index rejects
// (pkg/kvcache/kvblock/in_memory.go L149-155 @a378f5b), and a CPU remove
// evicts only the pod's "cpu" entry (kvevents/pool.go L307-330), never its
// GPU one; KVBM's events leave through KVBM's consolidator endpoint, not
// the engine's ZMQ publisher llm-d subscribes to. The other routers keep
// approximate indexes of the prompts they routed and read no KV event.
func TestLLMDReadsGPUOnly(t *testing.T) {
	workers := []*worker{{id: 0, cfg: WorkerConfig{BlockSize: 16, KVBlocks: 1000, MaxNumBatchedTokens: 512}}}
	r := newRouter(workers, RouterConfig{KVAware: true}, func() Time { return 0 })
	p := policy.DefaultParams()
	p.Rand, p.Scorers = rand.New(rand.NewPCG(1, 2)), "precise-prefix-cache:1"
	pol, err := policy.New("llm-d", p)
	if err != nil {
		t.Fatal(err)
	}
	r.readTiers(pol)
	blocks := []uint64{1, 2, 3, 4}
	store(r, 0, MediumGPU, 1, 2)
	store(r, 0, MediumCPU, 3)
	store(r, 0, MediumCPUPinned, 3)
	store(r, 0, MediumDisk, 4)
	drop(r, 0, MediumCPU, 1)
	if got := r.Overlap(0, blocks); got != 2 || r.host != nil {
		t.Errorf("llm-d: overlap %d (want the GPU's 2), host index %v", got, r.host != nil)
	}
}

// A request parked in v1.2's router queue keeps the tier hits the router
// computed at its arrival, as it keeps its device overlap (the matches are
// found before schedule: lib/llm/src/kv_router.rs L512-565 @c8d8e7602573),
// for its choice and its booking at dequeue.
func TestParkedRequestKeepsTierHits(t *testing.T) {
	r, _ := tierRouter(t, 1, "1.2.0")
	r.freeze = true
	blocks := []uint64{1, 2, 3}
	store(r, 0, MediumGPU, 1)
	store(r, 0, MediumCPUPinned, 2, 3)
	r.park(5, 48, blocks)
	drop(r, 0, MediumCPUPinned, 2) // the host tier lets go while the request waits
	if got := r.tierHitOf(0, blocks); got != (policy.TierHits{}) {
		t.Fatalf("live hits %+v after the eviction, want none", got)
	}
	r.using, r.usingTiers = r.frozen[5], r.frozenTiers[5]
	if got := r.TierHits(blocks, nil)[0]; got != (policy.TierHits{Host: 2}) {
		t.Errorf("frozen hits %+v, want the arrival's 2 host blocks", got)
	}
	if got, want := r.book(0, 48, blocks), 48-int(math.Round((1+0.75*2)*16)); got != want {
		t.Errorf("booked %d, want %d (the arrival-time cached tokens off)", got, want)
	}
	r.using, r.usingTiers = nil, nil
	r.thaw(5)
	if len(r.frozenTiers) != 0 {
		t.Error("frozen tier hits kept after thaw")
	}
}

// hears sends a tier's event to the router only when its reading does
// something with it (TestTierEventsChangeKVRouting checks a run sees the
// same decisions either way).
func TestTierEventsHeard(t *testing.T) {
	for _, c := range []struct {
		version                   string
		lowerEvent                bool // after a CPU_PINNED store
		cpuStore, cpuRemove, kvbm bool
	}{
		{"0.9.0", false, false, true, true},
		{"1.2.0", false, false, true, true},
		{"1.2.0", true, false, true, true},
		{"1.4.0", false, false, false, true}, // no host index yet: nothing to remove
		{"1.4.0", true, false, true, true},
	} {
		r, _ := tierRouter(t, 1, c.version)
		if c.lowerEvent {
			store(r, 0, MediumCPUPinned, 1)
		}
		if r.hears(MediumCPU, true) != c.cpuStore || r.hears(MediumCPU, false) != c.cpuRemove ||
			r.hears(MediumCPUPinned, true) != c.kvbm || r.hears(MediumDisk, false) != c.kvbm || !r.hears(MediumGPU, true) {
			t.Errorf("%s (lower-tier event %v): hears CPU store %v, CPU remove %v, KVBM %v", c.version, c.lowerEvent,
				r.hears(MediumCPU, true), r.hears(MediumCPU, false), r.hears(MediumCPUPinned, true))
		}
	}
	workers := []*worker{{id: 0, cfg: WorkerConfig{BlockSize: 16, KVBlocks: 10, MaxNumBatchedTokens: 512}}}
	if r := newRouter(workers, RouterConfig{}, func() Time { return 0 }); r.hears(MediumGPU, true) || r.hears(MediumCPUPinned, true) {
		t.Error("a router without KV bookkeeping hears KV events")
	}
}

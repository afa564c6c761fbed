package sim

import (
	"errors"
	"math/rand/v2"
	"testing"

	"github.com/routesim/routesim/internal/inputerr"
	"github.com/routesim/routesim/model"
)

// The CPU tier's rules, each against the vLLM source docs/readings/kv-tiers.md
// cites (section in brackets).

func hashes(from, n int) []uint64 {
	h := make([]uint64, n)
	for i := range h {
		h[i] = uint64(from + i)
	}
	return h
}

// Write policy (§1.2): _get_reqs_to_store hands prepare_store the blocks
// full after the step; prepare_store keeps those not stored
// (lru_manager.py prepare_store: "filter out blocks that are already
// stored"); the copy is submitted in wait_for_save, after the forward, and
// the block is findable once complete_store marks it ready (lookup breaks
// at a block that is not ready).
func TestHostStoreWriteThroughMissingOnly(t *testing.T) {
	h := newHostTier(HostTierConfig{Blocks: 10, BlockBytes: 1 << 20, BlockNs: 1000})
	a := hashes(1, 4)
	h.store(a, 0, 5000) // a step ending at 5 µs filled 4 blocks
	if got := h.lookup(a, 0, 4, 8999); got != 0 {
		t.Errorf("lookup before the copy of 4 blocks (ends at 9 µs) found %d blocks, want 0", got)
	}
	if got := h.lookup(a, 0, 4, 9000); got != 4 {
		t.Errorf("lookup when the copy ended found %d blocks, want 4", got)
	}
	// A second request sharing the first 3 blocks, with 2 of its own: only
	// those 2 are copied, queued behind nothing (the queue drained at 9 µs).
	b := append(hashes(1, 3), hashes(100, 2)...)
	h.store(b, 0, 20000)
	if h.stats.StoredBlocks != 6 || h.d2h != 22000 {
		t.Errorf("after the second store: %d blocks stored, queue drains at %d; want 6 and 22000", h.stats.StoredBlocks, h.d2h)
	}
	// Copies in one direction run in submission order
	// (SingleDirectionOffloadingHandler): a store submitted before the
	// queue drains waits for it.
	h.store(hashes(200, 1), 0, 21000)
	if h.ready[h.index[200]] != 23000 {
		t.Errorf("a store submitted at 21 µs behind a queue draining at 22 µs is ready at %d, want 23000", h.ready[h.index[200]])
	}
	// Only the blocks from `from` on are new: a request's earlier blocks are
	// touched, not stored again.
	h.store(hashes(300, 3), 2, 30000)
	if _, ok := h.index[300]; ok || h.stats.StoredBlocks != 8 {
		t.Errorf("store from index 2 stored a block before it (or %d blocks in all, want 8)", h.stats.StoredBlocks)
	}
	if err := h.check(&reqStore{}); err != nil {
		t.Error(err)
	}
}

// Eviction (§1.3): prepare_store evicts from the least recently used end,
// skipping blocks with ref_cnt ≠ 0 (being loaded; not yet stored), and
// stores nothing when it cannot free enough; touch walks the hashes in
// reverse, so a request's first block ends most recent.
func TestHostEvictionLRUSkipsPinnedAndInFlight(t *testing.T) {
	h := newHostTier(HostTierConfig{Blocks: 4, BlockBytes: 1, BlockNs: 1})
	h.store(hashes(1, 4), 0, 0) // 1 2 3 4, ready at 4
	h.touch([]uint64{3, 1})     // reversed: 1 then 3 to the end; LRU order 2 4 1 3
	h.load([]uint64{2}, 10)     // 2 pinned by a load
	h.store(hashes(10, 1), 0, 10)
	if _, ok := h.index[4]; ok {
		t.Error("block 4, the least recently used unpinned block, was not evicted")
	}
	if _, ok := h.index[2]; !ok {
		t.Error("block 2, pinned by a load, was evicted")
	}
	// Block 10 is in flight until 11: a store at 10 cannot evict it, nor
	// 2; it evicts 1 and 3 for two new blocks.
	h.store(hashes(20, 2), 0, 10)
	for _, x := range []uint64{3, 1} {
		if _, ok := h.index[x]; ok {
			t.Errorf("block %d should have been evicted (the least recent after the pinned and in-flight ones)", x)
		}
	}
	if _, ok := h.index[10]; !ok {
		t.Error("block 10, still being stored, was evicted")
	}
	// Now every block is pinned or in flight: a store finds no room and
	// stores nothing.
	before := h.stats.StoredBlocks
	h.store(hashes(30, 1), 0, 10)
	if h.stats.StoredBlocks != before || h.stats.SkippedBlocks != 1 {
		t.Errorf("a store with no evictable block stored %d (skipped %d), want 0 stored, 1 skipped", h.stats.StoredBlocks-before, h.stats.SkippedBlocks)
	}
	h.unpin([]uint64{2})
	if err := h.check(&reqStore{}); err != nil {
		t.Error(err)
	}
	if h.held() > h.cfg.Blocks || h.stats.StoredBlocks-h.stats.Evictions != h.held() {
		t.Errorf("conservation: %d stored − %d evicted ≠ %d held (capacity %d)", h.stats.StoredBlocks, h.stats.Evictions, h.held(), h.cfg.Blocks)
	}
}

// Lookup (§1.4): get_num_new_matched_tokens looks up from the first block
// past the GPU hits and counts consecutive ready blocks.
func TestHostLookupConsecutiveFromGPUPrefix(t *testing.T) {
	h := newHostTier(HostTierConfig{Blocks: 10, BlockBytes: 1, BlockNs: 1})
	h.store([]uint64{1, 2, 4, 5}, 0, 0)
	seq := []uint64{1, 2, 3, 4, 5}
	for _, c := range []struct{ from, limit, want int }{
		{0, 5, 2}, // 1 2, then 3 is missing
		{1, 5, 1}, // the GPU holds block 1: 2 only
		{3, 5, 2}, // the GPU holds 1..3: 4 5
		{3, 4, 1}, // the last token is computed: at most limit
		{2, 5, 0},
	} {
		if got := h.lookup(seq, c.from, c.limit, 100); got != c.want {
			t.Errorf("lookup from %d to %d: %d blocks, want %d", c.from, c.limit, got, c.want)
		}
	}
}

// Onboarding cost (§1.5): a load of n blocks is n block copies on the
// CPU → GPU queue, which runs in submission order and apart from stores.
func TestHostLoadFIFOAndIndependentOfStores(t *testing.T) {
	h := newHostTier(HostTierConfig{Blocks: 10, BlockBytes: 1, BlockNs: 500})
	h.store(hashes(1, 6), 0, 0) // the store queue is busy until 3000
	if done := h.load(hashes(1, 2), 100); done != 1100 {
		t.Errorf("a load of 2 blocks at 100 ns ends at %d, want 1100 (stores do not delay loads)", done)
	}
	if done := h.load(hashes(3, 3), 600); done != 2600 {
		t.Errorf("a load queued behind one ending at 1100 ends at %d, want 2600", done)
	}
	if h.stats.LoadedBlocks != 5 {
		t.Errorf("%d blocks loaded, want 5", h.stats.LoadedBlocks)
	}
}

// Capacity (§1.1): CPUOffloadingSpec's num_blocks = cpu_bytes_to_use //
// (page_size_bytes × layers × world_size); the copy of a block is each
// GPU's share over its own host link.
func TestHostTierConfigFromOffloadingSize(t *testing.T) {
	cat := model.DefaultCatalogue()
	gpu, err := cat.LoadGPU("H100-SXM5-80GB")
	if err != nil {
		t.Fatal(err)
	}
	m, err := cat.LoadModel("Llama-2-7B")
	if err != nil {
		t.Fatal(err)
	}
	dep := model.Deployment{GPU: gpu, Model: m, TP: 1, KVDtypeBytes: 2}
	h, err := hostTierConfig(dep, EngineFlags{KVOffloadingSizeGiB: 8, BlockSize: 16})
	if err != nil {
		t.Fatal(err)
	}
	// Llama-2-7B fp16: 32 layers × 2 × 32 heads × 128 × 2 B = 512 KiB a
	// token, 8 MiB a 16-token block; 8 GiB hold 1,024 of them. PCIe Gen5
	// x16 moves 64 GB/s each way.
	if h.Blocks != 1024 || h.BlockBytes != 8<<20 || h.BlockNs != float64(8<<20)/64e9*1e9 {
		t.Errorf("8 GiB on an H100 with Llama-2-7B: %+v, want 1024 blocks of 8 MiB, %g ns each", h, float64(8<<20)/64e9*1e9)
	}
	dep.TP = 2
	h2, err := hostTierConfig(dep, EngineFlags{KVOffloadingSizeGiB: 8, BlockSize: 16})
	if err != nil {
		t.Fatal(err)
	}
	if h2.Blocks != 1024 || h2.BlockNs != h.BlockNs/2 {
		t.Errorf("TP 2: %+v, want the same 1024 blocks copied in half the time (two host links)", h2)
	}
	for _, c := range []struct {
		name string
		f    EngineFlags
	}{
		{"negative", EngineFlags{KVOffloadingSizeGiB: -1, BlockSize: 16}},
		{"too small", EngineFlags{KVOffloadingSizeGiB: 0.001, BlockSize: 16}},
		{"trtllm", EngineFlags{KVOffloadingSizeGiB: 8, BlockSize: 16, Engine: TRTLLM}},
		{"no prefix caching", EngineFlags{KVOffloadingSizeGiB: 8, BlockSize: 16, NoPrefixCaching: true}},
	} {
		_, err := hostTierConfig(dep, c.f)
		var fe *inputerr.FieldError
		if err == nil || !errors.As(err, &fe) || fe.Field != "kv_offloading_size_gib" {
			t.Errorf("%s: error %v, want one naming kv_offloading_size_gib", c.name, err)
		}
	}
	if h, err := hostTierConfig(dep, EngineFlags{BlockSize: 16}); err != nil || h.on() {
		t.Errorf("no size: %+v, %v; want no tier", h, err)
	}
}

// Random stores, touches and loads on small tiers: after every operation
// the tier holds at most its capacity, each block once (index and LRU list
// agree), pins match the loads in flight, and blocks stored − evicted =
// blocks held. (A store once re-inserted a block of its own request that
// its eviction had taken, overfilling the tier.)
func TestHostTierAccountingRandomOps(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for it := 0; it < 300; it++ {
		h := newHostTier(HostTierConfig{Blocks: 1 + rng.IntN(20), BlockBytes: 1, BlockNs: float64(1 + rng.IntN(5))})
		at := Time(0)
		var pinned [][]uint64
		for k := 0; k < 200; k++ {
			at += Time(rng.IntN(5))
			n := 1 + rng.IntN(10)
			all := hashes(rng.IntN(30), n)
			switch op := rng.IntN(4); {
			case op < 2:
				h.store(all, rng.IntN(n), at)
			case op == 2:
				if got := h.lookup(all, 0, n, at); got > 0 {
					h.load(all[:got], at)
					pinned = append(pinned, all[:got])
				}
			case len(pinned) > 0:
				h.unpin(pinned[0])
				pinned = pinned[1:]
			default:
				h.touch(all)
			}
			want := 0
			for _, p := range pinned {
				want += len(p)
			}
			pins, err := h.checkSlots()
			if err != nil || pins != want {
				t.Fatalf("run %d op %d: %v; %d pins for %d pinned blocks", it, k, err, pins, want)
			}
		}
	}
}

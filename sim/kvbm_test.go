package sim

import (
	"errors"
	"math"
	"testing"

	"github.com/routesim/routesim/internal/inputerr"
	"github.com/routesim/routesim/model"
)

// newKVBMHost is a host tier of n blocks copied in 10 ns each under
// KVBM's rules, with a disk of disk blocks (none if 0) read in 100 ns and
// written in 50 ns each.
func newKVBMHost(n, disk int) *hostTier {
	h := newHostTier(HostTierConfig{Blocks: n, BlockBytes: 1, BlockNs: 10})
	cfg := KVBMConfig{On: true}
	if disk > 0 {
		cfg.DiskBlocks, cfg.DiskReadNs, cfg.DiskWriteNs = disk, 100, 50
	}
	h.kv = newKVBM(cfg, 1)
	return h
}

// lruOf lists a tier's hashes, least recently used first.
func lruOf(hash []uint64, l blockList) []uint64 {
	var out []uint64
	for s := l.head; s >= 0; s = l.next[s] {
		out = append(out, hash[s])
	}
	return out
}

func eq(a, b []uint64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// Write policy (slot.rs apply_scheduler_output L790-892 and
// process_offload_to_storage L1682-1770 @c8d8e7602573): every candidate
// block is copied, the ones the host has too; registration keeps the
// existing block, so only new hashes are stored.
func TestKVBMWriteCopiesEveryCandidate(t *testing.T) {
	h := newKVBMHost(8, 0)
	h.kv.store(h, []uint64{1, 2, 3}, 0)
	if h.d2h != 30 || h.stats.StoredBlocks != 3 {
		t.Fatalf("first store: queue drains at %v, %d stored; want 30, 3", h.d2h, h.stats.StoredBlocks)
	}
	h.kv.store(h, []uint64{2, 3, 4}, 100)
	if h.d2h != 130 || h.stats.StoredBlocks != 4 || h.stats.DupBlocks != 2 || h.held() != 4 {
		t.Errorf("second store: queue drains at %v, %d stored, %d copied again, %d held; want 130 (3 copies), 4, 2, 4", h.d2h, h.stats.StoredBlocks, h.stats.DupBlocks, h.held())
	}
	if got := lruOf(h.hash, h.blockList); !eq(got, []uint64{1, 2, 3, 4}) {
		t.Errorf("LRU %v: want 1 2 3 4 (the re-registered 2, 3 returned again, in order)", got)
	}
}

// allocate_blocks is all or nothing (pool/managed/state.rs L140-165): if
// fewer unused blocks than candidates can be taken, the whole offload is
// dropped (process_offload_request then completes it empty).
func TestKVBMAllocationAllOrNothing(t *testing.T) {
	h := newKVBMHost(4, 0)
	h.kv.store(h, []uint64{1, 2, 3, 4}, 0)
	h.kv.lastHost = 1
	h.kv.load(h, []uint64{1}, 100) // 1 is in use: 3 blocks can be taken
	h.kv.store(h, []uint64{5, 6, 7, 8}, 100)
	if h.stats.SkippedBlocks != 4 || h.held() != 4 || h.stats.Evictions != 0 {
		t.Errorf("stats %+v: want the 4 blocks skipped, nothing evicted", h.stats)
	}
	h.kv.store(h, []uint64{9, 10, 11, 12, 13}, 200) // more than the tier
	if h.stats.SkippedBlocks != 9 {
		t.Errorf("skipped %d: want 9 (5 more than the capacity)", h.stats.SkippedBlocks)
	}
}

// Eviction between tiers: the host takes its least recently returned
// unused block (inactive.rs acquire_free_block L349-380: lowest
// (priority, returned tick), priorities all 0), skipping blocks in use
// (loading, or being written to disk), and reports the removal.
func TestKVBMEvictsLeastRecentlyReturned(t *testing.T) {
	h := newKVBMHost(3, 0)
	h.kv.store(h, []uint64{1, 2, 3}, 0)
	h.kv.lastHost = 1
	h.kv.load(h, []uint64{1}, 100) // returned after 2 and 3
	h.kv.unpin(h, []uint64{1})
	h.kv.events = h.kv.events[:0]
	h.kv.store(h, []uint64{4}, 200)
	if _, ok := h.index[2]; ok || h.held() != 3 {
		t.Errorf("held %v: want 2 evicted", lruOf(h.hash, h.blockList))
	}
	want := []kvbmEvent{{MediumCPUPinned, false, 2}, {MediumCPUPinned, true, 4}}
	if len(h.kv.events) != 2 || h.kv.events[0] != want[0] || h.kv.events[1] != want[1] {
		t.Errorf("events %+v: want %+v", h.kv.events, want)
	}
}

// The G2 → G3 frequency filter (offload/filter.rs L96-124; its own test
// test_basic_frequency_filter L148-156): 1 on first sight, doubled after,
// passing at ≥ 2; a decay tick (600 s) takes 1 off and drops zeros.
func TestKVBMFrequencyFilter(t *testing.T) {
	k := newKVBM(KVBMConfig{On: true, DiskBlocks: 10, DiskReadNs: 1, DiskWriteNs: 1}, 1)
	for i, c := range []struct {
		x    uint64
		at   Time
		want bool
	}{
		{0, 0, false}, {0, 1, true}, {1, 2, false}, {2, 3, false},
		{0, 4, true},                   // 4
		{1, kvbmDecayEvery + 5, false}, // 1 decayed to 0 and dropped: first sight again
		{0, kvbmDecayEvery + 6, true},  // 4 − 1 = 3, doubled
	} {
		if got := k.shouldOffload(c.x, c.at); got != c.want {
			t.Errorf("sight %d of %d at %v: %v, want %v", i, c.x, c.at, got, c.want)
		}
	}
	if c := k.freq[0]; c != 6 {
		t.Errorf("count of 0: %d, want (4 − 1)·2 = 6", c)
	}
}

// G2 → G3 and onboarding from both tiers: a host block registered a
// second time goes to disk (offload.rs L432-492), written after the
// queue; the host block is in use until its write ends; lookup takes the
// host's consecutive blocks, then the disk's (slot.rs L1040-1140), and
// the load ends when both copies have.
func TestKVBMDiskTierAndTwoTierLoad(t *testing.T) {
	h := newKVBMHost(2, 4)
	h.kv.store(h, []uint64{1, 2}, 0) // first sight: host only
	if h.kv.disk.held() != 0 {
		t.Fatalf("disk holds %d after a first sight", h.kv.disk.held())
	}
	h.kv.store(h, []uint64{1, 2}, 100) // re-registered: second sight
	d := h.kv.disk
	if d.held() != 2 || d.at != 120+2*50 {
		t.Fatalf("disk holds %d, queue drains at %v; want 2, %v", d.held(), d.at, 120+2*50)
	}
	h.kv.store(h, []uint64{3}, 150) // 1 and 2 are being written: no room
	if h.stats.SkippedBlocks != 1 {
		t.Errorf("skipped %d: want 1 (host blocks in use while written to disk)", h.stats.SkippedBlocks)
	}
	h.kv.store(h, []uint64{3}, 300) // writes done: 1 is evicted from the host
	if _, ok := h.index[1]; ok {
		t.Fatalf("host still holds 1: %v", lruOf(h.hash, h.blockList))
	}
	// Blocks 1 (disk only), 2 (host and disk): the lookup from 0 stops
	// at the host's first miss, then takes the disk's.
	if n := h.lookup([]uint64{1, 2, 9}, 0, 3, 400); n != 2 || h.kv.lastHost != 0 || h.kv.lastDisk != 2 {
		t.Errorf("lookup %d (host %d, disk %d): want 2 from disk", n, h.kv.lastHost, h.kv.lastDisk)
	}
	if n := h.lookup([]uint64{2, 3, 9}, 0, 3, 400); n != 2 || h.kv.lastHost != 2 {
		t.Errorf("lookup %d (host %d): want 2 from host", n, h.kv.lastHost)
	}
	h.lookup([]uint64{3, 1}, 0, 2, 400) // host 3, disk 1
	if done := h.load([]uint64{3, 1}, 400); done != 400+100 {
		t.Errorf("load ends at %v: want 500 (the disk read; the host copy ends at 410)", done)
	}
	h.unpin([]uint64{3, 1})
	if err := h.kv.check(h, &reqStore{}); err != nil {
		t.Error(err)
	}
}

// Capacity (distributed/leader.rs L27-35, L162-165): int(GB·10⁹ / bytes
// per block summed over the TP ranks), decimal GB; the disk likewise; bad
// sizes and vLLM's own connector beside KVBM are refused naming the field.
func TestKVBMConfigFromCacheSizes(t *testing.T) {
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
	h, k, err := kvbmConfig(dep, EngineFlags{KVBMCPUCacheGB: 8, KVBMDiskCacheGB: 100, BlockSize: 16})
	if err != nil {
		t.Fatal(err)
	}
	// 8 MiB blocks (hosttier_test.go's arithmetic): 8e9 / 8,388,608 = 953.
	if h.Blocks != 953 || h.BlockBytes != 8<<20 || k.DiskBlocks != 11920 || !k.On {
		t.Errorf("8 GB host, 100 GB disk: %+v %+v; want 953 host and 11,920 disk blocks of 8 MiB", h, k)
	}
	if want := float64(8<<20) / DefaultDiskReadBytesPerSec * 1e9; k.DiskReadNs != want {
		t.Errorf("disk read %g ns a block, want %g", k.DiskReadNs, want)
	}
	_, k2, err := kvbmConfig(dep, EngineFlags{KVBMCPUCacheGB: 8, KVBMDiskCacheGB: 100, KVBMDiskReadGBs: 2, KVBMDiskWriteGBs: 1, BlockSize: 16})
	if err != nil || k2.DiskReadNs != float64(8<<20)/2 || k2.DiskWriteNs != float64(8<<20)/1 {
		t.Errorf("2 GB/s read, 1 GB/s write: %+v, %v; want %g and %g ns a block", k2, err, float64(8<<20)/2, float64(8<<20)/1)
	}
	for _, c := range []struct {
		name, field string
		f           EngineFlags
	}{
		{"negative", "kvbm_cpu_cache_gb", EngineFlags{KVBMCPUCacheGB: -1, BlockSize: 16}},
		{"NaN disk", "kvbm_disk_cache_gb", EngineFlags{KVBMCPUCacheGB: 8, KVBMDiskCacheGB: math.NaN(), BlockSize: 16}},
		{"huge", "kvbm_cpu_cache_gb", EngineFlags{KVBMCPUCacheGB: 1e300, BlockSize: 16}},
		{"too small", "kvbm_cpu_cache_gb", EngineFlags{KVBMCPUCacheGB: 0.001, BlockSize: 16}},
		{"disk only", "kvbm_disk_cache_gb", EngineFlags{KVBMDiskCacheGB: 8, BlockSize: 16}},
		{"with vLLM's connector", "kvbm_cpu_cache_gb", EngineFlags{KVBMCPUCacheGB: 8, KVOffloadingSizeGiB: 8, BlockSize: 16}},
		{"trtllm", "kvbm_cpu_cache_gb", EngineFlags{KVBMCPUCacheGB: 8, BlockSize: 16, Engine: TRTLLM}},
		{"no prefix caching", "kvbm_cpu_cache_gb", EngineFlags{KVBMCPUCacheGB: 8, BlockSize: 16, NoPrefixCaching: true}},
		{"disk bandwidth without a disk", "kvbm_disk_read_gb_s", EngineFlags{KVBMCPUCacheGB: 8, KVBMDiskReadGBs: 3, BlockSize: 16}},
		{"NaN disk write", "kvbm_disk_write_gb_s", EngineFlags{KVBMCPUCacheGB: 8, KVBMDiskCacheGB: 8, KVBMDiskWriteGBs: math.NaN(), BlockSize: 16}},
		{"consolidator without KVBM", "kvbm_kv_events", EngineFlags{KVBMEvents: KVBMEventsPassthrough, BlockSize: 16}},
	} {
		_, _, err := kvbmConfig(dep, c.f)
		var fe *inputerr.FieldError
		if err == nil || !errors.As(err, &fe) || fe.Field != c.field {
			t.Errorf("%s: error %v, want one naming %s", c.name, err, c.field)
		}
	}
}

// The KV event consolidator (kv_consolidator/tracker.rs L300-465, L575-595
// @c8d8e7602573). Dedup: one store when the first source gets a block,
// one removal when the last drops it, both as device-tier events; KVBM's
// host and disk are one source, so a host removal ends KVBM's part even
// while the disk holds the block. Passthrough: each event with its tier.
func TestKVBMConsolidator(t *testing.T) {
	type ev struct {
		stored bool
		m      Medium
		h      uint64
	}
	var got []ev
	out := func(stored bool, m Medium, h uint64) { got = append(got, ev{stored, m, h}) }
	d := newKVBMCons(KVBMEventsDedup, out)
	d.event(srcGPU, MediumGPU, true, 1)         // published: first source
	d.event(srcKVBM, MediumCPUPinned, true, 1)  // KVBM joins: nothing
	d.event(srcGPU, MediumGPU, false, 1)        // GPU drops it: KVBM holds it
	d.event(srcKVBM, MediumDisk, true, 1)       // disk: KVBM already a source
	d.event(srcKVBM, MediumCPUPinned, false, 1) // host drops it: last source gone
	d.event(srcKVBM, MediumDisk, false, 1)      // KVBM no longer a source: nothing
	want := []ev{{true, MediumGPU, 1}, {false, MediumGPU, 1}}
	if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] {
		t.Errorf("dedup published %+v, want %+v", got, want)
	}
	got = nil
	p := newKVBMCons(KVBMEventsPassthrough, out)
	p.event(srcGPU, MediumGPU, true, 2)
	p.event(srcKVBM, MediumCPUPinned, true, 2)
	p.event(srcKVBM, MediumDisk, true, 2)
	p.event(srcGPU, MediumGPU, false, 2)
	want = []ev{{true, MediumGPU, 2}, {true, MediumCPUPinned, 2}, {true, MediumDisk, 2}, {false, MediumGPU, 2}}
	if len(got) != 4 || got[0] != want[0] || got[1] != want[1] || got[2] != want[2] || got[3] != want[3] {
		t.Errorf("passthrough published %+v, want %+v", got, want)
	}
	for _, c := range []struct {
		in   string
		want KVBMEvents
		ok   bool
	}{{"", KVBMEventsDedup, true}, {"dedup", KVBMEventsDedup, true}, {"Passthrough", KVBMEventsPassthrough, true}, {"merged", 0, false}} {
		if m, err := ParseKVBMEvents(c.in); (err == nil) != c.ok || m != c.want {
			t.Errorf("ParseKVBMEvents(%q) = %v, %v", c.in, m, err)
		}
	}
}

// A request's tokens by tier (slot.rs record_cached_host_tokens and
// record_cached_disk_tokens, L1090-1106): C's prompt starts with two host
// blocks and a disk block, so its first admission loads 2 blocks' tokens
// from the host and 1 block's from the disk.
func TestKVBMAdmissionCountsTokensByTier(t *testing.T) {
	var reqs reqStore
	cfg := WorkerConfig{MaxNumSeqs: 8, MaxNumBatchedTokens: 2048, BlockSize: 16, KVBlocks: 100, MaxModelLen: 4096,
		HostTier: HostTierConfig{Blocks: 2, BlockBytes: 1, BlockNs: 10},
		KVBM:     KVBMConfig{On: true, DiskBlocks: 10, DiskReadNs: 100, DiskWriteNs: 50}}
	w := newWorker(0, cfg, &model.Profile{Name: "t", StepBaseNs: 1e6, PrefillNsPerToken: 1e3, DecodeNsPerSeq: 1e4}, &reqs)
	h := w.host
	h.kv.store(h, []uint64{3}, 0)
	h.kv.store(h, []uint64{3}, 100)     // second sight: 3 is written to disk
	h.kv.store(h, []uint64{1, 2}, 1000) // evicts 3 from the host
	if _, ok := h.index[3]; ok || h.kv.disk.held() != 1 {
		t.Fatalf("want 3 on disk only: host %v, disk holds %d", lruOf(h.hash, h.blockList), h.kv.disk.held())
	}
	ri := reqs.add(newReqState(&Job{InputTokens: 5 * 16, OutputTokens: 2, Blocks: []uint64{1, 2, 3, 4, 5}, PromptBlocks: 5}))
	w.enqueue(ri)
	h.now = 2000
	w.schedule()
	r := reqs.at(ri)
	if r.cachedHost != 32 || r.cachedDisk != 16 || len(h.loads) != 1 {
		t.Errorf("cached host %d, disk %d tokens, %d loads; want 32, 16, 1", r.cachedHost, r.cachedDisk, len(h.loads))
	}
	if err := h.check(&reqs); err != nil {
		t.Error(err)
	}
}

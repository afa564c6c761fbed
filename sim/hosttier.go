package sim

import (
	"fmt"
	"math"

	"github.com/routesim/routesim/internal/inputerr"
	"github.com/routesim/routesim/model"
)

// A vLLM worker's CPU KV tier: vLLM's native KV offloading (the
// OffloadingConnector with the CPU spec, --kv-offloading-size GiB and
// --kv-offloading-backend native), as docs/readings/kv-tiers.md §1 reads
// it. Its rules, each cited there:
//
//   - Write-through, missing-only (§1.2): every block a request's step
//     fills, output blocks too, is copied to the CPU tier when the step
//     ends, unless the tier has it; a block is findable there once its copy
//     has ended (lookup stops at a block not ready).
//   - LRU eviction (§1.3): a store evicts from the least recently used end,
//     skipping blocks being loaded or still being stored; if that frees too
//     few, the request's new blocks are not stored. A request's lookup
//     touches all its full blocks (hits and misses), and a store touches the
//     request's full blocks up to the stored end.
//   - Lookup past the GPU prefix (§1.4): the CPU hits are the consecutive
//     ready blocks after the GPU prefix-cache hits, at most the blocks a
//     GPU hit may reach (the last token is always computed).
//   - Asynchronous load with the step-boundary deferral (§1.4): a request
//     with CPU hits takes GPU blocks for them and leaves the queue without
//     being scheduled (WAITING_FOR_REMOTE_KVS); its copy starts with the
//     step being scheduled; it rejoins the front of the queue, its loaded
//     blocks computed and cached, at the first schedule at or after its
//     copy ended. It takes no running slot nor token budget meanwhile.
//   - Transfers (§1.5): each direction is one FIFO (vLLM's
//     SingleDirectionOffloadingHandler runs a direction's copies in
//     submission order); loads and stores overlap (PCIe is full duplex, one
//     copy engine each way). A copy of n blocks takes n·BlockNs: each GPU
//     of the worker moves its share of the KV over its own host link.
//
// Simplifications, each small next to a step: a load is seen at the first
// schedule after it ended, not one step later under async scheduling; a
// finished request frees its GPU blocks at once (vLLM holds them until its
// store ends); a store that finds no room is dropped, not retried at the
// request's next step; the pinned-block delay of §1.4 is not modelled.

// HostTierConfig is a worker's CPU KV tier (zero: none).
type HostTierConfig struct {
	// Blocks is the tier's capacity, vLLM's num_cpu_blocks:
	// int(size·2³⁰) // the KV bytes of one block over the worker's GPUs
	// (vllm/v1/kv_offload/cpu.py CPUOffloadingSpec).
	Blocks int `json:",omitempty"`
	// BlockBytes is one block's KV over the worker's GPUs (bytes moved per
	// block copied).
	BlockBytes int64 `json:",omitempty"`
	// BlockNs is the time to copy one block one way: one GPU's share of it
	// over that GPU's host link.
	BlockNs float64 `json:",omitempty"`
}

// on reports whether the worker has a CPU tier.
func (h HostTierConfig) on() bool { return h.Blocks > 0 }

func (h HostTierConfig) validate(e EngineKind) []error {
	if h == (HostTierConfig{}) {
		return nil
	}
	var errs []error
	if e != VLLM {
		errs = append(errs, inputerr.Fieldf("kv_offloading_size_gib", "is vLLM's CPU offloading: it needs `engine` vllm"))
	}
	if h.Blocks < 1 || h.BlockBytes < 1 || !(h.BlockNs > 0) || math.IsInf(h.BlockNs, 0) {
		errs = append(errs, inputerr.Fieldf("kv_offloading_size_gib", "a CPU tier of %d blocks of %d bytes copied in %g ns each: want ≥ 1 block, ≥ 1 byte and a finite time > 0", h.Blocks, h.BlockBytes, h.BlockNs))
	}
	return errs
}

// MaxKVOffloadingGiB bounds --kv-offloading-size: 1 PiB of host memory,
// past any server's, and far from overflowing the byte count.
const MaxKVOffloadingGiB = 1 << 20

// hostTierConfig is the CPU tier --kv-offloading-size gives a worker of
// dep (f's block size filled in).
func hostTierConfig(dep model.Deployment, f EngineFlags) (HostTierConfig, error) {
	gib := f.KVOffloadingSizeGiB
	switch {
	case gib == 0:
		return HostTierConfig{}, nil
	case !(gib > 0 && gib <= MaxKVOffloadingGiB):
		return HostTierConfig{}, inputerr.Fieldf("kv_offloading_size_gib", "%g must be in (0, %d] GiB (0 = no CPU tier)", gib, MaxKVOffloadingGiB)
	case f.Engine != VLLM:
		return HostTierConfig{}, inputerr.Fieldf("kv_offloading_size_gib", "is vLLM's CPU offloading: it needs `engine` vllm")
	case f.NoPrefixCaching:
		return HostTierConfig{}, inputerr.Fieldf("kv_offloading_size_gib", "needs prefix caching (the CPU tier finds blocks by their prefix hashes)")
	case dep.GPU.HostLinkBytesPerSec <= 0:
		return HostTierConfig{}, inputerr.Fieldf("kv_offloading_size_gib", "GPU %s has no host-link bandwidth (host_link_bytes_per_s; a GPU file's pcie_gb_s)", dep.GPU.Name)
	}
	tp := int64(max(dep.TP, 1))
	perGPU := dep.KVBytesPerTokenPerGPU() * int64(f.BlockSize)
	h := HostTierConfig{BlockBytes: perGPU * tp, BlockNs: float64(perGPU) / dep.GPU.HostLinkBytesPerSec * 1e9}
	h.Blocks = int(int64(gib*(1<<30)) / h.BlockBytes)
	if h.Blocks < 1 {
		return HostTierConfig{}, inputerr.Fieldf("kv_offloading_size_gib", "%g GiB holds no block of %d bytes", gib, h.BlockBytes)
	}
	return h, nil
}

// HostStats are a worker's CPU-tier counters over a run.
type HostStats struct {
	Blocks        int   // capacity
	BlockBytes    int64 // bytes per block copied
	StoredBlocks  int   // copied GPU → CPU
	DupBlocks     int   `json:",omitempty"` // copied GPU → CPU though the tier had them (KVBM's write policy)
	KVBM          bool  `json:",omitempty"` // the tier is Dynamo KVBM's host tier (G2), not vLLM's
	SkippedBlocks int   // not stored: no room (every candidate pinned or in flight)
	LoadedBlocks  int   // copied CPU → GPU
	LookedBlocks  int   // blocks looked up in the tier (past the GPU hits) at admissions
	Evictions     int   // blocks evicted from the tier
	PeakBlocks    int   // most blocks held at once
	Unstalls      int   // waiting requests whose GPU blocks were freed so one could run (unstall)
	// StoreOps and LoadOps count the copies issued each way (one per
	// request per step that stores, one per request load), as vLLM's
	// connector counts its transfers.
	StoreOps, LoadOps int
}

// hostTier is a worker's CPU tier at run time. Blocks live in slots; a
// slot is in the LRU list (head = least recently used) while it holds a
// block.
type hostTier struct {
	cfg HostTierConfig
	tierSlots
	d2h   Time // when the GPU → CPU queue drains
	h2d   Time // when the CPU → GPU queue drains
	now   Time // the time of the schedule under way (set by the cluster)
	loads []hostLoad
	// earlier is how many of loads were issued before the schedule under
	// way (unstall frees only those).
	earlier int
	kicks   []Time   // ends of loads issued since the cluster last looked
	missing []uint64 // store's scratch
	stats   HostStats
	// publish, if set, sends the tier's KV events (medium "CPU", vLLM's
	// OffloadingConnector: BlockStored as a store is issued, BlockRemoved
	// at an eviction) to the router (docs/readings/kv-tiers.md §1.3).
	publish func(stored bool, h uint64)
	kv      *kvbm // Dynamo KVBM's rules and disk tier instead of vLLM's (nil: vLLM's; kvbm.go)
}

// hostLoad is a request waiting for blocks [from, from+n) of its job to
// be copied from the CPU tier; the copy ends at done.
type hostLoad struct {
	req     int32
	done    Time
	from, n int
}

// tierSlots are a tier's blocks in slots, shared by the host tier and
// KVBM's disk tier: the index of the hashes held, each slot's content,
// when its copy into the tier ends, the loads reading it, the LRU list of
// slots holding a block (head = least recently used) and the empty slots.
type tierSlots struct {
	index map[uint64]int32 // hash → slot
	hash  []uint64
	ready []Time  // when the block's copy into the tier ends
	pins  []int32 // loads in flight reading it
	blockList
	free []int32 // empty slots
}

// newTierSlots returns an empty tier of capacity n (its arrays grow on use).
func newTierSlots(n int) tierSlots {
	return tierSlots{index: make(map[uint64]int32, min(n, 1<<16)), blockList: emptyBlockList(),
		free: make([]int32, 0, min(n, 1<<16))}
}

func newHostTier(cfg HostTierConfig) *hostTier {
	return &hostTier{cfg: cfg, tierSlots: newTierSlots(cfg.Blocks),
		stats: HostStats{Blocks: cfg.Blocks, BlockBytes: cfg.BlockBytes}}
}

// slot returns an empty slot, growing the arrays on first use.
func (t *tierSlots) slot() int32 {
	if k := len(t.free); k > 0 {
		s := t.free[k-1]
		t.free = t.free[:k-1]
		return s
	}
	s := int32(len(t.hash))
	t.hash = append(t.hash, 0)
	t.ready = append(t.ready, 0)
	t.pins = append(t.pins, 0)
	t.prev = append(t.prev, -1)
	t.next = append(t.next, -1)
	return s
}

// held is the number of blocks in the tier.
func (t *tierSlots) held() int { return len(t.index) }

// touch makes hashes the most recently used, the first most recent of all
// (vLLM's touch walks them in reverse).
func (h *hostTier) touch(hashes []uint64) {
	if h.kv != nil { // KVBM's lookup touches nothing (kvbm.load does)
		return
	}
	for i := len(hashes) - 1; i >= 0; i-- {
		if s, ok := h.index[hashes[i]]; ok && s != h.tail {
			h.unlink(s)
			h.pushTail(s)
		}
	}
}

// lookup counts the consecutive blocks of hashes[from:limit] the tier
// holds, ready by now.
func (h *hostTier) lookup(hashes []uint64, from, limit int, now Time) int {
	if h.kv != nil {
		return h.kv.lookup(h, hashes, from, limit, now)
	}
	n := 0
	for k := from; k < limit && k < len(hashes); k++ {
		s, ok := h.index[hashes[k]]
		if !ok || h.ready[s] > now {
			break
		}
		n++
	}
	return n
}

// store copies the blocks of all[from:] the tier lacks, their step having
// ended at, and then touches all (the request's full blocks). It evicts
// least recently used blocks that are neither pinned nor in flight; if
// too few, nothing is stored.
func (h *hostTier) store(all []uint64, from int, at Time) {
	h.missing = h.missing[:0]
	for _, x := range all[from:] {
		if _, ok := h.index[x]; !ok {
			h.missing = append(h.missing, x)
		}
	}
	m := len(h.missing)
	if m == 0 {
		return
	}
	if !h.makeRoom(h.held()+m-h.cfg.Blocks, func(s int32) bool { return h.pins[s] == 0 && h.ready[s] <= at }) {
		h.stats.SkippedBlocks += m
		return
	}
	start := max(at, h.d2h)
	h.d2h = start + durationOf(float64(m)*h.cfg.BlockNs)
	// The blocks to store were chosen before evicting, which may have
	// taken one of the request's stored blocks (prepare_store allocates
	// block_hashes_to_store only).
	for _, x := range h.missing {
		s := h.slot()
		h.hash[s], h.ready[s], h.pins[s] = x, h.d2h, 0
		h.index[x] = s
		h.pushTail(s)
		if h.publish != nil {
			h.publish(true, x)
		}
	}
	h.stats.StoredBlocks += m
	h.stats.StoreOps++
	h.stats.PeakBlocks = max(h.stats.PeakBlocks, h.held())
	h.touch(all)
}

// makeRoom evicts the need least recently used blocks that evictable
// allows, or none if it allows fewer: it reports whether the room is made
// (need ≤ 0: nothing to do).
func (h *hostTier) makeRoom(need int, evictable func(s int32) bool) bool {
	if need <= 0 {
		return true
	}
	victims := 0
	for s := h.head; s >= 0 && victims < need; s = h.next[s] {
		if evictable(s) {
			victims++
		}
	}
	if victims < need {
		return false
	}
	for s := h.head; need > 0; {
		nx := h.next[s]
		if evictable(s) {
			h.evict(s)
			need--
		}
		s = nx
	}
	return true
}

func (h *hostTier) evict(s int32) {
	if h.kv != nil { // KVBM reports the removal to its consolidator
		h.kv.events = append(h.kv.events, kvbmEvent{MediumCPUPinned, false, h.hash[s]})
	}
	h.unlink(s)
	delete(h.index, h.hash[s])
	h.free = append(h.free, s)
	h.stats.Evictions++
	if h.publish != nil {
		h.publish(false, h.hash[s])
	}
}

// load pins hashes (the caller found them with lookup) and queues their
// copy to the GPU at now; it returns when the copy ends.
func (h *hostTier) load(hashes []uint64, now Time) Time {
	if h.kv != nil {
		return h.kv.load(h, hashes, now)
	}
	for _, x := range hashes {
		h.pins[h.index[x]]++
	}
	start := max(now, h.h2d)
	h.h2d = start + durationOf(float64(len(hashes))*h.cfg.BlockNs)
	h.stats.LoadedBlocks += len(hashes)
	h.stats.LoadOps++
	return h.h2d
}

// unpin ends a load of hashes.
func (h *hostTier) unpin(hashes []uint64) {
	if h.kv != nil {
		h.kv.unpin(h, hashes)
		return
	}
	for _, x := range hashes {
		h.pins[h.index[x]]--
	}
}

// check verifies the tier's accounting: at most its capacity, every held
// block once in the LRU list and the index, pins matching the loads in
// flight.
func (h *hostTier) check(reqs *reqStore) error {
	if h.kv != nil {
		return h.kv.check(h, reqs)
	}
	pins, err := h.checkSlots()
	if err != nil {
		return err
	}
	return h.checkLoads("CPU tier", reqs, pins)
}

// checkLoads verifies that each load in flight holds GPU blocks up to the
// end of its range and that the tiers' pins (pins) are the blocks being
// loaded.
func (h *hostTier) checkLoads(name string, reqs *reqStore, pins int) error {
	want := 0
	for _, l := range h.loads {
		want += l.n
		if r := reqs.at(l.req); len(r.table) != l.from+l.n {
			return fmt.Errorf("%s: request %d loads blocks [%d, %d) but holds %d GPU blocks", name, l.req, l.from, l.from+l.n, len(r.table))
		}
	}
	if pins != want {
		return fmt.Errorf("%s: %d pins, %d blocks being loaded", name, pins, want)
	}
	return nil
}

// checkSlots verifies the host tier's blocks (tierSlots.check).
func (h *hostTier) checkSlots() (int, error) {
	return h.tierSlots.check("CPU tier", h.cfg.Blocks, h.stats.StoredBlocks, h.stats.Evictions)
}

// check verifies the blocks held by the tier called name (at most
// capacity, each once in the index and the LRU list, stored − evicted of
// them, every slot held or empty) and returns their pins.
func (t *tierSlots) check(name string, capacity, stored, evicted int) (int, error) {
	if t.held() > capacity {
		return 0, fmt.Errorf("%s holds %d blocks, more than its %d", name, t.held(), capacity)
	}
	if t.held()+len(t.free) != len(t.hash) {
		return 0, fmt.Errorf("%s: %d held + %d empty slots ≠ %d slots", name, t.held(), len(t.free), len(t.hash))
	}
	n, pins := 0, 0
	for s := t.head; s >= 0; s = t.next[s] {
		if n++; n > t.held() {
			return 0, fmt.Errorf("%s: LRU list longer than the %d blocks held", name, t.held())
		}
		if t.index[t.hash[s]] != s {
			return 0, fmt.Errorf("%s: slot %d is listed but its hash is not indexed to it", name, s)
		}
		if t.pins[s] < 0 {
			return 0, fmt.Errorf("%s: slot %d has %d pins", name, s, t.pins[s])
		}
		pins += int(t.pins[s])
	}
	if n != t.held() {
		return 0, fmt.Errorf("%s: LRU list has %d blocks, the index %d", name, n, t.held())
	}
	if stored-evicted != t.held() {
		return 0, fmt.Errorf("%s: %d stored − %d evicted ≠ %d held", name, stored, evicted, t.held())
	}
	return pins, nil
}

// HostTierSummary is the CPU tiers' traffic over a run, summed over the
// workers.
type HostTierSummary struct {
	BlocksPerWorker int     `json:"blocks_per_worker"`
	StoredBlocks    int     `json:"stored_blocks"`
	LoadedBlocks    int     `json:"loaded_blocks"`
	SkippedBlocks   int     `json:"skipped_blocks"`
	Evictions       int     `json:"evictions"`
	BytesToHost     float64 `json:"bytes_to_host"`
	BytesFromHost   float64 `json:"bytes_from_host"`
	// Unstalls counts waiting requests whose GPU blocks the sim freed
	// where vLLM's scheduler would have stalled (unstall).
	Unstalls int `json:"unstalls"`
	// HitRate is the blocks loaded over the blocks looked up in the tier
	// (those past a request's GPU hits, at each lookup).
	HitRate float64 `json:"hit_rate"`
	looked  int
}

// add folds one worker's counters (nil: no tier) into s (nil: none yet).
func (s *HostTierSummary) add(h *HostStats) *HostTierSummary {
	if h == nil {
		return s
	}
	if s == nil {
		s = &HostTierSummary{}
	}
	s.BlocksPerWorker = max(s.BlocksPerWorker, h.Blocks)
	s.StoredBlocks += h.StoredBlocks
	s.LoadedBlocks += h.LoadedBlocks
	s.SkippedBlocks += h.SkippedBlocks
	s.Evictions += h.Evictions
	s.Unstalls += h.Unstalls
	s.BytesToHost += float64(h.StoredBlocks+h.DupBlocks) * float64(h.BlockBytes)
	s.BytesFromHost += float64(h.LoadedBlocks) * float64(h.BlockBytes)
	s.looked += h.LookedBlocks
	if s.looked > 0 {
		s.HitRate = float64(s.LoadedBlocks) / float64(s.looked)
	}
	return s
}

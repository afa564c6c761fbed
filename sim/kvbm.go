package sim

import (
	"fmt"
	"math"
)

// Dynamo's KV Block Manager (KVBM) on a vLLM worker, as Dynamo v1.2.0
// (c8d8e7602573) runs it through its vLLM connector; each rule is cited
// in docs/readings/kvbm.md. The host tier (G2) reuses hostTier's slots,
// LRU list and transfer queues; kvbm changes its rules and adds a disk
// tier (G3):
//
//   - Write-through of the blocks a step computes (§2): the blocks a
//     request's step fills, past its GPU prefix hits and the blocks it
//     loaded, are all copied GPU → host when the step ends, including
//     those the host already has (the copy is made, then registration
//     finds the duplicate). The host allocates room for all of them
//     first, evicting its least recently returned unused blocks; if too
//     few are unused, the whole offload is dropped.
//   - Host → disk (§3): a block registered in the host (a new one, or one
//     found again unused) is offered to the disk unless the disk has it;
//     the frequency filter passes it once its count reaches 2 (1 on first
//     sight, doubled at each sight, less 1 every 600 s, entries at 0
//     dropped). Disk eviction is the host's rule.
//   - Lookup (§4): the host's consecutive blocks after the GPU hits, then
//     the disk's after those; the load is asynchronous (the request waits
//     off the queue, hostAdmit's deferral). Host blocks cross the GPU's
//     host link; disk blocks are read from the disk straight to the GPU.
//   - Transfers (§6): GPU → host and host → GPU are the host tier's FIFO
//     queues (one per direction). The disk is one FIFO for its reads and
//     writes: they share the drive. A host block being written to disk
//     is in use (not evictable) until the write ends.
//   - Eviction (§5): each tier takes its least recently returned unused
//     block (returned: stored, stored again, loaded); lookups touch
//     nothing.
//   - Events (§7): KVBM reports each host and disk store and removal to
//     the KV event consolidator (kvbmevents.go), with the GPU's events.

// kvbm is a worker's KVBM state beside its host tier (hostTier.kv).
type kvbm struct {
	cfg   KVBMConfig
	flush []Time // per host slot: when its disk write ends (in use until then)
	disk  *diskTier
	freq  map[uint64]int64 // the disk offload filter's counts
	decay Time             // the filter's next decay tick
	// lastHost and lastDisk split the blocks lookup found last.
	lastHost, lastDisk int
	events             []kvbmEvent // published by the cluster after the schedule
	cons               *kvbmCons   // the KV event consolidator (nil: the router reads no KV events)
}

// kvbmEvent is a store or removal KVBM reports for one tier.
type kvbmEvent struct {
	medium Medium
	stored bool
	hash   uint64
}

// diskTier is KVBM's G3: blocks in slots, an LRU list of the slots held.
type diskTier struct {
	tierSlots      // ready: when the block's write ends
	at        Time // when the disk's queue drains (reads and writes)
	stats     HostStats
}

func newKVBM(cfg KVBMConfig, blockBytes int64) *kvbm {
	k := &kvbm{cfg: cfg, decay: kvbmDecayEvery}
	if cfg.DiskBlocks > 0 {
		k.freq = make(map[uint64]int64)
		k.disk = &diskTier{tierSlots: newTierSlots(cfg.DiskBlocks),
			stats: HostStats{Blocks: cfg.DiskBlocks, BlockBytes: blockBytes}}
	}
	return k
}

// diskStats is the disk tier's counters (nil: no disk tier).
func (k *kvbm) diskStats() *HostStats {
	if k.disk == nil {
		return nil
	}
	return &k.disk.stats
}

// idle reports whether host slot s is unused at t: stored, not being
// loaded, not being written to disk (KVBM's inactive pool).
func (k *kvbm) idle(h *hostTier, s int32, t Time) bool {
	return h.pins[s] == 0 && h.ready[s] <= t && (int(s) >= len(k.flush) || k.flush[s] <= t)
}

// store is KVBM's offload of cand, the blocks a step of one request
// filled (past its GPU hits and loaded blocks), the step ending at at
// (slot.rs apply_scheduler_output and process_offload_to_storage).
func (k *kvbm) store(h *hostTier, cand []uint64, at Time) {
	m := len(cand)
	if m == 0 {
		return
	}
	// allocate_blocks(m): all or nothing, taking empty slots first, then
	// the least recently returned unused blocks.
	if !h.makeRoom(h.held()+m-h.cfg.Blocks, func(s int32) bool { return k.idle(h, s, at) }) {
		h.stats.SkippedBlocks += m
		return
	}
	start := max(at, h.d2h)
	h.d2h = start + durationOf(float64(m)*h.cfg.BlockNs)
	for _, x := range cand {
		if s, ok := h.index[x]; ok {
			h.stats.DupBlocks++
			// register_blocks finds the hash: an unused block is reused
			// (returned again, and offered to the disk again); one in use
			// is left as it is.
			if k.idle(h, s, h.d2h) {
				h.unlink(s)
				h.pushTail(s)
				k.offerDisk(h, s, x, h.d2h)
			}
			continue
		}
		s := h.slot()
		h.hash[s], h.ready[s], h.pins[s] = x, h.d2h, 0
		if int(s) < len(k.flush) {
			k.flush[s] = 0
		}
		h.index[x] = s
		h.pushTail(s)
		h.stats.StoredBlocks++
		k.events = append(k.events, kvbmEvent{MediumCPUPinned, true, x})
		k.offerDisk(h, s, x, h.d2h)
	}
	h.stats.PeakBlocks = max(h.stats.PeakBlocks, h.held())
}

// offerDisk is the host → disk offload worker's handling of host block
// x (slot s), registered at t (offload.rs L432-492): skip it if the disk
// has it, ask the filter, take a disk block (evicting the least recently
// returned unused one), queue the write.
func (k *kvbm) offerDisk(h *hostTier, s int32, x uint64, t Time) {
	d := k.disk
	if d == nil {
		return
	}
	if _, ok := d.index[x]; ok {
		return
	}
	if !k.shouldOffload(x, t) {
		return
	}
	if d.held() >= k.cfg.DiskBlocks {
		v := d.head
		for v >= 0 && !(d.pins[v] == 0 && d.ready[v] <= t) {
			v = d.next[v]
		}
		if v < 0 {
			d.stats.SkippedBlocks++
			return
		}
		k.events = append(k.events, kvbmEvent{MediumDisk, false, d.hash[v]})
		d.unlink(v)
		delete(d.index, d.hash[v])
		d.free = append(d.free, v)
		d.stats.Evictions++
	}
	start := max(t, d.at)
	d.at = start + durationOf(k.cfg.DiskWriteNs)
	v := d.slot()
	d.hash[v], d.ready[v], d.pins[v] = x, d.at, 0
	d.index[x] = v
	d.pushTail(v)
	d.stats.StoredBlocks++
	d.stats.PeakBlocks = max(d.stats.PeakBlocks, d.held())
	for int(s) >= len(k.flush) {
		k.flush = append(k.flush, 0)
	}
	k.flush[s] = d.at
	k.events = append(k.events, kvbmEvent{MediumDisk, true, x})
}

// shouldOffload is the frequency filter (offload/filter.rs L96-124): the
// count starts at 1 and doubles at each sight; it passes at ≥ 2. Every
// 600 s all counts lose 1 and those at 0 are dropped, as are counts
// while the map is over its size.
func (k *kvbm) shouldOffload(x uint64, t Time) bool {
	for k.decay <= t {
		k.decayOnce()
		k.decay += kvbmDecayEvery
	}
	c := k.freq[x]
	if c == 0 {
		c = 1
	} else if c < math.MaxInt64/2 {
		c *= 2
	}
	k.freq[x] = c
	for len(k.freq) > kvbmMaxFreqEntries {
		k.decayOnce()
	}
	return c >= kvbmMinOffloadFrequency
}

func (k *kvbm) decayOnce() {
	for x, c := range k.freq {
		if c <= 1 {
			delete(k.freq, x)
		} else {
			k.freq[x] = c - 1
		}
	}
}

// lookup counts the host's consecutive ready blocks of hashes[from:limit],
// then the disk's after them (slot.rs acquire_local_matches), and
// remembers the split for load.
func (k *kvbm) lookup(h *hostTier, hashes []uint64, from, limit int, now Time) int {
	nh := 0
	for j := from; j < limit && j < len(hashes); j++ {
		s, ok := h.index[hashes[j]]
		if !ok || h.ready[s] > now {
			break
		}
		nh++
	}
	nd := 0
	if d := k.disk; d != nil {
		for j := from + nh; j < limit && j < len(hashes); j++ {
			s, ok := d.index[hashes[j]]
			if !ok || d.ready[s] > now {
				break
			}
			nd++
		}
		d.stats.LookedBlocks += max(limit-from-nh, 0)
	}
	k.lastHost, k.lastDisk = nh, nd
	return nh + nd
}

// load pins hashes (lookup's last find: its host blocks, then its disk
// blocks), touches them and queues their copies at now: host blocks over
// the host link, disk blocks read from the disk. It returns when both end.
func (k *kvbm) load(h *hostTier, hashes []uint64, now Time) Time {
	nh := k.lastHost
	done := now
	if nh > 0 {
		for _, x := range hashes[:nh] {
			s := h.index[x]
			h.pins[s]++
			h.unlink(s)
			h.pushTail(s)
		}
		h.h2d = max(now, h.h2d) + durationOf(float64(nh)*h.cfg.BlockNs)
		h.stats.LoadedBlocks += nh
		done = h.h2d
	}
	if nd := len(hashes) - nh; nd > 0 {
		d := k.disk
		for _, x := range hashes[nh:] {
			s := d.index[x]
			d.pins[s]++
			d.unlink(s)
			d.pushTail(s)
		}
		d.at = max(now, d.at) + durationOf(float64(nd)*k.cfg.DiskReadNs)
		d.stats.LoadedBlocks += nd
		done = max(done, d.at)
	}
	return done
}

// unpin ends a load of hashes: a block the host holds pinned is the
// host's, any other the disk's (the counts balance even where a block
// reached both tiers meanwhile).
func (k *kvbm) unpin(h *hostTier, hashes []uint64) {
	for _, x := range hashes {
		if s, ok := h.index[x]; ok && h.pins[s] > 0 {
			h.pins[s]--
			continue
		}
		k.disk.pins[k.disk.index[x]]--
	}
}

// check verifies both tiers' accounting: capacities, lists, and the pins
// of both summing to the blocks being loaded.
func (k *kvbm) check(h *hostTier, reqs *reqStore) error {
	pins, err := h.checkSlots()
	if err != nil {
		return err
	}
	if d := k.disk; d != nil {
		dp, err := d.tierSlots.check("KVBM disk tier", k.cfg.DiskBlocks, d.stats.StoredBlocks, d.stats.Evictions)
		if err != nil {
			return err
		}
		pins += dp
	}
	if err := h.checkLoads("KVBM", reqs, pins); err != nil {
		return err
	}
	if c := k.cons; c != nil && len(k.events) == 0 {
		for x, src := range c.src {
			_, inHost := h.index[x]
			inDisk := false
			if k.disk != nil {
				_, inDisk = k.disk.index[x]
			}
			if src&srcKVBM != 0 && !inHost && !inDisk {
				return fmt.Errorf("KVBM: the consolidator counts KVBM among block %#x's sources, but neither tier holds it", x)
			}
		}
	}
	return nil
}

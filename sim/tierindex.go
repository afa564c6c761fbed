package sim

import (
	"math"
	"slices"

	"github.com/routesim/routesim/policy"
)

// What the router keeps of the tiers below the GPU, as its policy's
// policy.TierReading says (docs/readings/tier-routing.md). The router is
// a pure reader of the mediums its events carry; whether KVBM's host and
// disk blocks arrive as CPU_PINNED and DISK events or merged into the
// GPU's is decided before, by the KV event consolidator in the worker
// (kvbmevents.go, --kvbm-kv-events):
//
//   - Dynamo ≥ 1.2 keeps a host-tier index of CPU_PINNED events and a
//     disk-tier index of DISK events beside its device index, and matches a
//     request on through them from each worker's last device-matched block:
//     host first, then disk from where the host match ended
//     (lib/kv-router/src/indexer/lower_tier_indexers.rs query_lower_tiers
//     L153-210, lower_tier.rs query_match_details L379-470 @c8d8e7602573).
//     The indexes are made at the first such event: until then they are
//     empty and match nothing, so no decision pays for them;
//   - Dynamo v0.9 ignores the medium: every event goes to its one index
//     (lib/llm/src/kv_router/publisher.rs L562-620 @45bc1b798cce);
//   - vLLM's native "CPU" events carry no token ids, so no router indexes
//     their stores; their removes erase the device entry (Dynamo ≤ 1.2,
//     which parses "CPU" as Device), the host entry (Dynamo ≥ 1.3) or
//     nothing (llm-d, the other routers);
//   - any other router drops every event but the GPU's.
//
// The router's fields for this (tiers, host, disk, ...) are in router.go;
// with no lower-tier index (host == nil) nothing here runs on a decision.

// applyTier applies an event of a tier below the GPU.
func (r *router) applyTier(e kvEvent) {
	w := int(e.worker)
	switch e.medium {
	case MediumCPU:
		if e.stored {
			return // no token ids: no router indexes vLLM's CPU stores
		}
		switch r.tiers.NativeCPU {
		case policy.CPURemovesDevice:
			r.applyDevice(w, false, e.hash)
		case policy.CPURemovesHost:
			if r.host != nil {
				r.applyLower(r.host, w, false, e.hash)
			}
		}
	case MediumCPUPinned, MediumDisk:
		switch {
		case r.tiers.Lower:
			r.applyLower(r.lowerIndex(e.medium), w, e.stored, e.hash)
		case r.tiers.MediumIgnored:
			r.applyDevice(w, e.stored, e.hash)
		}
	}
}

// lowerIndex is the index of tier m (CPU_PINNED: host, DISK: disk), the
// lower-tier indexes made at the first call.
func (r *router) lowerIndex(m Medium) *holders {
	if r.host == nil {
		r.host, r.disk = newHolders(), newHolders()
		r.tierScan = &tierScan{hostEnd: make([]uint64, len(r.inFlight)), diskEnd: make([]uint64, len(r.inFlight))}
	}
	if m == MediumCPUPinned {
		return r.host
	}
	return r.disk
}

// hears reports whether an event of tier m changes anything the router
// keeps: a KV-aware router's reading decides (applyTier drops the rest).
func (r *router) hears(m Medium, stored bool) bool {
	switch {
	case r.stored == nil:
		return false
	case m == MediumCPU:
		return !stored && (r.tiers.NativeCPU == policy.CPURemovesDevice || r.tiers.NativeCPU == policy.CPURemovesHost && r.host != nil)
	case m == MediumCPUPinned, m == MediumDisk:
		return r.tiers.Lower || r.tiers.MediumIgnored
	}
	return true
}

// applyDevice applies a stored or removed event to the device index.
func (r *router) applyDevice(w int, stored bool, h uint64) {
	if stored {
		if r.stored.add(w, h) {
			r.nStored[w]++
		}
	} else if r.stored.remove(w, h) {
		r.nStored[w]--
	}
	r.storedVer++
}

// applyLower applies a stored or removed event to a lower-tier index.
func (r *router) applyLower(idx *holders, w int, stored bool, h uint64) {
	if stored {
		idx.add(w, h)
	} else {
		idx.remove(w, h)
	}
	r.tierVer++
}

// readTiers sets up the router's reading of the lower tiers: what its
// policy, a policy.TierReader, asks for (a KV-aware router only).
func (r *router) readTiers(p policy.Policy) {
	tr, ok := p.(policy.TierReader)
	if !ok || r.stored == nil {
		return
	}
	r.tiers = tr.TierReading() // the lower-tier indexes come with their first event (lowerIndex)
}

// TierHits implements policy.TierView: nil without lower-tier indexes.
func (r *router) TierHits(blocks []uint64, dst []policy.TierHits) []policy.TierHits {
	if r.host == nil {
		return nil
	}
	n := policy.IDBound(r.ids)
	dst = slices.Grow(dst[:0], n)[:n]
	if r.usingTiers != nil {
		for w := range dst {
			dst[w] = frozenTierOf(r.usingTiers, w)
		}
		return dst
	}
	dev := r.overlapped(blocks)
	s := r.tierScanned(blocks, dev)
	for w := range dst {
		dst[w] = s.of(w, dev)
	}
	return dst
}

// tierHitOf is worker w's lower-tier hits for blocks (zero without
// lower-tier indexes).
func (r *router) tierHitOf(w int, blocks []uint64) policy.TierHits {
	switch {
	case r.host == nil:
		return policy.TierHits{}
	case r.usingTiers != nil:
		return frozenTierOf(r.usingTiers, w)
	}
	dev := r.overlapped(blocks)
	return r.tierScanned(blocks, dev).of(w, dev)
}

// cachedTokens is the prompt tokens the router counts cached on w for
// blocks, which its booking takes off the request's prefill: Dynamo's
// cached_tokens = round((device + host_cache_hit_weight·host +
// disk_cache_hit_weight·disk) · block_size), at most the prompt
// (lib/llm/src/kv_router.rs L130-175, prefill_load_hint_for L728-745
// @c8d8e7602573).
func (r *router) cachedTokens(w, isl int, blocks []uint64) int {
	t := r.tierHitOf(w, blocks)
	eff := float64(r.Overlap(w, blocks)) + r.tiers.HostWeight*float64(t.Host) + r.tiers.DiskWeight*float64(t.Disk)
	return min(int(math.Round(eff*float64(r.blockSize))), isl)
}

func frozenTierOf(t []policy.TierHits, w int) policy.TierHits {
	if w < len(t) {
		return t[w]
	}
	return policy.TierHits{}
}

func (r *router) tierScanned(blocks []uint64, dev *overlapScan) *tierScan {
	// The scan depends on the device index (its starts) and the lower
	// ones: both versions only grow, so their sum names the state.
	if v := r.storedVer + r.tierVer; !r.tierScan.valid(blocks, v) {
		r.tierScan.run(blocks, v, dev, r.host, r.disk)
	}
	return r.tierScan
}

// tierScan holds, for one request's blocks and one state of the indexes,
// where every worker's match ends in the host tier and then in the disk
// tier (epoch<<32 | block position; a worker the scan did not advance ends
// where it started).
type tierScan struct {
	scanKey
	hostEnd, diskEnd []uint64
}

// of is worker w's hits in the last scan, dev being the device scan it
// started from.
func (s *tierScan) of(w int, dev *overlapScan) policy.TierHits {
	d := dev.of(w)
	h := s.end(s.hostEnd[w], d)
	return policy.TierHits{Host: int32(h - d), Disk: int32(s.end(s.diskEnd[w], h) - h)}
}

// end decodes a worker's end word: its position if this scan set it,
// else from.
func (s *tierScan) end(m uint64, from int) int {
	if uint32(m>>32) == s.epoch {
		return int(uint32(m))
	}
	return from
}

// run walks the host index from every worker's device match, then the
// disk index from where each host match ended. Block k advances only the
// workers whose match ends at k and that hold it in the tier; the walk
// stops past the furthest end, so it costs the holders of the blocks up to
// there (plus one pass over the workers for the furthest device match).
func (s *tierScan) run(blocks []uint64, version uint64, dev *overlapScan, host, disk *holders) {
	if s.begin(blocks, version) {
		clear(s.hostEnd)
		clear(s.diskEnd)
	}
	if n := len(dev.matched); len(s.hostEnd) < n {
		s.hostEnd, s.diskEnd = grown(s.hostEnd, n), grown(s.diskEnd, n)
	}
	furthest := 0
	for w := range dev.matched {
		furthest = max(furthest, dev.of(w))
	}
	tag := uint64(s.epoch) << 32
	for k := 0; k < len(blocks) && k <= furthest; k++ {
		for _, w := range host.of(blocks[k]) {
			if s.end(s.hostEnd[w], dev.of(int(w))) == k {
				s.hostEnd[w] = tag | uint64(k+1)
				furthest = max(furthest, k+1)
			}
		}
	}
	for k := 0; k < len(blocks) && k <= furthest; k++ {
		for _, w := range disk.of(blocks[k]) {
			from := s.end(s.hostEnd[w], dev.of(int(w)))
			if s.end(s.diskEnd[w], from) == k {
				s.diskEnd[w] = tag | uint64(k+1)
				furthest = max(furthest, k+1)
			}
		}
	}
}
